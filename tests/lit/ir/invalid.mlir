// The verifiers reject malformed pk IR with a message naming the problem.
// RUN: %pk-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{Ref dimensions must be positive}}
func.func private @f(!pk.ref<0xf32>)

// -----

pk.export @e(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  // expected-error @+1 {{kernel takes 1 Refs but the call has 2 operands}}
  %0 = pk.pallas_call "k"(%x) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (8)>], scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<8xf32>) -> tensor<8xf32>
  kernel {
  ^bb0(%a: !pk.ref<8xf32>):
    pk.yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

pk.export @e(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  %0 = pk.pallas_call "k"(%x) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (8)>], scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<8xf32>) -> tensor<8xf32>
  kernel {
  ^bb0(%a: !pk.ref<8xf32>, %o: !pk.ref<8xf32>):
    // expected-error @+1 {{window [4, size 8, stride 1] is out of bounds for axis 0 of size 8}}
    %v = pk.load %a[4] sizes [8] strides [1] squeeze [] : !pk.ref<8xf32> -> tensor<8xf32>
    pk.yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{contracting dimensions differ: 3 vs 4}}
  %c = pk.dot %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @f(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{unsigned_operands needs integer operands}}
  %c = pk.dot %a, %a {unsigned_operands} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{reduction kind 'maxsi' does not apply to 'f32'}}
  %c = pk.reduce <maxsi> %a axes [1] : tensor<4x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{operand axis 0 of size 4 cannot broadcast to size 5}}
  %c = pk.broadcast_in_dim %a dims [0, 1] : tensor<4x3xf32> -> tensor<5x3xf32>
  return
}

// -----

// expected-error @+1 {{symbol 'M' is not a dimension of any argument, so it cannot be bound}}
pk.export @e(%x: tensor<?xf32> {pk.name = "x", pk.shape = affine_map<()[s0, s1] -> (s0)>})
    attributes {symbols = ["N", "M"]} {
  pk.return
}

// -----

