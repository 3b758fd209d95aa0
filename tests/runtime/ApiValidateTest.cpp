//===- ApiValidateTest.cpp - The C API without a device -------------------===//
//
// Loading with PK_LOAD_NO_DEVICE reads and checks the manifest and the
// chosen artifact and lets pk_validate check arguments, all without a
// driver: every validation error path runs in CI. Addresses are made-up
// numbers; nothing dereferences them.
//
//===----------------------------------------------------------------------===//
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <stdlib.h>
#include <unistd.h>

using namespace pk::test;
using nlohmann::json;

namespace {

class ApiValidate : public ::testing::Test {
protected:
  void SetUp() override {
    artifacts = testArtifacts();
    pk_load_options o = noDevice(90, artifacts, /*device=*/0);
    std::string text = testManifest().dump();
    ASSERT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &module), PK_OK)
        << pk_last_error();
    ASSERT_EQ(pk_module_get(module, "add", &add), PK_OK) << pk_last_error();
    ASSERT_EQ(pk_module_get(module, "matmul", &matmul), PK_OK) << pk_last_error();
    ASSERT_EQ(pk_module_get(module, "widen", &widen), PK_OK) << pk_last_error();
  }
  void TearDown() override { pk_module_destroy(module); }

  /// Validates and expects `status`, and a message starting with `message`.
  void expect(const pk_kernel *k, std::vector<DLTensor> args, pk_status status,
              const std::string &message) {
    pk_status s = pk_validate(k, args.data(), args.size());
    EXPECT_EQ(s, status) << pk_status_name(s) << ": " << pk_last_error();
    if (status != PK_OK) {
      EXPECT_EQ(std::string(pk_last_error()).substr(0, message.size()), message);
    }
  }

  std::vector<pk_artifact_data> artifacts;
  pk_module *module = nullptr;
  pk_kernel *add = nullptr, *matmul = nullptr, *widen = nullptr;
  std::vector<int64_t> n1000 = {1000}, n999 = {999}, n0 = {0};
};

TEST_F(ApiValidate, AcceptsWhatTheExportTakes) {
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_OK, "");
  // Inputs may share memory; outputs only need not to overlap.
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x10000, n1000, kF32),
          tensor(0x10000 + 4000, n1000, kF32)},
         PK_OK, "");
  // Explicit dense strides are the same as none.
  std::vector<int64_t> x = {3, 256}, y = {256, 5}, out = {3, 5};
  int64_t xs[] = {256, 1}, ys[] = {5, 1}, os[] = {5, 1};
  expect(matmul,
         {tensor(0x10000, x, kF32, 0, xs), tensor(0x20000, y, kF32, 0, ys),
          tensor(0x30000, out, kF32, 0, os)},
         PK_OK, "");
  // A dimension of size 1 may have any stride: it is never stepped over.
  std::vector<int64_t> x1 = {1, 256}, out1 = {1, 5};
  int64_t x1s[] = {9999, 1};
  expect(matmul,
         {tensor(0x10000, x1, kF32, 0, x1s), tensor(0x20000, y, kF32), tensor(0x30000, out1, kF32)},
         PK_OK, "");
  // bool and bfloat16; out0's shape is [N + 1, 2].
  std::vector<int64_t> flags = {7}, wide = {8, 2};
  expect(widen, {tensor(0x10001, flags, kBool), tensor(0x20002, wide, kBF16)}, PK_OK, "");
}

TEST_F(ApiValidate, EmptyArraysNeedNoMemory) {
  // N = 0: null pointers and any alignment are fine, nothing is touched.
  expect(add, {tensor(0, n0, kF32), tensor(0x3, n0, kF32), tensor(0, n0, kF32)}, PK_OK, "");
}

TEST_F(ApiValidate, ArgumentCount) {
  expect(add, {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32)}, PK_ERROR_ARGUMENT_COUNT,
         "add takes 3 arrays (2 input(s) then 1 output(s): x, y, out0), got 2");
  EXPECT_EQ(pk_validate(add, nullptr, 3), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(pk_last_error(), "add: the argument array is null");
}

