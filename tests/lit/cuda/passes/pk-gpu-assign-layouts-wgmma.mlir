// RUN: %pk-opt --pk-gpu-assign-layouts %s | FileCheck %s
// An accumulator read from a scratch buffer for a wgmma (acc_ref[...] +=
// x @ y) is loaded in the wgmma accumulator layout itself: no conversion
// through shared memory. The same load from global memory, or one with
// another user, keeps the blocked layout and is converted.
//
// A broadcast of row statistics (`s - m[:, None]`, `acc * alpha[:, None]`
// in flash attention) is made in the layout of the accumulator it meets,
// whose row slice the reduction already gave: no conversion at all. So
// is one that meets a loop-carried accumulator first
// (`correction[:, None] * o_prev`): the carried value's layout is the
// wgmma's once the loop body has been seen.
//
// A causal mask (`span_q[:, None] >= span_k[None, :]`, from iotas and
// scalars only) is computed again in the layout of the scores it selects
// from, back to its iotas: nothing moves through shared memory.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @scratch_accumulator
    // CHECK: %[[ACC:.*]] = pk.load {{.*}} -> tensor<128x64xf32, #[[W:.*]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: pkgpu.wgmma_tile %[[ACC]], {{.*}} -> tensor<128x64xf32, #[[W]]>
    gpu.func @scratch_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 65536 : i64} {
      %acc = pkgpu.shared_ref offset 0 : !pk.ref<128x64xf32, #pk.memory_space<vmem>>
      %a = pkgpu.shared_ref offset 32768 strips 128 : !pk.ref<128x64xbf16, #pk.memory_space<shared>>
      %b = pkgpu.shared_ref offset 49152 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %v = pk.load %acc [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : <128x64xf32, #pk.memory_space<vmem>> -> tensor<128x64xf32>
      %d = pkgpu.wgmma_tile %v, %a, %b : tensor<128x64xf32>, !pk.ref<128x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<128x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<128x64xf32>
      pk.store %w, %acc [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : tensor<128x64xf32>, <128x64xf32, #pk.memory_space<vmem>>
      gpu.return
    }

    // CHECK-LABEL: gpu.func @row_broadcast_meets_accumulator
    // CHECK: %[[S:.*]] = pkgpu.wgmma_wait_tile 0, {{.*}} : tensor<64x64xf32, #[[W:[a-z0-9]+]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: %[[B:.*]] = pk.broadcast_in_dim {{.*}} -> tensor<64x64xf32, #[[W]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: arith.subf %[[S]], %[[B]] : tensor<64x64xf32, #[[W]]>
    gpu.func @row_broadcast_meets_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %s = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      %m = pk.reduce <maxf> %s axes [1] : tensor<64x64xf32> -> tensor<64xf32>
      %r = pk.reshape %m : tensor<64xf32> -> tensor<64x1xf32>
      %b = pk.broadcast_in_dim %r dims [0, 1] : tensor<64x1xf32> -> tensor<64x64xf32>
      %p = arith.subf %s, %b : tensor<64x64xf32>
      %h = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
      pk.store %h, %a [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
      gpu.return
    }

    // CHECK-LABEL: gpu.func @carried_accumulator_meets_broadcast
    // CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #[[W:[a-z0-9]+]]>, tensor<64xf32, #{{.*}}>)
    // CHECK-NOT: pkgpu.convert_layout {{.*}} tensor<64x64xf32
    // CHECK: %[[B:.*]] = pk.broadcast_in_dim {{.*}} -> tensor<64x64xf32, #[[W]]>
    // CHECK-NEXT: arith.mulf %[[B]], %{{.*}} : tensor<64x64xf32, #[[W]]>
    // CHECK-NOT: pkgpu.convert_layout {{.*}} tensor<64x64xf32
    // CHECK: scf.yield
    gpu.func @carried_accumulator_meets_broadcast(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
      %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%o = %zero, %m = %ninf) -> (tensor<64x64xf32>, tensor<64xf32>) {
        %d = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %s = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        %cur = pk.reduce <maxf> %s axes [1] : tensor<64x64xf32> -> tensor<64xf32>
        %next = arith.maximumf %m, %cur : tensor<64xf32>
        %diff = arith.subf %m, %next : tensor<64xf32>
        %c = math.exp %diff : tensor<64xf32>
        %cr = pk.reshape %c : tensor<64xf32> -> tensor<64x1xf32>
        %cb = pk.broadcast_in_dim %cr dims [0, 1] : tensor<64x1xf32> -> tensor<64x64xf32>
        %scaled = arith.mulf %cb, %o : tensor<64x64xf32>
        %acc = pkgpu.wgmma_tile %scaled, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %acc : tensor<64x64xf32>
        scf.yield %w, %next : tensor<64x64xf32>, tensor<64xf32>
      }
      gpu.return
    }

    // CHECK-LABEL: gpu.func @causal_mask_rematerialized
    // CHECK: %[[S:.*]] = pkgpu.wgmma_wait_tile 0, {{.*}} : tensor<64x64xf32, #[[W:[a-z0-9]+]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: %[[M:.*]] = arith.cmpi sge, {{.*}} : tensor<64x64xi32, #[[W]]>
    // CHECK: arith.select %[[M]], %[[S]], {{.*}} : tensor<64x64xi1, #[[W]]>, tensor<64x64xf32, #[[W]]>
    gpu.func @causal_mask_rematerialized(%arg0: !llvm.ptr<1>, %q0: i32, %k0: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %low = arith.constant dense<-1.0e30> : tensor<64x64xf32>
      %d = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %s = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      %i = pk.iota 0 : tensor<64xi32>
      %qs = pk.broadcast_in_dim %q0 dims [] : i32 -> tensor<64xi32>
      %ks = pk.broadcast_in_dim %k0 dims [] : i32 -> tensor<64xi32>
      %sq = arith.addi %qs, %i : tensor<64xi32>
      %sk = arith.addi %ks, %i : tensor<64xi32>
      %rq = pk.reshape %sq : tensor<64xi32> -> tensor<64x1xi32>
      %rk = pk.reshape %sk : tensor<64xi32> -> tensor<1x64xi32>
      %bq = pk.broadcast_in_dim %rq dims [0, 1] : tensor<64x1xi32> -> tensor<64x64xi32>
      %bk = pk.broadcast_in_dim %rk dims [0, 1] : tensor<1x64xi32> -> tensor<64x64xi32>
      %mask = arith.cmpi sge, %bq, %bk : tensor<64x64xi32>
      %p = arith.select %mask, %s, %low : tensor<64x64xi1>, tensor<64x64xf32>
      %h = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
      pk.store %h, %a [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
      gpu.return
    }

    // CHECK-LABEL: gpu.func @global_accumulator
    // CHECK: pk.load
    // CHECK: pkgpu.convert_layout
    // CHECK: pkgpu.wgmma_tile
    gpu.func @global_accumulator(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 32768 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %g = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xf32>
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %v = pk.load %g [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xf32> -> tensor<64x64xf32>
      %d = pkgpu.wgmma_tile %v, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      gpu.return
    }

    // plgpu.layout_cast to WGMMA_ROW / WGMMA_COL puts a vector where the
    // accumulator's reductions leave theirs (FlashAttention 3's running
    // max starts as `layout_cast(full(-inf), WGMMA_ROW)`): the loop carries
    // it with no conversion, and a column vector meets a column sum as is.
    // CHECK-LABEL: gpu.func @wgmma_row_and_col
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: %[[SUM:.*]] = pk.reduce <add> %{{.*}} axes [0] : tensor<64x64xf32, #{{.*}}> -> tensor<64xf32, #[[COL:[a-z0-9]+]]>
    // CHECK: pk.layout_cast %{{.*}} <wgmma_col> : tensor<64xf32, #[[COL]]>
    // CHECK: scf.for {{.*}} -> (tensor<64xf32, #[[ROW:[a-z0-9]+]]>)
    // CHECK: pk.reduce <maxf> %{{.*}} axes [1] : tensor<64x64xf32, #{{.*}}> -> tensor<64xf32, #[[ROW]]>
    // CHECK-NOT: pkgpu.convert_layout
    // CHECK: gpu.return
    gpu.func @wgmma_row_and_col(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %a = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      %out = pkgpu.shared_ref offset 8192 : !pk.ref<64xf32, #pk.memory_space<shared>>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %d0 = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %s0 = pkgpu.wgmma_wait_tile 0, %d0 : tensor<64x64xf32>
      %sum = pk.reduce <add> %s0 axes [0] : tensor<64x64xf32> -> tensor<64xf32>
      %ones = arith.constant dense<1.0> : tensor<64xf32>
      %cols = pk.layout_cast %ones <wgmma_col> : tensor<64xf32>
      %scaled = arith.mulf %sum, %cols : tensor<64xf32>
      pk.store %scaled, %out [0] sizes [64] strides [1] squeeze [] : tensor<64xf32>, <64xf32, #pk.memory_space<shared>>
      %minf = arith.constant dense<0xFF800000> : tensor<64xf32>
      %m0 = pk.layout_cast %minf <wgmma_row> : tensor<64xf32>
      %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%m = %m0) -> (tensor<64xf32>) {
        %d = pkgpu.wgmma_tile %zero, %a, %a : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %s = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        %mx = pk.reduce <maxf> %s axes [1] : tensor<64x64xf32> -> tensor<64xf32>
        %n = arith.maximumf %m, %mx : tensor<64xf32>
        scf.yield %n : tensor<64xf32>
      }
      pk.store %r, %out [0] sizes [64] strides [1] squeeze [] : tensor<64xf32>, <64xf32, #pk.memory_space<shared>>
      gpu.return
    }
  }
}
