#!/usr/bin/env python3
"""Compile time of pkc on every sample, corpus and benchmark kernel.

Issue 11's targets, measured on the machine it runs on (no GPU needed):
every sample and corpus file to a cubin within 1 s of wall time, the
templated f32 matmul of the Pallas design doc (128 x 256 x 128 blocks)
within 2 s without spills. Each file is compiled `--repeat` times and the
best wall time is kept; the table lists the slowest files first, with the
registers and spills ptxas reported for their kernels. With Triton
installed, the Triton tutorial's matmul compiled for the same target is
the reference row (pkc should be at least 3x faster).

    python3 bench/compile/compile_times.py --pkc build/cli/pkc/pkc [--target cuda:sm_90a]

Nothing is asserted: it prints numbers.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (label, file, extra arguments)
NAMED = [
    ("design-doc f32 matmul 128x256x128", "samples/matmul.pk",
     ["--export", "matmul_gelu", "-D", "BLOCK_M=128", "-D", "BLOCK_N=256", "-D", "BLOCK_K=128"]),
]


def kernels_of(manifest_path):
    """(registers, spill bytes) summed over a manifest's launches."""
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    registers, spills = 0, 0
    for artifact in manifest.get("artifacts", []):
        for program in artifact.get("programs", []):
            for step in program.get("steps", []):
                launch = step.get("launch")
                if launch:
                    registers = max(registers, launch.get("registers", 0))
                    spills += launch.get("spill_stores", 0) + launch.get("spill_loads", 0)
    return registers, spills


def compile_once(pkc, path, target, extra):
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = subprocess.run([pkc, "compile", path, "--target=" + target, "-o", out] + extra,
                                capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        stem = os.path.splitext(os.path.basename(path))[0]
        info = kernels_of(os.path.join(out, stem + ".json")) if result.returncode == 0 else None
        return elapsed, result.returncode, info


def triton_reference(target):
    """Seconds to compile the Triton tutorial matmul for `target`, or None."""
    try:
        import triton
        import triton.language as tl
        from triton.backends.compiler import GPUTarget
    except ImportError:
        return None

    @triton.jit
    def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak)
            y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.bfloat16))

    capability = int(target.split("sm_")[1].rstrip("a"))
    src = triton.compiler.ASTSource(
        fn=matmul, constexprs={"BM": 128, "BN": 128, "BK": 32},
        signature={"a": "*bf16", "b": "*bf16", "c": "*bf16", "M": "i32", "N": "i32", "K": "i32",
                   "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32",
                   "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"})
    start = time.perf_counter()
    triton.compile(src, target=GPUTarget("cuda", capability, 32))
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pkc", default=os.path.join(ROOT, "build/cli/pkc/pkc"))
    parser.add_argument("--target", default="cuda:sm_90a")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--top", type=int, default=15, help="rows of the slowest files to print")
    args = parser.parse_args()

    files = sorted(glob.glob(os.path.join(ROOT, "samples/*.pk")))
    files += sorted(glob.glob(os.path.join(ROOT, "tests/pallas/corpus/*.pk")))
    files += sorted(glob.glob(os.path.join(ROOT, "tests/pallas/mosaic_gpu/*.pk")))
    jobs = [(os.path.relpath(f, ROOT), f, []) for f in files]
    # attention_jax_op.pk imports JAX's op from the real-kernel corpus.
    real = ["-I", os.path.join(ROOT, "tests/pallas/real")]
    jobs += [(os.path.relpath(f, ROOT), f, real)
             for f in sorted(glob.glob(os.path.join(ROOT, "bench/kernels/*.pk")))]
    jobs += [(label, os.path.join(ROOT, f), extra) for label, f, extra in NAMED]

    rows = []
    for label, path, extra in jobs:
        best, code, info = None, 0, None
        for _ in range(max(1, args.repeat)):
            elapsed, code, info = compile_once(args.pkc, path, args.target, extra)
            best = elapsed if best is None else min(best, elapsed)
        rows.append((best, label, code, info))

    compiled = [r for r in rows if r[2] == 0]
    rejected = [r for r in rows if r[2] != 0]
    print(f"pkc compile --target={args.target}: {len(rows)} files, {len(compiled)} compiled, "
          f"{len(rejected)} rejected by the backend (located errors; not timed below)")
    times = [r[0] for r in compiled]
    if times:
        within = sum(1 for t in times if t <= 1.0)
        print(f"  wall: median {statistics.median(times):.2f} s, max {max(times):.2f} s, "
              f"total {sum(times):.1f} s; {within}/{len(times)} within 1 s")
    print(f"\n  {'seconds':>8}  {'regs':>5}  {'spill B':>7}  file")
    for best, label, code, info in sorted(compiled, reverse=True)[:args.top]:
        regs, spills = info if info else (0, 0)
        print(f"  {best:8.2f}  {regs:5d}  {spills:7d}  {label}")
    for best, label, code, info in compiled:
        if label in [n[0] for n in NAMED]:
            regs, spills = info if info else (0, 0)
            print(f"\n  {label}: {best:.2f} s (target 2 s), {regs} registers, {spills} bytes of spills")
    reference = triton_reference(args.target.split(":")[-1])
    if reference is None:
        print("\n  Triton: not installed here; no reference row")
    else:
        ours = [r[0] for r in compiled if r[1] == "bench/kernels/matmul_bf16.pk"]
        ratio = f", pkc's bf16 matmul {reference / ours[0]:.1f}x faster" if ours else ""
        print(f"\n  Triton tutorial-style bf16 matmul: {reference:.2f} s{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
