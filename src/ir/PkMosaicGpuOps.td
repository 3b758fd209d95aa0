//===- PkMosaicGpuOps.td - The Mosaic GPU programming model -*- tablegen -*-===//
//
// Ops for `from jax.experimental.pallas import mosaic_gpu as plgpu`: kernels
// over a mesh of CTAs and Pallas threads (warpgroups), scoped allocations,
// shared-memory views, mbarriers, TMA-style async copies, wgmma into an
// accumulator Ref, semaphores and software pipelines. Each op says what the
// program means - an async GMEM->SMEM copy completing on a barrier, a wgmma
// accumulating into a Ref - so that the CUDA lowering can map them onto
// TMA, mbarriers and wgmma, and the reference interpreter can run them with
// the semantics of JAX's Mosaic GPU interpret mode.
//
//===----------------------------------------------------------------------===//
#ifndef PK_MOSAIC_GPU_OPS_TD
#define PK_MOSAIC_GPU_OPS_TD

include "PkBase.td"
include "PkTypes.td"
include "PkAttrs.td"

include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Pk_AnyMgpuValue : AnyTypeOf<[AnyStaticShapeTensor, AnySignlessInteger, AnyFloat],
                                "block value (static tensor or scalar)">;

//===----------------------------------------------------------------------===//
// Kernels, axes and scopes
//===----------------------------------------------------------------------===//

