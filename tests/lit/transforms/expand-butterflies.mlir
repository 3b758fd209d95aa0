// pk-expand-butterflies: element i along the axis takes element i ^ d by
// splitting the axis into runs of 2d as (runs, 2, d) and joining the
// runs' halves in the other order.
// RUN: %pk-opt --pk-expand-butterflies %s | FileCheck %s

// CHECK-LABEL: func.func @exchange
func.func @exchange(%x: tensor<3x16x2xi32>) -> tensor<3x16x2xi32> {
  // CHECK: %[[RUNS:.*]] = pk.reshape %{{.*}} : tensor<3x16x2xi32> -> tensor<3x2x2x4x2xi32>
  // CHECK: %[[HIGH:.*]] = pk.slice %[[RUNS]] start [0, 0, 1, 0, 0] limit [3, 2, 2, 4, 2] stride [1, 1, 1, 1, 1] : tensor<3x2x2x4x2xi32> -> tensor<3x2x1x4x2xi32>
  // CHECK: %[[LOW:.*]] = pk.slice %[[RUNS]] start [0, 0, 0, 0, 0] limit [3, 2, 1, 4, 2] stride [1, 1, 1, 1, 1] : tensor<3x2x2x4x2xi32> -> tensor<3x2x1x4x2xi32>
  // CHECK: %[[SWAPPED:.*]] = pk.concatenate %[[HIGH]], %[[LOW]] dim 2 : (tensor<3x2x1x4x2xi32>, tensor<3x2x1x4x2xi32>) -> tensor<3x2x2x4x2xi32>
  // CHECK: %[[BACK:.*]] = pk.reshape %[[SWAPPED]] : tensor<3x2x2x4x2xi32> -> tensor<3x16x2xi32>
  // CHECK-NOT: pk.butterfly
  // CHECK: return %[[BACK]]
  %0 = pk.butterfly %x dim 1 distance 4 : tensor<3x16x2xi32>
  return %0 : tensor<3x16x2xi32>
}
