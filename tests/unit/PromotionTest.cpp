//===- PromotionTest.cpp - JAX's type promotion table ---------------------===//
//
// Expected results are JAX's (jnp.result_type with 64-bit mode off), from
// the type promotion table in JAX's documentation.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Promotion.h"

#include "gtest/gtest.h"

using pk::DType;
using pk::elab::JaxType;
using pk::elab::promoteTypes;

namespace {

JaxType strong(DType t) { return {t, false}; }
JaxType weakInt() { return pk::elab::pythonIntType(); }
JaxType weakFloat() { return pk::elab::pythonFloatType(); }

void expectPromotes(JaxType a, JaxType b, JaxType expected) {
  JaxType r = promoteTypes(a, b);
  EXPECT_EQ(r.dtype, expected.dtype) << pk::numpyName(a.dtype) << (a.weak ? "*" : "") << " + "
                                     << pk::numpyName(b.dtype) << (b.weak ? "*" : "");
  EXPECT_EQ(r.weak, expected.weak);
  JaxType s = promoteTypes(b, a);
  EXPECT_TRUE(s == r) << "promotion must be symmetric";
}

TEST(Promotion, SameTypeIsUnchanged) {
  for (DType t : pk::allDTypes)
    expectPromotes(strong(t), strong(t), strong(t));
}

TEST(Promotion, PythonScalarsAdaptToArrays) {
  expectPromotes(strong(DType::I8), weakInt(), strong(DType::I8));
  expectPromotes(strong(DType::U8), weakInt(), strong(DType::U8));
  expectPromotes(strong(DType::BF16), weakFloat(), strong(DType::BF16));
  expectPromotes(strong(DType::F16), weakInt(), strong(DType::F16));
  expectPromotes(strong(DType::F32), weakInt(), strong(DType::F32));
}

TEST(Promotion, IntegerArrayWithPythonFloatIsWeakFloat) {
  expectPromotes(strong(DType::I32), weakFloat(), {DType::F32, true});
  expectPromotes(strong(DType::U8), weakFloat(), {DType::F32, true});
}

TEST(Promotion, BoolAndPythonScalars) {
  expectPromotes(strong(DType::Bool), weakInt(), {DType::I32, true});
  expectPromotes(strong(DType::Bool), weakFloat(), {DType::F32, true});
  expectPromotes(strong(DType::Bool), strong(DType::I8), strong(DType::I8));
}

TEST(Promotion, MixedWidths) {
  expectPromotes(strong(DType::I8), strong(DType::I32), strong(DType::I32));
  expectPromotes(strong(DType::U8), strong(DType::I8), strong(DType::I16));
  expectPromotes(strong(DType::U16), strong(DType::I16), strong(DType::I32));
  expectPromotes(strong(DType::U8), strong(DType::U32), strong(DType::U32));
  expectPromotes(strong(DType::BF16), strong(DType::F16), strong(DType::F32));
  expectPromotes(strong(DType::BF16), strong(DType::F32), strong(DType::F32));
  expectPromotes(strong(DType::I32), strong(DType::BF16), strong(DType::BF16));
  expectPromotes(strong(DType::U8), strong(DType::F16), strong(DType::F16));
}

TEST(Promotion, SixtyFourBitOnlyWhenAsked) {
  // u32 + i32 is i64 in JAX's lattice; with 64-bit mode off JAX narrows it.
  expectPromotes(strong(DType::U32), strong(DType::I32), strong(DType::I32));
  expectPromotes(strong(DType::I64), strong(DType::I32), strong(DType::I64));
  expectPromotes(strong(DType::F64), strong(DType::F32), strong(DType::F64));
  expectPromotes(strong(DType::I64), strong(DType::F32), strong(DType::F32));
}

TEST(Promotion, WeakWithWeak) {
  expectPromotes(weakInt(), weakInt(), weakInt());
  expectPromotes(weakInt(), weakFloat(), weakFloat());
}

TEST(Promotion, ToInexact) {
  EXPECT_EQ(pk::elab::toInexact(strong(DType::I32)).dtype, DType::F32);
  EXPECT_EQ(pk::elab::toInexact(strong(DType::BF16)).dtype, DType::BF16);
  EXPECT_TRUE(pk::elab::toInexact(weakInt()).weak);
}

} // namespace
