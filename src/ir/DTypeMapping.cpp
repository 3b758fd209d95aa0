//===- DTypeMapping.cpp ---------------------------------------------------===//
#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinTypes.h"

namespace pk {

mlir::Type storageType(mlir::MLIRContext *context, DType dtype) {
  switch (kindOf(dtype)) {
  case DTypeKind::Bool:
    return mlir::IntegerType::get(context, 1);
  case DTypeKind::Signed:
    return mlir::IntegerType::get(context, bitWidth(dtype));
  case DTypeKind::Unsigned:
    return mlir::IntegerType::get(context, bitWidth(dtype), mlir::IntegerType::Unsigned);
  case DTypeKind::Float:
    break;
  }
  switch (dtype) {
  case DType::F16:
    return mlir::Float16Type::get(context);
  case DType::BF16:
    return mlir::BFloat16Type::get(context);
  case DType::F64:
    return mlir::Float64Type::get(context);
  default:
    return mlir::Float32Type::get(context);
  }
}

mlir::Type signlessType(mlir::MLIRContext *context, DType dtype) {
  if (isUnsigned(dtype))
    return mlir::IntegerType::get(context, bitWidth(dtype));
  return storageType(context, dtype);
}

std::optional<DType> dtypeOf(mlir::Type type) {
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1)
      return DType::Bool;
    bool isUnsignedType = integer.isUnsigned();
    switch (width) {
    case 8:
      return isUnsignedType ? DType::U8 : DType::I8;
    case 16:
      return isUnsignedType ? DType::U16 : DType::I16;
    case 32:
      return isUnsignedType ? DType::U32 : DType::I32;
    case 64:
      return isUnsignedType ? DType::U64 : DType::I64;
    default:
      return std::nullopt;
    }
  }
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  return std::nullopt;
}

} // namespace pk
