// RUN: %pk-opt --pk-gpu-wgmma-dots %s | FileCheck %s
// Dots that fit a warpgroup matrix multiply get their operands stored
// into swizzled shared buffers after the kernel's scratch (at a multiple
// of 1024 bytes), a fence, pkgpu.wgmma_tile and a wait. `acc + dot` in a
// loop accumulates in place; other dots start from zeros and round after.

module attributes {gpu.container_module} {
  gpu.module @pk_kernels {
    // CHECK-LABEL: gpu.func @k_loop
    // CHECK-SAME: pkgpu.scratch_bytes = 17408
    gpu.func @k_loop(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 16 : i64} {
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
      %x = pkgpu.global_ref %arg0 sizes(%c128, %c128) offsets(%c0, %c0) block [128, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x128xbf16>
      %y = pkgpu.global_ref %arg1 sizes(%c128, %c128) offsets(%c0, %c0) block [128, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x128xbf16>
      // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<128x128xf32>)
      %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %cst) -> (tensor<128x128xf32>) {
        %a = pk.load %x [0, %k] sizes [128, 32] strides [1, 1] squeeze [] : <128x128xbf16> -> tensor<128x32xbf16>
        %b = pk.load %y [%k, 0] sizes [32, 128] strides [1, 1] squeeze [] : <128x128xbf16> -> tensor<32x128xbf16>
        // Rows of 64 bytes (A, K-major) and 256 bytes (B, N-major).
        // CHECK: %[[A:.*]] = pkgpu.shared_ref offset 1024 strips 64 : !pk.ref<128x32xbf16, #pk.memory_space<shared>>
        // CHECK: pk.store %{{.*}}, %[[A]] [0, 0] sizes [128, 32]
        // CHECK: %[[B:.*]] = pkgpu.shared_ref offset 9216 strips 128 : !pk.ref<32x128xbf16, #pk.memory_space<shared>>
        // CHECK: pk.store %{{.*}}, %[[B]] [0, 0] sizes [32, 128]
        // CHECK: pk.commit_smem
        // CHECK: %[[D:.*]] = pkgpu.wgmma_tile %[[ACC]], %[[A]], %[[B]]
        // CHECK: %[[W:.*]] = pkgpu.wgmma_wait_tile 0, %[[D]]
        // CHECK-NOT: arith.addf
        // CHECK: scf.yield %[[W]]
        %d = pk.dot %a, %b : tensor<128x32xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
        %s = arith.addf %acc, %d : tensor<128x128xf32>
        scf.yield %s : tensor<128x128xf32>
      }
      gpu.return
    }

    // A transposed right operand is read through a transposed view (wgmma
    // takes it K-major); the f16 result is rounded from the f32 wgmma.
    // CHECK-LABEL: gpu.func @transposed_f16
    gpu.func @transposed_f16(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xf16>
      %a = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xf16> -> tensor<64x64xf16>
      // CHECK: %[[B:.*]] = pkgpu.shared_ref offset 8192 strips 128 : !pk.ref<32x64xf16
      // CHECK: %[[BT:.*]] = pk.ref_transpose %[[B]] perm [1, 0]
      // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
      // CHECK: pkgpu.wgmma_tile %[[Z]], %{{.*}}, %[[BT]]
      // CHECK: %[[W:.*]] = pkgpu.wgmma_wait_tile 0
      // CHECK: arith.truncf %[[W]] : tensor<64x32xf32> to tensor<64x32xf16>
      %bt = pk.load %x [0, 0] sizes [32, 64] strides [1, 1] squeeze [] : <64x64xf16> -> tensor<32x64xf16>
      %d = pk.dot %a, %bt {transpose_rhs} : tensor<64x64xf16>, tensor<32x64xf16> -> tensor<64x32xf16>
      gpu.return
    }

    // What wgmma cannot run keeps pk.dot (mma.sync): 48 rows are not a
    // warpgroup's 64, f32 operands are not 16-bit, and rows of 16 bytes
    // (N = 8) have no swizzle.
    // CHECK-LABEL: gpu.func @kept
    // CHECK-NOT: pkgpu.wgmma_tile
    // CHECK-COUNT-3: pk.dot
    // CHECK-NOT: pkgpu.wgmma_tile
    // CHECK: gpu.return
    gpu.func @kept(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xbf16>
      %a48 = pk.load %x [0, 0] sizes [48, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<48x64xbf16>
      %b = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x64xbf16>
      %d0 = pk.dot %a48, %b : tensor<48x64xbf16>, tensor<64x64xbf16> -> tensor<48x64xf32>
      %f = arith.constant dense<1.0> : tensor<64x64xf32>
      %d1 = pk.dot %f, %f : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      %b8 = pk.load %x [0, 0] sizes [64, 8] strides [1, 1] squeeze [] : <64x64xbf16> -> tensor<64x8xbf16>
      %d2 = pk.dot %b, %b8 : tensor<64x64xbf16>, tensor<64x8xbf16> -> tensor<64x8xf32>
      gpu.return
    }
    // An accumulator that does not fit the threads' registers beside the
    // operands' descriptors keeps pk.dot (whose per-thread code ptxas can
    // spill): 256 x 256 f32 over 16 warps is 128 registers a thread, all
    // that 512 threads may have; 128 x 256 over 8 warps is as many of 255.
    // CHECK-LABEL: gpu.func @accumulator_too_large
    // CHECK-NOT: pkgpu.wgmma_tile
    // CHECK: pk.dot
    // CHECK: gpu.return
    gpu.func @accumulator_too_large(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 512, 1, 1>, pkgpu.num_warps = 16 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %x = pkgpu.global_ref %arg0 sizes(%c256, %c256) offsets(%c0, %c0) block [256, 256] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x256xbf16>
      %a = pk.load %x [0, 0] sizes [256, 64] strides [1, 1] squeeze [] : <256x256xbf16> -> tensor<256x64xbf16>
      %b = pk.load %x [0, 0] sizes [64, 256] strides [1, 1] squeeze [] : <256x256xbf16> -> tensor<64x256xbf16>
      %d = pk.dot %a, %b : tensor<256x64xbf16>, tensor<64x256xbf16> -> tensor<256x256xf32>
      gpu.return
    }
    // CHECK-LABEL: gpu.func @accumulator_fits
    // CHECK: pkgpu.wgmma_tile
    gpu.func @accumulator_fits(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %x = pkgpu.global_ref %arg0 sizes(%c256, %c256) offsets(%c0, %c0) block [256, 256] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x256xbf16>
      %a = pk.load %x [0, 0] sizes [128, 64] strides [1, 1] squeeze [] : <256x256xbf16> -> tensor<128x64xbf16>
      %b = pk.load %x [0, 0] sizes [64, 256] strides [1, 1] squeeze [] : <256x256xbf16> -> tensor<64x256xbf16>
      %d = pk.dot %a, %b : tensor<128x64xbf16>, tensor<64x256xbf16> -> tensor<128x256xf32>
      gpu.return
    }
    // f32 operands that may be TF32 (allow_tf32) run as a tf32 wgmma,
    // which reads both operands K-major: A as loaded, B ([K, N], N-major
    // as loaded) transposed on its way into shared memory and read through
    // a transposed view. `x @ x` stores the two differently.
    // CHECK-LABEL: gpu.func @tf32
    // CHECK: %[[A:.*]] = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x32xf32
    // CHECK-NEXT: pk.store %{{.*}}, %[[A]]
    // CHECK-NEXT: %[[BT:.*]] = pk.transpose %{{.*}} perm [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
    // CHECK-NEXT: %[[B:.*]] = pkgpu.shared_ref offset 8192 strips 128 : !pk.ref<64x32xf32
    // CHECK-NEXT: pk.store %[[BT]], %[[B]]
    // CHECK-NEXT: pk.commit_smem
    // CHECK-NEXT: %[[V:.*]] = pk.ref_transpose %[[B]] perm [1, 0]
    // CHECK: pkgpu.wgmma_tile %{{.*}}, %[[A]], %[[V]]
    // CHECK: %[[S:.*]] = pk.load %{{.*}} sizes [64, 64]
    // CHECK: pk.store %[[S]],
    // CHECK-NEXT: pk.transpose %[[S]] perm [1, 0] : tensor<64x64xf32>
    // CHECK-NOT: pk.dot
    // CHECK: gpu.return
    gpu.func @tf32(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %x = pkgpu.global_ref %arg0 sizes(%c64, %c64) offsets(%c0, %c0) block [64, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x64xf32>
      %a = pk.load %x [0, 0] sizes [64, 32] strides [1, 1] squeeze [] : <64x64xf32> -> tensor<64x32xf32>
      %b = pk.load %x [0, 0] sizes [32, 64] strides [1, 1] squeeze [] : <64x64xf32> -> tensor<32x64xf32>
      %d = pk.dot %a, %b {allow_tf32} : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
      %s = pk.load %x [0, 0] sizes [64, 64] strides [1, 1] squeeze [] : <64x64xf32> -> tensor<64x64xf32>
      %e = pk.dot %s, %s {allow_tf32} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      gpu.return
    }
    // A dot whose operands do not fit shared memory (the Pallas design
    // doc's 128 x 128 by 128 x 256 f32 blocks: 192 KiB) becomes a loop over
    // K windows of 32 (48 KiB), each loaded in the loop and accumulated in
    // place into `acc`; the windows' offsets add the loads' own.
    // CHECK-LABEL: gpu.func @split_along_k
    // CHECK: %[[ACC:.*]] = arith.constant dense<1.000000e+00>
    // CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %[[ACC]])
    // CHECK: %[[AK:.*]] = arith.addi %[[K]], %{{.*}} : index
    // CHECK: pk.load %{{.*}} [0, %[[AK]]] sizes [128, 32]
    // CHECK: %[[BK:.*]] = arith.addi %[[K]], %{{.*}} : index
    // CHECK: pk.load %{{.*}} [%[[BK]], 0] sizes [32, 256]
    // CHECK: %[[D:.*]] = pkgpu.wgmma_tile %[[C]],
    // CHECK: %[[W:.*]] = pkgpu.wgmma_wait_tile 0, %[[D]]
    // CHECK: scf.yield %[[W]]
    // CHECK: pk.store %[[R]]
    // CHECK-NOT: pk.dot
    gpu.func @split_along_k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, pkgpu.num_warps = 8 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %x = pkgpu.global_ref %arg0 sizes(%c256, %c256) offsets(%c0, %c0) block [128, 256] squeeze [] : !llvm.ptr<1> -> !pk.ref<128x256xf32>
      %y = pkgpu.global_ref %arg1 sizes(%c256, %c256) offsets(%c0, %c0) block [256, 256] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x256xf32>
      %acc = arith.constant dense<1.0> : tensor<128x256xf32>
      %a = pk.load %x [0, 128] sizes [128, 128] strides [1, 1] squeeze [] : <128x256xf32> -> tensor<128x128xf32>
      %b = pk.load %y [128, 0] sizes [128, 256] strides [1, 1] squeeze [] : <256x256xf32> -> tensor<128x256xf32>
      %d = pk.dot %a, %b {allow_tf32} : tensor<128x128xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
      %s = arith.addf %acc, %d : tensor<128x256xf32>
      pk.store %s, %x [0, 0] sizes [128, 256] strides [1, 1] squeeze [] : tensor<128x256xf32>, <128x256xf32>
      gpu.return
    }
    // `q @ k.T` (flash attention's scores): the transpose is the dot's
    // flag, so `k`'s window is stored as loaded (and can be copied); `q`,
    // which the loop does not change, is stored once before it into a
    // buffer of its own (before the region the loop's operands share).
    // CHECK-LABEL: gpu.func @scores
    // CHECK-SAME: pkgpu.scratch_bytes = 32768
    // CHECK: %[[Q:.*]] = pk.load
    // CHECK-NEXT: %[[QS:.*]] = pkgpu.shared_ref offset 0 strips 128 : !pk.ref<64x128xbf16
    // CHECK-NEXT: pk.store %[[Q]], %[[QS]]
    // CHECK-NEXT: pk.commit_smem
    // CHECK: scf.for
    // CHECK: %[[K:.*]] = pk.load
    // CHECK-NOT: pk.transpose
    // CHECK: %[[KS:.*]] = pkgpu.shared_ref offset 16384 strips 128 : !pk.ref<64x128xbf16
    // CHECK-NEXT: pk.store %[[K]], %[[KS]]
    // CHECK-NEXT: pk.commit_smem
    // CHECK-NEXT: %[[KT:.*]] = pk.ref_transpose %[[KS]] perm [1, 0]
    // CHECK: pkgpu.wgmma_tile %{{.*}}, %[[QS]], %[[KT]]
    gpu.func @scores(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %qr = pkgpu.global_ref %arg0 sizes(%c64, %c128) offsets(%c0, %c0) block [64, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<64x128xbf16>
      %kr = pkgpu.global_ref %arg1 sizes(%c256, %c128) offsets(%c0, %c0) block [256, 128] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x128xbf16>
      %q = pk.load %qr [0, 0] sizes [64, 128] strides [1, 1] squeeze [] : <64x128xbf16> -> tensor<64x128xbf16>
      %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
        %off = arith.muli %j, %c64 : index
        %k = pk.load %kr [%off, 0] sizes [64, 128] strides [1, 1] squeeze [] : <256x128xbf16> -> tensor<64x128xbf16>
        %kt = pk.transpose %k perm [1, 0] : tensor<64x128xbf16> -> tensor<128x64xbf16>
        %s = pk.dot %q, %kt : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xf32>
        %m = arith.maximumf %acc, %s : tensor<64x64xf32>
        scf.yield %m : tensor<64x64xf32>
      }
      gpu.return
    }

    // A 16-bit A the kernel computes in the loop (flash attention's
    // `p.astype(bf16) @ v`) stays in registers: only B is stored, at the
    // region's start, and the wgmma takes the value itself.
    // CHECK-LABEL: gpu.func @computed_a
    // CHECK: scf.for
    // CHECK: %[[P:.*]] = arith.truncf
    // CHECK-NOT: pk.store %[[P]]
    // CHECK: %[[VS:.*]] = pkgpu.shared_ref offset 1024 strips 128 : !pk.ref<64x64xbf16
    // CHECK-NEXT: pk.store %{{.*}}, %[[VS]]
    // CHECK-NEXT: pk.commit_smem
    // CHECK-NEXT: pkgpu.wgmma_tile %{{.*}}, %[[P]], %[[VS]] : tensor<64x64xf32>, tensor<64x64xbf16>
    gpu.func @computed_a(%arg0: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.num_warps = 4 : i64, pkgpu.scratch_bytes = 16 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %zero = arith.constant dense<0.0> : tensor<64x64xf32>
      %vr = pkgpu.global_ref %arg0 sizes(%c256, %c64) offsets(%c0, %c0) block [256, 64] squeeze [] : !llvm.ptr<1> -> !pk.ref<256x64xbf16>
      %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
        %off = arith.muli %j, %c64 : index
        %e = math.exp %acc : tensor<64x64xf32>
        %p = arith.truncf %e : tensor<64x64xf32> to tensor<64x64xbf16>
        %v = pk.load %vr [%off, 0] sizes [64, 64] strides [1, 1] squeeze [] : <256x64xbf16> -> tensor<64x64xbf16>
        %d = pk.dot %p, %v : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
        %s = arith.addf %acc, %d : tensor<64x64xf32>
        scf.yield %s : tensor<64x64xf32>
      }
      gpu.return
    }
  }
}
