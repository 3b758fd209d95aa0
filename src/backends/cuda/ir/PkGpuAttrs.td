//===- PkGpuAttrs.td - Distributed layouts -----------------*- tablegen -*-===//
#ifndef PKGPU_ATTRS_TD
#define PKGPU_ATTRS_TD

include "backends/cuda/ir/PkGpuBase.td"

def PkGpu_LayoutAttr : AttrDef<PkGpu_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "which thread holds which element of a block value";
  let description = [{
    A block value of shape S is held in registers spread over the CTA's
    threads. Its layout covers the padded shape P (each dimension of S
    rounded up to a power of two) and maps every bit of a thread's
    register index, lane index (5 bits) and warp index to one bit of an
    element's coordinate: entry `dDbB` sets bit B of coordinate D, `*` sets
    nothing (the threads that differ in that bit hold the same elements).
    Each coordinate bit is set by exactly one entry, so a thread holds
    2^len(regs) elements; the coordinate of register k in lane l of warp w
    is the OR of the bits its entries set. These are Triton's linear
    layouts, restricted to permutations of bits.

    ```mlir
    // 8x128: 4 contiguous columns per register group, a warp per row pair.
    #pkgpu.layout<[8, 128], regs = [d1b0, d1b1, d0b2],
                  lanes = [d1b2, d1b3, d1b4, d1b5, d1b6], warps = [d0b0, d0b1]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "padded shape">:$shape,
    ArrayRefParameter<"int64_t", "register bit bases">:$regs,
    ArrayRefParameter<"int64_t", "lane bit bases">:$lanes,
    ArrayRefParameter<"int64_t", "warp bit bases">:$warps
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // PKGPU_ATTRS_TD
