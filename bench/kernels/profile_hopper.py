#!/usr/bin/env python3
"""Launches JAX's Hopper matmul compiled by pkc (matmul_jax_hopper.pk) once
per variant, without and with a 2-CTA cluster, at n^3, for a profiler to
compare (no timing here):

    ncu --kernel-name regex:matmul --section LaunchStats --section Occupancy \\
        --section SpeedOfLight --section WarpStateStats \\
        python3 bench/kernels/profile_hopper.py --artifacts DIR \\
        --runtime build-gpu/src/runtime/libpk_runtime.so

Usage: profile_hopper.py --artifacts DIR --runtime PATH [--n 4096]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (PkRuntime, square_bf16)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--n", type=int, default=4096)
    options = parser.parse_args()
    x, y, out = bench.square_bf16(options.n)
    pk = bench.PkRuntime(options.runtime)
    for export in (f"matmul_{options.n}", f"matmul_cluster_{options.n}"):
        pk.kernel(f"{options.artifacts}/matmul_jax_hopper.json", export).bind(x, y, out)()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
