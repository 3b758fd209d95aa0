// pk-fold-ref-reshapes: loads and stores through a Ref reshape that only
// adds or removes unit axes become loads and stores of the Ref it views
// (its own unit axes read at 0 and squeezed; a unit axis only the view has
// becomes a pk.reshape of the value); chains compose; a reshape that
// merges axes stays.
// RUN: %pk-opt --pk-fold-ref-reshapes %s | FileCheck %s

// CHECK-LABEL: func.func @squeeze
func.func @squeeze(%x: !pk.ref<1x1x32x128xf32>, %o: !pk.ref<1x1x32x128xf32>, %i: index) {
  // CHECK-NOT: pk.ref_reshape
  // CHECK: %[[V:.*]] = pk.load %arg0 [0, 0, %arg2, 0] sizes [1, 1, 8, 128] strides [1, 1, 1, 1] squeeze [0, 1] : <1x1x32x128xf32> -> tensor<8x128xf32>
  %x2 = pk.ref_reshape %x : !pk.ref<1x1x32x128xf32> -> !pk.ref<32x128xf32>
  %v = pk.load %x2 [%i, 0] sizes [8, 128] strides [1, 1] squeeze [] : <32x128xf32> -> tensor<8x128xf32>
  // The view's own unit axis (1 of 1x32x1x128) is a reshape of the value.
  // CHECK: %[[W:.*]] = pk.reshape %{{.*}} : tensor<8x1x128xf32> -> tensor<8x128xf32>
  // CHECK: pk.store %[[W]], %arg1 [0, 0, 0, 0] sizes [1, 1, 8, 128] strides [1, 1, 1, 1] squeeze [0, 1] : tensor<8x128xf32>, <1x1x32x128xf32>
  %o2 = pk.ref_reshape %o : !pk.ref<1x1x32x128xf32> -> !pk.ref<1x32x1x128xf32>
  %w = pk.reshape %v : tensor<8x128xf32> -> tensor<8x1x128xf32>
  pk.store %w, %o2 [0, 0, 0, 0] sizes [1, 8, 1, 128] strides [1, 1, 1, 1] squeeze [0] : tensor<8x1x128xf32>, <1x32x1x128xf32>
  return
}

// CHECK-LABEL: func.func @chain
func.func @chain(%x: !pk.ref<1x32x128xf32>) -> tensor<4x1x128xf32> {
  // CHECK-NOT: pk.ref_reshape
  // CHECK: %[[R:.*]] = pk.load %arg0 [0, 4, 0] sizes [1, 4, 128] strides [1, 1, 1] squeeze [0] : <1x32x128xf32> -> tensor<4x128xf32>
  // CHECK: %[[S:.*]] = pk.reshape %[[R]] : tensor<4x128xf32> -> tensor<4x1x128xf32>
  // CHECK: return %[[S]]
  %a = pk.ref_reshape %x : !pk.ref<1x32x128xf32> -> !pk.ref<32x128xf32>
  %b = pk.ref_reshape %a : !pk.ref<32x128xf32> -> !pk.ref<32x1x128xf32>
  %v = pk.load %b [4, 0, 0] sizes [4, 1, 128] strides [1, 1, 1] squeeze [] : <32x1x128xf32> -> tensor<4x1x128xf32>
  return %v : tensor<4x1x128xf32>
}

// CHECK-LABEL: func.func @merges
func.func @merges(%x: !pk.ref<4x32x128xf32>) -> tensor<128x128xf32> {
  // CHECK: pk.ref_reshape %arg0 : !pk.ref<4x32x128xf32> -> !pk.ref<128x128xf32>
  %a = pk.ref_reshape %x : !pk.ref<4x32x128xf32> -> !pk.ref<128x128xf32>
  %v = pk.load %a [0, 0] sizes [128, 128] strides [1, 1] squeeze [] : <128x128xf32> -> tensor<128x128xf32>
  return %v : tensor<128x128xf32>
}
