//===- FakeDriverTest.cpp - The launch path over a fake driver ------------===//
//
// The runtime runs here exactly as on a GPU, down to the driver calls;
// libpk_fake_cuda.so (fake_cuda/) answers them over host memory, runs the
// test kernels' host twins and logs every launch and copy. Results are
// checked against plain C++ loops, and the log against the grid, block,
// shared memory and arguments the manifest implies, computed by hand.
// The tests point PK_CUDA_DRIVER at the fake before the runtime's first
// call.
//
//===----------------------------------------------------------------------===//
#include "fake_cuda/fake_cuda.h"

#include "pk/runtime.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <thread>

using nlohmann::json;

namespace {

const std::string kKernels = std::string(PK_TEST_KERNELS) + "/kernels.json";

/// The fake driver's test hooks, from the library the runtime opened.
struct Fake {
  fake_cuda_count_fn numLaunches, numCopies;
  fake_cuda_get_launch_fn getLaunch;
  fake_cuda_get_copy_fn getCopy;
  fake_cuda_reset_fn reset;
  fake_cuda_fail_fn fail;
  fake_cuda_func_attribute_fn funcAttribute;
  fake_cuda_counter_fn counter;
  void *handle;

  static Fake &get() {
    static Fake f = [] {
      Fake f{};
      // Every test of this file runs over the fake driver.
      setenv("PK_CUDA_DRIVER", PK_FAKE_CUDA, 1);
      int count = 0;
      if (pk_device_count(&count) != PK_OK) // loads the driver
        ADD_FAILURE() << pk_last_error();
      f.handle = dlopen(PK_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
      EXPECT_TRUE(f.handle) << "the runtime did not open " PK_FAKE_CUDA;
      auto sym = [&](const char *name) { return f.handle ? dlsym(f.handle, name) : nullptr; };
      f.numLaunches = reinterpret_cast<fake_cuda_count_fn>(sym("fake_cuda_num_launches"));
      f.numCopies = reinterpret_cast<fake_cuda_count_fn>(sym("fake_cuda_num_copies"));
      f.getLaunch = reinterpret_cast<fake_cuda_get_launch_fn>(sym("fake_cuda_get_launch"));
      f.getCopy = reinterpret_cast<fake_cuda_get_copy_fn>(sym("fake_cuda_get_copy"));
      f.reset = reinterpret_cast<fake_cuda_reset_fn>(sym("fake_cuda_reset"));
      f.fail = reinterpret_cast<fake_cuda_fail_fn>(sym("fake_cuda_fail"));
      f.funcAttribute =
          reinterpret_cast<fake_cuda_func_attribute_fn>(sym("fake_cuda_func_attribute"));
      f.counter = reinterpret_cast<fake_cuda_counter_fn>(sym("fake_cuda_counter"));
      return f;
    }();
    return f;
  }
  fake_cuda_launch launch(size_t i) {
    fake_cuda_launch l{};
    EXPECT_TRUE(getLaunch(i, &l)) << "no launch " << i;
    return l;
  }
  fake_cuda_launch lastLaunch() { return launch(numLaunches() - 1); }
};

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Fake::get().handle);
    fake().reset();
    liveBefore = fake().counter("live_allocations");
  }
  void TearDown() override {
    if (!Fake::get().handle)
      return;
    EXPECT_EQ(fake().counter("live_allocations"), liveBefore) << "device memory leaked";
    EXPECT_EQ(fake().counter("context_depth"), 0) << "a context was left pushed";
  }
  static Fake &fake() { return Fake::get(); }

  static pk::Module load(int device) {
    pk_load_options o;
    pk_load_options_init(&o);
    o.device = device;
    return pk::Module::load(kKernels, &o);
  }

  long liveBefore = 0;
};

template <typename T> struct Array {
  std::vector<T> host;
  pk::DeviceBuffer device;
  std::vector<int64_t> shape;
  int ordinal;

  Array(int ordinal, std::vector<int64_t> shape, std::function<T(size_t)> init = nullptr)
      : shape(shape), ordinal(ordinal) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    host.resize(n);
    for (size_t i = 0; i < n && init; ++i)
      host[i] = init(i);
    if (n) {
      device = pk::DeviceBuffer::from(ordinal, host);
    }
  }
  DLTensor dl() const {
    pk::Tensor t = pk::Tensor::of(static_cast<T *>(device.data()), shape, ordinal);
    DLTensor d = t.dl();
    d.shape = const_cast<int64_t *>(shape.data());
    return d;
  }
  uint64_t address() const { return uint64_t(uintptr_t(device.data())); }
  std::vector<T> download() const { return host.empty() ? host : device.download<T>(); }
};

