// RUN: %pk-opt --pk-gpu-assign-layouts %s | FileCheck %s
// Loads take the blocked layout of their shape (4 adjacent f32, 16 bytes, per
// register group, lanes next, warps last); element-wise ops follow their
// operands, and stores take what they get.

// CHECK: #[[L:.*]] = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @add(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %arg3: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = arith.index_cast %arg3 : i64 to index
      %11 = pkgpu.global_ref %arg0 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %12 = pkgpu.global_ref %arg1 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %13 = pkgpu.global_ref %arg2 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      // CHECK: pk.load {{.*}} -> tensor<1024xf32, #[[L]]>
      %14 = pk.load %11 [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32>
      %15 = pk.load %12 [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32>
      // CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[L]]>
      %16 = arith.addf %14, %15 : tensor<1024xf32>
      // CHECK: pk.store {{.*}} : tensor<1024xf32, #[[L]]>, <1024xf32>
      pk.store %16, %13 [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32>, <1024xf32>
      gpu.return
    }
  }
}
