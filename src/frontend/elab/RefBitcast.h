//===- RefBitcast.h - pltpu.bitcast and Ref.bitcast views -------*- C++ -*-===//
#ifndef PK_FRONTEND_ELAB_REFBITCAST_H
#define PK_FRONTEND_ELAB_REFBITCAST_H

#include "frontend/elab/Object.h"

namespace pk::elab {

class Elaborator;

/// pltpu.bitcast(x, to): arith.bitcast at one width; between widths,
/// pk.bitcast, which packs rows of the second-minor axis.
std::shared_ptr<ArrayObj> packingBitcast(Elaborator &el, const std::shared_ptr<ArrayObj> &x,
                                         DType to, SourceRange r);

/// `x_ref.bitcast(to)`: a view reinterpreting the bits of `ref` (or of
/// the Ref a bitcast view reinterprets).
std::shared_ptr<RefObj> bitcastRefView(Elaborator &el, const std::shared_ptr<RefObj> &ref, DType to,
                                       SourceRange r);
/// `view[index]`, `view[index] = value` and `view.at[index]` of such a view.
Obj loadBitcastView(Elaborator &el, const RefObj &view, const Obj &index, SourceRange r);
void storeBitcastView(Elaborator &el, const RefObj &view, const Obj &index, const Obj &value,
                      SourceRange r);
std::shared_ptr<RefObj> viewOfBitcastView(Elaborator &el, const RefObj &view, const Obj &index,
                                          SourceRange r);
/// `view.reshape(*shape)` (as many elements): a bitcast view of the Ref
/// reshaped to match, which keeps the last axis.
std::shared_ptr<RefObj> reshapeBitcastView(Elaborator &el, const RefObj &view,
                                           const std::vector<int64_t> &shape, SourceRange r);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_REFBITCAST_H
