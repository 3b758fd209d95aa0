// RUN: %pk-opt --pk-gpu-lower-async --split-input-file %s | FileCheck %s
// TMA copies become nvvm.cp.async.bulk.tensor with the coordinates
// innermost first, the destination in the cluster's shared window and the
// multicast mask passed on.

gpu.module @kernels {
  // CHECK-LABEL: gpu.func @tma
  gpu.func @tma(%map: !llvm.ptr, %row: i32, %col: i32, %mask: i16) kernel
      attributes {known_block_size = array<i32: 128, 1, 1>, pkgpu.tensor_map_params = array<i64: 0>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    %bar = llvm.getelementptr %smem[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK: %[[DST:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %arg0, %{{.*}}, box[%arg2, %arg1] : !llvm.ptr<7>, !llvm.ptr
    pkgpu.tma_load %map[%row, %col], %smem, %bar : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%arg2, %arg1] multicast_mask = %arg3
    pkgpu.tma_load %map[%row, %col], %smem, %bar multicast %mask : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %arg0, %{{.*}}, box[%arg2, %arg1] : !llvm.ptr, <3>
    pkgpu.tma_store %smem, %map[%row, %col] : !llvm.ptr<3>, !llvm.ptr
    // CHECK-NOT: pkgpu.tma
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}

// -----

// A 64 x 64 x 32 bf16 wgmma on one warpgroup: two K steps of
// m64n64k16, A K-major and B N-major (transposed), both 128B-swizzled.
// The descriptors: start address >> 4, LBO 1 (K-major, swizzled: unused)
// or the 4 KiB strip of 32 rows (MN-major), SBO 1024 (8 rows of 128 bytes), mode 1
// (128B) in bits 62-63. A's second K step starts 32 bytes on (2 encoded);
// B's 16 rows of 128 bytes on (128 encoded).
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @mma
  gpu.func @mma(%acc: vector<32xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    %b = llvm.getelementptr %smem[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK-DAG: %[[A_BITS:.*]] = arith.constant 4611686293305360384 : i64
    // CHECK-DAG: %[[B_BITS:.*]] = arith.constant 4611686293322072064 : i64
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: %[[S0:.*]] = nvvm.wgmma.mma_async %[[DA0:.*]], %[[DB0:.*]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
    // CHECK: arith.addi %{{.*}}, %c2_i64
    // CHECK: arith.addi %{{.*}}, %c128_i64
    // CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[S0]], <m = 64, n = 64, k = 16>
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    %d = pkgpu.wgmma %acc, %smem, %b {m = 64, n = 64, k = 32, a_type = bf16, b_type = bf16, b_transposed}
        : vector<32xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xf32>
    // CHECK: nvvm.wgmma.wait.group.sync.aligned 0
    // CHECK: llvm.inline_asm has_side_effects "", "=f,=f,{{.*}},0,1,{{.*}},31"
    %r = pkgpu.wgmma_wait 0, %d : vector<32xf32>
    // CHECK-NOT: pkgpu.wgmma
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}

// -----

// Two warpgroups share B and take 64-row slices of A: the second
// warpgroup's A descriptor is 64 rows of 128 bytes (8 KiB, 512 encoded)
// on. Integer accumulators are i32; without accumulate the first K step
// scales D by zero.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @warpgroups
  gpu.func @warpgroups(%acc: vector<32xi32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    %b = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK: %[[WG:[a-zA-Z0-9_]+]], %{{.*}} = gpu.shuffle idx
    // CHECK: %[[G:.*]] = arith.remui %[[WG]], %c2_i32
    // CHECK: %[[WG64:.*]] = arith.extui %[[G]] : i32 to i64
    // CHECK: arith.muli %[[WG64]], %c512_i64
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<s32>, <zero>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
    %d = pkgpu.wgmma %acc, %smem, %b {m = 128, n = 64, k = 64, a_type = si8, b_type = si8, accumulate = false}
        : vector<32xi32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xi32>
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}

// -----

// A in registers (16-bit values in wgmma's A fragments): NVVM has no op
// for it, so each m64nNk16 is inline PTX with the thread's four 32-bit
// words of the K step's A slice (words [4 s, 4 s + 4) of the bitcast
// vector) and B's descriptor; B is K-major (trans-b 0). The accumulator
// and A's words pass through empty tied asm before the fence, so that no
// register is written between the fence and the first wgmma (ptxas would
// serialize every wgmma of the kernel, C7520). The first K step without
// accumulate scales D by zero.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @registers
  gpu.func @registers(%acc: vector<64xf32>, %a: vector<16xbf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    // CHECK: %[[WORDS:.*]] = llvm.bitcast %{{.*}} : vector<16xbf16> to vector<8xi32>
    // CHECK: llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,=r,=r,=r,=r,0,1,2,3,4,5,6,7"
    // CHECK: llvm.inline_asm has_side_effects "", "=f,{{.*}},63"
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 0, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 0;\0A}", "=f,{{.*}},63,r,r,r,r,l"
    // CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16{{.*}}$132, p, 1, 1, 0;\0A}"
    // CHECK-NOT: wgmma.mma_async
    // CHECK: nvvm.wgmma.commit.group.sync.aligned
    %d = pkgpu.wgmma %acc, %a, %smem {m = 64, n = 128, k = 32, a_type = bf16, b_type = bf16, accumulate = false}
        : vector<64xf32>, vector<16xbf16>, !llvm.ptr<3> -> vector<64xf32>
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}

// -----

// N that is not a power of two: the accumulator's registers are laid out
// for the next one (24 -> 32 columns, 16 registers per 64-row tile), and
// each row tile's wgmma takes the first n / 2 = 12 of its 16; the other 4
// pass through to the result, read before the fence with the rest.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @padded_n
  gpu.func @padded_n(%acc: vector<32xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    %b = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK: %[[P12:.*]] = vector.extract %{{.*}}[12] : f32 from vector<32xf32>
    // CHECK: %[[P31:.*]] = vector.extract %{{.*}}[31] : f32 from vector<32xf32>
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 24, k = 16>, {{.*}} -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 24, k = 16>
    // CHECK: vector.from_elements %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[P12]], {{.*}}, %[[P31]] : vector<32xf32>
    %d = pkgpu.wgmma %acc, %smem, %b {m = 128, n = 24, k = 16, a_type = f16, b_type = f16}
        : vector<32xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xf32>
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}

// -----

// A window of an accumulator's columns (plgpu.wgmma on acc.at[:, 64:]):
// the registers hold 64 x 128 (64 per thread); columns [64, 128) are
// registers [32, 64), which the m64n64 wgmma takes; [0, 32) pass through.
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @column_window
  gpu.func @column_window(%acc: vector<64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %smem = llvm.mlir.addressof @pk_shared_memory : !llvm.ptr<3>
    %b = llvm.getelementptr %smem[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK: %[[R0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<64xf32>
    // CHECK: %[[R31:.*]] = vector.extract %{{.*}}[31] : f32 from vector<64xf32>
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
    // CHECK: vector.from_elements %[[R0]], {{.*}}, %[[R31]], %{{[0-9]+}}, {{.*}} : vector<64xf32>
    %d = pkgpu.wgmma %acc, %smem, %b {m = 64, n = 64, k = 16, a_type = f16, b_type = f16, acc_n = 128, acc_column = 64}
        : vector<64xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<64xf32>
    gpu.return
  }
  llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
}
