//===- PkMosaicGpuAttrs.td - SMEM transforms and layouts ---*- tablegen -*-===//
//
// Attributes of the Mosaic GPU programming model. Included from
// PkAttrs.td so that the dialect's generated attribute parser sees them.
//
// SMEM transforms say how a Ref's elements are laid out in shared memory;
// they never change the values a program reads. A Ref type lists them in
// the order Mosaic GPU applies them to the logical array to get the
// physical one (`[#pk.transpose<1, 0>, #pk.tile<8, 64>, #pk.swizzle<128>]`
// is the transposed view of a tiled, swizzled buffer), which is what the
// CUDA lowering needs to address the buffer with TMA and wgmma.
//
//===----------------------------------------------------------------------===//
#ifndef PK_MOSAIC_GPU_ATTRS_TD
#define PK_MOSAIC_GPU_ATTRS_TD

def Pk_TileTransformAttr : Pk_Attr<"TileTransform", "tile"> {
  let summary = "plgpu.TilingTransform: row-major tiles of the minor dimensions";
  let description = [{
    The last `tiling.size()` dimensions are cut into tiles of shape
    `tiling`; each tile is stored contiguously (row-major), and the tiles
    follow each other in row-major order. Each tiled dimension must be a
    multiple of its tile size.

    ```mlir
    #pk.tile<8, 64>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$tiling);
  let assemblyFormat = "`<` $tiling `>`";
  let genVerifyDecl = 1;
}

def Pk_SwizzleTransformAttr : Pk_Attr<"SwizzleTransform", "swizzle"> {
  let summary = "plgpu.SwizzleTransform: the TMA / wgmma shared-memory swizzle";
  let description = [{
    Permutes 16-byte chunks within each `swizzle`-byte row (32, 64 or 128),
    as TMA writes and wgmma reads them, so that the rows of a tile fall in
    different banks. The minor dimension (of the tile, when tiled) must be
    exactly `swizzle` bytes long.

    ```mlir
    #pk.swizzle<128>
    ```
  }];
  let parameters = (ins "int64_t":$swizzle);
  let assemblyFormat = "`<` $swizzle `>`";
  let genVerifyDecl = 1;
}

def Pk_TransposeTransformAttr : Pk_Attr<"TransposeTransform", "transpose"> {
  let summary = "plgpu.TransposeTransform: dimensions permuted before linearizing";
  let description = [{
    Physical dimension `i` is logical dimension `permutation[i]`. A
    transposed view of a Ref (`plgpu.transpose_ref`) is described the same
    way: it is a transposition of the buffer's layout.

    ```mlir
    #pk.transpose<1, 0>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$permutation);
  let assemblyFormat = "`<` $permutation `>`";
  let genVerifyDecl = 1;
}

def Pk_GpuLayout : I32EnumAttr<"GpuLayout", "a register layout of Mosaic GPU", [
    I32EnumAttrCase<"WGMMA", 0, "wgmma">,
    I32EnumAttrCase<"WGMMARow", 1, "wgmma_row">,
    I32EnumAttrCase<"WGMMACol", 2, "wgmma_col">,
    I32EnumAttrCase<"WGMMATransposed", 3, "wgmma_transposed">,
    I32EnumAttrCase<"WGMMA8Bit", 4, "wgmma_8bit">,
    I32EnumAttrCase<"WGMMAUpcast2x", 5, "wgmma_upcast_2x">,
    I32EnumAttrCase<"WGMMAUpcast4x", 6, "wgmma_upcast_4x">,
    I32EnumAttrCase<"WGSplat", 7, "wg_splat">,
    I32EnumAttrCase<"WGStrided", 8, "wg_strided">,
    I32EnumAttrCase<"Tiled", 9, "tiled">,
    I32EnumAttrCase<"SmemGmemCopy", 10, "smem_gmem_copy">,
    I32EnumAttrCase<"TmaIndices", 11, "tma_indices">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_GpuLayoutAttr : EnumAttr<Pk_Dialect, Pk_GpuLayout, "layout"> {
  let summary = "plgpu.Layout: how a value is spread over a warpgroup's registers";
  let description = [{
    A hint for the CUDA lowering; values are the same in every layout.

    ```mlir
    #pk.layout<wgmma>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // PK_MOSAIC_GPU_ATTRS_TD
