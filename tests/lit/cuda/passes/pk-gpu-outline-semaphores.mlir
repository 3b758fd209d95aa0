// RUN: %pk-opt --pk-gpu-outline %s | FileCheck %s
// Semaphores of a Mosaic GPU kernel: pl.get_global's become views of one
// i32 buffer (a scalar at word 0, an array of two after it), an input the
// kernel gets from a generated kernel that zeroes it and runs first; a
// scoped one is a zeroed array in shared memory. The signals and waits
// stay pk ops until the distribute stage.

// CHECK-LABEL: gpu.func @handoff_body_semaphores(%{{.*}}: !llvm.ptr<1>) kernel
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<3xi32>
// CHECK: pk.store %[[ZERO]]

// CHECK-LABEL: gpu.func @handoff_body(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %[[SEMS:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK: %[[BUF:.*]] = pkgpu.global_ref %[[SEMS]] {{.*}} -> !pk.ref<3xi32, #pk.memory_space<gmem>>
// CHECK: %[[TURN:.*]] = pkgpu.semaphore_view %[[BUF]] offset 0 : !pk.ref<3xi32, #pk.memory_space<gmem>> -> !pk.semaphore<[]>
// CHECK: %[[READY:.*]] = pkgpu.semaphore_view %[[BUF]] offset 1 : !pk.ref<3xi32, #pk.memory_space<gmem>> -> !pk.semaphore<[2]>
// CHECK: pk.semaphore_wait %[[TURN]], %{{.*}} no_decrement
// CHECK: pk.semaphore_signal %[[READY]][%{{.*}}], %{{.*}}
// CHECK: %[[LOCAL:.*]] = pkgpu.semaphore_alloc offset 0 : !pk.semaphore<[3]>
// CHECK: pk.semaphore_signal %[[LOCAL]][%{{.*}}], %{{.*}}
// CHECK: pk.semaphore_wait %[[LOCAL]][%{{.*}}], %{{.*}}

#map = affine_map<() -> (128)>
module {
  pk.export @handoff(%x: tensor<128xf32> {pk.name = "x", pk.shape = #map}) -> (tensor<128xf32> {pk.shape = #map}) attributes {symbols = []} {
    %0 = mesh_kernel "body"(%x) grid [2] ["b"] cluster [] [] threads 1 {input_output_aliases = array<i64>} : (tensor<128xf32>) -> tensor<128xf32> {
    ^bb0(%x_ref: !pk.ref<128xf32, #pk.memory_space<gmem>>, %o_ref: !pk.ref<128xf32, #pk.memory_space<gmem>>):
      %turn = pk.get_global : !pk.semaphore<[]>
      %ready = pk.get_global : !pk.semaphore<[2]>
      %b = pk.axis_index "b" : i32
      %bi = arith.index_cast %b : i32 to index
      %one = arith.constant 1 : i32
      pk.semaphore_wait %turn, %b no_decrement : !pk.semaphore<[]>
      pk.semaphore_signal %ready[%bi], %one : !pk.semaphore<[2]>
      pk.run_scoped {
      ^bb0(%local: !pk.semaphore<[3]>):
        pk.semaphore_signal %local[%bi], %one : !pk.semaphore<[3]>
        pk.semaphore_wait %local[%bi], %one : !pk.semaphore<[3]>
        pk.scope_yield
      }
      pk.scope_yield
    }
    return %0 : tensor<128xf32>
  }
}
