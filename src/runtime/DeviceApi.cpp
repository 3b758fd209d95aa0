//===- DeviceApi.cpp - The C API: devices, memory, streams ----------------===//
//
// Conveniences for host programs that do not use the CUDA runtime API.
// Each call works in the device's primary context, pushed for the call's
// duration when another context is current.
//
//===----------------------------------------------------------------------===//
#include "runtime/Device.h"
#include "runtime/Error.h"

#include <algorithm>
#include <cstring>

using namespace pk::rt;

namespace {

void require(const void *pointer, const char *what) {
  if (!pointer)
    fail(PK_ERROR_INVALID_ARGUMENT, std::string(what) + " is null");
}

/// Runs `body(driver)` with device `ordinal`'s primary context current.
template <typename Body> pk_status onDevice(int ordinal, Body &&body) {
  return guard([&] {
    const Driver &d = driver();
    const Device &dev = device(d, ordinal);
    ContextScope scope(d, dev.context);
    body(d, dev);
  });
}

cu::CUdeviceptr devicePointer(const void *p) { return cu::CUdeviceptr(uintptr_t(p)); }

} // namespace

extern "C" {

PK_API pk_status pk_device_count(int *count) {
  return guard([&] {
    require(count, "the count pointer");
    *count = 0;
    *count = deviceCount(driver());
  });
}

PK_API pk_status pk_device_compute_capability(int ordinal, int *major, int *minor) {
  return guard([&] {
    require(major, "the major pointer");
    require(minor, "the minor pointer");
    const Device &dev = device(driver(), ordinal);
    *major = dev.major;
    *minor = dev.minor;
  });
}

PK_API pk_status pk_device_name(int ordinal, char *name, size_t size) {
  return guard([&] {
    require(name, "the name buffer");
    if (!size)
      fail(PK_ERROR_INVALID_ARGUMENT, "the name buffer has size 0");
    const Device &dev = device(driver(), ordinal);
    size_t n = std::min(size - 1, dev.name.size());
    std::memcpy(name, dev.name.data(), n);
    name[n] = '\0';
  });
}

PK_API pk_status pk_device_alloc(int ordinal, size_t bytes, void **pointer) {
  if (pointer)
    *pointer = nullptr;
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    require(pointer, "the pointer to set");
    if (!bytes)
      return; // nothing to allocate; a null pointer
    cu::CUdeviceptr p = 0;
    d.check(d.memAlloc(&p, bytes), "cuMemAlloc of " + std::to_string(bytes) + " bytes");
    *pointer = reinterpret_cast<void *>(uintptr_t(p));
  });
}

PK_API pk_status pk_device_free(int ordinal, void *pointer) {
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    if (pointer)
      d.check(d.memFree(devicePointer(pointer)), "cuMemFree");
  });
}

PK_API pk_status pk_memcpy_to_device(int ordinal, void *dst, const void *src, size_t bytes) {
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    if (!bytes)
      return;
    require(dst, "the destination");
    require(src, "the source");
    d.check(d.memcpyHtoD(devicePointer(dst), src, bytes), "cuMemcpyHtoD");
  });
}

PK_API pk_status pk_memcpy_to_host(int ordinal, void *dst, const void *src, size_t bytes) {
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    if (!bytes)
      return;
    require(dst, "the destination");
    require(src, "the source");
    d.check(d.memcpyDtoH(dst, devicePointer(src), bytes), "cuMemcpyDtoH");
  });
}

PK_API pk_status pk_stream_create(int ordinal, void **stream) {
  if (stream)
    *stream = nullptr;
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    require(stream, "the stream pointer");
    cu::CUstream s = nullptr;
    // Flags 0, as cudaStreamCreate: streams run concurrently with each
    // other but synchronize with the legacy default stream, so the
    // synchronous pk_memcpy_* calls see their work finished.
    d.check(d.streamCreate(&s, 0), "cuStreamCreate");
    *stream = s;
  });
}

PK_API pk_status pk_stream_destroy(int ordinal, void *stream) {
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    if (stream)
      d.check(d.streamDestroy(static_cast<cu::CUstream>(stream)), "cuStreamDestroy");
  });
}

PK_API pk_status pk_stream_synchronize(int ordinal, void *stream) {
  return onDevice(ordinal, [&](const Driver &d, const Device &) {
    d.check(d.streamSynchronize(static_cast<cu::CUstream>(stream)), "cuStreamSynchronize");
  });
}

} // extern "C"
