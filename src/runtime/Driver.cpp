//===- Driver.cpp - Opening libcuda.so.1 and resolving its entry points ---===//
#include "runtime/Driver.h"

#include "runtime/Error.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace pk::rt {

pk_status statusOf(cu::CUresult result) {
  switch (result) {
  case cu::CUDA_SUCCESS:
    return PK_OK;
  case cu::CUDA_ERROR_OUT_OF_MEMORY:
    return PK_ERROR_OUT_OF_MEMORY;
  case cu::CUDA_ERROR_NO_DEVICE:
  case cu::CUDA_ERROR_INVALID_DEVICE:
    return PK_ERROR_NO_DEVICE;
  default:
    return PK_ERROR_CUDA;
  }
}

std::string Driver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName(result, &name) != cu::CUDA_SUCCESS || !name)
    name = nullptr;
  if (getErrorString(result, &text) != cu::CUDA_SUCCESS || !text)
    text = nullptr;
  // The toolkit's stub libcuda.so knows no error names: say what it is.
  if (!name && result == cu::CUDA_ERROR_STUB_LIBRARY)
    return "CUDA_ERROR_STUB_LIBRARY (" + path +
           " is the CUDA toolkit's stub library, not a driver: it links programs but cannot run "
           "them)";
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void Driver::check(CUresult result, const char *call) const {
  if (result != cu::CUDA_SUCCESS)
    fail(statusOf(result), std::string(call) + " failed: " + describe(result));
}

namespace {

std::unique_ptr<Driver> open(std::string &error) {
  const char *override = std::getenv("PK_CUDA_DRIVER");
  std::string path = override && *override ? override : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = "cannot load the CUDA driver: dlopen(\"" + path +
            "\") failed: " + (why ? why : "unknown error") +
            (override ? " (set by PK_CUDA_DRIVER)"
                      : "; is an NVIDIA GPU driver installed? (PK_CUDA_DRIVER may name the "
                        "library to use instead)");
    return nullptr;
  }
  auto d = std::make_unique<Driver>();
  d->path = path;
  std::string missing;
#define PK_CUDA_ENTRY(member, symbol, required, parameters)                                        \
  d->member = reinterpret_cast<decltype(d->member)>(dlsym(handle, symbol));                        \
  if (required && !d->member)                                                                      \
    missing += std::string(missing.empty() ? "" : ", ") + symbol;
#include "runtime/CudaEntryPoints.def"
  if (!missing.empty()) {
    error = "the CUDA driver " + path + " lacks " + missing +
            ": it is too old for the pkc runtime (which needs CUDA 11.2 or newer) or not a "
            "CUDA driver";
    dlclose(handle);
    return nullptr;
  }
  if (d->driverGetVersion(&d->version) != cu::CUDA_SUCCESS)
    d->version = 0;
  // A machine with a driver but no usable GPU fails here with
  // CUDA_ERROR_NO_DEVICE; that is an answer (zero devices), not a reason
  // to refuse the driver.
  d->initResult = d->init(0);
  // The handle is never closed: the driver must outlive every module.
  return d;
}

std::mutex driverMutex;
std::atomic<const Driver *> loaded{nullptr};

} // namespace

const Driver &driver() {
  if (const Driver *d = loaded.load(std::memory_order_acquire))
    return *d;
  std::lock_guard<std::mutex> lock(driverMutex);
  if (const Driver *d = loaded.load(std::memory_order_relaxed))
    return *d;
  std::string error;
  std::unique_ptr<Driver> d = open(error);
  if (!d)
    fail(PK_ERROR_DRIVER_UNAVAILABLE, error);
  loaded.store(d.release(), std::memory_order_release);
  return *loaded.load(std::memory_order_relaxed);
}

} // namespace pk::rt
