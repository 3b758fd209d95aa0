//===- EvalFloat.cpp - arith and math ops on floats -----------------------===//
//
// Each op computes in its type's precision: f32 in float, f64 in double,
// f16 and bf16 in float rounded back to the type after the op (fma in
// double). Math functions come from <cmath> in the same precision;
// libdevice, which the GPU uses, is within a few ulp of them. The
// bit-level ops (negf, absf, copysign) act on the sign bit alone, NaN
// included, as the GPU's instructions do.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Numerics.h"

#include <cmath>
#include <limits>

namespace pk::sim {

namespace {

template <Kind K>
void runFloat(const Instr &instr, const Executor::Mask &mask, const uint64_t *a, const uint64_t *b,
              const uint64_t *c, uint64_t *r) {
  using FT = FloatOf<K>;
  using T = typename FT::T;
  const unsigned w = instr.width;
  const uint64_t sign = floatSignBit(K);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  auto each = [&](auto f) {
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e)
        r[base + e] = f(base + e);
    }
  };
  auto unary = [&](auto f) { each([&](size_t i) { return FT::store(f(FT::load(a[i]))); }); };
  auto binary = [&](auto f) {
    each([&](size_t i) { return FT::store(f(FT::load(a[i]), FT::load(b[i]))); });
  };
  auto predicate = [&](auto f) { each([&](size_t i) -> uint64_t { return f(FT::load(a[i])) ? 1 : 0; }); };

