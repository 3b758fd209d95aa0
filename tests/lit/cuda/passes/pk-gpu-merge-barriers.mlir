// RUN: %pk-opt --pk-gpu-merge-barriers %s | FileCheck %s
// Two CTA barriers with nothing between them that touches memory are one:
// the first is erased. Address arithmetic and the thread's own proxy
// fence may stand between them; a store, a load or a region may not.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // A store to shared memory waited for, then commit_smem's fence and
    // barrier: the store's trailing barrier goes.
    // CHECK-LABEL: gpu.func @store_then_commit
    // CHECK: gpu.barrier
    // CHECK-NEXT: llvm.store
    // CHECK-NEXT: nvvm.fence.proxy
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: gpu.return
    gpu.func @store_then_commit(%p: !llvm.ptr<3>, %v: f32) kernel {
      gpu.barrier
      llvm.store %v, %p : f32, !llvm.ptr<3>
      gpu.barrier
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      gpu.barrier
      gpu.return
    }

    // CHECK-LABEL: gpu.func @arithmetic_between
    // CHECK: gpu.barrier
    // CHECK-NOT: gpu.barrier
    // CHECK: llvm.load
    gpu.func @arithmetic_between(%p: !llvm.ptr<3>, %i: i32) kernel {
      gpu.barrier
      %q = llvm.getelementptr %p[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      gpu.barrier
      %x = llvm.load %q : !llvm.ptr<3> -> f32
      gpu.return
    }

    // Accesses between barriers keep both; so does a region (an scf.if
    // whose thread may store), and barriers in nested blocks merge there.
    // CHECK-LABEL: gpu.func @accesses_between
    // CHECK: gpu.barrier
    // CHECK-NEXT: llvm.load
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: scf.if
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: llvm.store
    // CHECK: }
    // CHECK-NEXT: gpu.barrier
    gpu.func @accesses_between(%p: !llvm.ptr<3>, %c: i1) kernel {
      gpu.barrier
      %x = llvm.load %p : !llvm.ptr<3> -> f32
      gpu.barrier
      scf.if %c {
        gpu.barrier
        gpu.barrier
        llvm.store %x, %p : f32, !llvm.ptr<3>
      }
      gpu.barrier
      gpu.return
    }
  }
}
