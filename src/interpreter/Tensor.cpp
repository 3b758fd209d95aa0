//===- Tensor.cpp ---------------------------------------------------------===//
#include "interpreter/Tensor.h"

#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace pk::interp {

ElementKind elementKindOf(mlir::Type type) {
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
    type = tensor.getElementType();
  ElementKind kind;
  if (type.isIndex()) {
    kind.width = 64;
    return kind;
  }
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(type)) {
    kind.width = integer.getWidth();
    return kind;
  }
  kind.isFloat = true;
  kind.width = type.getIntOrFloatBitWidth();
  kind.floatType = type.isF64() ? DType::F64 : type.isBF16() ? DType::BF16 : type.isF16() ? DType::F16 : DType::F32;
  return kind;
}

ElementKind elementKindOf(DType dtype) {
  ElementKind kind;
  kind.isFloat = isFloat(dtype);
  kind.width = bitWidth(dtype);
  if (kind.isFloat)
    kind.floatType = dtype;
  return kind;
}

Tensor::Tensor(ElementKind element, std::vector<int64_t> shape)
    : element(element), shape(std::move(shape)) {
  int64_t n = 1;
  for (int64_t d : this->shape)
    n *= d;
  if (element.isFloat)
    f.assign(static_cast<size_t>(n), 0.0);
  else
    i.assign(static_cast<size_t>(n), 0);
}

namespace {

/// Bits of a float value of the given kind, for bitcasts.
uint64_t floatToBits(double v, const ElementKind &kind) {
  switch (kind.floatType) {
  case DType::F16:
    return toHalfBits(v);
  case DType::BF16:
    return toBFloat16Bits(v);
  case DType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  }
  default: {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  }
}

double bitsToFloat(uint64_t bits, const ElementKind &kind) {
  switch (kind.floatType) {
  case DType::F16:
    return fromHalfBits(static_cast<uint16_t>(bits));
  case DType::BF16:
    return fromBFloat16Bits(static_cast<uint16_t>(bits));
  case DType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  default: {
    uint32_t b32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b32, 4);
    return f;
  }
  }
}

} // namespace

uint64_t elementBits(const Tensor &t, int64_t k) {
  return t.element.isFloat ? floatToBits(t.f[k], t.element) : asUnsigned(t.i[k], t.element.width);
}

void setElementBits(Tensor &t, int64_t k, uint64_t bits) {
  if (t.element.isFloat)
    t.f[k] = bitsToFloat(bits, t.element);
  else
    t.i[k] = wrapInt(static_cast<int64_t>(bits), t.element.width);
}

double roundFloat(double v, const ElementKind &kind) {
  return roundToFloatType(v, kind.floatType);
}

TensorPtr tensorFromHost(const HostArray &array) {
  TensorPtr t = makeTensor(elementKindOf(array.dtype()), array.shape());
  if (t->element.isFloat)
    for (int64_t k = 0; k < array.size(); ++k)
      t->f[k] = array.getDouble(k);
  else
    for (int64_t k = 0; k < array.size(); ++k)
      t->i[k] = wrapInt(array.getInt(k), t->element.width);
  return t;
}

void storeToHost(const Tensor &tensor, HostArray &array) {
  if (tensor.element.isFloat)
    for (int64_t k = 0; k < array.size(); ++k)
      array.setDouble(k, tensor.f[k]);
  else
    for (int64_t k = 0; k < array.size(); ++k)
      array.setInt(k, tensor.i[k]);
}

void fillUninitialized(Tensor &tensor, DType dtype) {
  if (tensor.element.isFloat) {
    std::fill(tensor.f.begin(), tensor.f.end(), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  int64_t value = 0;
  if (isSignedInteger(dtype))
    value = wrapInt(static_cast<int64_t>(uint64_t(1) << (bitWidth(dtype) - 1)), bitWidth(dtype));
  std::fill(tensor.i.begin(), tensor.i.end(), value);
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

} // namespace pk::interp
