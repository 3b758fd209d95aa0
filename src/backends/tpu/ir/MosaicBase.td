//===- MosaicBase.td - The subset of Mosaic's `tpu` dialect -*- tablegen -*-===//
//
// pkc emits kernels in the form Pallas's Mosaic lowering hands to the TPU
// compiler (JAX's `tpu_custom_call`): `func.func`s over `memref`s whose
// bodies use `vector`, `arith`, `math`, `scf`, `memref` and a few ops and
// attributes of Mosaic's own `tpu` dialect. This file and MosaicOps.td
// define that subset: the dialect is named `tpu` and every attribute, enum
// and op prints and parses exactly as Mosaic's does (JAX 0.10's
// jaxlib/mosaic/dialect/tpu), so JAX's own parser reads what pkc writes.
// Nothing else about Mosaic is modelled; the C++ lives in ::pk::mosaic so
// that it never clashes with the backend code in ::pk::backends::tpu.
//
//===----------------------------------------------------------------------===//
#ifndef PK_MOSAIC_BASE_TD
#define PK_MOSAIC_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Mosaic_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::pk::mosaic";
  let summary = "the part of Mosaic's TPU dialect that pkc emits";
  let description = [{
    Attributes and ops with Mosaic's names, numbering and assembly, so that
    modules pkc builds through the MLIR API print as text that JAX's
    Mosaic bindings parse and verify.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

class Mosaic_Type<string name, string typeMnemonic>
    : TypeDef<Mosaic_Dialect, name, [MemRefElementTypeInterface]> {
  let mnemonic = typeMnemonic;
}

// Element types of semaphore memrefs (`memref<2x!tpu.dma_semaphore,
// #tpu.memory_space<semaphore_mem>>`).
def Mosaic_SemaphoreType : Mosaic_Type<"Semaphore", "semaphore"> {
  let summary = "a regular semaphore (pl.semaphore_signal / semaphore_wait)";
}
def Mosaic_DMASemaphoreType : Mosaic_Type<"DMASemaphore", "dma_semaphore"> {
  let summary = "a semaphore that async copies signal when they land";
}

class Mosaic_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Mosaic_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums. Case values are Mosaic's (they matter to its bytecode); the
// strings are what the text shows.
//===----------------------------------------------------------------------===//

def Mosaic_CoreType : I32EnumAttr<"CoreType", "Core type", [
    I32EnumAttrCase<"TC", 0, "tc">,
    I32EnumAttrCase<"SCScalarSubcore", 1, "sc_scalar_subcore">,
    I32EnumAttrCase<"SCVectorSubcore", 2, "sc_vector_subcore">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

def Mosaic_CoreTypeAttr : EnumAttr<Mosaic_Dialect, Mosaic_CoreType, "core_type"> {
  let summary = "which TPU core runs a kernel: `#tpu.core_type<tc>`";
  let assemblyFormat = "`<` $value `>`";
}

def Mosaic_DimensionSemantics : I32EnumAttr<"DimensionSemantics", "Dimension semantics", [
    I32EnumAttrCase<"Parallel", 0, "parallel">,
    I32EnumAttrCase<"Arbitrary", 1, "arbitrary">,
    I32EnumAttrCase<"CoreParallel", 2, "core_parallel">,
    I32EnumAttrCase<"SubcoreParallel", 3, "subcore_parallel">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

def Mosaic_DimensionSemanticsAttr
    : EnumAttr<Mosaic_Dialect, Mosaic_DimensionSemantics, "dimension_semantics"> {
  let summary = "how a grid axis may be scheduled: `#tpu.dimension_semantics<parallel>`";
  let assemblyFormat = "`<` $value `>`";
}

def Mosaic_PipelineMode : I32EnumAttr<"PipelineMode", "Pipeline mode", [
    I32EnumAttrCase<"Synchronous", 1, "synchronous">,
    I32EnumAttrCase<"DoubleBuffered", 2, "double_buffered">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

def Mosaic_PipelineModeAttr : EnumAttr<Mosaic_Dialect, Mosaic_PipelineMode, "pipeline_mode"> {
  let summary = "how many buffers a window gets: `#tpu.pipeline_mode<synchronous>`";
  let assemblyFormat = "`<` $value `>`";
}

def Mosaic_ContractPrecision : I32EnumAttr<"ContractPrecision", "Contraction precision", [
    I32EnumAttrCase<"BF16", 0, "bf16">,
    I32EnumAttrCase<"FP32", 1, "fp32">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

def Mosaic_ContractPrecisionAttr
    : EnumAttr<Mosaic_Dialect, Mosaic_ContractPrecision, "contract_precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def Mosaic_ReductionKind : I32EnumAttr<"ReductionKind", "Reduction kind", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">,
    I32EnumAttrCase<"ArgMax", 3, "arg_max">,
    I32EnumAttrCase<"ArgMin", 4, "arg_min">,
    I32EnumAttrCase<"FindFirstSet", 5, "find_first_set">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

def Mosaic_ReductionKindAttr : EnumAttr<Mosaic_Dialect, Mosaic_ReductionKind, "reduction_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

// Mosaic numbers `any` as 0xFFFFFFFF (an unsigned 32-bit enum).
def Mosaic_MemorySpace : I32EnumAttr<"MemorySpace", "Memory space", [
    I32EnumAttrCase<"Any", 4294967295, "any">,
    I32EnumAttrCase<"VMEM", 0, "vmem">,
    I32EnumAttrCase<"SMEM", 1, "smem">,
    I32EnumAttrCase<"HBM", 2, "hbm">,
    I32EnumAttrCase<"CMEM", 3, "cmem">,
    I32EnumAttrCase<"SemaphoreMem", 4, "semaphore_mem">,
    I32EnumAttrCase<"VMEMShared", 5, "vmem_shared">,
    I32EnumAttrCase<"Host", 6, "host">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::pk::mosaic";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Mosaic_MemorySpaceAttr : Mosaic_Attr<"MemorySpace", "memory_space"> {
  let summary = "where a memref lives: `#tpu.memory_space<vmem>`";
  let description = [{
    The memory space of a kernel operand's memref. `core_type` is optional
    and pkc never sets it; it is modelled so that Mosaic's text parses.
  }];
  let parameters = (ins
    "::pk::mosaic::MemorySpace":$value,
    OptionalParameter<"::std::optional<::pk::mosaic::CoreType>">:$core_type
  );
  let assemblyFormat = "`<` $value (`,` $core_type^)? `>`";
  let builders = [
    AttrBuilder<(ins "::pk::mosaic::MemorySpace":$value), [{
      return $_get($_ctxt, value, std::nullopt);
    }]>
  ];
}

def Mosaic_ElementWindowAttr : Mosaic_Attr<"ElementWindow", "element_window"> {
  let summary = "a window placed by element offsets, with padding: `#tpu.element_window<[1, 0], [1, 0]>`";
  let description = [{
    Marks a window whose transform function returns element offsets
    (Pallas `pl.Element`) into the array padded by `pad_low` before and
    `pad_high` after each axis.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "">:$pad_low,
    ArrayRefParameter<"int64_t", "">:$pad_high
  );
  let assemblyFormat = "`<` `[` $pad_low `]` `,` `[` $pad_high `]` `>`";
}

def Mosaic_DotDimensionNumbersAttr : Mosaic_Attr<"DotDimensionNumbers", "dot_dimension_numbers"> {
  let summary = "which axes of a tpu.matmul contract and how the result is ordered";
  let description = [{
    `output_dim_order` is a flat list of (operand, axis) pairs, operand 0
    for lhs and 1 for rhs: `[0, 0, 1, 1]` is lhs axis 0 then rhs axis 1.

    ```mlir
    #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "">:$lhs_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$rhs_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_non_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_non_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$output_dim_order,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_batch_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_batch_dims
  );
  // Mosaic's syntax: seven bracketed lists, possibly empty.
  let assemblyFormat = [{
    `<` `[` $lhs_contracting_dims `]` `,` `[` $rhs_contracting_dims `]` `,`
    `[` (`]`):($lhs_non_contracting_dims^ `]`)? `,`
    `[` (`]`):($rhs_non_contracting_dims^ `]`)? `,`
    `[` $output_dim_order `]` `,`
    `[` (`]`):($lhs_batch_dims^ `]`)? `,`
    `[` (`]`):($rhs_batch_dims^ `]`)? `>`
  }];
}

#endif // PK_MOSAIC_BASE_TD
