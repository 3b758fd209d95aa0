#!/usr/bin/env python3
"""Launches pkc's flash attention written as JAX's Pallas GPU op
(attention_pallas.pk, export mha) and the Triton tutorial's forward kernel
once each, on the bench's inputs (bf16, 4 x 8 heads, 4096 tokens, d = 128),
for a profiler to look at (no timing here):

    ncu --kernel-name regex:'mha|attention_kernel' --launch-count 2 \\
        --section SpeedOfLight --section WarpStateStats \\
        python3 bench/kernels/profile_attention.py \\
        --artifacts DIR --runtime build-gpu/src/runtime/libpk_runtime.so

Usage: profile_attention.py --artifacts DIR --runtime PATH [--causal]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (PkRuntime, triton_kernels, attention_inputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--causal", action="store_true")
    options = parser.parse_args()
    q, k, v = bench.attention_inputs()
    b, t, h, d = q.shape
    out = torch.empty_like(q)
    pk = bench.PkRuntime(options.runtime)
    export = "mha_causal" if options.causal else "mha"
    pk.kernel(f"{options.artifacts}/attention_pallas.json", export).bind(q, k, v, out)()
    flat = lambda x: x.transpose(1, 2).reshape(b * h, t, d).contiguous()
    t_out = torch.empty(b * h, t, d, device="cuda", dtype=torch.bfloat16)
    bench.triton_kernels()["attention"](flat(q), flat(k), flat(v), t_out, options.causal)()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
