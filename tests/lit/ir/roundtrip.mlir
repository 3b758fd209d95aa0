// The pk dialect prints and parses back to the same IR.
// RUN: %pk-opt %s | %pk-opt | FileCheck %s

// CHECK-LABEL: pk.export @scale
// CHECK-SAME: (%x: tensor<?x128xbf16> {pk.name = "x", pk.shape = #{{.*}}})
// CHECK-SAME: attributes {symbols = ["N"]}
pk.export @scale(%x: tensor<?x128xbf16> {pk.name = "x", pk.shape = affine_map<()[s0] -> (s0, 128)>})
    -> (tensor<?x128xbf16> {pk.shape = affine_map<()[s0] -> (s0, 128)>})
    attributes {symbols = ["N"]} {
  // CHECK: pallas_call "scale"(%x) grid = #{{[a-z0-9]+}}
  // CHECK-SAME: in_specs = [#pk.block_spec<[8, element 128 pad 2 2], computed, memory_space = vmem>]
  // CHECK-SAME: out_specs = [#pk.block_spec<[squeezed, 128], #{{[a-z0-9]+}}>]
  // CHECK-SAME: scratch_types = [!pk.ref<8x128xf32, #pk.memory_space<vmem>>]
  %0 = pk.pallas_call "scale"(%x) grid = affine_map<()[s0] -> (s0 ceildiv 8)> {
      in_specs = [#pk.block_spec<[8, element 128 pad 2 2], computed, memory_space = vmem>],
      out_specs = [#pk.block_spec<[squeezed, 128], affine_map<(d0)[s0] -> (d0, 0)>>],
      out_shapes = [affine_map<()[s0] -> (s0, 128)>],
      scratch_types = [!pk.ref<8x128xf32, #pk.memory_space<vmem>>],
      input_output_aliases = array<i64: 0, 0>,
      compiler_params = {tpu = {dimension_semantics = ["parallel"]}}}
      : (tensor<?x128xbf16>) -> tensor<?x128xbf16>
  kernel {
  // CHECK: ^bb0(%{{.*}}: !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, %{{.*}}: !pk.ref<128xbf16>, %{{.*}}: !pk.ref<8x128xf32, #pk.memory_space<vmem>>):
  ^bb0(%in: !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, %out: !pk.ref<128xbf16>, %acc: !pk.ref<8x128xf32, #pk.memory_space<vmem>>):
    %i = pk.program_id 0 : i32
    %n = pk.num_programs 0 : i32
    %s = pk.symbolic_size affine_map<()[s0] -> (s0 floordiv 2)> : i32
    %idx = arith.index_cast %i : i32 to index
    // CHECK: pk.load %{{.*}}[%{{.*}}, 0] sizes [1, 128] strides [1, 1] squeeze [0]
    %row = pk.load %in[%idx, 0] sizes [1, 128] strides [1, 1] squeeze [0] : !pk.ref<8x128xbf16, #pk.memory_space<vmem>> -> tensor<128xbf16>
    %w = arith.extf %row : tensor<128xbf16> to tensor<128xf32>
    %t = pk.reshape %w : tensor<128xf32> -> tensor<1x128xf32>
    %b = pk.broadcast_in_dim %t dims [0, 1] : tensor<1x128xf32> -> tensor<8x128xf32>
    %d = pk.dot %b, %b {transpose_rhs} : tensor<8x128xf32>, tensor<8x128xf32> -> tensor<8x8xf32>
    %m = pk.reduce <maxf> %d axes [1] : tensor<8x8xf32> -> tensor<8xf32>
    %a = pk.arg_reduce <maxf> %d axis 0 : tensor<8x8xf32> -> tensor<8xi32>
    %io = pk.iota 1 : tensor<4x8xi32>
    %tr = pk.transpose %io perm [1, 0] : tensor<4x8xi32> -> tensor<8x4xi32>
    %sl = pk.slice %tr start [0, 1] limit [8, 4] stride [2, 1] : tensor<8x4xi32> -> tensor<4x3xi32>
    %cat = pk.concatenate %sl, %sl dim 0 : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<8x3xi32>
    // CHECK: pk.butterfly %{{.*}} dim 0 distance 2 : tensor<8x3xi32>
    %bf = pk.butterfly %cat dim 0 distance 2 : tensor<8x3xi32>
    // CHECK: pk.gather %{{.*}}[%{{.*}}, %{{.*}}] mask %{{.*}} : tensor<8x4xi1> other %{{.*}} : bf16 : !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, tensor<8x4xi32>, tensor<8x4xi32> -> tensor<8x4xbf16>
    %mask = arith.cmpi slt, %tr, %tr : tensor<8x4xi32>
    %zero = arith.constant 0.0 : bf16
    %g = pk.gather %in[%tr, %tr] mask %mask : tensor<8x4xi1> other %zero : bf16 : !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, tensor<8x4xi32>, tensor<8x4xi32> -> tensor<8x4xbf16>
    // CHECK: pk.scatter %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<8x4xbf16>, !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, tensor<8x4xi32>, tensor<8x4xi32>
    pk.scatter %g, %in[%tr, %tr] : tensor<8x4xbf16>, !pk.ref<8x128xbf16, #pk.memory_space<vmem>>, tensor<8x4xi32>, tensor<8x4xi32>
    pk.store %b, %acc[0, 0] sizes [8, 128] strides [1, 1] squeeze [] : tensor<8x128xf32>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>
    pk.yield
  } index_map {
  ^bb0(%g: i32):
    %c0 = arith.constant 0 : i32
    pk.yield %g, %c0 : i32, i32
  }
  // CHECK: return %0
  pk.return %0 : tensor<?x128xbf16>
}

// Scalar prefetch: the first input has no block spec; the kernel and the
// index_map region receive it as a whole SMEM Ref.
// CHECK-LABEL: pk.export @prefetch
// CHECK: num_scalar_prefetch = 1
// CHECK: ^bb0(%{{.*}}: !pk.ref<4xi32, #pk.memory_space<smem>>, %{{.*}}: !pk.ref<8x128xf32>, %{{.*}}: !pk.ref<8x128xf32>):
// CHECK: index_map
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: !pk.ref<4xi32, #pk.memory_space<smem>>):
pk.export @prefetch(%rows: tensor<4xi32> {pk.name = "rows", pk.shape = affine_map<() -> (4)>},
                    %x: tensor<64x128xf32> {pk.name = "x", pk.shape = affine_map<() -> (64, 128)>})
    -> (tensor<32x128xf32> {pk.shape = affine_map<() -> (32, 128)>}) attributes {symbols = []} {
  %0 = pk.pallas_call "k"(%rows, %x) grid = affine_map<() -> (4)> {
      in_specs = [#pk.block_spec<[8, 128], computed>],
      out_specs = [#pk.block_spec<[8, 128], affine_map<(d0) -> (d0, 0)>>],
      out_shapes = [affine_map<() -> (32, 128)>], scratch_types = [],
      input_output_aliases = array<i64>, num_scalar_prefetch = 1}
      : (tensor<4xi32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  kernel {
  ^bb0(%r: !pk.ref<4xi32, #pk.memory_space<smem>>, %a: !pk.ref<8x128xf32>, %o: !pk.ref<8x128xf32>):
    pk.yield
  } index_map {
  ^bb0(%i: i32, %r: !pk.ref<4xi32, #pk.memory_space<smem>>):
    %idx = arith.index_cast %i : i32 to index
    %row = pk.load %r[%idx] sizes [1] strides [1] squeeze [0] : !pk.ref<4xi32, #pk.memory_space<smem>> -> i32
    %c0 = arith.constant 0 : i32
    pk.yield %row, %c0 : i32, i32
  }
  pk.return %0 : tensor<32x128xf32>
}

// A grid size computed from data: the 0-d array is the grid's symbol after
// the export's (s1 here); index maps and output shapes take only s0.
// CHECK-LABEL: pk.export @from_data
// CHECK: pallas_call "k"(%x) bounds(%n : tensor<i32>) grid = #{{[a-z0-9]+}}
pk.export @from_data(%x: tensor<?x128xf32> {pk.name = "x", pk.shape = affine_map<()[s0] -> (s0, 128)>},
                     %n: tensor<i32> {pk.name = "n", pk.shape = affine_map<()[s0] -> ()>})
    -> (tensor<?x128xf32> {pk.shape = affine_map<()[s0] -> (s0, 128)>})
    attributes {symbols = ["N"]} {
  %0 = pk.pallas_call "k"(%x) bounds(%n : tensor<i32>) grid = affine_map<()[s0, s1] -> (s0 ceildiv 8, s1)> {
      in_specs = [#pk.block_spec<[8, 128], affine_map<(d0, d1)[s0] -> (d0, 0)>>],
      out_specs = [#pk.block_spec<[8, 128], affine_map<(d0, d1)[s0] -> (d0, 0)>>],
      out_shapes = [affine_map<()[s0] -> (s0, 128)>], scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  kernel {
  ^bb0(%in: !pk.ref<8x128xf32>, %out: !pk.ref<8x128xf32>):
    %steps = pk.num_programs 1 : i32
    pk.yield
  }
  pk.return %0 : tensor<?x128xf32>
}
