//===- ArrayOps.h - Block-value operations with JAX semantics ---*- C++ -*-===//
//
// Everything the elaborator does to block values goes through ArrayOps: it
// applies JAX's promotion and NumPy's broadcasting, checks shapes and axes
// (failing at the user's line), and emits the pk / arith / math ops.
// Python scalars and symbolic sizes are accepted wherever a value is, as
// weakly typed rank-0 values.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_ARRAYOPS_H
#define PK_FRONTEND_ELAB_ARRAYOPS_H

#include "frontend/ast/AST.h"
#include "frontend/elab/Object.h"
#include "frontend/elab/Promotion.h"

#include "llvm/ADT/DenseMap.h"

namespace pk::elab {

class Elaborator;
using ArrayPtr = std::shared_ptr<ArrayObj>;

/// The number of elements of an array of this (static) shape.
int64_t elementCount(const std::vector<int64_t> &shape);

enum class FloatUnary {
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference) Enum,
#include "ir/ElementwiseMath.def"
};

enum class Rounding { Floor, Ceil, Trunc, RoundEven };

/// Reductions of jnp.sum / max / min / prod / any / all.
enum class Reduction { Sum, Prod, Max, Min, Any, All };

class ArrayOps {
public:
  explicit ArrayOps(Elaborator &el) : el(el) {}

  /// True for values ArrayOps can compute with: arrays, Python numbers and
  /// bools, and symbolic sizes.
  static bool isNumeric(const Obj &o);
  /// True for the static Python numbers (int, float, bool).
  static bool isStaticNumber(const Obj &o);
  JaxType typeOf(const Obj &o, SourceRange r);

  //===--------------------------------------------------------------------===//
  // Making values
  //===--------------------------------------------------------------------===//

  /// A value as an ArrayObj: Python numbers become rank-0 constants of
  /// `as` (or their weak type), symbolic sizes become pk.symbolic_size.
  ArrayPtr toArray(const Obj &o, SourceRange r, std::optional<JaxType> as = std::nullopt);
  ArrayPtr wrap(mlir::Value value, std::vector<int64_t> shape, DType dtype, bool weak = false);
  ArrayPtr constant(double value, DType dtype, const std::vector<int64_t> &shape,
                    SourceRange r, bool weak = false);
  ArrayPtr constantInt(int64_t value, DType dtype, const std::vector<int64_t> &shape,
                       SourceRange r, bool weak = false);
  ArrayPtr full(const std::vector<int64_t> &shape, const Obj &value, std::optional<DType> dtype,
                SourceRange r);
  ArrayPtr iota(const std::vector<int64_t> &shape, int64_t dimension, DType dtype, SourceRange r);
  ArrayPtr arange(const Obj &start, const Obj &stop, const Obj &step, std::optional<DType> dtype,
                  SourceRange r);

  //===--------------------------------------------------------------------===//
  // Types and shapes
  //===--------------------------------------------------------------------===//

  ArrayPtr cast(const ArrayPtr &a, DType dtype, SourceRange r, bool weak = false);
  /// Casts to `t` (a no-op when equal); keeps t's weakness.
  ArrayPtr castTo(const ArrayPtr &a, JaxType t, SourceRange r);
  ArrayPtr bitcast(const ArrayPtr &a, DType dtype, SourceRange r);
  std::vector<int64_t> broadcastShapes(const std::vector<int64_t> &a,
                                       const std::vector<int64_t> &b, SourceRange r);
  ArrayPtr broadcastTo(const ArrayPtr &a, const std::vector<int64_t> &shape, SourceRange r);
  ArrayPtr reshape(const ArrayPtr &a, std::vector<int64_t> shape, SourceRange r);
  ArrayPtr transpose(const ArrayPtr &a, const std::vector<int64_t> &permutation, SourceRange r);
  ArrayPtr expandDims(const ArrayPtr &a, const std::vector<int64_t> &axes, SourceRange r);
  ArrayPtr squeeze(const ArrayPtr &a, const std::vector<int64_t> &axes, SourceRange r);
  ArrayPtr slice(const ArrayPtr &a, const std::vector<int64_t> &start,
                 const std::vector<int64_t> &limit, const std::vector<int64_t> &stride,
                 SourceRange r);
  ArrayPtr concatenate(const std::vector<Obj> &values, int64_t axis, SourceRange r);
  /// Element i along `axis` takes element i ^ distance (pk.butterfly; a
  /// power-of-two distance dividing the axis in pairs of runs).
  ArrayPtr butterfly(const ArrayPtr &a, int64_t axis, int64_t distance, SourceRange r);

