//===- HostArrayTest.cpp - Float rounding and element access --------------===//
#include "interpreter/HostArray.h"

#include "gtest/gtest.h"

#include <cmath>

using pk::DType;
using pk::roundToFloatType;

TEST(FloatRounding, BFloat16RoundsOnceToNearestEven) {
  // 1 + 2^-8 + 2^-30: just above the halfway point between bf16 neighbours
  // 1 and 1 + 2^-7, so it rounds up. Rounding through f32 first would land
  // exactly on the tie and round down to 1.
  double x = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(roundToFloatType(x, DType::BF16), 1.0 + std::ldexp(1.0, -7));
  // An exact tie rounds to even.
  EXPECT_EQ(roundToFloatType(1.0 + std::ldexp(1.0, -8), DType::BF16), 1.0);
  EXPECT_EQ(roundToFloatType(1.0 + 3 * std::ldexp(1.0, -8), DType::BF16), 1.0 + std::ldexp(1.0, -6));
}

TEST(FloatRounding, HalfOverflowAndSubnormals) {
  EXPECT_EQ(roundToFloatType(65504.0, DType::F16), 65504.0);
  EXPECT_EQ(roundToFloatType(65519.0, DType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(roundToFloatType(65520.0, DType::F16)));
  double smallest = std::ldexp(1.0, -24);
  EXPECT_EQ(roundToFloatType(smallest, DType::F16), smallest);
  EXPECT_EQ(roundToFloatType(smallest * 0.4, DType::F16), 0.0);
  EXPECT_EQ(roundToFloatType(smallest * 0.6, DType::F16), smallest);
}

TEST(FloatRounding, BitsRoundTrip) {
  for (double v : {0.0, -0.0, 1.0, -2.5, 65504.0, 3.0e38, 1e-40}) {
    EXPECT_EQ(pk::fromBFloat16Bits(pk::toBFloat16Bits(v)), roundToFloatType(v, DType::BF16)) << v;
    EXPECT_EQ(pk::fromHalfBits(pk::toHalfBits(v)), roundToFloatType(v, DType::F16)) << v;
  }
  EXPECT_EQ(pk::toHalfBits(1.0), 0x3c00);
  EXPECT_EQ(pk::toBFloat16Bits(1.0), 0x3f80);
  EXPECT_EQ(pk::toHalfBits(-2.0), 0xc000);
  EXPECT_TRUE(std::isnan(pk::fromHalfBits(pk::toHalfBits(NAN))));
}

TEST(HostArray, StoresWrapToTheDtype) {
  pk::HostArray a(DType::U8, {3});
  a.setInt(0, 300);
  a.setInt(1, -1);
  a.setInt(2, 7);
  EXPECT_EQ(a.getInt(0), 44);
  EXPECT_EQ(a.getInt(1), 255);
  EXPECT_EQ(a.getInt(2), 7);
  pk::HostArray b(DType::Bool, {2});
  b.setInt(0, 5);
  EXPECT_EQ(b.getInt(0), 1);
  EXPECT_EQ(b.getInt(1), 0);
  EXPECT_EQ(a.describe(), "uint8[3]");
}
