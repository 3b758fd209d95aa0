// pk-tpu-scalar-array-code: generated calls over 0-d and 1-D 32-bit
// arrays become scalar loops on SMEM; other calls are left alone.
// RUN: %pk-opt %s --pk-tpu-scalar-array-code | FileCheck %s
// The rewritten IR runs on pkc's interpreter: 5 = 1+4, 3 positives.
// RUN: %pk-opt %s --pk-tpu-scalar-array-code -o %t.mlir
// RUN: %python -c "import numpy; numpy.save('%t.in.npy', numpy.array([1, 4, -2, 7], numpy.int32))"
// RUN: %pkc run %t.mlir --entry metadata --in sizes=%t.in.npy --print | FileCheck %s --check-prefix=INTERP

#map = affine_map<() -> ()>
#map1 = affine_map<() -> (0)>
#map2 = affine_map<(d0) -> (d0, 0)>
#map3 = affine_map<(d0) -> (0, d0)>
module {
  pk.export @metadata(%sizes: tensor<4xi32> {pk.name = "sizes", pk.shape = affine_map<() -> (4)>}) -> (tensor<3xi32> {pk.shape = affine_map<() -> (3)>}, tensor<i32> {pk.shape = #map}, tensor<2xi1> {pk.shape = affine_map<() -> (2)>}) attributes {pk.returns_tuple, symbols = []} {
    // CHECK-LABEL: pallas_call "pairs"
    // CHECK-SAME: in_specs = [#pk.block_spec<[4], #map{{[0-9]*}}, memory_space = smem>]
    // CHECK-SAME: out_specs = [#pk.block_spec<[3], #map{{[0-9]*}}, memory_space = smem>]
    // CHECK-SAME: scratch_types = [!pk.ref<9xi32, #pk.memory_space<smem>>]
    // CHECK: ^bb0(%[[IN:.*]]: !pk.ref<4xi32, #pk.memory_space<smem>>, %[[OUT:.*]]: !pk.ref<3xi32, #pk.memory_space<smem>>, %[[SCRATCH:.*]]: !pk.ref<9xi32, #pk.memory_space<smem>>):
    // The strided slices read the input where it is, into scratch [0, 2):
    // CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
    // CHECK: %[[TWICE:.*]] = arith.muli %[[I]], %{{.*}} : i32
    // CHECK: %[[AT:.*]] = arith.index_cast %[[TWICE]] : i32 to index
    // CHECK: pk.load %[[IN]] [%[[AT]]] sizes [1] strides [1] squeeze [0] : <4xi32, #pk.memory_space<smem>> -> i32
    // CHECK: pk.store %{{.*}}, %[[SCRATCH]]
    // The sum of the pairs, then the concatenation with a splat 0:
    // CHECK: arith.addi %{{.*}}, %{{.*}} : i32
    // CHECK: pk.store %{{.*}}, %[[OUT]] [%{{.*}}] sizes [1] strides [1] squeeze [0] : i32, <3xi32, #pk.memory_space<smem>>
    // CHECK-NOT: tensor<
    // CHECK: pk.yield
    %0 = pallas_call "pairs"(%sizes) grid = #map {in_specs = [#pk.block_spec<[4], #map1>], input_output_aliases = array<i64>, out_shapes = [affine_map<() -> (3)>], out_specs = [#pk.block_spec<[3], #map1>], pk.generated, scratch_types = []} : (tensor<4xi32>) -> tensor<3xi32> kernel {
    ^bb0(%arg0: !pk.ref<4xi32>, %arg1: !pk.ref<3xi32>):
      %zero = arith.constant dense<0> : tensor<1xi32>
      %x = pk.load %arg0 [0] sizes [4] strides [1] squeeze [] : <4xi32> -> tensor<4xi32>
      %even = pk.slice %x start [0] limit [3] stride [2] : tensor<4xi32> -> tensor<2xi32>
      %odd = pk.slice %x start [1] limit [4] stride [2] : tensor<4xi32> -> tensor<2xi32>
      %sum = arith.addi %even, %odd : tensor<2xi32>
      %all = pk.concatenate %zero, %sum dim 0 : (tensor<1xi32>, tensor<2xi32>) -> tensor<3xi32>
      pk.store %all, %arg1 [0] sizes [3] strides [1] squeeze [] : tensor<3xi32>, <3xi32>
      pk.yield
    }
    // A reduction to a 0-d output: a loop carrying the count.
    // CHECK-LABEL: pallas_call "positives"
    // CHECK-SAME: out_specs = [#pk.block_spec<[], #map{{[0-9]*}}, memory_space = smem>]
    // CHECK: %[[COUNT:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (i32) : i32 {
    // CHECK: pk.load %{{.*}} [%{{.*}}] sizes [1] strides [1] squeeze [0] : <8xi32, #pk.memory_space<smem>> -> i32
    // CHECK: %[[NEXT:.*]] = arith.addi %[[ACC]], %{{.*}} : i32
    // CHECK: scf.yield %[[NEXT]] : i32
    // CHECK: pk.store %[[COUNT]], %{{.*}} [] sizes [] strides [] squeeze [] : i32, <i32, #pk.memory_space<smem>>
    %1 = pallas_call "positives"(%sizes) grid = #map {in_specs = [#pk.block_spec<[4], #map1>], input_output_aliases = array<i64>, out_shapes = [#map], out_specs = [#pk.block_spec<[], #map>], pk.generated, scratch_types = []} : (tensor<4xi32>) -> tensor<i32> kernel {
    ^bb0(%arg0: !pk.ref<4xi32>, %arg1: !pk.ref<i32>):
      %x = pk.load %arg0 [0] sizes [4] strides [1] squeeze [] : <4xi32> -> tensor<4xi32>
      %cst = arith.constant dense<0> : tensor<4xi32>
      %pos = arith.cmpi sgt, %x, %cst : tensor<4xi32>
      %ones = arith.extui %pos : tensor<4xi1> to tensor<4xi32>
      %n = pk.reduce <add> %ones axes [0] : tensor<4xi32> -> i32
      pk.store %n, %arg1 [] sizes [] strides [] squeeze [] : i32, <i32>
      pk.yield
    }
    // Transcendental functions stay on the vector unit.
    // CHECK-LABEL: pallas_call "exp"
    // CHECK-SAME: in_specs = [#pk.block_spec<[4], #map{{[0-9]*}}>]
    // CHECK: math.exp %{{.*}} : tensor<4xf32>
    %2 = pallas_call "exp"(%sizes) grid = #map {in_specs = [#pk.block_spec<[4], #map1>], input_output_aliases = array<i64>, out_shapes = [affine_map<() -> (2)>], out_specs = [#pk.block_spec<[2], #map1>], pk.generated, scratch_types = []} : (tensor<4xi32>) -> tensor<2xi1> kernel {
    ^bb0(%arg0: !pk.ref<4xi32>, %arg1: !pk.ref<2xi1>):
      %i = pk.load %arg0 [0] sizes [4] strides [1] squeeze [] : <4xi32> -> tensor<4xi32>
      %x = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
      %e = math.exp %x : tensor<4xf32>
      %h = pk.slice %e start [0] limit [2] stride [1] : tensor<4xf32> -> tensor<2xf32>
      %one = arith.constant dense<1.0> : tensor<2xf32>
      %gt = arith.cmpf ogt, %h, %one : tensor<2xf32>
      pk.store %gt, %arg1 [0] sizes [2] strides [1] squeeze [] : tensor<2xi1>, <2xi1>
      pk.yield
    }
    return %0, %1, %2 : tensor<3xi32>, tensor<i32>, tensor<2xi1>
  }
}

// INTERP: output 0: int32[3]
// INTERP-NEXT: [0 5 5]
// INTERP: output 1: int32
// INTERP-NEXT: 3
// INTERP: output 2: bool[2]
// INTERP-NEXT: [True True]
