//===- PkTensorMemoryOps.td - Blackwell's tensor memory ----*- tablegen -*-===//
//
// The Blackwell (sm_100a) part of the Mosaic GPU model: MMA on the
// fifth-generation tensor cores (tcgen05), which accumulates into tensor
// memory (TMEM, `#pk.memory_space<tmem>`: per SM, 128 lanes of 512 32-bit
// columns) instead of registers, and the loads and stores that move
// values between TMEM and registers. Included from PkMosaicGpuOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef PK_TENSOR_MEMORY_OPS_TD
#define PK_TENSOR_MEMORY_OPS_TD

def Pk_Tcgen05MmaOp : Pk_Op<"tcgen05_mma", [AttrSizedOperandSegments]> {
  let summary = "acc (TMEM) += a @ b on Blackwell's tensor cores, asynchronously";
  let description = [{
    `plgpu.tcgen05_mma(acc, a, b, barrier, accumulate=)`: `acc` is an M x N
    Ref in tensor memory, `a` an M x K Ref in shared memory and `b` a
    K x N Ref in shared memory. The Pallas thread issues the product and
    goes on; the tensor core reads `a` and `b` and updates `acc` later.
    With `barrier` (a plgpu.Barrier with orders_tensor_core), the barrier
    gets one arrival when this and every earlier tcgen05_mma of the
    thread are done; otherwise `pk.tcgen05_commit_arrive` says when.
    `accumulate` (an i1, true when absent) false overwrites `acc`.

    The shapes and types follow Mosaic GPU: M = 128; N a multiple of 8
    up to 256; f16 or bf16 operands of one dtype with an f32 accumulator
    (or f16 for f16); operands tiled (8, swizzle / 2) and swizzled alike
    (32, 64 or 128 bytes), K a multiple of the swizzle in elements.

    ```mlir
    pk.tcgen05_mma %acc, %a, %b barrier %done[%slot] accumulate %first
        : !pk.ref<128x128xf32, #pk.memory_space<tmem>>,
          !pk.ref<128x64xbf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
          !pk.ref<64x128xbf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
          !pk.barrier<[2], arrivals 1, orders_tensor_core>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$acc,
    Pk_RefType:$a,
    Pk_RefType:$b,
    Optional<Pk_BarrierType>:$barrier,
    Variadic<Index>:$barrier_indices,
    Optional<I1>:$accumulate
  );
  let assemblyFormat = [{
    $acc `,` $a `,` $b (`barrier` $barrier^ (`[` $barrier_indices^ `]`)?)?
    (`accumulate` $accumulate^)? attr-dict `:` qualified(type($acc)) `,` qualified(type($a)) `,`
    qualified(type($b)) (`,` qualified(type($barrier))^)?
  }];
  let hasVerifier = 1;
}

def Pk_Tcgen05CommitArriveOp : Pk_BarrierOp<"tcgen05_commit_arrive"> {
  let summary = "arrives at a barrier when the thread's tcgen05 MMAs are done";
  let description = [{
    `plgpu.tcgen05_commit_arrive(barrier)`: one arrival at `barrier` (a
    plgpu.Barrier with orders_tensor_core) once every tcgen05_mma this
    Pallas thread issued before it has completed.

    ```mlir
    pk.tcgen05_commit_arrive %mma_done : !pk.barrier<[1], arrivals 1, orders_tensor_core>
    ```
  }];
}

def Pk_AsyncLoadTmemOp : Pk_Op<"async_load_tmem", []> {
  let summary = "reads a tensor-memory Ref into registers";
  let description = [{
    `plgpu.async_load_tmem(ref)`: the value of a TMEM Ref. The value can
    be used at once; the read of tensor memory may still be in flight,
    so the Ref must not be overwritten before `pk.wait_load_tmem`.

    ```mlir
    %acc = pk.async_load_tmem %acc_tmem
        : !pk.ref<128x64xf32, #pk.memory_space<tmem>> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Pk_RefType:$ref);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$ref attr-dict `:` qualified(type($ref)) `->` type($result)";
  let hasVerifier = 1;
}

def Pk_AsyncStoreTmemOp : Pk_Op<"async_store_tmem", []> {
  let summary = "writes a value in registers into a tensor-memory Ref";
  let description = [{
    `plgpu.async_store_tmem(ref, value)`: the write is visible to loads
    and MMAs only after `pk.commit_tmem`.

    ```mlir
    pk.async_store_tmem %acc_tmem, %zeros
        : !pk.ref<128x64xf32, #pk.memory_space<tmem>>, tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Pk_RefType:$ref, AnyStaticShapeTensor:$value);
  let assemblyFormat = "$ref `,` $value attr-dict `:` qualified(type($ref)) `,` type($value)";
  let hasVerifier = 1;
}

def Pk_WaitLoadTmemOp : Pk_Op<"wait_load_tmem", []> {
  let summary = "waits until the thread's tensor-memory loads are done";
  let description = [{
    `plgpu.wait_load_tmem()`: after it, the TMEM the thread's
    `pk.async_load_tmem` ops read may be overwritten.
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_CommitTmemOp : Pk_Op<"commit_tmem", []> {
  let summary = "makes the thread's tensor-memory stores visible";
  let description = [{
    `plgpu.commit_tmem()`: after it, the thread's `pk.async_store_tmem`
    writes are seen by TMEM loads and MMAs, and by threads signalled
    through barriers with orders_tensor_core.
  }];
  let assemblyFormat = "attr-dict";
}

#endif // PK_TENSOR_MEMORY_OPS_TD
