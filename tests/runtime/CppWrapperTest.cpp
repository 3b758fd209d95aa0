//===- CppWrapperTest.cpp - pk/runtime.hpp --------------------------------===//
#include "TestManifest.h"

#include "pk/runtime.hpp"

#include <gtest/gtest.h>

using namespace pk::test;

namespace {

class CppWrapper : public ::testing::Test {
protected:
  void SetUp() override {
    artifacts = testArtifacts();
    options = noDevice(90, artifacts, 0);
    text = testManifest().dump();
  }
  std::vector<pk_artifact_data> artifacts;
  pk_load_options options;
  std::string text;
};

TEST_F(CppWrapper, LoadsAndInspects) {
  pk::Module module = pk::Module::loadMemory(text.data(), text.size(), &options);
  EXPECT_EQ(module.exports(), (std::vector<std::string>{"add", "matmul", "update", "widen"}));
  EXPECT_EQ(module.target(), "cuda:sm_90a");
  pk::Kernel matmul = module.kernel("matmul");
  EXPECT_STREQ(matmul.name(), "matmul");
  EXPECT_EQ(matmul.symbols(), (std::vector<std::string>{"M", "N"}));
  EXPECT_EQ(matmul.paramShape(2, {3, 5}), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(matmul.param(0).alignment, 16u);
}

TEST_F(CppWrapper, ThrowsWithTheStatus) {
  pk::Module module = pk::Module::loadMemory(text.data(), text.size(), &options);
  try {
    module.kernel("sub");
    FAIL() << "no exception";
  } catch (const pk::Error &e) {
    EXPECT_EQ(e.code(), PK_ERROR_NOT_FOUND);
    EXPECT_STREQ(e.what(),
                 "manifest: no export named \"sub\" (its exports: add, matmul, update, widen)");
  }
  pk::Kernel add = module.kernel("add");
  std::vector<int64_t> n = {8}, m = {9};
  pk::Tensor x(reinterpret_cast<void *>(0x1000), n, pk::dtypeOf<float>());
  pk::Tensor y = pk::Tensor::of(reinterpret_cast<float *>(0x2000), m);
  pk::Tensor out = x; // a copy keeps its own shape storage
  out = pk::Tensor(reinterpret_cast<void *>(0x3000), n, pk::dtypeOf<float>());
  try {
    add.validate({x.dl(), y.dl(), out.dl()});
    FAIL() << "no exception";
  } catch (const pk::Error &e) {
    EXPECT_EQ(e.code(), PK_ERROR_SHAPE);
  }
  pk::Tensor y8 = pk::Tensor::of(reinterpret_cast<float *>(0x2000), n);
  EXPECT_NO_THROW(add.validate({x.dl(), y8.dl(), out.dl()}));
  // Launching needs a device.
  pk::Status s = add.tryLaunch({x.dl(), y8.dl(), out.dl()});
  EXPECT_EQ(s.code(), PK_ERROR_NO_DEVICE);
  EXPECT_FALSE(s);
}

TEST_F(CppWrapper, TryFormsDoNotThrow) {
  pk::Module module;
  pk::Status s = pk::Module::tryLoadMemory("{", 1, &options, module);
  EXPECT_EQ(s.code(), PK_ERROR_MANIFEST);
  EXPECT_EQ(module.get(), nullptr);
  EXPECT_NE(s.message().find("malformed JSON"), std::string::npos);
  s = pk::Module::tryLoadMemory(text.data(), text.size(), &options, module);
  ASSERT_TRUE(s) << s.message();
  pk::Module moved = std::move(module);
  EXPECT_EQ(module.get(), nullptr);
  pk::Kernel k;
  EXPECT_TRUE(moved.tryKernel("widen", k));
  EXPECT_EQ(k.numParams(), 2u);
}

TEST_F(CppWrapper, TensorCopiesOwnTheirShape) {
  pk::Tensor a = pk::Tensor::of(reinterpret_cast<int32_t *>(0x1000), {2, 3});
  pk::Tensor b = a;
  a = pk::Tensor::of(reinterpret_cast<int32_t *>(0x1000), {7});
  EXPECT_EQ(b.dl().ndim, 2);
  EXPECT_EQ(b.dl().shape[0], 2);
  EXPECT_EQ(b.dl().shape[1], 3);
  EXPECT_EQ(b.dl().shape, b.shape().data());
  EXPECT_EQ(b.dl().dtype.code, kDLInt);
}

} // namespace
