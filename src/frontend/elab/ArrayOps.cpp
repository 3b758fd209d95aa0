//===- ArrayOps.cpp - Block-value operations with JAX semantics -----------===//
#include "frontend/elab/ArrayOps.h"
#include "frontend/elab/StaticArray.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "ir/DTypeMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace pk::elab {

using ast::BinaryOp;
using ast::CompareOp;

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

bool fitsIn(int64_t value, DType dtype) {
  switch (dtype) {
  case DType::I8: return value >= INT8_MIN && value <= INT8_MAX;
  case DType::I16: return value >= INT16_MIN && value <= INT16_MAX;
  case DType::I32: return value >= INT32_MIN && value <= INT32_MAX;
  case DType::U8: return value >= 0 && value <= UINT8_MAX;
  case DType::U16: return value >= 0 && value <= UINT16_MAX;
  case DType::U32: return value >= 0 && value <= UINT32_MAX;
  case DType::U64: return value >= 0;
  default: return true;
  }
}

} // namespace

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Values and types
//===----------------------------------------------------------------------===//

bool ArrayOps::isStaticNumber(const Obj &o) {
  return llvm::isa<IntObj, FloatObj, BoolObj>(o.get());
}

bool ArrayOps::isNumeric(const Obj &o) {
  return isStaticNumber(o) || llvm::isa<ArrayObj, SymIntObj>(o.get());
}

namespace {

/// Fails: `o` is used where a block value or number is needed.
[[noreturn]] void notAValue(Elaborator &el, const Obj &o, SourceRange r) {
  el.checkNotOpaque(o, r);
  if (auto *m = llvm::dyn_cast<StaticArrayObj>(o.get()))
    static_numpy::failValue(el, *m, r);
  if (auto *g = llvm::dyn_cast<GlobalArrayObj>(o.get())) {
    if (el.inKernelCode())
      el.failCapturedArray(*g, r);
    el.fail(r, "'" + g->name + "' is a whole array (" + std::string(shortName(g->dtype)) + "[" +
                   el.describeDims(g->shape) + "]) where a block value or a number is needed");
  }
  el.fail(r, "expected a block value or a number, got " + typeName(*o) + " (" + repr(*o) + ")");
}

} // namespace

JaxType ArrayOps::typeOf(const Obj &o, SourceRange r) {
  if (auto *a = llvm::dyn_cast<ArrayObj>(o.get()))
    return {a->dtype, a->weak};
  if (std::optional<DType> t = numpyScalarType(*o))
    return {withoutX64(*t), false};
  if (llvm::isa<IntObj, SymIntObj>(o.get()))
    return pythonIntType();
  if (llvm::isa<FloatObj>(o.get()))
    return pythonFloatType();
  if (llvm::isa<BoolObj>(o.get()))
    return pythonBoolType();
  if (llvm::isa<RefObj>(o.get()))
    el.fail(r, "a Ref is not a value: read it first, e.g. x_ref[...]");
  notAValue(el, o, r);
}


mlir::Type ArrayOps::valueType(const std::vector<int64_t> &shape, DType dtype) {
  mlir::Type element = signlessType(&el.context(), dtype);
  if (shape.empty())
    return element;
  return RankedTensorType::get(shape, element);
}

ArrayPtr ArrayOps::wrap(mlir::Value value, std::vector<int64_t> shape, DType dtype, bool weak) {
  return std::make_shared<ArrayObj>(value, std::move(shape), dtype, weak);
}

ArrayPtr ArrayOps::constant(double value, DType dtype, const std::vector<int64_t> &shape,
                            SourceRange r, bool weak) {
  if (!isFloat(dtype)) {
    if (std::isnan(value) || std::isinf(value))
      el.fail(r, "cannot convert " + std::string(std::isnan(value) ? "NaN" : "infinity") +
                     " to " + numpyName(dtype));
    return constantInt(static_cast<int64_t>(value), dtype, shape, r, weak);
  }
  el.requireKernel(r, "array constants");
  OpBuilder &b = el.builder();
  mlir::Type element = signlessType(&el.context(), dtype);
  TypedAttr attr = b.getFloatAttr(element, value);
  mlir::Type type = valueType(shape, dtype);
  if (!shape.empty())
    attr = DenseElementsAttr::get(llvm::cast<ShapedType>(type), attr);
  return wrap(arith::ConstantOp::create(b, el.loc(r), type, attr), shape, dtype, weak);
}

ArrayPtr ArrayOps::constantInt(int64_t value, DType dtype, const std::vector<int64_t> &shape,
                               SourceRange r, bool weak) {
  if (isFloat(dtype))
    return constant(static_cast<double>(value), dtype, shape, r, weak);
  el.requireKernel(r, "array constants");
  if (dtype == DType::Bool)
    value = value != 0;
  else if (!fitsIn(value, dtype))
    el.fail(r, "Python int " + std::to_string(value) + " is too large to convert to " +
                   numpyName(dtype));
  OpBuilder &b = el.builder();
  mlir::Type element = signlessType(&el.context(), dtype);
  TypedAttr attr = b.getIntegerAttr(element, value);
  mlir::Type type = valueType(shape, dtype);
  if (!shape.empty())
    attr = DenseElementsAttr::get(llvm::cast<ShapedType>(type), attr);
  return wrap(arith::ConstantOp::create(b, el.loc(r), type, attr), shape, dtype, weak);
}

ArrayPtr ArrayOps::toArray(const Obj &o, SourceRange r, std::optional<JaxType> as) {
  if (auto array = std::dynamic_pointer_cast<ArrayObj>(o))
    return as ? castTo(array, *as, r) : array;
  JaxType natural = typeOf(o, r);
  JaxType target = as ? *as : natural;
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    return constantInt(i->value, target.dtype, {}, r, target.weak);
  if (auto *f = llvm::dyn_cast<FloatObj>(o.get())) {
    if (!isFloat(target.dtype) && target.dtype != DType::Bool)
      return constantInt(static_cast<int64_t>(f->value), target.dtype, {}, r, target.weak);
    if (target.dtype == DType::Bool)
      return constantInt(f->value != 0.0, target.dtype, {}, r, target.weak);
    return constant(f->value, target.dtype, {}, r, target.weak);
  }
  if (auto *bo = llvm::dyn_cast<BoolObj>(o.get()))
    return constantInt(bo->value ? 1 : 0, target.dtype, {}, r, target.weak);
  if (auto *s = llvm::dyn_cast<SymIntObj>(o.get())) {
    ArrayPtr value = wrap(el.materializeSymbolic(s->expr, r), {}, DType::I32, /*weak=*/true);
    return castTo(value, target, r);
  }
  notAValue(el, o, r);
}

ArrayPtr ArrayOps::castTo(const ArrayPtr &a, JaxType t, SourceRange r) {
  if (a->dtype == t.dtype)
    return a->weak == t.weak ? a : wrap(a->value, a->shape, a->dtype, t.weak);
  return cast(a, t.dtype, r, t.weak);
}

