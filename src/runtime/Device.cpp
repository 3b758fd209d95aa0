//===- Device.cpp ---------------------------------------------------------===//
#include "runtime/Device.h"

#include "runtime/Error.h"

#include <map>
#include <memory>
#include <mutex>

namespace pk::rt {

std::string Device::describe() const {
  return "device " + std::to_string(ordinal) + " (" + name + ", compute capability " +
         std::to_string(major) + "." + std::to_string(minor) + ")";
}

int deviceCount(const Driver &d) {
  if (d.initResult == cu::CUDA_ERROR_NO_DEVICE)
    return 0;
  d.check(d.initResult, "cuInit");
  int count = 0;
  d.check(d.deviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

namespace {

std::mutex devicesMutex;
// Devices are created once and never freed: modules and callers hold
// references to them for the life of the process.
std::map<int, std::unique_ptr<Device>> devices;

int attribute(const Driver &d, int attribute, cu::CUdevice device, const char *what) {
  int value = 0;
  d.check(d.deviceGetAttribute(&value, attribute, device),
          std::string("cuDeviceGetAttribute(") + what + ")");
  return value;
}

} // namespace

const Device &device(const Driver &d, int ordinal) {
  std::lock_guard<std::mutex> lock(devicesMutex);
  auto it = devices.find(ordinal);
  if (it != devices.end())
    return *it->second;
  int count = deviceCount(d);
  if (ordinal < 0 || ordinal >= count)
    fail(PK_ERROR_NO_DEVICE, count == 0 ? std::string("no CUDA device is available")
                                        : "there is no CUDA device " + std::to_string(ordinal) +
                                              " (this machine has " + std::to_string(count) + ")");
  auto dev = std::make_unique<Device>();
  dev->ordinal = ordinal;
  d.check(d.deviceGet(&dev->handle, ordinal), "cuDeviceGet");
  char name[256] = {};
  if (d.deviceGetName(name, sizeof name - 1, dev->handle) == cu::CUDA_SUCCESS)
    dev->name = name;
  else
    dev->name = "unnamed GPU";
  dev->major = attribute(d, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev->handle,
                         "COMPUTE_CAPABILITY_MAJOR");
  dev->minor = attribute(d, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev->handle,
                         "COMPUTE_CAPABILITY_MINOR");
  dev->maxGrid[0] =
      attribute(d, cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev->handle, "MAX_GRID_DIM_X");
  dev->maxGrid[1] =
      attribute(d, cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev->handle, "MAX_GRID_DIM_Y");
  dev->maxGrid[2] =
      attribute(d, cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev->handle, "MAX_GRID_DIM_Z");
  dev->maxSharedMemoryOptIn =
      attribute(d, cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev->handle,
                "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  // Older drivers do not know the newer attributes; they read as absent.
  int value = 0;
  dev->memoryPools = d.memAllocAsync && d.memFreeAsync &&
                     d.deviceGetAttribute(&value, cu::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                          dev->handle) == cu::CUDA_SUCCESS &&
                     value;
  value = 0;
  dev->clusterLaunch = d.deviceGetAttribute(&value, cu::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,
                                            dev->handle) == cu::CUDA_SUCCESS &&
                       value;
  d.check(d.primaryCtxRetain(&dev->context, dev->handle), "cuDevicePrimaryCtxRetain");
  return *devices.emplace(ordinal, std::move(dev)).first->second;
}

int currentDeviceOrdinal(const Driver &d) {
  cu::CUcontext context = nullptr;
  if (d.ctxGetCurrent(&context) != cu::CUDA_SUCCESS || !context)
    return -1;
  cu::CUdevice handle = 0;
  d.check(d.ctxGetDevice(&handle), "cuCtxGetDevice");
  // CUdevice handles are ordinals in every driver so far; look the handle
  // up rather than rely on it.
  int count = deviceCount(d);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    cu::CUdevice h = 0;
    if (d.deviceGet(&h, ordinal) == cu::CUDA_SUCCESS && h == handle)
      return ordinal;
  }
  return -1;
}

ContextScope::ContextScope(const Driver &d, cu::CUcontext context) : driver_(d) {
  cu::CUcontext current = nullptr;
  d.check(d.ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != context) {
    d.check(d.ctxPushCurrent(context), "cuCtxPushCurrent");
    pushed_ = true;
  }
}

ContextScope::~ContextScope() {
  if (pushed_) {
    cu::CUcontext popped = nullptr;
    driver_.ctxPopCurrent(&popped);
  }
}

} // namespace pk::rt
