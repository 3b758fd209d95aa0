//===- PkGpuBase.td - The pkgpu dialect --------------------*- tablegen -*-===//
//
// `pkgpu` holds what the CUDA backend adds to pk IR between the block level
// and the thread level: Refs bound to global or shared memory, and
// distributed layouts saying which thread holds which element of a block
// value (as a tensor type encoding), with the conversions between them.
//
//===----------------------------------------------------------------------===//
#ifndef PKGPU_BASE_TD
#define PKGPU_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def PkGpu_Dialect : Dialect {
  let name = "pkgpu";
  let cppNamespace = "::pk::gpu";
  let summary = "pk IR on its way to the GPU: memory-bound Refs and distributed layouts";
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class PkGpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<PkGpu_Dialect, mnemonic, traits>;

#endif // PKGPU_BASE_TD