TEST_F(ApiValidate, Device) {
  DLTensor host = tensor(0x10000, n1000, kF32);
  host.device = DLDevice{kDLCPU, 0};
  expect(add, {host, tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_DEVICE_MISMATCH,
         "add: argument \"x\" (param 0) is not in CUDA device memory (its DLPack device type is 1; "
         "expected kDLCUDA (2) or kDLCUDAManaged (13))");
  expect(
      add,
      {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32, 1), tensor(0x30000, n1000, kF32)},
      PK_ERROR_DEVICE_MISMATCH,
      "add: argument \"y\" (param 1) is on CUDA device 1, but the module is loaded on device 0");
  DLTensor managed = tensor(0x30000, n1000, kF32, 5);
  managed.device.device_type = kDLCUDAManaged;
  expect(add, {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32), managed}, PK_OK, "");
  // A C caller may store any int there (found by fuzz/FuzzLaunchArgs.cpp,
  // where reading it through the enum type was undefined behavior).
  DLTensor odd = tensor(0x10000, n1000, kF32);
  int32_t notADevice = 109;
  std::memcpy(&odd.device.device_type, &notADevice, sizeof notADevice);
  expect(add, {odd, tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_DEVICE_MISMATCH,
         "add: argument \"x\" (param 0) is not in CUDA device memory (its DLPack device type is 109; "
         "expected kDLCUDA (2) or kDLCUDAManaged (13))");
}

TEST_F(ApiValidate, DType) {
  expect(add,
         {tensor(0x10000, n1000, kF64), tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_DTYPE, "add: argument \"x\" (param 0) is float64, expected float32");
  DLDataType vector{kDLFloat, 32, 4};
  expect(
      add,
      {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, vector)},
      PK_ERROR_DTYPE, "add: output \"out0\" (param 2) is float32x4, expected float32");
  // bool is DLPack's kDLBool, not uint8.
  std::vector<int64_t> flags = {7}, wide = {8, 2};
  expect(widen, {tensor(0x10000, flags, DLDataType{kDLUInt, 8, 1}), tensor(0x20000, wide, kBF16)},
         PK_ERROR_DTYPE, "widen: argument \"flags\" (param 0) is uint8, expected bool");
  expect(widen, {tensor(0x10000, flags, kBool), tensor(0x20000, wide, DLDataType{kDLFloat, 16, 1})},
         PK_ERROR_DTYPE, "widen: output \"out0\" (param 1) is float16, expected bfloat16");
  expect(
      widen, {tensor(0x10000, flags, kBool), tensor(0x20000, wide, DLDataType{9, 8, 1})},
      PK_ERROR_DTYPE,
      "widen: output \"out0\" (param 1) is DLDataType(code=9, bits=8, lanes=1), expected bfloat16");
}

TEST_F(ApiValidate, Rank) {
  std::vector<int64_t> two = {10, 100};
  expect(
      add, {tensor(0x10000, n1000, kF32), tensor(0x20000, two, kF32), tensor(0x30000, n1000, kF32)},
      PK_ERROR_RANK, "add: argument \"y\" (param 1) has 2 dimension(s) [10, 100], expected 1 [N]");
  DLTensor bad = tensor(0x10000, n1000, kF32);
  bad.shape = nullptr;
  expect(add, {bad, tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_INVALID_ARGUMENT,
         "add: argument \"x\" (param 0) is not a valid DLTensor (ndim 1, null shape)");
}

TEST_F(ApiValidate, ShapesAndSymbols) {
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n999, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_SHAPE,
         "add: argument \"y\" (param 1) has shape [999], expected [N] = [1000] with N = 1000 "
         "(dimension 0 of \"x\")");
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32), tensor(0x30000, n999, kF32)},
         PK_ERROR_SHAPE,
         "add: output \"out0\" (param 2) has shape [999], expected [N] = [1000] with N = 1000 "
         "(dimension 0 of \"x\")");
  std::vector<int64_t> x = {3, 128}, y = {256, 5}, out = {3, 5}, outWrong = {5, 3};
  expect(matmul, {tensor(0x10000, x, kF32), tensor(0x20000, y, kF32), tensor(0x30000, out, kF32)},
         PK_ERROR_SHAPE,
         "matmul: argument \"x\" (param 0) has shape [3, 128], expected [M, 256] = [3, 256] with M "
         "= 3 "
         "(dimension 0 of \"x\")");
  std::vector<int64_t> x3 = {3, 256};
  expect(matmul,
         {tensor(0x10000, x3, kF32), tensor(0x20000, y, kF32), tensor(0x30000, outWrong, kF32)},
         PK_ERROR_SHAPE,
         "matmul: output \"out0\" (param 2) has shape [5, 3], expected [M, N] = [3, 5] with M = 3 "
         "(dimension 0 "
         "of \"x\"), N = 5 (dimension 1 of \"y\")");
  std::vector<int64_t> flags = {7}, wide = {7, 2};
  expect(
      widen, {tensor(0x10000, flags, kBool), tensor(0x20000, wide, kBF16)}, PK_ERROR_SHAPE,
      "widen: output \"out0\" (param 1) has shape [7, 2], expected [N + 1, 2] = [8, 2] with N = 7");
  std::vector<int64_t> negative = {-4};
  expect(
      add,
      {tensor(0x10000, negative, kF32), tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
      PK_ERROR_SHAPE, "add: argument \"x\" (param 0) has a negative dimension: shape [-4]");
  // N + 1 overflows for the largest N.
  std::vector<int64_t> huge = {INT64_MAX};
  expect(widen, {tensor(0x10000, huge, kBool), tensor(0x20000, wide, kBF16)}, PK_ERROR_SHAPE,
         "widen: output \"out0\" (param 1) has a size the kernels cannot take: dimension 0 is N + "
         "1, which "
         "gives 64-bit overflow with N = 9223372036854775807");
}

