//===- Tensor.h - The interpreter's values ----------------------*- C++ -*-===//
//
// Inside the interpreter every value is a Tensor held wide: floats as
// doubles rounded to their type after each operation (so an f32 add gives
// exactly the f32 result), integers as int64 holding the sign-extended bits
// of their width (signless, as in arith; unsigned operations zero-extend
// when they read). Scalars are rank-0 tensors.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_TENSOR_H
#define PK_INTERPRETER_TENSOR_H

#include "interpreter/HostArray.h"

#include "mlir/IR/Types.h"

#include <memory>
#include <vector>

namespace pk::interp {

/// The element type of a value, as the interpreter computes with it.
struct ElementKind {
  bool isFloat = false;
  unsigned width = 32;       ///< bits; 1 for i1, 64 for index
  DType floatType = DType::F32; ///< for floats: F16, BF16, F32 or F64

  bool operator==(const ElementKind &o) const {
    return isFloat == o.isFloat && width == o.width && (!isFloat || floatType == o.floatType);
  }
};

/// The element kind of a scalar or tensor MLIR type.
ElementKind elementKindOf(mlir::Type type);
ElementKind elementKindOf(DType dtype);

class UnionMemory;

struct Tensor {
  ElementKind element;
  std::vector<int64_t> shape;
  std::vector<double> f;  ///< float elements
  std::vector<int64_t> i; ///< integer elements
  /// The elements of a Ref of a plgpu.RefUnion: the union that keeps them
  /// coherent with its other Refs (UnionMemory.h), and which Ref it is.
  std::weak_ptr<UnionMemory> unionMemory;
  int64_t unionMember = -1;
  /// The buffer of a plgpu.RefUnion: its Refs' memory, once one is made.
  std::shared_ptr<UnionMemory> unionRefs;

  Tensor(ElementKind element, std::vector<int64_t> shape);
  int64_t size() const { return static_cast<int64_t>(element.isFloat ? f.size() : i.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

using TensorPtr = std::shared_ptr<Tensor>;

inline TensorPtr makeTensor(ElementKind element, std::vector<int64_t> shape) {
  return std::make_shared<Tensor>(element, std::move(shape));
}

/// The sign-extended low `width` bits of `v` (0/1 for width 1).
inline int64_t wrapInt(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  if (width == 1)
    return v & 1;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = static_cast<uint64_t>(v) & mask;
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

/// The zero-extended low `width` bits of `v`.
inline uint64_t asUnsigned(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << width) - 1);
}

/// The bits of element `k` of `t` (its width's worth, zero-extended), and
/// the element those bits make: what bitcasts move.
uint64_t elementBits(const Tensor &t, int64_t k);
void setElementBits(Tensor &t, int64_t k, uint64_t bits);

/// Rounds a double to the float type of `kind`.
double roundFloat(double v, const ElementKind &kind);

/// Converts between the host representation and tensors.
TensorPtr tensorFromHost(const HostArray &array);
void storeToHost(const Tensor &tensor, HostArray &array);

/// What a buffer holds before anything writes it, as in Pallas interpret
/// mode: NaN for floats, the minimum for integers, false for bools.
void fillUninitialized(Tensor &tensor, DType dtype);

/// Row-major strides of a shape.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

} // namespace pk::interp

#endif // PK_INTERPRETER_TENSOR_H
