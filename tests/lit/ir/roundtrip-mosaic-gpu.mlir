// The Mosaic GPU ops, types and attributes print and parse back to the same IR.
// RUN: %pk-opt %s | %pk-opt | FileCheck %s

// CHECK-LABEL: pk.export @matmul
pk.export @matmul(%a: tensor<128x128xf16> {pk.name = "a", pk.shape = affine_map<() -> (128, 128)>},
                  %b: tensor<128x128xf16> {pk.name = "b", pk.shape = affine_map<() -> (128, 128)>})
    -> (tensor<128x128xf16> {pk.shape = affine_map<() -> (128, 128)>})
    attributes {symbols = []} {
  // CHECK: mesh_kernel "matmul"(%a, %b) grid [2, 2] ["m", "n"] cluster [] [] threads 3 named "wg"
  %0 = pk.mesh_kernel "matmul"(%a, %b) grid [2, 2] ["m", "n"] cluster [] [] threads 3 named "wg"
      {input_output_aliases = array<i64>} : (tensor<128x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf16> {
  ^bb0(%a_gmem: !pk.ref<128x128xf16, #pk.memory_space<gmem>>, %b_gmem: !pk.ref<128x128xf16, #pk.memory_space<gmem>>,
       %o_gmem: !pk.ref<128x128xf16, #pk.memory_space<gmem>>):
    // CHECK: pk.axis_index "m" : i32
    %m = pk.axis_index "m" : i32
    %wg = pk.axis_index "wg" : i32
    %mi = arith.index_cast %m : i32 to index
    // CHECK: pk.run_scoped collective ["wg"] attributes {arg_names = ["o_smem", "bars"]} {
    // CHECK: ^bb0(%o_smem: !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>, %bars: !pk.barrier<[2], arrivals 2>):
    pk.run_scoped collective ["wg"] attributes {arg_names = ["o_smem", "bars"]} {
    ^bb0(%o_smem: !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
         %bars: !pk.barrier<[2], arrivals 2>):
      %c0 = arith.constant 0 : index
      // CHECK: pk.ref_view %{{.*}}[%{{.*}}, 0] sizes [64, 128] strides [1, 1] squeeze []
      %a_rows = pk.ref_view %a_gmem[%mi, 0] sizes [64, 128] strides [1, 1] squeeze []
          : !pk.ref<128x128xf16, #pk.memory_space<gmem>> -> !pk.ref<64x128xf16, #pk.memory_space<gmem>>
      // CHECK: pk.copy_gmem_to_smem %{{.*}}, %o_smem, %bars[%{{.*}}] :
      pk.copy_gmem_to_smem %a_rows, %o_smem, %bars[%c0]
          : !pk.ref<64x128xf16, #pk.memory_space<gmem>>,
            !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
            !pk.barrier<[2], arrivals 2>
      // CHECK: pk.barrier_arrive %bars[%{{.*}}] : !pk.barrier<[2], arrivals 2>
      pk.barrier_arrive %bars[%c0] : !pk.barrier<[2], arrivals 2>
      // CHECK: pk.barrier_wait %bars[%{{.*}}] : !pk.barrier<[2], arrivals 2>
      pk.barrier_wait %bars[%c0] : !pk.barrier<[2], arrivals 2>
      // CHECK: pk.barrier_test %bars[%{{.*}}] : !pk.barrier<[2], arrivals 2>
      %tested = pk.barrier_test %bars[%c0] : !pk.barrier<[2], arrivals 2>
      // CHECK: pk.ref_transpose %o_smem perm [1, 0]
      // CHECK-SAME: -> !pk.ref<128x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
      %t = pk.ref_transpose %o_smem perm [1, 0]
          : !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
          -> !pk.ref<128x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
      // CHECK: pk.run_scoped -> tensor<64x64xf32> {
      %r = pk.run_scoped -> tensor<64x64xf32> {
      ^bb0(%acc: !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>):
        %a_tile = pk.ref_view %o_smem[0, 0] sizes [64, 64] strides [1, 1] squeeze []
            : !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
            -> !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
        %b_tile = pk.ref_view %t[0, 0] sizes [64, 64] strides [1, 1] squeeze []
            : !pk.ref<128x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
            -> !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
        // CHECK: pk.wgmma %{{.*}}, %{{.*}}, %{{.*}} : !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>
        pk.wgmma %acc, %a_tile, %b_tile : !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>,
            !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
            !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
        // CHECK: pk.wgmma_wait 0
        pk.wgmma_wait 0
        %v = pk.load %acc[0, 0] sizes [64, 64] strides [1, 1] squeeze []
            : !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>> -> tensor<64x64xf32>
        // CHECK: pk.layout_cast %{{.*}} <wgmma> : tensor<64x64xf32>
        %w = pk.layout_cast %v <wgmma> : tensor<64x64xf32>
        pk.scope_yield %w : tensor<64x64xf32>
      }
      // CHECK: pk.commit_smem
      pk.commit_smem
      // CHECK: pk.copy_smem_to_gmem %{{.*}}, %{{.*}} no_commit :
      %o_rows = pk.ref_view %o_gmem[%mi, 0] sizes [64, 128] strides [1, 1] squeeze []
          : !pk.ref<128x128xf16, #pk.memory_space<gmem>> -> !pk.ref<64x128xf16, #pk.memory_space<gmem>>
      pk.copy_smem_to_gmem %o_smem, %o_rows no_commit
          : !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
            !pk.ref<64x128xf16, #pk.memory_space<gmem>>
      // CHECK: pk.commit_group
      pk.commit_group
      // CHECK: pk.wait_smem_to_gmem 1 read_only
      pk.wait_smem_to_gmem 1 read_only
      pk.wait_smem_to_gmem 0
      // CHECK: pk.set_max_registers 232 increase
      pk.set_max_registers 232 increase
      pk.set_max_registers 40
      // CHECK: pk.named_barrier %{{.*}}, %{{.*}}
      // CHECK: pk.named_barrier arrive %{{.*}}, %{{.*}}
      // CHECK: pk.fence_async_shared
      %bar_id = arith.constant 4 : i32
      %bar_threads = arith.constant 288 : i32
      pk.named_barrier %bar_id, %bar_threads
      pk.named_barrier arrive %bar_id, %bar_threads
      pk.fence_async_shared
      // CHECK: pk.grid_dependency wait
      // CHECK: pk.grid_dependency launch_dependents
      pk.grid_dependency wait
      pk.grid_dependency launch_dependents
      pk.scope_yield
    }
    pk.scope_yield
  }
  pk.return %0 : tensor<128x128xf16>
}

// CHECK-LABEL: pk.export @pipeline
pk.export @pipeline(%a: tensor<64x256xf16> {pk.name = "a", pk.shape = affine_map<() -> (64, 256)>})
    -> (tensor<64x64xf32> {pk.shape = affine_map<() -> (64, 64)>})
    attributes {symbols = []} {
  %0 = pk.mesh_kernel "p"(%a) grid [] [] cluster [2] ["x"] threads 1
      {input_output_aliases = array<i64>} : (tensor<64x256xf16>) -> tensor<64x64xf32> {
  ^bb0(%a_gmem: !pk.ref<64x256xf16, #pk.memory_space<gmem>>, %o_gmem: !pk.ref<64x64xf32, #pk.memory_space<gmem>>):
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    // CHECK: pk.pipeline(%{{.*}}) init(%{{.*}}) grid [4] max_concurrent_steps 2
    // CHECK-SAME: delay_release = array<i64: 1>
    // CHECK-SAME: in_specs = [#pk.block_spec<[64, 64], computed, memory_space = shared>]
    %c = pk.pipeline(%a_gmem) init(%zero) grid [4] max_concurrent_steps 2
        {delay_release = array<i64: 1>, in_specs = [#pk.block_spec<[64, 64], computed, memory_space = shared>],
         out_specs = []}
        : (!pk.ref<64x256xf16, #pk.memory_space<gmem>>), (tensor<64x64xf32>) -> tensor<64x64xf32>
      index_map {
      ^bb0(%k: i32):
        %c0 = arith.constant 0 : i32
        pk.scope_yield %c0, %k : i32, i32
      } body {
      ^bb0(%k: i32, %blk: !pk.ref<64x64xf16, #pk.memory_space<shared>>, %carry: tensor<64x64xf32>):
        pk.scope_yield %carry : tensor<64x64xf32>
      }
    // A pipeline without a carry has no results (and prints no arrow).
    // CHECK: pk.pipeline(%{{.*}}) grid [4] max_concurrent_steps 2
    // CHECK-SAME: : (!pk.ref<64x256xf16, #pk.memory_space<gmem>>) index_map {
    pk.pipeline(%a_gmem) grid [4] max_concurrent_steps 2
        {delay_release = array<i64: 0>, in_specs = [#pk.block_spec<[64, 64], computed, memory_space = shared>],
         out_specs = []}
        : (!pk.ref<64x256xf16, #pk.memory_space<gmem>>)
      index_map {
      ^bb0(%k: i32):
        %c0 = arith.constant 0 : i32
        pk.scope_yield %c0, %k : i32, i32
      } body {
      ^bb0(%k: i32, %blk: !pk.ref<64x64xf16, #pk.memory_space<shared>>):
        pk.scope_yield
      }
    // A computed grid extent is an index operand.
    // CHECK: pk.pipeline(%{{.*}}) grid [%{{.*}}, 2] max_concurrent_steps 2
    %n = arith.constant 3 : index
    pk.pipeline(%a_gmem) grid [%n, 2] max_concurrent_steps 2
        {delay_release = array<i64: 0>, in_specs = [#pk.block_spec<[64, 64], computed, memory_space = shared>],
         out_specs = []}
        : (!pk.ref<64x256xf16, #pk.memory_space<gmem>>)
      index_map {
      ^bb0(%k: i32, %j: i32):
        %c0 = arith.constant 0 : i32
        pk.scope_yield %c0, %k : i32, i32
      } body {
      ^bb0(%k: i32, %j: i32, %blk: !pk.ref<64x64xf16, #pk.memory_space<shared>>):
        pk.scope_yield
      }
    // CHECK: pk.get_global : !pk.semaphore<[]>
    %sem = pk.get_global : !pk.semaphore<[]>
    %one = arith.constant 1 : i32
    // CHECK: pk.semaphore_signal %{{.*}}, %{{.*}} : !pk.semaphore<[]>
    pk.semaphore_signal %sem, %one : !pk.semaphore<[]>
    // CHECK: pk.semaphore_wait %{{.*}}, %{{.*}} no_decrement : !pk.semaphore<[]>
    pk.semaphore_wait %sem, %one no_decrement : !pk.semaphore<[]>
    // CHECK: !pk.barrier<[1], arrivals 1, cluster ["x"]>, %{{.*}}: !pk.semaphore<[4], barrier>
    pk.run_scoped {
    ^bb0(%cb: !pk.barrier<[1], arrivals 1, cluster ["x"]>, %sems: !pk.semaphore<[4], barrier>):
      pk.barrier_arrive %cb : !pk.barrier<[1], arrivals 1, cluster ["x"]>
      pk.scope_yield
    }
    pk.scope_yield
  }
  pk.return %0 : tensor<64x64xf32>
}

// The Refs of a plgpu.RefUnion over its buffer.
// CHECK-LABEL: func.func @union
func.func @union(%u: !pk.ref<2048xi8, #pk.memory_space<shared>>,
                 %t: !pk.ref<128x96xi32, #pk.memory_space<tmem>>) {
  // CHECK: pk.ref_reinterpret %{{.*}}[1024] : !pk.ref<2048xi8, #pk.memory_space<shared>> -> !pk.ref<128xf32, #pk.memory_space<shared>>
  %a = pk.ref_reinterpret %u[1024] : !pk.ref<2048xi8, #pk.memory_space<shared>> -> !pk.ref<128xf32, #pk.memory_space<shared>>
  // CHECK: pk.ref_reinterpret %{{.*}}[0] : !pk.ref<2048xi8, #pk.memory_space<shared>> -> !pk.ref<8x64xbf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
  %b = pk.ref_reinterpret %u[0] : !pk.ref<2048xi8, #pk.memory_space<shared>> -> !pk.ref<8x64xbf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
  // CHECK: pk.ref_reinterpret %{{.*}}[32] : !pk.ref<128x96xi32, #pk.memory_space<tmem>> -> !pk.ref<128x64xf32, #pk.memory_space<tmem>>
  %c = pk.ref_reinterpret %t[32] : !pk.ref<128x96xi32, #pk.memory_space<tmem>> -> !pk.ref<128x64xf32, #pk.memory_space<tmem>>
  return
}