ArrayPtr ArrayOps::cast(const ArrayPtr &a, DType to, SourceRange r, bool weak) {
  DType from = a->dtype;
  if (from == to)
    return wrap(a->value, a->shape, to, weak);
  el.requireKernel(r, "casts");
  OpBuilder &b = el.builder();
  Location loc = el.loc(r);
  mlir::Type type = valueType(a->shape, to);
  mlir::Value v = a->value;
  mlir::Value result;
  if (to == DType::Bool) {
    ArrayPtr zero = isFloat(from) ? constant(0.0, from, a->shape, r)
                                  : constantInt(0, from, a->shape, r);
    if (isFloat(from))
      result = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero->value);
    else
      result = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero->value);
  } else if (isFloat(from) && isFloat(to)) {
    unsigned fromBits = bitWidth(from), toBits = bitWidth(to);
    if (fromBits == toBits) {
      // f16 <-> bf16 goes through f32, which holds both exactly.
      mlir::Value wide = arith::ExtFOp::create(b, loc, valueType(a->shape, DType::F32), v);
      result = arith::TruncFOp::create(b, loc, type, wide);
    } else if (fromBits < toBits) {
      result = arith::ExtFOp::create(b, loc, type, v);
    } else {
      result = arith::TruncFOp::create(b, loc, type, v);
    }
  } else if (isFloat(to)) {
    // XLA converts integers to bf16 / f16 through f32, so a large int rounds
    // twice (2^24 + 2^16 + 1 becomes 2^24 in bf16, not 2^24 + 2^17).
    bool viaF32 = to == DType::BF16 || to == DType::F16;
    mlir::Type target = viaF32 ? valueType(a->shape, DType::F32) : type;
    if (from == DType::Bool || isUnsigned(from))
      result = arith::UIToFPOp::create(b, loc, target, v);
    else
      result = arith::SIToFPOp::create(b, loc, target, v);
    if (viaF32)
      result = arith::TruncFOp::create(b, loc, type, result);
  } else if (isFloat(from)) {
    if (isUnsigned(to))
      result = arith::FPToUIOp::create(b, loc, type, v);
    else
      result = arith::FPToSIOp::create(b, loc, type, v);
  } else {
    unsigned fromBits = bitWidth(from), toBits = bitWidth(to);
    if (fromBits == toBits)
      result = v; // signedness lives in the ops, not the value
    else if (fromBits > toBits)
      result = arith::TruncIOp::create(b, loc, type, v);
    else if (from == DType::Bool || isUnsigned(from))
      result = arith::ExtUIOp::create(b, loc, type, v);
    else
      result = arith::ExtSIOp::create(b, loc, type, v);
  }
  return wrap(result, a->shape, to, weak);
}

ArrayPtr ArrayOps::bitcast(const ArrayPtr &a, DType to, SourceRange r) {
  if (bitWidth(a->dtype) != bitWidth(to) || a->dtype == DType::Bool || to == DType::Bool)
    el.fail(r, std::string("bitcast needs types of the same width: ") + numpyName(a->dtype) +
                   " is " + std::to_string(bitWidth(a->dtype)) + " bits, " + numpyName(to) +
                   " is " + std::to_string(bitWidth(to)));
  if (signlessType(&el.context(), a->dtype) == signlessType(&el.context(), to))
    return wrap(a->value, a->shape, to);
  mlir::Value v = arith::BitcastOp::create(el.builder(), el.loc(r), valueType(a->shape, to),
                                           a->value);
  return wrap(v, a->shape, to);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::vector<int64_t> ArrayOps::broadcastShapes(const std::vector<int64_t> &a,
                                               const std::vector<int64_t> &b, SourceRange r) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      el.fail(r, "incompatible shapes for broadcasting: " + shapeString(a) + " and " +
                     shapeString(b));
    result[i] = da == 1 ? db : da;
  }
  return result;
}

ArrayPtr ArrayOps::broadcastTo(const ArrayPtr &a, const std::vector<int64_t> &shape,
                               SourceRange r) {
  if (a->shape == shape)
    return a;
  size_t rank = shape.size();
  if (a->shape.size() > rank)
    el.fail(r, "cannot broadcast a value of shape " + shapeString(a->shape) + " to the smaller rank " +
                   shapeString(shape));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < a->shape.size(); ++i) {
    size_t d = rank - a->shape.size() + i;
    if (a->shape[i] != 1 && a->shape[i] != shape[d])
      el.fail(r, "cannot broadcast shape " + shapeString(a->shape) + " to " + shapeString(shape));
    dims.push_back(static_cast<int64_t>(d));
  }
  el.requireKernel(r, "broadcasting");
  mlir::Value v = pk::BroadcastInDimOp::create(el.builder(), el.loc(r), valueType(shape, a->dtype),
                                              a->value, dims);
  return wrap(v, shape, a->dtype, a->weak);
}

ArrayPtr ArrayOps::reshape(const ArrayPtr &a, std::vector<int64_t> shape, SourceRange r) {
  int64_t count = elementCount(a->shape);
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0)
        el.fail(r, "can only specify one unknown dimension (-1) in a reshape");
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] <= 0) {
      el.fail(r, "reshape dimensions must be positive, got " + shapeString(shape));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      el.fail(r, "cannot reshape array of shape " + shapeString(a->shape) + " (" +
                     std::to_string(count) + " elements) into shape " + shapeString(shape) +
                     " (more than 2**63 elements)");
    }
  }
  if (inferred >= 0) {
    if (count % known)
      el.fail(r, "cannot reshape array of shape " + shapeString(a->shape) + " into shape " +
                     shapeString(shape));
    shape[inferred] = count / known;
  }
  if (elementCount(shape) != count)
    el.fail(r, "cannot reshape array of shape " + shapeString(a->shape) + " (" +
                   std::to_string(count) + " elements) into shape " + shapeString(shape) + " (" +
                   std::to_string(elementCount(shape)) + " elements)");
  if (shape == a->shape)
    return a;
  mlir::Value v = pk::ReshapeOp::create(el.builder(), el.loc(r), valueType(shape, a->dtype), a->value);
  return wrap(v, shape, a->dtype, a->weak);
}

ArrayPtr ArrayOps::transpose(const ArrayPtr &a, const std::vector<int64_t> &perm, SourceRange r) {
  if (perm.size() != a->shape.size())
    el.fail(r, "transpose permutation " + shapeString(perm) + " does not match an array of rank " +
                   std::to_string(a->shape.size()));
  std::vector<int64_t> shape;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      el.fail(r, "transpose axes " + shapeString(perm) + " are not a permutation");
    seen[p] = true;
    shape.push_back(a->shape[p]);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  if (identity)
    return a;
  mlir::Value v = pk::TransposeOp::create(el.builder(), el.loc(r), valueType(shape, a->dtype),
                                          a->value, perm);
  return wrap(v, shape, a->dtype, a->weak);
}

ArrayPtr ArrayOps::expandDims(const ArrayPtr &a, const std::vector<int64_t> &axes,
                              SourceRange r) {
  std::vector<int64_t> shape = a->shape;
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t axis : sorted)
    shape.insert(shape.begin() + axis, 1);
  std::vector<int64_t> placed;
  for (int64_t out = 0; out < static_cast<int64_t>(shape.size()); ++out)
    if (!std::binary_search(sorted.begin(), sorted.end(), out))
      placed.push_back(out);
  return recordUnitAxes(a, reshape(a, shape, r), std::move(placed));
}

