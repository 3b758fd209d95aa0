//===- DType.h - Manifest dtypes as DLPack data types -----------*- C++ -*-===//
//
// The manifest names dtypes as NumPy does ("float32"); callers pass DLPack
// tensors. This table maps one to the other, expanded from the compiler's
// own dtype list (src/support/DTypes.def) so the two can never disagree.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_DTYPE_H
#define PK_RUNTIME_DTYPE_H

#include <dlpack/dlpack.h>

#include <string>
#include <string_view>

namespace pk::rt {

/// DLPack's code for bool (added in DLPack 0.8; older headers lack it).
constexpr uint8_t kDLBoolCode = 6;

struct DTypeDesc {
  const char *name; ///< "float32"
  DLDataType dl;    ///< {kDLFloat, 32, 1}
  unsigned bytes;   ///< bytes per element in memory (bool takes one)
};

/// The dtype with this NumPy name, or null.
const DTypeDesc *dtypeByName(std::string_view name);
/// Every dtype's name, comma-separated: for error messages.
std::string dtypeNames();
/// A DLPack data type as a reader would say it: "float32", or
/// "float16x4", or "DLDataType(code=9, bits=8, lanes=1)".
std::string describe(DLDataType type);

inline bool operator==(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

} // namespace pk::rt

#endif // PK_RUNTIME_DTYPE_H
