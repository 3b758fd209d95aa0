//===- MosaicGpuRules.h - What Mosaic GPU accepts, in one place -*- C++ -*-===//
//
// The hardware rules of the Mosaic GPU ops (wgmma shapes and dtypes, what
// memory async copies move between), as functions that return why an
// operand combination is invalid (or ""). The op verifiers and the
// elaborator's diagnostics share them, so IR and messages agree.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_MOSAICGPURULES_H
#define PK_IR_MOSAICGPURULES_H

#include "mlir/IR/Types.h"

#include <string>

namespace pk {

class RefType;

/// Why `wgmma(acc, a, b)` is invalid, or "". `a` is a RefType or a
/// ranked tensor type (A in registers).
std::string wgmmaProblem(RefType acc, mlir::Type a, RefType b);

/// Why an async copy from `src` to `dst` is invalid, or "";
/// `toShared` is the direction (GMEM -> SMEM when set).
std::string asyncCopyProblem(RefType src, RefType dst, bool toShared);

} // namespace pk

#endif // PK_IR_MOSAICGPURULES_H