def Pk_MeshKernelOp : Pk_Op<"mesh_kernel", [RecursiveMemoryEffects]> {
  let summary = "a Mosaic GPU kernel: a body run by every Pallas thread of a mesh";
  let description = [{
    `plgpu.kernel(body, out_shape=, grid=, cluster=, num_threads=, ...)` and
    `pl.core_map(plgpu.Mesh(...))`. The CUDA grid is `grid` x `cluster`
    CTAs (the `grid` axes count clusters, the `cluster` axes the CTAs in a
    cluster) and each CTA runs `num_threads` Pallas threads (warpgroups).
    The body runs once per thread, concurrently with the other threads of
    its cluster; `pk.axis_index` names its position.

    The body's arguments are Refs in global memory of the whole arrays:
    one per input, then one per output. Outputs start uninitialized, or
    with the contents of the input they alias (`input_output_aliases`,
    (input, output) pairs; `pl.run_state` aliases every output). Scratch
    memory is allocated inside the body with `pk.run_scoped`.

    ```mlir
    %y = pk.mesh_kernel "add_one"(%x) grid [2] ["x"] cluster [] [] threads 1
        {input_output_aliases = array<i64>} : (tensor<256xf32>) -> tensor<256xf32> {
    ^bb0(%x_ref: !pk.ref<256xf32, #pk.memory_space<gmem>>,
         %y_ref: !pk.ref<256xf32, #pk.memory_space<gmem>>):
      %i = pk.axis_index "x" : i32
      ...
      pk.scope_yield
    }
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$inputs,
    StrAttr:$name,
    DenseI64ArrayAttr:$grid,
    StrArrayAttr:$grid_names,
    DenseI64ArrayAttr:$cluster,
    StrArrayAttr:$cluster_names,
    ConfinedAttr<I64Attr, [IntPositive]>:$num_threads,
    OptionalAttr<StrAttr>:$thread_name,
    DenseI64ArrayAttr:$input_output_aliases,
    OptionalAttr<DictionaryAttr>:$compiler_params
  );
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `(` $inputs `)` `grid` $grid $grid_names `cluster` $cluster $cluster_names
    `threads` $num_threads (`named` $thread_name^)? attr-dict `:` functional-type($inputs, $outputs)
    $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// How many CTAs a cluster has.
    int64_t getClusterSize();
    /// The kind and position of a named mesh axis: 0 grid, 1 cluster,
    /// 2 thread; none when the mesh has no such axis.
    std::optional<std::pair<unsigned, unsigned>> findAxis(::llvm::StringRef name);
  }];
}

def Pk_ScopeYieldOp : Pk_Op<"scope_yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["MeshKernelOp", "RunScopedOp", "PipelineOp"]>
  ]> {
  let summary = "ends a Mosaic GPU region, passing values out";
  let description = [{
    Ends a `pk.mesh_kernel` body (no values), a `pk.run_scoped` body (its
    results), and a `pk.pipeline`'s `index_map` (block indices) and `body`
    (the next carry).
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

def Pk_AxisIndexOp : Pk_Op<"axis_index", [Pure]> {
  let summary = "the running thread's index along a named mesh axis";
  let description = [{
    `lax.axis_index(name)` in a `pk.mesh_kernel`: the position along a grid
    axis (which cluster), a cluster axis (which CTA of the cluster), the
    thread axis (which Pallas thread of the CTA) or, in a `pk.warp_map`,
    its warp axis (which warp of the Pallas thread).

    ```mlir
    %wg = pk.axis_index "wg" : i32
    ```
  }];
  let arguments = (ins StrAttr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pk_WarpMapOp : Pk_Op<"warp_map", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "runs its body once per warp of the Pallas thread (plgpu.WarpMesh)";
  let description = [{
    `pl.core_map(plgpu.WarpMesh(axis_name=...))` / `plgpu.warp_map(f)` in
    a `pk.mesh_kernel`: a fork and join over the 4 warps of the running
    Pallas thread (a warpgroup). Each warp runs the body on its own, and
    `pk.axis_index` of `axis_name` is its index; what the body does once
    (an arrival, an async copy, an MMA) each warp does once. The body
    works on scalars and Refs. The Pallas thread goes on when all four
    warps are done.

    ```mlir
    pk.warp_map "warp" {
      %w = pk.axis_index "warp" : i32
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$axis_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$axis_name $body attr-dict";
  let hasVerifier = 1;
}

def Pk_RunScopedOp : Pk_Op<"run_scoped", [
    RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "allocates scratch for the extent of a region";
  let description = [{
    `pl.run_scoped(f, *types, collective_axes=...)`: the body's arguments
    are fresh allocations of their types - shared-memory Refs (contents
    uninitialized), wgmma accumulators (zero), barriers, semaphores - which
    live until the body ends. With the thread axis among `collective_axes`
    every Pallas thread of a CTA gets the same allocations (all threads
    must reach the op); without it each thread gets its own. Accumulators
    (`#pk.memory_space<wgmma_acc>`) are always per thread. The results are
    the values the body yields.

    ```mlir
    %r = pk.run_scoped collective ["wg"] -> tensor<128xf32> {
    ^bb0(%smem: !pk.ref<128xf32, #pk.memory_space<shared>>, %bar: !pk.barrier<[1], arrivals 1>):
      ...
      pk.scope_yield %v : tensor<128xf32>
    }
    ```
  }];
  let arguments = (ins
    DefaultValuedAttr<StrArrayAttr, "{}">:$collective_axes,
    OptionalAttr<StrArrayAttr>:$arg_names
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`collective` $collective_axes^)? (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

//===----------------------------------------------------------------------===//
// Views of Refs
//===----------------------------------------------------------------------===//

def Pk_RefViewOp : Pk_Op<"ref_view", [Pure, AttrSizedOperandSegments]> {
  let summary = "a strided window of a Ref, as a Ref (`x_ref.at[...]`)";
  let description = [{
    The window of `pk.load` (offsets, sizes and strides, squeezed axes), as
    a Ref aliasing the same memory, for ops that take Refs (async copies,
    wgmma). It keeps the memory space; a window of a transformed
    shared-memory Ref keeps its transforms, and must respect them (a
    swizzled minor dimension is never sliced; tiled dimensions are sliced
    in whole tiles). Dynamic offsets must keep the window inside the Ref.

    ```mlir
    %v = pk.ref_view %x[%i, 0] sizes [1, 128] strides [1, 1] squeeze [0]
        : !pk.ref<4x128xf32, #pk.memory_space<gmem>> -> !pk.ref<128xf32, #pk.memory_space<gmem>>
    ```

    A size may be dynamic (`x_ref.at[pl.ds(s, n)]` with `n` known only at
    run time, as ragged TPU kernels copy): the result's dimension is then
    `?`, its stride 1, and the view is only an async copy's source or
    destination (`pk.dma_start` / `pk.dma_wait`), which is all Pallas
    allows of it on a TPU. The run-time size must keep the window inside
    the Ref (and may be 0).

    ```mlir
    %w = pk.ref_view %x[%s, 0] sizes [%n, 128] strides [1, 1] squeeze []
        : !pk.ref<64x128xf32, #pk.memory_space<any>> -> !pk.ref<?x128xf32, #pk.memory_space<any>>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$ref,
    Variadic<Index>:$offsets,
    Variadic<Index>:$dynamic_sizes,
    DenseI64ArrayAttr:$static_offsets,
    DenseI64ArrayAttr:$sizes,
    DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$squeeze
  );
  let results = (outs Pk_RefType:$result);
  let assemblyFormat = [{
    $ref custom<DynamicIndexList>($offsets, $static_offsets)
    `sizes` custom<DynamicIndexList>($dynamic_sizes, $sizes) `strides` $strides `squeeze` $squeeze
    attr-dict `:` qualified(type($ref)) `->` qualified(type($result))
  }];
  let builders = [
    // A view with static sizes, as every view but a ragged copy's.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$ref, "::mlir::ValueRange":$offsets,
        "::mlir::DenseI64ArrayAttr":$static_offsets, "::mlir::DenseI64ArrayAttr":$sizes,
        "::mlir::DenseI64ArrayAttr":$strides, "::mlir::DenseI64ArrayAttr":$squeeze), [{
      build($_builder, $_state, result, ref, offsets, ::mlir::ValueRange(), static_offsets,
            sizes, strides, squeeze);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
    /// Whether a size is known only at run time (a ragged copy's view).
    bool hasDynamicSizes() { return !getDynamicSizes().empty(); }
  }];
}

def Pk_RefTransposeOp : Pk_Op<"ref_transpose", [Pure]> {
  let summary = "a transposed view of a Ref (`plgpu.transpose_ref`)";
  let description = [{
    The result's dimension `i` is the operand's dimension `permutation[i]`;
    both alias the same memory. On a transformed shared-memory Ref the
    result's transforms start with the `#pk.transpose` that says so (wgmma
    reads such operands transposed).

    ```mlir
    %t = pk.ref_transpose %b perm [1, 0]
        : !pk.ref<64x128xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
        -> !pk.ref<128x64xf16, #pk.memory_space<shared>, [#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]>
    ```
  }];
  let arguments = (ins Pk_RefType:$ref, DenseI64ArrayAttr:$permutation);
  let results = (outs Pk_RefType:$result);
  let assemblyFormat = [{
    $ref `perm` $permutation attr-dict `:` qualified(type($ref)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Pk_RefReinterpretOp : Pk_Op<"ref_reinterpret", [Pure]> {
  let summary = "a Ref over part of a scoped union buffer (`plgpu.RefUnion`)";
  let description = [{
    The memory of a `plgpu.RefUnion` is one scoped buffer; each Ref of the
    union is this op on it. In shared memory the buffer is bytes (`i8`, 1-D)
    and the result starts `offset` bytes into it, stored row-major (or as
    its transforms and wgmma say, as any shared buffer); in tensor memory
    the buffer is `(128, columns)` of `i32` and the result takes the
    columns from `offset`, one element per column of each lane. Results of
    different groups of the union overlap: writing one changes what the
    others read, as on the hardware.

    ```mlir
    %a = pk.ref_reinterpret %union[1024]
        : !pk.ref<2048xi8, #pk.memory_space<shared>>
        -> !pk.ref<128xf32, #pk.memory_space<shared>>
    ```
  }];
  let arguments = (ins Pk_RefType:$buffer, I64Attr:$offset);
  let results = (outs Pk_RefType:$result);
  let assemblyFormat = [{
    $buffer `[` $offset `]` attr-dict `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Pk_RefReshapeOp : Pk_Op<"ref_reshape", [Pure]> {
  let summary = "a Ref viewed with another shape (`x_ref.reshape(...)`)";
  let description = [{
    The same elements in row-major order, aliasing the same memory: the
    result has the operand's element type, memory space and element count.
    Pallas's `Ref.reshape` (a `RefReshaper` transform); JAX's ragged paged
    attention views its VMEM pages as rows. The operand is a whole,
    untransformed Ref (a reshape of a strided window is refused where it
    is evaluated).

    ```mlir
    %rows = pk.ref_reshape %pages
        : !pk.ref<2x16x4x128xf32, #pk.memory_space<vmem>> -> !pk.ref<128x128xf32, #pk.memory_space<vmem>>
    ```
  }];
  let arguments = (ins Pk_RefType:$ref);
  let results = (outs Pk_RefType:$result);
  let assemblyFormat = [{
    $ref attr-dict `:` qualified(type($ref)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

class Pk_BarrierOp<string mnemonic> : Pk_Op<mnemonic, []> {
  let arguments = (ins Pk_BarrierType:$barrier, Variadic<Index>:$indices);
  let assemblyFormat = [{
    $barrier (`[` $indices^ `]`)? attr-dict `:` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def Pk_BarrierArriveOp : Pk_BarrierOp<"barrier_arrive"> {
  let summary = "arrives at a barrier";
  let description = [{
    `plgpu.barrier_arrive(barrier)`: one arrival; the barrier completes a
    phase when its arrival count is reached. On a cluster barrier the
    thread arrives at the barrier of every CTA along the barrier's cluster
    axes. `indices` pick one barrier of the array (none for a single one).

    ```mlir
    pk.barrier_arrive %consumed[%slot] : !pk.barrier<[2], arrivals 1>
    ```
  }];
}

def Pk_BarrierWaitOp : Pk_BarrierOp<"barrier_wait"> {
  let summary = "waits for a barrier's next phase";
  let description = [{
    `plgpu.barrier_wait(barrier)`: blocks until the barrier completes the
    phase after the last one this thread waited for. A thread that waits on
    a barrier must wait for every one of its phases, and a barrier must not
    complete twice before some thread has waited.

    ```mlir
    pk.barrier_wait %loaded[%slot] : !pk.barrier<[2], arrivals 2>
    ```
  }];
}

def Pk_BarrierTestOp : Pk_Op<"barrier_test", []> {
  let summary = "whether a barrier's next phase has completed, without waiting";
  let description = [{
    `plgpu.barrier_test(barrier)`: true when the phase `pk.barrier_wait`
    would wait for has completed, which then counts as waited for (the
    next test or wait is for the phase after it); false leaves the barrier
    as it was. Every thread of the Pallas thread (of the warp, in
    warp-level code) gets the same answer.

    ```mlir
    %done = pk.barrier_test %bars[%i] : !pk.barrier<[2], arrivals 1>
    ```
  }];
  let arguments = (ins Pk_BarrierType:$barrier, Variadic<Index>:$indices);
  let results = (outs I1:$done);
  let assemblyFormat = [{
    $barrier (`[` $indices^ `]`)? attr-dict `:` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Async copies
//===----------------------------------------------------------------------===//

def Pk_CopyGmemToSmemOp : Pk_Op<"copy_gmem_to_smem", []> {
  let summary = "an async copy from global to shared memory, completing on a barrier";
  let description = [{
    `plgpu.copy_gmem_to_smem(src, dst, barrier, collective_axes=)`: copies
    `src` (global memory) into `dst` (shared memory, of the same shape and
    element type; its transforms say how TMA lays it out) in the
    background, then arrives once at the barrier. Until a wait on that
    barrier returns, `dst` must not be read. With `collective` cluster
    axes every CTA along them issues the same copy and each receives the
    data (TMA multicast).

    ```mlir
    pk.copy_gmem_to_smem %src, %dst, %bar[%slot] collective ["x"]
        : !pk.ref<64x64xf16, #pk.memory_space<gmem>>,
          !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
          !pk.barrier<[2], arrivals 1>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$src,
    Pk_RefType:$dst,
    Pk_BarrierType:$barrier,
    Variadic<Index>:$barrier_indices,
    DefaultValuedAttr<StrArrayAttr, "{}">:$collective_axes
  );
  let assemblyFormat = [{
    $src `,` $dst `,` $barrier (`[` $barrier_indices^ `]`)? (`collective` $collective_axes^)?
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst)) `,` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def Pk_CopySmemToGmemOp : Pk_Op<"copy_smem_to_gmem", []> {
  let summary = "an async copy from shared to global memory";
  let description = [{
    `plgpu.copy_smem_to_gmem(src, dst, predicate, commit_group=)`: copies
    `src` (shared memory) to `dst` (global memory) in the background; only
    when `predicate` (an i1, when given) holds. Shared-memory writes must
    be made visible first (`pk.commit_smem`). The copy joins the open
    group; unless `no_commit` is set, the group is then committed, and
    `pk.wait_smem_to_gmem` waits for groups by their order.

    ```mlir
    pk.copy_smem_to_gmem %o_smem, %o_view : !pk.ref<64x64xf16, #pk.memory_space<shared>>,
        !pk.ref<64x64xf16, #pk.memory_space<gmem>>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$src,
    Pk_RefType:$dst,
    Optional<I1>:$predicate,
    UnitAttr:$no_commit
  );
  let assemblyFormat = [{
    $src `,` $dst (`if` $predicate^)? (`no_commit` $no_commit^)?
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def Pk_WaitSmemToGmemOp : Pk_Op<"wait_smem_to_gmem", []> {
  let summary = "waits until at most N committed SMEM->GMEM copy groups are in flight";
  let description = [{
    `plgpu.wait_smem_to_gmem(n, wait_read_only=)`: waits for the copy
    groups this thread committed, except the `allow_groups` most recent.
    With `read_only` it waits only until they have read their source.

    ```mlir
    pk.wait_smem_to_gmem 0
    pk.wait_smem_to_gmem 1 read_only
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$allow_groups, UnitAttr:$read_only);
  let assemblyFormat = "$allow_groups (`read_only` $read_only^)? attr-dict";
}

def Pk_CommitGroupOp : Pk_Op<"commit_group", []> {
  let summary = "commits the open SMEM->GMEM copies as one group";
  let description = [{
    `plgpu.commit_smem_to_gmem_group()`: the copies issued with `no_commit`
    since the last commit become one group for `pk.wait_smem_to_gmem`.
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_CommitSmemOp : Pk_Op<"commit_smem", []> {
  let summary = "makes this thread's shared-memory writes visible to async copies and wgmma";
  let description = [{
    `plgpu.commit_smem()`: a fence between ordinary shared-memory accesses
    of this thread and the async units (TMA, tensor cores) that read or
    write shared memory after it.
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_FenceAsyncSharedOp : Pk_Op<"fence_async_shared", []> {
  let summary = "orders this thread's shared-memory accesses before the async proxy's";
  let description = [{
    `fence.proxy.async.shared::cta` alone, as Mosaic GPU code inlined with
    `plgpu.inline_mgpu` writes it (`nvvm.fence_proxy(async_shared,
    shared_cta)`): unlike `pk.commit_smem`, no barrier follows, so one warp
    can fence before the TMA copy it issues.
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_NamedBarrierOp : Pk_Op<"named_barrier", []> {
  let summary = "a hardware named barrier of the CTA (bar.sync / bar.arrive)";
  let description = [{
    PTX's `bar.sync id, threads` (or `bar.arrive` with `arrive`), as
    `plgpu.inline_mgpu` code writes it: every thread of the running Pallas
    thread (a warpgroup: 128; a warp in warp-level code: 32) arrives at
    barrier `id` (0-15) of its CTA; the barrier completes once `threads`
    have arrived, and `bar.sync` waits for that completion. Ids 0 to the
    number of warpgroups are pkc's own (0 is the CTA's, 1 + g warpgroup
    g's).

    ```mlir
    pk.named_barrier %id, %threads
    pk.named_barrier arrive %id, %threads
    ```
  }];
  let arguments = (ins I32:$id, I32:$threads, UnitAttr:$arrive);
  let assemblyFormat = "(`arrive` $arrive^)? $id `,` $threads attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor cores
//===----------------------------------------------------------------------===//

def Pk_WgmmaOp : Pk_Op<"wgmma", []> {
  let summary = "acc += a @ b on the tensor cores, asynchronously (Hopper wgmma)";
  let description = [{
    `plgpu.wgmma(acc, a, b)`: `acc` is an accumulator Ref
    (`#pk.memory_space<wgmma_acc>`, M x N), `b` a shared-memory Ref (K x N)
    and `a` a shared-memory Ref (M x K) or a value in registers. The op is
    issued asynchronously: it may still be reading `a` and `b` after it
    returns, until `pk.wgmma_wait` (or a read of `acc`) waits for it; each
    wgmma waits for all but the last one before it.

    The shapes and types follow the hardware: M a multiple of 64, N a
    multiple of 8 up to 256, K a multiple of the swizzle in elements;
    f16 / bf16 / f32 operands of one dtype (f32 as tf32), an f32
    accumulator (or f16 for f16 operands); shared-memory operands tiled
    (8, swizzle / itemsize) and swizzled, with the same swizzle, and only
    16-bit operands transposed. Operands without transforms get them from
    the lowering.

    ```mlir
    pk.wgmma %acc, %a, %b : !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>,
        !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>,
        !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
    ```
  }];
  let arguments = (ins Pk_RefType:$acc, AnyType:$a, Pk_RefType:$b);
  let assemblyFormat = [{
    $acc `,` $a `,` $b attr-dict `:` qualified(type($acc)) `,` qualified(type($a)) `,`
    qualified(type($b))
  }];
  let hasVerifier = 1;
}

def Pk_WgmmaWaitOp : Pk_Op<"wgmma_wait", []> {
  let summary = "waits until at most N wgmma ops of this thread are in flight";
  let description = [{
    `plgpu.wgmma_wait(n)`. The operands of the wgmma ops it waited for may
    be overwritten after it.

    ```mlir
    pk.wgmma_wait 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$allow_in_flight);
  let assemblyFormat = "$allow_in_flight attr-dict";
}

def Pk_LayoutCastOp : Pk_Op<"layout_cast", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "asks for a value in a given register layout";
  let description = [{
    `plgpu.layout_cast(x, plgpu.Layout.WGMMA)`: the same value, which the
    CUDA lowering should hold in `layout`.

    ```mlir
    %acc = pk.layout_cast %zeros <wgmma> : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Pk_AnyMgpuValue:$value, Pk_GpuLayoutAttr:$layout);
  let results = (outs Pk_AnyMgpuValue:$result);
  let assemblyFormat = "$value $layout attr-dict `:` type($value)";
}

def Pk_GridDependencyOp : Pk_Op<"grid_dependency", []> {
  let summary = "programmatic dependent launch: wait for, or release, neighbouring grids";
  let description = [{
    `plgpu.griddepcontrol_wait()` (`wait`): waits until the grids this one
    depends on (launched before it in the stream) have completed and their
    memory is visible. `plgpu.griddepcontrol_launch_dependents()`
    (`launch_dependents`): lets the grids that depend on this one start
    before it ends. Launched in stream order, as the runtime launches, a
    grid's predecessors are already done: neither changes a value.

    ```mlir
    pk.grid_dependency wait
    pk.grid_dependency launch_dependents
    ```
  }];
  let arguments = (ins UnitAttr:$launch_dependents);
  let assemblyFormat = "(`launch_dependents` $launch_dependents^):(`wait`)? attr-dict";
}

def Pk_SetMaxRegistersOp : Pk_Op<"set_max_registers", []> {
  let summary = "resizes the register file of the running warpgroup";
  let description = [{
    `plgpu.set_max_registers(n, action="increase" | "decrease")`
    (`setmaxnreg`): a performance hint with no effect on values. `n` is a
    multiple of 8 between 24 and 256.

    ```mlir
    pk.set_max_registers 232 increase
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$count, UnitAttr:$increase);
  let assemblyFormat = "$count (`increase` $increase^)? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Semaphores
//===----------------------------------------------------------------------===//

def Pk_GetGlobalOp : Pk_Op<"get_global", []> {
  let summary = "a semaphore shared by every program of the kernel";
  let description = [{
    `pl.get_global(plgpu.SemaphoreType.REGULAR)`: one allocation per op for
    the whole kernel launch, starting at zero, that every CTA reaches.

    ```mlir
    %sem = pk.get_global : !pk.semaphore<[]>
    ```
  }];
  let results = (outs Pk_SemaphoreType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Pk_SemaphoreSignalOp : Pk_Op<"semaphore_signal", []> {
  let summary = "atomically adds to a semaphore";
  let description = [{
    `pl.semaphore_signal(sem, inc)`: what the thread did before is visible
    to a thread whose wait this signal satisfies.

    ```mlir
    pk.semaphore_signal %sem, %one : !pk.semaphore<[]>
    ```
  }];
  let arguments = (ins Pk_SemaphoreType:$semaphore, Variadic<Index>:$indices, I32:$increment);
  let assemblyFormat = [{
    $semaphore (`[` $indices^ `]`)? `,` $increment attr-dict `:` qualified(type($semaphore))
  }];
  let hasVerifier = 1;
}

def Pk_SemaphoreWaitOp : Pk_Op<"semaphore_wait", []> {
  let summary = "waits until a semaphore reaches a value, then subtracts it";
  let description = [{
    `pl.semaphore_wait(sem, value, decrement=)`: blocks until the counter is
    at least `value`; then, unless `no_decrement`, subtracts `value`.

    ```mlir
    pk.semaphore_wait %sem, %one : !pk.semaphore<[]>
    ```
  }];
  let arguments = (ins
    Pk_SemaphoreType:$semaphore,
    Variadic<Index>:$indices,
    I32:$value,
    UnitAttr:$no_decrement
  );
  let assemblyFormat = [{
    $semaphore (`[` $indices^ `]`)? `,` $value (`no_decrement` $no_decrement^)?
    attr-dict `:` qualified(type($semaphore))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Software pipelines
//===----------------------------------------------------------------------===//

def Pk_PipelineOp : Pk_Op<"pipeline", [AttrSizedOperandSegments, RecursiveMemoryEffects]> {
  let summary = "a software pipeline of block copies around a body";
  let description = [{
    `plgpu.emit_pipeline(body, grid=, in_specs=, out_specs=,
    max_concurrent_steps=, init_carry=)(*gmem_refs)`. The `grid` runs in
    order (row-major). At each step the `index_map` region, given the step's
    indices (i32), yields the block index of every operand (one i32 per
    axis, operands in order, squeezed axes included), computed as in
    pallas_call: element offset = index x block size. A `bounded` axis of a
    TPU pipeline (`pl.BoundedSlice(n)`) takes two: the element start and the
    size (at most n) of its slice; the block's first `size` rows along it
    are copied, the buffer keeps n. The `body` region
    then runs with the step's indices, a shared-memory Ref holding each
    operand's block (an operand whose spec has `memory_space = gmem` gets
    its global Ref itself), and the carried values; it yields the next
    carry. The results are the last carry.

    Input blocks are copied in before the step that needs them (up to
    `max_concurrent_steps` steps ahead, each input buffer released
    `delay_release` steps late); an output block is copied out after a
    step when the next step writes another block of it, and after the last
    step. Transforms of the body's Refs say how the buffers are laid out.

    A grid extent may be computed (`grid [%n]`, an index operand: a group's
    block count in a ragged kernel); the pipeline then runs `%n` steps,
    none when it is 0.

    `pltpu.emit_pipeline(body, grid=, in_specs=, out_specs=)(*refs)` is
    the same op over TPU Refs (`any`, `hbm`, `vmem`): blocks are copied
    between them and VMEM (or SMEM) buffers; specs in `any`/`hbm` pass the
    operand to the body as it is.

    With `warp_specialized` (`emit_pipeline_warp_specialized`) the op runs
    in the `num_compute_wgs` compute threads of `wg_axis`, which all run
    the body on the same shared buffers, while thread `memory_thread`
    issues the copies. A compute thread releases a step's slots when its
    body ends; with `manual_consumed_barriers` the body gets, after the
    blocks, one barrier per input (`consumedBarrierType()`: the slot's,
    `num_compute_wgs` arrivals) and releases that input's slot itself by
    arriving there, so that an input read early can be refilled early.
    `collective_axes` (warp-specialized only) names, per input, the
    cluster axes whose CTAs load the same blocks together
    (`plgpu.BlockSpec(collective_axes=)`): each CTA's copy is collective
    over them, and a slot is released only when the compute threads of
    every CTA along them are done with it.

    ```mlir
    pk.pipeline (%a, %b) grid [4] max_concurrent_steps 2
        {in_specs = [#pk.block_spec<[64, 64], computed>, #pk.block_spec<[64, 64], computed>],
         out_specs = [], delay_release = array<i64: 1, 1>}
        : (!pk.ref<64x256xf16, #pk.memory_space<gmem>>, !pk.ref<256x64xf16, #pk.memory_space<gmem>>)
      index_map {
      ^bb0(%k: i32):
        pk.scope_yield %c0, %k, %k, %c0 : i32, i32, i32, i32
      } body {
      ^bb0(%k: i32, %a_smem: !pk.ref<64x64xf16, #pk.memory_space<shared>>,
           %b_smem: !pk.ref<64x64xf16, #pk.memory_space<shared>>):
        ...
        pk.scope_yield
      }
    ```
  }];
  let arguments = (ins
    Variadic<Pk_RefType>:$refs,
    Variadic<AnyType>:$inits,
    Variadic<Index>:$dynamic_grid,
    DenseI64ArrayAttr:$grid,
    ConfinedAttr<I64Attr, [IntPositive]>:$max_concurrent_steps,
    TypedArrayAttrBase<Pk_BlockSpecAttr, "block specs">:$in_specs,
    TypedArrayAttrBase<Pk_BlockSpecAttr, "block specs">:$out_specs,
    DenseI64ArrayAttr:$delay_release,
    UnitAttr:$warp_specialized,
    OptionalAttr<StrAttr>:$wg_axis,
    OptionalAttr<I64Attr>:$num_compute_wgs,
    OptionalAttr<I64Attr>:$memory_thread,
    OptionalAttr<I64Attr>:$memory_registers,
    UnitAttr:$manual_consumed_barriers,
    OptionalAttr<TypedArrayAttrBase<StrArrayAttr, "per input, cluster axes">>:$collective_axes
  );
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$index_map, SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $refs `)` (`init` `(` $inits^ `)`)? `grid` custom<DynamicIndexList>($dynamic_grid, $grid)
    `max_concurrent_steps`
    $max_concurrent_steps (`warp_specialized` $warp_specialized^)? attr-dict
    (`:` `(` type($refs)^ `)`)? (`,` `(` type($inits)^ `)`)? (`->` type($results)^)?
    `index_map` $index_map `body` $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    size_t getNumIns() { return getInSpecs().size(); }
    /// The extent of grid axis `d`: a constant, or its dynamic_grid operand.
    ::mlir::OpFoldResult getGridExtent(unsigned d);
    /// The number of steps when every extent is static.
    std::optional<int64_t> getStaticSteps();
    ::pk::BlockSpecAttr getSpec(unsigned i) {
      return ::llvm::cast<::pk::BlockSpecAttr>(
          i < getInSpecs().size() ? getInSpecs()[i] : getOutSpecs()[i - getInSpecs().size()]);
    }
    /// Whether operand i is copied through a buffer (shared memory, or
    /// VMEM/SMEM on TPU) rather than passed to the body as it is.
    bool isPipelined(unsigned i);
    /// Whether operand i's block indices ignore the grid (none of the
    /// index_map's values for it depends on the step's indices): such an
    /// output of a GPU pipeline is stored once, after the last step.
    bool isIndexInvariant(unsigned i);
    /// A TPU pipeline (pltpu.emit_pipeline): its operands are TPU Refs
    /// (any, hbm, vmem) and its buffers VMEM or SMEM.
    bool isTpu();
    /// The type of the body's consumed barriers (manual_consumed_barriers):
    /// one barrier, num_compute_wgs arrivals.
    ::pk::BarrierType consumedBarrierType();
    /// The unit attribute the front end puts on the scf.if in which the
    /// compute threads run a warp-specialized pipeline: the memory
    /// thread's copies go right before it.
    static ::llvm::StringRef getWarpSpecializedBranchAttrName() {
      return "pk.warp_specialized_branch";
    }
    /// How many body arguments are consumed barriers.
    size_t getNumConsumedBarriers() {
      return getManualConsumedBarriers() ? getNumIns() : 0;
    }
  }];
}

// Blackwell's tensor memory and tcgen05 MMA, and its cluster launch control.
include "PkTensorMemoryOps.td"
include "PkClusterLaunchOps.td"

#endif // PK_MOSAIC_GPU_OPS_TD