float randomValue(size_t i) { return float(int((i * 2654435761u) % 2001) - 1000) / 64.0f; }

TEST_F(FakeDriver, Devices) {
  int count = 0, major = 0, minor = 0;
  ASSERT_EQ(pk_device_count(&count), PK_OK);
  EXPECT_EQ(count, 2);
  ASSERT_EQ(pk_device_compute_capability(1, &major, &minor), PK_OK);
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
  char name[64];
  ASSERT_EQ(pk_device_name(0, name, sizeof name), PK_OK);
  EXPECT_STREQ(name, "Fake Hopper");
  char tiny[5];
  ASSERT_EQ(pk_device_name(0, tiny, sizeof tiny), PK_OK);
  EXPECT_STREQ(tiny, "Fake");
}

TEST_F(FakeDriver, ChoosesTheArtifactForEachDevice) {
  pk::Module on0 = load(0), on1 = load(1);
  EXPECT_EQ(on0.target(), "cuda:sm_90a");
  EXPECT_EQ(on0.device(), 0);
  EXPECT_EQ(on1.target(), "cuda:sm_80"); // 8.6 runs the sm_80 cubin
  EXPECT_EQ(on1.device(), 1);
  // Without a device in the options: the current context's device.
  using Retain = int (*)(void **, int);
  using Push = int (*)(void *);
  using Pop = int (*)(void **);
  auto retain = reinterpret_cast<Retain>(dlsym(fake().handle, "cuDevicePrimaryCtxRetain"));
  auto push = reinterpret_cast<Push>(dlsym(fake().handle, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<Pop>(dlsym(fake().handle, "cuCtxPopCurrent_v2"));
  void *context = nullptr;
  ASSERT_EQ(retain(&context, 1), 0);
  ASSERT_EQ(push(context), 0);
  pk::Module current = pk::Module::load(kKernels);
  EXPECT_EQ(current.device(), 1);
  void *popped = nullptr;
  ASSERT_EQ(pop(&popped), 0);
  EXPECT_EQ(popped, context);
  // And with none current, device 0.
  EXPECT_EQ(pk::Module::load(kKernels).device(), 0);
}

TEST_F(FakeDriver, AddMatchesTheHost) {
  for (int device : {0, 1}) {
    pk::Module module = load(device);
    pk::Kernel add = module.kernel("add");
    pk::Stream stream = pk::Stream::create(device);
    for (int64_t n : {1, 255, 256, 257, 1000, 4097}) {
      Array<float> x(device, {n}, randomValue),
          y(device, {n}, [](size_t i) { return randomValue(i + 7); });
      Array<float> out(device, {n});
      add.launch({x.dl(), y.dl(), out.dl()}, stream.get());
      std::vector<float> got = out.download();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], x.host[i] + y.host[i]) << "n = " << n << ", i = " << i;
      fake_cuda_launch l = fake().lastLaunch();
      EXPECT_STREQ(l.kernel, "pk_test_add_f32");
      EXPECT_EQ(l.device, device);
      EXPECT_EQ(l.grid[0], unsigned((n + 255) / 256));
      EXPECT_EQ(l.grid[1], 1u);
      EXPECT_EQ(l.block[0], 256u);
      EXPECT_EQ(l.shared_memory, 0u);
      EXPECT_EQ(l.stream, stream.get());
      EXPECT_EQ(l.used_launch_ex, 0);
      ASSERT_EQ(l.num_params, 4);
      EXPECT_EQ(l.params[0], x.address());
      EXPECT_EQ(l.params[1], y.address());
      EXPECT_EQ(l.params[2], out.address());
      EXPECT_EQ(l.params[3], uint64_t(n));
    }
  }
}

