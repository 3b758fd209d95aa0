//===- StateRefs.h - Refs of whole arrays made outside kernels --*- C++ -*-===//
//
// pl.run_state(f)(arrays), and jax.new_ref / jax.empty_ref in an export,
// make Refs of whole arrays that no kernel owns yet. They have memory only
// in the kernels that run on them, a pl.core_map over a mesh (Mosaic GPU's
// plgpu.Mesh, a TPU's TensorCore mesh): such a kernel takes every Ref alive
// where it is called as an operand aliased to an output, and the arrays
// the Refs hold afterwards are its results. jax.freeze(ref) and the end of
// pl.run_state read those arrays, as JAX discharges the Refs.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_STATEREFS_H
#define PK_FRONTEND_ELAB_STATEREFS_H

#include "frontend/elab/Object.h"
#include "ir/PkDialect.h"

#include <functional>

namespace pk::elab {

class Elaborator;

/// A Ref made outside kernels and the array it holds now. `ref->value` is
/// null except while a kernel running on it is elaborated.
struct StateRef {
  std::shared_ptr<RefObj> ref;
  std::shared_ptr<GlobalArrayObj> array;
  /// Where the kernels see it: pl.ANY (HBM, GMEM) or, on a TPU, VMEM or
  /// SMEM (the whole array there while the kernel runs).
  MemorySpace space = MemorySpace::Any;
};

/// The Refs alive now: the export's jax.new_ref / jax.empty_ref Refs,
/// then those of each open pl.run_state, outermost first.
std::vector<StateRef *> liveStateRefs(Elaborator &el);
/// The live state Ref `ref` is (not a view of one), or null.
StateRef *findStateRef(Elaborator &el, const RefObj &ref);
/// A Ref of the export holding `array` in `space` (jax.new_ref outside
/// kernels).
std::shared_ptr<RefObj> newExportRef(Elaborator &el, std::shared_ptr<GlobalArrayObj> array,
                                     MemorySpace space, SourceRange r);
/// `ref[index]` in the export, outside the kernels: the array it holds,
/// indexed.
Obj readStateRef(Elaborator &el, const StateRef &ref, const Obj &index, SourceRange r);
/// `ref[index] = value` in the export: the Ref then holds
/// `array.at[index].set(value)`.
void writeStateRef(Elaborator &el, StateRef &ref, const Obj &index, const Obj &value,
                   SourceRange r);
/// pl.run_state(f)(initial) at export level: `f` gets Refs holding the
/// arrays of `initial` (a pytree of them); the result is the arrays they
/// hold when it returns, in the same tree.
Obj runStateAtExport(Elaborator &el, const Obj &f, const Obj &initial, SourceRange r);
/// Runs `body` with the Refs of `refs` backed by `memory` (one value each:
/// the kernel's outputs aliased to them), then leaves them without memory
/// again, also when `body` fails.
void withStateMemory(const std::vector<StateRef *> &refs, const std::vector<mlir::Value> &memory,
                     const std::function<void()> &body);
/// Gives `ref` memory where it is used in a kernel being elaborated, when
/// it is a Ref of a whole array and the kernel a pallas_call's (also
/// pl.kernel's): as Pallas discharges such a Ref, the call takes it as an
/// input aliased to an output, both in its memory space, ahead of its own
/// (finishStateOperands adds the operands). False when it gives none.
bool takeStateMemory(Elaborator &el, const RefObj &ref, SourceRange r);
/// `value` read in the body of a kernel over a TensorCore mesh, when it is
/// a scalar of the export the kernel captured (a jit argument): as Pallas
/// passes it, an input of the call in SMEM (one element), read here; null
/// for anything else.
Obj capturedScalar(Elaborator &el, const Obj &value, SourceRange r);
/// After `call`'s kernel is elaborated: `call` rebuilt with the operands
/// its kernel's Refs of whole arrays took (inputs after the scalar-prefetch
/// ones, outputs first), the Refs then holding those outputs; `call`
/// itself when it took none.
pk::PallasCallOp finishStateOperands(Elaborator &el, pk::PallasCallOp call);
/// `call`, a core_map over `n` Refs (each an input aliased to the output
/// of the same index, whose Ref the body uses; after the scalars the body
/// captured, capturedScalar), rebuilt as Pallas builds
/// it: inputs only for the Refs the body uses, outputs only for those it
/// writes (a Ref it only reads it reads through the input). Returns the
/// new call, or null when the body writes no Ref (then nothing runs, as
/// with any kernel without outputs); `written[i]` says whether Ref i has
/// an output.
pk::PallasCallOp keepCoreMapRefs(pk::PallasCallOp call, size_t n, std::vector<bool> &written);
/// Forgets the previous export's Refs; called as each export begins.
void resetStateRefs(Elaborator &el);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_STATEREFS_H