  switch (instr.op) {
  case Op::AddF:
    return binary([](T x, T y) -> T { return x + y; });
  case Op::SubF:
    return binary([](T x, T y) -> T { return x - y; });
  case Op::MulF:
    return binary([](T x, T y) -> T { return x * y; });
  case Op::DivF:
    return binary([](T x, T y) -> T { return x / y; });
  case Op::RemF:
    return binary([](T x, T y) -> T { return std::fmod(x, y); });
  case Op::MaximumF: // NaN wins; -0 < +0
    return binary([&](T x, T y) -> T {
      if (std::isnan(x) || std::isnan(y))
        return nan;
      if (x == y)
        return std::signbit(x) ? y : x;
      return x > y ? x : y;
    });
  case Op::MinimumF:
    return binary([&](T x, T y) -> T {
      if (std::isnan(x) || std::isnan(y))
        return nan;
      if (x == y)
        return std::signbit(x) ? x : y;
      return x < y ? x : y;
    });
  case Op::MaxNumF: // NaN loses
    return binary([](T x, T y) -> T {
      if (std::isnan(x))
        return y;
      if (std::isnan(y))
        return x;
      if (x == y)
        return std::signbit(x) ? y : x;
      return x > y ? x : y;
    });
  case Op::MinNumF:
    return binary([](T x, T y) -> T {
      if (std::isnan(x))
        return y;
      if (std::isnan(y))
        return x;
      if (x == y)
        return std::signbit(x) ? x : y;
      return x < y ? x : y;
    });
  case Op::PowF:
    return binary([](T x, T y) -> T { return std::pow(x, y); });
  case Op::Atan2:
    return binary([](T x, T y) -> T { return std::atan2(x, y); });
  case Op::CopySign:
    return each([&](size_t i) -> uint64_t { return (a[i] & ~sign) | (b[i] & sign); });
  case Op::NegF:
    return each([&](size_t i) -> uint64_t { return a[i] ^ sign; });
  case Op::AbsF:
    return each([&](size_t i) -> uint64_t { return a[i] & ~sign; });
  case Op::Exp:
    return unary([](T x) -> T { return std::exp(x); });
  case Op::Exp2:
    return unary([](T x) -> T { return std::exp2(x); });
  case Op::ExpM1:
    return unary([](T x) -> T { return std::expm1(x); });
  case Op::Log:
    return unary([](T x) -> T { return std::log(x); });
  case Op::Log1p:
    return unary([](T x) -> T { return std::log1p(x); });
  case Op::Log2:
    return unary([](T x) -> T { return std::log2(x); });
  case Op::Log10:
    return unary([](T x) -> T { return std::log10(x); });
  case Op::Sqrt:
    return unary([](T x) -> T { return std::sqrt(x); });
  case Op::Rsqrt:
    return unary([](T x) -> T { return static_cast<T>(1.0 / std::sqrt(static_cast<double>(x))); });
  case Op::Cbrt:
    return unary([](T x) -> T { return std::cbrt(x); });
  case Op::Sin:
    return unary([](T x) -> T { return std::sin(x); });
  case Op::Cos:
    return unary([](T x) -> T { return std::cos(x); });
  case Op::Tan:
    return unary([](T x) -> T { return std::tan(x); });
  case Op::Tanh:
    return unary([](T x) -> T { return std::tanh(x); });
  case Op::Sinh:
    return unary([](T x) -> T { return std::sinh(x); });
  case Op::Cosh:
    return unary([](T x) -> T { return std::cosh(x); });
  case Op::Asin:
    return unary([](T x) -> T { return std::asin(x); });
  case Op::Acos:
    return unary([](T x) -> T { return std::acos(x); });
  case Op::Atan:
    return unary([](T x) -> T { return std::atan(x); });
  case Op::Asinh:
    return unary([](T x) -> T { return std::asinh(x); });
  case Op::Acosh:
    return unary([](T x) -> T { return std::acosh(x); });
  case Op::Atanh:
    return unary([](T x) -> T { return std::atanh(x); });
  case Op::Erf:
    return unary([](T x) -> T { return std::erf(x); });
  case Op::Erfc:
    return unary([](T x) -> T { return std::erfc(x); });
  case Op::Floor:
    return unary([](T x) -> T { return std::floor(x); });
  case Op::Ceil:
    return unary([](T x) -> T { return std::ceil(x); });
  case Op::Trunc:
    return unary([](T x) -> T { return std::trunc(x); });
  case Op::Round: // half away from zero
    return unary([](T x) -> T { return std::round(x); });
  case Op::RoundEven: // the default rounding mode is to nearest even
    return unary([](T x) -> T { return std::nearbyint(x); });
  case Op::Fma:
    if constexpr (K == Kind::F16 || K == Kind::BF16)
      return each([&](size_t i) {
        return FT::storeDouble(std::fma(static_cast<double>(FT::load(a[i])),
                                        static_cast<double>(FT::load(b[i])),
                                        static_cast<double>(FT::load(c[i]))));
      });
    else
      return each([&](size_t i) { return FT::store(std::fma(FT::load(a[i]), FT::load(b[i]), FT::load(c[i]))); });
  case Op::FPowI: {
    unsigned bits = bitsOf(static_cast<Kind>(instr.imm));
    return each([&](size_t i) {
      return FT::store(static_cast<T>(std::pow(FT::load(a[i]), static_cast<T>(signExtend(b[i], bits)))));
    });
  }
  case Op::IsNaN:
    return predicate([](T x) { return std::isnan(x); });
  case Op::IsInf:
    return predicate([](T x) { return std::isinf(x); });
  case Op::IsFinite:
    return predicate([](T x) { return std::isfinite(x); });
  default:
    return;
  }
}

} // namespace

void Executor::evalFloat(const Instr &instr, const Mask &mask) {
  const uint64_t *a = reg(instr.in[0]);
  const uint64_t *b = instr.in.size() > 1 ? reg(instr.in[1]) : nullptr;
  const uint64_t *c = instr.in.size() > 2 ? reg(instr.in[2]) : nullptr;
  uint64_t *r = reg(instr.out[0]);
  switch (instr.kind) {
  case Kind::F16:
    return runFloat<Kind::F16>(instr, mask, a, b, c, r);
  case Kind::BF16:
    return runFloat<Kind::BF16>(instr, mask, a, b, c, r);
  case Kind::F32:
    return runFloat<Kind::F32>(instr, mask, a, b, c, r);
  case Kind::F64:
    return runFloat<Kind::F64>(instr, mask, a, b, c, r);
  default:
    fail(instr, -1, "a float op on a non-float type");
  }
}

} // namespace pk::sim
