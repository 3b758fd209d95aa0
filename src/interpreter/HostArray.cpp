//===- HostArray.cpp ------------------------------------------------------===//
#include "interpreter/HostArray.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pk {

namespace {

uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace

/// Rounds to the nearest value with `precision` significant bits and
/// exponents in [minExponent, maxExponent], ties to even, overflowing to
/// infinity: IEEE rounding of a double into a narrower binary format,
/// done once (rounding through f32 first could round twice).
static double roundToFormat(double value, int precision, int minExponent, int maxExponent) {
  if (value == 0 || std::isnan(value) || std::isinf(value))
    return value;
  double magnitude = std::fabs(value);
  int exponent;
  std::frexp(magnitude, &exponent);
  exponent -= 1; // magnitude = 1.f * 2^exponent
  if (exponent < minExponent)
    exponent = minExponent; // subnormal: a fixed quantum
  double quantum = std::ldexp(1.0, exponent - (precision - 1));
  double rounded = std::nearbyint(magnitude / quantum) * quantum;
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), maxExponent);
  if (rounded > maxFinite)
    rounded = INFINITY;
  return std::copysign(rounded, value);
}

double roundToFloatType(double value, DType dtype) {
  switch (dtype) {
  case DType::F64:
    return value;
  case DType::F32:
    return static_cast<double>(static_cast<float>(value));
  case DType::BF16:
    return roundToFormat(value, 8, -126, 127);
  case DType::F16:
    return roundToFormat(value, 11, -14, 15);
  default:
    return value;
  }
}

uint16_t toBFloat16Bits(double value) {
  // After rounding the value is exact in f32, whose top half is bf16.
  float f = static_cast<float>(roundToFloatType(value, DType::BF16));
  uint32_t bits = floatBits(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>(bits >> 16);
}

double fromBFloat16Bits(uint16_t bits) { return bitsToFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t toHalfBits(double value) {
  double v = roundToFloatType(value, DType::F16);
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v))
    return 0x7e00;
  double magnitude = std::fabs(v);
  if (std::isinf(magnitude))
    return static_cast<uint16_t>(sign | 0x7c00);
  if (magnitude == 0)
    return sign;
  int exponent;
  std::frexp(magnitude, &exponent);
  exponent -= 1;
  if (exponent < -14) // subnormal: units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(magnitude, 24)));
  uint16_t mantissa = static_cast<uint16_t>(std::ldexp(magnitude, -exponent) * 1024.0 - 1024.0);
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

double fromHalfBits(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    double v = std::ldexp(static_cast<double>(mantissa), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

HostArray::HostArray(DType dtype, std::vector<int64_t> shape) : type(dtype), dims(std::move(shape)) {
  // An empty dimension makes the array empty whatever the others are, and
  // multiplying those first could overflow (a .npy of shape (2**40, 2**40, 0)).
  count = std::find(dims.begin(), dims.end(), 0) != dims.end() ? 0 : 1;
  for (int64_t d : dims)
    if (count != 0)
      count *= d;
  bytes.assign(static_cast<size_t>(count) * byteWidth(dtype), 0);
}

double HostArray::getDouble(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementBytes();
  switch (type) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fromHalfBits(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fromBFloat16Bits(h);
  }
  case DType::U64: {
    uint64_t u;
    std::memcpy(&u, p, 8);
    return static_cast<double>(u);
  }
  default:
    return static_cast<double>(getInt(i));
  }
}

int64_t HostArray::getInt(int64_t i) const {
  const uint8_t *p = bytes.data() + i * elementBytes();
  switch (type) {
  case DType::Bool:
    return *p ? 1 : 0;
  case DType::I8:
    return static_cast<int8_t>(*p);
  case DType::U8:
    return *p;
  case DType::I16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case DType::U16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::U32: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64:
  case DType::U64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  default: {
    double d = getDouble(i);
    if (std::isnan(d))
      return 0;
    return static_cast<int64_t>(d);
  }
  }
}

void HostArray::setDouble(int64_t i, double v) {
  uint8_t *p = bytes.data() + i * elementBytes();
  switch (type) {
  case DType::F32: {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &v, 8);
    return;
  case DType::F16: {
    uint16_t h = toHalfBits(v);
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = toBFloat16Bits(v);
    std::memcpy(p, &h, 2);
    return;
  }
  default:
    setInt(i, std::isnan(v) ? 0 : static_cast<int64_t>(v));
  }
}

void HostArray::setInt(int64_t i, int64_t v) {
  if (isFloat(type)) {
    setDouble(i, static_cast<double>(v));
    return;
  }
  uint8_t *p = bytes.data() + i * elementBytes();
  if (type == DType::Bool) {
    *p = v != 0;
    return;
  }
  std::memcpy(p, &v, elementBytes()); // little-endian: the low bytes
}

std::string HostArray::describe() const {
  std::string s = std::string(numpyName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

} // namespace pk
