//===- PkDmaOps.td - Explicit copies and semaphores --------*- tablegen -*-===//
//
// Ops for kernels that move memory themselves, as TPU Pallas kernels do
// (`pltpu.make_async_copy`, `pl.semaphore_*`): an async copy between two
// Refs that signals a DMA semaphore when it lands, the wait for it, and
// reading a semaphore's count. Signalling and waiting on regular
// semaphores are the ops the Mosaic GPU model shares
// (pk.semaphore_signal / pk.semaphore_wait, PkMosaicGpuOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef PK_DMA_OPS_TD
#define PK_DMA_OPS_TD

include "PkBase.td"
include "PkTypes.td"

class Pk_DmaOp<string mnemonic> : Pk_Op<mnemonic, []> {
  let arguments = (ins
    Pk_RefType:$src,
    Pk_RefType:$dst,
    Pk_SemaphoreType:$semaphore,
    Variadic<Index>:$indices
  );
  let assemblyFormat = [{
    $src `,` $dst `,` $semaphore (`[` $indices^ `]`)? attr-dict `:`
    qualified(type($src)) `,` qualified(type($dst)) `,` qualified(type($semaphore))
  }];
  let hasVerifier = 1;
}

def Pk_DmaStartOp : Pk_DmaOp<"dma_start"> {
  let summary = "starts an async copy between two Refs";
  let description = [{
    `pltpu.make_async_copy(src, dst, sem).start()`: copies `src` into `dst`
    (same shape and element type, any memory spaces) in the background;
    when it lands it adds to the DMA semaphore (`sem.at[i]`). Until a
    `pk.dma_wait` for it, reading `dst` or writing either Ref is a race.

    ```mlir
    pk.dma_start %x, %buf, %sem[%c0] : !pk.ref<8x128xf32, #pk.memory_space<any>>,
        !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$src,
    Pk_RefType:$dst,
    Pk_SemaphoreType:$semaphore,
    Variadic<Index>:$indices,
    DefaultValuedAttr<I32Attr, "0">:$priority
  );
}

def Pk_DmaWaitOp : Pk_DmaOp<"dma_wait"> {
  let summary = "waits for an async copy between two Refs to land";
  let description = [{
    `.wait()` of a copy descriptor: blocks until the DMA semaphore has seen
    a copy of `dst`'s size land, and takes it off the count. `src` and
    `dst` describe the copy waited for (its size), as in Mosaic's
    `tpu.wait_dma2`.

    ```mlir
    pk.dma_wait %x, %buf, %sem[%c0] : !pk.ref<8x128xf32, #pk.memory_space<any>>,
        !pk.ref<8x128xf32, #pk.memory_space<vmem>>, !pk.semaphore<[2], dma>
    ```
  }];
}

def Pk_SemaphoreReadOp : Pk_Op<"semaphore_read", []> {
  let summary = "the current count of a semaphore";
  let description = [{
    `pl.semaphore_read(sem)`: the count of a regular or DMA semaphore now,
    as an `i32`.

    ```mlir
    %n = pk.semaphore_read %sem : !pk.semaphore<[]>
    ```
  }];
  let arguments = (ins Pk_SemaphoreType:$semaphore, Variadic<Index>:$indices);
  let results = (outs I32:$result);
  let assemblyFormat = [{
    $semaphore (`[` $indices^ `]`)? attr-dict `:` qualified(type($semaphore))
  }];
  let hasVerifier = 1;
}

#endif // PK_DMA_OPS_TD
