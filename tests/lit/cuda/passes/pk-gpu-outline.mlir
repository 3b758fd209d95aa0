// RUN: %pk-opt --pk-gpu-outline %s | FileCheck %s
// A pallas_call becomes a gpu.func kernel: one global pointer per operand
// and an i64 per symbolic size; the grid axis is the CUDA grid's x, and
// each Ref is bound to its block of memory, the offset clamped as Pallas
// clamps it.

#map = affine_map<()[s0] -> (s0)>
#map1 = affine_map<()[s0] -> (s0 ceildiv 1024)>
#map2 = affine_map<(d0)[s0] -> (d0)>
module {
  pk.export @add(%x: tensor<?xf32> {pk.name = "x", pk.shape = #map}, %y: tensor<?xf32> {pk.name = "y", pk.shape = #map}) -> (tensor<?xf32> {pk.shape = #map}) attributes {symbols = ["N"]} {
    %0 = pallas_call "add_kernel"(%x, %y) grid = #map1 {in_specs = [#pk.block_spec<[1024], #map2>, #pk.block_spec<[1024], #map2>], input_output_aliases = array<i64>, kernel_arg_names = ["x_ref", "y_ref", "o_ref"], out_shapes = [#map], out_specs = [#pk.block_spec<[1024], #map2>], scratch_types = []} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> kernel {
    ^bb0(%x_ref: !pk.ref<1024xf32>, %y_ref: !pk.ref<1024xf32>, %o_ref: !pk.ref<1024xf32>):
      %1 = pk.load %x_ref [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32>
      %2 = pk.load %y_ref [0] sizes [1024] strides [1] squeeze [] : <1024xf32> -> tensor<1024xf32>
      %3 = arith.addf %1, %2 : tensor<1024xf32>
      pk.store %3, %o_ref [0] sizes [1024] strides [1] squeeze [] : tensor<1024xf32>, <1024xf32>
      pk.yield
    }
    return %0 : tensor<?xf32>
  }
}

// CHECK-NOT: pk.export
// CHECK: gpu.module @pk_kernels
// CHECK: gpu.func @add_add_kernel(%[[X:.*]]: !llvm.ptr<1>, %[[Y:.*]]: !llvm.ptr<1>, %[[O:.*]]: !llvm.ptr<1>, %[[N:.*]]: i64) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[SIZE:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: gpu.block_id x
// CHECK: arith.ceildivsi
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: pkgpu.global_ref %[[X]] sizes(%[[SIZE]]) offsets(%{{.*}}) block [1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024xf32>
// CHECK: pkgpu.global_ref %[[O]] sizes(%[[SIZE]]) offsets(%{{.*}}) block [1024]
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<1024xf32>
// CHECK: gpu.return
