//===- Numerics.h - Floats and integers as the GPU computes them -*- C++ -*-===//
//
// Bit-exact conversions between the simulator's words and C++ numbers:
// f16 and bf16 decode exactly to float and every rounding (to f16, bf16,
// f32) is one round to nearest even from the exact value, as LLVM's
// fptrunc, sitofp and uitofp define it. Arithmetic on f16/bf16 happens in
// float and is rounded after each op (the result of +, -, *, / and sqrt
// on 11- or 8-bit operands is exact in float's 24 bits, so rounding it
// again gives what a native f16/bf16 instruction gives).
//
// NaN results of conversions are the canonical NaNs an NVIDIA GPU makes
// (0x7fff for f16 and bf16); payloads are not otherwise modelled.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_NUMERICS_H
#define PK_BACKENDS_CUDA_SIM_NUMERICS_H

#include "backends/cuda/sim/Types.h"

#include <cstdint>
#include <cstring>

namespace pk::sim {

inline float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t bitsFromFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
inline double doubleFromBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
inline uint64_t bitsFromDouble(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

/// Exact decodings of the 16-bit formats.
float halfToFloat(uint16_t bits);
inline float bf16ToFloat(uint16_t bits) { return floatFromBits(static_cast<uint32_t>(bits) << 16); }

/// One round to nearest even of `value` to f16 / bf16 (overflow gives
/// infinity, NaN the canonical NaN 0x7fff).
uint16_t roundToHalf(double value);
uint16_t roundToBF16(double value);

/// The exact value of a float word of kind `k` (F16, BF16, F32 or F64).
double floatWordToDouble(Kind k, uint64_t word);
/// `value` rounded once to kind `k`.
uint64_t doubleToFloatWord(Kind k, double value);

/// sitofp / uitofp: an integer word of `bits` converted with one rounding.
uint64_t intToFloatWord(Kind to, uint64_t word, unsigned bits, bool isSigned);

/// fptosi / fptoui: the float word truncated toward zero. NaN and values
/// outside the integer type are poison in LLVM: the result is then the
/// integer type's sign bit alone (what x86 gives, not PTX's saturation, so
/// that code relying on saturation shows up) and `poison` is set.
uint64_t floatToIntWord(Kind from, uint64_t word, unsigned bits, bool isSigned, bool &poison);

/// Per-kind access to float words as C++ numbers: f16 and bf16 compute in
/// float. `storeDouble` rounds a double once to the kind.
template <Kind K> struct FloatOf;
template <> struct FloatOf<Kind::F32> {
  using T = float;
  static T load(uint64_t w) { return floatFromBits(static_cast<uint32_t>(w)); }
  static uint64_t store(T v) { return bitsFromFloat(v); }
  static uint64_t storeDouble(double v) { return bitsFromFloat(static_cast<float>(v)); }
};
template <> struct FloatOf<Kind::F64> {
  using T = double;
  static T load(uint64_t w) { return doubleFromBits(w); }
  static uint64_t store(T v) { return bitsFromDouble(v); }
  static uint64_t storeDouble(double v) { return bitsFromDouble(v); }
};
template <> struct FloatOf<Kind::F16> {
  using T = float;
  static T load(uint64_t w) { return halfToFloat(static_cast<uint16_t>(w)); }
  static uint64_t store(T v) { return roundToHalf(v); }
  static uint64_t storeDouble(double v) { return roundToHalf(v); }
};
template <> struct FloatOf<Kind::BF16> {
  using T = float;
  static T load(uint64_t w) { return bf16ToFloat(static_cast<uint16_t>(w)); }
  static uint64_t store(T v) { return roundToBF16(v); }
  static uint64_t storeDouble(double v) { return roundToBF16(v); }
};

/// The sign bit of a float word of kind k.
inline uint64_t floatSignBit(Kind k) { return uint64_t(1) << (bitsOf(k) - 1); }

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_NUMERICS_H
