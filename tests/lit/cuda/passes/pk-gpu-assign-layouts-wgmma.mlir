// RUN: %pk-opt --pk-gpu-assign-layouts %s | FileCheck %s
// An accumulator read from a scratch buffer for a wgmma (acc_ref[...] +=
// x @ y) is loaded in the wgmma accumulator layout itself: no conversion
// through shared memory. The same load from global memory, or one with
// another user, keeps the blocked layout and is converted.
//
// A broadcast of row statistics (`s - m[:, None]`, `acc * alpha[:, None]`
// in flash attention) is made in the layout of the accumulator it meets,
// whose row slice the reduction already gave: no conversion at all.

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

    // CHECK-LABEL: gpu.func @row_broadcast_meets_accumulator
    // CHECK: %[[S:.*]] = pkgpu.wgmma_wait_tile 0, {{.*}} : tensor<64x64xf32, #[[W:[a-z0-9]+]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: %[[B:.*]] = pk.broadcast_in_dim {{.*}} -> tensor<64x64xf32, #[[W]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: arith.subf %[[S]], %[[B]] : tensor<64x64xf32, #[[W]]>
    gpu.func @row_broadcast_meets_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %s = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      %m = pk.reduce <maxf> %s axes [1] : tensor<64x64xf32> -> tensor<64xf32>
      %r = pk.reshape %m : tensor<64xf32> -> tensor<64x1xf32>
      %b = pk.broadcast_in_dim %r dims [0, 1] : tensor<64x1xf32> -> tensor<64x64xf32>
      %p = arith.subf %s, %b : tensor<64x64xf32>
      %h = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
      pk.store %h, %a [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
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