ArrayPtr ArrayOps::recordUnitAxes(const ArrayPtr &operand, const ArrayPtr &result,
                                  std::vector<int64_t> placed) {
  if (result != operand)
    if (auto op = result->value.getDefiningOp<pk::ReshapeOp>())
      unitAxisReshapes[op] = std::move(placed);
  return result;
}

ArrayPtr ArrayOps::squeeze(const ArrayPtr &a, const std::vector<int64_t> &axes, SourceRange r) {
  std::vector<int64_t> shape, placed;
  for (int64_t i = 0; i < a->rank(); ++i) {
    bool drop = axes.empty() ? a->shape[i] == 1
                             : std::find(axes.begin(), axes.end(), i) != axes.end();
    if (drop && a->shape[i] != 1)
      el.fail(r, "cannot squeeze axis " + std::to_string(i) + " of size " +
                     std::to_string(a->shape[i]) + ": only axes of size 1 can be squeezed");
    placed.push_back(drop ? -1 : static_cast<int64_t>(shape.size()));
    if (!drop)
      shape.push_back(a->shape[i]);
  }
  return recordUnitAxes(a, reshape(a, shape, r), std::move(placed));
}

ArrayPtr ArrayOps::slice(const ArrayPtr &a, const std::vector<int64_t> &start,
                         const std::vector<int64_t> &limit, const std::vector<int64_t> &stride,
                         SourceRange r) {
  std::vector<int64_t> shape;
  bool whole = true;
  for (size_t d = 0; d < start.size(); ++d) {
    if (start[d] >= limit[d])
      el.fail(r, "slice selects no elements on axis " + std::to_string(d) +
                     " (zero-size arrays are not supported)");
    shape.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
    whole &= start[d] == 0 && limit[d] == a->shape[d] && stride[d] == 1;
  }
  if (whole)
    return a;
  mlir::Value v = pk::SliceOp::create(el.builder(), el.loc(r), valueType(shape, a->dtype), a->value,
                                      start, limit, stride);
  return wrap(v, shape, a->dtype, a->weak);
}

ArrayPtr ArrayOps::concatenate(const std::vector<Obj> &values, int64_t axis, SourceRange r) {
  if (values.empty())
    el.fail(r, "need at least one array to concatenate");
  std::vector<ArrayPtr> arrays;
  JaxType type = typeOf(values[0], r);
  for (const Obj &v : values)
    type = promoteTypes(type, typeOf(v, r));
  for (const Obj &v : values)
    arrays.push_back(toArray(v, r, type));
  int64_t rank = arrays[0]->rank();
  if (rank == 0)
    el.fail(r, "zero-dimensional arrays cannot be concatenated");
  std::vector<int64_t> shape = arrays[0]->shape;
  shape[axis] = 0;
  std::vector<mlir::Value> operands;
  for (const ArrayPtr &a : arrays) {
    if (a->rank() != rank)
      el.fail(r, "all arrays to concatenate must have the same rank");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && a->shape[d] != arrays[0]->shape[d])
        el.fail(r, "arrays to concatenate differ on axis " + std::to_string(d) + ": " +
                       shapeString(arrays[0]->shape) + " vs " + shapeString(a->shape));
    shape[axis] += a->shape[axis];
    operands.push_back(a->value);
  }
  if (arrays.size() == 1)
    return arrays[0];
  mlir::Value v = pk::ConcatenateOp::create(el.builder(), el.loc(r), valueType(shape, type.dtype),
                                            operands, axis);
  return wrap(v, shape, type.dtype, type.weak);
}

ArrayPtr ArrayOps::butterfly(const ArrayPtr &a, int64_t axis, int64_t distance, SourceRange r) {
  mlir::Value v = pk::ButterflyOp::create(el.builder(), el.loc(r), a->value.getType(), a->value,
                                          axis, distance);
  return wrap(v, a->shape, a->dtype, a->weak);
}

std::vector<ArrayPtr> ArrayOps::promoteAndBroadcast(const std::vector<Obj> &operands,
                                                    SourceRange r, JaxType *resultType) {
  JaxType type = typeOf(operands[0], r);
  for (size_t i = 1; i < operands.size(); ++i)
    type = promoteTypes(type, typeOf(operands[i], r));
  std::vector<int64_t> shape;
  for (const Obj &o : operands)
    if (auto *a = llvm::dyn_cast<ArrayObj>(o.get()))
      shape = broadcastShapes(shape, a->shape, r);
  std::vector<ArrayPtr> arrays;
  for (const Obj &o : operands) {
    // Python numbers become splat constants of the final shape directly.
    if (auto *f = llvm::dyn_cast<FloatObj>(o.get()); f && isFloat(type.dtype))
      arrays.push_back(constant(f->value, type.dtype, shape, r, type.weak));
    else if (std::optional<int64_t> i = el.staticInt(o); i && !llvm::isa<FloatObj>(o.get()))
      arrays.push_back(constantInt(*i, type.dtype, shape, r, type.weak));
    else
      arrays.push_back(broadcastTo(toArray(o, r, type), shape, r));
  }
  if (resultType)
    *resultType = type;
  return arrays;
}

ArrayPtr ArrayOps::full(const std::vector<int64_t> &shape, const Obj &value,
                        std::optional<DType> dtype, SourceRange r) {
  for (int64_t d : shape)
    if (d <= 0)
      el.fail(r, "array dimensions must be positive, got " + shapeString(shape));
  if (elementCount(shape) > (int64_t(1) << 26))
    el.fail(r, "array of shape " + shapeString(shape) + " is too large for a kernel value");
  if (isStaticNumber(value)) {
    JaxType t = typeOf(value, r);
    DType d = dtype ? *dtype : (t.weak ? t.dtype : t.dtype);
    bool weak = !dtype && t.weak;
    if (auto *f = llvm::dyn_cast<FloatObj>(value.get()))
      return constant(f->value, d, shape, r, weak);
    int64_t v = llvm::isa<IntObj>(value.get()) ? llvm::cast<IntObj>(value.get())->value
                                              : llvm::cast<BoolObj>(value.get())->value;
    return constantInt(v, d, shape, r, weak);
  }
  ArrayPtr v = toArray(value, r);
  if (dtype)
    v = cast(v, *dtype, r);
  if (v->rank() > static_cast<int64_t>(shape.size()))
    el.fail(r, "fill value of shape " + shapeString(v->shape) + " does not fit shape " +
                   shapeString(shape));
  return broadcastTo(v, shape, r);
}

ArrayPtr ArrayOps::iota(const std::vector<int64_t> &shape, int64_t dimension, DType dtype,
                        SourceRange r) {
  el.requireKernel(r, "iota");
  for (int64_t d : shape)
    if (d <= 0)
      el.fail(r, "array dimensions must be positive, got " + shapeString(shape));
  DType intType = isFloat(dtype) || dtype == DType::Bool ? DType::I32 : dtype;
  mlir::Value v = pk::IotaOp::create(el.builder(), el.loc(r), valueType(shape, intType),
                                     static_cast<uint64_t>(dimension));
  ArrayPtr result = wrap(v, shape, intType);
  return intType == dtype ? result : cast(result, dtype, r);
}

