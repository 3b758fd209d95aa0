// RUN: %pk-opt --pk-gpu-prefetch-operands %s | FileCheck %s
// The windows a K loop prefetches go by TMA where a tensor map can carry
// them: one box per swizzle strip of the wgmma buffer (per 256 rows),
// landing on the slot's mbarrier, which every thread waits for at the
// step's start. The kernel gets a tensor map parameter per (operand,
// box), described for the host in pkgpu.operand_tensor_maps as (operand,
// swizzle, optional, box...).

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // Static sizes: TMA always, so no cp.async groups and no fallback.
    // A 64-column bf16 window is one 128-byte strip (one box); the 256
    // columns of B four. The slot's barrier expects both copies'
    // arrivals.
    // CHECK-LABEL: gpu.func @static_sizes
    // CHECK-SAME: (%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
    // CHECK-SAME: pkgpu.operand_tensor_maps = [array<i64: 0, 128, 0, 128, 64>, array<i64: 1, 128, 0, 64, 64>]
    // CHECK-SAME: pkgpu.tensor_map_params = array<i64: 2, 3>
    // CHECK-NOT: nvvm.cp.async
    // CHECK-DAG: %[[RA:.*]] = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<3x128x64xbf16
    // CHECK-DAG: %[[BAR:.*]] = pkgpu.barrier_alloc offset 147456 parity 147480 : !pk.barrier<[3], arrivals 2>
    // CHECK: pkgpu.tma_copy %{{.*}} [0, %{{.*}}] into %{{.*}}, %[[BAR]][%{{.*}}] tensor_map 2 boxes [array<i64: 0, 0, 0>] bytes 16384 :
    // CHECK: pkgpu.tma_copy %{{.*}} [%{{.*}}, 0] into %{{.*}}, %[[BAR]][%{{.*}}] tensor_map 3 boxes [array<i64: 0, 0, 0>, array<i64: 0, 64, 8192>, array<i64: 0, 128, 16384>, array<i64: 0, 192, 24576>] bytes 32768 :
    // CHECK: scf.for
    // CHECK: %[[SLOT:.*]] = arith.remsi
    // CHECK: pk.barrier_wait %[[BAR]][%[[SLOT]]]
    // CHECK: pk.commit_smem
    // CHECK: pkgpu.tma_copy
    // CHECK: pkgpu.tma_copy
    // CHECK-NOT: nvvm.cp.async
    // CHECK: pkgpu.wgmma_tile
    gpu.func @static_sizes(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.num_stages = 3 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %c1024 = arith.constant 1024 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c128, %c1024) offsets(%c0, %c0) block [128, 1024] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x1024xbf16>
      %y = pkgpu.global_ref %arg1 sizes(%c1024, %c256) offsets(%c0, %c0) block [1024, 256] squeeze [] : !llvm.ptr<1> -> !pk.ref<1024x256xbf16>
      %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %cst) -> (tensor<128x256xf32>) {
        %off = arith.muli %k, %c64 : index
        %a = pk.load %x [0, %off] sizes [128, 64] strides [1, 1] squeeze [] : <128x1024xbf16> -> tensor<128x64xbf16>
        %b = pk.load %y [%off, 0] sizes [64, 256] strides [1, 1] squeeze [] : <1024x256xbf16> -> tensor<64x256xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<128x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : tensor<128x64xbf16>, <128x64xbf16, #pk.memory_space<shared>>
        %sb = pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<64x256xbf16, #pk.memory_space<shared>>
        pk.store %b, %sb [0, 0] sizes [64, 256] strides [1, 1] squeeze [] : tensor<64x256xbf16>, <64x256xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %d = pkgpu.wgmma_tile %acc, %sa, %sb : tensor<128x256xf32>, !pk.ref<128x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x256xbf16, #pk.memory_space<shared>> -> tensor<128x256xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<128x256xf32>
        scf.yield %w : tensor<128x256xf32>
      }
      gpu.return
    }

    // Symbolic sizes: the kernel tests at run time what the runtime tests
    // before encoding the map, or more (each symbolic dimension 1 to
    // 2^31 - 512, as box coordinates are signed; each pitch a multiple of
    // 16 bytes below 2^40), and copies by cp.async where the map is zeros.
    // The map is optional (third field 1). The test is the same for every
    // copy: it is made once, before the prologue's copies.
    // CHECK-LABEL: gpu.func @symbolic_pitch
    // CHECK-SAME: pkgpu.operand_tensor_maps = [array<i64: 0, 128, 1, 64, 64>]
    // CHECK: %[[GE:.*]] = arith.cmpi sge, %[[N:.*]], %{{.*}} : index
    // CHECK: %[[LE:.*]] = arith.cmpi sle, %[[N]], %{{.*}} : index
    // CHECK: %[[DIM:.*]] = arith.andi %[[GE]], %[[LE]]
    // CHECK: %[[PITCH:.*]] = arith.muli %{{.*}}, %[[N]] : index
    // CHECK: %[[REM:.*]] = arith.remsi %[[PITCH]], %{{.*}} : index
    // CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[REM]]
    // CHECK: %[[SMALL:.*]] = arith.cmpi slt, %[[PITCH]]
    // CHECK: %[[PITCHOK:.*]] = arith.andi %[[WHOLE]], %[[SMALL]]
    // CHECK: %[[OK:.*]] = arith.andi %[[DIM]], %[[PITCHOK]]
    // CHECK: gpu.barrier
    // CHECK: scf.if
    // CHECK: pkgpu.tma_copy {{.*}} bytes 8192 if %[[OK]] :
    // CHECK: nvvm.cp.async.commit.group
    // CHECK: scf.for
    // CHECK: nvvm.cp.async.wait.group
    // CHECK: pk.barrier_wait
    // CHECK-NOT: arith.cmpi sge
    // CHECK: pkgpu.tma_copy {{.*}} bytes 8192 if %[[OK]] :
    gpu.func @symbolic_pitch(%arg0: !llvm.ptr<1>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c256, %n) offsets(%c0, %c0) block [256, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x64xbf16>
      %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %off = arith.muli %k, %c64 : index
        %a = pk.load %x [%off, 0] sizes [64, 64] strides [1, 1] squeeze [] : <256x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %at = pk.ref_transpose %sa perm [1, 0] : !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %at : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        scf.yield %w : tensor<64x64xf32>
      }
      gpu.return
    }

    // A block with squeezed dimensions (`BlockSpec((None, 64, None, 64),
    // ...)` of a (batch, seq, heads, dim) array): the box spans the whole
    // array's rank, one element along the squeezed dimensions.
    // CHECK-LABEL: gpu.func @squeezed_dimensions
    // CHECK-SAME: pkgpu.operand_tensor_maps = [array<i64: 0, 128, 0, 1, 64, 1, 64>]
    // CHECK: pkgpu.tma_copy {{.*}} boxes [array<i64: 0, 0, 0, 0, 0>] bytes 8192 :
    gpu.func @squeezed_dimensions(%arg0: !llvm.ptr<1>, %b: index, %h: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c512 = arith.constant 512 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c2, %c512, %c4, %c64) offsets(%b, %c0, %h, %c0) block [1, 512, 1, 64] squeeze [0, 2] : !llvm.ptr<1> -> !pk.ref<512x64xbf16>
      %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %off = arith.muli %k, %c64 : index
        %a = pk.load %x [%off, 0] sizes [64, 64] strides [1, 1] squeeze [] : <512x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %at = pk.ref_transpose %sa perm [1, 0] : !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %at : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        scf.yield %w : tensor<64x64xf32>
      }
      gpu.return
    }

    // What TMA cannot carry stays with cp.async: a row pitch that is not
    // a whole number of 16 bytes (100 bf16 columns), and columns that are
    // not the array's innermost dimension (the last one is squeezed).
    // CHECK-LABEL: gpu.func @not_by_tma
    // CHECK-NOT: pkgpu.tensor_map_params
    // CHECK-NOT: pkgpu.tma_copy
    // CHECK-NOT: pkgpu.barrier_alloc
    // CHECK: pkgpu.async_copy
    // CHECK: pkgpu.async_copy
    // CHECK-NOT: pkgpu.tma_copy
    gpu.func @not_by_tma(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %c: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c64 = arith.constant 64 : index
      %c100 = arith.constant 100 : index
      %c256 = arith.constant 256 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c256, %c100) offsets(%c0, %c0) block [256, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x64xbf16>
      %y = pkgpu.global_ref %arg1 sizes(%c256, %c64, %c3) offsets(%c0, %c0, %c) block [256, 64, 1] squeeze [2] : !llvm.ptr<1> -> !pk.ref<256x64xbf16>
      %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %off = arith.muli %k, %c64 : index
        %a = pk.load %x [%off, 0] sizes [64, 64] strides [1, 1] squeeze [] : <256x64xbf16> -> tensor<64x64xbf16>
        %b = pk.load %y [%off, 0] sizes [64, 64] strides [1, 1] squeeze [] : <256x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        %sb = pkgpu.shared_ref offset 8192 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %b, %sb [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %bt = pk.ref_transpose %sb perm [1, 0] : !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %bt : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        scf.yield %w : tensor<64x64xf32>
      }
      gpu.return
    }

    // A pitch past TMA's 2^40 bytes (constant sizes whose product would
    // overflow 64 bits further out) is not carried by TMA.
    // CHECK-LABEL: gpu.func @pitch_too_large
    // CHECK-NOT: pkgpu.tma_copy
    // CHECK: pkgpu.async_copy
    gpu.func @pitch_too_large(%arg0: !llvm.ptr<1>, %i: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c64 = arith.constant 64 : index
      %big = arith.constant 1073741824 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%big, %big, %big, %c64, %c64) offsets(%i, %i, %i, %c0, %c0) block [1, 1, 1, 64, 64] squeeze [0, 1, 2] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %a = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %at = pk.ref_transpose %sa perm [1, 0] : !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %at : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        scf.yield %w : tensor<64x64xf32>
      }
      gpu.return
    }
  }
}
