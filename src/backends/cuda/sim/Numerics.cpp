//===- Numerics.cpp - Rounding and conversions, bit by bit ----------------===//
#include "backends/cuda/sim/Numerics.h"

#include <cmath>
#include <limits>

namespace pk::sim {

namespace {

/// A binary interchange format with `mantissaBits` stored fraction bits
/// and `exponentBits` exponent bits.
struct Format {
  unsigned exponentBits, mantissaBits;
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
};

constexpr Format kHalf{5, 10}, kBF16{8, 7}, kSingle{8, 23};

/// Rounds the exact value (-1)^sign * significand * 2^exponent (significand
/// != 0) to `f` with round to nearest even, and encodes it.
uint64_t roundExact(const Format &f, bool sign, uint64_t significand, int exponent) {
  // Normalize: the leading 1 at bit 63.
  int lead = 63 - __builtin_clzll(significand);
  significand <<= (63 - lead);
  int unbiased = exponent + lead; // value = 1.xxx * 2^unbiased
  int minNormal = 1 - f.bias();
  // Bits below the kept fraction: 63 - mantissaBits for a normal number,
  // more for a subnormal one.
  int drop = 63 - static_cast<int>(f.mantissaBits);
  if (unbiased < minNormal)
    drop += minNormal - unbiased;
  uint64_t kept, rest, half;
  if (drop > 64) { // below half the smallest subnormal: zero
    kept = rest = 0;
    half = 1;
  } else if (drop == 64) { // between half the smallest subnormal and it
    kept = 0;
    rest = significand;
    half = uint64_t(1) << 63;
  } else {
    kept = significand >> drop;
    rest = significand & ((uint64_t(1) << drop) - 1);
    half = uint64_t(1) << (drop - 1);
  }
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  uint64_t signBit = uint64_t(sign) << (f.exponentBits + f.mantissaBits);
  uint64_t infinity = ((uint64_t(1) << f.exponentBits) - 1) << f.mantissaBits;
  if (unbiased < minNormal)
    return signBit | kept; // a carry into the exponent field is the smallest normal
  if (kept >> (f.mantissaBits + 1)) { // rounded up to the next power of two
    kept >>= 1;
    ++unbiased;
  }
  if (unbiased > f.bias())
    return signBit | infinity;
  uint64_t field = static_cast<uint64_t>(unbiased + f.bias());
  return signBit | (field << f.mantissaBits) | (kept & ((uint64_t(1) << f.mantissaBits) - 1));
}

uint64_t roundDouble(const Format &f, double value, uint64_t canonicalNan) {
  uint64_t bits = bitsFromDouble(value);
  bool sign = bits >> 63;
  uint64_t signBit = uint64_t(sign) << (f.exponentBits + f.mantissaBits);
  int field = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t fraction = bits & ((uint64_t(1) << 52) - 1);
  if (field == 0x7ff) {
    if (fraction)
      return canonicalNan;
    return signBit | (((uint64_t(1) << f.exponentBits) - 1) << f.mantissaBits);
  }
  if (field == 0 && fraction == 0)
    return signBit;
  uint64_t significand = field == 0 ? fraction : (fraction | (uint64_t(1) << 52));
  int exponent = (field == 0 ? 1 : field) - 1023 - 52;
  return roundExact(f, sign, significand, exponent);
}

} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float v = static_cast<float>(mantissa) * 0x1p-24f; // exact
    return sign ? -v : v;
  }
  return floatFromBits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t roundToHalf(double value) { return static_cast<uint16_t>(roundDouble(kHalf, value, 0x7fff)); }

uint16_t roundToBF16(double value) { return static_cast<uint16_t>(roundDouble(kBF16, value, 0x7fff)); }

double floatWordToDouble(Kind k, uint64_t word) {
  switch (k) {
  case Kind::F16:
    return halfToFloat(static_cast<uint16_t>(word));
  case Kind::BF16:
    return bf16ToFloat(static_cast<uint16_t>(word));
  case Kind::F32:
    return floatFromBits(static_cast<uint32_t>(word));
  default:
    return doubleFromBits(word);
  }
}

uint64_t doubleToFloatWord(Kind k, double value) {
  switch (k) {
  case Kind::F16:
    return roundToHalf(value);
  case Kind::BF16:
    return roundToBF16(value);
  case Kind::F32:
    return bitsFromFloat(static_cast<float>(value)); // one IEEE rounding
  default:
    return bitsFromDouble(value);
  }
}

uint64_t intToFloatWord(Kind to, uint64_t word, unsigned bits, bool isSigned) {
  bool negative = false;
  uint64_t magnitude = word & widthMask(bits);
  if (isSigned) {
    int64_t v = signExtend(word, bits);
    negative = v < 0;
    magnitude = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  }
  if (magnitude == 0)
    return 0;
  switch (to) {
  case Kind::F16:
    return roundExact(kHalf, negative, magnitude, 0);
  case Kind::BF16:
    return roundExact(kBF16, negative, magnitude, 0);
  case Kind::F32:
    return roundExact(kSingle, negative, magnitude, 0);
  default: {
    // C++'s conversion to double rounds once, to nearest even.
    double d = static_cast<double>(magnitude);
    return bitsFromDouble(negative ? -d : d);
  }
  }
}

uint64_t floatToIntWord(Kind from, uint64_t word, unsigned bits, bool isSigned, bool &poison) {
  double v = std::trunc(floatWordToDouble(from, word));
  uint64_t indefinite = bits >= 64 ? uint64_t(1) << 63 : (uint64_t(1) << (bits - 1));
  poison = false;
  if (std::isnan(v)) {
    poison = true;
    return indefinite & widthMask(bits);
  }
  // The representable range, as exact doubles: [-2^(bits-1), 2^(bits-1))
  // signed, [0, 2^bits) unsigned.
  double low = isSigned ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
  double high = isSigned ? std::ldexp(1.0, static_cast<int>(bits) - 1) : std::ldexp(1.0, static_cast<int>(bits));
  if (v < low || v >= high) {
    poison = true;
    return indefinite & widthMask(bits);
  }
  if (isSigned)
    return static_cast<uint64_t>(static_cast<int64_t>(v)) & widthMask(bits);
  return static_cast<uint64_t>(v) & widthMask(bits);
}

} // namespace pk::sim
