//===- PkGpuTensorMemoryOps.td - TMEM of Mosaic GPU kernels -*- tablegen -*-===//
//
// Where a Blackwell kernel's plgpu.TMEM buffers live. As in Mosaic GPU, a
// kernel allocates its tensor memory once, when it starts: one warp asks
// for the columns every scope of the kernel needs at once (tcgen05.alloc
// writes their address into shared memory, where every thread reads it)
// and gives them back before the kernel ends. Each TMEM buffer is a range
// of those columns.
//
//===----------------------------------------------------------------------===//
#ifndef PKGPU_TENSOR_MEMORY_OPS_TD
#define PKGPU_TENSOR_MEMORY_OPS_TD

include "backends/cuda/ir/PkGpuBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def PkGpu_TmemAllocOp : PkGpu_Op<"tmem_alloc", []> {
  let summary = "the kernel's tensor memory: columns for the CTA";
  let description = [{
    `columns` (a power of two from 32 to 512) columns of tensor memory, at
    the start of the kernel. Every thread of the CTA reaches the op: warp 0
    allocates them (tcgen05.alloc), writing their address into the 4 bytes
    at byte `slot` of dynamic shared memory, and gives up the right to
    allocate more; after a CTA barrier every thread reads the address,
    the result (lane 16 bits, column 16 bits).

    ```mlir
    %tmem = pkgpu.tmem_alloc slot 1024 columns 256 : i32
    ```
  }];
  let arguments = (ins I64Attr:$slot, I64Attr:$columns);
  let results = (outs I32:$address);
  let assemblyFormat = "`slot` $slot `columns` $columns attr-dict `:` type($address)";
}

def PkGpu_TmemRefOp : PkGpu_Op<"tmem_ref", [Pure]> {
  let summary = "a plgpu.TMEM buffer: columns of the kernel's tensor memory";
  let description = [{
    A scoped `plgpu.TMEM((128, n), dtype)` allocation: row i of the buffer
    in lane i, its columns from `column` on in the tensor memory at
    `address` (a `pkgpu.tmem_alloc`).

    ```mlir
    %acc = pkgpu.tmem_ref %tmem column 128 : !pk.ref<128x128xf32, #pk.memory_space<tmem>>
    ```
  }];
  let arguments = (ins I32:$address, I64Attr:$column);
  let results = (outs AnyType:$ref);
  let assemblyFormat = "$address `column` $column attr-dict `:` qualified(type($ref))";
}

def PkGpu_TmemDeallocOp : PkGpu_Op<"tmem_dealloc", []> {
  let summary = "gives the kernel's tensor memory back";
  let description = [{
    Every thread of the CTA reaches the op when the kernel is done: after
    a CTA barrier (ordered after the tensor core's work by
    tcgen05.fence), warp 0 frees the columns (tcgen05.dealloc).

    ```mlir
    pkgpu.tmem_dealloc %tmem columns 256
    ```
  }];
  let arguments = (ins I32:$address, I64Attr:$columns);
  let assemblyFormat = "$address `columns` $columns attr-dict";
}

#endif // PKGPU_TENSOR_MEMORY_OPS_TD
