// RUN: %pk-opt --pk-gpu-distribute %s | FileCheck %s
// A window copied into a wgmma buffer by TMA (pk-gpu-prefetch-operands):
// the CTA's first thread announces the copy's bytes on the slot's
// mbarrier and issues one box per strip, at the window's first element
// (the block's offset plus the load's, clamped into the block as a load
// clamps it) plus the box's start; the other threads do nothing. With a
// run-time condition the threads copy with cp.async where it fails, and
// the first thread arrives without bytes.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @by_tma
    // CHECK: nvvm.mbarrier.init
    // The window's column: %k clamped to [0, 512 - 128].
    // CHECK: %[[MIN:.*]] = arith.minsi %{{.*}}, %c384 : index
    // CHECK: %[[COL:.*]] = arith.maxsi %c0, %[[MIN]] : index
    // CHECK: %[[COL0:.*]] = arith.index_cast %[[COL]] : index to i32
    // CHECK: %[[COL1:.*]] = arith.addi %[[COL]], %c64 : index
    // CHECK: %[[COL1I:.*]] = arith.index_cast %[[COL1]] : index to i32
    // CHECK: %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0 : index
    // CHECK: scf.if %[[FIRST]] {
    // CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR:.*]], %c16384_i32 : !llvm.ptr<3>, i32
    // CHECK: pkgpu.tma_load %arg1[%{{.*}}, %[[COL0]]], %{{.*}}, %[[BAR]] : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    // CHECK: pkgpu.tma_load %arg1[%{{.*}}, %[[COL1I]]], %{{.*}}, %[[BAR]] : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    // CHECK-NOT: pkgpu.tma_load
    // CHECK-NOT: nvvm.cp.async
    gpu.func @by_tma(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr, %k: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16448 : i64, pkgpu.tensor_map_params = array<i64: 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c512 = arith.constant 512 : index
      %bar = pkgpu.barrier_alloc offset 16384 parity 16400 : !pk.barrier<[2], arrivals 1>
      %x = pkgpu.global_ref %arg0 sizes(%c512, %c512) offsets(%c64, %c0) block [64, 512] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x512xbf16>
      %s = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x128xbf16, #pk.memory_space<shared>>
      pkgpu.tma_copy %x [0, %k] into %s, %bar[%c0] tensor_map 1 boxes [array<i64: 0, 0, 0>, array<i64: 0, 64, 8192>] bytes 16384 : !pk.ref<64x512xbf16>, !pk.ref<64x128xbf16, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
      gpu.return
    }

    // CHECK-LABEL: gpu.func @or_by_cp_async
    // CHECK: scf.if %{{.*}} {
    // CHECK: nvvm.mbarrier.arrive.expect_tx
    // CHECK: pkgpu.tma_load
    // CHECK: } else {
    // CHECK: nvvm.cp.async.shared.global
    // CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
    gpu.func @or_by_cp_async(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr, %n: index, %usable: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 8256 : i64, pkgpu.tensor_map_params = array<i64: 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %bar = pkgpu.barrier_alloc offset 8192 parity 8208 : !pk.barrier<[2], arrivals 1>
      %x = pkgpu.global_ref %arg0 sizes(%n, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %s = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      pkgpu.tma_copy %x [0, 0] into %s, %bar[%c0] tensor_map 1 boxes [array<i64: 0, 0, 0>] bytes 8192 if %usable : !pk.ref<64x64xbf16>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
      gpu.return
    }
  }
}
