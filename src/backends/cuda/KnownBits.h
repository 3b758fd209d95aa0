//===- KnownBits.h - Low bits of index arithmetic known to be zero -*- C++ -*-===//
//
// Distributed code computes addresses from thread ids with shifts, masks
// and ors (a layout's bits), and then asks whether an address is a
// multiple of a vector's width. Most of the time the arithmetic already
// says it is: a lane's column is `lane << 2`, a row pitch is a constant
// multiple of 64. This looks through that arithmetic, so the question is
// answered while the code is built and no branch is emitted.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_KNOWNBITS_H
#define PK_BACKENDS_CUDA_KNOWNBITS_H

#include "mlir/IR/Value.h"

namespace pk::gpu {

/// How many of the low bits of the integer (or index) `value` are known
/// to be zero, counted up to `enough` (the answer is at most `enough`;
/// asking for no more than is needed keeps the walk short). Looks through
/// constants, thread ids' arithmetic (add, sub, mul, shifts, and, or,
/// xor, div and rem by powers of two, min, max, select, casts) a bounded
/// number of definitions deep; anything else is assumed to have none.
unsigned knownTrailingZeros(mlir::Value value, unsigned enough);

/// Whether `value` is known to be a multiple of `multiple`, a power of two.
bool knownMultipleOf(mlir::Value value, int64_t multiple);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_KNOWNBITS_H
