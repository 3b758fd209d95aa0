// RUN: %pk-opt --pk-gpu-distribute --split-input-file %s | FileCheck %s
// Range tests that the arithmetic already proves are not emitted
// (KnownRange.cpp). A 4 x 1024 array in blocks of 1 x 1024: the block id
// is clamped to 0..3 as Pallas clamps it, the thread's column is an or
// of shifted lane bits (at most 1020, a multiple of 4, and +3 stays below
// 1024), so every group is a plain 16-byte load and store, with no scf.if
// and no comparison of a coordinate.

#layout = #pkgpu.layout<[1, 1024], regs = [d1b0, d1b1, d1b9], lanes = [d1b2, d1b3, d1b4, d1b5, d1b6], warps = [d1b7, d1b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @tiles
    gpu.func @tiles(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c1024 = arith.constant 1024 : index
      %bid = gpu.block_id x
      %low = arith.minsi %bid, %c3 : index
      %row = arith.maxsi %low, %c0 : index
      %in = pkgpu.global_ref %arg0 sizes(%c4, %c1024) offsets(%row, %c0) block [1, 1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1x1024xf32>
      %out = pkgpu.global_ref %arg1 sizes(%c4, %c1024) offsets(%row, %c0) block [1, 1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1x1024xf32>
      %x = pk.load %in [0, 0] sizes [1, 1024] strides [1, 1] squeeze [] : <1x1024xf32> -> tensor<1x1024xf32, #layout>
      pk.store %x, %out [0, 0] sizes [1, 1024] strides [1, 1] squeeze [] : tensor<1x1024xf32, #layout>, <1x1024xf32>
      gpu.return
    }
  }
}
// CHECK-NOT: arith.cmpi ult
// CHECK-NOT: scf.if
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: arith.cmpi ult
// CHECK-NOT: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NOT: scf.if
// CHECK: gpu.return

// -----

// The same array with 1000 columns: the last groups of a row cross its
// end, so the groups are tested and the elements past it guarded.

#layout = #pkgpu.layout<[1, 1024], regs = [d1b0, d1b1, d1b9], lanes = [d1b2, d1b3, d1b4, d1b5, d1b6], warps = [d1b7, d1b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @edge
    gpu.func @edge(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c1000 = arith.constant 1000 : index
      %bid = gpu.block_id x
      %low = arith.minsi %bid, %c3 : index
      %row = arith.maxsi %low, %c0 : index
      %in = pkgpu.global_ref %arg0 sizes(%c4, %c1000) offsets(%row, %c0) block [1, 1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1x1024xf32>
      %out = pkgpu.global_ref %arg1 sizes(%c4, %c1000) offsets(%row, %c0) block [1, 1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1x1024xf32>
      %x = pk.load %in [0, 0] sizes [1, 1024] strides [1, 1] squeeze [] : <1x1024xf32> -> tensor<1x1024xf32, #layout>
      pk.store %x, %out [0, 0] sizes [1, 1024] strides [1, 1] squeeze [] : tensor<1x1024xf32, #layout>, <1x1024xf32>
      gpu.return
    }
  }
}
// CHECK: arith.cmpi ult, %{{.*}}, %c1000
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.return

// -----

// jnp.pad's padding after an axis: a concatenation of a value and a
// splat, the value already in the result's layout, is a select per
// register by its column; nothing goes through shared memory.

#layout = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @pad
    gpu.func @pad(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1000 = arith.constant 1000 : index
      %c1024 = arith.constant 1024 : index
      %fill = arith.constant dense<-1.000000e+00> : tensor<24xf32, #layout>
      %in = pkgpu.global_ref %arg0 sizes(%c1000) offsets(%c0) block [1000] squeeze [] : !llvm.ptr<1> -> !pk.ref<1000xf32>
      %out = pkgpu.global_ref %arg1 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %x = pk.load %in [0] sizes [1000] strides [1] squeeze [] : <1000xf32> -> tensor<1000xf32, #layout>
      %padded = pk.concatenate %x, %fill dim 0 : (tensor<1000xf32, #layout>, tensor<24xf32, #layout>) -> tensor<1024xf32, #layout>
      pk.store %padded, %out [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32, #layout>, <1024xf32>
      gpu.return
    }
  }
}
// CHECK: %[[FILL:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: gpu.barrier
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %{{.*}}, %c1000
// CHECK: arith.select %[[INSIDE]], %{{.*}}, %[[FILL]] : f32
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
