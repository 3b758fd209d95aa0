// RUN: %pk-opt --pk-gpu-define-arith %s | FileCheck %s
// Division by zero gives -1 (and its remainder the dividend), as the
// language defines it; LLVM leaves it (and MIN / -1) undefined, so the
// divisor becomes 1 in those cases and a select gives the language's
// answer.

// CHECK-LABEL: func.func @divide
func.func @divide(%a: i32, %b: i32) -> (i32, i32) {
  // CHECK: %[[ZERO:.*]] = arith.cmpi eq, %arg1, %c0_i32
  // CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %c1_i32, %arg1 : i32
  // CHECK: %[[Q:.*]] = arith.divsi %arg0, %[[SAFE]] : i32
  // CHECK: arith.select %[[ZERO]], %{{.*}}, %[[Q]]
  %q = arith.divsi %a, %b : i32
  // CHECK: %[[R:.*]] = arith.remsi %arg0, %{{.*}} : i32
  // CHECK: arith.select %{{.*}}, %arg0, %[[R]]
  %r = arith.remsi %a, %b : i32
  return %q, %r : i32, i32
}
