//===- HardwareLimits.h - What a CTA may have of a multiprocessor -*- C++ -*-===//
//
// The register and shared-memory limits the passes plan against (CUDA
// C Programming Guide, "Compute Capabilities"), in one place.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_HARDWARELIMITS_H
#define PK_BACKENDS_CUDA_HARDWARELIMITS_H

#include <cstdint>

namespace pk::gpu {

/// A thread has at most 255 32-bit registers (sm_50 onwards).
constexpr int64_t kMaxRegistersPerThread = 255;

/// The 32-bit registers of a multiprocessor, all that one CTA may use
/// (sm_50 onwards).
constexpr int64_t kRegistersPerMultiprocessor = 64 * 1024;

/// Shared memory a CTA may use on `computeCapability` (with the opt-in
/// above 48 KiB).
constexpr int64_t sharedMemoryLimit(unsigned computeCapability) {
  switch (computeCapability) {
  case 80:
  case 87:
    return 163 * 1024;
  case 86:
  case 89:
    return 99 * 1024;
  default:
    return 227 * 1024;
  }
}

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_HARDWARELIMITS_H
