//===- MosaicOps.td - The Mosaic `tpu` ops pkc emits --------*- tablegen -*-===//
//
// Each op keeps Mosaic's name, operands, attributes and assembly format
// (JAX 0.10, jaxlib/mosaic/dialect/tpu/tpu_ops.td), so that the text pkc
// prints is what Pallas's lowering prints. Verifiers check what pkc relies
// on; they are not a copy of Mosaic's (Mosaic verifies again when JAX
// parses the module).
//
//===----------------------------------------------------------------------===//
#ifndef PK_MOSAIC_OPS_TD
#define PK_MOSAIC_OPS_TD

include "backends/tpu/ir/MosaicBase.td"

include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Mosaic_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mosaic_Dialect, mnemonic, traits>;

def Mosaic_MemWrite : MemoryEffects<[MemWrite<DefaultResource>]>;
def Mosaic_MemRead : MemoryEffects<[MemRead<DefaultResource>]>;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Mosaic_VectorStoreOp : Mosaic_Op<"vector_store", [Mosaic_MemWrite, AttrSizedOperandSegments]> {
  let summary = "stores a vector into a VMEM window, optionally masked";
  let description = [{
    What Pallas emits for every Ref store: `strides` is always empty (a
    plain store); `mask`, of the value's shape, selects the elements
    written (32-bit element types only).

    ```mlir
    tpu.vector_store %ref[%c0, %c0], %v {strides = array<i32>}
        : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
    ```
  }];
  let arguments = (ins
    AnyVectorOfNonZeroRank:$valueToStore,
    AnyMemRef:$base,
    Variadic<Index>:$indices,
    DenseI32ArrayAttr:$strides,
    Optional<AnyVectorOfNonZeroRank>:$mask,
    DefaultValuedAttr<BoolAttr, "false">:$add
  );
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $valueToStore (`masked` $mask^)? attr-dict `:` type($base) `,` type($valueToStore) `,` type($mask)
  }];
  let hasVerifier = 1;
}

