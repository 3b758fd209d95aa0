// pk-fuse-array-code merges a generated kernel (array code at export level)
// into the generated kernel that is its results' only user: exp and the
// subtraction become one kernel whose body never stores exp's result. The
// difference feeds two kernels (the sum and the addition), so it stays a
// kernel of its own; the user's copy_kernel is never touched.
// RUN: %pk-opt --pk-fuse-array-code %s | FileCheck %s

// CHECK-LABEL: pk.export @chain
// CHECK: %[[D:.*]] = pallas_call "exp_elementwise"(%x, %y)
// CHECK-SAME: pk.generated
// CHECK-NEXT: ^bb0(%[[X:.*]]: !pk.ref<8x128xf32>, %[[Y:.*]]: !pk.ref<8x128xf32>, %[[O:.*]]: !pk.ref<8x128xf32>):
// CHECK-NEXT: %[[XV:.*]] = pk.load %[[X]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[XV]]
// CHECK-NEXT: %[[YV:.*]] = pk.load %[[Y]]
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[E]], %[[YV]]
// CHECK-NEXT: pk.store %[[S]], %[[O]]
// CHECK-NEXT: pk.yield
// CHECK: %[[K:.*]] = pallas_call "copy_kernel"(%y)
// CHECK: pallas_call "sum"(%[[D]])
// CHECK: pallas_call "elementwise"(%[[K]], %[[D]])
// CHECK-NOT: pallas_call
// CHECK: return

// A generated call whose result nothing reads is erased.
// CHECK-LABEL: pk.export @unused
// CHECK-NOT: pallas_call
// CHECK: return %x

#map = affine_map<() -> (8)>
#map1 = affine_map<() -> (8, 128)>
#map2 = affine_map<() -> ()>
#map3 = affine_map<() -> (0, 0)>
#map4 = affine_map<() -> (0)>
module {
  pk.export @chain(%x: tensor<8x128xf32> {pk.name = "x", pk.shape = #map1}, %y: tensor<8x128xf32> {pk.name = "y", pk.shape = #map1}) -> (tensor<8xf32> {pk.shape = #map}, tensor<8x128xf32> {pk.shape = #map1}) attributes {pk.returns_tuple, symbols = []} {
    %0 = pallas_call "exp"(%x) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, out_shapes = [#map1], out_specs = [#pk.block_spec<[8, 128], #map3>], pk.generated, scratch_types = []} : (tensor<8x128xf32>) -> tensor<8x128xf32> kernel {
    ^bb0(%arg0: !pk.ref<8x128xf32>, %arg1: !pk.ref<8x128xf32>):
      %5 = pk.load %arg0 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %6 = math.exp %5 : tensor<8x128xf32>
      pk.store %6, %arg1 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : tensor<8x128xf32>, <8x128xf32>
      pk.yield
    }
    %1 = pallas_call "elementwise"(%0, %y) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>, #pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, out_shapes = [#map1], out_specs = [#pk.block_spec<[8, 128], #map3>], pk.generated, scratch_types = []} : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32> kernel {
    ^bb0(%arg0: !pk.ref<8x128xf32>, %arg1: !pk.ref<8x128xf32>, %arg2: !pk.ref<8x128xf32>):
      %5 = pk.load %arg0 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %6 = pk.load %arg1 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %7 = arith.subf %5, %6 : tensor<8x128xf32>
      pk.store %7, %arg2 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : tensor<8x128xf32>, <8x128xf32>
      pk.yield
    }
    %2 = pallas_call "copy_kernel"(%y) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, kernel_arg_names = ["x_ref", "o_ref"], out_shapes = [#map1], out_specs = [#pk.block_spec<[8, 128], #map3>], scratch_types = []} : (tensor<8x128xf32>) -> tensor<8x128xf32> kernel {
    ^bb0(%x_ref: !pk.ref<8x128xf32>, %o_ref: !pk.ref<8x128xf32>):
      %5 = pk.load %x_ref [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      pk.store %5, %o_ref [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : tensor<8x128xf32>, <8x128xf32>
      pk.yield
    }
    %3 = pallas_call "sum"(%1) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, out_shapes = [#map], out_specs = [#pk.block_spec<[8], #map4>], pk.generated, scratch_types = []} : (tensor<8x128xf32>) -> tensor<8xf32> kernel {
    ^bb0(%arg0: !pk.ref<8x128xf32>, %arg1: !pk.ref<8xf32>):
      %5 = pk.load %arg0 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %6 = pk.reduce <add> %5 axes [1] : tensor<8x128xf32> -> tensor<8xf32>
      pk.store %6, %arg1 [0] sizes [8] strides [1] squeeze [] : tensor<8xf32>, <8xf32>
      pk.yield
    }
    %4 = pallas_call "elementwise"(%2, %1) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>, #pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, out_shapes = [#map1], out_specs = [#pk.block_spec<[8, 128], #map3>], pk.generated, scratch_types = []} : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32> kernel {
    ^bb0(%arg0: !pk.ref<8x128xf32>, %arg1: !pk.ref<8x128xf32>, %arg2: !pk.ref<8x128xf32>):
      %5 = pk.load %arg0 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %6 = pk.load %arg1 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %7 = arith.addf %5, %6 : tensor<8x128xf32>
      pk.store %7, %arg2 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : tensor<8x128xf32>, <8x128xf32>
      pk.yield
    }
    return %3, %4 : tensor<8xf32>, tensor<8x128xf32>
  }
  pk.export @unused(%x: tensor<8x128xf32> {pk.name = "x", pk.shape = #map1}) -> (tensor<8x128xf32> {pk.shape = #map1}) attributes {symbols = []} {
    %0 = pallas_call "sum"(%x) grid = #map2 {in_specs = [#pk.block_spec<[8, 128], #map3>], input_output_aliases = array<i64>, out_shapes = [#map], out_specs = [#pk.block_spec<[8], #map4>], pk.generated, scratch_types = []} : (tensor<8x128xf32>) -> tensor<8xf32> kernel {
    ^bb0(%arg0: !pk.ref<8x128xf32>, %arg1: !pk.ref<8xf32>):
      %5 = pk.load %arg0 [0, 0] sizes [8, 128] strides [1, 1] squeeze [] : <8x128xf32> -> tensor<8x128xf32>
      %6 = pk.reduce <add> %5 axes [1] : tensor<8x128xf32> -> tensor<8xf32>
      pk.store %6, %arg1 [0] sizes [8] strides [1] squeeze [] : tensor<8xf32>, <8xf32>
      pk.yield
    }
    return %x : tensor<8x128xf32>
  }
}
