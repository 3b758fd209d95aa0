//===- PkGpuOps.td - pkgpu operations ----------------------*- tablegen -*-===//
#ifndef PKGPU_OPS_TD
#define PKGPU_OPS_TD

include "backends/cuda/ir/PkGpuAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def PkGpu_GlobalRefOp : PkGpu_Op<"global_ref", [Pure, AttrSizedOperandSegments]> {
  let summary = "a kernel Ref: one block of an array in global memory";
  let description = [{
    Binds a `!pk.ref` to the block of a row-major array at `base` whose
    dimensions are `sizes`, starting at element `offsets` (one per array
    dimension; negative for Element padding before the array). `block` is
    the block's extent per array dimension and `squeeze` lists the array
    dimensions the Ref drops (block size 1). Elements of the block outside
    the array read as padding and are never written.
  }];
  let arguments = (ins
    AnyType:$base,
    Variadic<Index>:$sizes,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$block,
    DenseI64ArrayAttr:$squeeze
  );
  let results = (outs AnyType:$ref);
  let assemblyFormat = [{
    $base `sizes` `(` $sizes `)` `offsets` `(` $offsets `)` `block` $block `squeeze` $squeeze
    attr-dict `:` qualified(type($base)) `->` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

def PkGpu_SharedRefOp : PkGpu_Op<"shared_ref", [Pure]> {
  let summary = "a kernel Ref in the CTA's shared memory (a scratch buffer)";
  let description = [{
    A scratch buffer at byte `offset` of the kernel's dynamic shared
    memory. It lives as long as the CTA, so it persists across the grid
    points the CTA runs in sequence. Row-major, or with `strips` (a
    swizzle in bytes: 0, 32, 64 or 128) each of its 2-D tiles (the last
    two dimensions) is stored as wgmma reads its operands:
    SharedLayout::strips of that swizzle (Layout.h), tiles one after
    another, at a multiple of the swizzle's period. A Ref of a
    `plgpu.RefUnion` names the byte where the union starts (`union`): its
    accesses are ordered with those of the union's other Refs, which share
    its memory.
  }];
  let arguments = (ins I64Attr:$offset, OptionalAttr<I64Attr>:$strips,
                       OptionalAttr<I64Attr>:$union_base);
  let results = (outs AnyType:$ref);
  let assemblyFormat = [{
    `offset` $offset (`strips` $strips^)? (`union` $union_base^)? attr-dict `:` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

def PkGpu_AsyncCopyOp : PkGpu_Op<"async_copy", []> {
  let summary = "starts copying a window of a global Ref into a shared buffer";
  let description = [{
    The window of `src` (a `pkgpu.global_ref`) that `pk.load` with the same
    offsets (clamped the same way) and the shape of `dst` would read is
    copied into the whole of `dst` (a `pkgpu.shared_ref`, or a view of
    one, row-major or stored as strips) without passing through
    registers: each thread of the CTA copies 16-byte pieces of its rows
    with `cp.async` (elements outside the array land as zeros), or element
    by element where a piece is cut by the array's edge or not 16-byte
    aligned. The copy belongs to the thread's current `cp.async` group:
    `nvvm.cp.async.commit.group` closes the group, and
    `nvvm.cp.async.wait.group` followed by a CTA barrier makes the data
    visible to every thread (a `fence.proxy.async` too, for wgmma).
    With `padded`, the window is the one a `padded` load would read: not
    shifted back inside the Ref, its elements past the Ref's end read
    from past it where the array goes on, zeros past the array's end.

    ```mlir
    pkgpu.async_copy %x [0, %k] into %slot
        : !pk.ref<128x4096xbf16>, !pk.ref<128x32xbf16, #pk.memory_space<shared>>
    ```
  }];
  let arguments = (ins
    AnyType:$src,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$static_offsets,
    AnyType:$dst,
    UnitAttr:$padded
  );
  let assemblyFormat = [{
    $src custom<DynamicIndexList>($offsets, $static_offsets) `into` $dst (`padded` $padded^)?
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def PkGpu_TmaCopyOp : PkGpu_Op<"tma_copy", [AttrSizedOperandSegments]> {
  let summary = "starts copying a window of a global Ref into a shared buffer by TMA";
  let description = [{
    The window of `src` that `pkgpu.async_copy` with the same offsets (and
    `padded`) would copy into the whole of `dst` (a 2-D wgmma operand
    buffer stored as strips, or a view of one), carried by TMA: the
    window's boxes `boxes` (per box, its start in every array dimension
    from the window's first element, then its first byte in `dst`) of the
    kernel's tensor map parameter number `tensor_map` (listed in
    `pkgpu.tensor_map_params`; pk-gpu-prefetch-operands adds it and says
    how the host encodes it). Elements outside the array land as zeros, as
    the tensor map's out-of-bounds fill. The CTA's first thread announces
    the copy's `bytes` on the mbarrier `barrier[barrier_indices]` and
    issues the boxes; readers wait for that barrier's phase
    (`pk.barrier_wait`). Every thread executes the op; whoever places it
    has made sure that every thread is done with what `dst` held (no
    barrier is emitted).

    With `usable` (an i1, the same in every thread and every copy through
    the tensor map), TMA copies only where it holds: the tensor map is one
    the runtime encodes only for some sizes (the manifest's `optional`),
    and passes as zeros for the others. Where it does not hold, the
    threads copy the window with cp.async as `pkgpu.async_copy` does
    (joining their current cp.async group), and the first thread arrives
    on the barrier without bytes, so that its phases count the same
    arrivals either way.

    ```mlir
    pkgpu.tma_copy %x [0, %k] into %slot, %landed[%s] tensor_map 3
        boxes [array<i64: 0, 0, 0>] bytes 16384
        : !pk.ref<128x4096xbf16>, !pk.ref<128x64xbf16, #pk.memory_space<shared>>,
          !pk.barrier<[4], arrivals 1>
    ```
  }];
  let arguments = (ins
    AnyType:$src,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$static_offsets,
    AnyType:$dst,
    AnyType:$barrier,
    Variadic<Index>:$barrier_indices,
    I64Attr:$tensor_map,
    ArrayAttr:$boxes,
    I64Attr:$bytes,
    UnitAttr:$padded,
    Optional<I1>:$usable
  );
  let assemblyFormat = [{
    $src custom<DynamicIndexList>($offsets, $static_offsets) `into` $dst `,` $barrier
    (`[` $barrier_indices^ `]`)? `tensor_map` $tensor_map `boxes` $boxes `bytes` $bytes
    (`padded` $padded^)? (`if` $usable^)? attr-dict `:` qualified(type($src)) `,` qualified(type($dst)) `,`
    qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def PkGpu_ConvertLayoutOp : PkGpu_Op<"convert_layout", [Pure]> {
  let summary = "moves a block value to another distributed layout";
  let arguments = (ins AnyRankedTensor:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def PkGpu_BarrierAllocOp : PkGpu_Op<"barrier_alloc", []> {
  let summary = "an array of mbarriers in the CTA's shared memory, initialized";
  let description = [{
    A `plgpu.Barrier` scratch allocation: `!pk.barrier` mbarriers of 8
    bytes each at byte `offset` of the kernel's dynamic shared memory, each
    initialized for the barrier type's arrival count, and for every warp
    of the CTA a word of phase parities per 32 barriers at
    `parity_offset` (word w of warp v at parity_offset + 4 (w W + v), W
    the CTA's warps; `parityBytes` in all): `pk.barrier_wait` waits for
    the phase after the last one the warp waited for, as Mosaic GPU does
    (its threads wait together). Every thread of
    the CTA reaches the op (shared scratch of a kernel with several Pallas
    threads is collective over them); thread 0 initializes the barriers
    and the CTA synchronizes before any use.
    ```mlir
    %b = pkgpu.barrier_alloc offset 1024 parity 1040 : !pk.barrier<[2], arrivals 1>
    ```
  }];
  let arguments = (ins I64Attr:$offset, I64Attr:$parity_offset);
  let results = (outs AnyType:$barrier);
  let assemblyFormat = [{
    `offset` $offset `parity` $parity_offset attr-dict `:` qualified(type($barrier))
  }];
  let extraClassDeclaration = [{
    /// The 32-bit parity words of `barriers` mbarriers for `ctaWarps`
    /// warps: one a warp per 32 barriers.
    static int64_t parityWords(int64_t barriers, int64_t ctaWarps) {
      return (barriers + 31) / 32 * ctaWarps;
    }
    static int64_t parityBytes(int64_t barriers, int64_t ctaWarps) {
      return 4 * parityWords(barriers, ctaWarps);
    }
    /// Where an array of `barriers` mbarriers goes at or after byte
    /// `top`: the barriers 8-aligned at `offset`, the parity words right
    /// after them at `parity`, and `end` the first byte past both.
    struct Placement {
      int64_t offset, parity, end;
    };
    static Placement place(int64_t top, int64_t barriers, int64_t ctaWarps) {
      int64_t offset = (top + 7) / 8 * 8, parity = offset + 8 * barriers;
      return {offset, parity, parity + parityBytes(barriers, ctaWarps)};
    }
  }];
}

def PkGpu_AccumulatorOp : PkGpu_Op<"accumulator", []> {
  let summary = "a wgmma accumulator Ref (plgpu.ACC), before it becomes values";
  let description = [{
    A `plgpu.ACC` scratch allocation: a Ref in registers, zero at first.
    The outline stage replaces every access to it by SSA values
    (`pkgpu.wgmma_tile`, `pkgpu.wgmma_wait_tile`, loop-carried through
    scf.for and scf.if) and erases it.
  }];
  let results = (outs AnyType:$ref);
  let assemblyFormat = "attr-dict `:` qualified(type($ref))";
}

def PkGpu_WgmmaTileOp : PkGpu_Op<"wgmma_tile", []> {
  let summary = "acc + a @ b on one warpgroup's tensor cores, as block values";
  let description = [{
    `plgpu.wgmma(acc, a, b)` after the accumulator became values: the
    result is `accumulator + a @ b`, for `a` (M x K) and `b` (K x N) in
    shared memory stored as `pkgpu.shared_ref ... strips` tiles. Issued
    asynchronously: the result may be read only after a
    `pkgpu.wgmma_wait_tile` has returned it.

    With `columns` = [first, count] the product goes into those columns of
    the accumulator alone (`plgpu.wgmma(acc.at[:, a:b], ...)`): B is
    K x count, and the other columns pass through. Both are multiples of
    8, so that the window is whole registers of every row tile.
  }];
  let arguments = (ins AnyRankedTensor:$accumulator, AnyType:$a, AnyType:$b,
                       OptionalAttr<DenseI64ArrayAttr>:$columns);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $accumulator `,` $a `,` $b attr-dict `:` type($accumulator) `,` qualified(type($a)) `,`
    qualified(type($b)) `->` type($result)
  }];
}

def PkGpu_WgmmaWaitTileOp : PkGpu_Op<"wgmma_wait_tile", [AllTypesMatch<["accumulators", "results"]>]> {
  let summary = "waits for all but `pending` wgmma groups; returns the accumulators";
  let arguments = (ins I64Attr:$pending, Variadic<AnyRankedTensor>:$accumulators);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$pending (`,` $accumulators^ `:` type($accumulators))? attr-dict";
}

include "backends/cuda/ir/PkGpuAsyncOps.td"
include "backends/cuda/ir/PkGpuSemaphoreOps.td"
include "backends/cuda/ir/PkGpuTensorMemoryOps.td"

#endif // PKGPU_OPS_TD