TEST_F(FakeDriver, AViewStartsInsideItsBuffer) {
  // add_view reads x from byte 64 on (a slice pkc passes without a kernel).
  pk::Module module = load(0);
  int64_t n = 300;
  Array<float> x(0, {n + 16}, randomValue), y(0, {n}, [](size_t i) { return float(i); }),
      out(0, {n});
  module.kernel("add_view").launch({x.dl(), y.dl(), out.dl()});
  EXPECT_EQ(fake().lastLaunch().params[0], x.address() + 64);
  std::vector<float> got = out.download();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], x.host[i + 16] + y.host[i]) << i;
  // A view past its buffer's end is the manifest's error, not a launch.
  Array<float> small(0, {10}), ys(0, {4}), outs(0, {4});
  size_t launches = fake().numLaunches();
  pk::Status s = module.kernel("add_view").tryLaunch({small.dl(), ys.dl(), outs.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_MANIFEST);
  EXPECT_NE(std::string(s.message()).find("starts 64 bytes into \"x\", past its end"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(fake().numLaunches(), launches);
}

TEST_F(FakeDriver, EmptyArraysLaunchNothing) {
  pk::Module module = load(0);
  Array<float> x(0, {0}), y(0, {0}), out(0, {0});
  EXPECT_EQ(module.kernel("add").tryLaunch({x.dl(), y.dl(), out.dl()}).code(), PK_OK)
      << pk_last_error();
  EXPECT_EQ(fake().numLaunches(), 0u);
}

TEST_F(FakeDriver, TemporariesAndSharedMemoryOptIn) {
  for (int device : {0, 1}) {
    fake().reset();
    pk::Module module = load(device);
    // 64 KiB of dynamic shared memory is a constant: opted in at load.
    EXPECT_EQ(fake().funcAttribute(device, "pk_test_rowsum_f32", 8), 65536);
    int64_t rows = 3, cols = 1000;
    Array<float> x(device, {rows, cols}, randomValue), out(device, {rows});
    long async = fake().counter("async_allocations"), sync = fake().counter("sync_allocations");
    module.kernel("rowsum_squares").launch({x.dl(), out.dl()});
    std::vector<float> got = out.download();
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c)
        sum += double(x.host[r * cols + c]) * x.host[r * cols + c];
      EXPECT_NEAR(got[r], sum, 1e-5 * sum) << "row " << r;
    }
    ASSERT_EQ(fake().numLaunches(), 2u);
    fake_cuda_launch square = fake().launch(0), rowsum = fake().launch(1);
    EXPECT_STREQ(square.kernel, "pk_test_square_f32");
    EXPECT_EQ(square.grid[0], 12u); // ceildiv(3 * 1000, 256)
    EXPECT_EQ(square.params[0], x.address());
    EXPECT_EQ(square.params[2], 3u);
    EXPECT_EQ(square.params[3], 1000u);
    EXPECT_STREQ(rowsum.kernel, "pk_test_rowsum_f32");
    EXPECT_EQ(rowsum.grid[0], 3u);
    EXPECT_EQ(rowsum.shared_memory, 65536u);
    // The temporary: written by one step, read by the next, none of the
    // caller's buffers, 256-byte aligned.
    EXPECT_EQ(square.params[1], rowsum.params[0]);
    EXPECT_NE(square.params[1], x.address());
    EXPECT_NE(square.params[1], out.address());
    EXPECT_EQ(square.params[1] % 256, 0u);
    EXPECT_EQ(rowsum.params[1], out.address());
    // Device 0 has memory pools: stream-ordered allocation; device 1 does
    // not: a plain allocation, freed after the stream is synchronized.
    EXPECT_EQ(fake().counter("async_allocations") - async, device == 0 ? 1 : 0);
    EXPECT_EQ(fake().counter("sync_allocations") - sync, device == 0 ? 0 : 1);
    EXPECT_EQ(fake().counter("stream_syncs"), device == 0 ? 0 : 1);
  }
}

