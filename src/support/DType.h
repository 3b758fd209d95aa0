//===- DType.h - Element types of .pk arrays --------------------*- C++ -*-===//
#ifndef PK_SUPPORT_DTYPE_H
#define PK_SUPPORT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace pk {

enum class DType : uint8_t {
#define PK_DTYPE(Enum, Short, Numpy, Bits, Kind, Descr) Enum,
#include "support/DTypes.def"
};

enum class DTypeKind : uint8_t { Bool, Signed, Unsigned, Float };

struct DTypeInfo {
  const char *shortName; ///< "f32": the spelling in .pk annotations and IR
  const char *numpyName; ///< "float32": the NumPy / JAX spelling
  unsigned bits;         ///< storage width; bool is 1 (stored as a byte)
  DTypeKind kind;
  const char *npyDescr; ///< the .npy header descr ("<f4")
};

const DTypeInfo &dtypeInfo(DType t);

inline const char *shortName(DType t) { return dtypeInfo(t).shortName; }
inline const char *numpyName(DType t) { return dtypeInfo(t).numpyName; }
inline unsigned bitWidth(DType t) { return dtypeInfo(t).bits; }
/// Bytes one element occupies in memory (bool takes a byte).
inline unsigned byteWidth(DType t) { return t == DType::Bool ? 1 : dtypeInfo(t).bits / 8; }
inline DTypeKind kindOf(DType t) { return dtypeInfo(t).kind; }
inline bool isFloat(DType t) { return kindOf(t) == DTypeKind::Float; }
inline bool isInteger(DType t) {
  return kindOf(t) == DTypeKind::Signed || kindOf(t) == DTypeKind::Unsigned;
}
inline bool isUnsigned(DType t) { return kindOf(t) == DTypeKind::Unsigned; }
inline bool isSignedInteger(DType t) { return kindOf(t) == DTypeKind::Signed; }
inline bool isBool(DType t) { return t == DType::Bool; }

/// Looks a dtype up by its short ("f32") or NumPy ("float32") name.
std::optional<DType> parseDType(std::string_view name);
/// Looks a dtype up by its .npy descr ("<f4").
std::optional<DType> dtypeFromNpyDescr(std::string_view descr);

/// Every dtype, in declaration order.
inline constexpr DType allDTypes[] = {
#define PK_DTYPE(Enum, Short, Numpy, Bits, Kind, Descr) DType::Enum,
#include "support/DTypes.def"
};

} // namespace pk

#endif // PK_SUPPORT_DTYPE_H
