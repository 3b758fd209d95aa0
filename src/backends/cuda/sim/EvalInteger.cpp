//===- EvalInteger.cpp - arith and math ops on integers -------------------===//
//
// Integers wrap at their width. Division by zero and signed division
// overflow are undefined behaviour in LLVM (an optimizer may assume they
// never happen), so they stop the simulation. Results LLVM calls poison
// (shifts by the width or more, broken nsw / nuw / exact promises) are
// counted; shifts then use the amount modulo the width, as x86 does,
// rather than PTX's clamping, so that code relying on either shows up.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"

#include <limits>

namespace pk::sim {

namespace {
constexpr int64_t kNsw = 1, kNuw = 2, kExact = 4;
}

void Executor::evalInteger(const Instr &instr, const Mask &mask) {
  const unsigned bits = bitsOf(instr.kind);
  const uint64_t m = widthMask(bits);
  const unsigned w = instr.width;
  const uint64_t *a = reg(instr.in[0]);
  const uint64_t *b = instr.in.size() > 1 ? reg(instr.in[1]) : nullptr;
  uint64_t *r = reg(instr.out[0]);
  const int64_t flags = instr.imm;
  const __int128 smin = -(static_cast<__int128>(1) << (bits - 1));
  const __int128 smax = (static_cast<__int128>(1) << (bits - 1)) - 1;
  auto sx = [bits](uint64_t x) { return signExtend(x, bits); };

  auto binary = [&](auto f) {
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e)
        r[base + e] = static_cast<uint64_t>(f(a[base + e], b[base + e], t)) & m;
    }
  };
  auto unary = [&](auto f) {
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e)
        r[base + e] = static_cast<uint64_t>(f(a[base + e], t)) & m;
    }
  };
  auto checkWrap = [&](__int128 signedResult, unsigned __int128 unsignedResult, uint16_t t) {
    if ((flags & kNsw) && (signedResult < smin || signedResult > smax))
      poison(instr, t, "signed overflow of an op marked nsw");
    if ((flags & kNuw) && unsignedResult > static_cast<unsigned __int128>(m))
      poison(instr, t, "unsigned overflow of an op marked nuw");
  };
  auto divisor = [&](uint64_t x, uint64_t y, uint16_t t, bool isSigned) {
    if (y == 0)
      fail(instr, t, "integer division by zero (undefined behaviour in LLVM: the backend must "
                     "guard the divisor, not select the result afterwards)");
    if (isSigned && sx(x) == smin && sx(y) == -1)
      fail(instr, t, "signed division overflow (the minimum integer divided by -1 is undefined "
                     "behaviour in LLVM)");
  };
  auto shiftAmount = [&](uint64_t y, uint16_t t) -> unsigned {
    if (y >= bits) {
      poison(instr, t, "a shift by the bit width or more");
      return static_cast<unsigned>(y % bits);
    }
    return static_cast<unsigned>(y);
  };

  switch (instr.op) {
  case Op::AddI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      if (flags)
        checkWrap(static_cast<__int128>(sx(x)) + sx(y), static_cast<unsigned __int128>(x) + y, t);
      return x + y;
    });
  case Op::SubI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      if (flags)
        checkWrap(static_cast<__int128>(sx(x)) - sx(y),
                  x >= y ? static_cast<unsigned __int128>(x - y) : ~static_cast<unsigned __int128>(0), t);
      return x - y;
    });
  case Op::MulI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      if (flags)
        checkWrap(static_cast<__int128>(sx(x)) * sx(y), static_cast<unsigned __int128>(x) * y, t);
      return x * y;
    });
  case Op::DivSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, true);
      if ((flags & kExact) && sx(x) % sx(y) != 0)
        poison(instr, t, "an inexact division marked exact");
      return static_cast<uint64_t>(sx(x) / sx(y));
    });
  case Op::DivUI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, false);
      if ((flags & kExact) && x % y != 0)
        poison(instr, t, "an inexact division marked exact");
      return x / y;
    });
  case Op::RemSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, true);
      return static_cast<uint64_t>(sx(x) % sx(y));
    });
  case Op::RemUI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, false);
      return x % y;
    });
  case Op::CeilDivSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, true);
      int64_t p = sx(x), q = sx(y), d = p / q;
      if (p % q != 0 && ((p < 0) == (q < 0)))
        ++d;
      return static_cast<uint64_t>(d);
    });
  case Op::CeilDivUI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, false);
      return x / y + (x % y != 0);
    });
  case Op::FloorDivSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      divisor(x, y, t, true);
      int64_t p = sx(x), q = sx(y), d = p / q;
      if (p % q != 0 && ((p < 0) != (q < 0)))
        --d;
      return static_cast<uint64_t>(d);
    });
  case Op::AndI:
    return binary([](uint64_t x, uint64_t y, uint16_t) { return x & y; });
  case Op::OrI:
    return binary([](uint64_t x, uint64_t y, uint16_t) { return x | y; });
  case Op::XOrI:
    return binary([](uint64_t x, uint64_t y, uint16_t) { return x ^ y; });
  case Op::ShLI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      unsigned s = shiftAmount(y, t);
      uint64_t result = (x << s) & m;
      if ((flags & kNuw) && (result >> s) != x)
        poison(instr, t, "a shift marked nuw shifted out set bits");
      if ((flags & kNsw) && (sx(result) >> s) != sx(x))
        poison(instr, t, "a shift marked nsw changed the sign");
      return result;
    });
  case Op::ShRSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      unsigned s = shiftAmount(y, t);
      if ((flags & kExact) && s && (x & widthMask(s)))
        poison(instr, t, "a shift marked exact shifted out set bits");
      return static_cast<uint64_t>(sx(x) >> s);
    });
  case Op::ShRUI:
    return binary([&](uint64_t x, uint64_t y, uint16_t t) {
      unsigned s = shiftAmount(y, t);
      if ((flags & kExact) && s && (x & widthMask(s)))
        poison(instr, t, "a shift marked exact shifted out set bits");
      return x >> s;
    });
  case Op::MaxSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t) { return sx(x) >= sx(y) ? x : y; });
  case Op::MaxUI:
    return binary([](uint64_t x, uint64_t y, uint16_t) { return x >= y ? x : y; });
  case Op::MinSI:
    return binary([&](uint64_t x, uint64_t y, uint16_t) { return sx(x) <= sx(y) ? x : y; });
  case Op::MinUI:
    return binary([](uint64_t x, uint64_t y, uint16_t) { return x <= y ? x : y; });
  case Op::MulSIExtended:
  case Op::MulUIExtended:
  case Op::AddUIExtended: {
    uint64_t *high = reg(instr.out[1]);
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e) {
        uint64_t x = a[base + e], y = b[base + e];
        if (instr.op == Op::AddUIExtended) {
          unsigned __int128 sum = static_cast<unsigned __int128>(x) + y;
          r[base + e] = static_cast<uint64_t>(sum) & m;
          high[base + e] = sum > m ? 1 : 0;
        } else if (instr.op == Op::MulUIExtended) {
          unsigned __int128 p = static_cast<unsigned __int128>(x) * y;
          r[base + e] = static_cast<uint64_t>(p) & m;
          high[base + e] = static_cast<uint64_t>(p >> bits) & m;
        } else {
          __int128 p = static_cast<__int128>(sx(x)) * sx(y);
          r[base + e] = static_cast<uint64_t>(p) & m;
          high[base + e] = static_cast<uint64_t>(p >> bits) & m;
        }
      }
    }
    return;
  }
  case Op::AbsI:
    return unary([&](uint64_t x, uint16_t) { return sx(x) < 0 ? 0 - x : x; });
  case Op::CtLz:
    return unary([&](uint64_t x, uint16_t) -> uint64_t {
      return x == 0 ? bits : static_cast<uint64_t>(__builtin_clzll(x)) - (64 - bits);
    });
  case Op::CtTz:
    return unary([&](uint64_t x, uint16_t) -> uint64_t {
      return x == 0 ? bits : static_cast<uint64_t>(__builtin_ctzll(x));
    });
  case Op::CtPop:
    return unary([](uint64_t x, uint16_t) -> uint64_t { return __builtin_popcountll(x); });
  case Op::IPowI:
    // math.ipowi: a negative exponent gives 0 except for bases 1 and -1.
    return binary([&](uint64_t x, uint64_t y, uint16_t) -> uint64_t {
      int64_t base = sx(x), exponent = sx(y);
      if (exponent < 0)
        return base == 1 ? 1 : base == -1 ? (exponent % 2 ? x : 1) : 0;
      uint64_t result = 1, p = x;
      for (uint64_t n = static_cast<uint64_t>(exponent); n; n >>= 1, p *= p)
        if (n & 1)
          result *= p;
      return result;
    });
  default:
    return;
  }
}

} // namespace pk::sim
