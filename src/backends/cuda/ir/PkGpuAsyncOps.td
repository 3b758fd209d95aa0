//===- PkGpuAsyncOps.td - Hopper's asynchronous ops --------*- tablegen -*-===//
//
// Thread-level ops for the Hopper machinery whose lowering to NVVM is more
// than a rename: TMA copies (coordinates in pkc's order, the shared
// memory windows, cluster multicast) and warpgroup matrix multiplies over
// whole tiles (matrix descriptors, instruction tiling, the accumulator's
// registers). pk-gpu-lower-async lowers them in stage 03 (LowerAsync.cpp);
// the rest of the machinery (mbarriers, bulk groups, proxy fences,
// setmaxnreg) is emitted directly as NVVM ops by the builders in Async.h.
//
//===----------------------------------------------------------------------===//
#ifndef PKGPU_ASYNC_OPS_TD
#define PKGPU_ASYNC_OPS_TD

include "backends/cuda/ir/PkGpuBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def PkGpu_TmaLoadOp : PkGpu_Op<"tma_load", [AttrSizedOperandSegments]> {
  let summary = "starts a TMA copy of a box from global to shared memory";
  let description = [{
    Copies the box of `tensor_map` whose first element is at
    `coordinates` (element indices, one per dimension, outermost first as
    in the manifest) to shared memory at `destination`, asynchronously.
    `tensor_map` is a kernel parameter listed in the kernel's
    `pkgpu.tensor_map_params`: a CUtensorMap the runtime encodes (the
    manifest's `tensor_map` argument says how). Coordinates are signed: a
    box may start before the array or run past its end, and those elements
    take the tensor map's out-of-bounds fill. The box lands as the tensor
    map's swizzle lays it out (SharedLayout::tma) and its bytes complete a
    transaction on the mbarrier at `barrier`: some thread must announce
    them (mbarrier arrive.expect_tx), and readers wait for the barrier's
    phase. One thread issues it.

    With `multicast_mask`, every CTA of the cluster whose rank's bit is set
    receives the box at the same shared memory offset, and the transaction
    completes on its barrier at the same offset.

    ```mlir
    pkgpu.tma_load %map[%row, %col], %smem, %bar : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    pkgpu.tma_load %map[%row, %col], %smem, %bar multicast %mask
        : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr<3>
    ```
  }];
  let arguments = (ins
    AnyType:$tensor_map,
    Variadic<I32>:$coordinates,
    AnyType:$destination,
    AnyType:$barrier,
    Optional<I16>:$multicast_mask
  );
  let assemblyFormat = [{
    $tensor_map `[` $coordinates `]` `,` $destination `,` $barrier
    (`multicast` $multicast_mask^)? attr-dict `:`
    type($tensor_map) `,` type($destination) `,` type($barrier)
  }];
  let hasVerifier = 1;
}

def PkGpu_TmaStoreOp : PkGpu_Op<"tma_store", []> {
  let summary = "starts a TMA copy of a box from shared to global memory";
  let description = [{
    Copies the box of `tensor_map` at `coordinates` (outermost first) from
    shared memory at `source`, laid out as the tensor map's swizzle says,
    to global memory, asynchronously; elements outside the array are not
    written. The copy joins the issuing thread's current bulk group: the
    thread commits the group (`nvvm.cp.async.bulk.commit.group`) and waits
    for it (`nvvm.cp.async.bulk.wait_group`, with `read` to wait only
    until the source may be overwritten). Shared memory written by ordinary
    stores must be fenced (`nvvm.fence.proxy` async.shared) and made
    visible to the issuing thread (a barrier) first.

    ```mlir
    pkgpu.tma_store %smem, %map[%row, %col] : !llvm.ptr<3>, !llvm.ptr
    ```
  }];
  let arguments = (ins AnyType:$source, AnyType:$tensor_map, Variadic<I32>:$coordinates);
  let assemblyFormat = [{
    $source `,` $tensor_map `[` $coordinates `]` attr-dict `:` type($source) `,` type($tensor_map)
  }];
  let hasVerifier = 1;
}