ArrayPtr ArrayOps::arange(const Obj &startObj, const Obj &stopObj, const Obj &stepObj,
                          std::optional<DType> dtype, SourceRange r) {
  // Static bounds are required: the result's length is part of its type.
  bool floatArgs = llvm::isa<FloatObj>(startObj.get()) || llvm::isa<FloatObj>(stopObj.get()) ||
                   llvm::isa<FloatObj>(stepObj.get());
  for (const Obj *o : {&startObj, &stopObj, &stepObj})
    if (!isStaticNumber(*o))
      el.fail(r, "jnp.arange needs static bounds (its length is part of the array's shape); "
                 "for a dynamic offset add it to a static arange");
  double start = el.toDouble(startObj, r, "start"), stop = el.toDouble(stopObj, r, "stop"),
         step = el.toDouble(stepObj, r, "step");
  if (step == 0)
    el.fail(r, "arange step must not be zero");
  int64_t n = static_cast<int64_t>(std::ceil((stop - start) / step));
  if (n <= 0)
    el.fail(r, "arange is empty (zero-size arrays are not supported)");
  DType resultType = dtype ? *dtype : (floatArgs ? DType::F32 : DType::I32);
  ArrayPtr index = iota({n}, 0, isFloat(resultType) ? DType::F32 : resultType, r);
  if (isFloat(resultType)) {
    ArrayPtr scaled = index;
    if (step != 1)
      scaled = std::static_pointer_cast<ArrayObj>(
          binary(BinaryOp::Mul, index, makeFloat(step), r));
    if (start != 0)
      scaled = std::static_pointer_cast<ArrayObj>(
          binary(BinaryOp::Add, scaled, makeFloat(start), r));
    return cast(scaled, resultType, r);
  }
  ArrayPtr result = index;
  if (step != 1)
    result = std::static_pointer_cast<ArrayObj>(
        binary(BinaryOp::Mul, result, makeInt(static_cast<int64_t>(step)), r));
  if (start != 0)
    result = std::static_pointer_cast<ArrayObj>(
        binary(BinaryOp::Add, result, makeInt(static_cast<int64_t>(start)), r));
  return result;
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

mlir::Value ArrayOps::select(mlir::Value c, mlir::Value x, mlir::Value y, SourceRange r) {
  return arith::SelectOp::create(el.builder(), el.loc(r), c, x, y);
}

mlir::Value ArrayOps::emitBinary(BinaryOp op, const ArrayPtr &a, const ArrayPtr &b, DType dtype,
                                 SourceRange r) {
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  mlir::Value x = a->value, y = b->value;
  bool fp = isFloat(dtype), uns = isUnsigned(dtype), boolean = dtype == DType::Bool;
  switch (op) {
  case BinaryOp::Add:
    if (boolean)
      return arith::OrIOp::create(bld, loc, x, y);
    return fp ? mlir::Value(arith::AddFOp::create(bld, loc, x, y))
              : mlir::Value(arith::AddIOp::create(bld, loc, x, y));
  case BinaryOp::Sub:
    if (boolean)
      el.fail(r, "the '-' operator is not supported on booleans; use '^' or jnp.logical_xor");
    return fp ? mlir::Value(arith::SubFOp::create(bld, loc, x, y))
              : mlir::Value(arith::SubIOp::create(bld, loc, x, y));
  case BinaryOp::Mul:
    if (boolean)
      return arith::AndIOp::create(bld, loc, x, y);
    return fp ? mlir::Value(arith::MulFOp::create(bld, loc, x, y))
              : mlir::Value(arith::MulIOp::create(bld, loc, x, y));
  case BinaryOp::Div:
    return arith::DivFOp::create(bld, loc, x, y);
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
  case BinaryOp::LShift:
  case BinaryOp::RShift:
    if (fp)
      el.fail(r, std::string("the '") + ast::spelling(op) + "' operator needs integer or boolean operands, got " +
                     numpyName(dtype));
    if (op == BinaryOp::BitAnd)
      return arith::AndIOp::create(bld, loc, x, y);
    if (op == BinaryOp::BitOr)
      return arith::OrIOp::create(bld, loc, x, y);
    if (op == BinaryOp::BitXor)
      return arith::XOrIOp::create(bld, loc, x, y);
    if (boolean)
      el.fail(r, "shifts need integer operands");
    if (op == BinaryOp::LShift)
      return arith::ShLIOp::create(bld, loc, x, y);
    return uns ? mlir::Value(arith::ShRUIOp::create(bld, loc, x, y))
               : mlir::Value(arith::ShRSIOp::create(bld, loc, x, y));
  default:
    break;
  }
  el.fail(r, std::string("unsupported operator '") + ast::spelling(op) + "'");
}

ArrayPtr ArrayOps::floorDivide(const ArrayPtr &a, const ArrayPtr &b, DType dtype, SourceRange r) {
  // jnp.floor_divide, op for op (jax/_src/numpy/ufuncs.py), so that the
  // corner cases come out as in JAX: x // 0 is -2 for x != 0 (XLA's -1
  // quotient, then the sign correction), and x // 0.0 is +-inf.
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  if (dtype == DType::Bool)
    el.fail(r, "floor division is not supported on booleans");
  if (isUnsigned(dtype))
    return wrap(arith::DivUIOp::create(bld, loc, a->value, b->value), a->shape, dtype);
  if (!isFloat(dtype)) {
    // quotient = lax.div(x1, x2)
    // select = (lax.sign(x1) != lax.sign(x2)) & (lax.rem(x1, x2) != 0)
    // where(select, quotient - 1, quotient)
    // (One op a statement, in that order: the order of a call's arguments
    // is the compiler's, and the IR must not depend on it; in JAX's order,
    // the TPU module is Pallas's.)
    mlir::Value quotient = arith::DivSIOp::create(bld, loc, a->value, b->value);
    mlir::Value aSign = std::static_pointer_cast<ArrayObj>(sign(a, r))->value;
    mlir::Value bSign = std::static_pointer_cast<ArrayObj>(sign(b, r))->value;
    mlir::Value signsDiffer =
        arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::ne, aSign, bSign);
    mlir::Value rem = arith::RemSIOp::create(bld, loc, a->value, b->value);
    ArrayPtr zero = constantInt(0, dtype, a->shape, r);
    mlir::Value remNonZero =
        arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::ne, rem, zero->value);
    mlir::Value adjust = arith::AndIOp::create(bld, loc, signsDiffer, remNonZero);
    ArrayPtr one = constantInt(1, dtype, a->shape, r);
    mlir::Value lower = arith::SubIOp::create(bld, loc, quotient, one->value);
    return wrap(select(adjust, lower, quotient, r), a->shape, dtype);
  }
  // _float_divmod (after CPython's float_divmod):
  //   mod = lax.rem(x1, x2)
  //   div = lax.div(where(x2 == 0, x1, x1 - mod), x2)
  //   ind = (mod != 0) & (lax.sign(x2) != lax.sign(mod))
  //   lax.round(where(ind, div - 1, div))       (half away from zero)
  mlir::Value mod = arith::RemFOp::create(bld, loc, a->value, b->value);
  ArrayPtr zero = constant(0.0, dtype, a->shape, r), one = constant(1.0, dtype, a->shape, r);
  mlir::Value divisorIsZero =
      arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::OEQ, b->value, zero->value);
  mlir::Value dividend =
      select(divisorIsZero, a->value, arith::SubFOp::create(bld, loc, a->value, mod), r);
  mlir::Value div = arith::DivFOp::create(bld, loc, dividend, b->value);
  mlir::Value modNonZero =
      arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::UNE, mod, zero->value);
  auto signOf = [&](mlir::Value v) {
    return std::static_pointer_cast<ArrayObj>(sign(wrap(v, a->shape, dtype), r))->value;
  };
  mlir::Value divisorSign = signOf(b->value);
  mlir::Value remainderSign = signOf(mod);
  mlir::Value signsDiffer =
      arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::UNE, divisorSign, remainderSign);
  mlir::Value adjust = arith::AndIOp::create(bld, loc, modNonZero, signsDiffer);
  mlir::Value corrected = select(adjust, arith::SubFOp::create(bld, loc, div, one->value), div, r);
  return wrap(math::RoundOp::create(bld, loc, corrected), a->shape, dtype);
}

