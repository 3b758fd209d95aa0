// RUN: %pk-opt --pk-gpu-distribute --split-input-file %s | FileCheck %s
// pk.butterfly (element i takes element i ^ d, a sort's exchange) where
// the layout puts bit log2(d) of the axis: in the thread's registers (a
// vector.shuffle), in the lane id (a warp shuffle per register, narrow
// types widened to a word), or in the warp id (through shared memory).

// Distance 2 is register bit 1: registers 0-3 become 2, 3, 0, 1.
#layout = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @registers
    gpu.func @registers(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %r = pkgpu.global_ref %arg0 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %o = pkgpu.global_ref %arg1 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %x = pk.load %r [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32, #layout>
      %y = pk.butterfly %x dim 0 distance 2 : tensor<1024xf32, #layout>
      pk.store %y, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32, #layout>, <1024xf32>
      gpu.return
    }
  }
}
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [2, 3, 0, 1, 6, 7, 4, 5] : vector<8xf32>, vector<8xf32>
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// -----

// Distance 8 is lane bit 1: lane l reads lane l ^ 2, register by register.
#layout = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @lanes
    gpu.func @lanes(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %r = pkgpu.global_ref %arg0 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %o = pkgpu.global_ref %arg1 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %x = pk.load %r [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32, #layout>
      %y = pk.butterfly %x dim 0 distance 8 : tensor<1024xf32, #layout>
      pk.store %y, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32, #layout>, <1024xf32>
      gpu.return
    }
  }
}
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// -----

// An i8 rides in the low bits of a word through the shuffle.
#layout = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @narrow_lanes
    gpu.func @narrow_lanes(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %r = pkgpu.global_ref %arg0 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xi8>
      %o = pkgpu.global_ref %arg1 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xi8>
      %x = pk.load %r [0] sizes [1024] strides [1] squeeze [] : <1024xi8> -> tensor<1024xi8, #layout>
      %y = pk.butterfly %x dim 0 distance 4 : tensor<1024xi8, #layout>
      pk.store %y, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xi8, #layout>, <1024xi8>
      gpu.return
    }
  }
}
// CHECK: %[[WIDE:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: %[[MOVED:.*]], %{{.*}} = gpu.shuffle  xor %[[WIDE]], %c1_i32, %c32_i32 : i32
// CHECK: arith.trunci %[[MOVED]] : i32 to i8
// CHECK: gpu.return

// -----

// Distance 128 is warp bit 0: written to shared memory, read back at the
// partner's index (the axis coordinate xor 128) after a barrier.
#layout = #pkgpu.layout<[1024], regs = [d0b0, d0b1, d0b9], lanes = [d0b2, d0b3, d0b4, d0b5, d0b6], warps = [d0b7, d0b8]>
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @warps
    gpu.func @warps(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %r = pkgpu.global_ref %arg0 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %o = pkgpu.global_ref %arg1 sizes(%c1024) offsets(%c0) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
      %x = pk.load %r [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32, #layout>
      %y = pk.butterfly %x dim 0 distance 128 : tensor<1024xf32, #layout>
      pk.store %y, %o [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32, #layout>, <1024xf32>
      gpu.return
    }
  }
}
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: arith.xori %{{.*}}, %c128
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: gpu.return
