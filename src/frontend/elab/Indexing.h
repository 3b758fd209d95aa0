//===- Indexing.h - `x[...]` on Refs, values and static objects -*- C++ -*-===//
//
// NumPy basic indexing for Refs (loads and stores, with pl.ds and masks)
// and for block values (static slices, integer indices, None, ...), plus
// Python indexing of tuples, lists, strings and dicts, and `f32[N, 128]`
// annotations.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_INDEXING_H
#define PK_FRONTEND_ELAB_INDEXING_H

#include "frontend/elab/Object.h"
#include "ir/PkDialect.h"

namespace pk::elab {

class Elaborator;

/// Fails at `r` when `ref` is a ragged view (`x_ref.at[pl.ds(s, n)]` with n
/// traced), which only async copies take.
void rejectRaggedView(Elaborator &el, const RefObj &ref, SourceRange r);

/// `container[index]`.
Obj subscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r);
/// `container[index] = value`.
void storeSubscript(Elaborator &el, const Obj &container, const Obj &index, const Obj &value,
                    SourceRange r);

/// `x_ref[index]`, or with `padded` `pl.load(ref, index, mask=, other=)`;
/// null mask / other when absent. `padded` selects pl.load's rule for
/// windows past the Ref's end (padding instead of a shifted window).
Obj loadRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &mask,
            const Obj &other, SourceRange r, bool padded = false);
/// `x_ref[index] = value`, or with `padded` `pl.store(ref, index, value, mask=)`.
void storeRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &value,
              const Obj &mask, SourceRange r, bool padded = false);

/// The value stored into a window of `shape` of `ref`: cast as Pallas
/// casts on a Ref store, and broadcast from a scalar.
std::shared_ptr<ArrayObj> storedValue(Elaborator &el, const RefObj &ref, const Obj &value,
                     const std::vector<int64_t> &shape, SourceRange r);
/// `pl.atomic_add(ref, index, value, mask=)` and its kin: the old values.
Obj atomicRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &value,
              const Obj &mask, pk::AtomicKind kind, SourceRange r);
/// `plgpu.atomic_cas(ref, cmp, val)` on a one-element Ref view.
Obj atomicCompareSwap(Elaborator &el, const RefObj &ref, const Obj &compare, const Obj &value,
                      SourceRange r);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_INDEXING_H