ArrayPtr ArrayOps::remainder(const ArrayPtr &a, const ArrayPtr &b, DType dtype, SourceRange r) {
  // jnp.remainder: an integer divisor of 0 is replaced by 1 (so x % 0 is
  // 0), then Python's sign rule fixes up the truncated remainder.
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  if (dtype == DType::Bool)
    el.fail(r, "the '%' operator is not supported on booleans");
  bool fp = isFloat(dtype);
  ArrayPtr zero = fp ? constant(0.0, dtype, a->shape, r) : constantInt(0, dtype, a->shape, r);
  mlir::Value divisor = b->value;
  if (!fp) {
    mlir::Value isZero =
        arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::eq, divisor, zero->value);
    divisor = select(isZero, constantInt(1, dtype, a->shape, r)->value, divisor, r);
  }
  if (isUnsigned(dtype))
    return wrap(arith::RemUIOp::create(bld, loc, a->value, divisor), a->shape, dtype);
  mlir::Value rem = fp ? mlir::Value(arith::RemFOp::create(bld, loc, a->value, divisor))
                       : mlir::Value(arith::RemSIOp::create(bld, loc, a->value, divisor));
  mlir::Value nonZero, remNeg, bNeg;
  if (fp) {
    nonZero = arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::UNE, rem, zero->value);
    remNeg = arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::OLT, rem, zero->value);
    bNeg = arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::OLT, divisor, zero->value);
  } else {
    nonZero = arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::ne, rem, zero->value);
    remNeg = arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::slt, rem, zero->value);
    bNeg = arith::CmpIOp::create(bld, loc, arith::CmpIPredicate::slt, divisor, zero->value);
  }
  // (rem < 0) != (b < 0) and rem != 0, in jnp.remainder's operand order.
  mlir::Value adjust = arith::AndIOp::create(
      bld, loc, arith::XOrIOp::create(bld, loc, remNeg, bNeg), nonZero);
  mlir::Value shifted = fp ? mlir::Value(arith::AddFOp::create(bld, loc, rem, divisor))
                           : mlir::Value(arith::AddIOp::create(bld, loc, rem, divisor));
  return wrap(select(adjust, shifted, rem, r), a->shape, dtype);
}

Obj ArrayOps::binary(BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  if (op == BinaryOp::MatMul) {
    // `@` is jnp.matmul, which (unlike jnp.dot) has no scalar form.
    for (const Obj &o : {lhs, rhs}) {
      auto *a = llvm::dyn_cast<ArrayObj>(o.get());
      if (a ? a->shape.empty() : isStaticNumber(o))
        el.fail(r, "'@' (matmul) needs operands with at least one dimension, got a scalar; use "
                   "'*' to multiply by a scalar");
    }
    auto *x = llvm::dyn_cast<ArrayObj>(lhs.get());
    auto *y = llvm::dyn_cast<ArrayObj>(rhs.get());
    if ((x && x->rank() > 2) || (y && y->rank() > 2))
      return matmulBuiltin(el, lhs, rhs, none(), none(), r);
    return dot(lhs, rhs, false, false, std::nullopt, el.tf32ByDefault, r);
  }
  if (op == BinaryOp::Pow)
    return power(lhs, rhs, r);
  el.requireKernel(r, std::string("the '") + ast::spelling(op) + "' operator on arrays");
  JaxType type = promoteTypes(typeOf(lhs, r), typeOf(rhs, r));
  if (op == BinaryOp::Div)
    type = toInexact(type);
  std::vector<ArrayPtr> operands = promoteAndBroadcast({lhs, rhs}, r);
  if (op == BinaryOp::Div)
    for (ArrayPtr &a : operands)
      a = castTo(a, type, r);
  const ArrayPtr &a = operands[0], &b = operands[1];
  if (op == BinaryOp::FloorDiv || op == BinaryOp::Mod) {
    ArrayPtr result = op == BinaryOp::FloorDiv ? floorDivide(a, b, type.dtype, r)
                                               : remainder(a, b, type.dtype, r);
    result->weak = type.weak;
    return result;
  }
  return wrap(emitBinary(op, a, b, type.dtype, r), a->shape, type.dtype, type.weak);
}

Obj ArrayOps::compare(CompareOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  el.requireKernel(r, "comparisons of arrays");
  JaxType type;
  std::vector<ArrayPtr> operands = promoteAndBroadcast({lhs, rhs}, r, &type);
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  mlir::Value x = operands[0]->value, y = operands[1]->value;
  mlir::Value result;
  if (isFloat(type.dtype)) {
    arith::CmpFPredicate p;
    switch (op) {
    case CompareOp::Lt: p = arith::CmpFPredicate::OLT; break;
    case CompareOp::Le: p = arith::CmpFPredicate::OLE; break;
    case CompareOp::Gt: p = arith::CmpFPredicate::OGT; break;
    case CompareOp::Ge: p = arith::CmpFPredicate::OGE; break;
    case CompareOp::Eq: p = arith::CmpFPredicate::OEQ; break;
    case CompareOp::Ne: p = arith::CmpFPredicate::UNE; break;
    default:
      el.fail(r, std::string("'") + ast::spelling(op) + "' is not supported on arrays");
    }
    result = arith::CmpFOp::create(bld, loc, p, x, y);
  } else {
    bool uns = isUnsigned(type.dtype) || type.dtype == DType::Bool;
    arith::CmpIPredicate p;
    switch (op) {
    case CompareOp::Lt: p = uns ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; break;
    case CompareOp::Le: p = uns ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; break;
    case CompareOp::Gt: p = uns ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; break;
    case CompareOp::Ge: p = uns ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; break;
    case CompareOp::Eq: p = arith::CmpIPredicate::eq; break;
    case CompareOp::Ne: p = arith::CmpIPredicate::ne; break;
    default:
      el.fail(r, std::string("'") + ast::spelling(op) + "' is not supported on arrays");
    }
    result = arith::CmpIOp::create(bld, loc, p, x, y);
  }
  return wrap(result, operands[0]->shape, DType::Bool);
}

