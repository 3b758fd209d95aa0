// The verifiers of the explicit-copy ops and of !pk.semaphore kinds.
// RUN: %pk-opt %s -split-input-file -verify-diagnostics

func.func @shape(%a: !pk.ref<8x128xf32, #pk.memory_space<any>>, %b: !pk.ref<4x128xf32, #pk.memory_space<vmem>>,
                 %s: !pk.semaphore<[], dma>) {
  // expected-error @+1 {{copies between Refs of the same shape and element type}}
  pk.dma_start %a, %b, %s : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<4x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[], dma>
  return
}

// -----

func.func @regular(%a: !pk.ref<8x128xf32, #pk.memory_space<any>>, %b: !pk.ref<8x128xf32, #pk.memory_space<vmem>>,
                   %s: !pk.semaphore<[]>) {
  // expected-error @+1 {{completes on a DMA semaphore}}
  pk.dma_wait %a, %b, %s : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[]>
  return
}

// -----

func.func @unindexed(%a: !pk.ref<8x128xf32, #pk.memory_space<any>>, %b: !pk.ref<8x128xf32, #pk.memory_space<vmem>>,
                     %s: !pk.semaphore<[2], dma>) {
  // expected-error @+1 {{needs one semaphore of the 2 in the array}}
  pk.dma_start %a, %b, %s : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
  return
}

// -----

func.func @gpu(%a: !pk.ref<8x128xf32, #pk.memory_space<any>>, %b: !pk.ref<8x128xf32, #pk.memory_space<shared>>,
               %s: !pk.semaphore<[], dma>) {
  // expected-error @+1 {{copies between TPU memories}}
  pk.dma_start %a, %b, %s : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<shared>>, !pk.semaphore<[], dma>
  return
}

// -----

func.func @priority(%a: !pk.ref<8x128xf32, #pk.memory_space<any>>, %b: !pk.ref<8x128xf32, #pk.memory_space<vmem>>,
                    %s: !pk.semaphore<[], dma>) {
  // expected-error @+1 {{priority must be 0 or 1, got 3}}
  pk.dma_start %a, %b, %s {priority = 3 : i32} : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[], dma>
  return
}

// -----

func.func @signal_dma(%s: !pk.semaphore<[], dma>, %n: i32) {
  // expected-error @+1 {{signals regular semaphores}}
  pk.semaphore_signal %s, %n : !pk.semaphore<[], dma>
  return
}

// -----

func.func @wait_dma(%s: !pk.semaphore<[], dma>, %n: i32) {
  // expected-error @+1 {{waits on regular semaphores; wait for a copy with pk.dma_wait}}
  pk.semaphore_wait %s, %n : !pk.semaphore<[], dma>
  return
}

// -----

func.func @read(%s: !pk.semaphore<[2, 2]>, %i: index) {
  // expected-error @+1 {{takes 2 indices for a semaphore array of rank 2, got 1}}
  %0 = pk.semaphore_read %s[%i] : !pk.semaphore<[2, 2]>
  return
}

// -----

// expected-error @+1 {{expected 'barrier' or 'dma'}}
func.func @kind(%s: !pk.semaphore<[], counting>) {
  return
}

// -----

