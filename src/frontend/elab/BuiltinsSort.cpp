//===- BuiltinsSort.cpp - Sorting, and what is computed from sorted data --===//
//
// Sorts along one axis of a block value, built from selects and one
// exchange op, pk.butterfly (element i meets element i ^ d; the CUDA
// backend keeps it in registers or warp shuffles where the layout allows,
// the TPU backend expands it into reshapes, slices and a concatenation):
// a bitonic network over the axis padded to a power of two,
// log2(n) (log2(n) + 1) / 2 compare-and-swap stages of the whole block
// each. Each element of a pair compares the pair once, the same way: the
// order is strict (indices differ), so "low before high" is the negation
// of "high before low".
//
// The order is lax.sort's: keys compare lexicographically, floats in a
// total order where -0 equals 0 and every NaN is larger than +inf; ties
// keep their original order (each element carries its index, the last
// key), which makes every sort stable, as jnp.sort's default is. Padding
// sorts after everything. Descending sorts (top_k, argsort's descending)
// reverse the keys' order but not the indices', as JAX's stable
// descending argsort does. Padding's keys are the last value of the order
// (NaN, the largest integer; the smallest for a descending sort) and its
// indices the largest: it sorts after every element with no test of its own.
//
// Built on it: jnp.searchsorted (counts in the same order) and the order
// statistics jnp.quantile / percentile / median for a static q.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Promotion.h"
#include "frontend/elab/Tree.h"

#include "ir/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

namespace pk::elab {

namespace {

using ast::BinaryOp;
using ast::CompareOp;

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Float `x < y` in lax.sort's total order, given where x and y are NaN:
/// a NaN is above everything but a NaN; `<` is false whenever one is NaN.
Obj floatKeyLess(ArrayOps &ops, const ArrayPtr &x, const ArrayPtr &y, const Obj &xNan,
                 const Obj &yNan, SourceRange r) {
  Obj nanAbove = ops.logical(BinaryOp::BitAnd, ops.logicalNot(xNan, r), yNan, r);
  return ops.logical(BinaryOp::BitOr, nanAbove, ops.compare(CompareOp::Lt, x, y, r), r);
}

/// `x < y` in lax.sort's total order (for a bool, false < true).
Obj keyLess(ArrayOps &ops, const ArrayPtr &x, const ArrayPtr &y, SourceRange r) {
  if (!isFloat(x->dtype))
    return ops.compare(CompareOp::Lt, x, y, r);
  Obj xNan = ops.isNan(x, r), yNan = ops.isNan(y, r);
  return floatKeyLess(ops, x, y, xNan, yNan, r);
}

/// `x < y` and `x == y` in that order (-0 == 0, NaNs are equal), testing
/// each side for NaN once.
std::pair<Obj, Obj> keyLessEqual(ArrayOps &ops, const ArrayPtr &x, const ArrayPtr &y,
                                 SourceRange r) {
  if (!isFloat(x->dtype))
    return {ops.compare(CompareOp::Lt, x, y, r), ops.compare(CompareOp::Eq, x, y, r)};
  Obj xNan = ops.isNan(x, r), yNan = ops.isNan(y, r);
  Obj bothNan = ops.logical(BinaryOp::BitAnd, xNan, yNan, r);
  return {floatKeyLess(ops, x, y, xNan, yNan, r),
          ops.logical(BinaryOp::BitOr, bothNan, ops.compare(CompareOp::Eq, x, y, r), r)};
}

/// A block of the value that sorts after every element of `dtype`: NaN or
/// the largest integer (a min reduction's identity), or for a descending
/// sort -inf or the smallest integer (a max reduction's).
ArrayPtr sortsLast(Elaborator &el, DType dtype, bool descending, const std::vector<int64_t> &shape,
                   SourceRange r) {
  ArrayOps &ops = el.arrays();
  if (isFloat(dtype) && !descending)
    return ops.constant(std::numeric_limits<double>::quiet_NaN(), dtype, shape, r);
  ReductionKind kind = isFloat(dtype) ? ReductionKind::MaxF
                       : isUnsigned(dtype)
                           ? (descending ? ReductionKind::MaxUI : ReductionKind::MinUI)
                           : (descending ? ReductionKind::MaxSI : ReductionKind::MinSI);
  auto type = llvm::cast<mlir::ShapedType>(ops.valueType(shape, dtype));
  auto attr = mlir::DenseElementsAttr::get(type, reductionIdentity(kind, type.getElementType()));
  return ops.wrap(mlir::arith::ConstantOp::create(el.builder(), el.loc(r), type, attr), shape,
                  dtype);
}

struct SortRun {
  Elaborator &el;
  SourceRange r;
  size_t numKeys;
  bool descending;

