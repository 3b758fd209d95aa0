// pk-expand-bitcasts turns row-packing bitcasts into ordinary ops: packing
// or-s the strided rows (row k of each group shifted by k times the narrow
// width), unpacking interleaves the shifted, truncated parts back into rows.
// RUN: %pk-opt --pk-expand-bitcasts %s | FileCheck %s

// CHECK-LABEL: func.func @pack
func.func @pack(%x: tensor<16x128xbf16>) -> tensor<8x128xi32> {
  // CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : tensor<16x128xbf16> to tensor<16x128xi16>
  // CHECK: %[[EVEN:.*]] = pk.slice %[[BITS]] start [0, 0] limit [16, 128] stride [2, 1] : tensor<16x128xi16> -> tensor<8x128xi16>
  // CHECK: %[[LOW:.*]] = arith.extui %[[EVEN]] : tensor<8x128xi16> to tensor<8x128xi32>
  // CHECK: %[[ODD:.*]] = pk.slice %[[BITS]] start [1, 0] limit [16, 128] stride [2, 1] : tensor<16x128xi16> -> tensor<8x128xi16>
  // CHECK: %[[HIGH:.*]] = arith.extui %[[ODD]] : tensor<8x128xi16> to tensor<8x128xi32>
  // CHECK: %[[SHIFTED:.*]] = arith.shli %[[HIGH]], %{{.*}} : tensor<8x128xi32>
  // CHECK: %[[WORDS:.*]] = arith.ori %[[LOW]], %[[SHIFTED]] : tensor<8x128xi32>
  // CHECK-NOT: pk.bitcast
  // CHECK: return %[[WORDS]]
  %w = pk.bitcast %x : tensor<16x128xbf16> -> tensor<8x128xi32>
  return %w : tensor<8x128xi32>
}

// CHECK-LABEL: func.func @unpack
func.func @unpack(%w: tensor<2x4x128xf32>) -> tensor<2x8x128xbf16> {
  // CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : tensor<2x4x128xf32> to tensor<2x4x128xi32>
  // CHECK: %[[LOW:.*]] = arith.trunci %[[BITS]] : tensor<2x4x128xi32> to tensor<2x4x128xi16>
  // CHECK: %[[L:.*]] = pk.reshape %[[LOW]] : tensor<2x4x128xi16> -> tensor<2x4x1x128xi16>
  // CHECK: %[[SH:.*]] = arith.shrui %[[BITS]], %{{.*}} : tensor<2x4x128xi32>
  // CHECK: %[[HIGH:.*]] = arith.trunci %[[SH]] : tensor<2x4x128xi32> to tensor<2x4x128xi16>
  // CHECK: %[[H:.*]] = pk.reshape %[[HIGH]] : tensor<2x4x128xi16> -> tensor<2x4x1x128xi16>
  // CHECK: %[[PAIRS:.*]] = pk.concatenate %[[L]], %[[H]] dim 2 : (tensor<2x4x1x128xi16>, tensor<2x4x1x128xi16>) -> tensor<2x4x2x128xi16>
  // CHECK: %[[ROWS:.*]] = pk.reshape %[[PAIRS]] : tensor<2x4x2x128xi16> -> tensor<2x8x128xi16>
  // CHECK: arith.bitcast %[[ROWS]] : tensor<2x8x128xi16> to tensor<2x8x128xbf16>
  %b = pk.bitcast %w : tensor<2x4x128xf32> -> tensor<2x8x128xbf16>
  return %b : tensor<2x8x128xbf16>
}
