// RUN: %pk-opt --pk-gpu-canonicalize-blocks %s | FileCheck %s
// The canonicalizer's folds and patterns, block by block: constants of an
// outer block fold into the blocks inside, an `scf.if` on a constant is
// inlined and its body folded, unused pure ops and empty regions go, and
// stores stay.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @nested
    // CHECK: %[[C12:.*]] = arith.constant 12 : i32
    // CHECK-NEXT: scf.for
    // CHECK-NEXT: llvm.store %[[C12]], %arg0
    // CHECK-NEXT: }
    // CHECK-NEXT: %[[C7:.*]] = arith.constant 7 : i32
    // CHECK-NEXT: llvm.store %[[C7]], %arg0
    // CHECK-NEXT: gpu.return
    gpu.func @nested(%arg0: !llvm.ptr<1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %three = arith.constant 3 : i32
      %four = arith.constant 4 : i32
      %product = arith.muli %three, %four : i32
      %true = arith.constant true
      scf.for %i = %c0 to %c4 step %c1 {
        %zero = arith.constant 0 : i32
        %sum = arith.addi %product, %zero : i32
        %unused = arith.muli %sum, %sum : i32
        llvm.store %sum, %arg0 : i32, !llvm.ptr<1>
      }
      scf.if %true {
        %seven = arith.addi %three, %four : i32
        llvm.store %seven, %arg0 : i32, !llvm.ptr<1>
      }
      scf.for %i = %c0 to %c4 step %c1 {
        %dead = arith.addi %three, %three : i32
      }
      gpu.return
    }
  }
}