TEST_F(ApiValidate, Strides) {
  std::vector<int64_t> x = {3, 256}, y = {256, 5}, out = {3, 5};
  int64_t columnMajor[] = {1, 3};
  expect(matmul,
         {tensor(0x10000, x, kF32, 0, columnMajor), tensor(0x20000, y, kF32),
          tensor(0x30000, out, kF32)},
         PK_ERROR_LAYOUT,
         "matmul: argument \"x\" (param 0) has strides [1, 3] (in elements) for shape [3, 256]; "
         "the kernels need a "
         "dense row-major array, strides [256, 1] (or NULL)");
  int64_t padded[] = {8, 1};
  expect(
      matmul,
      {tensor(0x10000, x, kF32), tensor(0x20000, y, kF32), tensor(0x30000, out, kF32, 0, padded)},
      PK_ERROR_LAYOUT,
      "matmul: output \"out0\" (param 2) has strides [8, 1] (in elements) for shape [3, 5]; the "
      "kernels need "
      "a dense row-major array, strides [5, 1] (or NULL)");
  int64_t broadcast[] = {0};
  expect(add,
         {tensor(0x10000, n1000, kF32, 0, broadcast), tensor(0x20000, n1000, kF32),
          tensor(0x30000, n1000, kF32)},
         PK_ERROR_LAYOUT, "add: argument \"x\" (param 0) has strides [0]");
}

TEST_F(ApiValidate, AlignmentAndNullData) {
  expect(add,
         {tensor(0x10004, n1000, kF32), tensor(0x20000, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_ALIGNMENT,
         "add: argument \"x\" (param 0) is at address 0x10004, which is not 16-byte aligned as the "
         "kernels assume");
  DLTensor offset = tensor(0x20000, n1000, kF32);
  offset.byte_offset = 8;
  expect(add, {tensor(0x10000, n1000, kF32), offset, tensor(0x30000, n1000, kF32)},
         PK_ERROR_ALIGNMENT, "add: argument \"y\" (param 1) is at address 0x20008");
  offset.byte_offset = 32;
  expect(add, {tensor(0x10000, n1000, kF32), offset, tensor(0x30000, n1000, kF32)}, PK_OK, "");
  expect(add, {tensor(0x10000, n1000, kF32), tensor(0, n1000, kF32), tensor(0x30000, n1000, kF32)},
         PK_ERROR_INVALID_ARGUMENT, "add: argument \"y\" (param 1) has a null data pointer");
}

TEST_F(ApiValidate, Aliasing) {
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32), tensor(0x10000, n1000, kF32)},
         PK_ERROR_ALIASING,
         "add: output \"out0\" (param 2) overlaps argument \"x\" (param 0); an output must not "
         "share memory "
         "with any other argument");
  // The last element of y (at 0x20000 + 3996) is the first of out0.
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32),
          tensor(0x20000 + 3984, n1000, kF32)},
         PK_ERROR_ALIASING, "add: output \"out0\" (param 2) overlaps argument \"y\" (param 1)");
  // Just past y's end: no overlap.
  expect(add,
         {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32),
          tensor(0x20000 + 4000, n1000, kF32)},
         PK_OK, "");
}

TEST_F(ApiValidate, LaunchValidatesThenNeedsADevice) {
  std::vector<DLTensor> good = {tensor(0x10000, n1000, kF32), tensor(0x20000, n1000, kF32),
                                tensor(0x30000, n1000, kF32)};
  EXPECT_EQ(pk_launch(add, good.data(), good.size(), nullptr), PK_ERROR_NO_DEVICE);
  EXPECT_STREQ(pk_last_error(),
               "manifest: the module was loaded with PK_LOAD_NO_DEVICE; it can validate "
               "arguments but not launch");
  EXPECT_EQ(pk_launch(add, good.data(), 2, nullptr), PK_ERROR_ARGUMENT_COUNT);
}

