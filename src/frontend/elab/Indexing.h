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
/// Fails at `r` when `ref` is a Ref.bitcast view, which only reads, writes
/// and further views take.
void rejectBitcastView(Elaborator &el, const RefObj &ref, SourceRange r);
/// Both: `ref` is a Ref or an ordinary window of one.
void requirePlainRef(Elaborator &el, const RefObj &ref, SourceRange r);
/// Refuses a pl.run_state Ref where it has no memory: outside the
/// pl.core_map kernel that gives it some (in a pallas_call, say).
void requireRefMemory(Elaborator &el, const RefObj &ref, SourceRange r);

/// One axis of a basic index: elements `start + k * step` for `k <
/// count`, or the single element `start` with the axis squeezed. `start`
/// is an int or a traced scalar.
struct AxisWindow {
  Obj start;
  int64_t count = 1, step = 1;
  bool squeezed = false;
};
/// The windows `index` selects on each axis of `shape` (ints, slices and
/// pl.ds; no None, no integer arrays), checked against static bounds.
std::vector<AxisWindow> axisWindows(Elaborator &el, const std::vector<int64_t> &shape,
                                    const Obj &index, SourceRange r, const char *what);

/// `container[index]`.
Obj subscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r);
/// `container[index] = value`.
void storeSubscript(Elaborator &el, const Obj &container, const Obj &index, const Obj &value,
                    SourceRange r);

/// `del container[index]`: an item (or a slice) of a list, a dict's key,
/// or __delitem__.
void deleteSubscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r);

/// `x_ref[index]`, or with `padded` `pl.load(ref, index, mask=, other=)`;
/// null mask / other when absent. `padded` selects pl.load's rule for
/// windows past the Ref's end (padding instead of a shifted window).
Obj loadRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &mask,
            const Obj &other, SourceRange r, bool padded = false);
/// `x_ref.at[index]`: a view of the window.
std::shared_ptr<RefObj> refView(Elaborator &el, const RefObj &ref, const Obj &index, SourceRange r);
/// `x_ref.reshape(*shape)` of a Ref or window (pk.ref_reshape); `shape`
/// holds as many elements.
std::shared_ptr<RefObj> reshapedRef(Elaborator &el, const RefObj &ref,
                                    const std::vector<int64_t> &shape, SourceRange r);
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