TEST_F(FakeDriver, SymbolicSharedMemoryIsOptedInWhenALaunchNeedsIt) {
  pk::Module module = load(0);
  pk::Kernel wide = module.kernel("rowsum_wide");
  // min(C * 4, 98304) bytes: opted in only above what the function
  // allows already, and only upward. The function is shared with
  // rowsum_squares, whose constant 64 KiB was opted in at load.
  EXPECT_EQ(fake().funcAttribute(0, "pk_test_rowsum_f32", 8), 65536);
  struct Step {
    int64_t cols;
    unsigned shared;
    int attribute;
  } steps[] = {
      {100, 400, 65536}, {20000, 80000, 80000}, {10000, 40000, 80000}, {30000, 98304, 98304}};
  for (const Step &s : steps) {
    Array<float> x(0, {2, s.cols}, randomValue), out(0, {2});
    wide.launch({x.dl(), out.dl()});
    EXPECT_EQ(fake().lastLaunch().shared_memory, s.shared) << s.cols;
    EXPECT_EQ(fake().funcAttribute(0, "pk_test_rowsum_f32", 8), s.attribute) << s.cols;
    std::vector<float> got = out.download();
    double sum = 0;
    for (int64_t c = 0; c < s.cols; ++c)
      sum += x.host[c];
    EXPECT_NEAR(got[0], sum, 1e-4 * std::abs(sum) + 1e-3);
  }
}

TEST_F(FakeDriver, AnAliasedOutputStartsAsACopyOfItsInput) {
  pk::Module module = load(0);
  int64_t n = 300;
  Array<float> acc(0, {n}, randomValue), x(0, {n}, [](size_t i) { return float(i); }), out(0, {n});
  module.kernel("accumulate").launch({acc.dl(), x.dl(), out.dl()});
  ASSERT_EQ(fake().numCopies(), 1u);
  fake_cuda_copy copy{};
  fake().getCopy(0, &copy);
  EXPECT_EQ(copy.src, acc.address());
  EXPECT_EQ(copy.dst, out.address());
  EXPECT_EQ(copy.bytes, size_t(4 * n));
  std::vector<float> got = out.download(), accAfter = acc.download();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i], acc.host[i] + x.host[i]);
    EXPECT_EQ(accAfter[i], acc.host[i]) << "the input changed";
  }
}

TEST_F(FakeDriver, ClusterLaunch) {
  pk::Module module = load(0);
  int64_t n = 1000;
  Array<int32_t> x(0, {n}, [](size_t i) { return int32_t(i * 3); }), out(0, {n});
  module.kernel("cluster_ranks").launch({x.dl(), out.dl()});
  fake_cuda_launch l = fake().lastLaunch();
  EXPECT_EQ(l.used_launch_ex, 1);
  EXPECT_EQ(l.cluster[0], 2u);
  EXPECT_EQ(l.cluster[1], 1u);
  EXPECT_EQ(l.grid[0], 4u); // 2 * ceildiv(1000, 512)
  std::vector<int32_t> got = out.download();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], int32_t(i * 3) + int32_t((i / 256) % 2) + 200) << i;
  // The sm_80 cubin has no such kernel, and its manifest no program.
  pk::Module on1 = load(1);
  pk::Kernel k;
  pk::Status s = on1.tryKernel("cluster_ranks", k);
  EXPECT_EQ(s.code(), PK_ERROR_NOT_FOUND);
  EXPECT_EQ(s.message(),
            kKernels + ": export \"cluster_ranks\" has no program in kernels.sm_80.cubin, the "
                       "artifact for this device");
}

