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
    points the CTA runs in sequence.
  }];
  let arguments = (ins I64Attr:$offset);
  let results = (outs AnyType:$ref);
  let assemblyFormat = "`offset` $offset attr-dict `:` qualified(type($ref))";
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
    initialized for the barrier type's arrival count, and for every thread
    of the CTA a word of phase parities per 32 barriers at
    `parity_offset` (word w of thread t at parity_offset + 4 (w T + t),
    T the CTA's threads): `pk.barrier_wait` waits for the phase after the
    last one the thread waited for, as Mosaic GPU does. Every thread of
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
}

include "backends/cuda/ir/PkGpuAsyncOps.td"

#endif // PKGPU_OPS_TD
