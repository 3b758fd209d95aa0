// The subset of Mosaic's tpu dialect that pkc defines prints and parses
// back to the same IR, in Mosaic's own syntax (the text JAX reads).
// RUN: %pk-opt %s | %pk-opt | FileCheck %s

// CHECK-LABEL: module @kernel attributes {stable_mosaic.version = 11 : i64}
module @kernel attributes {stable_mosaic.version = 11 : i64} {
  // CHECK: func.func @k(%{{.*}}: i32, %{{.*}}: memref<2xi32, #tpu.memory_space<smem>>, %{{.*}}: memref<16x256xf32, #tpu.memory_space<vmem>>, %{{.*}}: memref<8x128xbf16, #tpu.memory_space<any>>, %{{.*}}: memref<16x256xf32, #tpu.memory_space<vmem>>)
  // CHECK-SAME: dimension_semantics = [#tpu.dimension_semantics<parallel>]
  // CHECK-SAME: iteration_bounds = array<i64: -9223372036854775808>
  // CHECK-SAME: tpu.core_type = #tpu.core_type<tc>
  // CHECK-SAME: window_params = [{pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_0, window_bounds = array<i64: 16, 256>, window_kind = #tpu.element_window<[0, 0], [0, 128]>}, {}, {transform_indices = @transform_2, window_bounds = array<i64: 16, 256>}]
  func.func @k(%i: i32, %syms: memref<2xi32, #tpu.memory_space<smem>>,
               %x: memref<16x256xf32, #tpu.memory_space<vmem>>,
               %raw: memref<8x128xbf16, #tpu.memory_space<any>>,
               %o: memref<16x256xf32, #tpu.memory_space<vmem>>)
      attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>],
                  iteration_bounds = array<i64: -9223372036854775808>,
                  scalar_prefetch = 1 : i64, scratch_operands = 0 : i64,
                  tpu.core_type = #tpu.core_type<tc>,
                  window_params = [{pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_0, window_bounds = array<i64: 16, 256>, window_kind = #tpu.element_window<[0, 0], [0, 128]>},
                                   {},
                                   {transform_indices = @transform_2, window_bounds = array<i64: 16, 256>}]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // CHECK: tpu.strided_load %{{.*}}[%{{.*}}, %{{.*}}] {strides = array<i32: 2, 1>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<8x256xf32>
    %even = tpu.strided_load %x[%c0, %c0] {strides = array<i32: 2, 1>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<8x256xf32>
    // CHECK: tpu.strided_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {strides = array<i32: 2, 1>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<8x256xf32>
    tpu.strided_store %o[%c1, %c0], %even {strides = array<i32: 2, 1>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<8x256xf32>
    // CHECK: %[[IOTA:.*]] = tpu.iota {dimensions = array<i32: 1>} : vector<8x256xi32>
    %iota = tpu.iota {dimensions = array<i32: 1>} : vector<8x256xi32>
    // CHECK: tpu.bitcast %[[IOTA]] : vector<8x256xi32> -> vector<8x256xf32>
    %bits = tpu.bitcast %iota : vector<8x256xi32> -> vector<8x256xf32>
    // CHECK: tpu.transpose %{{.*}}, [1, 0] : vector<8x256xf32> -> vector<256x8xf32>
    %t = tpu.transpose %bits, [1, 0] : vector<8x256xf32> -> vector<256x8xf32>
    %zero = arith.constant dense<0.0> : vector<8x8xf32>
    // CHECK: tpu.matmul %{{.*}}, %{{.*}}, %{{.*}} {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, precision = #tpu.contract_precision<fp32>, transpose_lhs_hint = false} : vector<8x256xf32>, vector<256x8xf32>, vector<8x8xf32> -> vector<8x8xf32>
    %p = tpu.matmul %bits, %t, %zero {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, precision = #tpu.contract_precision<fp32>, transpose_lhs_hint = false} : vector<8x256xf32>, vector<256x8xf32>, vector<8x8xf32> -> vector<8x8xf32>
    // CHECK: tpu.reduce_index %{{.*}} {axis = 1 : i32, kind = #tpu.reduction_kind<arg_min>} : vector<8x8xf32> -> vector<8xi32>
    %arg = tpu.reduce_index %p {axis = 1 : i32, kind = #tpu.reduction_kind<arg_min>} : vector<8x8xf32> -> vector<8xi32>
    // CHECK: tpu.concatenate %{{.*}}, %{{.*}} in 0 : vector<8x256xf32>, vector<8x256xf32> -> vector<16x256xf32>
    %both = tpu.concatenate %bits, %even in 0 : vector<8x256xf32>, vector<8x256xf32> -> vector<16x256xf32>
    %limit = arith.constant dense<100> : vector<16x256xi32>
    %wide = tpu.iota {dimensions = array<i32: 0, 1>} : vector<16x256xi32>
    %mask = arith.cmpi slt, %wide, %limit : vector<16x256xi32>
    // CHECK: tpu.vector_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} masked %{{.*}} {strides = array<i32>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<16x256xf32>, vector<16x256xi1>
    tpu.vector_store %o[%c0, %c0], %both masked %mask {strides = array<i32>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<16x256xf32>, vector<16x256xi1>
    // CHECK: tpu.vector_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {strides = array<i32>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<16x256xf32>,
    tpu.vector_store %o[%c0, %c0], %both {strides = array<i32>} : memref<16x256xf32, #tpu.memory_space<vmem>>, vector<16x256xf32>,
    // CHECK: tpu.iteration_bound 0 : i32
    %n = tpu.iteration_bound 0 : i32
    return
  }
  // CHECK: func.func @transform_0(%{{.*}}: i32, %{{.*}}: memref<2xi32, #tpu.memory_space<smem>>) -> (i32, i32)
  func.func @transform_0(%i: i32, %syms: memref<2xi32, #tpu.memory_space<smem>>) -> (i32, i32) {
    %c0 = arith.constant 0 : i32
    return %i, %c0 : i32, i32
  }
  func.func @transform_2(%i: i32, %syms: memref<2xi32, #tpu.memory_space<smem>>) -> (i32, i32) {
    %c0 = arith.constant 0 : i32
    return %i, %c0 : i32, i32
  }
}

// Mosaic's memory space may name a core type; pkc never sets it.
// CHECK: func.func private @core(memref<8xf32, #tpu.memory_space<vmem, sc_vector_subcore>>)
func.func private @core(memref<8xf32, #tpu.memory_space<vmem, sc_vector_subcore>>)