// A bounded axis yields a start and a size from the index map.
func.func @bounded_yields_two(%x: !pk.ref<24x128xf32, #pk.memory_space<any>>) {
  // expected-error @+1 {{index_map must yield 3 i32 block indices (a start and a size for each bounded axis)}}
  pk.pipeline(%x) grid [3] max_concurrent_steps 1
      {delay_release = array<i64: 0>, in_specs = [#pk.block_spec<[bounded 8, 128], computed, memory_space = vmem>],
       out_specs = []}
      : (!pk.ref<24x128xf32, #pk.memory_space<any>>)
    index_map {
    ^bb0(%i: i32):
      %c0 = arith.constant 0 : i32
      pk.scope_yield %i, %c0 : i32, i32
    } body {
    ^bb0(%i: i32, %blk: !pk.ref<8x128xf32, #pk.memory_space<vmem>>):
      pk.scope_yield
    }
  return
}

// -----

// Bounded block dimensions are for TPU pipelines only.
func.func @bounded_on_gpu(%x: !pk.ref<24x128xf32, #pk.memory_space<gmem>>) {
  // expected-error @+1 {{bounded block dimensions are for TPU pipelines}}
  pk.pipeline(%x) grid [3] max_concurrent_steps 1
      {delay_release = array<i64: 0>, in_specs = [#pk.block_spec<[bounded 8, 128], computed, memory_space = shared>],
       out_specs = []}
      : (!pk.ref<24x128xf32, #pk.memory_space<gmem>>)
    index_map {
    ^bb0(%i: i32):
      %c0 = arith.constant 0 : i32
      pk.scope_yield %i, %c0, %c0 : i32, i32, i32
    } body {
    ^bb0(%i: i32, %blk: !pk.ref<8x128xf32, #pk.memory_space<shared>>):
      pk.scope_yield
    }
  return
}

// -----

// expected-error @+1 {{bounded block dimensions take their start and size from a computed index map}}
func.func private @bounded_affine() attributes {spec = #pk.block_spec<[bounded 8], affine_map<(d0) -> (d0)>>}

// -----

// A ragged view (a size known only at run time) is only a copy's end.
func.func @ragged_load(%x: !pk.ref<16x128xf32, #pk.memory_space<vmem>>, %n: index) -> tensor<8x128xf32> {
  // expected-error @+1 {{has a dynamic size, so its only uses are async copies (pk.dma_start, pk.dma_wait), not 'pk.load'}}
  %v = pk.ref_view %x[0, 0] sizes [%n, 128] strides [1, 1] squeeze []
      : !pk.ref<16x128xf32, #pk.memory_space<vmem>> -> !pk.ref<?x128xf32, #pk.memory_space<vmem>>
  %l = pk.load %v[0, 0] sizes [8, 128] strides [1, 1] squeeze [] : !pk.ref<?x128xf32, #pk.memory_space<vmem>> -> tensor<8x128xf32>
  return %l : tensor<8x128xf32>
}

// -----

func.func @ragged_one_side(%a: !pk.ref<16x128xf32, #pk.memory_space<any>>, %b: !pk.ref<8x128xf32, #pk.memory_space<vmem>>,
                           %s: !pk.semaphore<[], dma>, %n: index) {
  %v = pk.ref_view %a[0, 0] sizes [%n, 128] strides [1, 1] squeeze []
      : !pk.ref<16x128xf32, #pk.memory_space<any>> -> !pk.ref<?x128xf32, #pk.memory_space<any>>
  // expected-error @+1 {{copies between Refs of the same shape and element type}}
  pk.dma_start %v, %b, %s : !pk.ref<?x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[], dma>
  return
}

// -----

func.func @ragged_markers(%a: !pk.ref<16x128xf32, #pk.memory_space<any>>, %n: index) {
  // expected-error @+1 {{has 0 dynamic sizes but 1 dynamic markers}}
  %v = "pk.ref_view"(%a) <{static_offsets = array<i64: 0, 0>, sizes = array<i64: -9223372036854775808, 128>, strides = array<i64: 1, 1>, squeeze = array<i64>, operandSegmentSizes = array<i32: 1, 0, 0>}>
      : (!pk.ref<16x128xf32, #pk.memory_space<any>>) -> !pk.ref<?x128xf32, #pk.memory_space<any>>
  return
}

// -----

func.func @ragged_strided(%a: !pk.ref<16x128xf32, #pk.memory_space<any>>, %n: index) {
  // expected-error @+1 {{a dynamic size needs stride 1 (axis 0)}}
  %v = pk.ref_view %a[0, 0] sizes [%n, 128] strides [2, 1] squeeze []
      : !pk.ref<16x128xf32, #pk.memory_space<any>> -> !pk.ref<?x128xf32, #pk.memory_space<any>>
  return
}