  ArrayOps &ops() { return el.arrays(); }

  /// Whether element x sorts before element y: `x` and `y` hold the
  /// operands then the index, as columns of one compare-and-swap.
  Obj before(const std::vector<ArrayPtr> &x, const std::vector<ArrayPtr> &y) {
    ArrayOps &o = ops();
    // Keys from the last to the first: less, or equal and the rest less.
    Obj less = o.compare(CompareOp::Lt, x.back(), y.back(), r);
    for (size_t k = numKeys; k-- > 0;) {
      auto [strict, equal] =
          descending ? keyLessEqual(o, y[k], x[k], r) : keyLessEqual(o, x[k], y[k], r);
      less = o.logical(BinaryOp::BitOr, strict, o.logical(BinaryOp::BitAnd, equal, less, r), r);
    }
    return less;
  }

  /// One stage of the network on [rows, width] columns: elements i and
  /// i ^ half swap unless in order, ascending where bit `block` of i is
  /// clear. Each element meets its partner through one exchange
  /// (pk.butterfly) and both compute the pair's order, the lower one's
  /// view being (self, partner) and the upper one's (partner, self).
  void stage(std::vector<ArrayPtr> &columns, int64_t rows, int64_t width, int64_t block,
             int64_t half) {
    ArrayOps &o = ops();
    std::vector<ArrayPtr> partner, low, high;
    Obj position = o.iota({rows, width}, 1, DType::I32, r);
    Obj upper = o.compare(CompareOp::Ne, o.binary(BinaryOp::BitAnd, position, makeInt(half), r),
                          makeInt(0), r);
    for (const ArrayPtr &c : columns) {
      partner.push_back(o.butterfly(c, 1, half, r));
      low.push_back(o.toArray(o.where(upper, partner.back(), c, r), r));
      high.push_back(o.toArray(o.where(upper, c, partner.back(), r), r));
    }
    // block >= 2 * half: both elements of a pair share bit `block`.
    Obj descendingRun = o.compare(
        CompareOp::Ne, o.binary(BinaryOp::BitAnd, position, makeInt(block), r), makeInt(0), r);
    // An ascending run swaps when high sorts first, a descending one when
    // low does: when it does not.
    Obj swap = o.logical(BinaryOp::BitXor, before(high, low), descendingRun, r);
    for (size_t i = 0; i < columns.size(); ++i)
      columns[i] = o.toArray(o.where(swap, partner[i], columns[i], r), r);
  }
};

/// Sorts `operands` (all of one shape) along `axis` by their first
/// `numKeys`; returns them sorted, then the permutation (int32: the
/// original index of each element).
std::vector<ArrayPtr> sortAlong(Elaborator &el, std::vector<ArrayPtr> operands, size_t numKeys,
                                int64_t axis, bool descending, SourceRange r) {
  ArrayOps &ops = el.arrays();
  std::vector<int64_t> shape = operands[0]->shape;
  int64_t rank = static_cast<int64_t>(shape.size()), n = shape[axis];
  // The sorted axis last, the others flattened into rows.
  std::vector<int64_t> perm, moved;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d : perm)
    moved.push_back(shape[d]);
  int64_t rows = n ? elementCount(shape) / n : 0;
  int64_t width = 1;
  while (width < n)
    width *= 2;
  std::vector<ArrayPtr> columns;
  for (ArrayPtr a : operands) {
    // Bools compare as 0 and 1.
    if (a->dtype == DType::Bool)
      a = ops.cast(a, DType::I32, r);
    columns.push_back(ops.reshape(ops.transpose(a, perm, r), {rows, n}, r));
  }
  columns.push_back(ops.iota({rows, n}, 1, DType::I32, r));
  if (width > n)
    for (size_t i = 0; i < columns.size(); ++i) {
      std::vector<int64_t> padding = {rows, width - n};
      ArrayPtr fill;
      if (i + 1 == columns.size())
        fill = ops.toArray(
            ops.binary(BinaryOp::Add, ops.iota(padding, 1, DType::I32, r), makeInt(n), r), r);
      else if (i < numKeys)
        fill = sortsLast(el, columns[i]->dtype, descending, padding, r);
      else
        fill = ops.constantInt(0, columns[i]->dtype, padding, r);
      columns[i] = ops.toArray(ops.concatenate({columns[i], fill}, 1, r), r);
    }
  SortRun run{el, r, numKeys, descending};
  for (int64_t block = 2; block <= width; block *= 2)
    for (int64_t half = block / 2; half >= 1; half /= 2) {
      el.spendFuel(r);
      run.stage(columns, rows, width, block, half);
    }
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  std::vector<ArrayPtr> out;
  for (size_t i = 0; i < columns.size(); ++i) {
    ArrayPtr c = ops.slice(columns[i], {0, 0}, {rows, n}, {1, 1}, r);
    c = ops.transpose(ops.reshape(c, moved, r), inverse, r);
    if (i < operands.size() && operands[i]->dtype == DType::Bool)
      c = ops.cast(c, DType::Bool, r);
    out.push_back(c);
  }
  return out;
}

/// jnp.sort / argsort's axis: an int, or None for the flattened array.
int64_t sortAxis(Elaborator &el, ArrayPtr &a, const Obj &axis, SourceRange r) {
  if (isNone(axis)) {
    a = el.arrays().reshape(a, {elementCount(a->shape)}, r);
    return 0;
  }
  if (a->rank() == 0)
    el.fail(r, "sorting needs an array of rank at least 1");
  return el.normalizeAxis(axis, a->rank(), r);
}

void refuseNumpyOnlyOptions(Elaborator &el, const BoundArgs &a, const char *what) {
  if (!isNone(a[2]))
    el.fail(a.range(2), std::string("'kind' argument to ") + what +
                            " is not supported; use stable=True or stable=False");
  if (!isNone(a[3]))
    el.fail(a.range(3), std::string("'order' argument to ") + what + " is not supported");
}

Obj jnpSort(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"},
                               {"axis", makeInt(-1)},
                               {"kind", none(), true},
                               {"order", none(), true},
                               {"stable", makeBool(true), true},
                               {"descending", makeBool(false), true}});
  refuseNumpyOnlyOptions(el, a, "sort");
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.sort");
  int64_t axis = sortAxis(el, x, a[1], a.range(1));
  ArrayPtr sorted = sortAlong(el, {x}, 1, axis, false, args.range)[0];
  if (!el.truthy(a[5], a.range(5)))
    return sorted;
  // JAX reverses the ascending sort.
  return reverseAxis(el, sorted, axis, args.range);
}

