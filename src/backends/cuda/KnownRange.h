//===- KnownRange.h - Bounds of index arithmetic known while compiling -*- C++ -*-===//
//
// Distributed code guards each access with range tests (`coordinate <
// size`) because a block may overhang its array. For most kernels the
// arithmetic already proves the test: a clamped block id times the block
// size plus a layout's thread bits stays below the size when the block
// tiles the array. Asking while the code is built drops the test and the
// scalar fallback it guards, which for a 5-D block is most of the kernel's
// IR (and of LLVM's and ptxas's time on it).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_KNOWNRANGE_H
#define PK_BACKENDS_CUDA_KNOWNRANGE_H

#include "mlir/IR/Value.h"

namespace pk::gpu {

/// Whether `value < limit` (unsigned; integers or index) is known to hold
/// from the arithmetic that defines both, a bounded number of definitions
/// deep. Each op's own range inference (InferIntRangeInterface) answers:
/// constants, arith, thread ids under the kernel's known block size,
/// min / max clamps, selects. Anything else is assumed to take any value.
bool knownBelow(mlir::Value value, mlir::Value limit);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_KNOWNRANGE_H
