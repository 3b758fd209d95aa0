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
# Softmax and layer norm over 8192-wide rows, f32 and bf16.
"$pkc" compile "$root/bench/kernels/rows_wide.pk" --target=cuda:$arch -o "$out"
# Flash attention as JAX's Pallas GPU op writes it (wgmma: sm_90a), and
# other block shapes, warps and stages of it (bench.py --only asweep).
"$pkc" compile "$root/bench/kernels/attention_pallas.pk" --target=cuda:$arch -o "$out"
# ... and JAX's op itself, imported unchanged.
"$pkc" compile "$root/bench/kernels/attention_jax_op.pk" -I "$root/tests/pallas/real" \
  --target=cuda:$arch -o "$out"
for config in "128 64 8 2" "128 64 8 3" "128 128 8 2" "64 64 4 2" "64 64 4 3" "64 128 4 2"; do
  set -- $config
  name="bq$1_bk$2_w$3_s$4"
  mkdir -p "$out/asweep/$name"
  "$pkc" compile "$root/bench/kernels/attention_pallas.pk" -D BLOCK_Q=$1 -D BLOCK_K=$2 \
    -D NUM_WARPS=$3 -D NUM_STAGES=$4 --target=cuda:$arch -o "$out/asweep/$name" ||
    echo "build_artifacts.sh: $name did not compile" >&2
done
# matmul at 4096^3 and 8192^3: a kernel of its own (the sample unrolls
# K), K fixed per artifact.
"$pkc" compile "$root/bench/kernels/matmul_bf16.pk" --target=cuda:$arch -o "$out"
mkdir -p "$out/k8192"
"$pkc" compile "$root/bench/kernels/matmul_bf16.pk" -D K=8192 --target=cuda:$arch -o "$out/k8192"
# The same on f32, at JAX's default precision: TF32 tensor cores.
mkdir -p "$out/f32" "$out/f32_k8192"
"$pkc" compile "$root/bench/kernels/matmul_f32.pk" --target=cuda:$arch -o "$out/f32"
"$pkc" compile "$root/bench/kernels/matmul_f32.pk" -D K=8192 --target=cuda:$arch -o "$out/f32_k8192"
# The Mosaic GPU style matmul (TMA, wgmma): sm_90a only.
"$pkc" compile "$root/bench/kernels/matmul_mgpu.pk" --target=cuda:sm_90a -o "$out"
"$pkc" compile "$root/bench/kernels/attention_mgpu.pk" --target=cuda:sm_90a -o "$out"
# JAX's Mosaic GPU Hopper matmul and FlashAttention 3 themselves, imported
# unchanged.
"$pkc" compile "$root/bench/kernels/matmul_jax_hopper.pk" -I "$root/tests/pallas/real" \
  --target=cuda:sm_90a -o "$out"
"$pkc" compile "$root/bench/kernels/attention_fa3.pk" -I "$root/tests/pallas/real" \
  --target=cuda:sm_90a -o "$out"
# JAX's Hopper matmul at other points of the space its own main() tunes
# over (bench.py --only hsweep): tiles of 128 x 128, 128 x 64 and 256 x
# 64 per warpgroup pair, the warpgroups splitting M or N, the grid's
# minor dimension M or N in strips of 4, 8 or 16 tiles. (256 x 128 per
# warpgroup needs more registers than a thread has, and 256 x 64 tiles
# split along M (a 512 x 64 CTA tile) more shared memory than a CTA has:
# those fail to compile, in JAX too.)
for tile in "128 128" "128 64" "256 64"; do
  for wg in 0 1; do
    for minor in 0 1; do
      for width in 4 8 16; do
        set -- $tile
        [ "$1 $wg" = "256 1" ] && continue
        name="m$1_n$2_wg$(test $wg = 1 && echo M || echo N)_minor$(test $minor = 1 && echo M || echo N)_w$width"
        mkdir -p "$out/hsweep/$name"
        "$pkc" compile "$root/bench/kernels/matmul_jax_hopper.pk" -I "$root/tests/pallas/real" \
          -D TILE_M=$1 -D TILE_N=$2 -D WG_SPLITS_M=$wg -D GRID_MINOR_M=$minor \
          -D GRID_TILE_WIDTH=$width --export matmul_4096 --export matmul_8192 \
          --target=cuda:sm_90a -o "$out/hsweep/$name" ||
          echo "build_artifacts.sh: $name did not compile" >&2
      done
    done
  done
done
# The sweep: other block shapes, stages and warps of the Pallas-style
# matmul at 8192^3 (bench.py --only sweep), one directory each.
for config in "128 128 64 4 8" "128 128 64 3 8" "128 128 64 5 8" "128 128 32 3 8" \
              "128 128 32 4 8" "128 128 32 5 8" "128 128 32 6 8" "128 256 64 3 8" \
              "128 256 64 4 8" "256 128 64 3 8" "256 128 64 4 8" "256 128 32 4 8" \
              "64 128 64 4 4" "128 128 64 4 4"; do
  set -- $config
  name="bm$1_bn$2_bk$3_s$4_w$5"
  mkdir -p "$out/sweep/$name"
  "$pkc" compile "$root/bench/kernels/matmul_bf16.pk" -D K=8192 -D BM=$1 -D BN=$2 -D BK=$3 \
    -D NUM_STAGES=$4 -D NUM_WARPS=$5 --target=cuda:$arch -o "$out/sweep/$name" ||
    echo "build_artifacts.sh: $name did not compile" >&2
done