Obj jnpArgsort(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"},
                               {"axis", makeInt(-1)},
                               {"kind", none(), true},
                               {"order", none(), true},
                               {"stable", makeBool(true), true},
                               {"descending", makeBool(false), true},
                               {"dtype", none(), true}});
  refuseNumpyOnlyOptions(el, a, "argsort");
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.argsort");
  int64_t axis = sortAxis(el, x, a[1], a.range(1));
  ArrayPtr indices = sortAlong(el, {x}, 1, axis, el.truthy(a[5], a.range(5)), args.range).back();
  if (!isNone(a[6]))
    indices = el.arrays().cast(indices, el.toDType(a[6], a.range(6), "dtype"), args.range);
  return indices;
}

/// lax.sort(operand, dimension, is_stable, num_keys): one array, or a
/// sequence of arrays sorted together by the first num_keys.
Obj laxSort(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"operand"},
                               {"dimension", makeInt(-1)},
                               {"is_stable", makeBool(true)},
                               {"num_keys", makeInt(1)}});
  bool single = !llvm::isa<SequenceObj>(a[0].get());
  std::vector<Obj> items = single ? std::vector<Obj>{a[0]} : el.iterate(a[0], a.range(0));
  if (items.empty())
    el.fail(a.range(0), "lax.sort needs at least one operand");
  std::vector<ArrayPtr> operands;
  for (const Obj &item : items) {
    operands.push_back(valueOperand(el, item, a.range(0), "lax.sort"));
    if (operands.back()->shape != operands[0]->shape)
      el.fail(a.range(0), "lax.sort's operands must have one shape");
  }
  int64_t numKeys = el.toInt(a[3], a.range(3), "num_keys");
  if (numKeys < 1 || numKeys > static_cast<int64_t>(operands.size()))
    el.fail(a.range(3), "num_keys must be between 1 and the number of operands (" +
                            std::to_string(operands.size()) + "), got " + std::to_string(numKeys));
  if (operands[0]->rank() == 0)
    el.fail(a.range(0), "lax.sort needs arrays of rank at least 1");
  int64_t axis = el.normalizeAxis(a[1], operands[0]->rank(), a.range(1));
  std::vector<ArrayPtr> sorted =
      sortAlong(el, operands, static_cast<size_t>(numKeys), axis, false, args.range);
  sorted.pop_back();
  if (single)
    return sorted[0];
  return makeTuple(std::vector<Obj>(sorted.begin(), sorted.end()));
}

