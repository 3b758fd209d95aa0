//===- NumpyFormatTest.cpp - pkc run --print matches NumPy's str() --------===//
//
// The expected strings were printed by NumPy 2 (`str(array)`).
//
//===----------------------------------------------------------------------===//
#include "interpreter/NumpyFormat.h"

#include "gtest/gtest.h"

#include <cmath>

using pk::DType;
using pk::HostArray;

namespace {

HostArray floats(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  HostArray a(t, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    a.setDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

HostArray ints(DType t, std::vector<int64_t> shape, std::vector<int64_t> values) {
  HostArray a(t, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    a.setInt(static_cast<int64_t>(i), values[i]);
  return a;
}

TEST(NumpyFormat, Floats) {
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {3}, {1, 2.5, 3.25})), "[1.   2.5  3.25]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {3}, {-1.5, 0, 2})), "[-1.5  0.   2. ]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {2}, {1e-5, 1e8})), "[1.e-05 1.e+08]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {3}, {NAN, 1, -INFINITY})), "[ nan   1. -inf]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {2}, {1.0 / 3, 2.0 / 3})), "[0.33333334 0.6666667 ]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F64, {2}, {0.1, 0.25})), "[0.1  0.25]");
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {}, {3.5})), "3.5");
}

TEST(NumpyFormat, MatricesAndWrapping) {
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {2, 3}, {0, 0.25, 0.5, 0.75, 1, 1.25})),
            "[[0.   0.25 0.5 ]\n [0.75 1.   1.25]]");
  std::vector<double> v;
  for (int i = 0; i < 30; ++i)
    v.push_back(i * 1.25);
  EXPECT_EQ(pk::formatNumpy(floats(DType::F32, {30}, v)),
            "[ 0.    1.25  2.5   3.75  5.    6.25  7.5   8.75 10.   11.25 12.5  13.75\n"
            " 15.   16.25 17.5  18.75 20.   21.25 22.5  23.75 25.   26.25 27.5  28.75\n"
            " 30.   31.25 32.5  33.75 35.   36.25]");
}

TEST(NumpyFormat, IntegersAndBools) {
  EXPECT_EQ(pk::formatNumpy(ints(DType::I32, {2, 2}, {1, -20, 300, 4})), "[[  1 -20]\n [300   4]]");
  EXPECT_EQ(pk::formatNumpy(ints(DType::Bool, {3}, {1, 0, 1})), "[ True False  True]");
  EXPECT_EQ(pk::formatNumpy(ints(DType::U8, {3}, {0, 255, 7})), "[  0 255   7]");
  EXPECT_EQ(pk::formatNumpy(ints(DType::I32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

TEST(NumpyFormat, SummarizesLargeArrays) {
  std::vector<int64_t> v(1200);
  for (int i = 0; i < 1200; ++i)
    v[i] = i;
  EXPECT_EQ(pk::formatNumpy(ints(DType::I32, {1200}, v)), "[   0    1    2 ... 1197 1198 1199]");
}

} // namespace
