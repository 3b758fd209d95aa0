#!/usr/bin/env python3
"""Launches pkc's Pallas-style bf16 matmul and Triton's once each, at n^3,
for a profiler to look at (no timing here):

    ncu --kernel-name regex:matmul --launch-count 2 --section SpeedOfLight \\
        --section WarpStateStats python3 bench/kernels/profile_matmul.py \\
        --artifacts DIR --runtime build-gpu/src/runtime/libpk_runtime.so

With --jax-hopper, JAX's Hopper matmul compiled by pkc instead, without
and with a 2-CTA cluster (matmul_jax_hopper.pk).

Usage: profile_matmul.py --artifacts DIR --runtime PATH [--n 4096] [--jax-hopper]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (PkRuntime, triton_kernels, square_bf16)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--jax-hopper", action="store_true")
    options = parser.parse_args()
    n = options.n
    x, y, out = bench.square_bf16(n)
    pk = bench.PkRuntime(options.runtime)
    if options.jax_hopper:
        for export in (f"matmul_{n}", f"matmul_cluster_{n}"):
            pk.kernel(f"{options.artifacts}/matmul_jax_hopper.json", export).bind(x, y, out)()
        torch.cuda.synchronize()
        return 0
    artifacts = options.artifacts if n == 4096 else f"{options.artifacts}/k{n}"
    pk.kernel(f"{artifacts}/matmul_bf16.json", "matmul_relu_bf16").bind(x, y, out)()
    # The Triton tutorial's 128x256 tiles: the shape pkc's kernel uses.
    bench.triton_kernels()["matmul"](x, y, out, bn=256, group=8)()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