Obj laxSortKeyVal(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(
      args, {{"keys"}, {"values"}, {"dimension", makeInt(-1)}, {"is_stable", makeBool(true)}});
  ArrayPtr keys = valueOperand(el, a[0], a.range(0), "lax.sort_key_val");
  ArrayPtr values = valueOperand(el, a[1], a.range(1), "lax.sort_key_val");
  if (keys->shape != values->shape)
    el.fail(args.range, "lax.sort_key_val's keys and values must have one shape");
  if (keys->rank() == 0)
    el.fail(a.range(0), "lax.sort_key_val needs arrays of rank at least 1");
  int64_t axis = el.normalizeAxis(a[2], keys->rank(), a.range(2));
  std::vector<ArrayPtr> sorted = sortAlong(el, {keys, values}, 1, axis, false, args.range);
  return makeTuple({sorted[0], sorted[1]});
}

/// lax.top_k: the k largest along `axis` (the last by default), largest
/// first, the lower index first among equals; and their indices.
Obj laxTopK(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"operand"}, {"k"}, {"axis", makeInt(-1), true}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.top_k");
  if (x->rank() == 0)
    el.fail(a.range(0), "lax.top_k needs an array of rank at least 1");
  int64_t axis = el.normalizeAxis(a[2], x->rank(), a.range(2));
  int64_t k = el.toInt(a[1], a.range(1), "k");
  if (k < 0 || k > x->shape[axis])
    el.fail(a.range(1), "k argument to top_k must be between 0 and the axis size (" +
                            std::to_string(x->shape[axis]) + "), got " + std::to_string(k));
  std::vector<ArrayPtr> sorted = sortAlong(el, {x}, 1, axis, /*descending=*/true, args.range);
  std::vector<int64_t> start(x->rank(), 0), limit = x->shape, step(x->rank(), 1);
  limit[axis] = k;
  ArrayOps &ops = el.arrays();
  return makeTuple({ops.slice(sorted[0], start, limit, step, args.range),
                    ops.slice(sorted[1], start, limit, step, args.range)});
}

