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

namespace pk::elab {

class Elaborator;

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

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_INDEXING_H
