#!/bin/sh
# Compiles the benchmarked samples with pkc for bench.py (run this where
# pkc is built; carry OUT to the GPU machine).
# Usage: build_artifacts.sh PKC OUT [ARCH]   (ARCH: sm_90a by default)
set -eu
pkc=$1 out=$2 arch=${3:-sm_90a}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
for sample in add softmax layernorm; do
  "$pkc" compile "$root/samples/$sample.pk" --target=cuda:$arch -o "$out"
done
# matmul at 4096^3: a kernel of its own (the sample unrolls K).
"$pkc" compile "$root/bench/kernels/matmul_bf16.pk" --target=cuda:$arch -o "$out"
# The Mosaic GPU style matmul (TMA, wgmma): sm_90a only.
"$pkc" compile "$root/bench/kernels/matmul_mgpu.pk" --target=cuda:sm_90a -o "$out"
"$pkc" compile "$root/bench/kernels/attention_mgpu.pk" --target=cuda:sm_90a -o "$out"
