//===- Passes.td - The TPU backend's stages ----------------*- tablegen -*-===//
//
// pk IR -> Mosaic TPU MLIR in three stages, each runnable alone with
// pk-opt: small array code moves to the scalar core, the TPU rules are
// checked on pk IR (errors at the user's lines), then every pallas_call
// becomes a Mosaic kernel module. TpuBackend.cpp runs them in order.
//
//===----------------------------------------------------------------------===//
#ifndef PK_TPU_PASSES_TD
#define PK_TPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkTpuScalarArrayCode : Pass<"pk-tpu-scalar-array-code", "::mlir::ModuleOp"> {
  let summary = "Runs small 0-d and 1-D array code on the TPU's scalar core";
  let description = [{
    A generated pallas_call (array code at export level) without a grid
    whose operands and results are 0-d or 1-D arrays of i32, f32 or bool,
    at most 4096 elements each and 512 KiB in all with what it computes,
    and whose ops are arith ops, absolute values, Ref loads and stores, reshapes,
    slices, concatenations, broadcasts, iotas, transposes and reductions,
    is rewritten into scalar code: its operands move to SMEM, and each
    value it computes is stored element by element in SMEM scratch (an i32
    buffer, bools as 0 / 1, and an f32 one), each op a scf.for over its
    elements, splats kept as scalars. Mosaic's vector unit has no 0-d
    values and works on (8, 128) tiles; group metadata (megablox's cumsum,
    repeat and histogram over a few int32s) is scalar work. Other calls are
    left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def PkTpuCheck : Pass<"pk-tpu-check", "::mlir::ModuleOp"> {
  let summary = "Checks pk IR against what Mosaic can compile";
  let description = [{
    Reports, at the op the user's line produced, every construct a TPU
    cannot run as written: block shapes whose last two dimensions are not
    multiples of 8 and 128 (or the array's), rank-1 blocks Pallas rejects,
    64-bit types, dots that are not 2-D or mix unsigned integers,
    transposes of leading axes, reductions Mosaic lacks, masked loads,
    gathers and scatters, and Refs in memory spaces that need DMAs. The IR
    is not changed.
  }];
}

def PkTpuLowerToMosaic : Pass<"pk-tpu-lower-to-mosaic", "::mlir::ModuleOp"> {
  let summary = "Turns every pallas_call into a Mosaic kernel module";
  let description = [{
    Replaces the module's exports by one nested `builtin.module` per
    `pk.pallas_call` (named `@<export>`, or `@<export>.<i>` when an export
    makes several calls), in the form Pallas's Mosaic lowering produces: a
    kernel `func.func` whose arguments are the grid indices (i32), the
    scalar-prefetch memrefs, the windows and the scratch buffers, with
    `dimension_semantics`, `iteration_bounds`, `window_params` and friends,
    and one `@transform_N` function per window computing its block indices.
    Block values become vectors; Ref accesses become `vector.load` /
    `tpu.vector_store` (or `memref.load` / `memref.store` in SMEM). Run
    pk-tpu-check first: this pass assumes the TPU rules hold.
  }];
  let dependentDialects = [
    "::pk::mosaic::MosaicDialect", "::mlir::func::FuncDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // PK_TPU_PASSES_TD