def Mosaic_StridedLoadOp : Mosaic_Op<"strided_load", [Mosaic_MemRead]> {
  let summary = "loads a vector whose elements are `strides` apart in a window";
  let arguments = (ins
    AnyMemRef:$base,
    Variadic<Index>:$indices,
    DenseI32ArrayAttr:$strides
  );
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` attr-dict `:` type($base) `,` type($result)
  }];
  let hasVerifier = 1;
}

def Mosaic_StridedStoreOp : Mosaic_Op<"strided_store", [Mosaic_MemWrite]> {
  let summary = "stores a vector whose elements go `strides` apart in a window";
  let arguments = (ins
    AnyVectorOfNonZeroRank:$valueToStore,
    AnyMemRef:$base,
    Variadic<Index>:$indices,
    DenseI32ArrayAttr:$strides
  );
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $valueToStore attr-dict `:` type($base) `,` type($valueToStore)
  }];
  let hasVerifier = 1;
}

def Mosaic_IterationBoundOp : Mosaic_Op<"iteration_bound"> {
  let summary = "the size of a grid axis whose size is known only at launch";
  let description = [{
    `pl.num_programs` on an axis that `iteration_bounds` marks dynamic.

    ```mlir
    %n = tpu.iteration_bound 0 : i32
    ```
  }];
  let arguments = (ins I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Vector structure and compute
//===----------------------------------------------------------------------===//

def Mosaic_IotaOp : Mosaic_Op<"iota", [Pure]> {
  let summary = "element indices along the given dimensions";
  let description = [{
    With one dimension, `lax.broadcasted_iota`; Pallas builds 1-D iotas as
    a 2-D one over dimension 1 and a shape_cast.

    ```mlir
    %i = tpu.iota {dimensions = array<i32: 1>} : vector<8x128xi32>
    ```
  }];
  let arguments = (ins DenseI32ArrayAttr:$dimensions);
  let results = (outs VectorOfNonZeroRankOf<[AnyInteger, Index]>:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Mosaic_TransposeOp : Mosaic_Op<"transpose", [Pure]> {
  let summary = "permutes the axes of a vector";
  let arguments = (ins AnyVectorOfAnyRank:$vector, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyVectorOfAnyRank:$result);
  let assemblyFormat = [{
    $vector `,` $permutation attr-dict `:` type($vector) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mosaic_ConcatenateOp : Mosaic_Op<"concatenate", [Pure]> {
  let summary = "joins vectors along one dimension";
  let arguments = (ins Variadic<AnyVectorOfNonZeroRank>:$sources, I32Attr:$dimension);
  let results = (outs AnyVectorOfNonZeroRank:$output);
  let assemblyFormat = [{
    $sources `in` $dimension attr-dict `:` type($sources) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Mosaic_WeirdOp : Mosaic_Op<"weird", [Pure, SameOperandsAndResultShape]> {
  let summary = "true where a float is NaN or infinite";
  let description = [{
    Pallas lowers `lax.is_finite` as the negation of this op.

    ```mlir
    %w = tpu.weird %x : vector<8x128xf32> -> vector<8x128xi1>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyFloat, VectorOfAnyRankOf<[AnyFloat]>]>:$input);
  let results = (outs AnyTypeOf<[I1, VectorOfAnyRankOf<[I1]>]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Mosaic_BitcastOp : Mosaic_Op<"bitcast", [Pure]> {
  let summary = "reinterprets a vector's bits as another element type";
  let description = [{
    Between bit widths, consecutive rows of the second-minor dimension
    pack into (or unpack from) one row of the wider type.
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$input);
  let results = (outs AnyVectorOfNonZeroRank:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Mosaic_MatmulOp : Mosaic_Op<"matmul", [Pure]> {
  let summary = "matrix product on the MXU, accumulated into `acc`";
  let description = [{
    `result = acc + lhs x rhs` with the contraction that
    `dimension_numbers` describes. `acc` and the result are 32-bit.
    `transpose_lhs`/`transpose_rhs` are Mosaic's deprecated flags (always
    false: dimension numbers say it).

    ```mlir
    %r = tpu.matmul %a, %b, %acc {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false}
        : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
    ```
  }];
  let arguments = (ins
    AnyVectorOfNonZeroRank:$lhs,
    AnyVectorOfNonZeroRank:$rhs,
    AnyVectorOfNonZeroRank:$acc,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs,
    OptionalAttr<Mosaic_ContractPrecisionAttr>:$precision,
    OptionalAttr<Mosaic_DotDimensionNumbersAttr>:$dimension_numbers,
    BoolAttr:$transpose_lhs_hint
  );
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mosaic_ReduceIndexOp : Mosaic_Op<"reduce_index", [Pure]> {
  let summary = "the index of the largest or smallest element along an axis";
  let description = [{
    `jnp.argmax` / `jnp.argmin` on f32 vectors of rank 2 or more; `kind` is
    `arg_max` or `arg_min`.
  }];
  let arguments = (ins
    AnyVectorOfNonZeroRank:$input,
    I32Attr:$axis,
    Mosaic_ReductionKindAttr:$kind
  );
  let results = (outs VectorOfNonZeroRankOf<[I32]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Memref views, DMAs, semaphores and scopes
//===----------------------------------------------------------------------===//

def Mosaic_SemaphoreMemRef : MemRefOf<[Mosaic_SemaphoreType, Mosaic_DMASemaphoreType]>;

def Mosaic_MemRefSliceOp : Mosaic_Op<"memref_slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "a window of a memref starting at `base_idx`, of the result's shape";
  let description = [{
    What Pallas emits for `x_ref.at[pl.ds(i, 8), :]` and `sem.at[i]` (then
    `tpu.memref_squeeze` for integer indices). `dynamic_sizes` gives the
    result's dynamic dimensions, in order: the slices of pl.BoundedSlice
    blocks in pltpu.emit_pipeline.
  }];
  let arguments = (ins AnyMemRef:$mem_ref, Variadic<I32>:$base_idx, Variadic<I32>:$dynamic_sizes);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $mem_ref `[` $base_idx `]` (`<` $dynamic_sizes^ `>`)? attr-dict `:` type($mem_ref) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mosaic_MemRefReshapeOp : Mosaic_Op<"memref_reshape", [Pure]> {
  let summary = "views a memref with another shape (Pallas's Ref.reshape)";
  let arguments = (ins AnyMemRef:$input);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Mosaic_MemRefSqueezeOp : Mosaic_Op<"memref_squeeze", [Pure]> {
  let summary = "drops unit dimensions of a memref";
  let arguments = (ins AnyMemRef:$input);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mosaic_EnqueueDMAOp : Mosaic_Op<"enqueue_dma", [AttrSizedOperandSegments]> {
  let summary = "starts a copy between two memrefs that signals a DMA semaphore";
  let description = [{
    `.start()` of `pltpu.make_async_copy(src, dst, sem)`. pkc emits the
    local form: no source semaphore, device or core.
  }];
  let arguments = (ins
    AnyMemRef:$source,
    Optional<Mosaic_SemaphoreMemRef>:$source_semaphore,
    AnyMemRef:$target,
    Optional<Mosaic_SemaphoreMemRef>:$target_semaphore,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    Optional<I32>:$subcore_id,
    DefaultValuedAttr<I32Attr, "0">:$priority,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `source` `(` $source `:` type($source) `)`
    (`source_semaphore` `(` $source_semaphore^ `:` type($source_semaphore) `)`)?
    `target` `(` $target `:` type($target) `)`
    (`target_semaphore` `(` $target_semaphore^ `:` type($target_semaphore) `)`)?
    (`device_id` `(` $device_id^ `)`)? (`core_id` `(` $core_id^ `)`)?
    (`subcore_id` `(` $subcore_id^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def Mosaic_WaitDMA2Op : Mosaic_Op<"wait_dma2", [AttrSizedOperandSegments]> {
  let summary = "waits for a copy from `src` to `dst` to land on its semaphore";
  let arguments = (ins
    Mosaic_SemaphoreMemRef:$semaphore,
    AnyMemRef:$src,
    AnyMemRef:$dst,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `semaphore` `(` $semaphore `:` type($semaphore) `)`
    `src` `(` $src `:` type($src) `)`
    `dst` `(` $dst `:` type($dst) `)`
    (`device_id` `(` $device_id^ `)`)? (`core_id` `(` $core_id^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def Mosaic_SemaphoreSignalOp : Mosaic_Op<"sem_signal", [AttrSizedOperandSegments]> {
  let summary = "adds `amount` to a semaphore";
  let arguments = (ins
    Mosaic_SemaphoreMemRef:$semaphore,
    I32:$amount,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    Optional<I32>:$subcore_id
  );
  let assemblyFormat = [{
    $semaphore `,` $amount (`device_id` $device_id^)? (`core_id` $core_id^)? (`subcore_id` $subcore_id^)?
    attr-dict `:` type($semaphore)
  }];
}

def Mosaic_SemaphoreWaitOp : Mosaic_Op<"sem_wait"> {
  let summary = "waits until a semaphore reaches `amount`, then subtracts it";
  let arguments = (ins Mosaic_SemaphoreMemRef:$semaphore, I32:$amount);
  let assemblyFormat = "$semaphore `,` $amount attr-dict `:` type($semaphore)";
}

def Mosaic_SemaphoreReadOp : Mosaic_Op<"sem_read"> {
  let summary = "a semaphore's count";
  let arguments = (ins Mosaic_SemaphoreMemRef:$semaphore);
  let results = (outs I32:$result);
  let assemblyFormat = "$semaphore attr-dict `:` type($semaphore) `->` type($result)";
}

def Mosaic_SemaphoreAllocOp : Mosaic_Op<"sem_alloc"> {
  let summary = "semaphores for the extent of the enclosing tpu.region";
  let results = (outs Mosaic_SemaphoreMemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Mosaic_RegionOp : Mosaic_Op<"region", [RecursiveMemoryEffects]> {
  let summary = "a scope for allocations (pl.run_scoped)";
  let description = [{
    Buffers (`memref.alloca`) and semaphores (`tpu.sem_alloc`) allocated in
    its body live until it ends. Printed in the generic form, as Mosaic
    prints it.
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region);
}

def Mosaic_YieldOp : Mosaic_Op<"yield", [Pure, ReturnLike, Terminator, HasParent<"RegionOp">]> {
  let summary = "ends a tpu.region with its results";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
}

#endif // PK_MOSAIC_OPS_TD
