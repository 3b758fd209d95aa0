#!/usr/bin/env python3
"""Every sample case on the GPU through `pkc run --device=cuda` (the CUDA
backend's kernels, launched by the runtime library) against the reference
interpreter (`--device=interpreter`), on the same made-up inputs.

    pkc_run_gpu.py PKC SAMPLES_DIR CASES_FILE

The cases are tests/pallas/samples.cases ("<sample>.pk: <export> [SIZE=N]...
[-D NAME=VALUE]... [rtol=] [atol=]"); their tolerances apply, with the
defaults below for the rest. Exits 77 (skipped) when there is no GPU.
"""
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

# Accumulation order differs between the GPU's threads and the
# interpreter's whole-block loops: float32 results agree to a few ulps of
# the sums involved, bfloat16 ones to its 8-bit mantissa.
DEFAULT_RTOL = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-3, "bfloat16": 1e-2}


def parse(line):
    sample, rest = line.split(":", 1)
    words = shlex.split(rest)
    entry, args, tolerances = words[0], ["--entry", words[0]], {}
    it = iter(words[1:])
    for w in it:
        if w == "-D":
            args += ["-D", next(it)]
        elif w.startswith(("rtol=", "atol=")):
            tolerances[w[:4]] = float(w[5:])
        else:
            args += ["--size", w]
    return sample.strip(), entry, args, tolerances


def run(pkc, sample, args, device, out_dir):
    """Runs on `device`; returns the process and where output 0 went (every
    sample has one output)."""
    out = os.path.join(out_dir, f"{device}.npy")
    cmd = [pkc, "run", sample, *args, f"--device={device}", f"--out=0={out}"]
    return subprocess.run(cmd, capture_output=True, text=True), out


def main():
    pkc, samples, cases = sys.argv[1:4]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for line in open(cases):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            sample, entry, args, tol = parse(line)
            path = os.path.join(samples, sample)
            ref, ref_out = run(pkc, path, args, "interpreter", tmp)
            gpu, gpu_out = run(pkc, path, args, "cuda", tmp)
            if gpu.returncode and "no CUDA GPU is available" in gpu.stderr:
                print("SKIPPED: no CUDA GPU:", gpu.stderr.strip())
                return 77
            if ref.returncode or gpu.returncode:
                print(f"FAILED {line}\n{ref.stderr}{gpu.stderr}")
                failures += 1
                continue
            a, b = np.load(ref_out), np.load(gpu_out)
            dtype = str(a.dtype) if a.dtype.kind != "V" else "bfloat16"
            if a.dtype.kind == "V":  # bfloat16 as '<V2': widen to float32
                a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
                b = (b.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            rtol = tol.get("rtol", DEFAULT_RTOL.get(dtype, 0))
            atol = tol.get("atol", 0 if a.dtype.kind in "iub" else rtol)
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                worst = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))) if a.shape == b.shape else None
                print(f"FAILED {line}: shapes {a.shape} {b.shape}, max difference {worst}")
                failures += 1
            else:
                print(f"ok {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