TEST_F(ApiValidate, Introspection) {
  ASSERT_EQ(pk_module_num_exports(module), 4u);
  EXPECT_STREQ(pk_module_export_name(module, 1), "matmul");
  EXPECT_EQ(pk_module_export_name(module, 4), nullptr);
  EXPECT_STREQ(pk_module_target(module), "cuda:sm_90a");
  EXPECT_STREQ(pk_module_artifact(module), "test.sm_90a.cubin");
  EXPECT_EQ(pk_module_device(module), -1);
  EXPECT_STREQ(pk_kernel_name(matmul), "matmul");
  ASSERT_EQ(pk_kernel_num_params(matmul), 3u);
  pk_param_info info;
  ASSERT_EQ(pk_kernel_param(matmul, 2, &info), PK_OK);
  EXPECT_STREQ(info.name, "out0");
  EXPECT_EQ(info.role, PK_PARAM_OUTPUT);
  EXPECT_EQ(info.dtype.code, kDLFloat);
  EXPECT_EQ(info.dtype.bits, 32);
  EXPECT_EQ(info.ndim, 2);
  EXPECT_EQ(info.alignment, 16u);
  EXPECT_EQ(pk_kernel_param(matmul, 3, &info), PK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(pk_kernel_num_symbols(matmul), 2u);
  EXPECT_STREQ(pk_kernel_symbol_name(matmul, 1), "N");
  EXPECT_EQ(pk_kernel_symbol_name(matmul, 2), nullptr);
  // matmul binds M from dimension 0 of x and N from dimension 1 of y.
  size_t param = 99;
  int32_t dim = 99;
  ASSERT_EQ(pk_kernel_symbol_source(matmul, 1, &param, &dim), PK_OK);
  EXPECT_EQ(param, 1u);
  EXPECT_EQ(dim, 1);
  ASSERT_EQ(pk_kernel_symbol_source(matmul, 0, &param, &dim), PK_OK);
  EXPECT_EQ(param, 0u);
  EXPECT_EQ(dim, 0);
  EXPECT_EQ(pk_kernel_symbol_source(matmul, 2, &param, &dim), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(pk_last_error(), "matmul has 2 symbolic sizes; there is no symbol 2");
  EXPECT_EQ(pk_kernel_symbol_source(matmul, 0, nullptr, &dim), PK_ERROR_INVALID_ARGUMENT);
  int64_t values[] = {3, 5}, shape[2] = {};
  ASSERT_EQ(pk_kernel_param_shape(matmul, 2, values, 2, shape), PK_OK);
  EXPECT_EQ(shape[0], 3);
  EXPECT_EQ(shape[1], 5);
  ASSERT_EQ(pk_kernel_param_shape(matmul, 1, values, 2, shape), PK_OK);
  EXPECT_EQ(shape[0], 256);
  EXPECT_EQ(pk_kernel_param_shape(matmul, 1, values, 1, shape), PK_ERROR_INVALID_ARGUMENT);
  int64_t negative[] = {-1, 5};
  EXPECT_EQ(pk_kernel_param_shape(matmul, 0, negative, 2, shape), PK_ERROR_SHAPE);
}

TEST_F(ApiValidate, MissingExport) {
  pk_kernel *k = reinterpret_cast<pk_kernel *>(1);
  EXPECT_EQ(pk_module_get(module, "sub", &k), PK_ERROR_NOT_FOUND);
  EXPECT_EQ(k, nullptr);
  EXPECT_STREQ(pk_last_error(),
               "manifest: no export named \"sub\" (its exports: add, matmul, update, widen)");
}

TEST(ApiLoad, ChoosesTheArtifactForTheComputeCapability) {
  std::vector<pk_artifact_data> artifacts = testArtifacts();
  std::string text = testManifest().dump();
  struct Case {
    int cc;
    const char *target;
  } cases[] = {
      {90, "cuda:sm_90a"}, {80, "cuda:sm_80"}, {86, "cuda:sm_80"}, {89, "cuda:sm_80"}, {0, ""}};
  for (const Case &c : cases) {
    pk_load_options o = noDevice(c.cc, artifacts);
    pk_module *m = nullptr;
    ASSERT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_OK) << pk_last_error();
    EXPECT_STREQ(pk_module_target(m), c.target) << c.cc;
    pk_module_destroy(m);
  }
  pk_load_options o = noDevice(75, artifacts);
  pk_module *m = reinterpret_cast<pk_module *>(1);
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m),
            PK_ERROR_NO_COMPATIBLE_ARTIFACT);
  EXPECT_EQ(m, nullptr);
  EXPECT_STREQ(
      pk_last_error(),
      "manifest: no artifact runs on compute capability 7.5; the manifest has test.sm_90a.cubin "
      "(cuda:sm_90a, cubin, runs on compute capability 9.0 only), test.sm_80.cubin (cuda:sm_80, "
      "cubin, "
      "runs on compute capability 8.x), test.mlir (tpu, mosaic). Compile for this device with "
      "--target=cuda:sm_75");
}

