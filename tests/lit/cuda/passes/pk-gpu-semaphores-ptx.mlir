// RUN: %pk-opt --pk-cuda-nvvm-stage %s | FileCheck %s
// The NVVM stage turns the thread-level semaphore ops into PTX (MLIR's
// convert-nvvm-to-llvm, through BasicPtxBuilderOpInterface), as Mosaic
// GPU's SemaphoreRef writes it: a release reduction, and a wait that
// compare-and-swaps the value away (or only loads, without decrement)
// and then acquires.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: llvm.func @semaphores
    gpu.func @semaphores(%p: !llvm.ptr<1>, %n: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %g = llvm.addrspacecast %p : !llvm.ptr<1> to !llvm.ptr
      // CHECK: llvm.inline_asm has_side_effects asm_dialect = att "red.release.gpu.add.u32 [$0], $1;", "l,r"
      pkgpu.semaphore_signal %g, %n : !llvm.ptr
      // CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}atom.relaxed.gpu.cas.b32 seen, [$0], expected, desired;{{.*}}fence.acq_rel.gpu;{{.*}}", "l,r"
      pkgpu.semaphore_wait %g, %n : !llvm.ptr
      // CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}ld.relaxed.gpu.b32 seen, [$0];{{.*}}setp.lt.u32 p, seen, $1;{{.*}}fence.acq_rel.gpu;{{.*}}", "l,r"
      pkgpu.semaphore_wait %g, %n no_decrement : !llvm.ptr
      gpu.return
    }
  }
}
