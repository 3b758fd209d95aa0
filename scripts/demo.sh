#!/usr/bin/env bash
# Sets up, builds, and runs pkc on the templated-matmul sample: prints the
# typed IR of the fused matmul+gelu export, compiles it to a cubin and its
# launch manifest for sm_90a, then runs it with M=4, N=8 (K=256 is a
# constant of the sample): on the GPU if there is one, else on the
# reference interpreter, and its CUDA kernels on the SIMT simulator.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
pkc="${PK_BUILD_DIR:-$root/build}/cli/pkc/pkc"
cd "$root"
set -x
"$pkc" check samples/matmul.pk
"$pkc" compile --emit=ir samples/matmul.pk
"$pkc" compile samples/matmul.pk --target=cuda:sm_90a -o build/kernels
"$pkc" run samples/matmul.pk --entry matmul_gelu --size M=4 --size N=8 --print
"$pkc" run samples/matmul.pk --entry matmul_gelu --size M=4 --size N=8 --print --device=cuda-sim
