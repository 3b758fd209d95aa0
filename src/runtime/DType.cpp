//===- DType.cpp ----------------------------------------------------------===//
#include "runtime/DType.h"

namespace pk::rt {

namespace {

enum class Kind { Bool, Signed, Unsigned, Float };

constexpr DTypeDesc make(const char *name, unsigned bits, Kind kind) {
  uint8_t code = kind == Kind::Bool       ? kDLBoolCode
                 : kind == Kind::Signed   ? uint8_t(kDLInt)
                 : kind == Kind::Unsigned ? uint8_t(kDLUInt)
                 // bfloat16 is the one float DLPack gives a code of its own.
                 : name[0] == 'b' ? uint8_t(kDLBfloat)
                                  : uint8_t(kDLFloat);
  unsigned storageBits = kind == Kind::Bool ? 8 : bits;
  return {name, DLDataType{code, uint8_t(storageBits), 1}, storageBits / 8};
}

constexpr DTypeDesc kDTypes[] = {
#define PK_DTYPE(Enum, Short, Numpy, Bits, DKind, Descr) make(Numpy, Bits, Kind::DKind),
#include "support/DTypes.def"
};

} // namespace

const DTypeDesc *dtypeByName(std::string_view name) {
  for (const DTypeDesc &d : kDTypes)
    if (name == d.name)
      return &d;
  return nullptr;
}

std::string dtypeNames() {
  std::string out;
  for (const DTypeDesc &d : kDTypes)
    out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

std::string describe(DLDataType type) {
  for (const DTypeDesc &d : kDTypes)
    if (d.dl.code == type.code && d.dl.bits == type.bits) {
      if (type.lanes == 1)
        return d.name;
      return d.name + std::string("x") + std::to_string(type.lanes);
    }
  return "DLDataType(code=" + std::to_string(type.code) + ", bits=" + std::to_string(type.bits) +
         ", lanes=" + std::to_string(type.lanes) + ")";
}

} // namespace pk::rt
