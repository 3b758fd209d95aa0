// The two out-of-bounds rules of pk.load / pk.store, as Pallas interpret
// mode has them: a plain window past the Ref's end shifts back inside it
// (Ref indexing); a `padded` one (pl.load / pl.store) reads NaN past the end
// and drops stores there, and a start past the end reads only padding.
// RUN: %pk-opt %s | %pk-opt | FileCheck %s --check-prefix=IR
// RUN: %pkc run %s --print | FileCheck %s

// IR: pk.load %{{[a-z0-9_]+}} [%{{[a-z0-9_]+}}] sizes [4] strides [1] squeeze [] padded :
// IR: pk.store %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} [%{{[a-z0-9_]+}}] sizes [4] strides [1] squeeze [] padded :
pk.export @windows(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<16xf32> {pk.shape = affine_map<() -> (16)>}, tensor<8xf32> {pk.shape = affine_map<() -> (8)>})
    attributes {symbols = []} {
  %0:2 = pk.pallas_call "windows"(%x) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[16], affine_map<() -> (0)>>, #pk.block_spec<[8], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (16)>, affine_map<() -> (8)>],
      scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<8xf32>) -> (tensor<16xf32>, tensor<8xf32>)
  kernel {
  ^bb0(%in: !pk.ref<8xf32>, %out: !pk.ref<16xf32>, %dropped: !pk.ref<8xf32>):
    %c6 = arith.constant 6 : index
    %c9 = arith.constant 9 : index
    %shifted = pk.load %in[%c6] sizes [4] strides [1] squeeze [] : !pk.ref<8xf32> -> tensor<4xf32>
    %padded = pk.load %in[%c6] sizes [4] strides [1] squeeze [] padded : !pk.ref<8xf32> -> tensor<4xf32>
    %far = pk.load %in[%c9] sizes [4] strides [1] squeeze [] padded : !pk.ref<8xf32> -> tensor<4xf32>
    pk.store %shifted, %out[0] sizes [4] strides [1] squeeze [] : tensor<4xf32>, !pk.ref<16xf32>
    pk.store %padded, %out[4] sizes [4] strides [1] squeeze [] : tensor<4xf32>, !pk.ref<16xf32>
    pk.store %far, %out[8] sizes [4] strides [1] squeeze [] : tensor<4xf32>, !pk.ref<16xf32>
    %zero = arith.constant dense<0.0> : tensor<8xf32>
    pk.store %zero, %dropped[0] sizes [8] strides [1] squeeze [] : tensor<8xf32>, !pk.ref<8xf32>
    %one = arith.constant dense<1.0> : tensor<4xf32>
    pk.store %one, %dropped[%c6] sizes [4] strides [1] squeeze [] padded : tensor<4xf32>, !pk.ref<8xf32>
    pk.store %one, %out[12] sizes [4] strides [1] squeeze [] : tensor<4xf32>, !pk.ref<16xf32>
    pk.yield
  }
  pk.return %0#0, %0#1 : tensor<16xf32>, tensor<8xf32>
}
// The made-up input is (37k mod 257) / 64 - 2.
// CHECK: # windows output 0: float32[16]
// CHECK-NEXT: [ 0.3125    0.890625  1.46875  -1.96875   1.46875  -1.96875        nan
// CHECK-NEXT:        nan       nan       nan       nan       nan  1.        1.
// CHECK-NEXT:   1.        1.      ]
// CHECK: # windows output 1: float32[8]
// CHECK-NEXT: [0. 0. 0. 0. 0. 0. 1. 1.]
