//===- BufferViews.h - Array code that only renames a buffer ----*- C++ -*-===//
//
// A generated kernel (array code at export level) that only reshapes a
// dense row-major array (`x.reshape(...)`, `jnp.asarray(x)`) or takes a
// contiguous slice of it (`x[2:5]`, `x[3]`, `x[1, 4:8]`) moves no data on a
// GPU: its result is its input's buffer, from some byte on, seen with
// another shape. The CUDA backend launches no kernel for it; the host
// program hands the input's buffer on (HostProgram.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_BUFFERVIEWS_H
#define PK_BACKENDS_CUDA_BUFFERVIEWS_H

#include "ir/PkDialect.h"

#include <optional>

namespace pk::gpu {

/// Where the result of `call` starts in its one input's buffer (bytes)
/// when `call` is such a view; nothing otherwise. Views start at multiples
/// of 16 bytes, the alignment kernels assume of their buffers.
std::optional<uint64_t> bufferViewOffset(pk::PallasCallOp call);
inline bool isBufferView(pk::PallasCallOp call) { return bufferViewOffset(call).has_value(); }

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_BUFFERVIEWS_H
