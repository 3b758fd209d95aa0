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

#endif // PK_TRANSFORMS_PASSES_TD