def PkGpu_WgmmaOp : PkGpu_Op<"wgmma", []> {
  let summary = "a warpgroup matrix multiply-accumulate over whole tiles";
  let description = [{
    `result = accumulator + a @ b` (or `a @ b` with `accumulate = false`)
    for an `m` x `k` tile A and a `k` x `n` tile B, issued asynchronously
    on the tensor cores by every warpgroup of the CTA: each warpgroup
    computes its 64-row slices of the `m` rows. The registers hold the
    accumulator in the wgmma layout (Layout::wgmmaAccumulator(m, n,
    warps)); `result` is not valid until a `pkgpu.wgmma_wait` has waited
    for it. Every thread of the CTA executes the op, with the same
    operands.

    A and B are in shared memory at `a` and `b` (`!llvm.ptr<3>`, at
    multiples of the swizzle's period), each laid out as
    SharedLayout::strips: an operand stored K-major (A as m x k, B as n x
    k, K innermost) or, with `a_transposed` / `b_transposed`, MN-major (A
    as k x m, B as k x n), in strips one swizzle span wide (`a_swizzle`,
    `b_swizzle`: 0, 32, 64 or 128 bytes) — what TMA boxes of those
    shapes, one per strip, write.

    Element types (`a_type` = `b_type` except for fp8): f16 or bf16 with
    f32 accumulators, tf32 with f32 (K-major only), f8E4M3FN / f8E5M2 with
    f32 (K-major only), si8 / ui8 with i32 (K-major only). `m` is a multiple
    of 64 per warpgroup, `n` a multiple of 8 from 8 to 256 (the registers
    hold it padded to the next power of two, as Layout pads), `k` a multiple
    of the instruction's K (16 for 16-bit types, 8 for tf32, 32 for 8-bit
    types).

    With `acc_n`, the registers hold an m x `acc_n` accumulator of which
    the op computes the `n` columns from `acc_column` on (a multiple of 8:
    whole registers); the others pass through.

    The op fences the accumulator registers (wgmma.fence), issues one
    wgmma.mma_async per 64-row slice and K step, and commits them as one
    wgmma group.

    ```mlir
    %d = pkgpu.wgmma %acc, %a, %b {m = 64, n = 128, k = 64, a_type = bf16, b_type = bf16,
                                   a_swizzle = 128, b_swizzle = 128, b_transposed}
        : vector<64xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<64xf32>
    ```
  }];
  let arguments = (ins
    VectorOfRankAndType<[1], [F32, I32]>:$accumulator,
    AnyType:$a,
    AnyType:$b,
    I64Attr:$m,
    I64Attr:$n,
    I64Attr:$k,
    TypeAttr:$a_type,
    TypeAttr:$b_type,
    DefaultValuedAttr<I64Attr, "128">:$a_swizzle,
    DefaultValuedAttr<I64Attr, "128">:$b_swizzle,
    UnitAttr:$a_transposed,
    UnitAttr:$b_transposed,
    DefaultValuedAttr<BoolAttr, "true">:$accumulate,
    OptionalAttr<I64Attr>:$acc_n,
    DefaultValuedAttr<I64Attr, "0">:$acc_column
  );
  let results = (outs VectorOfRankAndType<[1], [F32, I32]>:$result);
  let assemblyFormat = [{
    $accumulator `,` $a `,` $b attr-dict `:` type($accumulator) `,` type($a) `,` type($b)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Warps of the CTA, from the accumulator's registers per thread.
    unsigned numWarps();
    /// The columns of the whole accumulator the registers hold (acc_n, or n).
    int64_t accumulatorColumns() { return getAccN() ? *getAccN() : getN(); }
  }];
}

def PkGpu_WgmmaWaitOp : PkGpu_Op<"wgmma_wait", [AllTypesMatch<["accumulators", "results"]>]> {
  let summary = "waits for all but the most recent wgmma groups";
  let description = [{
    Waits until at most `pending` of the warpgroup's wgmma groups are
    still running, and returns the accumulators of the ones that finished:
    only the results of this op may be read (LLVM must not move a read of
    the registers above the wait, so the lowering passes them through an
    empty inline-asm barrier).

    ```mlir
    %r = pkgpu.wgmma_wait 0, %d : vector<64xf32>
    ```
  }];
  let arguments = (ins I64Attr:$pending, Variadic<AnyVectorOfNonZeroRank>:$accumulators);
  let results = (outs Variadic<AnyVectorOfNonZeroRank>:$results);
  let assemblyFormat = "$pending (`,` $accumulators^ `:` type($accumulators))? attr-dict";
}

#endif // PKGPU_ASYNC_OPS_TD
