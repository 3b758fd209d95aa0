// RUN: %pk-opt --pk-gpu-assign-layouts --split-input-file %s | FileCheck %s
// The default layout holds 16 bytes of the kernel's narrowest loaded or
// stored type per register group: 8 adjacent bf16, and the f32 values
// computed from them take the same layout (no conversion).

// CHECK: #[[L:.*]] = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b2], lanes = [d0b3, d0b4, d0b5, d0b6, d0b7], warps = [d0b8, d0b9]>
// CHECK-LABEL: gpu.func @scale
// CHECK: pk.load {{.*}} -> tensor<1024xbf16, #[[L]]>
// CHECK: pk.load {{.*}} -> tensor<1024xf32, #[[L]]>
// CHECK-NOT: pkgpu.convert_layout
// CHECK: arith.mulf {{.*}} : tensor<1024xf32, #[[L]]>
// CHECK: pk.store {{.*}} : tensor<1024xbf16, #[[L]]>, <1024xbf16>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @scale(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %arg3: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = arith.index_cast %arg3 : i64 to index
      %x = pkgpu.global_ref %arg0 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xbf16>
      %w = pkgpu.global_ref %arg1 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %o = pkgpu.global_ref %arg2 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xbf16>
      %1 = pk.load %x [0] sizes [1024] strides [1] squeeze [] : <1024xbf16> -> tensor<1024xbf16>
      %2 = pk.load %w [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32>
      %3 = arith.extf %1 : tensor<1024xbf16> to tensor<1024xf32>
      %4 = arith.mulf %3, %2 : tensor<1024xf32>
      %5 = arith.truncf %4 : tensor<1024xf32> to tensor<1024xbf16>
      pk.store %5, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xbf16>, <1024xbf16>
      gpu.return
    }
  }
}

// -----

// 16 bytes of int8 are 16 elements.
// CHECK: #[[B:.*]] = #pkgpu.layout<[4096], regs = [d0b0, d0b1, d0b2, d0b3, d0b11], lanes = [d0b4, d0b5, d0b6, d0b7, d0b8], warps = [d0b9, d0b10]>
// CHECK-LABEL: gpu.func @bytes
// CHECK: pk.load {{.*}} -> tensor<4096xi8, #[[B]]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @bytes(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg3: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = arith.index_cast %arg3 : i64 to index
      %x = pkgpu.global_ref %arg0 sizes(%0) offsets(%c0) block [4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096xi8>
      %o = pkgpu.global_ref %arg1 sizes(%0) offsets(%c0) block [4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096xi8>
      %1 = pk.load %x [0] sizes [4096] strides [1] squeeze [] : <4096xi8> -> tensor<4096xi8>
      pk.store %1, %o [0] sizes [4096] strides [1] squeeze [] : tensor<4096xi8>, <4096xi8>
      gpu.return
    }
  }
}

// -----

// Wider groups only where the largest block gives each of the 128 threads
// a whole group: 1024 int8 fill 128 threads with 8 each, so groups of 8;
// 256 int8 would give 2 each, so groups stay at 4 and no thread holds
// copies of another's elements.
// CHECK: #[[H:.*]] = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b2], lanes = [d0b3, d0b4, d0b5, d0b6, d0b7], warps = [d0b8, d0b9]>
// CHECK-LABEL: gpu.func @half_full
// CHECK: pk.load {{.*}} -> tensor<1024xi8, #[[H]]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @half_full(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg3: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = arith.index_cast %arg3 : i64 to index
      %x = pkgpu.global_ref %arg0 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xi8>
      %o = pkgpu.global_ref %arg1 sizes(%0) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xi8>
      %1 = pk.load %x [0] sizes [1024] strides [1] squeeze [] : <1024xi8> -> tensor<1024xi8>
      pk.store %1, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xi8>, <1024xi8>
      gpu.return
    }
  }
}

// -----

// CHECK: #[[S:.*]] = #pkgpu.layout<[8, 32], regs = [d1b0, d1b1], lanes = [d1b2, d1b3, d1b4, d0b0, d0b1], warps = [d0b2, *]>
// CHECK-LABEL: gpu.func @small
// CHECK: pk.load {{.*}} -> tensor<8x32xi8, #[[S]]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @small(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg3: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %0 = arith.index_cast %arg3 : i64 to index
      %x = pkgpu.global_ref %arg0 sizes(%0, %0) offsets(%c0, %c0) block [8, 32] squeeze [] : !llvm.ptr<1> -> !pk.ref<8x32xi8>
      %o = pkgpu.global_ref %arg1 sizes(%0, %0) offsets(%c0, %c0) block [8, 32] squeeze [] : !llvm.ptr<1> -> !pk.ref<8x32xi8>
      %1 = pk.load %x [0, 0] sizes [8, 32] strides [1, 1] squeeze [] : <8x32xi8> -> tensor<8x32xi8>
      pk.store %1, %o [0, 0] sizes [8, 32] strides [1, 1] squeeze [] : tensor<8x32xi8>, <8x32xi8>
      gpu.return
    }
  }
}