Obj ArrayOps::negate(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (a->dtype == DType::Bool)
    el.fail(r, "the '-' operator is not supported on booleans; use '~' or jnp.logical_not");
  if (isFloat(a->dtype))
    return wrap(arith::NegFOp::create(el.builder(), el.loc(r), a->value), a->shape, a->dtype, a->weak);
  ArrayPtr zero = constantInt(0, a->dtype, a->shape, r);
  return wrap(arith::SubIOp::create(el.builder(), el.loc(r), zero->value, a->value), a->shape,
              a->dtype, a->weak);
}

Obj ArrayOps::invert(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (isFloat(a->dtype))
    el.fail(r, std::string("the '~' operator needs integer or boolean operands, got ") +
                   numpyName(a->dtype));
  ArrayPtr ones = constantInt(a->dtype == DType::Bool ? 1 : -1, a->dtype == DType::Bool ? DType::Bool : DType::I64,
                              a->shape, r);
  mlir::Value allOnes = a->dtype == DType::Bool ? ones->value : cast(ones, a->dtype, r)->value;
  return wrap(arith::XOrIOp::create(el.builder(), el.loc(r), a->value, allOnes), a->shape,
              a->dtype, a->weak);
}

Obj ArrayOps::logicalNot(const Obj &x, SourceRange r) {
  ArrayPtr a = cast(toArray(x, r), DType::Bool, r);
  return invert(a, r);
}

Obj ArrayOps::logical(BinaryOp op, const Obj &a, const Obj &b, SourceRange r) {
  ArrayPtr x = cast(toArray(a, r), DType::Bool, r);
  ArrayPtr y = cast(toArray(b, r), DType::Bool, r);
  return binary(op, x, y, r);
}

Obj ArrayOps::floatUnary(FloatUnary fn, const Obj &x, SourceRange r) {
  el.requireKernel(r, "element-wise math");
  JaxType t = toInexact(typeOf(x, r));
  ArrayPtr a = toArray(x, r, t);
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  mlir::Value v;
  switch (fn) {
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference)                                \
  case FloatUnary::Enum:                                                         \
    v = Op::create(bld, loc, a->value);                                          \
    break;
#include "ir/ElementwiseMath.def"
  }
  return wrap(v, a->shape, a->dtype, a->weak);
}

Obj ArrayOps::round(Rounding mode, const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (!isFloat(a->dtype))
    return a; // integers are already rounded
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  mlir::Value v;
  switch (mode) {
  case Rounding::Floor: v = math::FloorOp::create(bld, loc, a->value); break;
  case Rounding::Ceil: v = math::CeilOp::create(bld, loc, a->value); break;
  case Rounding::Trunc: v = math::TruncOp::create(bld, loc, a->value); break;
  case Rounding::RoundEven: v = math::RoundEvenOp::create(bld, loc, a->value); break;
  }
  return wrap(v, a->shape, a->dtype, a->weak);
}

Obj ArrayOps::abs(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (isFloat(a->dtype))
    return wrap(math::AbsFOp::create(el.builder(), el.loc(r), a->value), a->shape, a->dtype, a->weak);
  if (isUnsigned(a->dtype) || a->dtype == DType::Bool)
    return a;
  return wrap(math::AbsIOp::create(el.builder(), el.loc(r), a->value), a->shape, a->dtype, a->weak);
}

Obj ArrayOps::bitCount(const Obj &x, bool leadingZeros, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (isFloat(a->dtype) || a->dtype == DType::Bool)
    el.fail(r, std::string(leadingZeros ? "lax.clz" : "lax.population_count") +
                   " takes integers, got " + numpyName(a->dtype));
  mlir::Value v =
      leadingZeros
          ? math::CountLeadingZerosOp::create(el.builder(), el.loc(r), a->value).getResult()
          : math::CtPopOp::create(el.builder(), el.loc(r), a->value).getResult();
  return wrap(v, a->shape, a->dtype, a->weak);
}

Obj ArrayOps::sign(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (a->dtype == DType::Bool)
    return a;
  Obj zero = makeInt(0);
  // Integers as Pallas lowers lax.sign: (x > 0) - (x < 0), and x != 0
  // unsigned, with the comparisons widened (arith.extui).
  if (!isFloat(a->dtype)) {
    OpBuilder &bld = el.builder();
    Location loc = el.loc(r);
    mlir::Type type = a->value.getType();
    if (isUnsigned(a->dtype)) {
      auto nonZero = std::static_pointer_cast<ArrayObj>(compare(CompareOp::Ne, a, zero, r));
      return wrap(arith::ExtUIOp::create(bld, loc, type, nonZero->value), a->shape, a->dtype,
                  a->weak);
    }
    auto positive = std::static_pointer_cast<ArrayObj>(compare(CompareOp::Gt, a, zero, r));
    mlir::Value up = arith::ExtUIOp::create(bld, loc, type, positive->value);
    auto negative = std::static_pointer_cast<ArrayObj>(compare(CompareOp::Lt, a, zero, r));
    mlir::Value down = arith::ExtUIOp::create(bld, loc, type, negative->value);
    return wrap(arith::SubIOp::create(bld, loc, up, down), a->shape, a->dtype, a->weak);
  }
  auto positive = std::static_pointer_cast<ArrayObj>(compare(CompareOp::Gt, a, zero, r));
  ArrayPtr one = constant(1.0, a->dtype, a->shape, r);
  auto negative = std::static_pointer_cast<ArrayObj>(compare(CompareOp::Lt, a, zero, r));
  ArrayPtr minusOne = constant(-1.0, a->dtype, a->shape, r);
  // Zero and NaN map to themselves.
  mlir::Value v =
      select(positive->value, one->value, select(negative->value, minusOne->value, a->value, r), r);
  return wrap(v, a->shape, a->dtype, a->weak);
}

Obj ArrayOps::maximum(const Obj &x, const Obj &y, SourceRange r) { return extremum(true, x, y, r); }

Obj ArrayOps::minimum(const Obj &x, const Obj &y, SourceRange r) { return extremum(false, x, y, r); }

Obj ArrayOps::extremum(bool isMax, const Obj &x, const Obj &y, SourceRange r) {
  JaxType t;
  std::vector<ArrayPtr> ops = promoteAndBroadcast({x, y}, r, &t);
  OpBuilder &bld = el.builder();
  Location loc = el.loc(r);
  mlir::Value a = ops[0]->value, b = ops[1]->value, v;
  if (isFloat(t.dtype)) // NaN-propagating, as jnp.maximum
    v = isMax ? mlir::Value(arith::MaximumFOp::create(bld, loc, a, b))
              : mlir::Value(arith::MinimumFOp::create(bld, loc, a, b));
  else if (t.dtype == DType::Bool)
    v = isMax ? mlir::Value(arith::OrIOp::create(bld, loc, a, b))
              : mlir::Value(arith::AndIOp::create(bld, loc, a, b));
  else if (isUnsigned(t.dtype))
    v = isMax ? mlir::Value(arith::MaxUIOp::create(bld, loc, a, b))
              : mlir::Value(arith::MinUIOp::create(bld, loc, a, b));
  else
    v = isMax ? mlir::Value(arith::MaxSIOp::create(bld, loc, a, b))
              : mlir::Value(arith::MinSIOp::create(bld, loc, a, b));
  return wrap(v, ops[0]->shape, t.dtype, t.weak);
}