  //===--------------------------------------------------------------------===//
  // Element-wise
  //===--------------------------------------------------------------------===//

  Obj binary(ast::BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
  Obj compare(ast::CompareOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
  Obj negate(const Obj &x, SourceRange r);
  Obj invert(const Obj &x, SourceRange r);
  Obj logicalNot(const Obj &x, SourceRange r);
  Obj floatUnary(FloatUnary fn, const Obj &x, SourceRange r);
  Obj round(Rounding mode, const Obj &x, SourceRange r);
  Obj abs(const Obj &x, SourceRange r);
  /// lax.population_count / lax.clz: set bits, leading zero bits of each
  /// integer element at its dtype's width (same dtype).
  Obj bitCount(const Obj &x, bool leadingZeros, SourceRange r);
  Obj sign(const Obj &x, SourceRange r);
  Obj maximum(const Obj &a, const Obj &b, SourceRange r);
  Obj minimum(const Obj &a, const Obj &b, SourceRange r);
  Obj power(const Obj &a, const Obj &b, SourceRange r);
  Obj arctan2(const Obj &a, const Obj &b, SourceRange r);
  Obj where(const Obj &condition, const Obj &x, const Obj &y, SourceRange r);
  /// Python's negative indices counted from the end: i + n where i < 0.
  Obj wrapNegativeIndex(const Obj &indices, int64_t n, SourceRange r);
  Obj logical(ast::BinaryOp op, const Obj &a, const Obj &b, SourceRange r); // and/or/xor
  Obj isNan(const Obj &x, SourceRange r);
  Obj isInf(const Obj &x, SourceRange r);
  Obj isFinite(const Obj &x, SourceRange r);

  //===--------------------------------------------------------------------===//
  // Reductions and contractions
  //===--------------------------------------------------------------------===//

  /// `axes` already normalized; empty means all axes.
  Obj reduce(Reduction kind, const Obj &x, std::vector<int64_t> axes, bool keepDims,
             SourceRange r);
  /// lax.reduce_and / reduce_or / reduce_xor: bitwise, in x's dtype;
  /// `axes` normalized, empty meaning none (as lax has it).
  Obj reduceBitwise(pk::ReductionKind kind, const Obj &x, std::vector<int64_t> axes, SourceRange r);
  Obj mean(const Obj &x, std::vector<int64_t> axes, bool keepDims, SourceRange r);
  Obj argReduce(bool isMax, const Obj &x, std::optional<int64_t> axis, bool keepDims,
                SourceRange r);
  /// `allowTf32`: f32 operands may be multiplied as TF32 (pk.dot's
  /// allow_tf32); ignored for other types.
  Obj dot(const Obj &a, const Obj &b, bool transposeA, bool transposeB,
          std::optional<DType> preferred, bool allowTf32, SourceRange r);

  /// Promotes operands to their JAX result type and broadcasts them.
  std::vector<ArrayPtr> promoteAndBroadcast(const std::vector<Obj> &operands, SourceRange r,
                                            JaxType *resultType = nullptr);

  mlir::Type valueType(const std::vector<int64_t> &shape, DType dtype);

  /// Where the reshapes that expandDims and squeeze made put each axis of
  /// their operand (-1: squeezed away). On blocks where a symbolic axis is
  /// traced at size 1, `x[None]` of an `[N]` array is a reshape of [1] to
  /// [1, 1], whose shapes alone do not say which axis is N's
  /// (ParallelAxes). Cleared by whoever reads it before a trace.
  llvm::DenseMap<mlir::Operation *, std::vector<int64_t>> unitAxisReshapes;

private:
  mlir::Value emitBinary(ast::BinaryOp op, const ArrayPtr &a, const ArrayPtr &b, DType dtype,
                         SourceRange r);
  ArrayPtr floorDivide(const ArrayPtr &a, const ArrayPtr &b, DType dtype, SourceRange r);
  ArrayPtr remainder(const ArrayPtr &a, const ArrayPtr &b, DType dtype, SourceRange r);
  ArrayPtr integerPower(const ArrayPtr &a, int64_t exponent, SourceRange r);
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y, SourceRange r);
  Obj extremum(bool isMax, const Obj &a, const Obj &b, SourceRange r);
  /// Records in unitAxisReshapes where `result`'s reshape (if one was
  /// made) put `operand`'s axes.
  ArrayPtr recordUnitAxes(const ArrayPtr &operand, const ArrayPtr &result,
                          std::vector<int64_t> placed);

  Elaborator &el;
};

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_ARRAYOPS_H
