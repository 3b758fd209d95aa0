//===- DType.cpp ----------------------------------------------------------===//
#include "support/DType.h"

namespace pk {

static const DTypeInfo infos[] = {
#define PK_DTYPE(Enum, Short, Numpy, Bits, Kind, Descr)                          \
  {Short, Numpy, Bits, DTypeKind::Kind, Descr},
#include "support/DTypes.def"
};

const DTypeInfo &dtypeInfo(DType t) { return infos[static_cast<unsigned>(t)]; }

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : allDTypes)
    if (name == dtypeInfo(t).shortName || name == dtypeInfo(t).numpyName)
      return t;
  if (name == "bool_")
    return DType::Bool;
  return std::nullopt;
}

std::optional<DType> dtypeFromNpyDescr(std::string_view descr) {
  // '=' and '|' mean native / not applicable; this machine is little-endian.
  if (descr.size() >= 2 && (descr[0] == '=' || descr[0] == '|' || descr[0] == '<')) {
    std::string_view body = descr.substr(1);
    for (DType t : allDTypes)
      if (std::string_view(dtypeInfo(t).npyDescr).substr(1) == body)
        return t;
  }
  return std::nullopt;
}

} // namespace pk