ArrayPtr ArrayOps::integerPower(const ArrayPtr &a, int64_t exponent, SourceRange r) {
  // lax.integer_pow: square-and-multiply; negative exponents invert.
  if (exponent == 0)
    return isFloat(a->dtype) ? constant(1.0, a->dtype, a->shape, r, a->weak)
                             : constantInt(1, a->dtype, a->shape, r, a->weak);
  bool negative = exponent < 0;
  if (negative && !isFloat(a->dtype))
    el.fail(r, "integers cannot be raised to negative integer powers");
  uint64_t e = negative ? static_cast<uint64_t>(-exponent) : static_cast<uint64_t>(exponent);
  ArrayPtr result, base = a;
  while (e) {
    if (e & 1)
      result = result ? std::static_pointer_cast<ArrayObj>(binary(BinaryOp::Mul, result, base, r))
                      : base;
    e >>= 1;
    if (e)
      base = std::static_pointer_cast<ArrayObj>(binary(BinaryOp::Mul, base, base, r));
  }
  if (negative)
    result = std::static_pointer_cast<ArrayObj>(binary(BinaryOp::Div, makeFloat(1.0), result, r));
  return result;
}

Obj ArrayOps::power(const Obj &x, const Obj &y, SourceRange r) {
  el.requireKernel(r, "the '**' operator on arrays");
  if (auto *e = llvm::dyn_cast<IntObj>(y.get())) {
    ArrayPtr a = toArray(x, r);
    return integerPower(a, e->value, r);
  }
  JaxType t;
  std::vector<ArrayPtr> ops = promoteAndBroadcast({x, y}, r, &t);
  if (t.dtype == DType::Bool)
    el.fail(r, "'**' is not supported on booleans");
  mlir::Value v;
  if (isFloat(t.dtype))
    v = math::PowFOp::create(el.builder(), el.loc(r), ops[0]->value, ops[1]->value);
  else
    v = math::IPowIOp::create(el.builder(), el.loc(r), ops[0]->value, ops[1]->value);
  return wrap(v, ops[0]->shape, t.dtype, t.weak);
}

Obj ArrayOps::arctan2(const Obj &x, const Obj &y, SourceRange r) {
  JaxType t = toInexact(promoteTypes(typeOf(x, r), typeOf(y, r)));
  std::vector<ArrayPtr> ops = promoteAndBroadcast({toArray(x, r, t), toArray(y, r, t)}, r);
  return wrap(math::Atan2Op::create(el.builder(), el.loc(r), ops[0]->value, ops[1]->value),
              ops[0]->shape, t.dtype, t.weak);
}

Obj ArrayOps::where(const Obj &condition, const Obj &x, const Obj &y, SourceRange r) {
  el.requireKernel(r, "jnp.where");
  ArrayPtr c = cast(toArray(condition, r), DType::Bool, r);
  JaxType t;
  std::vector<ArrayPtr> values = promoteAndBroadcast({x, y}, r, &t);
  std::vector<int64_t> shape = broadcastShapes(c->shape, values[0]->shape, r);
  c = broadcastTo(c, shape, r);
  ArrayPtr a = broadcastTo(values[0], shape, r), b = broadcastTo(values[1], shape, r);
  return wrap(select(c->value, a->value, b->value, r), shape, t.dtype, t.weak);
}

Obj ArrayOps::wrapNegativeIndex(const Obj &indices, int64_t n, SourceRange r) {
  // One op a statement: the IR's order must not be the C++ compiler's.
  Obj negative = compare(ast::CompareOp::Lt, indices, makeInt(0), r);
  Obj fromEnd = binary(ast::BinaryOp::Add, indices, makeInt(n), r);
  return where(negative, fromEnd, indices, r);
}

Obj ArrayOps::isNan(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (!isFloat(a->dtype))
    return constantInt(0, DType::Bool, a->shape, r);
  return wrap(arith::CmpFOp::create(el.builder(), el.loc(r), arith::CmpFPredicate::UNO, a->value,
                                    a->value),
              a->shape, DType::Bool);
}

Obj ArrayOps::isInf(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (!isFloat(a->dtype))
    return constantInt(0, DType::Bool, a->shape, r);
  ArrayPtr inf = constant(std::numeric_limits<double>::infinity(), a->dtype, a->shape, r);
  mlir::Value magnitude = math::AbsFOp::create(el.builder(), el.loc(r), a->value);
  return wrap(arith::CmpFOp::create(el.builder(), el.loc(r), arith::CmpFPredicate::OEQ, magnitude,
                                    inf->value),
              a->shape, DType::Bool);
}

Obj ArrayOps::isFinite(const Obj &x, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (!isFloat(a->dtype))
    return constantInt(1, DType::Bool, a->shape, r);
  ArrayPtr inf = constant(std::numeric_limits<double>::infinity(), a->dtype, a->shape, r);
  mlir::Value magnitude = math::AbsFOp::create(el.builder(), el.loc(r), a->value);
  return wrap(arith::CmpFOp::create(el.builder(), el.loc(r), arith::CmpFPredicate::OLT, magnitude,
                                    inf->value),
              a->shape, DType::Bool);
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

namespace {

/// jnp reductions sum small integers in the default int type.
DType sumType(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::I8:
  case DType::I16:
    return DType::I32;
  case DType::U8:
  case DType::U16:
    return DType::U32;
  default:
    return t;
  }
}

} // namespace

Obj ArrayOps::reduce(Reduction kind, const Obj &x, std::vector<int64_t> axes, bool keepDims,
                     SourceRange r) {
  el.requireKernel(r, "reductions");
  ArrayPtr a = toArray(x, r);
  if (a->rank() == 0)
    return a; // reducing a scalar over no axes is the identity
  if (axes.empty())
    for (int64_t i = 0; i < a->rank(); ++i)
      axes.push_back(i);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());

  DType resultType = a->dtype;
  pk::ReductionKind op = pk::ReductionKind::Add;
  ArrayPtr input = a;
  switch (kind) {
  case Reduction::Sum:
  case Reduction::Prod:
    resultType = sumType(a->dtype);
    op = kind == Reduction::Sum ? pk::ReductionKind::Add : pk::ReductionKind::Mul;
    // Half-precision floats accumulate in f32, as jnp does.
    input = cast(a, (a->dtype == DType::BF16 || a->dtype == DType::F16) ? DType::F32 : resultType, r);
    break;
  case Reduction::Max:
  case Reduction::Min: {
    bool isMax = kind == Reduction::Max;
    if (isFloat(a->dtype))
      op = isMax ? pk::ReductionKind::MaxF : pk::ReductionKind::MinF;
    else if (a->dtype == DType::Bool)
      op = isMax ? pk::ReductionKind::Or : pk::ReductionKind::And;
    else if (isUnsigned(a->dtype))
      op = isMax ? pk::ReductionKind::MaxUI : pk::ReductionKind::MinUI;
    else
      op = isMax ? pk::ReductionKind::MaxSI : pk::ReductionKind::MinSI;
    break;
  }
  case Reduction::Any:
  case Reduction::All:
    resultType = DType::Bool;
    input = cast(a, DType::Bool, r);
    op = kind == Reduction::Any ? pk::ReductionKind::Or : pk::ReductionKind::And;
    break;
  }
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i))
      shape.push_back(a->shape[i]);
  mlir::Value v = pk::ReduceOp::create(el.builder(), el.loc(r), valueType(shape, input->dtype),
                                       input->value, op, axes);
  ArrayPtr result = cast(wrap(v, shape, input->dtype), resultType, r);
  result->weak = a->weak && resultType == a->dtype;
  if (keepDims)
    result = expandDims(result, axes, r);
  return result;
}

