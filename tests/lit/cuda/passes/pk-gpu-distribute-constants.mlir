// RUN: %pk-opt --pk-gpu-distribute %s | FileCheck %s
// A block constant of distinct elements: each register takes the element
// at its row-major index. Up to 32 elements it selects among them in
// registers; larger constants (NumPy tables made at compile time) are one
// internal constant array in global memory per distinct constant (two
// kernels using one constant share it), read at the register's index. A
// layout with padding clamps the index to the table.

#layout = #pkgpu.layout<[64], regs = [d0b0, d0b1], lanes = [d0b2, d0b3, d0b4, d0b5, *], warps = [*, *]>
#padded = #pkgpu.layout<[64], regs = [d0b0, d0b1], lanes = [d0b2, d0b3, d0b4, d0b5, *], warps = [*, *]>
#small = #pkgpu.layout<[8], regs = [d0b0], lanes = [d0b1, d0b2, *, *, *], warps = [*, *]>
// CHECK-DAG: llvm.mlir.global internal constant @[[T64:pk_constant_[0-9]]](dense<[0, 3, 1, 4, 2, {{.*}}]> : tensor<64xi32>) {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>
// CHECK-DAG: llvm.mlir.global internal constant @[[T48:pk_constant_[0-9]]](dense<[0, 5, 10, 4, {{.*}}]> : tensor<48xi32>) {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<48 x i32>
// CHECK-NOT: llvm.mlir.global internal constant
module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @table
    // CHECK: %[[BASE:.*]] = llvm.mlir.addressof @[[T64]] : !llvm.ptr<1>
    // CHECK-COUNT-4: llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
    // CHECK-NOT: arith.select
    // CHECK: gpu.return
    gpu.func @table(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %cst = arith.constant dense<[0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4]> : tensor<64xi32, #layout>
      %c64 = arith.constant 64 : index
      %c0 = arith.constant 0 : index
      %0 = pkgpu.global_ref %arg0 sizes(%c64) offsets(%c0) block [64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64xi32>
      %1 = pkgpu.global_ref %arg1 sizes(%c64) offsets(%c0) block [64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64xi32>
      %2 = pk.load %0 [0] sizes [64] strides [1] squeeze [] : <64xi32> -> tensor<64xi32, #layout>
      %3 = arith.addi %2, %cst : tensor<64xi32, #layout>
      pk.store %3, %1 [0] sizes [64] strides [1] squeeze [] : tensor<64xi32, #layout>, <64xi32>
      gpu.return
    }
    // CHECK-LABEL: gpu.func @same_table
    // CHECK: llvm.mlir.addressof @[[T64]] : !llvm.ptr<1>
    gpu.func @same_table(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %cst = arith.constant dense<[0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4, 2, 0, 3, 1, 4]> : tensor<64xi32, #layout>
      %c64 = arith.constant 64 : index
      %c0 = arith.constant 0 : index
      %0 = pkgpu.global_ref %arg0 sizes(%c64) offsets(%c0) block [64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64xi32>
      pk.store %cst, %0 [0] sizes [64] strides [1] squeeze [] : tensor<64xi32, #layout>, <64xi32>
      gpu.return
    }
    // 48 elements in a layout of 64: the registers past the shape read
    // the last element (they are never stored).
    // CHECK-LABEL: gpu.func @padded
    // CHECK: %[[BASE48:.*]] = llvm.mlir.addressof @[[T48]] : !llvm.ptr<1>
    // CHECK: arith.minui %{{.*}}, %c47
    // CHECK: llvm.getelementptr %[[BASE48]]
    gpu.func @padded(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %cst = arith.constant dense<[0, 5, 10, 4, 9, 3, 8, 2, 7, 1, 6, 0, 5, 10, 4, 9, 3, 8, 2, 7, 1, 6, 0, 5, 10, 4, 9, 3, 8, 2, 7, 1, 6, 0, 5, 10, 4, 9, 3, 8, 2, 7, 1, 6, 0, 5, 10, 4]> : tensor<48xi32, #padded>
      %c48 = arith.constant 48 : index
      %c0 = arith.constant 0 : index
      %0 = pkgpu.global_ref %arg0 sizes(%c48) offsets(%c0) block [48] squeeze [] : !llvm.ptr<1> -> !pk.ref<48xi32>
      pk.store %cst, %0 [0] sizes [48] strides [1] squeeze [] : tensor<48xi32, #padded>, <48xi32>
      gpu.return
    }
    // Eight elements select in registers: no table.
    // CHECK-LABEL: gpu.func @selected
    // CHECK-NOT: llvm.mlir.addressof
    // CHECK: arith.select
    // CHECK: gpu.return
    gpu.func @selected(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %cst = arith.constant dense<[7, 1, 6, 2, 5, 3, 4, 0]> : tensor<8xi32, #small>
      %c8 = arith.constant 8 : index
      %c0 = arith.constant 0 : index
      %0 = pkgpu.global_ref %arg0 sizes(%c8) offsets(%c0) block [8] squeeze [] : !llvm.ptr<1> -> !pk.ref<8xi32>
      pk.store %cst, %0 [0] sizes [8] strides [1] squeeze [] : tensor<8xi32, #small>, <8xi32>
      gpu.return
    }
  }
}
