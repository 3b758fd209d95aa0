// RUN: %pk-opt --pass-pipeline='builtin.module(gpu.module(gpu.func(pk-gpu-lower-control-flow)))' %s | FileCheck %s
// SCF becomes branches, as SCFToControlFlow makes them: two guarded loads
// in one block, an scf.for whose body holds an scf.if with a result, a
// while loop, an scf.parallel (lowered to loops, then those), and an
// scf.if nested in another's branch. Nothing structured is left.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @guarded_loads
    // CHECK-NOT: scf.
    // CHECK: cf.cond_br %[[A:.*]], ^[[LOAD_A:.*]], ^[[PAD_A:.*]]
    // CHECK: ^[[LOAD_A]]:
    // CHECK: llvm.load %arg2
    // CHECK: ^[[PAD_A]]:
    // CHECK: cf.br ^[[JOIN_A:.*]](%arg4 : f32)
    // CHECK: ^[[JOIN_A]](%[[X:.*]]: f32):
    // CHECK: cf.cond_br %arg1
    // CHECK: llvm.load %arg3
    // CHECK: ^{{.*}}(%[[Y:.*]]: f32):
    // CHECK: arith.addf %[[X]], %[[Y]]
    // CHECK-NOT: scf.
    gpu.func @guarded_loads(%a: i1, %b: i1, %pa: !llvm.ptr<1>, %pb: !llvm.ptr<1>, %pad: f32, %out: !llvm.ptr<1>) kernel {
      %x = scf.if %a -> (f32) {
        %v = llvm.load %pa : !llvm.ptr<1> -> f32
        scf.yield %v : f32
      } else {
        scf.yield %pad : f32
      }
      %y = scf.if %b -> (f32) {
        %v = llvm.load %pb : !llvm.ptr<1> -> f32
        scf.yield %v : f32
      } else {
        scf.yield %pad : f32
      }
      %s = arith.addf %x, %y : f32
      llvm.store %s, %out : f32, !llvm.ptr<1>
      gpu.return
    }

    // The loop's header compares its induction variable with the bound;
    // the if inside the body branches within the loop and the sum flows
    // around the back edge.
    // CHECK-LABEL: gpu.func @loop_with_if
    // CHECK-NOT: scf.
    // CHECK: cf.br ^[[HEADER:.*]](%{{.*}}, %arg3 : index, f32)
    // CHECK: ^[[HEADER]](%[[I:.*]]: index, %[[SUM:.*]]: f32):
    // CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[I]], %arg0
    // CHECK: cf.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
    // CHECK: ^[[BODY]]:
    // CHECK: cf.cond_br %arg1
    // CHECK: arith.addf %[[SUM]]
    // CHECK: cf.br ^[[HEADER]]
    // CHECK: ^[[EXIT]]:
    // CHECK: llvm.store %[[SUM]], %arg2
    gpu.func @loop_with_if(%n: index, %c: i1, %out: !llvm.ptr<1>, %init: f32) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%sum = %init) -> (f32) {
        %add = scf.if %c -> (f32) {
          scf.yield %one : f32
        } else {
          scf.yield %init : f32
        }
        %next = arith.addf %sum, %add : f32
        scf.yield %next : f32
      }
      llvm.store %r, %out : f32, !llvm.ptr<1>
      gpu.return
    }

    // lax.while_loop's form: the condition region branches to the body or
    // out, the body back to the condition.
    // CHECK-LABEL: gpu.func @while_loop
    // CHECK-NOT: scf.
    // CHECK: cf.br ^[[BEFORE:.*]](%arg0 : i32)
    // CHECK: ^[[BEFORE]](%[[X:.*]]: i32):
    // CHECK: %[[GO:.*]] = arith.cmpi slt, %[[X]], %arg1
    // CHECK: cf.cond_br %[[GO]], ^[[AFTER:.*]](%[[X]] : i32), ^[[EXIT:.*]]
    // CHECK: ^[[AFTER]](%[[Y:.*]]: i32):
    // CHECK: %[[NEXT:.*]] = arith.addi %[[Y]], %arg0
    // CHECK: cf.br ^[[BEFORE]](%[[NEXT]] : i32)
    // CHECK: ^[[EXIT]]:
    // CHECK: llvm.store %[[X]], %arg2
    gpu.func @while_loop(%step: i32, %limit: i32, %out: !llvm.ptr<1>) kernel {
      %r = scf.while (%x = %step) : (i32) -> i32 {
        %go = arith.cmpi slt, %x, %limit : i32
        scf.condition(%go) %x : i32
      } do {
      ^bb0(%y: i32):
        %next = arith.addi %y, %step : i32
        scf.yield %next : i32
      }
      llvm.store %r, %out : i32, !llvm.ptr<1>
      gpu.return
    }

    // scf.parallel becomes scf.for loops first; they and the if inside
    // are lowered in the rounds after.
    // CHECK-LABEL: gpu.func @parallel
    // CHECK-NOT: scf.
    // CHECK: cf.cond_br
    // CHECK: cf.cond_br
    // CHECK: cf.cond_br %arg1
    // CHECK: llvm.store %arg3, %arg2
    // CHECK: gpu.return
    gpu.func @parallel(%n: index, %c: i1, %out: !llvm.ptr<1>, %v: f32) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
        scf.if %c {
          llvm.store %v, %out : f32, !llvm.ptr<1>
        }
        scf.reduce
      }
      gpu.return
    }

    // CHECK-LABEL: gpu.func @nested
    // CHECK-NOT: scf.
    // CHECK: cf.cond_br %arg0
    // CHECK: cf.cond_br %arg1
    // CHECK: llvm.store %arg3, %arg2
    // CHECK: gpu.return
    gpu.func @nested(%a: i1, %b: i1, %out: !llvm.ptr<1>, %v: f32) kernel {
      scf.if %a {
        scf.if %b {
          llvm.store %v, %out : f32, !llvm.ptr<1>
        }
      }
      gpu.return
    }
  }
}
