// RUN: %pk-opt --pk-gpu-assign-layouts --pk-gpu-distribute %s | FileCheck %s
// A semaphore op is one thread's work, as in Mosaic GPU: a signal after
// the warpgroup's barrier (its threads' writes are done), a wait before
// it (they read what the signal released). Counters are reached through
// generic pointers: global ones in the buffer the kernel was given,
// shared ones zeroed by thread 0 before the CTA synchronizes. A kernel
// whose CTAs wait on global counters says so, for the simulator.

// CHECK-LABEL: gpu.func @handoff_body(
// CHECK-SAME: pkgpu.ctas_wait_for_each_other
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: %[[AT:.*]] = llvm.getelementptr %arg1[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK-NEXT: %[[GENERIC:.*]] = llvm.addrspacecast %[[AT]] : !llvm.ptr<1> to !llvm.ptr
// CHECK-NEXT: pkgpu.semaphore_wait %[[GENERIC]], %{{.*}} no_decrement : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NEXT: arith.cmpi eq, %thread_id_x, %c0
// CHECK-NEXT: scf.if
// CHECK: pkgpu.semaphore_signal %{{.*}}, %{{.*}} : !llvm.ptr
// The scoped array: zeroed, then the CTA synchronizes.
// CHECK: scf.for
// CHECK: llvm.store %c0_i32, %{{.*}} : i32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr
// CHECK-NEXT: pkgpu.semaphore_signal
// CHECK: llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr
// CHECK-NEXT: pkgpu.semaphore_wait %{{.*}}, %{{.*}} : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    gpu.func @handoff_body(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16 : i64, pkgpu.warpgroups = 1 : i64} {
      %block_id_x = gpu.block_id  x
      %c1 = arith.constant 1 : index
      %0 = arith.remui %block_id_x, %c1 : index
      %1 = arith.divui %block_id_x, %c1 : index
      %thread_id_x = gpu.thread_id  x
      %c128 = arith.constant 128 : index
      %2 = arith.divui %thread_id_x, %c128 : index
      %c128_0 = arith.constant 128 : index
      %c0 = arith.constant 0 : index
      %3 = pkgpu.global_ref %arg0 sizes(%c128_0) offsets(%c0) block [128] squeeze [] : !llvm.ptr<1> -> !pk.ref<128xf32, #pk.memory_space<gmem>>
      %c3 = arith.constant 3 : index
      %c0_1 = arith.constant 0 : index
      %4 = pkgpu.global_ref %arg1 sizes(%c3) offsets(%c0_1) block [3] squeeze [] : !llvm.ptr<1> -> !pk.ref<3xi32, #pk.memory_space<gmem>>
      %c128_2 = arith.constant 128 : index
      %c0_3 = arith.constant 0 : index
      %5 = pkgpu.global_ref %arg2 sizes(%c128_2) offsets(%c0_3) block [128] squeeze [] : !llvm.ptr<1> -> !pk.ref<128xf32, #pk.memory_space<gmem>>
      %6 = pkgpu.semaphore_view %4 offset 0 : !pk.ref<3xi32, #pk.memory_space<gmem>> -> !pk.semaphore<[]>
      %7 = pkgpu.semaphore_view %4 offset 1 : !pk.ref<3xi32, #pk.memory_space<gmem>> -> !pk.semaphore<[2]>
      %8 = arith.index_cast %1 : index to i32
      %9 = arith.index_cast %8 : i32 to index
      %c1_i32 = arith.constant 1 : i32
      pk.semaphore_wait %6, %8 no_decrement : !pk.semaphore<[]>
      pk.semaphore_signal %7[%9], %c1_i32 : !pk.semaphore<[2]>
      %10 = pkgpu.semaphore_alloc offset 0 : !pk.semaphore<[3]>
      pk.semaphore_signal %10[%9], %c1_i32 : !pk.semaphore<[3]>
      pk.semaphore_wait %10[%9], %c1_i32 : !pk.semaphore<[3]>
      gpu.return
    }
  }
}

