//===- PkTypes.td - pk dialect types -----------------------*- tablegen -*-===//
#ifndef PK_TYPES_TD
#define PK_TYPES_TD

include "PkBase.td"

class Pk_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Pk_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Pk_RefType : Pk_Type<"Ref", "ref"> {
  let summary = "a mutable reference to a block of memory";
  let description = [{
    What a kernel receives for each input, output and scratch buffer: the
    block (a window of the full array, with squeezed dimensions removed),
    readable with `pk.load` and writable with `pk.store`. The shape is
    static, except on the view a ragged async copy moves (`?`, made only by
    `pk.ref_view` with a dynamic size and used only by `pk.dma_start` /
    `pk.dma_wait`). The element type keeps signedness (`ui8` vs `i8`) so that
    manifests and I/O know it; values loaded from a Ref are signless.

    ```mlir
    !pk.ref<128x64xf32>
    !pk.ref<8x128xbf16, #pk.memory_space<vmem>>
    !pk.ref<f32>   // a rank-0 Ref
    !pk.ref<?x128xf32, #pk.memory_space<any>>   // a ragged copy's view
    !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
    ```

    `transforms` (Mosaic GPU shared memory only) say how the elements are
    laid out (PkMosaicGpuAttrs.td); they do not change the values.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    DefaultValuedParameter<"::mlir::Attribute", "::mlir::Attribute()">:$memorySpace,
    DefaultValuedParameter<"::mlir::ArrayAttr", "::mlir::ArrayAttr()">:$transforms
  );
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        CArg<"::mlir::Attribute", "{}">:$memorySpace,
        CArg<"::mlir::ArrayAttr", "{}">:$transforms), [{
      return $_get(elementType.getContext(), shape, elementType, memorySpace, transforms);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    /// The ranked tensor (or scalar, for rank 0) a full read produces.
    ::mlir::Type getValueType() const;
    /// The memory space, or null when none is given.
    ::std::optional<::pk::MemorySpace> getSpace() const;
    bool hasTransforms() const { return getTransforms() && !getTransforms().empty(); }
    /// A ragged copy's view: some dimension is `?`.
    bool hasDynamicShape() const {
      return ::llvm::any_of(getShape(), ::mlir::ShapedType::isDynamic);
    }
  }];
}

include "PkMosaicGpuTypes.td"

#endif // PK_TYPES_TD
