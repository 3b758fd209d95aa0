// RUN: %pk-opt --pk-gpu-distribute %s | FileCheck %s
// RUN: %pk-opt --pk-gpu-distribute %s | FileCheck %s --check-prefix=NOSELECT
// A window copied into a wgmma buffer with cp.async: 16-byte pieces, one
// per thread here (64 x 32 bf16 = 256 pieces, 256 threads). Whether every
// piece is whole and 16-byte aligned (the window's first element, the row
// pitch and the array's rows whole pieces) is tested once for the copy;
// then each piece is one cp.async of all 16 bytes or none (a piece
// outside the array: source size 0, all zero-filled, its address left as
// computed since nothing is read): no branch and no address select per
// piece. Otherwise element by element.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // NOSELECT-NOT: arith.select {{.*}} !llvm.ptr
    // CHECK-LABEL: gpu.func @copy
    // CHECK: %[[ALIGNED:.*]] = arith.cmpi eq
    // CHECK: scf.if %[[ALIGNED]] {
    // CHECK: %[[COUNT:.*]] = arith.select %{{.*}}, %c8, %c0 : index
    // CHECK: %[[BYTES:.*]] = arith.muli %[[COUNT]], %{{.*}} : index
    // CHECK: %[[SIZE:.*]] = arith.index_cast %[[BYTES]] : index to i32
    // CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE]] :
    // CHECK-NOT: nvvm.cp.async.shared.global
    // CHECK: } else {
    // CHECK-NOT: nvvm.cp.async.shared.global
    // CHECK: llvm.load
    // CHECK: llvm.store
    gpu.func @copy(%arg0: !llvm.ptr<1>, %m: index, %k: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 4096 : i64} {
      %c0 = arith.constant 0 : index
      %x = pkgpu.global_ref %arg0 sizes(%m, %k) offsets(%c0, %c0) block [64, 32] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x32xbf16>
      %s = pkgpu.shared_ref offset 0 strips 64 : !pk.ref<64x32xbf16, #pk.memory_space<shared>>
      pkgpu.async_copy %x [0, 0] into %s : !pk.ref<64x32xbf16>, !pk.ref<64x32xbf16, #pk.memory_space<shared>>
      gpu.return
    }
  }
}