Obj ArrayOps::reduceBitwise(pk::ReductionKind kind, const Obj &x, std::vector<int64_t> axes,
                            SourceRange r) {
  el.requireKernel(r, "reductions");
  ArrayPtr a = toArray(x, r);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.empty())
    return a;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i))
      shape.push_back(a->shape[i]);
  mlir::Value v = pk::ReduceOp::create(el.builder(), el.loc(r), valueType(shape, a->dtype), a->value,
                                       kind, axes);
  ArrayPtr result = wrap(v, shape, a->dtype);
  result->weak = a->weak;
  return result;
}

Obj ArrayOps::mean(const Obj &x, std::vector<int64_t> axes, bool keepDims, SourceRange r) {
  ArrayPtr a = toArray(x, r);
  if (axes.empty())
    for (int64_t i = 0; i < a->rank(); ++i)
      axes.push_back(i);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= a->shape[axis];
  DType resultType = isFloat(a->dtype) ? a->dtype : DType::F32;
  DType computeType = (resultType == DType::BF16 || resultType == DType::F16) ? DType::F32 : resultType;
  ArrayPtr sum = std::static_pointer_cast<ArrayObj>(
      reduce(Reduction::Sum, cast(a, computeType, r), axes, keepDims, r));
  Obj quotient = binary(BinaryOp::Div, sum, makeFloat(static_cast<double>(count)), r);
  return cast(std::static_pointer_cast<ArrayObj>(quotient), resultType, r); // strong, as jnp.mean
}

Obj ArrayOps::argReduce(bool isMax, const Obj &x, std::optional<int64_t> axis, bool keepDims,
                        SourceRange r) {
  el.requireKernel(r, "argmax/argmin");
  ArrayPtr a = toArray(x, r);
  if (a->dtype == DType::Bool)
    a = cast(a, DType::I32, r);
  std::vector<int64_t> originalShape = a->shape;
  if (!axis) {
    a = reshape(a, {std::max<int64_t>(1, static_cast<int64_t>(
                                             [&] {
                                               int64_t n = 1;
                                               for (int64_t d : a->shape)
                                                 n *= d;
                                               return n;
                                             }()))},
                r);
    axis = 0;
  }
  if (a->rank() == 0)
    el.fail(r, "argmax/argmin of a scalar needs no axis");
  pk::ReductionKind op;
  if (isFloat(a->dtype))
    op = isMax ? pk::ReductionKind::MaxF : pk::ReductionKind::MinF;
  else if (isUnsigned(a->dtype))
    op = isMax ? pk::ReductionKind::MaxUI : pk::ReductionKind::MinUI;
  else
    op = isMax ? pk::ReductionKind::MaxSI : pk::ReductionKind::MinSI;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < a->rank(); ++i)
    if (i != *axis)
      shape.push_back(a->shape[i]);
  mlir::Value v = pk::ArgReduceOp::create(el.builder(), el.loc(r), valueType(shape, DType::I32),
                                          a->value, op, static_cast<uint64_t>(*axis));
  ArrayPtr result = wrap(v, shape, DType::I32);
  if (keepDims) {
    if (originalShape.size() != a->shape.size()) // axis=None keeps every axis as 1
      return reshape(result, std::vector<int64_t>(originalShape.size(), 1), r);
    result = expandDims(result, {*axis}, r);
  }
  return result;
}

Obj ArrayOps::dot(const Obj &x, const Obj &y, bool transposeA, bool transposeB,
                  std::optional<DType> preferred, bool allowTf32, SourceRange r) {
  el.requireKernel(r, "matrix products");
  ArrayPtr a = toArray(x, r), b = toArray(y, r);
  if (a->rank() == 0 || b->rank() == 0)
    return binary(BinaryOp::Mul, a, b, r);
  if (a->rank() > 2 || b->rank() > 2)
    el.fail(r, "dot supports 1-D and 2-D operands, got shapes " + shapeString(a->shape) + " and " +
                   shapeString(b->shape));
  JaxType t = promoteTypes(typeOf(a, r), typeOf(b, r));
  if (t.dtype == DType::Bool)
    el.fail(r, "dot of boolean arrays is not supported");
  a = castTo(a, {t.dtype, false}, r);
  b = castTo(b, {t.dtype, false}, r);
  bool aVector = a->rank() == 1, bVector = b->rank() == 1;
  if (aVector)
    a = reshape(a, {1, a->shape[0]}, r);
  if (bVector)
    b = reshape(b, {b->shape[0], 1}, r);
  int64_t m = a->shape[transposeA ? 1 : 0], k = a->shape[transposeA ? 0 : 1];
  int64_t k2 = b->shape[transposeB ? 1 : 0], n = b->shape[transposeB ? 0 : 1];
  if (k != k2)
    el.fail(r, "dot operands do not contract: shapes " + shapeString(a->shape) +
                   (transposeA ? " (transposed)" : "") + " and " + shapeString(b->shape) +
                   (transposeB ? " (transposed)" : "") + " have inner dimensions " +
                   std::to_string(k) + " and " + std::to_string(k2));
  DType resultType = preferred ? *preferred : t.dtype;
  if (isFloat(resultType) != isFloat(t.dtype))
    el.fail(r, std::string("preferred_element_type ") + numpyName(resultType) +
                   " does not suit operands of type " + numpyName(t.dtype));
  OpBuilder &bld = el.builder();
  auto op = pk::DotOp::create(bld, el.loc(r), valueType({m, n}, resultType), a->value, b->value);
  if (transposeA)
    op.setTransposeLhs(true);
  if (transposeB)
    op.setTransposeRhs(true);
  // The IR's integers are signless: the op says how its operands widen.
  if (isUnsigned(t.dtype))
    op.setUnsignedOperands(true);
  if (allowTf32 && t.dtype == DType::F32)
    op.setAllowTf32(true);
  ArrayPtr result = wrap(op, {m, n}, resultType, t.weak && !preferred);
  if (aVector && bVector)
    return reshape(result, {}, r);
  if (aVector)
    return reshape(result, {n}, r);
  if (bVector)
    return reshape(result, {m}, r);
  return result;
}

} // namespace pk::elab