/// jnp.searchsorted: for each v, how many elements of the sorted 1-D `a`
/// come before it (side="left": those < v; "right": those <= v), in
/// lax.sort's order, so that NaNs sort last as there.
Obj jnpSearchsorted(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(
      args,
      {{"a"}, {"v"}, {"side", makeStr("left")}, {"sorter", none()}, {"method", makeStr("scan")}});
  ArrayOps &ops = el.arrays();
  ArrayPtr sorted = valueOperand(el, a[0], a.range(0), "jnp.searchsorted");
  if (sorted->rank() != 1)
    el.fail(a.range(0), "jnp.searchsorted needs a 1-D sorted array, got rank " +
                            std::to_string(sorted->rank()));
  if (!isNone(a[3]))
    el.fail(a.range(3), "jnp.searchsorted's sorter= is not supported; sort the array first");
  std::string side = el.toStr(a[2], a.range(2), "side");
  if (side != "left" && side != "right")
    el.fail(a.range(2), "side must be 'left' or 'right', got '" + side + "'");
  JaxType t = promoteTypes(ops.typeOf(sorted, args.range), ops.typeOf(a[1], a.range(1)));
  ArrayPtr values = ops.toArray(a[1], a.range(1), t);
  sorted = ops.castTo(sorted, t, args.range);
  std::vector<int64_t> shape = values->shape;
  int64_t n = sorted->shape[0];
  shape.push_back(n);
  std::vector<int64_t> column = values->shape;
  column.push_back(1);
  std::vector<int64_t> row(values->rank(), 1);
  row.push_back(n);
  ArrayPtr v = ops.broadcastTo(ops.reshape(values, column, args.range), shape, args.range);
  ArrayPtr s = ops.broadcastTo(ops.reshape(sorted, row, args.range), shape, args.range);
  Obj before = side == "left" ? keyLess(ops, s, v, args.range)
                              : ops.logicalNot(keyLess(ops, v, s, args.range), args.range);
  ArrayPtr counts = ops.cast(ops.toArray(before, args.range), DType::I32, args.range);
  return ops.reduce(Reduction::Sum, counts, {static_cast<int64_t>(shape.size()) - 1}, false,
                    args.range);
}