TEST(ApiLoad, ArtifactsInMemoryAreChecked) {
  std::string text = testManifest().dump();
  std::string corrupt = kArtifact90;
  corrupt[3] ^= 1;
  std::vector<pk_artifact_data> wrong = {{"test.sm_90a.cubin", corrupt.data(), corrupt.size()}};
  pk_load_options o = noDevice(90, wrong);
  pk_module *m = nullptr;
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_ARTIFACT);
  // The corrupt artifact's sha256 is from sha256sum.
  EXPECT_EQ(std::string(pk_last_error()),
            "manifest: artifact test.sm_90a.cubin (in memory) has sha256 "
            "9aae011a19e4678fe7818b0d98bd688a12073496928b2ed4c6764495434021fc, the manifest says " +
                std::string(kArtifact90Sha) +
                ": it does not belong to this manifest; recompile the kernels");
  std::vector<pk_artifact_data> truncated = {{"test.sm_90a.cubin", kArtifact90.data(), 20}};
  o = noDevice(90, truncated);
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_ARTIFACT);
  EXPECT_STREQ(pk_last_error(),
               "manifest: artifact test.sm_90a.cubin (in memory) has 20 bytes, the manifest "
               "says 26 bytes: it is truncated or stale; recompile the kernels");
  std::vector<pk_artifact_data> other = {
      {"test.sm_80.cubin", kArtifact80.data(), kArtifact80.size()}};
  o = noDevice(90, other);
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_IO);
  EXPECT_STREQ(
      pk_last_error(),
      "manifest: artifact test.sm_90a.cubin is not among the pk_artifact_data given to the loader");
  o = noDevice(90, {});
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_IO);
  EXPECT_STREQ(pk_last_error(),
               "manifest: artifact test.sm_90a.cubin was not given: a manifest loaded from "
               "memory takes its artifacts from pk_load_options.artifacts");
}

/// A directory with the test manifest and its artifacts as files.
class ApiLoadFiles : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/pk-runtime-test-XXXXXX";
    ASSERT_TRUE(mkdtemp(pattern));
    dir = pattern;
    write(dir + "/test.json", testManifest().dump(2));
    write(dir + "/test.sm_90a.cubin", kArtifact90);
    write(dir + "/test.sm_80.cubin", kArtifact80);
  }
  void TearDown() override {
    for (const char *f : {"test.json", "test.sm_90a.cubin", "test.sm_80.cubin"})
      std::remove((dir + "/" + f).c_str());
    rmdir(dir.c_str());
  }
  static void write(const std::string &path, const std::string &bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  pk_status load(int cc) {
    pk_load_options o;
    pk_load_options_init(&o);
    o.flags = PK_LOAD_NO_DEVICE;
    o.compute_capability = cc;
    pk_module *m = nullptr;
    pk_status s = pk_module_load_ex((dir + "/test.json").c_str(), &o, &m);
    pk_module_destroy(m);
    return s;
  }
  std::string dir;
};

TEST_F(ApiLoadFiles, ReadsArtifactsNextToTheManifest) {
  EXPECT_EQ(load(90), PK_OK) << pk_last_error();
  EXPECT_EQ(load(86), PK_OK) << pk_last_error();
}

TEST_F(ApiLoadFiles, MissingArtifact) {
  std::remove((dir + "/test.sm_80.cubin").c_str());
  EXPECT_EQ(load(90), PK_OK) << pk_last_error(); // only the chosen artifact is read
  EXPECT_EQ(load(80), PK_ERROR_IO);
  EXPECT_EQ(std::string(pk_last_error()), dir + "/test.json: cannot read artifact " + dir +
                                              "/test.sm_80.cubin: No such file or directory");
}

