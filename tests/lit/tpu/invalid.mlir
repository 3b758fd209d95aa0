// The verifiers of pkc's tpu ops reject what the lowering must never
// build, with a message naming the problem.
// RUN: %pk-opt %s -split-input-file -verify-diagnostics

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<smem>>, %v: vector<8x128xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects a memref in VMEM}}
  tpu.vector_store %m[%c0, %c0], %v {strides = array<i32>} : memref<8x128xf32, #tpu.memory_space<smem>>, vector<8x128xf32>,
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>, %v: vector<8x128xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects 2 indices, got 1}}
  tpu.vector_store %m[%c0], %v {strides = array<i32>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>, %v: vector<8x128xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects empty strides}}
  tpu.vector_store %m[%c0, %c0], %v {strides = array<i32: 1, 1>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
  return
}

// -----

func.func @f(%m: memref<16x128xbf16, #tpu.memory_space<vmem>>, %v: vector<16x128xbf16>, %mask: vector<16x128xi1>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{masks only 32-bit stores}}
  tpu.vector_store %m[%c0, %c0], %v masked %mask {strides = array<i32>} : memref<16x128xbf16, #tpu.memory_space<vmem>>, vector<16x128xbf16>, vector<16x128xi1>
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>, %v: vector<8x128xf32>, %mask: vector<8x1xi1>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects an i1 mask of the value's shape}}
  tpu.vector_store %m[%c0, %c0], %v masked %mask {strides = array<i32>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>, vector<8x1xi1>
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects the vector's element type to be the memref's ('f32'), got 'i32'}}
  %v = tpu.strided_load %m[%c0, %c0] {strides = array<i32: 2, 1>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<4x128xi32>
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects one stride per memref dimension (2), got 1}}
  %v = tpu.strided_load %m[%c0, %c0] {strides = array<i32: 2>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<4x128xf32>
  return
}

// -----

func.func @f(%m: memref<8x128xf32, #tpu.memory_space<vmem>>, %v: vector<8x128xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects strides of at least 1, got 0}}
  tpu.strided_store %m[%c0, %c0], %v {strides = array<i32: 0, 1>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{dimension 2 is out of range}}
  %i = tpu.iota {dimensions = array<i32: 2>} : vector<8x128xi32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{lists dimension 0 twice}}
  %i = tpu.iota {dimensions = array<i32: 0, 0>} : vector<8x128xi32>
  return
}

// -----

func.func @f(%v: vector<8x128xf32>) {
  // expected-error @+1 {{result axis 0 has size 8 but operand axis 1 has size 128}}
  %t = tpu.transpose %v, [1, 0] : vector<8x128xf32> -> vector<8x128xf32>
  return
}

// -----

func.func @f(%v: vector<8x128xf32>) {
  // expected-error @+1 {{permutation is not a permutation of 0..1}}
  %t = tpu.transpose %v, [0, 0] : vector<8x128xf32> -> vector<8x128xf32>
  return
}

// -----

func.func @f(%a: vector<8x128xf32>, %b: vector<8x64xf32>) {
  // expected-error @+1 {{sources add up to 192 along dimension 1, the result has 256}}
  %c = tpu.concatenate %a, %b in 1 : vector<8x128xf32>, vector<8x64xf32> -> vector<8x256xf32>
  return
}

// -----

func.func @f(%a: vector<8x128xf32>, %b: vector<4x128xf32>) {
  // expected-error @+1 {{differs from the result off dimension 1}}
  %c = tpu.concatenate %a, %b in 1 : vector<8x128xf32>, vector<4x128xf32> -> vector<8x256xf32>
  return
}

// -----

func.func @f(%v: vector<8x128xf32>) {
  // expected-error @+1 {{expects the shape with rows packed, got 'vector<8x128xf32>' -> 'vector<8x128xbf16>'}}
  %b = tpu.bitcast %v : vector<8x128xf32> -> vector<8x128xbf16>
  return
}

// -----

func.func @f(%v: vector<3x128xbf16>) {
  // expected-error @+1 {{between bit widths needs rows that pack evenly}}
  %b = tpu.bitcast %v : vector<3x128xbf16> -> vector<1x128xi32>
  return
}

// -----

func.func @f(%a: vector<8x128xbf16>, %b: vector<128x128xbf16>) {
  %acc = arith.constant dense<0.0> : vector<8x128xbf16>
  // expected-error @+1 {{expects a 32-bit accumulator}}
  %r = tpu.matmul %a, %b, %acc {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<8x128xbf16>, vector<128x128xbf16>, vector<8x128xbf16> -> vector<8x128xbf16>
  return
}

// -----

func.func @f(%a: vector<8x128xf32>, %b: vector<64x128xf32>) {
  %acc = arith.constant dense<0.0> : vector<8x128xf32>
  // expected-error @+1 {{contracts lhs axis 1 (size 128) with rhs axis 0 (size 64)}}
  %r = tpu.matmul %a, %b, %acc {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<8x128xf32>, vector<64x128xf32>, vector<8x128xf32> -> vector<8x128xf32>
  return
}

// -----

func.func @f(%a: vector<8x128xf32>, %b: vector<128x64xf32>) {
  %acc = arith.constant dense<0.0> : vector<8x128xf32>
  // expected-error @+1 {{result axis 1 has size 128, its operand axis has 64}}
  %r = tpu.matmul %a, %b, %acc {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<8x128xf32>, vector<128x64xf32>, vector<8x128xf32> -> vector<8x128xf32>
  return
}

// -----

func.func @f(%v: vector<8x128xf32>) {
  // expected-error @+1 {{expects kind arg_max or arg_min}}
  %r = tpu.reduce_index %v {axis = 1 : i32, kind = #tpu.reduction_kind<sum>} : vector<8x128xf32> -> vector<8xi32>
  return
}

// -----

func.func @f(%v: vector<8x128xf32>) {
  // expected-error @+1 {{expects the input's shape without axis 0}}
  %r = tpu.reduce_index %v {axis = 0 : i32, kind = #tpu.reduction_kind<arg_max>} : vector<8x128xf32> -> vector<8xi32>
  return
}

// -----

func.func @f(%m: memref<24x128xf32, #tpu.memory_space<any>>, %i: i32) {
  // expected-error @+1 {{expects one dynamic size per dynamic dimension of the result (1), got 0}}
  %s = tpu.memref_slice %m[%i, %i] : memref<24x128xf32, #tpu.memory_space<any>> -> memref<?x128xf32, #tpu.memory_space<any>>
  return
}
