//===- Device.h - CUDA devices and their primary contexts -------*- C++ -*-===//
//
// The runtime works in each device's primary context, the one the CUDA
// runtime API uses, so device pointers and streams from cudaMalloc and
// cudaStreamCreate work with pk_launch. A device's context is retained
// when the runtime first uses the device and kept for the life of the
// process, as the CUDA runtime does.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_DEVICE_H
#define PK_RUNTIME_DEVICE_H

#include "runtime/Driver.h"

#include <string>

namespace pk::rt {

struct Device {
  int ordinal = 0;
  cu::CUdevice handle = 0;
  cu::CUcontext context = nullptr;
  std::string name;
  int major = 0, minor = 0;
  int maxGrid[3] = {0, 0, 0};
  int maxSharedMemoryOptIn = 0; ///< bytes a block may opt in to
  bool memoryPools = false;     ///< cuMemAllocAsync works
  bool clusterLaunch = false;

  /// "device 0 (NVIDIA H100 80GB HBM3, compute capability 9.0)".
  std::string describe() const;
};

/// How many devices the driver sees (0 when it sees none).
int deviceCount(const Driver &d);
/// Device `ordinal`, set up on first use. Throws PK_ERROR_NO_DEVICE for
/// an ordinal the machine does not have.
const Device &device(const Driver &d, int ordinal);
/// The ordinal of the device of the calling thread's current context, or
/// -1 when no context is current.
int currentDeviceOrdinal(const Driver &d);

/// Makes `context` current on this thread for the scope's life, restoring
/// the caller's afterwards. Costs nothing when it is current already.
class ContextScope {
public:
  ContextScope(const Driver &d, cu::CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  const Driver &driver_;
  bool pushed_ = false;
};

} // namespace pk::rt

#endif // PK_RUNTIME_DEVICE_H
