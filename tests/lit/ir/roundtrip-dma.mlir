// The explicit-copy ops and semaphore kinds print and parse back to the same IR.
// RUN: %pk-opt %s | %pk-opt | FileCheck %s

// CHECK-LABEL: func.func @copies
// CHECK-SAME: %{{.*}}: !pk.semaphore<[2], dma>, %{{.*}}: !pk.semaphore<[]>, %{{.*}}: !pk.semaphore<[4], barrier>
func.func @copies(%x: !pk.ref<16x128xf32, #pk.memory_space<any>>, %buf: !pk.ref<2x8x128xf32, #pk.memory_space<vmem>>,
                  %sems: !pk.semaphore<[2], dma>, %count: !pk.semaphore<[]>, %bars: !pk.semaphore<[4], barrier>,
                  %i: index, %n: i32) -> i32 {
  %src = pk.ref_view %x[%i, 0] sizes [8, 128] strides [1, 1] squeeze []
      : !pk.ref<16x128xf32, #pk.memory_space<any>> -> !pk.ref<8x128xf32, #pk.memory_space<any>>
  %dst = pk.ref_view %buf[%i, 0, 0] sizes [1, 8, 128] strides [1, 1, 1] squeeze [0]
      : !pk.ref<2x8x128xf32, #pk.memory_space<vmem>> -> !pk.ref<8x128xf32, #pk.memory_space<vmem>>
  // CHECK: pk.dma_start %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}] {priority = 1 : i32} : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
  pk.dma_start %src, %dst, %sems[%i] {priority = 1 : i32}
      : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
  // CHECK: pk.dma_wait %{{.*}}, %{{.*}}, %{{.*}}[%{{.*}}] : !pk.ref<8x128xf32, #pk.memory_space<any>>
  pk.dma_wait %src, %dst, %sems[%i]
      : !pk.ref<8x128xf32, #pk.memory_space<any>>, !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
  // CHECK: pk.semaphore_signal %{{.*}}, %{{.*}} : !pk.semaphore<[]>
  pk.semaphore_signal %count, %n : !pk.semaphore<[]>
  // CHECK: %[[R:.*]] = pk.semaphore_read %{{.*}}[%{{.*}}] : !pk.semaphore<[2], dma>
  %r = pk.semaphore_read %sems[%i] : !pk.semaphore<[2], dma>
  // CHECK: pk.semaphore_wait %{{.*}}, %{{.*}} : !pk.semaphore<[]>
  pk.semaphore_wait %count, %n : !pk.semaphore<[]>
  return %r : i32
}

// A ragged copy: views of a size known only at run time (`?`).
// CHECK-LABEL: func.func @ragged
func.func @ragged(%x: !pk.ref<2x16x128xf32, #pk.memory_space<any>>, %buf: !pk.ref<16x128xf32, #pk.memory_space<vmem>>,
                  %sem: !pk.semaphore<[], dma>, %b: index, %s: index, %n: index) {
  // CHECK: pk.ref_view %{{.*}}[%{{.*}}, %{{.*}}, 0] sizes [1, %{{.*}}, 128] strides [1, 1, 1] squeeze [0]
  // CHECK-SAME: -> !pk.ref<?x128xf32, #pk.memory_space<any>>
  %src = pk.ref_view %x[%b, %s, 0] sizes [1, %n, 128] strides [1, 1, 1] squeeze [0]
      : !pk.ref<2x16x128xf32, #pk.memory_space<any>> -> !pk.ref<?x128xf32, #pk.memory_space<any>>
  %dst = pk.ref_view %buf[0, 0] sizes [%n, 128] strides [1, 1] squeeze []
      : !pk.ref<16x128xf32, #pk.memory_space<vmem>> -> !pk.ref<?x128xf32, #pk.memory_space<vmem>>
  // CHECK: pk.dma_start {{.*}} : !pk.ref<?x128xf32, #pk.memory_space<any>>, !pk.ref<?x128xf32, #pk.memory_space<vmem>>
  pk.dma_start %src, %dst, %sem
      : !pk.ref<?x128xf32, #pk.memory_space<any>>, !pk.ref<?x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[], dma>
  pk.dma_wait %src, %dst, %sem
      : !pk.ref<?x128xf32, #pk.memory_space<any>>, !pk.ref<?x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[], dma>
  return
}
