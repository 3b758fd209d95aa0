#!/usr/bin/env python3
"""`pkc tune` on GPU 0 (docs/tuning.md), end to end.

    pkc_tune_gpu.py PKC INPUTS_DIR SAMPLES_DIR

1. Tunes INPUTS_DIR/scale.pk's `scale`: of its three configurations two
   compile and are timed, the third (a block no GPU holds) fails at its
   line; the record must say so, choose the faster of the two, and the
   manifest beside it must name the choice.
2. `pkc compile --tuned` on that record must write the very cubin `pkc
   tune` wrote (the choice reproduces without a GPU).
3. The tuned export must compute what the interpreter computes with the
   chosen constants.
4. Tunes samples/matmul.pk's bf16 matmul over two block shapes given with
   --try (a dot on the tensor cores, not just a copy).
Exits 77 (skipped) when there is no GPU.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def pkc(*args):
    return subprocess.run([PKC, *args], capture_output=True, text=True)


def fail(message, result=None):
    print("FAILED:", message)
    if result is not None:
        print(result.stdout, result.stderr)
    sys.exit(1)


def main():
    inputs, samples = sys.argv[2], sys.argv[3]
    source = os.path.join(inputs, "scale.pk")
    with tempfile.TemporaryDirectory() as tmp:
        tuned_dir, again_dir = os.path.join(tmp, "tuned"), os.path.join(tmp, "again")
        tune = pkc("tune", source, "--size", "N=1048576", "-o", tuned_dir)
        if tune.returncode and "no CUDA GPU is available" in tune.stderr:
            print("SKIPPED: no CUDA GPU:", tune.stderr.strip())
            return 77
        if tune.returncode:
            fail("pkc tune scale.pk", tune)
        print(tune.stdout, end="")
        record = json.load(open(os.path.join(tuned_dir, "scale.tune.json")))
        (scale,) = record["exports"]
        trials = {t["config"]["BLOCK"]: t for t in scale["trials"]}
        if set(trials) != {"128", "512", "67108864"}:
            fail(f"the record's trials: {sorted(trials)}")
        if "error" not in trials["67108864"] or "microseconds" in trials["67108864"]:
            fail(f"the 2**26 block should have failed: {trials['67108864']}")
        times = {b: trials[b]["microseconds"] for b in ("128", "512")}
        fastest = min(times, key=times.get)
        if scale["chosen"].get("BLOCK") != fastest:
            fail(f"chose {scale['chosen']}, but the times were {times}")
        manifest = json.load(open(os.path.join(tuned_dir, "scale.json")))
        tuned = {e["name"]: e.get("tuned") for e in manifest["exports"]}
        if tuned != {"scale": scale["chosen"], "scale_twice": None}:
            fail(f"the manifest's tuned constants: {tuned}")

        again = pkc("compile", source, "--tuned", os.path.join(tuned_dir, "scale.tune.json"),
                    f"--target={record['target']}", "-o", again_dir)
        if again.returncode:
            fail("pkc compile --tuned", again)
        if open(os.path.join(tuned_dir, "scale.cubin"), "rb").read() != \
                open(os.path.join(again_dir, "scale.cubin"), "rb").read():
            fail("pkc compile --tuned wrote another cubin than pkc tune")

        outs = {}
        for device in ("cuda", "interpreter"):
            out = os.path.join(tmp, f"{device}.npy")
            run = pkc("run", source, "--entry", "scale", "-D", "BLOCK=" + fastest, "--size",
                      "N=100000", f"--device={device}", f"--out={out}")
            if run.returncode:
                fail(f"pkc run --device={device}", run)
            outs[device] = np.load(out)
        if not np.array_equal(outs["cuda"], outs["interpreter"]):
            fail("the chosen configuration computes another result on the GPU")

        matmul = pkc("tune", os.path.join(samples, "matmul.pk"), "--export", "matmul_relu_bf16",
                     "--try", "BLOCK_M=64", "--try", "BLOCK_M=128", "--size", "M=2048",
                     "--size", "N=2048", "-o", os.path.join(tmp, "matmul"))
        if matmul.returncode:
            fail("pkc tune matmul.pk", matmul)
        print(matmul.stdout, end="")
        (entry,) = json.load(open(os.path.join(tmp, "matmul", "matmul.tune.json")))["exports"]
        if len([t for t in entry["trials"] if "microseconds" in t]) != 2:
            fail(f"both matmul configurations should have run: {entry['trials']}")
    print("ok")
    return 0


if __name__ == "__main__":
    PKC = sys.argv[1]
    sys.exit(main())
