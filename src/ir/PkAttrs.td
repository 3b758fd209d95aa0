//===- PkAttrs.td - pk dialect attributes ------------------*- tablegen -*-===//
#ifndef PK_ATTRS_TD
#define PK_ATTRS_TD

include "PkBase.td"

class Pk_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Pk_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Pk_BlockSpecAttr : Pk_Attr<"BlockSpec", "block_spec"> {
  let summary = "how one pallas_call operand is cut into blocks";
  let description = [{
    One entry per array axis:
    - `N` (blocked): the block has N elements on this axis, and the index
      map returns a block index; the block starts at index * N.
    - `squeezed`: a block of one element, removed from the kernel's Ref.
      The index map returns the element index.
    - `element N pad L H`: the index map returns an element offset into the
      array padded by L before and H after (Pallas `pl.Element` /
      `pl.Unblocked`).

    `index_map` maps the grid indices (dims) and the export's symbolic
    sizes (symbols) to one index per axis. It is absent when the index map
    is not affine; the pallas_call's `index_map` region then computes it.

    ```mlir
    #pk.block_spec<[128, squeezed, element 64 pad 2 2], affine_map<(d0, d1) -> (d0, 0, d1 * 64)>>
    #pk.block_spec<[8, 128], computed, memory_space = vmem>
    #pk.block_spec<[bounded 8, 128], computed, memory_space = vmem>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$blockShape,
    ArrayRefParameter<"::pk::BlockDimKind">:$dimKinds,
    ArrayRefParameter<"int64_t">:$paddingLow,
    ArrayRefParameter<"int64_t">:$paddingHigh,
    "::mlir::AffineMap":$indexMap,
    DefaultValuedParameter<"::mlir::Attribute", "::mlir::Attribute()">:$memorySpace
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getBlockShape().size(); }
    bool hasAffineIndexMap() const { return static_cast<bool>(getIndexMap()); }
    bool isSqueezed(unsigned dim) const {
      return getDimKinds()[dim] == ::pk::BlockDimKind::Squeezed;
    }
    bool isElement(unsigned dim) const {
      return getDimKinds()[dim] == ::pk::BlockDimKind::Element;
    }
    /// pl.BoundedSlice(n) (TPU pipelines only): the index map gives an
    /// element start and a size of at most n, both dynamic.
    bool isBounded(unsigned dim) const {
      return getDimKinds()[dim] == ::pk::BlockDimKind::Bounded;
    }
    /// How many i32 values an index_map region yields for this spec: one
    /// per axis, two (start, size) for a bounded axis.
    int64_t getNumIndexValues() const;
    /// The shape of the Ref the kernel sees: squeezed axes removed.
    ::llvm::SmallVector<int64_t> getKernelShape() const;
  }];
}

include "PkMosaicGpuAttrs.td"

#endif // PK_ATTRS_TD
