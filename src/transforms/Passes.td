//===- Passes.td - Target-independent pk passes -------------*- tablegen -*-===//
//
// Passes over the pk dialect that every backend and the interpreter see:
// they run right after elaboration (Session), and pk-opt runs each alone.
//
//===----------------------------------------------------------------------===//
#ifndef PK_TRANSFORMS_PASSES_TD
#define PK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkFuseArrayCode : Pass<"pk-fuse-array-code", "::mlir::ModuleOp"> {
  let summary = "Fuses the generated kernels of an export's array code";
  let description = [{
    Array code at export level (jnp / lax calls, operators, methods and
    subscripts on whole arrays outside pallas_call) becomes one generated
    `pk.pallas_call` per operation (`pk.generated`): whole-array blocks
    along static axes, one program per index of a symbolic or vmapped axis.
    This pass merges a generated call into the generated call that is the
    only user of its results, when both run the same grid and the consumer
    reads each such result whole with the block the producer writes: the
    producer's body is inlined into the consumer's kernel and the value it
    stored replaces the consumer's load, so the intermediate array is never
    written to memory. Chains of element-wise work, reductions, reshapes
    and transposes thus become one kernel, as XLA fuses a producer into its
    consumer; user pallas_calls are never changed. Generated calls whose
    results nothing reads (array code run only for a result's dtype or
    shape) are erased first.
  }];
}

def PkExpandBitcasts : Pass<"pk-expand-bitcasts"> {
  let summary = "Expands row-packing bitcasts into slices, shifts and concatenations";
  let description = [{
    `pk.bitcast` between element widths (`pltpu.bitcast`) packs consecutive
    rows of the second-minor axis into one row of the wider type. TPUs do
    it in one instruction (`tpu.bitcast`); a backend without it runs this
    pass first. Packing `p` narrow rows: the rows `k, k + p, ...` (a
    strided `pk.slice`) are bitcast to integers, zero-extended, shifted by
    `k` times the narrow width and or-ed together. Unpacking: each narrow
    part is a shift and truncation of the wide bits, and the parts are
    interleaved back into rows (reshape, `pk.concatenate`, reshape).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PkExpandButterflies : Pass<"pk-expand-butterflies"> {
  let summary = "Expands pk.butterfly exchanges into reshapes, slices and a concatenation";
  let description = [{
    `pk.butterfly` (element i along an axis takes element i ^ d: a sorting
    network's exchange) is one op for the CUDA backend, which keeps it in
    registers or warp shuffles where the layout allows. Other backends run
    this pass first: the axis is reshaped into runs of 2d as (runs, 2, d),
    the two halves are sliced and concatenated in the other order, and
    the result is reshaped back.
  }];
}

def PkFoldRefReshapes : Pass<"pk-fold-ref-reshapes"> {
  let summary = "Folds Ref reshapes that add or remove unit axes into the loads and stores";
  let description = [{
    `pk.ref_reshape` that only adds or removes axes of size 1 (a squeezed
    view of a block, `x_ref.reshape(32, 128)` of a (1, 1, 32, 128) block)
    is replaced in each `pk.load` / `pk.store` through it by the Ref it
    views: the view's axes of size > 1 map in order onto the Ref's, the
    Ref's own unit axes are read at 0 and squeezed, and a unit axis only
    the view has becomes a `pk.reshape` of the value. Chains of reshapes
    compose first. Reshapes that merge or split axes, or have other users,
    stay. For backends without Ref views of their own (CUDA).
  }];
}

#endif // PK_TRANSFORMS_PASSES_TD
