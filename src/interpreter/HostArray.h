//===- HostArray.h - A typed n-d array in host memory -----------*- C++ -*-===//
//
// What goes in and out of the reference interpreter (and `pkc run`): a
// dense row-major array of one of the .pk dtypes, stored as the dtype's
// own bytes, as in a .npy file.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_HOSTARRAY_H
#define PK_INTERPRETER_HOSTARRAY_H

#include "support/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pk {

class HostArray {
public:
  HostArray() = default;
  HostArray(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return type; }
  const std::vector<int64_t> &shape() const { return dims; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t size() const { return count; }
  unsigned elementBytes() const { return byteWidth(type); }

  uint8_t *data() { return bytes.data(); }
  const uint8_t *data() const { return bytes.data(); }
  size_t byteSize() const { return bytes.size(); }

  /// Element `i` (row-major) as a double (floats, and integers exactly up
  /// to 2^53) or as an integer (bool as 0/1; floats truncate).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// Stores a value, rounding or wrapping it to the dtype.
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  /// "float32[4, 8]"
  std::string describe() const;

private:
  DType type = DType::F32;
  std::vector<int64_t> dims;
  int64_t count = 0;
  std::vector<uint8_t> bytes;
};

/// Rounds a double to the nearest value of a float dtype (round to nearest
/// even, with overflow to infinity), returned as a double.
double roundToFloatType(double value, DType dtype);
/// The 16-bit patterns of half and bfloat16 values.
uint16_t toHalfBits(double value);
double fromHalfBits(uint16_t bits);
uint16_t toBFloat16Bits(double value);
double fromBFloat16Bits(uint16_t bits);

} // namespace pk

#endif // PK_INTERPRETER_HOSTARRAY_H