// expected-error @+1 {{index map returns 1 indices for a block of rank 2}}
func.func private @g() attributes {spec = #pk.block_spec<[squeezed, 8], affine_map<(d0) -> (0)>>}

// -----

func.func @f(%r: !pk.ref<8x4xf32>, %i: tensor<6xi32>) {
  // expected-error @+1 {{needs one index tensor per Ref axis (rank 2), got 1}}
  %v = pk.gather %r[%i] : !pk.ref<8x4xf32>, tensor<6xi32> -> tensor<6xf32>
  return
}

// -----

func.func @f(%r: !pk.ref<8x4xf32>, %i: tensor<6xi32>, %j: tensor<5xi32>) {
  // expected-error @+1 {{index tensors must be i32 of the values' shape (6), got 'tensor<5xi32>'}}
  %v = pk.gather %r[%i, %j] : !pk.ref<8x4xf32>, tensor<6xi32>, tensor<5xi32> -> tensor<6xf32>
  return
}

// -----

func.func @f(%r: !pk.ref<8xf32>, %i: tensor<6xi32>, %o: f32) {
  // expected-error @+1 {{'other' needs a mask}}
  %v = pk.gather %r[%i] other %o : f32 : !pk.ref<8xf32>, tensor<6xi32> -> tensor<6xf32>
  return
}

// -----

func.func @f(%r: !pk.ref<8xf32>, %i: tensor<6xi32>, %v: tensor<6xi32>) {
  // expected-error @+1 {{stored element type must be the Ref's, signless}}
  pk.scatter %v, %r[%i] : tensor<6xi32>, !pk.ref<8xf32>, tensor<6xi32>
  return
}

// -----

pk.export @e(%r: tensor<4xi32> {pk.name = "r", pk.shape = affine_map<() -> (4)>},
             %x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  // expected-error @+1 {{has 1 inputs after the scalar-prefetch ones but 2 in_specs}}
  %0 = pk.pallas_call "k"(%r, %x) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[8], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (8)>], scratch_types = [], input_output_aliases = array<i64>,
      num_scalar_prefetch = 1}
      : (tensor<4xi32>, tensor<8xf32>) -> tensor<8xf32>
  kernel {
  ^bb0(%a: !pk.ref<4xi32>, %b: !pk.ref<8xf32>, %o: !pk.ref<8xf32>):
    pk.yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

pk.export @e(%r: tensor<4xi32> {pk.name = "r", pk.shape = affine_map<() -> (4)>},
             %x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  // expected-error @+1 {{kernel argument 0 has type '!pk.ref<2xi32>' but scalar-prefetch operand 0 is 'tensor<4xi32>'}}
  %0 = pk.pallas_call "k"(%r, %x) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[8], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (8)>], scratch_types = [], input_output_aliases = array<i64>,
      num_scalar_prefetch = 1}
      : (tensor<4xi32>, tensor<8xf32>) -> tensor<8xf32>
  kernel {
  ^bb0(%a: !pk.ref<2xi32>, %b: !pk.ref<8xf32>, %o: !pk.ref<8xf32>):
    pk.yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

pk.export @e(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>},
             %n: tensor<i32> {pk.name = "n", pk.shape = affine_map<() -> ()>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  // expected-error @+1 {{grid affine_map<() -> (4)> must take no dims, the export's 0 symbols and one per grid bound (1)}}
  %0 = pk.pallas_call "k"(%x) bounds(%n : tensor<i32>) grid = affine_map<() -> (4)> {
      in_specs = [#pk.block_spec<[8], affine_map<(d0) -> (0)>>],
      out_specs = [#pk.block_spec<[8], affine_map<(d0) -> (0)>>],
      out_shapes = [affine_map<() -> (8)>], scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<8xf32>) -> tensor<8xf32>
  kernel {
  ^bb0(%a: !pk.ref<8xf32>, %b: !pk.ref<8xf32>):
    pk.yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

func.func @bitcast_same_width(%x: tensor<8x128xf32>) -> tensor<8x128xi32> {
  // expected-error @+1 {{is between element widths; 'f32' and 'i32' are both 32 bits (use arith.bitcast)}}
  %w = pk.bitcast %x : tensor<8x128xf32> -> tensor<8x128xi32>
  return %w : tensor<8x128xi32>
}

// -----

func.func @bitcast_rows(%x: tensor<3x128xbf16>) -> tensor<1x128xi32> {
  // expected-error @+1 {{cannot pack 3 rows of 16-bit elements into whole 32-bit rows}}
  %w = pk.bitcast %x : tensor<3x128xbf16> -> tensor<1x128xi32>
  return %w : tensor<1x128xi32>
}

// -----

func.func @bitcast_shape(%x: tensor<16x128xbf16>) -> tensor<16x64xi32> {
  // expected-error @+1 {{result shape must be 'tensor<8x128xi32>'}}
  %w = pk.bitcast %x : tensor<16x128xbf16> -> tensor<16x64xi32>
  return %w : tensor<16x64xi32>
}

// -----

func.func @butterfly_distance(%x: tensor<8x12xf32>) -> tensor<8x12xf32> {
  // expected-error @+1 {{distance must be a power of two}}
  %0 = pk.butterfly %x dim 1 distance 3 : tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}

// -----

func.func @butterfly_pairs(%x: tensor<8x12xf32>) -> tensor<8x12xf32> {
  // expected-error @+1 {{axis 1 (12) must be a multiple of twice the distance}}
  %0 = pk.butterfly %x dim 1 distance 4 : tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}

// -----

func.func @butterfly_axis(%x: tensor<8x12xf32>) -> tensor<8x12xf32> {
  // expected-error @+1 {{dimension out of range}}
  %0 = pk.butterfly %x dim 2 distance 1 : tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}