TEST_F(FakeDriver, TheCallersContextIsRestored) {
  using Retain = int (*)(void **, int);
  using Push = int (*)(void *);
  using Pop = int (*)(void **);
  using Current = int (*)(void **);
  auto retain = reinterpret_cast<Retain>(dlsym(fake().handle, "cuDevicePrimaryCtxRetain"));
  auto push = reinterpret_cast<Push>(dlsym(fake().handle, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<Pop>(dlsym(fake().handle, "cuCtxPopCurrent_v2"));
  auto current = reinterpret_cast<Current>(dlsym(fake().handle, "cuCtxGetCurrent"));
  pk::Module module = load(0);
  Array<float> x(0, {10}, randomValue), y(0, {10}, randomValue), out(0, {10});
  void *context1 = nullptr, *now = nullptr;
  ASSERT_EQ(retain(&context1, 1), 0);
  ASSERT_EQ(push(context1), 0);
  module.kernel("add").launch({x.dl(), y.dl(), out.dl()});
  EXPECT_EQ(fake().lastLaunch().device, 0);
  ASSERT_EQ(current(&now), 0);
  EXPECT_EQ(now, context1);
  EXPECT_EQ(fake().counter("context_depth"), 1);
  ASSERT_EQ(pop(&now), 0);
}

TEST_F(FakeDriver, DriverErrorsAreReportedAndCleanedUp) {
  pk::Module module = load(0);
  Array<float> x(0, {10}, randomValue), y(0, {10}, randomValue), out(0, {10});
  pk::Kernel add = module.kernel("add");
  fake().fail("cuLaunchKernel", 700, 1);
  pk::Status s = add.tryLaunch({x.dl(), y.dl(), out.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_CUDA);
  EXPECT_EQ(s.message(), "cuLaunchKernel of kernel \"pk_test_add_f32\" (step 0) failed: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
  EXPECT_TRUE(add.tryLaunch({x.dl(), y.dl(), out.dl()})) << "the failure was one launch's";

  // Temporaries are freed whether the program fails or not.
  Array<float> m(0, {3, 1000}, randomValue), sums(0, {3});
  pk::Kernel rowsum = module.kernel("rowsum_squares");
  fake().fail("cuMemAllocAsync", 2, 1);
  s = rowsum.tryLaunch({m.dl(), sums.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(s.message(),
            "cuMemAllocAsync of 12000 bytes for temporaries failed: CUDA_ERROR_OUT_OF_MEMORY "
            "(out of memory)");
  fake().fail("cuLaunchKernel", 1, 1);
  s = rowsum.tryLaunch({m.dl(), sums.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_CUDA);
  EXPECT_EQ(fake().counter("live_allocations"), liveBefore + 5) << "the temporaries were not freed";

  fake().fail("cuModuleLoadData", 200, 1);
  pk::Module broken;
  s = pk::Module::tryLoad(kKernels, broken);
  EXPECT_EQ(s.code(), PK_ERROR_CUDA);
  EXPECT_EQ(
      s.message(),
      "cuModuleLoadData(kernels.sm_90a.cubin) failed: CUDA_ERROR_INVALID_IMAGE (fake CUDA error)");
  EXPECT_EQ(broken.get(), nullptr);
}

/// The test kernels' manifest, changed by `mutate`, loaded from memory
/// with the cubins read from the build directory.
pk::Status loadChanged(const std::function<void(json &)> &mutate, int device, pk::Module &out) {
  std::ifstream in(kKernels);
  json j = json::parse(in);
  mutate(j);
  static std::string cubin90, cubin80;
  auto read = [](const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  cubin90 = read(std::string(PK_TEST_KERNELS) + "/kernels.sm_90a.cubin");
  cubin80 = read(std::string(PK_TEST_KERNELS) + "/kernels.sm_80.cubin");
  pk_artifact_data blobs[] = {{"kernels.sm_90a.cubin", cubin90.data(), cubin90.size()},
                              {"kernels.sm_80.cubin", cubin80.data(), cubin80.size()}};
  pk_load_options o;
  pk_load_options_init(&o);
  o.device = device;
  o.artifacts = blobs;
  o.num_artifacts = 2;
  std::string text = j.dump();
  return pk::Module::tryLoadMemory(text.data(), text.size(), &o, out);
}

json &step(json &j, int artifact, int program, int step) {
  return j["artifacts"][artifact]["programs"][program]["steps"][step];
}

TEST_F(FakeDriver, WhatTheDeviceCannotRunIsRefused) {
  pk::Module m;
  pk::Status s = loadChanged(
      [](json &j) { step(j, 0, 1, 1)["launch"]["shared_memory"]["dynamic"] = 300000; }, 0, m);
  EXPECT_EQ(s.code(), PK_ERROR_UNSUPPORTED);
  EXPECT_EQ(s.message(),
            "manifest: kernel \"pk_test_rowsum_f32\" (step 1 of export \"rowsum_squares\") needs "
            "300000 bytes of dynamic shared memory; device 0 (Fake Hopper, compute capability 9.0) "
            "allows at most 231424 (232448 per block, 1024 of them static)");

  s = loadChanged([](json &j) { step(j, 0, 0, 0)["launch"]["kernel"] = "pk_test_missing"; }, 0, m);
  EXPECT_EQ(s.code(), PK_ERROR_ARTIFACT);
  EXPECT_EQ(s.message(),
            "manifest: kernels.sm_90a.cubin has no kernel \"pk_test_missing\" (step 0 of export "
            "\"add\"); the artifact and the manifest do not match");

  s = loadChanged([](json &j) { step(j, 1, 0, 0)["launch"]["cluster"] = {2, 1, 1}; }, 1, m);
  EXPECT_EQ(s.code(), PK_ERROR_UNSUPPORTED);
  EXPECT_EQ(s.message(),
            "manifest: kernel \"pk_test_add_f32\" (step 0 of export \"add\") launches thread block "
            "clusters, which device 1 (Fake Ampere, compute capability 8.6) does not support");

  // Sizes that only a launch can check.
  ASSERT_TRUE(loadChanged(
      [](json &j) {
        step(j, 0, 0, 0)["launch"]["grid"][0] = {"mul", "N", 100000000};
        step(j, 0, 3, 0)["copy"]["bytes"] = {"mul", "N", 8};
        step(j, 0, 4, 0)["launch"]["grid"][0] = {"ceildiv", "N", 256};
      },
      0, m));
  Array<float> x(0, {100}, randomValue), y(0, {100}, randomValue), out(0, {100});
  s = m.kernel("add").tryLaunch({x.dl(), y.dl(), out.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_UNSUPPORTED);
  EXPECT_EQ(s.message(),
            "add: kernel \"pk_test_add_f32\" (step 0) has grid dimension 0 = 10000000000; device 0 "
            "(Fake Hopper, compute capability 9.0) allows 0 to 2147483647");
  s = m.kernel("accumulate").tryLaunch({x.dl(), y.dl(), out.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_MANIFEST);
  EXPECT_EQ(
      s.message(),
      "accumulate: copy (step 0) of 800 bytes from \"acc\" (400 bytes) to \"out0\" (400 bytes) "
      "does not fit; the manifest is inconsistent");
  Array<int32_t> ints(0, {200}), intsOut(0, {200});
  s = m.kernel("cluster_ranks").tryLaunch({ints.dl(), intsOut.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_UNSUPPORTED);
  EXPECT_EQ(s.message(),
            "cluster_ranks: kernel \"pk_test_cluster_rank_i32\" (step 0) has grid dimension 0 = 1, "
            "not a multiple of its cluster dimension 2");
  Array<int32_t> ints300(0, {300}), ints300Out(0, {300});
  EXPECT_TRUE(m.kernel("cluster_ranks").tryLaunch({ints300.dl(), ints300Out.dl()}))
      << pk_last_error();
  EXPECT_EQ(fake().numLaunches(), 1u) << "a refused launch launched something";
}

TEST_F(FakeDriver, OptInCountsTheStaticSharedMemory) {
  // Without opting in, a kernel may use 48 KiB less its static shared
  // memory (1 KiB for the row sum) dynamically: 48128 bytes, not 49152.
  // Both row-sum programs made symbolic, so nothing is opted in at load.
  pk::Module m;
  ASSERT_TRUE(loadChanged(
      [](json &j) {
        step(j, 0, 1, 1)["launch"]["shared_memory"]["dynamic"] = {"min", {"mul", "C", 4}, 98304};
      },
      0, m));
  pk::Kernel wide = m.kernel("rowsum_wide");
  Array<float> small(0, {1, 12032}, randomValue), large(0, {1, 12100}, randomValue), out(0, {1});
  wide.launch({small.dl(), out.dl()}); // 48128 bytes: no opt-in
  EXPECT_EQ(fake().funcAttribute(0, "pk_test_rowsum_f32", 8), -1);
  wide.launch({large.dl(), out.dl()}); // 48400 bytes: opted in
  EXPECT_EQ(fake().funcAttribute(0, "pk_test_rowsum_f32", 8), 48400);
  EXPECT_EQ(fake().lastLaunch().shared_memory, 48400u);
}

TEST_F(FakeDriver, ConcurrentLaunchesOnManyStreams) {
  pk::Module module = load(0);
  pk::Kernel add = module.kernel("add"), rowsum = module.kernel("rowsum_squares");
  constexpr int kThreads = 8, kIterations = 60;
  std::vector<std::string> errors(kThreads);
  // The streams outlive the threads, so no two share an address.
  std::vector<pk::Stream> streams;
  for (int t = 0; t < kThreads; ++t)
    streams.push_back(pk::Stream::create(0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const pk::Stream &stream = streams[size_t(t)];
      for (int i = 0; i < kIterations && errors[size_t(t)].empty(); ++i) {
        int64_t n = 1 + (t * 131 + i * 17) % 700;
        Array<float> x(0, {n}, [&](size_t k) { return randomValue(k + size_t(t)); });
        Array<float> y(0, {n}, [&](size_t k) { return randomValue(k * 3 + size_t(i)); });
        Array<float> out(0, {n}), sums(0, {2});
        Array<float> m(0, {2, n}, [&](size_t k) { return float(k % 5); });
        pk::Status s = add.tryLaunch({x.dl(), y.dl(), out.dl()}, stream.get());
        if (s)
          s = rowsum.tryLaunch({m.dl(), sums.dl()}, stream.get());
        if (!s) {
          errors[size_t(t)] = s.message();
          break;
        }
        std::vector<float> got = out.download(), gotSums = sums.download();
        for (int64_t k = 0; k < n; ++k)
          if (got[size_t(k)] != x.host[size_t(k)] + y.host[size_t(k)])
            errors[size_t(t)] = "wrong sum at " + std::to_string(k);
        double expected = 0;
        for (int64_t k = 0; k < n; ++k)
          expected += double(m.host[size_t(k)]) * m.host[size_t(k)];
        if (std::abs(gotSums[0] - expected) > 1e-3 * expected)
          errors[size_t(t)] = "wrong row sum";
      }
      stream.synchronize();
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
  std::map<void *, int> perStream;
  for (size_t i = 0; i < fake().numLaunches(); ++i)
    ++perStream[fake().launch(i).stream];
  EXPECT_EQ(fake().numLaunches(), size_t(kThreads * kIterations * 3));
  // Each thread's launches went to its own stream.
  for (const pk::Stream &s : streams)
    EXPECT_EQ(perStream[s.get()], kIterations * 3);
}

TEST_F(FakeDriver, AStreamOfAnotherDeviceIsTheDriversError) {
  pk::Module module = load(0);
  pk::Stream other = pk::Stream::create(1);
  Array<float> x(0, {10}, randomValue), y(0, {10}, randomValue), out(0, {10});
  pk::Status s = module.kernel("add").tryLaunch({x.dl(), y.dl(), out.dl()}, other.get());
  EXPECT_EQ(s.code(), PK_ERROR_CUDA);
  EXPECT_NE(s.message().find("CUDA_ERROR_INVALID_HANDLE"), std::string::npos) << s.message();
  // Arrays on the wrong device are caught before the driver sees them.
  Array<float> x1(1, {10}, randomValue);
  s = module.kernel("add").tryLaunch({x1.dl(), y.dl(), out.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_DEVICE_MISMATCH);
}

TEST_F(FakeDriver, DestroyingAModuleUnloadsIt) {
  {
    pk::Module module = load(1);
    EXPECT_EQ(fake().counter("module_loads"), 1);
  }
  EXPECT_EQ(fake().counter("module_unloads"), 1);
}

TEST_F(FakeDriver, MemoryHelpers) {
  void *p = reinterpret_cast<void *>(1);
  ASSERT_EQ(pk_device_alloc(0, 0, &p), PK_OK);
  EXPECT_EQ(p, nullptr);
  ASSERT_EQ(pk_device_alloc(1, 64, &p), PK_OK);
  std::vector<uint8_t> in(64), back(64);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = uint8_t(i * 7);
  ASSERT_EQ(pk_memcpy_to_device(1, p, in.data(), 64), PK_OK);
  ASSERT_EQ(pk_memcpy_to_host(1, back.data(), p, 64), PK_OK);
  EXPECT_EQ(in, back);
  EXPECT_EQ(pk_memcpy_to_host(1, back.data(), p, 128), PK_ERROR_CUDA);
  EXPECT_EQ(std::string(pk_last_error()),
            "cuMemcpyDtoH failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
  ASSERT_EQ(pk_device_free(1, p), PK_OK);
  EXPECT_EQ(pk_device_free(1, nullptr), PK_OK);
  void *stream = nullptr;
  ASSERT_EQ(pk_stream_create(0, &stream), PK_OK);
  EXPECT_EQ(pk_stream_synchronize(0, stream), PK_OK);
  EXPECT_EQ(pk_stream_destroy(0, stream), PK_OK);
}

} // namespace
