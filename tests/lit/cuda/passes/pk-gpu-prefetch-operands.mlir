// RUN: %pk-opt --pk-gpu-prefetch-operands %s | FileCheck %s
// A K loop that loads operand windows only to store them into wgmma
// buffers gets a ring of num_stages slots per operand (here 2:
// pkgpu.num_stages) in place of those buffers (here the only shared
// memory, so from byte 0) and copies step j+1 while step j multiplies;
// the window's offset arithmetic is cloned for the later step. TMA
// copies the windows (pk-gpu-prefetch-operands-tma.mlir has the details):
// the kernel gets a tensor map parameter per operand and an mbarrier per
// slot; as the sizes are symbolic, each copy falls back to cp.async where
// the runtime cannot encode the map, so the cp.async groups stay.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @k_loop
    // CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
    // CHECK-SAME: pkgpu.operand_tensor_maps = [array<i64: 0, 64, 1, 128, 32>, array<i64: 1, 128, 1, 32, 64>]
    // CHECK-SAME: pkgpu.scratch_bytes = 32816
    // CHECK-SAME: pkgpu.tensor_map_params = array<i64: 3, 4>
    // CHECK-DAG: %[[RA:.*]] = pkgpu.shared_ref offset 0 strips 64 : !pk.ref<2x128x32xbf16, #pk.memory_space<shared>>
    // CHECK-DAG: %[[RB:.*]] = pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<2x32x128xbf16, #pk.memory_space<shared>>
    // CHECK-DAG: %[[BAR:.*]] = pkgpu.barrier_alloc offset 32768 parity 32784 : !pk.barrier<[2], arrivals 2>
    // Before the loop: a barrier (an outer loop's last steps may still
    // read the slots), then step 0 into slot 0, if there is a step 0.
    // CHECK: gpu.barrier
    // CHECK: scf.if
    // CHECK: %[[A0:.*]] = pk.ref_view %[[RA]] [%[[S0:.*]], 0, 0] sizes [1, 128, 32]
    // CHECK: pkgpu.tma_copy %{{.*}} [0, %{{.*}}] into %[[A0]], %[[BAR]][%[[S0]]] tensor_map 3 boxes [array<i64: 0, 0, 0>] bytes 8192 if
    // CHECK: pkgpu.tma_copy {{.*}} tensor_map 4 boxes [array<i64: 0, 0, 0>, array<i64: 0, 64, 4096>] bytes 8192 if
    // CHECK: nvvm.cp.async.commit.group
    // Each step first waits for its own copies (none of a later step is
    // in flight with two slots) ...
    // CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
    // CHECK: %[[J:.*]] = arith.divsi
    // CHECK-NEXT: nvvm.cp.async.wait.group 0
    // CHECK: %[[SLOT:.*]] = arith.remsi %[[J]]
    // CHECK: %[[SA:.*]] = pk.ref_view %[[RA]] [%[[SLOT]]
    // CHECK: %[[SB:.*]] = pk.ref_view %[[RB]] [%[[SLOT]]
    // CHECK: pk.barrier_wait %[[BAR]][%[[SLOT]]]
    // CHECK-NOT: pk.load
    // CHECK-NOT: pk.store
    // ... and once the fence and barrier before its wgmma have published
    // them (and every warpgroup is done with the other slot), starts the
    // next step's.
    // CHECK: pk.commit_smem
    // CHECK: scf.if
    // CHECK: %[[NEXT:.*]] = arith.addi %[[K]], %{{.*}} : index
    // CHECK: %[[OFF:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
    // CHECK: pkgpu.tma_copy %{{.*}} [0, %[[OFF]]] into
    // CHECK: pkgpu.tma_copy %{{.*}} [%{{.*}}, 0] into
    // CHECK: nvvm.cp.async.commit.group
    // CHECK-NOT: pk.store
    // CHECK: pkgpu.wgmma_tile %[[ACC]], %[[SA]], %[[SB]]
    // With two slots, each wgmma is waited for in its step.
    // CHECK-NEXT: pkgpu.wgmma_wait_tile 0
    gpu.func @k_loop(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %n: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 17408 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c128, %n) offsets(%c0, %c0) block [128, 4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x4096xbf16>
      %y = pkgpu.global_ref %arg1 sizes(%n, %c128) offsets(%c0, %c0) block [4096, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096x128xbf16>
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %cst) -> (tensor<128x128xf32>) {
        %off = arith.muli %k, %c32 : index
        %a = pk.load %x [0, %off] sizes [128, 32] strides [1, 1] squeeze [] : <128x4096xbf16> -> tensor<128x32xbf16>
        %b = pk.load %y [%off, 0] sizes [32, 128] strides [1, 1] squeeze [] : <4096x128xbf16> -> tensor<32x128xbf16>
        %sa = pkgpu.shared_ref offset 1024 strips 64 : !pk.ref<128x32xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [128, 32] strides [1, 1] squeeze [] : tensor<128x32xbf16>, <128x32xbf16, #pk.memory_space<shared>>
        %sb = pkgpu.shared_ref offset 9216 strips 128 : !pk.ref<32x128xbf16, #pk.memory_space<shared>>
        pk.store %b, %sb [0, 0] sizes [32, 128] strides [1, 1] squeeze [] : tensor<32x128xbf16>, <32x128xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %d = pkgpu.wgmma_tile %acc, %sa, %sb : tensor<128x128xf32>, !pk.ref<128x32xbf16, #pk.memory_space<shared>>, !pk.ref<32x128xbf16, #pk.memory_space<shared>> -> tensor<128x128xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<128x128xf32>
        scf.yield %w : tensor<128x128xf32>
      }
      gpu.return
    }

    // With the default stages (one more, 4, as the loop's only wgmma
    // accumulates into the loop-carried value), step j waits for all but
    // its latest wgmma group: step j's runs on into step j+1, its slot
    // stays busy a step longer, so copies run two steps ahead (steps 0
    // and 1 before the loop) and the loop's result is waited for after it.
    // (The rings' 64 KiB, then 4 mbarriers and a parity word per warp.)
    // CHECK-LABEL: gpu.func @k_loop_overlapped
    // CHECK-SAME: pkgpu.scratch_bytes = 65600
    // CHECK-DAG: pkgpu.shared_ref offset 0 strips 64 : !pk.ref<4x128x32xbf16, #pk.memory_space<shared>>
    // CHECK-DAG: pkgpu.shared_ref offset 32768 strips 128 : !pk.ref<4x32x128xbf16, #pk.memory_space<shared>>
    // CHECK: gpu.barrier
    // CHECK-COUNT-2: nvvm.cp.async.commit.group
    // CHECK: scf.for
    // CHECK: nvvm.cp.async.wait.group 1
    // CHECK: pk.commit_smem
    // CHECK: arith.constant 2 : index
    // CHECK: scf.if
    // CHECK: nvvm.cp.async.commit.group
    // CHECK: %[[D:.*]] = pkgpu.wgmma_tile
    // CHECK-NEXT: %[[W:.*]] = pkgpu.wgmma_wait_tile 1, %[[D]]
    // CHECK-NEXT: scf.yield %[[W]]
    // CHECK: %[[LAST:.*]] = pkgpu.wgmma_wait_tile 0, %[[R:.*]] :
    // CHECK-NEXT: arith.truncf %[[LAST]]
    gpu.func @k_loop_overlapped(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %n: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 17408 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c128, %n) offsets(%c0, %c0) block [128, 4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x4096xbf16>
      %y = pkgpu.global_ref %arg1 sizes(%n, %c128) offsets(%c0, %c0) block [4096, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096x128xbf16>
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %cst) -> (tensor<128x128xf32>) {
        %off = arith.muli %k, %c32 : index
        %a = pk.load %x [0, %off] sizes [128, 32] strides [1, 1] squeeze [] : <128x4096xbf16> -> tensor<128x32xbf16>
        %b = pk.load %y [%off, 0] sizes [32, 128] strides [1, 1] squeeze [] : <4096x128xbf16> -> tensor<32x128xbf16>
        %sa = pkgpu.shared_ref offset 1024 strips 64 : !pk.ref<128x32xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [128, 32] strides [1, 1] squeeze [] : tensor<128x32xbf16>, <128x32xbf16, #pk.memory_space<shared>>
        %sb = pkgpu.shared_ref offset 9216 strips 128 : !pk.ref<32x128xbf16, #pk.memory_space<shared>>
        pk.store %b, %sb [0, 0] sizes [32, 128] strides [1, 1] squeeze [] : tensor<32x128xbf16>, <32x128xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %d = pkgpu.wgmma_tile %acc, %sa, %sb : tensor<128x128xf32>, !pk.ref<128x32xbf16, #pk.memory_space<shared>>, !pk.ref<32x128xbf16, #pk.memory_space<shared>> -> tensor<128x128xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<128x128xf32>
        scf.yield %w : tensor<128x128xf32>
      }
      %t = arith.truncf %r : tensor<128x128xf32> to tensor<128x128xbf16>
      gpu.return
    }

    // A loaded window the kernel also reads itself stays a load and a
    // store.
    // CHECK-LABEL: gpu.func @read_elsewhere
    // CHECK-NOT: pkgpu.async_copy
    // CHECK: pk.load
    // CHECK: pk.store
    gpu.func @read_elsewhere(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %a = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %d = pkgpu.wgmma_tile %acc, %sa, %sa : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        %e = arith.extf %a : tensor<64x64xbf16> to tensor<64x64xf32>
        %s = arith.addf %w, %e : tensor<64x64xf32>
        scf.yield %s : tensor<64x64xf32>
      }
      gpu.return
    }

    // Outside a loop the window is copied straight into its buffer and
    // waited for at once.
    // CHECK-LABEL: gpu.func @single_dot
    // CHECK: %[[S:.*]] = pkgpu.shared_ref offset 0 strips 128
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: pkgpu.async_copy %{{.*}} [0, 0] into %[[S]]
    // CHECK-NEXT: nvvm.cp.async.commit.group
    // CHECK-NEXT: nvvm.cp.async.wait.group 0
    // CHECK-NEXT: pk.commit_smem
    // CHECK-NOT: pk.load
    gpu.func @single_dot(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %a = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x64xbf16>
      %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
      pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
      pk.commit_smem
      %d = pkgpu.wgmma_tile %cst, %sa, %sa : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      gpu.return
    }

    // A masked load whose mask keeps every element (`jnp.arange(128) <
    // 128`, JAX's head-dimension mask) is a padded window: copied padded.
    // CHECK-LABEL: gpu.func @always_true_mask
    // CHECK: pkgpu.async_copy %{{.*}} [%{{.*}}, 0] into %{{.*}} padded
    // CHECK-NOT: pk.load
    gpu.func @always_true_mask(%arg0: !llvm.ptr<1>, %j: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %bound = arith.constant dense<128> : tensor<128xi32>
      %other = arith.constant 0.0 : bf16
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c256, %c128) offsets(%c0, %c0) block [256, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x128xbf16>
      %i = pk.iota 0 : tensor<128xi32>
      %keep = arith.cmpi slt, %i, %bound : tensor<128xi32>
      %row = pk.reshape %keep : tensor<128xi1> -> tensor<1x128xi1>
      %mask = pk.broadcast_in_dim %row dims [0, 1] : tensor<1x128xi1> -> tensor<64x128xi1>
      %a = pk.load %x [%j, 0] sizes [64, 128] strides [1, 1] squeeze [] mask %mask : tensor<64x128xi1> other %other : bf16 padded : <256x128xbf16> -> tensor<64x128xbf16>
      %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x128xbf16, #pk.memory_space<shared>>
      pk.store %a, %sa [0, 0] sizes [64, 128] strides [1, 1] squeeze [] : tensor<64x128xbf16>, <64x128xbf16, #pk.memory_space<shared>>
      pk.commit_smem
      %at = pk.ref_transpose %sa perm [1, 0] : !pk.ref<64x128xbf16, #pk.memory_space<shared>> -> !pk.ref<128x64xbf16, #pk.memory_space<shared>>
      %d = pkgpu.wgmma_tile %cst, %sa, %at : tensor<64x64xf32>, !pk.ref<64x128xbf16, #pk.memory_space<shared>>, !pk.ref<128x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
      %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
      gpu.return
    }

    // The kernel writes the array the window comes from: a copy started
    // a step early could read it before the write, so it stays a load.
    // CHECK-LABEL: gpu.func @window_of_written_array
    // CHECK-NOT: pkgpu.async_copy
    // CHECK: pk.load
    gpu.func @window_of_written_array(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %cst) -> (tensor<64x64xf32>) {
        %a = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x64xbf16>
        %sa = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16, #pk.memory_space<shared>>
        pk.commit_smem
        %d = pkgpu.wgmma_tile %acc, %sa, %sa : tensor<64x64xf32>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>> -> tensor<64x64xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x64xf32>
        %t = arith.truncf %w : tensor<64x64xf32> to tensor<64x64xbf16>
        pk.store %t, %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : tensor<64x64xbf16>, <64x64xbf16>
        scf.yield %w : tensor<64x64xf32>
      }
      gpu.return
    }

    // A TF32 B window reaches its K-major buffer transposed through
    // registers: it is staged. Its ring holds the window as loaded
    // (row-major, no strips); the buffer it is transposed into
    // stays, and each step reads its slot back after a barrier (the
    // slot's bytes came from every thread's copies) in place of the
    // global load. Without a ring slot for B the wgmma is not overlapped.
    // A, not staged, goes by TMA (2 mbarriers after the rings, a parity
    // word per warp).
    // CHECK-LABEL: gpu.func @staged_tf32
    // CHECK-SAME: pkgpu.scratch_bytes = 65568
    // CHECK-DAG: %[[RA:.*]] = pkgpu.shared_ref offset 49152 strips 128 : !pk.ref<2x64x32xf32, #pk.memory_space<shared>>
    // CHECK-DAG: %[[RB:.*]] = pkgpu.shared_ref offset 16384 : !pk.ref<2x32x128xf32, #pk.memory_space<shared>>
    // CHECK: scf.for
    // CHECK: nvvm.cp.async.wait.group 0
    // CHECK-NEXT: gpu.barrier
    // CHECK: %[[SB:.*]] = pk.ref_view %[[RB]]
    // CHECK: %[[W:.*]] = pk.load %[[SB]] [0, 0] sizes [32, 128]
    // CHECK: %[[T:.*]] = pk.transpose %[[W]]
    // CHECK: %[[BUF:.*]] = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<128x32xf32
    // CHECK: pk.store %[[T]], %[[BUF]]
    // CHECK: pk.commit_smem
    // CHECK: pkgpu.async_copy %{{.*}} into
    // CHECK: pkgpu.tma_copy %{{.*}} into
    // CHECK: pkgpu.wgmma_tile
    // CHECK-NEXT: pkgpu.wgmma_wait_tile 0
    gpu.func @staged_tf32(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c64, %n) offsets(%c0, %c0) block [64, 4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x4096xf32>
      %y = pkgpu.global_ref %arg1 sizes(%n, %c128) offsets(%c0, %c0) block [4096, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096x128xf32>
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %cst) -> (tensor<64x128xf32>) {
        %off = arith.muli %k, %c32 : index
        %a = pk.load %x [0, %off] sizes [64, 32] strides [1, 1] squeeze [] : <64x4096xf32> -> tensor<64x32xf32>
        %b = pk.load %y [%off, 0] sizes [32, 128] strides [1, 1] squeeze [] : <4096x128xf32> -> tensor<32x128xf32>
        %bt = pk.transpose %b perm [1, 0] : tensor<32x128xf32> -> tensor<128x32xf32>
        %sb = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<128x32xf32, #pk.memory_space<shared>>
        pk.store %bt, %sb [0, 0] sizes [128, 32] strides [1, 1] squeeze [] : tensor<128x32xf32>, <128x32xf32, #pk.memory_space<shared>>
        %sa = pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<64x32xf32, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 32] strides [1, 1] squeeze [] : tensor<64x32xf32>, <64x32xf32, #pk.memory_space<shared>>
        pk.commit_smem
        %v = pk.ref_transpose %sb perm [1, 0] : !pk.ref<128x32xf32, #pk.memory_space<shared>> -> !pk.ref<32x128xf32, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %v : tensor<64x128xf32>, !pk.ref<64x32xf32, #pk.memory_space<shared>>, !pk.ref<32x128xf32, #pk.memory_space<shared>> -> tensor<64x128xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x128xf32>
        scf.yield %w : tensor<64x128xf32>
      }
      gpu.return
    }

    // A staged ring comes on top of the buffer that stays; where the
    // staging of the kernel's largest block value (here 256 KiB) might
    // then not fit sm_90's 227 KiB, B is not staged: it keeps its global
    // load, and A alone gets a ring.
    // CHECK-LABEL: gpu.func @staged_without_room
    // CHECK-NOT: !pk.ref<2x32x128xf32
    // CHECK: pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<2x64x32xf32, #pk.memory_space<shared>>
    // CHECK-NOT: !pk.ref<2x32x128xf32
    // CHECK: scf.for
    // CHECK: pk.load %{{.*}} [%{{.*}}, 0] sizes [32, 128] strides [1, 1] squeeze [] : <4096x128xf32>
    gpu.func @staged_without_room(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.num_stages = 2 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
      %huge = arith.constant dense<0.000000e+00> : tensor<256x256xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c64, %n) offsets(%c0, %c0) block [64, 4096] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x4096xf32>
      %y = pkgpu.global_ref %arg1 sizes(%n, %c128) offsets(%c0, %c0) block [4096, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<4096x128xf32>
      %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %cst) -> (tensor<64x128xf32>) {
        %off = arith.muli %k, %c32 : index
        %a = pk.load %x [0, %off] sizes [64, 32] strides [1, 1] squeeze [] : <64x4096xf32> -> tensor<64x32xf32>
        %b = pk.load %y [%off, 0] sizes [32, 128] strides [1, 1] squeeze [] : <4096x128xf32> -> tensor<32x128xf32>
        %bt = pk.transpose %b perm [1, 0] : tensor<32x128xf32> -> tensor<128x32xf32>
        %sb = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<128x32xf32, #pk.memory_space<shared>>
        pk.store %bt, %sb [0, 0] sizes [128, 32] strides [1, 1] squeeze [] : tensor<128x32xf32>, <128x32xf32, #pk.memory_space<shared>>
        %sa = pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<64x32xf32, #pk.memory_space<shared>>
        pk.store %a, %sa [0, 0] sizes [64, 32] strides [1, 1] squeeze [] : tensor<64x32xf32>, <64x32xf32, #pk.memory_space<shared>>
        pk.commit_smem
        %v = pk.ref_transpose %sb perm [1, 0] : !pk.ref<128x32xf32, #pk.memory_space<shared>> -> !pk.ref<32x128xf32, #pk.memory_space<shared>>
        %d = pkgpu.wgmma_tile %acc, %sa, %v : tensor<64x128xf32>, !pk.ref<64x32xf32, #pk.memory_space<shared>>, !pk.ref<32x128xf32, #pk.memory_space<shared>> -> tensor<64x128xf32>
        %w = pkgpu.wgmma_wait_tile 0, %d : tensor<64x128xf32>
        scf.yield %w : tensor<64x128xf32>
      }
      gpu.return
    }
  }
}
