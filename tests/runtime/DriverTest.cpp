//===- DriverTest.cpp - Without a driver, with a wrong one, without GPUs --===//
//
// The driver is loaded once per process, so each scenario runs in a child
// process of its own (a gtest death test that must exit 0). The child
// reports what it found on stderr when a check fails.
//
//===----------------------------------------------------------------------===//
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace pk::test;

namespace {

int failures = 0;

void check(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (last error: %s)\n", what.c_str(), pk_last_error());
    ++failures;
  }
}

bool startsWith(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

/// Loads the test manifest on a device (the default options).
pk_status loadOnDevice() {
  std::vector<pk_artifact_data> artifacts = testArtifacts();
  pk_load_options o;
  pk_load_options_init(&o);
  o.artifacts = artifacts.data();
  o.num_artifacts = artifacts.size();
  std::string text = testManifest().dump();
  pk_module *m = nullptr;
  pk_status s = pk_module_load_memory(text.data(), text.size(), &o, &m);
  pk_module_destroy(m);
  return s;
}

// Each scenario runs in a child process and exits 0 when every check held.

[[noreturn]] void noDriver() {
  setenv("PK_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  int count = -1;
  check(pk_device_count(&count) == PK_ERROR_DRIVER_UNAVAILABLE, "pk_device_count without a driver");
  check(pk_last_error() ==
            std::string("cannot load the CUDA driver: dlopen(\"/nonexistent/libcuda.so.1\") "
                        "failed: /nonexistent/libcuda.so.1: cannot open shared object file: No "
                        "such file or directory (set by PK_CUDA_DRIVER)"),
        "the dlopen message");
  check(count == 0, "the count is 0 after a failure");
  check(loadOnDevice() == PK_ERROR_DRIVER_UNAVAILABLE, "loading without a driver");
  void *p = nullptr;
  check(pk_device_alloc(0, 16, &p) == PK_ERROR_DRIVER_UNAVAILABLE && !p,
        "allocating without a driver");
  // A bad manifest is reported as such before the driver is needed.
  pk_module *m = nullptr;
  check(pk_module_load_memory("{}", 2, nullptr, &m) == PK_ERROR_MANIFEST_VERSION,
        "manifest checked first");
  // A failed attempt is not remembered: with a driver, the next call works.
  setenv("PK_CUDA_DRIVER", PK_FAKE_CUDA, 1);
  check(pk_device_count(&count) == PK_OK && count == 2, "the fake driver after a failure");
  std::exit(failures ? 1 : 0);
}

[[noreturn]] void notADriver() {
  setenv("PK_CUDA_DRIVER", "libm.so.6", 1);
  int count = -1;
  check(pk_device_count(&count) == PK_ERROR_DRIVER_UNAVAILABLE, "libm is not a driver");
  check(startsWith(pk_last_error(), "the CUDA driver libm.so.6 lacks cuInit, cuDriverGetVersion, "),
        "names the missing entry points");
  check(std::string(pk_last_error())
                .find("it is too old for the pkc runtime (which needs CUDA 11.2 or "
                      "newer) or not a CUDA driver") != std::string::npos,
        "says why");
  std::exit(failures ? 1 : 0);
}

[[noreturn]] void defaultLibraryMissing() {
  unsetenv("PK_CUDA_DRIVER");
  int count = -1;
  check(pk_device_count(&count) == PK_ERROR_DRIVER_UNAVAILABLE, "no libcuda.so.1");
  check(
      startsWith(pk_last_error(), "cannot load the CUDA driver: dlopen(\"libcuda.so.1\") failed: "),
      "the dlopen message");
  check(std::string(pk_last_error())
                .find("is an NVIDIA GPU driver installed? (PK_CUDA_DRIVER may name "
                      "the library to use instead)") != std::string::npos,
        "the hint");
  std::exit(failures ? 1 : 0);
}

#ifdef PK_CUDA_STUB
[[noreturn]] void toolkitStub() {
  setenv("PK_CUDA_DRIVER", PK_CUDA_STUB, 1);
  int count = -1;
  check(pk_device_count(&count) == PK_ERROR_CUDA, "the stub resolves but does not run");
  check(startsWith(pk_last_error(), "cuInit failed: CUDA_ERROR_STUB_LIBRARY (" PK_CUDA_STUB
                                    " is the CUDA toolkit's stub library, not a driver"),
        "says it is the stub");
  std::exit(failures ? 1 : 0);
}
#endif

[[noreturn]] void noDevices() {
  setenv("PK_CUDA_DRIVER", PK_FAKE_CUDA, 1);
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  int count = -1;
  check(pk_device_count(&count) == PK_OK && count == 0, "zero devices is an answer");
  check(loadOnDevice() == PK_ERROR_NO_DEVICE, "loading without devices");
  check(pk_last_error() == std::string("no CUDA device is available"), "the message");
  int major = 0, minor = 0;
  check(pk_device_compute_capability(0, &major, &minor) == PK_ERROR_NO_DEVICE, "no device 0");
  std::exit(failures ? 1 : 0);
}

[[noreturn]] void ordinalOutOfRange() {
  setenv("PK_CUDA_DRIVER", PK_FAKE_CUDA, 1);
  int major = 0, minor = 0;
  check(pk_device_compute_capability(5, &major, &minor) == PK_ERROR_NO_DEVICE, "device 5");
  check(pk_last_error() == std::string("there is no CUDA device 5 (this machine has 2)"),
        "the message");
  check(pk_device_compute_capability(-1, &major, &minor) == PK_ERROR_NO_DEVICE, "device -1");
  pk_load_options o;
  pk_load_options_init(&o);
  o.device = 2;
  std::string text = testManifest().dump();
  pk_module *m = nullptr;
  check(pk_module_load_memory(text.data(), text.size(), &o, &m) == PK_ERROR_NO_DEVICE,
        "load on device 2");
  std::exit(failures ? 1 : 0);
}

TEST(Driver, MissingDriverIsAnErrorNotACrash) {
  EXPECT_EXIT(noDriver(), ::testing::ExitedWithCode(0), "");
}

TEST(Driver, ALibraryThatIsNotADriver) {
  EXPECT_EXIT(notADriver(), ::testing::ExitedWithCode(0), "");
}

TEST(Driver, DefaultLibraryMissing) {
  if (void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "this machine has libcuda.so.1";
  }
  EXPECT_EXIT(defaultLibraryMissing(), ::testing::ExitedWithCode(0), "");
}

TEST(Driver, ToolkitStubHasEveryEntryPoint) {
#ifndef PK_CUDA_STUB
  GTEST_SKIP() << "no CUDA toolkit stub libcuda.so found at configure time";
#else
  // The stub exports every driver entry point, so the runtime resolves
  // them all (the names in CudaEntryPoints.def are right), but its cuInit
  // fails.
  EXPECT_EXIT(toolkitStub(), ::testing::ExitedWithCode(0), "");
#endif
}

TEST(Driver, ADriverWithoutDevices) { EXPECT_EXIT(noDevices(), ::testing::ExitedWithCode(0), ""); }

TEST(Driver, DeviceOrdinalOutOfRange) {
  EXPECT_EXIT(ordinalOutOfRange(), ::testing::ExitedWithCode(0), "");
}

} // namespace