/// jnp.quantile / percentile / median for static q (a number or a list
/// of them), as JAX's _quantile computes them: the slice along the axis is
/// sorted, q (n - 1) in the result's float type picks the two neighbours
/// and `method` combines them; a slice holding a NaN gives NaN.
Obj quantileOf(Elaborator &el, const Obj &array, const Obj &qObj, const Obj &axisObj,
               const std::string &method, bool keepDims, double scale, const char *what,
               SourceRange qRange, SourceRange r) {
  static const char *const kMethods[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods))
    el.fail(r, std::string(what) +
                   ": method must be 'linear', 'lower', 'higher', 'midpoint' or "
                   "'nearest' ('" +
                   method + "' is not supported)");
  ArrayOps &ops = el.arrays();
  ArrayPtr x = valueOperand(el, array, r, what);
  x = ops.castTo(x, toInexact(ops.typeOf(x, r)), r);
  std::vector<double> qs;
  bool listed = llvm::isa<SequenceObj>(qObj.get());
  for (const Obj &q : listed ? el.iterate(qObj, qRange) : std::vector<Obj>{qObj}) {
    if (!ArrayOps::isStaticNumber(q))
      el.fail(qRange, std::string(what) + " needs q known at compile time (a number or a list of "
                                          "them); a traced q is not supported");
    double value = (llvm::isa<IntObj>(q.get()) ? static_cast<double>(llvm::cast<IntObj>(*q).value)
                                               : llvm::cast<FloatObj>(*q).value) /
                   scale;
    if (!(value >= 0.0 && value <= 1.0))
      el.fail(qRange,
              std::string(what) + "'s q must be in [0, " + (scale == 100.0 ? "100" : "1") + "]");
    qs.push_back(value);
  }
  std::vector<int64_t> originalShape = x->shape;
  int64_t axis;
  if (isNone(axisObj)) {
    x = ops.reshape(x, {elementCount(x->shape)}, r);
    axis = 0;
  } else {
    if (x->rank() == 0)
      el.fail(r, std::string(what) + " needs an array of rank at least 1");
    axis = el.normalizeAxis(axisObj, x->rank(), r);
  }
  int64_t n = x->shape[axis];
  if (n == 0)
    el.fail(r, std::string(what) + " of an empty axis");
  ArrayPtr sorted = sortAlong(el, {x}, 1, axis, false, r)[0];
  Obj anyNan = ops.reduce(Reduction::Any, ops.isNan(x, r), {axis}, true, r);
  auto at = [&](int64_t index) {
    std::vector<int64_t> start(sorted->rank(), 0), limit = sorted->shape, step(sorted->rank(), 1);
    start[axis] = index;
    limit[axis] = index + 1;
    return ops.slice(sorted, start, limit, step, r);
  };
  std::vector<Obj> results;
  for (double q : qs) {
    // In float32 as JAX computes it (q and n - 1 promoted with the data).
    float position = static_cast<float>(q) * static_cast<float>(n - 1);
    float lowIndex = std::floor(position), highIndex = std::ceil(position);
    float highWeight = position - lowIndex, lowWeight = 1.0f - highWeight;
    ArrayPtr low = at(std::clamp<int64_t>(static_cast<int64_t>(lowIndex), 0, n - 1));
    ArrayPtr high = at(std::clamp<int64_t>(static_cast<int64_t>(highIndex), 0, n - 1));
    Obj value;
    if (method == "linear") {
      Obj lowPart = ops.binary(ast::BinaryOp::Mul, low, makeFloat(lowWeight), r);
      Obj highPart = ops.binary(ast::BinaryOp::Mul, high, makeFloat(highWeight), r);
      value = ops.binary(ast::BinaryOp::Add, lowPart, highPart, r);
    } else if (method == "lower")
      value = low;
    else if (method == "higher")
      value = high;
    else if (method == "nearest")
      value = highWeight <= 0.5f ? low : high;
    else
      value = ops.binary(ast::BinaryOp::Mul, ops.binary(ast::BinaryOp::Add, low, high, r),
                         makeFloat(0.5), r);
    ArrayPtr result = ops.toArray(ops.where(anyNan, makeFloat(NAN), value, r), r);
    if (isNone(axisObj))
      result = keepDims ? ops.reshape(result, std::vector<int64_t>(originalShape.size(), 1), r)
                        : ops.reshape(result, {}, r);
    else if (!keepDims)
      result = ops.squeeze(result, {axis}, r);
    results.push_back(result);
  }
  if (!listed)
    return results[0];
  std::vector<ArrayPtr> rows;
  for (const Obj &o : results) {
    ArrayPtr a = ops.toArray(o, r);
    std::vector<int64_t> shape = a->shape;
    shape.insert(shape.begin(), 1);
    rows.push_back(ops.reshape(a, shape, r));
  }
  return ops.concatenate(std::vector<Obj>(rows.begin(), rows.end()), 0, r);
}

BuiltinObj::Fn quantileFn(double scale, const char *what, bool median) {
  return [scale, what, median](Elaborator &el, CallArgs &args) -> Obj {
    std::vector<Param> params = {{"a"}};
    if (!median)
      params.push_back({"q"});
    for (Param p : std::initializer_list<Param>{{"axis", none()},
                                                {"out", none()},
                                                {"overwrite_input", makeBool(false)},
                                                {"method", makeStr("linear")},
                                                {"keepdims", makeBool(false)}})
      params.push_back(p);
    BoundArgs a = el.bind(args, params);
    size_t at = median ? 1 : 2;
    return quantileOf(el, a[0], median ? makeFloat(0.5) : a[1], a[at],
                      el.toStr(a[at + 3], a.range(at + 3), "method"),
                      el.truthy(a[at + 4], a.range(at + 4)), scale, what,
                      median ? args.range : a.range(1), args.range);
  };
}

} // namespace

void defineSortFunctions(NamespaceObj &jnp, NamespaceObj &lax) {
  define(jnp, "sort", jnpSort);
  define(jnp, "argsort", jnpArgsort);
  define(lax, "sort", laxSort);
  define(lax, "sort_key_val", laxSortKeyVal);
  define(lax, "top_k", laxTopK);
  define(jnp, "searchsorted", jnpSearchsorted);
  define(jnp, "quantile", quantileFn(1.0, "jnp.quantile", false));
  define(jnp, "percentile", quantileFn(100.0, "jnp.percentile", false));
  define(jnp, "median", quantileFn(1.0, "jnp.median", true));
}

} // namespace pk::elab