TEST_F(ApiLoadFiles, StaleArtifact) {
  write(dir + "/test.sm_90a.cubin", "pkc!runtime test artifact\n");
  EXPECT_EQ(load(90), PK_ERROR_ARTIFACT);
  EXPECT_NE(std::string(pk_last_error()).find("does not belong to this manifest"),
            std::string::npos);
  write(dir + "/test.sm_90a.cubin", "pkc runtime");
  EXPECT_EQ(load(90), PK_ERROR_ARTIFACT);
  EXPECT_NE(std::string(pk_last_error()).find("has 11 bytes, the manifest says 26 bytes"),
            std::string::npos);
}

TEST_F(ApiLoadFiles, MissingOrMalformedManifest) {
  pk_module *m = nullptr;
  EXPECT_EQ(pk_module_load((dir + "/nope.json").c_str(), &m), PK_ERROR_IO);
  EXPECT_EQ(std::string(pk_last_error()),
            "cannot read manifest " + dir + "/nope.json: No such file or directory");
  write(dir + "/test.json", "{\"format\": \"pkc-manifest\", \"version\": 1, \"exports\": [");
  EXPECT_EQ(load(90), PK_ERROR_MANIFEST);
  EXPECT_EQ(std::string(pk_last_error()).rfind(dir + "/test.json: malformed JSON: ", 0), 0u)
      << pk_last_error();
  // Without PK_LOAD_NO_DEVICE the manifest is still read first: a bad one
  // is reported as such whether or not there is a driver.
  EXPECT_EQ(pk_module_load((dir + "/test.json").c_str(), &m), PK_ERROR_MANIFEST);
}

TEST(ApiLoad, BadOptionsAndNullPointers) {
  std::string text = testManifest().dump();
  pk_module *m = nullptr;
  pk_load_options o;
  pk_load_options_init(&o);
  o.struct_size = 0;
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      pk_last_error(),
      "pk_load_options.struct_size is 0; initialize the options with pk_load_options_init");
  pk_load_options_init(&o);
  o.flags = 0x80;
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_INVALID_ARGUMENT);
  pk_load_options_init(&o);
  o.compute_capability = 90;
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      pk_last_error(),
      "pk_load_options.compute_capability is only for PK_LOAD_NO_DEVICE; a device has its own");
  pk_load_options_init(&o);
  o.device = -7;
  EXPECT_EQ(pk_module_load_memory(text.data(), text.size(), &o, &m), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pk_module_load(nullptr, &m), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(pk_last_error(), "the manifest path is null");
  EXPECT_EQ(pk_module_load("x.json", nullptr), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pk_module_load_memory(nullptr, 3, nullptr, &m), PK_ERROR_INVALID_ARGUMENT);
  pk_kernel *k = nullptr;
  EXPECT_EQ(pk_module_get(nullptr, "add", &k), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pk_validate(nullptr, nullptr, 0), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pk_launch(nullptr, nullptr, 0, nullptr), PK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pk_kernel_num_params(nullptr), 0u);
  EXPECT_EQ(pk_module_num_exports(nullptr), 0u);
  EXPECT_STREQ(pk_module_target(nullptr), "");
  EXPECT_STREQ(pk_module_artifact(nullptr), "");
  pk_module_destroy(nullptr);
}

TEST(ApiLoad, ErrorsAreThreadLocal) {
  pk_module *m = nullptr;
  EXPECT_EQ(pk_module_load(nullptr, &m), PK_ERROR_INVALID_ARGUMENT);
  std::string other;
  std::thread([&] { other = pk_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_STREQ(pk_last_error(), "the manifest path is null");
}

TEST(ApiLoad, StatusNames) {
  EXPECT_STREQ(pk_status_name(PK_OK), "PK_OK");
  EXPECT_STREQ(pk_status_name(PK_ERROR_SHAPE), "PK_ERROR_SHAPE");
  EXPECT_STREQ(pk_status_name(PK_ERROR_INTERNAL), "PK_ERROR_INTERNAL");
  // (A value C++ can hold in a pk_status, 0-31, that names no status; C
  // callers may pass any int, which the runtime reads as an int.)
  EXPECT_STREQ(pk_status_name(pk_status(31)), "PK_STATUS_UNKNOWN");
  EXPECT_EQ(pk_runtime_abi_version(), PK_RUNTIME_ABI_VERSION);
  EXPECT_STRNE(pk_runtime_version(), "");
}

} // namespace
