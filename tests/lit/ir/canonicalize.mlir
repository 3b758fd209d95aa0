// pk's folders remove no-op reshapes, broadcasts and transposes.
// RUN: %pk-opt %s --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @identity
// CHECK-NOT: pk.reshape
// CHECK-NOT: pk.broadcast_in_dim
// CHECK-NOT: pk.transpose
// CHECK: return %arg0
func.func @identity(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = pk.reshape %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.broadcast_in_dim %0 dims [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = pk.transpose %1 perm [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK: pk.transpose %arg0 perm [1, 0]
func.func @kept(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = pk.transpose %a perm [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
