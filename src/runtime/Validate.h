//===- Validate.h - Checking a launch's arguments against the export -*- C++ -*-===//
#ifndef PK_RUNTIME_VALIDATE_H
#define PK_RUNTIME_VALIDATE_H

#include "runtime/Manifest.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

namespace pk::rt {

/// What validation learns: every symbol's value and every param's device
/// address and size in bytes. Reused from launch to launch (the vectors
/// keep their capacity), so a launch allocates nothing.
struct BoundArgs {
  std::vector<int64_t> symbols;
  std::vector<uint64_t> address;
  std::vector<uint64_t> bytes;
};

/// Checks `args` against export `e` (count, device, dtypes, ranks, shapes
/// and symbols, strides, alignment, aliasing) and fills `out`. Arrays must
/// be on CUDA device `ordinal` (any device when it is -1). Throws Error
/// with the pk_status of the first problem and a message naming the
/// argument and what was expected.
void validate(const Export &e, const DLTensor *args, size_t numArgs, int ordinal, BoundArgs &out);

} // namespace pk::rt

#endif // PK_RUNTIME_VALIDATE_H
