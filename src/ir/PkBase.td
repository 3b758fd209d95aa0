//===- PkBase.td - The pk dialect and its enums ------------*- tablegen -*-===//
//
// The `pk` dialect is pkc's typed IR: what the elaborator produces from a
// .pk file, what the reference interpreter executes, and what every backend
// lowers. It keeps the Pallas structure intact - exports with full-array
// signatures, pallas_calls with grids and BlockSpecs, and block-level kernel
// bodies - and uses the upstream arith, math and scf dialects for scalar and
// element-wise work and for control flow.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BASE_TD
#define PK_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Pk_Dialect : Dialect {
  let name = "pk";
  let cppNamespace = "::pk";
  let summary = "Pallas-style kernels: exports, pallas_calls, block-level bodies";
  let description = [{
    Full arrays live at the export level as ranked tensors whose dynamic
    dimensions are symbolic sizes; their symbolic shapes are affine maps over
    the enclosing export's `symbols`. Inside a `pk.pallas_call` kernel, data
    is reached through `!pk.ref` block references and computed on as static
    tensors (or scalars, for rank 0).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Pk_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pk_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Pk_MemorySpace : I32EnumAttr<"MemorySpace", "where a Ref's buffer lives", [
    I32EnumAttrCase<"Any", 0, "any">,
    I32EnumAttrCase<"VMEM", 1, "vmem">,
    I32EnumAttrCase<"SMEM", 2, "smem">,
    I32EnumAttrCase<"HBM", 3, "hbm">,
    I32EnumAttrCase<"GPUGlobal", 4, "gmem">,
    I32EnumAttrCase<"GPUShared", 5, "shared">,
    I32EnumAttrCase<"GPUAccumulator", 6, "wgmma_acc">,
    I32EnumAttrCase<"GPUTensorMemory", 7, "tmem">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_MemorySpaceAttr : EnumAttr<Pk_Dialect, Pk_MemorySpace, "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
}

def Pk_SemaphoreKind : I32EnumAttr<"SemaphoreKind", "what a semaphore counts", [
    I32EnumAttrCase<"Regular", 0, "regular">,
    I32EnumAttrCase<"Barrier", 1, "barrier">,
    I32EnumAttrCase<"DMA", 2, "dma">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_BlockDimKind : I32EnumAttr<"BlockDimKind", "how a BlockSpec maps one array axis", [
    I32EnumAttrCase<"Blocked", 0, "blocked">,
    I32EnumAttrCase<"Squeezed", 1, "squeezed">,
    I32EnumAttrCase<"Element", 2, "element">,
    I32EnumAttrCase<"Bounded", 3, "bounded">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_ReductionKind : I32EnumAttr<"ReductionKind", "how pk.reduce combines elements", [
    I32EnumAttrCase<"Add", 0, "add">,
    I32EnumAttrCase<"Mul", 1, "mul">,
    I32EnumAttrCase<"MaxF", 2, "maxf">,
    I32EnumAttrCase<"MinF", 3, "minf">,
    I32EnumAttrCase<"MaxSI", 4, "maxsi">,
    I32EnumAttrCase<"MinSI", 5, "minsi">,
    I32EnumAttrCase<"MaxUI", 6, "maxui">,
    I32EnumAttrCase<"MinUI", 7, "minui">,
    I32EnumAttrCase<"And", 8, "and">,
    I32EnumAttrCase<"Or", 9, "or">,
    I32EnumAttrCase<"Xor", 10, "xor">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_ReductionKindAttr : EnumAttr<Pk_Dialect, Pk_ReductionKind, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def Pk_AtomicKind : I32EnumAttr<"AtomicKind", "what an atomic read-modify-write does", [
    I32EnumAttrCase<"Xchg", 0, "xchg">,
    I32EnumAttrCase<"Add", 1, "add">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"MaxU", 4, "umax">,
    I32EnumAttrCase<"MinU", 5, "umin">,
    I32EnumAttrCase<"And", 6, "and">,
    I32EnumAttrCase<"Or", 7, "or">,
    I32EnumAttrCase<"Xor", 8, "xor">
  ]> {
  let cppNamespace = "::pk";
  let genSpecializedAttr = 0;
}

def Pk_AtomicKindAttr : EnumAttr<Pk_Dialect, Pk_AtomicKind, "atomic"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // PK_BASE_TD
