//===- PkOps.td - pk dialect operations --------------------*- tablegen -*-===//
#ifndef PK_OPS_TD
#define PK_OPS_TD

include "PkBase.td"
include "PkTypes.td"
include "PkAttrs.td"

include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A block value: a static tensor, or a scalar for rank 0.
def Pk_BlockValue : AnyTypeOf<[AnyStaticShapeTensor, AnySignlessInteger, AnyFloat],
                              "block value (static tensor or scalar)">;

//===----------------------------------------------------------------------===//
// Export level
//===----------------------------------------------------------------------===//

def Pk_ExportOp : Pk_Op<"export", [
    FunctionOpInterface, IsolatedFromAbove, OpAsmOpInterface
  ]> {
  let summary = "a kernel entry point with a full-array signature";
  let description = [{
    One `@export` function of a .pk file. Arguments and results are the full
    arrays the caller passes; dynamic dimensions are symbolic sizes, named
    by `symbols`, and each argument's and result's `pk.shape` attribute
    gives its shape as an affine map over those symbols. Every symbol
    appears alone as a dimension of some argument, so a launcher can bind it
    from argument shapes. The body holds `pk.pallas_call`s and returns their
    results.

    ```mlir
    pk.export @add(%x: tensor<?xf32> {pk.name = "x", pk.shape = affine_map<()[s0] -> (s0)>})
        -> (tensor<?xf32> {pk.shape = affine_map<()[s0] -> (s0)>})
        attributes {symbols = ["N"]} {
      %0 = pk.pallas_call "add_kernel"(%x) ...
      pk.return %0 : tensor<?xf32>
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<FunctionType>:$function_type,
    StrArrayAttr:$symbols,
    OptionalAttr<DictArrayAttr>:$arg_attrs,
    OptionalAttr<DictArrayAttr>:$res_attrs
  );
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    bool isDeclaration() { return false; }

    /// Symbolic shape of argument / result `i`: ()[symbols] -> (dims).
    ::mlir::AffineMap getArgShape(unsigned i);
    ::mlir::AffineMap getResultShape(unsigned i);
    /// The source-level name of argument `i` ("x"), or "" if unnamed.
    ::llvm::StringRef getArgName(unsigned i);
    unsigned getNumSymbols() { return getSymbols().size(); }

    void getAsmBlockArgumentNames(::mlir::Region &region,
                                  ::mlir::OpAsmSetValueNameFn setNameFn);
    static ::llvm::StringRef getDefaultDialect() { return "pk"; }

    static constexpr ::llvm::StringLiteral kShapeAttr = "pk.shape";
    static constexpr ::llvm::StringLiteral kNameAttr = "pk.name";
  }];
}

def Pk_ReturnOp : Pk_Op<"return", [Pure, HasParent<"ExportOp">, ReturnLike, Terminator]> {
  let summary = "returns an export's results";
  let arguments = (ins Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
  let hasVerifier = 1;
}

def Pk_PallasCallOp : Pk_Op<"pallas_call", [
    RecursiveMemoryEffects, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "runs a kernel over a grid of blocks";
  let description = [{
    Pallas's `pallas_call`. The kernel region runs once per point of the
    grid, whose sizes are `grid`: an affine map from the export's symbols to
    one size per dimension (no results: a single program). Its block
    arguments are one `!pk.ref` per input, per output, then per scratch
    buffer, each the block the corresponding BlockSpec selects at that grid
    point.

    `out_shapes` gives each output's full shape as an affine map over the
    symbols; `input_output_aliases` is a flat list of (input, output) pairs.
    Block specs whose index map is not affine are computed by the
    `index_map` region, which receives the grid indices (i32) and yields,
    for each such spec in operand order, one i32 per array axis.

    The first `num_scalar_prefetch` inputs are scalar-prefetch operands
    (`pltpu.PrefetchScalarGridSpec`): they have no block spec; the kernel and
    the `index_map` region (after the grid indices) receive each as a Ref of
    the whole array in SMEM, so index maps can read them.

    A grid size computed from data (Pallas's dynamic grid bounds, such as
    megablox's `num_active_tiles = group_tiles.sum()`) is a `grid_bounds`
    operand: a 0-d i32 array, which `grid` names as the symbol after the
    export's own (`grid_bounds[k]` is symbol `export symbols + k`). Index
    maps and output shapes take only the export's symbols; neither the
    kernel nor the index maps receive the bounds (they read the grid with
    `pk.num_programs`).

    ```mlir
    %y = pk.pallas_call "k"(%x) bounds(%n : tensor<i32>)
        grid = affine_map<()[s0, s1] -> (s0 ceildiv 128, s1)> ...
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$inputs,
    Variadic<0DTensorOf<[I32]>>:$grid_bounds,
    StrAttr:$name,
    AffineMapAttr:$grid,
    TypedArrayAttrBase<Pk_BlockSpecAttr, "block specs">:$in_specs,
    TypedArrayAttrBase<Pk_BlockSpecAttr, "block specs">:$out_specs,
    TypedArrayAttrBase<AffineMapAttr, "symbolic shapes">:$out_shapes,
    TypeArrayAttr:$scratch_types,
    DenseI64ArrayAttr:$input_output_aliases,
    OptionalAttr<DictionaryAttr>:$compiler_params,
    OptionalAttr<StrArrayAttr>:$kernel_arg_names,
    DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$num_scalar_prefetch
  );
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$kernel, AnyRegion:$index_map);
  let assemblyFormat = [{
    $name `(` $inputs `)` (`bounds` `(` $grid_bounds^ `:` type($grid_bounds) `)`)?
    `grid` `=` $grid attr-dict `:` functional-type($inputs, $outputs)
    `kernel` $kernel (`index_map` $index_map^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getGridRank() { return getGrid().getNumResults(); }
    /// The symbols of the export the grid takes before its bounds'.
    unsigned getNumExportSymbols() { return getGrid().getNumSymbols() - getGridBounds().size(); }
    /// Whether grid axis `axis`'s size is read from a grid_bounds operand.
    bool isDynamicGridAxis(unsigned axis) {
      for (unsigned s = getNumExportSymbols(); s < getGrid().getNumSymbols(); ++s)
        if (getGrid().getResult(axis).isFunctionOfSymbol(s))
          return true;
      return false;
    }
    /// Inputs that have a block spec: those after the scalar-prefetch ones.
    ::mlir::OperandRange getWindowedInputs() {
      return getInputs().drop_front(getNumScalarPrefetch());
    }
    ::pk::BlockSpecAttr getInSpec(unsigned i) {
      return ::llvm::cast<::pk::BlockSpecAttr>(getInSpecs()[i]);
    }
    ::pk::BlockSpecAttr getOutSpec(unsigned i) {
      return ::llvm::cast<::pk::BlockSpecAttr>(getOutSpecs()[i]);
    }
    ::mlir::AffineMap getOutShape(unsigned i) {
      return ::llvm::cast<::mlir::AffineMapAttr>(getOutShapes()[i]).getValue();
    }
    /// Specs of inputs then outputs, in operand order.
    ::llvm::SmallVector<::pk::BlockSpecAttr> getAllSpecs();
    ::mlir::Block &getKernelBlock() { return getKernel().front(); }
  }];
}

def Pk_YieldOp : Pk_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"PallasCallOp">
  ]> {
  let summary = "ends a kernel (no values) or an index map (block indices)";
  let arguments = (ins Variadic<I32>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

//===----------------------------------------------------------------------===//
// Grid and sizes
//===----------------------------------------------------------------------===//

def Pk_ProgramIdOp : Pk_Op<"program_id", [Pure]> {
  let summary = "the grid index of the running program along an axis";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pk_NumProgramsOp : Pk_Op<"num_programs", [Pure]> {
  let summary = "the size of the grid along an axis";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pk_SymbolicSizeOp : Pk_Op<"symbolic_size", [Pure]> {
  let summary = "an affine expression of the export's symbolic sizes";
  let description = [{
    Materializes, inside a kernel or index map, a size the enclosing export
    only knows at launch: `expr` is a one-result affine map over the
    export's symbols.

    ```mlir
    %n = pk.symbolic_size affine_map<()[s0] -> (s0 ceildiv 128)> : i32
    ```
  }];
  let arguments = (ins AffineMapAttr:$expr);
  let results = (outs I32:$result);
  let assemblyFormat = "$expr attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Refs
//===----------------------------------------------------------------------===//

def Pk_LoadOp : Pk_Op<"load", [AttrSizedOperandSegments]> {
  let summary = "reads a strided window of a Ref";
  let description = [{
    Reads `sizes` elements per axis starting at `offsets` with `strides`.
    Axes listed in `squeeze` (size 1) are dropped from the result: this is
    how `x_ref[i, :]` reads a row. With a `mask`, masked-off elements are
    not read and take `other` (a scalar or a value of the result shape;
    when absent their value is unspecified).

    Dynamic offsets follow `lax.dynamic_slice`: a negative offset counts
    from the end, and the window is then clamped to fit. By default (Ref
    indexing, `x_ref[pl.ds(i, 8)]`) that is done on the Ref itself, so a
    window past the end is shifted back inside it. With `padded` or a `mask`
    (`pl.load`) it is done on the Ref padded past its end by the window
    size: elements past the end are uninitialized values, and an offset past
    the end gives a window of padding only.

    ```mlir
    %v = pk.load %x[%i, 0] sizes [1, 128] strides [1, 1] squeeze [0]
        : !pk.ref<8x128xf32> -> tensor<128xf32>
    %w = pk.load %x[%j] sizes [8] strides [1] squeeze [] padded
        : !pk.ref<100xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$ref,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$static_offsets,
    DenseI64ArrayAttr:$sizes,
    DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$squeeze,
    Optional<Pk_BlockValue>:$mask,
    Optional<Pk_BlockValue>:$other,
    UnitAttr:$padded
  );
  let results = (outs Pk_BlockValue:$result);
  let assemblyFormat = [{
    $ref custom<DynamicIndexList>($offsets, $static_offsets)
    `sizes` $sizes `strides` $strides `squeeze` $squeeze
    (`mask` $mask^ `:` type($mask))? (`other` $other^ `:` type($other))?
    (`padded` $padded^)?
    attr-dict `:` type($ref) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedOffsets();
  }];
}

def Pk_StoreOp : Pk_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "writes a strided window of a Ref";
  let description = [{
    The mirror of `pk.load`: writes `value` (of the window's shape, squeezed
    axes removed) into the window. Masked-off elements are not written.
    A window past the Ref's end is shifted back inside it by default (Ref
    assignment, `o_ref[pl.ds(i, 8)] = v`); with `padded` or a `mask`
    (`pl.store`) the elements past the end are dropped instead, as
    `pk.load` reads them.
  }];
  let arguments = (ins
    Pk_BlockValue:$value,
    Pk_RefType:$ref,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$static_offsets,
    DenseI64ArrayAttr:$sizes,
    DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$squeeze,
    Optional<Pk_BlockValue>:$mask,
    UnitAttr:$padded
  );
  let assemblyFormat = [{
    $value `,` $ref custom<DynamicIndexList>($offsets, $static_offsets)
    `sizes` $sizes `strides` $strides `squeeze` $squeeze
    (`mask` $mask^ `:` type($mask))? (`padded` $padded^)?
    attr-dict `:` type($value) `,` type($ref)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedOffsets();
  }];
}

def Pk_AtomicRmwOp : Pk_Op<"atomic_rmw", [AttrSizedOperandSegments]> {
  let summary = "atomically updates a window of a Ref, returning what was there";
  let description = [{
    `pl.atomic_add(x_ref, idx, v)` and its kin: each element of the window
    (as `pk.store` with `padded`: elements past the Ref's end and masked-off
    ones are untouched) becomes `kind(old, value)`, atomically with respect
    to other programs, and the result holds the old values (masked-off and
    out-of-bounds elements read as uninitialized). `max`/`min` compare as
    the Ref's element type does (signed, or floating point); `umax`/`umin`
    are for unsigned Refs.
  }];
  let arguments = (ins
    Pk_AtomicKindAttr:$kind,
    Pk_BlockValue:$value,
    Pk_RefType:$ref,
    Variadic<Index>:$offsets,
    DenseI64ArrayAttr:$static_offsets,
    DenseI64ArrayAttr:$sizes,
    DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$squeeze,
    Optional<Pk_BlockValue>:$mask
  );
  let results = (outs Pk_BlockValue:$result);
  let assemblyFormat = [{
    $kind $value `,` $ref custom<DynamicIndexList>($offsets, $static_offsets)
    `sizes` $sizes `strides` $strides `squeeze` $squeeze
    (`mask` $mask^ `:` type($mask))?
    attr-dict `:` type($value) `,` type($ref) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
    bool getPadded() { return true; }
  }];
}

def Pk_AtomicCasOp : Pk_Op<"atomic_cas", [AllTypesMatch<["cmp", "value", "result"]>]> {
  let summary = "atomic compare-and-swap of one element of a Ref";
  let description = [{
    `plgpu.atomic_cas(ref, cmp, val)`: where the element at `offsets` equals
    `cmp` it becomes `value`, atomically; the result is the old element.
  }];
  let arguments = (ins
    Pk_RefType:$ref,
    Variadic<Index>:$offsets,
    AnyTypeOf<[AnyInteger, AnyFloat]>:$cmp,
    AnyTypeOf<[AnyInteger, AnyFloat]>:$value
  );
  let results = (outs AnyTypeOf<[AnyInteger, AnyFloat]>:$result);
  let assemblyFormat = [{
    $ref `[` $offsets `]` `,` $cmp `,` $value attr-dict `:` qualified(type($ref)) `,` type($value)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
  }];
}

def Pk_GatherOp : Pk_Op<"gather", [AttrSizedOperandSegments]> {
  let summary = "reads the elements of a Ref at computed coordinates";
  let description = [{
    Indexing a Ref with integer arrays (`x_ref[idx]`,
    `pl.load(x_ref, (rows[:, None], cols[None, :]), mask=m)`): `indices`
    holds one i32 tensor of the result's shape per Ref axis, and result
    element k reads the Ref at (indices[0][k], indices[1][k], ...).
    Coordinates outside the Ref are clamped into it, as JAX's gathers do;
    masked-off elements are not read and take `other` (or an unspecified
    value).

    ```mlir
    %v = pk.gather %x[%rows, %cols] : !pk.ref<8x128xf32>, tensor<4x16xi32>, tensor<4x16xi32>
        -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins
    Pk_RefType:$ref,
    Variadic<AnyStaticShapeTensor>:$indices,
    Optional<Pk_BlockValue>:$mask,
    Optional<Pk_BlockValue>:$other
  );
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $ref `[` $indices `]` (`mask` $mask^ `:` type($mask))? (`other` $other^ `:` type($other))?
    attr-dict `:` qualified(type($ref)) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
  }];
}

def Pk_ScatterOp : Pk_Op<"scatter", [AttrSizedOperandSegments]> {
  let summary = "writes elements of a Ref at computed coordinates";
  let description = [{
    The mirror of `pk.gather`: element k of `value` goes to the Ref at
    (indices[0][k], ...). Coordinates outside the Ref, and masked-off
    elements, are not written. When two elements go to the same place, the
    later one (in row-major order) wins.
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$value,
    Pk_RefType:$ref,
    Variadic<AnyStaticShapeTensor>:$indices,
    Optional<Pk_BlockValue>:$mask
  );
  let assemblyFormat = [{
    $value `,` $ref `[` $indices `]` (`mask` $mask^ `:` type($mask))?
    attr-dict `:` type($value) `,` qualified(type($ref)) `,` type($indices)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::pk::RefType getRefType() { return ::llvm::cast<::pk::RefType>(getRef().getType()); }
  }];
}

//===----------------------------------------------------------------------===//
// Array structure
//===----------------------------------------------------------------------===//

def Pk_IotaOp : Pk_Op<"iota", [Pure]> {
  let summary = "element indices along one axis";
  let description = [{
    `result[i0, ..., in] = i_dimension`, as `lax.broadcasted_iota`.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pk_BroadcastInDimOp : Pk_Op<"broadcast_in_dim", [Pure]> {
  let summary = "broadcasts a value to a larger shape";
  let description = [{
    Operand axis `i` becomes result axis `broadcast_dimensions[i]`; its size
    is 1 (replicated) or equal to the result's. A scalar operand takes no
    dimensions and fills the result.
  }];
  let arguments = (ins Pk_BlockValue:$operand, DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `dims` $broadcast_dimensions attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_ReshapeOp : Pk_Op<"reshape", [Pure]> {
  let summary = "reinterprets a value's elements, in row-major order, in a new shape";
  let arguments = (ins Pk_BlockValue:$operand);
  let results = (outs Pk_BlockValue:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_TransposeOp : Pk_Op<"transpose", [Pure]> {
  let summary = "permutes axes: result axis i is operand axis permutation[i]";
  let arguments = (ins AnyStaticShapeTensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `perm` $permutation attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_SliceOp : Pk_Op<"slice", [Pure]> {
  let summary = "a static strided window of a value";
  let description = [{
    As `lax.slice`: elements `start + k * stride` for `start + k * stride <
    limit` on each axis. Used for basic indexing of values (`x[2:5]`).
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$operand,
    DenseI64ArrayAttr:$start_indices,
    DenseI64ArrayAttr:$limit_indices,
    DenseI64ArrayAttr:$strides
  );
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `start` $start_indices `limit` $limit_indices `stride` $strides
    attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_ConcatenateOp : Pk_Op<"concatenate", [Pure]> {
  let summary = "joins values along one axis";
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$operands,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operands `dim` $dimension attr-dict `:` functional-type($operands, $result)
  }];
  let hasVerifier = 1;
}

def Pk_ButterflyOp : Pk_Op<"butterfly", [Pure, AllTypesMatch<["operand", "result"]>]> {
  let summary = "exchanges the elements `distance` apart along one axis, in pairs";
  let description = [{
    Element `i` along `dimension` of the result is element `i ^ distance`
    of the operand; `distance` is a power of two and the axis a multiple
    of `2 * distance`. It is the exchange of a sorting network's stage (or
    of a butterfly reduction): pkc's sorts are built from it. The CUDA
    backend moves registers, lanes (warp shuffles) or, across warps,
    shared memory; backends without it expand it into a reshape, two
    slices and a concatenation (pk-expand-butterflies).

    ```mlir
    %p = pk.butterfly %x dim 1 distance 4 : tensor<8x32xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension,
                       ConfinedAttr<I64Attr, [IntPositive]>:$distance);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `dim` $dimension `distance` $distance attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_BitcastOp : Pk_Op<"bitcast", [Pure]> {
  let summary = "reinterprets bits as a type of another width, packing rows";
  let description = [{
    `pltpu.bitcast(x, ty)` between element widths: the bits of consecutive
    rows of the second-minor axis make one row of the result. From a
    narrower type (`p` = wider width / narrower width), result row `i` holds
    operand rows `p*i .. p*i + p - 1`, row `p*i + k` in bits `k*w ..` of
    each element (`w` the operand's width); to a narrower type it is the
    reverse. Other axes are unchanged:

        tensor<...x(M)xNxbf16> -> tensor<...x(M/2)xNxi32>

    As Mosaic's `tpu.bitcast`; a bitcast between types of one width is
    `arith.bitcast`. Backends without a packing bitcast expand it into
    strided slices, shifts and concatenations (pk-expand-bitcasts).

    ```mlir
    %w = pk.bitcast %x : tensor<16x128xbf16> -> tensor<8x128xi32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

def Pk_ReduceOp : Pk_Op<"reduce", [Pure]> {
  let summary = "combines elements along axes";
  let description = [{
    Reduces the `axes` of the operand with `kind`; the result drops those
    axes (a scalar when all are reduced). The `maxf`/`minf` kinds
    propagate NaN, like `jnp.max`.

    ```mlir
    %m = pk.reduce <maxf> %x axes [1] : tensor<8x128xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$operand,
    Pk_ReductionKindAttr:$kind,
    DenseI64ArrayAttr:$axes
  );
  let results = (outs Pk_BlockValue:$result);
  let assemblyFormat = [{
    $kind $operand `axes` $axes attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_ArgReduceOp : Pk_Op<"arg_reduce", [Pure]> {
  let summary = "the index of the largest or smallest element along an axis";
  let description = [{
    `kind` is one of the max / min kinds. Ties pick the first index; for
    floats a NaN counts as the extreme, as in `jnp.argmax`.
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$operand,
    Pk_ReductionKindAttr:$kind,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$axis
  );
  let results = (outs Pk_BlockValue:$result);
  let assemblyFormat = [{
    $kind $operand `axis` $axis attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_DotOp : Pk_Op<"dot", [Pure]> {
  let summary = "matrix product of two 2-D values";
  let description = [{
    `result = op(lhs) x op(rhs)` where `op` transposes when the matching
    flag is set. Products accumulate in the result's element type
    (`preferred_element_type`); operands may be narrower. Integer types are
    signless, so `unsigned_operands` says how narrower integer operands
    widen: zero-extended (uint8 x uint8 -> uint32) rather than
    sign-extended.

    `allow_tf32` (f32 operands only) is JAX's DEFAULT and HIGH precision
    on GPUs, as Pallas lowers them: the operands may be multiplied as
    TF32 (their 19 high bits). The CUDA backend then truncates them to
    TF32 on every path, so that tensor-core and scalar code agree; the
    interpreter and the TPU backend multiply them in full, as JAX does
    on those devices. Without it (HIGHEST, `allow_tf32=False`) f32
    products are exact.

    ```mlir
    %c = pk.dot %a, %b : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    ```
  }];
  let arguments = (ins
    AnyStaticShapeTensor:$lhs,
    AnyStaticShapeTensor:$rhs,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs,
    UnitAttr:$unsigned_operands,
    UnitAttr:$allow_tf32
  );
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Pk_DebugPrintOp : Pk_Op<"debug_print"> {
  let summary = "prints a formatted line when a program runs (pl.debug_print)";
  let description = [{
    `pl.debug_print(fmt, *values)` and `jax.debug.print` in a kernel. The
    `format` is a Python format string whose `{}` fields (with an optional
    spec, `{:.3f}`) take the values in order; `dtypes` names each value's
    element type (signedness and bools are not in the IR's types). Each
    program prints once, values formatted as NumPy prints them; the
    interpreter runs the programs in grid order.

    ```mlir
    pk.debug_print "i = {}, x = {}" (%i, %x : i32, tensor<8xf32>) dtypes ["i32", "f32"]
    ```
  }];
  let arguments = (ins StrAttr:$format, Variadic<Pk_BlockValue>:$values, StrArrayAttr:$dtypes);
  let assemblyFormat = [{
    $format (`(` $values^ `:` type($values) `)`)? `dtypes` $dtypes attr-dict
  }];
  let hasVerifier = 1;
}

#endif // PK_OPS_TD
