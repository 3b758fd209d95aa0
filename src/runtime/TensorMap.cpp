//===- TensorMap.cpp - cuTensorMapEncodeTiled's requirements --------------===//
#include "runtime/TensorMap.h"

#include <dlpack/dlpack.h>

namespace pk::rt {

namespace {

template <typename E, size_t N>
bool parseName(std::string_view text, const char *const (&names)[N], E &out) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] && text == names[i]) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

const char *const kSwizzleNames[] = {"none", "32B", "64B", "128B"};
const char *const kInterleaveNames[] = {"none", "16B", "32B"};
const char *const kL2Names[] = {"none", "64B", "128B", "256B"};
const char *const kOobNames[] = {"zero", "nan"};

/// CUDA's dimension i (0 innermost) as the manifest numbers it (0
/// outermost).
std::string dim(const TensorMapDesc &d, unsigned i) { return std::to_string(d.rank - 1 - i); }

} // namespace

bool parseTmaSwizzle(std::string_view t, TmaSwizzle &out) {
  return parseName(t, kSwizzleNames, out);
}
bool parseTmaInterleave(std::string_view t, TmaInterleave &out) {
  return parseName(t, kInterleaveNames, out);
}
bool parseTmaL2Promotion(std::string_view t, TmaL2Promotion &out) {
  return parseName(t, kL2Names, out);
}
bool parseTmaOobFill(std::string_view t, TmaOobFill &out) { return parseName(t, kOobNames, out); }
const char *tmaName(TmaSwizzle s) { return kSwizzleNames[static_cast<unsigned>(s)]; }
const char *tmaName(TmaInterleave s) { return kInterleaveNames[static_cast<unsigned>(s)]; }
const char *tmaName(TmaL2Promotion s) { return kL2Names[static_cast<unsigned>(s)]; }
const char *tmaName(TmaOobFill s) { return kOobNames[static_cast<unsigned>(s)]; }

unsigned swizzleBytes(TmaSwizzle s) {
  switch (s) {
  case TmaSwizzle::B32:
    return 32;
  case TmaSwizzle::B64:
    return 64;
  case TmaSwizzle::B128:
    return 128;
  default:
    return 0;
  }
}

int tensorMapDataType(uint8_t code, unsigned bits) {
  // CUtensorMapDataType: UINT8 0, UINT16 1, UINT32 2, INT32 3, UINT64 4,
  // INT64 5, FLOAT16 6, FLOAT32 7, FLOAT64 8, BFLOAT16 9. TMA copies bits:
  // signed 8- and 16-bit integers travel as their unsigned twins.
  switch (code) {
  case kDLInt:
  case kDLUInt:
    switch (bits) {
    case 8:
      return 0;
    case 16:
      return 1;
    case 32:
      return code == kDLInt ? 3 : 2;
    case 64:
      return code == kDLInt ? 5 : 4;
    }
    return -1;
  case kDLFloat:
    return bits == 16 ? 6 : bits == 32 ? 7 : bits == 64 ? 8 : -1;
  case kDLBfloat:
    return bits == 16 ? 9 : -1;
  case 6: // kDLBool, one byte
    return 0;
  default:
    return -1;
  }
}

uint64_t TensorMapDesc::boxBytes() const {
  uint64_t bytes = elementBytes;
  for (unsigned i = 0; i < rank; ++i)
    bytes *= (box[i] + elementStrides[i] - 1) / (elementStrides[i] ? elementStrides[i] : 1);
  return bytes;
}

std::string checkTensorMapStatic(const TensorMapDesc &d) {
  if (d.rank < 1 || d.rank > kMaxTensorMapRank)
    return "a tensor map has 1 to 5 dimensions, not " + std::to_string(d.rank);
  if (d.interleave != TmaInterleave::None && d.rank < 3)
    return std::string("an interleaved (") + tmaName(d.interleave) +
           ") tensor map has at least 3 dimensions, not " + std::to_string(d.rank);
  if (d.dataType < 0 || d.elementBytes == 0)
    return "TMA has no data type for this dtype";
  for (unsigned i = 0; i < d.rank; ++i) {
    if (d.box[i] < 1 || d.box[i] > 256)
      return "box dimension " + dim(d, i) + " is " + std::to_string(d.box[i]) +
             "; a TMA box has 1 to 256 elements per dimension";
    if (d.elementStrides[i] < 1 || d.elementStrides[i] > 8)
      return "element stride " + dim(d, i) + " is " + std::to_string(d.elementStrides[i]) +
             "; element strides are 1 to 8";
  }
  uint64_t inner = uint64_t(d.box[0]) * d.elementBytes;
  if (d.interleave == TmaInterleave::None && inner % 16 != 0)
    return "the box's innermost dimension is " + std::to_string(inner) +
           " bytes; TMA needs a multiple of 16 (the last box dimension times the element size)";
  if (d.interleave == TmaInterleave::None && d.swizzle != TmaSwizzle::None &&
      inner > swizzleBytes(d.swizzle))
    return "the box's innermost dimension is " + std::to_string(inner) + " bytes, more than the " +
           tmaName(d.swizzle) + " swizzle's span; use a narrower box or a wider swizzle";
  if (d.interleave == TmaInterleave::B32 && d.swizzle != TmaSwizzle::B32)
    return "a 32B-interleaved tensor map needs the 32B swizzle";
  if (d.oobFill == TmaOobFill::Nan && !d.isFloat)
    return "out-of-bounds NaN fill needs a floating-point dtype";
  return std::string();
}

std::string checkTensorMap(const TensorMapDesc &d) {
  std::string why = checkTensorMapStatic(d);
  if (!why.empty())
    return why;
  uint64_t alignment = d.interleave == TmaInterleave::B32 ? 32 : 16;
  if (d.address % alignment != 0)
    return "the buffer's address is not " + std::to_string(alignment) + "-byte aligned";
  for (unsigned i = 0; i < d.rank; ++i)
    if (d.dims[i] < 1 || d.dims[i] > (uint64_t(1) << 32))
      return "dimension " + dim(d, i) + " is " + std::to_string(d.dims[i]) +
             "; tensor map dimensions are 1 to 2^32 (an empty array has no tensor map)";
  for (unsigned i = 1; i < d.rank; ++i) {
    if (d.strides[i] % alignment != 0)
      return "the stride of dimension " + dim(d, i) + " is " + std::to_string(d.strides[i]) +
             " bytes; TMA needs a multiple of " + std::to_string(alignment) +
             " (pad the rows, or use a box over a narrower view)";
    if (d.strides[i] >= (uint64_t(1) << 40))
      return "the stride of dimension " + dim(d, i) + " is " + std::to_string(d.strides[i]) +
             " bytes; TMA strides are below 2^40";
  }
  return std::string();
}

} // namespace pk::rt
