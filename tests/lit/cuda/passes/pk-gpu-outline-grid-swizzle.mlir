// RUN: %pk-opt --pk-gpu-outline %s | FileCheck %s
// A kernel that multiplies 16-bit floats over a two-axis grid takes its
// program ids in groups of 8 rows, column by column within a group (the
// grouped order of Triton's matmul tutorial): the CTAs resident at once
// share operand blocks in L2. Kernels without such a dot (f32 dots run on
// the FMA path, not limited by memory) keep the row-major order (x is the
// last grid axis, y the first).

// CHECK-LABEL: gpu.func @mm_mm_kernel
// CHECK: %[[Y:.*]] = gpu.block_id y
// CHECK: %[[ROWMAJOR:.*]] = arith.muli %[[Y]], %[[NX:.*]] : index
// CHECK: %[[X:.*]] = gpu.block_id x
// CHECK: %[[LINEAR:.*]] = arith.addi %[[ROWMAJOR]], %[[X]] : index
// CHECK: %[[SPAN:.*]] = arith.muli %[[NX]], %{{.*}} : index
// CHECK: %[[GROUP:.*]] = arith.divui %[[LINEAR]], %[[SPAN]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %{{.*}} : index
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %[[FIRST]] : index
// CHECK: %[[ROWS:.*]] = arith.minui %[[LEFT]], %{{.*}} : index
// CHECK: %[[BEFORE:.*]] = arith.muli %[[GROUP]], %[[SPAN]] : index
// CHECK: %[[IN:.*]] = arith.subi %[[LINEAR]], %[[BEFORE]] : index
// CHECK: %[[ROW:.*]] = arith.remui %[[IN]], %[[ROWS]] : index
// CHECK: %[[I:.*]] = arith.addi %[[FIRST]], %[[ROW]] : index
// CHECK: %[[J:.*]] = arith.divui %[[IN]], %[[ROWS]] : index
// CHECK: arith.muli %[[I]], %{{.*}} : index
// CHECK: arith.muli %[[J]], %{{.*}} : index

// CHECK-LABEL: gpu.func @add2d_add_kernel
// CHECK: %[[X2:.*]] = gpu.block_id x
// CHECK: %[[Y2:.*]] = gpu.block_id y
// CHECK-NOT: arith.divui
// CHECK: arith.muli %[[Y2]], %{{.*}} : index
// CHECK: arith.muli %[[X2]], %{{.*}} : index

// CHECK-LABEL: gpu.func @mm_f32_mm_kernel
// CHECK: %[[X3:.*]] = gpu.block_id x
// CHECK: %[[Y3:.*]] = gpu.block_id y
// CHECK-NOT: arith.divui
// CHECK: arith.muli %[[Y3]], %{{.*}} : index

#map = affine_map<()[s0, s1] -> (s0, s1)>
#map1 = affine_map<()[s0, s1] -> (s0 ceildiv 32, s1 ceildiv 32)>
#map2 = affine_map<(d0, d1)[s0, s1] -> (d0, 0)>
#map3 = affine_map<(d0, d1)[s0, s1] -> (0, d1)>
#map4 = affine_map<(d0, d1)[s0, s1] -> (d0, d1)>
module {
  pk.export @mm(%x: tensor<?x32xbf16> {pk.name = "x", pk.shape = affine_map<()[s0, s1] -> (s0, 32)>}, %y: tensor<32x?xbf16> {pk.name = "y", pk.shape = affine_map<()[s0, s1] -> (32, s1)>}) -> (tensor<?x?xf32> {pk.shape = #map}) attributes {symbols = ["M", "N"]} {
    %0 = pallas_call "mm_kernel"(%x, %y) grid = #map1 {in_specs = [#pk.block_spec<[32, 32], #map2>, #pk.block_spec<[32, 32], #map3>], input_output_aliases = array<i64>, kernel_arg_names = ["x_ref", "y_ref", "o_ref"], out_shapes = [#map], out_specs = [#pk.block_spec<[32, 32], #map4>], scratch_types = []} : (tensor<?x32xbf16>, tensor<32x?xbf16>) -> tensor<?x?xf32> kernel {
    ^bb0(%x_ref: !pk.ref<32x32xbf16>, %y_ref: !pk.ref<32x32xbf16>, %o_ref: !pk.ref<32x32xf32>):
      %1 = pk.load %x_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : <32x32xbf16> -> tensor<32x32xbf16>
      %2 = pk.load %y_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : <32x32xbf16> -> tensor<32x32xbf16>
      %3 = pk.dot %1, %2 : tensor<32x32xbf16>, tensor<32x32xbf16> -> tensor<32x32xf32>
      pk.store %3, %o_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : tensor<32x32xf32>, <32x32xf32>
      pk.yield
    }
    return %0 : tensor<?x?xf32>
  }
  pk.export @add2d(%x: tensor<?x?xf32> {pk.name = "x", pk.shape = #map}) -> (tensor<?x?xf32> {pk.shape = #map}) attributes {symbols = ["M", "N"]} {
    %0 = pallas_call "add_kernel"(%x) grid = #map1 {in_specs = [#pk.block_spec<[32, 32], #map4>], input_output_aliases = array<i64>, kernel_arg_names = ["x_ref", "o_ref"], out_shapes = [#map], out_specs = [#pk.block_spec<[32, 32], #map4>], scratch_types = []} : (tensor<?x?xf32>) -> tensor<?x?xf32> kernel {
    ^bb0(%x_ref: !pk.ref<32x32xf32>, %o_ref: !pk.ref<32x32xf32>):
      %1 = pk.load %x_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : <32x32xf32> -> tensor<32x32xf32>
      %cst = arith.constant dense<1.000000e+00> : tensor<32x32xf32>
      %2 = arith.addf %1, %cst : tensor<32x32xf32>
      pk.store %2, %o_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : tensor<32x32xf32>, <32x32xf32>
      pk.yield
    }
    return %0 : tensor<?x?xf32>
  }
  pk.export @mm_f32(%x: tensor<?x32xf32> {pk.name = "x", pk.shape = affine_map<()[s0, s1] -> (s0, 32)>}, %y: tensor<32x?xf32> {pk.name = "y", pk.shape = affine_map<()[s0, s1] -> (32, s1)>}) -> (tensor<?x?xf32> {pk.shape = #map}) attributes {symbols = ["M", "N"]} {
    %0 = pallas_call "mm_kernel"(%x, %y) grid = #map1 {in_specs = [#pk.block_spec<[32, 32], #map2>, #pk.block_spec<[32, 32], #map3>], input_output_aliases = array<i64>, kernel_arg_names = ["x_ref", "y_ref", "o_ref"], out_shapes = [#map], out_specs = [#pk.block_spec<[32, 32], #map4>], scratch_types = []} : (tensor<?x32xf32>, tensor<32x?xf32>) -> tensor<?x?xf32> kernel {
    ^bb0(%x_ref: !pk.ref<32x32xf32>, %y_ref: !pk.ref<32x32xf32>, %o_ref: !pk.ref<32x32xf32>):
      %1 = pk.load %x_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : <32x32xf32> -> tensor<32x32xf32>
      %2 = pk.load %y_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : <32x32xf32> -> tensor<32x32xf32>
      %3 = pk.dot %1, %2 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
      pk.store %3, %o_ref [0, 0] sizes [32, 32] strides [1, 1] squeeze [] : tensor<32x32xf32>, <32x32xf32>
      pk.yield
    }
    return %0 : tensor<?x?xf32>
  }
}

