//===- Promotion.h - JAX's dtype promotion rules ----------------*- C++ -*-===//
//
// JAX promotes dtypes along a lattice in which Python scalars are "weak":
// `x * 2` keeps x's dtype, bf16 + f32 is f32, i32 + 1.5 is a weak f32.
// pkc follows JAX with 64-bit mode off for defaults (weak ints become i32,
// weak floats f32, and a 64-bit result that no 64-bit operand asked for is
// narrowed to 32 bits), while honoring dtypes a program spells explicitly.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_PROMOTION_H
#define PK_FRONTEND_ELAB_PROMOTION_H

#include "support/DType.h"

namespace pk::elab {

/// A dtype with JAX's weak-type flag.
struct JaxType {
  DType dtype;
  bool weak = false;

  bool operator==(const JaxType &o) const { return dtype == o.dtype && weak == o.weak; }
};

/// The type of a Python int / float / bool literal.
inline JaxType pythonIntType() { return {DType::I32, true}; }
inline JaxType pythonFloatType() { return {DType::F32, true}; }
inline JaxType pythonBoolType() { return {DType::Bool, false}; }

/// The dtype JAX gives data of dtype `t` with 64-bit mode off
/// (jnp.asarray(np.float64(1)) is float32).
inline DType withoutX64(DType t) {
  return t == DType::I64   ? DType::I32
         : t == DType::U64 ? DType::U32
         : t == DType::F64 ? DType::F32
                           : t;
}

/// jnp.result_type of two operands.
JaxType promoteTypes(JaxType a, JaxType b);

/// The float type integer or bool operands turn into for float-only
/// functions (jnp.exp(int array) is f32; bf16 stays bf16).
JaxType toInexact(JaxType t);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_PROMOTION_H
