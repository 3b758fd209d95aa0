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
