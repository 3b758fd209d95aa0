// RUN: %pk-opt --pk-gpu-assign-layouts %s | FileCheck %s
// An accumulator read from a scratch buffer for a wgmma (acc_ref[...] +=
// x @ y) is loaded in the wgmma accumulator layout itself: no conversion
// through shared memory. The same load from global memory, or one with
// another user, keeps the blocked layout and is converted.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @scratch_accumulator
    // CHECK: %[[ACC:.*]] = pk.load {{.*}} -> tensor<128x64xf32, #[[W:.*]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: pkgpu.wgmma_tile %[[ACC]], {{.*}} -> tensor<128x64xf32, #[[W]]>
    gpu.func @scratch_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 65536 : i64} {
      %acc = pkgpu.shared_ref offset 0 : !pk.ref<128x64xf32, #pk.memory_space<vmem>>
      %a = pkgpu.shared_ref offset 32768 strips 128 : !pk.ref<128x64xbf16, #pk.memory_space<shared>>
      %b = pkgpu.shared_ref offset 49152 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %v = pk.load %acc [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : <128x64xf32, #pk.memory_space<vmem>> -> tensor<128x64xf32>
      %d = pkgpu.wgmma_tile %v, %a, %b : tensor<128x64xf32>, !pk.ref<128x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<128x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<128x64xf32>
      pk.store %w, %acc [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : tensor<128x64xf32>, <128x64xf32, #pk.memory_space<vmem>>
      gpu.return
    }

    // CHECK-LABEL: gpu.func @global_accumulator
    // CHECK: pk.load
    // CHECK: pkgpu.convert_layout
    // CHECK: pkgpu.wgmma_tile
    gpu.func @global_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %g = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xf32>
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %v = pk.load %g [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xf32> -> tensor<64x64xf32>
      %d = pkgpu.wgmma_tile %v, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      gpu.return
    }
  }
}
