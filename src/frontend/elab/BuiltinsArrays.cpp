//===- BuiltinsArrays.cpp - Array functions built from slices and joins ---===//
//
// The jnp / lax functions kernels use that pkc builds from its structural
// ops (slice, concatenate, reshape, broadcast, transpose) and element-wise
// selects, so that every backend runs them with no op of their own:
//
//   * scans: jnp.cumsum / cumprod, lax.cumsum / cumprod / cummax / cummin
//     / cumlogsumexp
//     and lax.associative_scan, with JAX's own associative_scan algorithm
//     (O(log n) steps of strided slices);
//   * jnp.tile, repeat, pad, roll, flip, diagonal, take,
//     take_along_axis, split, moveaxis and lax.rev, lax.pad (no interior),
//     dynamic_slice / dynamic_update_slice on values;
//   * `x.at[idx].set / add / multiply / min / max / get` on values;
//   * dot_general with batch dimensions and einsum of any operands (one
//     2-D dot per batch element; batched inner and matrix-vector products as a
//     broadcast product and a sum);
//   * lax.switch, lax.select_n and lax.optimization_barrier.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/RefBitcast.h"
#include "frontend/elab/Tree.h"
#include "support/ShapeText.h"

#include <numeric>

namespace pk::elab {

ArrayPtr valueOperand(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  el.requireKernel(r, what);
  if (llvm::isa<RefObj>(o.get()))
    el.fail(r, std::string(what) + " needs a value, not a Ref; read it first, e.g. x_ref[...]");
  if (!ArrayOps::isNumeric(o))
    el.fail(r, std::string(what) + " needs an array, got " + repr(*o));
  return el.arrays().toArray(o, r);
}

namespace {

using ast::BinaryOp;
using ast::CompareOp;

ArrayPtr sliceAxis(Elaborator &el, const ArrayPtr &a, int64_t axis, int64_t start, int64_t limit,
                   int64_t stride, SourceRange r) {
  std::vector<int64_t> s(a->rank(), 0), l = a->shape, st(a->rank(), 1);
  s[axis] = start;
  l[axis] = limit;
  st[axis] = stride;
  return el.arrays().slice(a, s, l, st, r);
}

ArrayPtr concatAxis(Elaborator &el, const std::vector<ArrayPtr> &parts, int64_t axis,
                    SourceRange r) {
  if (parts.size() == 1)
    return parts[0];
  std::vector<Obj> objs(parts.begin(), parts.end());
  return el.arrays().concatenate(objs, axis, r);
}

int64_t product(const std::vector<int64_t> &v, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, v.size()); ++i)
    p *= v[i];
  return p;
}

/// a and b interleaved along `axis`: a[0], b[0], a[1], b[1], ... (a may be
/// one longer). Stacks them on a new axis and merges it, with no arithmetic.
ArrayPtr interleave(Elaborator &el, const ArrayPtr &a, const ArrayPtr &b, int64_t axis,
                    SourceRange r) {
  ArrayOps &ops = el.arrays();
  int64_t na = a->shape[axis], nb = b->shape[axis];
  ArrayPtr head = na == nb ? a : sliceAxis(el, a, axis, 0, nb, 1, r);
  std::vector<int64_t> stacked = head->shape;
  stacked.insert(stacked.begin() + axis + 1, 1);
  ArrayPtr pair = ops.concatenate({ops.reshape(head, stacked, r), ops.reshape(b, stacked, r)},
                                  axis + 1, r);
  std::vector<int64_t> merged = head->shape;
  merged[axis] = 2 * nb;
  ArrayPtr out = ops.reshape(pair, merged, r);
  if (na == nb)
    return out;
  return concatAxis(el, {out, sliceAxis(el, a, axis, na - 1, na, 1, r)}, axis, r);
}

/// Reverses `a` along `axis`.
ArrayPtr flipAxis(Elaborator &el, const ArrayPtr &a, int64_t axis, SourceRange r) {
  int64_t n = a->shape[axis];
  if (n == 1)
    return a;
  // Power-of-two lengths: split the axis into binary digits and swap the
  // two halves of each (index i goes to n-1-i, the complement of its bits).
  if ((n & (n - 1)) == 0) {
    ArrayOps &ops = el.arrays();
    int64_t bits = 0;
    while ((int64_t(1) << bits) < n)
      ++bits;
    std::vector<int64_t> split = a->shape;
    split.erase(split.begin() + axis);
    split.insert(split.begin() + axis, bits, 2);
    ArrayPtr x = ops.reshape(a, split, r);
    for (int64_t k = 0; k < bits; ++k)
      x = concatAxis(el, {sliceAxis(el, x, axis + k, 1, 2, 1, r), sliceAxis(el, x, axis + k, 0, 1, 1, r)},
                     axis + k, r);
    return ops.reshape(x, a->shape, r);
  }
  if (n > 256)
    el.fail(r, "reversing an axis of " + std::to_string(n) +
                   " elements (not a power of two) is not supported; use a power-of-two size");
  std::vector<ArrayPtr> parts;
  for (int64_t i = n - 1; i >= 0; --i)
    parts.push_back(sliceAxis(el, a, axis, i, i + 1, 1, r));
  return concatAxis(el, parts, axis, r);
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

using Combine = std::function<std::vector<ArrayPtr>(const std::vector<ArrayPtr> &,
                                                    const std::vector<ArrayPtr> &)>;

/// lax.associative_scan's recursion (jax/_src/lax/control_flow/loops.py).
std::vector<ArrayPtr> scan(Elaborator &el, const Combine &combine, std::vector<ArrayPtr> elems,
                           int64_t axis, SourceRange r) {
  int64_t n = elems[0]->shape[axis];
  if (n < 2)
    return elems;
  el.spendFuel(r);
  std::vector<ArrayPtr> evens, odds;
  for (const ArrayPtr &e : elems) {
    evens.push_back(sliceAxis(el, e, axis, 0, n - 1, 2, r));
    odds.push_back(sliceAxis(el, e, axis, 1, n, 2, r));
  }
  std::vector<ArrayPtr> oddElems = scan(el, combine, combine(evens, odds), axis, r);
  std::vector<ArrayPtr> evenElems;
  if (n > 2) {
    std::vector<ArrayPtr> left, right;
    for (size_t i = 0; i < elems.size(); ++i) {
      right.push_back(sliceAxis(el, elems[i], axis, 2, n, 2, r));
      int64_t m = oddElems[i]->shape[axis];
      left.push_back(n % 2 == 0 ? sliceAxis(el, oddElems[i], axis, 0, m - 1, 1, r) : oddElems[i]);
    }
    evenElems = combine(left, right);
  }
  std::vector<ArrayPtr> out;
  for (size_t i = 0; i < elems.size(); ++i) {
    ArrayPtr first = sliceAxis(el, elems[i], axis, 0, 1, 1, r);
    ArrayPtr even = n > 2 ? concatAxis(el, {first, evenElems[i]}, axis, r) : first;
    out.push_back(interleave(el, even, oddElems[i], axis, r));
  }
  return out;
}

/// One step of a cumulative reduction: two runs' totals, combined.
using CombineValues = std::function<Obj(const ArrayPtr &, const ArrayPtr &)>;

Obj cumulativeWith(Elaborator &el, const Obj &x, const Obj &axisObj, bool reverse,
                   const CombineValues &combineValues, std::optional<DType> dtype, bool flattenNone,
                   SourceRange r) {
  ArrayPtr a = valueOperand(el, x, r, "a cumulative reduction");
  if (dtype)
    a = el.arrays().cast(a, *dtype, r);
  if (isNone(axisObj) && flattenNone)
    a = el.arrays().reshape(a, {product(a->shape)}, r);
  if (a->rank() == 0)
    el.fail(r, "cumulative reductions need an array of rank at least 1");
  int64_t axis = isNone(axisObj) ? 0 : el.normalizeAxis(axisObj, a->rank(), r);
  ArrayOps &ops = el.arrays();
  Combine combine = [&](const std::vector<ArrayPtr> &u, const std::vector<ArrayPtr> &v) {
    Obj c = combineValues(u[0], v[0]);
    return std::vector<ArrayPtr>{ops.castTo(ops.toArray(c, r), JaxType{a->dtype, a->weak}, r)};
  };
  if (reverse)
    a = flipAxis(el, a, axis, r);
  ArrayPtr result = scan(el, combine, {a}, axis, r)[0];
  if (reverse)
    result = flipAxis(el, result, axis, r);
  return result;
}

Obj cumulative(Elaborator &el, const Obj &x, const Obj &axisObj, bool reverse, Reduction kind,
               std::optional<DType> dtype, bool flattenNone, SourceRange r) {
  ArrayOps &ops = el.arrays();
  CombineValues combine = [&](const ArrayPtr &u, const ArrayPtr &v) -> Obj {
    bool logical = u->dtype == DType::Bool;
    switch (kind) {
    case Reduction::Sum:
      return logical ? ops.logical(BinaryOp::BitOr, u, v, r) : ops.binary(BinaryOp::Add, u, v, r);
    case Reduction::Prod:
      return logical ? ops.logical(BinaryOp::BitAnd, u, v, r) : ops.binary(BinaryOp::Mul, u, v, r);
    case Reduction::Max:
      return ops.maximum(u, v, r);
    default:
      return ops.minimum(u, v, r);
    }
  };
  return cumulativeWith(el, x, axisObj, reverse, combine, dtype, flattenNone, r);
}

/// jnp.cumsum's dtype: small integers and bools accumulate in 32 bits.
std::optional<DType> cumulativeDType(Elaborator &el, const Obj &x, const Obj &dtype, SourceRange r) {
  if (!isNone(dtype))
    return el.toDType(dtype, r, "dtype");
  JaxType t = el.arrays().typeOf(x, r);
  if (t.dtype == DType::Bool || (isSignedInteger(t.dtype) && bitWidth(t.dtype) < 32))
    return DType::I32;
  if (isUnsigned(t.dtype) && bitWidth(t.dtype) < 32)
    return DType::U32;
  return std::nullopt;
}

Obj associativeScan(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"fn"}, {"elems"}, {"reverse", makeBool(false)}, {"axis", makeInt(0)}});
  std::vector<Obj> leaves;
  TreeDef tree = flatten(a[1], leaves);
  if (leaves.empty())
    el.fail(a.range(1), "associative_scan needs at least one array");
  std::vector<ArrayPtr> elems;
  for (const Obj &leaf : leaves)
    elems.push_back(valueOperand(el, leaf, a.range(1), "lax.associative_scan"));
  int64_t axis = el.normalizeAxis(a[3], elems[0]->rank(), a.range(3));
  for (const ArrayPtr &e : elems)
    if (e->rank() != elems[0]->rank() || e->shape[axis] != elems[0]->shape[axis])
      el.fail(a.range(1), "associative_scan's arrays must have the same length along the axis");
  bool reverse = el.truthy(a[2], a.range(2));
  SourceRange r = args.range;
  Combine combine = [&](const std::vector<ArrayPtr> &u, const std::vector<ArrayPtr> &v) {
    std::vector<Obj> uo(u.begin(), u.end()), vo(v.begin(), v.end());
    size_t i = 0, j = 0;
    CallArgs call;
    call.range = r;
    call.addPositional(unflatten(tree, uo, i), r);
    call.addPositional(unflatten(tree, vo, j), r);
    std::vector<Obj> outLeaves;
    flatten(el.call(a[0], call), outLeaves);
    if (outLeaves.size() != u.size())
      el.fail(a.range(0), "associative_scan's function must return the structure it receives");
    std::vector<ArrayPtr> out;
    for (size_t k = 0; k < outLeaves.size(); ++k) {
      ArrayPtr c = el.arrays().toArray(outLeaves[k], r);
      if (c->shape != u[k]->shape)
        el.fail(a.range(0), "associative_scan's function must keep its operands' shapes");
      out.push_back(c);
    }
    return out;
  };
  if (reverse)
    for (ArrayPtr &e : elems)
      e = flipAxis(el, e, axis, r);
  std::vector<ArrayPtr> result = scan(el, combine, elems, axis, r);
  if (reverse)
    for (ArrayPtr &e : result)
      e = flipAxis(el, e, axis, r);
  std::vector<Obj> out(result.begin(), result.end());
  size_t next = 0;
  return unflatten(tree, out, next);
}

//===----------------------------------------------------------------------===//
// Movement: tile, repeat, pad, roll, diagonal, take
//===----------------------------------------------------------------------===//

std::vector<int64_t> intList(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  if (llvm::isa<SequenceObj>(o.get())) {
    std::vector<int64_t> out;
    for (const Obj &item : el.iterate(o, r))
      out.push_back(el.toInt(item, r, what));
    return out;
  }
  return {el.toInt(o, r, what)};
}

Obj tile(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"A"}, {"reps"}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.tile");
  std::vector<int64_t> reps = intList(el, a[1], a.range(1), "reps");
  for (int64_t rep : reps)
    if (rep < 1)
      el.fail(a.range(1), "jnp.tile repetitions must be positive");
  std::vector<int64_t> shape = x->shape;
  while (shape.size() < reps.size())
    shape.insert(shape.begin(), 1);
  while (reps.size() < shape.size())
    reps.insert(reps.begin(), 1);
  if (shape != x->shape)
    x = el.arrays().reshape(x, shape, args.range);
  for (size_t d = 0; d < reps.size(); ++d)
    if (reps[d] > 1)
      x = concatAxis(el, std::vector<ArrayPtr>(reps[d], x), static_cast<int64_t>(d), args.range);
  return x;
}

ArrayPtr takeAlong(Elaborator &el, const ArrayPtr &x, const ArrayPtr &indicesIn, int64_t axis,
                   SourceRange r, bool fill = false);

/// jnp.repeat with an array of repeats, one per element along the axis:
/// the output's length must be static (`total_repeat_length`), as in JAX,
/// which pads with the last element or cuts. Output i takes the element
/// k such that the repeats before k sum to at most i, the last such (JAX
/// builds the same gather from a scatter of those sums).
Obj repeatEach(Elaborator &el, ArrayPtr x, const Obj &repeatsObj, SourceRange repeatsRange,
               const Obj &axisObj, const Obj &totalObj, SourceRange totalRange, SourceRange r) {
  std::optional<int64_t> total = el.staticInt(totalObj);
  if (!total)
    el.fail(isNone(totalObj) ? repeatsRange : totalRange,
            "jnp.repeat with per-element repeats needs a static total_repeat_length (the "
            "output's length would depend on the data)");
  if (*total < 1)
    el.fail(totalRange, "jnp.repeat needs a positive total_repeat_length");
  ArrayOps &ops = el.arrays();
  if (isNone(axisObj))
    x = ops.reshape(x, {product(x->shape)}, r);
  int64_t axis = isNone(axisObj) ? 0 : el.normalizeAxis(axisObj, x->rank(), r);
  int64_t n = x->shape[axis];
  ArrayPtr repeats = ops.castTo(ops.toArray(repeatsObj, repeatsRange), {DType::I32, false}, r);
  if (repeats->rank() > 1 ||
      (repeats->rank() == 1 && repeats->shape[0] != n && repeats->shape[0] != 1))
    el.fail(repeatsRange, "jnp.repeat's repeats must be a scalar or have one entry per element "
                          "along the axis (" +
                              std::to_string(n) + ")");
  repeats = ops.broadcastTo(ops.reshape(repeats, {-1}, r), {n}, r);
  // The repeats before each element: an exclusive prefix sum.
  ArrayPtr before = ops.toArray(
      ops.binary(ast::BinaryOp::Sub,
                 cumulative(el, repeats, none(), false, Reduction::Sum, DType::I32, true, r),
                 repeats, r),
      r);
  ArrayPtr positions = ops.iota({*total, n}, 0, DType::I32, r);
  ArrayPtr starts = ops.broadcastTo(ops.reshape(before, {1, n}, r), {*total, n}, r);
  ArrayPtr started = ops.toArray(ops.compare(ast::CompareOp::Le, starts, positions, r), r);
  ArrayPtr count = ops.toArray(
      ops.reduce(Reduction::Sum, ops.castTo(started, {DType::I32, false}, r), {1}, false, r), r);
  ArrayPtr index = ops.toArray(ops.binary(ast::BinaryOp::Sub, count, makeInt(1), r), r);
  return takeAlong(el, x, ops.castTo(index, {DType::I32, false}, r), axis, r, /*fill=*/false);
}

/// jnp.histogram(a, bins=N, range=, weights=): bin edges, bin indices
/// and counts computed as JAX computes them (linspace's formula in f32,
/// searchsorted to the right, the last edge closing the last bin), so
/// that a value on an edge lands in the same bin.
Obj histogram(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(
      args,
      {{"a"}, {"bins", makeInt(10)}, {"range", none()}, {"weights", none()}, {"density", none()}});
  SourceRange r = args.range;
  ArrayOps &ops = el.arrays();
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.histogram");
  x = ops.reshape(x, {product(x->shape)}, r);
  if (isFloat(x->dtype) && x->dtype != DType::F32)
    el.fail(a.range(0), std::string("jnp.histogram of ") + numpyName(x->dtype) +
                            " values is not supported (float32 and integers are)");
  x = ops.castTo(x, {DType::F32, false}, r);
  std::optional<int64_t> bins = el.staticInt(a[1]);
  if (!bins || *bins < 1)
    el.fail(a.range(1), "jnp.histogram needs a positive static int number of bins (bin edges "
                        "given as an array are not supported)");
  if (!isNone(a[4]) && el.truthy(a[4], a.range(4)))
    el.fail(a.range(4), "jnp.histogram(density=True) is not supported");
  int64_t n = x->shape[0];
  ArrayPtr lo, hi;
  if (isNone(a[2])) {
    lo = ops.toArray(ops.reduce(Reduction::Min, x, {0}, false, r), r);
    hi = ops.toArray(ops.reduce(Reduction::Max, x, {0}, false, r), r);
  } else {
    std::vector<Obj> bounds = el.iterate(a[2], a.range(2));
    if (bounds.size() != 2)
      el.fail(a.range(2), "jnp.histogram's range must be a (low, high) pair");
    lo = ops.castTo(ops.toArray(bounds[0], a.range(2)), {DType::F32, false}, r);
    hi = ops.castTo(ops.toArray(bounds[1], a.range(2)), {DType::F32, false}, r);
  }
  // An empty range widens by half a unit each way, as JAX's does.
  ArrayPtr empty = ops.toArray(ops.compare(ast::CompareOp::Eq, lo, hi, r), r);
  lo = ops.toArray(ops.where(empty, ops.binary(ast::BinaryOp::Sub, lo, makeFloat(0.5), r), lo, r),
                   r);
  hi = ops.toArray(ops.where(empty, ops.binary(ast::BinaryOp::Add, hi, makeFloat(0.5), r), hi, r),
                   r);
  // linspace(lo, hi, bins + 1): lo (1 - i / bins) + hi (i / bins), then hi.
  // (One op a statement: the order of a call's arguments is the
  // compiler's, and the IR must not depend on it.)
  Obj binIndex = ops.iota({*bins}, 0, DType::F32, r);
  Obj binCount = ops.toArray(makeFloat(static_cast<double>(*bins)), r, JaxType{DType::F32, false});
  ArrayPtr step = ops.toArray(ops.binary(ast::BinaryOp::Div, binIndex, binCount, r), r);
  Obj oneMinusStep = ops.binary(
      ast::BinaryOp::Sub, ops.toArray(makeFloat(1.0), r, JaxType{DType::F32, false}), step, r);
  Obj fromLo = ops.binary(ast::BinaryOp::Mul, lo, oneMinusStep, r);
  Obj fromHi = ops.binary(ast::BinaryOp::Mul, hi, step, r);
  ArrayPtr inner = ops.toArray(ops.binary(ast::BinaryOp::Add, fromLo, fromHi, r), r);
  ArrayPtr edges = concatAxis(el, {inner, ops.reshape(hi, {1}, r)}, 0, r);
  int64_t e = *bins + 1;
  // Each value's bin (1-based): the edges at or below it, the last edge
  // itself in the last bin; 0 and bins + 1 are outside.
  Obj edgeRows = ops.broadcastTo(ops.reshape(edges, {1, e}, r), {n, e}, r);
  Obj valueColumns = ops.broadcastTo(ops.reshape(x, {n, 1}, r), {n, e}, r);
  ArrayPtr below = ops.toArray(ops.compare(ast::CompareOp::Le, edgeRows, valueColumns, r), r);
  ArrayPtr index = ops.toArray(
      ops.reduce(Reduction::Sum, ops.castTo(below, {DType::I32, false}, r), {1}, false, r), r);
  ArrayPtr onLast = ops.toArray(ops.compare(ast::CompareOp::Eq, x, ops.reshape(hi, {}, r), r), r);
  index = ops.toArray(ops.where(onLast, makeInt(*bins), index, r), r);
  ArrayPtr weights;
  if (isNone(a[3])) {
    weights = ops.toArray(makeFloat(1.0), r, JaxType{DType::F32, false});
  } else {
    weights = ops.reshape(valueOperand(el, a[3], a.range(3), "jnp.histogram's weights"), {-1}, r);
    if (weights->shape[0] != n)
      el.fail(a.range(3), "weights should have the same shape as a");
    if (isFloat(weights->dtype) && weights->dtype != DType::F32)
      el.fail(a.range(3), "jnp.histogram's weights must be float32 or integers");
    weights = ops.castTo(weights, {DType::F32, false}, r);
  }
  ArrayPtr binIds = ops.toArray(
      ops.binary(ast::BinaryOp::Add, ops.iota({*bins, n}, 0, DType::I32, r), makeInt(1), r), r);
  ArrayPtr inBin = ops.toArray(
      ops.compare(ast::CompareOp::Eq, ops.broadcastTo(ops.reshape(index, {1, n}, r), {*bins, n}, r),
                  binIds, r),
      r);
  ArrayPtr counts = ops.toArray(
      ops.reduce(Reduction::Sum, ops.where(inBin, weights, makeFloat(0.0), r), {1}, false, r), r);
  return makeTuple({ops.castTo(counts, {DType::F32, false}, r), edges});
}

Obj repeat(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"repeats"}, {"axis", none()},
                               {"total_repeat_length", none(), true}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.repeat");
  if (!el.staticInt(a[1]))
    return repeatEach(el, x, a[1], a.range(1), a[2], a[3], a.range(3), args.range);
  int64_t n = *el.staticInt(a[1]);
  if (n < 1)
    el.fail(a.range(1), "jnp.repeat needs a positive number of repeats");
  ArrayOps &ops = el.arrays();
  if (isNone(a[2]))
    x = ops.reshape(x, {product(x->shape)}, args.range);
  int64_t axis = isNone(a[2]) ? 0 : el.normalizeAxis(a[2], x->rank(), a.range(2));
  std::vector<int64_t> expanded = x->shape, broadcast = x->shape, merged = x->shape;
  expanded.insert(expanded.begin() + axis + 1, 1);
  broadcast.insert(broadcast.begin() + axis + 1, n);
  merged[axis] *= n;
  return ops.reshape(ops.broadcastTo(ops.reshape(x, expanded, args.range), broadcast, args.range),
                     merged, args.range);
}

/// ((before, after), ...) for `rank` axes from jnp.pad's pad_width.
std::vector<std::pair<int64_t, int64_t>> padWidths(Elaborator &el, const Obj &o, int64_t rank,
                                                   SourceRange r) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto pair = [&](const Obj &p) -> std::pair<int64_t, int64_t> {
    std::vector<int64_t> v = intList(el, p, r, "pad width");
    if (v.size() == 1)
      return {v[0], v[0]};
    if (v.size() != 2)
      el.fail(r, "a pad width is an int or a (before, after) pair");
    return {v[0], v[1]};
  };
  if (!llvm::isa<SequenceObj>(o.get())) {
    auto p = pair(o);
    return std::vector<std::pair<int64_t, int64_t>>(rank, p);
  }
  std::vector<Obj> items = el.iterate(o, r);
  bool nested = !items.empty() && llvm::isa<SequenceObj>(items[0].get());
  if (!nested) {
    auto p = pair(o);
    return std::vector<std::pair<int64_t, int64_t>>(rank, p);
  }
  if (items.size() == 1)
    return std::vector<std::pair<int64_t, int64_t>>(rank, pair(items[0]));
  if (static_cast<int64_t>(items.size()) != rank)
    el.fail(r, "pad_width has " + std::to_string(items.size()) + " entries but the array has rank " +
                   std::to_string(rank));
  for (const Obj &item : items)
    out.push_back(pair(item));
  for (auto &[lo, hi] : out)
    if (lo < 0 || hi < 0)
      el.fail(r, "pad widths must not be negative");
  return out;
}

Obj pad(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"array"}, {"pad_width"}, {"mode", makeStr("constant")},
                               {"constant_values", makeInt(0), true},
                               {"stat_length", none(), true}, {"reflect_type", makeStr("even"), true}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.pad");
  std::string mode = el.toStr(a[2], a.range(2), "mode");
  auto widths = padWidths(el, a[1], x->rank(), a.range(1));
  SourceRange r = args.range;
  ArrayOps &ops = el.arrays();
  for (int64_t axis = 0; axis < x->rank(); ++axis) {
    auto [before, after] = widths[axis];
    if (!before && !after)
      continue;
    int64_t n = x->shape[axis];
    std::vector<ArrayPtr> parts;
    auto filled = [&](int64_t count, const Obj &value) {
      std::vector<int64_t> shape = x->shape;
      shape[axis] = count;
      return ops.castTo(ops.full(shape, value, x->dtype, r), JaxType{x->dtype, x->weak}, r);
    };
    if (mode == "constant") {
      // constant_values: a scalar, (lo, hi), or ((lo, hi), ...) per axis.
      Obj lo = a[3], hi = a[3];
      if (auto *seq = llvm::dyn_cast<SequenceObj>(a[3].get()); seq && !seq->items.empty()) {
        Obj entry = a[3];
        if (llvm::isa<SequenceObj>(seq->items[0].get()))
          entry = seq->items[seq->items.size() == 1 ? 0 : std::min<size_t>(axis, seq->items.size() - 1)];
        std::vector<Obj> pairValues = el.iterate(entry, a.range(3));
        lo = pairValues.front();
        hi = pairValues.back();
      }
      if (before)
        parts.push_back(filled(before, lo));
      parts.push_back(x);
      if (after)
        parts.push_back(filled(after, hi));
    } else if (mode == "edge") {
      if (before)
        parts.push_back(concatAxis(el, std::vector<ArrayPtr>(before, sliceAxis(el, x, axis, 0, 1, 1, r)), axis, r));
      parts.push_back(x);
      if (after)
        parts.push_back(concatAxis(el, std::vector<ArrayPtr>(after, sliceAxis(el, x, axis, n - 1, n, 1, r)), axis, r));
    } else if (mode == "wrap") {
      // Whole copies, then the remainder, on each side.
      auto wrapped = [&](int64_t count, bool front) {
        std::vector<ArrayPtr> pieces;
        int64_t rest = count % n;
        if (front && rest)
          pieces.push_back(sliceAxis(el, x, axis, n - rest, n, 1, r));
        for (int64_t k = 0; k < count / n; ++k)
          pieces.push_back(x);
        if (!front && rest)
          pieces.push_back(sliceAxis(el, x, axis, 0, rest, 1, r));
        return concatAxis(el, pieces, axis, r);
      };
      if (before)
        parts.push_back(wrapped(before, true));
      parts.push_back(x);
      if (after)
        parts.push_back(wrapped(after, false));
    } else if (mode == "reflect" || mode == "symmetric") {
      int64_t edge = mode == "reflect" ? 1 : 0;
      if (before > n - edge || after > n - edge)
        el.fail(r, "jnp.pad mode '" + mode + "' with a width past the array's length is not supported");
      if (before)
        parts.push_back(flipAxis(el, sliceAxis(el, x, axis, edge, edge + before, 1, r), axis, r));
      parts.push_back(x);
      if (after)
        parts.push_back(flipAxis(el, sliceAxis(el, x, axis, n - edge - after, n - edge, 1, r), axis, r));
    } else {
      el.fail(a.range(2), "jnp.pad mode '" + mode + "' is not supported (constant, edge, wrap, "
                          "reflect and symmetric are)");
    }
    x = concatAxis(el, parts, axis, r);
  }
  return x;
}

ArrayPtr rollStatic(Elaborator &el, const ArrayPtr &x, int64_t shift, int64_t axis, SourceRange r) {
  int64_t n = x->shape[axis];
  shift = ((shift % n) + n) % n;
  if (!shift)
    return x;
  return concatAxis(el, {sliceAxis(el, x, axis, n - shift, n, 1, r), sliceAxis(el, x, axis, 0, n - shift, 1, r)},
                    axis, r);
}

/// x rolled by `shift` (static or dynamic) along `axis`: element i moves to
/// i + shift (mod n).
ArrayPtr rollAxis(Elaborator &el, const ArrayPtr &x, const Obj &shift, int64_t axis, SourceRange r);

Obj roll(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"shift"}, {"axis", none()}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.roll");
  std::vector<Obj> shifts = llvm::isa<SequenceObj>(a[1].get()) ? el.iterate(a[1], a.range(1))
                                                                : std::vector<Obj>{a[1]};
  if (isNone(a[2])) {
    if (shifts.size() != 1)
      el.fail(a.range(1), "jnp.roll without an axis takes one shift");
    ArrayPtr flat = el.arrays().reshape(x, {product(x->shape)}, args.range);
    return el.arrays().reshape(rollAxis(el, flat, shifts[0], 0, args.range), x->shape, args.range);
  }
  std::vector<Obj> axes = llvm::isa<SequenceObj>(a[2].get()) ? el.iterate(a[2], a.range(2))
                                                              : std::vector<Obj>{a[2]};
  if (shifts.size() == 1 && axes.size() > 1)
    shifts.assign(axes.size(), shifts[0]);
  if (shifts.size() != axes.size())
    el.fail(a.range(2), "jnp.roll needs one shift per axis");
  for (size_t i = 0; i < axes.size(); ++i)
    x = rollAxis(el, x, shifts[i], el.normalizeAxis(axes[i], x->rank(), a.range(2)), args.range);
  return x;
}

/// The lowest value of a dtype, for selecting one element with a max.
Obj lowest(DType t) {
  if (t == DType::Bool)
    return makeBool(false);
  if (isFloat(t))
    return makeFloat(-std::numeric_limits<double>::infinity());
  if (isUnsigned(t))
    return makeInt(0);
  return makeInt(bitWidth(t) == 64 ? INT64_MIN : -(int64_t(1) << (bitWidth(t) - 1)));
}

/// The element of `x` along `axis` where `mask` (broadcast to x's shape)
/// holds, exactly: a max over the selected element and the lowest value.
ArrayPtr selectAlong(Elaborator &el, const ArrayPtr &x, const Obj &mask, int64_t axis, SourceRange r) {
  ArrayOps &ops = el.arrays();
  Obj picked = ops.where(mask, x, ops.castTo(ops.toArray(lowest(x->dtype), r), JaxType{x->dtype, false}, r), r);
  Obj reduced = ops.reduce(x->dtype == DType::Bool ? Reduction::Any : Reduction::Max, picked, {axis},
                           false, r);
  return ops.castTo(ops.toArray(reduced, r), JaxType{x->dtype, x->weak}, r);
}

Obj diagonal(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"offset", makeInt(0)}, {"axis1", makeInt(0)}, {"axis2", makeInt(1)}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.diagonal");
  if (x->rank() < 2)
    el.fail(a.range(0), "jnp.diagonal needs an array of rank at least 2");
  int64_t offset = el.toInt(a[1], a.range(1), "offset");
  int64_t ax1 = el.normalizeAxis(a[2], x->rank(), a.range(2)),
          ax2 = el.normalizeAxis(a[3], x->rank(), a.range(3));
  if (ax1 == ax2)
    el.fail(a.range(3), "axis1 and axis2 cannot be the same");
  ArrayOps &ops = el.arrays();
  SourceRange r = args.range;
  // Move the two axes last: (..., n, m).
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x->rank(); ++d)
    if (d != ax1 && d != ax2)
      perm.push_back(d);
  perm.push_back(ax1);
  perm.push_back(ax2);
  x = ops.transpose(x, perm, r);
  int64_t n = x->shape[x->rank() - 2], m = x->shape[x->rank() - 1];
  int64_t rowStart = offset >= 0 ? 0 : -offset, colStart = offset >= 0 ? offset : 0;
  int64_t length = std::min(n - rowStart, m - colStart);
  if (length <= 0)
    el.fail(a.range(1), "the diagonal at this offset is empty");
  x = sliceAxis(el, x, x->rank() - 2, rowStart, rowStart + length, 1, r);
  x = sliceAxis(el, x, x->rank() - 1, colStart, colStart + length, 1, r);
  std::vector<int64_t> square = {length, length};
  Obj rows = ops.iota(square, 0, DType::I32, r), columns = ops.iota(square, 1, DType::I32, r);
  Obj onDiagonal = ops.compare(CompareOp::Eq, rows, columns, r);
  return selectAlong(el, x, onDiagonal, x->rank() - 1, r);
}

/// Whether integer indices lie in [-n, n), as Python's indexing accepts them.
/// (One op a statement here and below: the order of a call's arguments is
/// the compiler's, and the IR must not depend on it.)
Obj inRange(ArrayOps &ops, const Obj &indices, int64_t n, SourceRange r) {
  Obj fromMinusN = ops.compare(CompareOp::Ge, indices, makeInt(-n), r);
  Obj belowN = ops.compare(CompareOp::Lt, indices, makeInt(n), r);
  return ops.logical(BinaryOp::BitAnd, fromMinusN, belowN, r);
}

/// `x` along `axis` at the integer positions `indices`: out has indices'
/// shape in place of the axis. One-hot selection, exact for every value.
/// What jnp.take gives for an index out of range ("fill" mode): NaN, the
/// smallest signed integer, the largest unsigned one, True.
Obj fillValue(DType t) {
  if (t == DType::Bool)
    return makeBool(true);
  if (isFloat(t))
    return makeFloat(std::numeric_limits<double>::quiet_NaN());
  if (isUnsigned(t))
    return makeInt(bitWidth(t) >= 64 ? -1 : static_cast<int64_t>((uint64_t(1) << bitWidth(t)) - 1));
  return lowest(t);
}

ArrayPtr takeAlong(Elaborator &el, const ArrayPtr &x, const ArrayPtr &indicesIn, int64_t axis,
                   SourceRange r, bool fill) {
  ArrayOps &ops = el.arrays();
  int64_t n = x->shape[axis];
  ArrayPtr indices = ops.cast(indicesIn, DType::I32, r);
  // With `fill`, indices outside [-n, n) select the fill value; otherwise
  // they clamp, as JAX's gathers do. Negative ones count from the end.
  Obj valid;
  if (fill)
    valid = inRange(ops, indices, n, r);
  indices = ops.toArray(ops.wrapNegativeIndex(indices, n, r), r);
  indices = ops.toArray(ops.minimum(ops.maximum(indices, makeInt(0), r), makeInt(n - 1), r), r);
  // result[pre..., idx..., post...] = x[pre..., indices[idx...], post...]
  std::vector<int64_t> pre(x->shape.begin(), x->shape.begin() + axis),
      post(x->shape.begin() + axis + 1, x->shape.end());
  std::vector<int64_t> outShape = pre;
  outShape.insert(outShape.end(), indices->shape.begin(), indices->shape.end());
  outShape.insert(outShape.end(), post.begin(), post.end());
  // Work shape: out shape with the selected axis (size n) appended.
  std::vector<int64_t> work = outShape;
  work.push_back(n);
  size_t k = indices->shape.size();
  std::vector<int64_t> xShape = pre;
  xShape.insert(xShape.end(), k, 1);
  xShape.insert(xShape.end(), post.begin(), post.end());
  xShape.push_back(n);
  // x with the axis moved last, broadcast over the index dims.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x->rank(); ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  ArrayPtr xs = ops.broadcastTo(ops.reshape(ops.transpose(x, perm, r), xShape, r), work, r);
  std::vector<int64_t> iShape(pre.size(), 1);
  iShape.insert(iShape.end(), indices->shape.begin(), indices->shape.end());
  iShape.insert(iShape.end(), post.size() + 1, 1);
  ArrayPtr is = ops.broadcastTo(ops.reshape(indices, iShape, r), work, r);
  Obj mask = ops.compare(CompareOp::Eq, is, ops.iota(work, static_cast<int64_t>(work.size() - 1), DType::I32, r), r);
  ArrayPtr selected = selectAlong(el, xs, mask, static_cast<int64_t>(work.size() - 1), r);
  if (!fill)
    return selected;
  std::vector<int64_t> validShape(pre.size(), 1);
  validShape.insert(validShape.end(), indices->shape.begin(), indices->shape.end());
  validShape.insert(validShape.end(), post.size(), 1);
  ArrayPtr v = ops.broadcastTo(ops.reshape(ops.toArray(valid, r), validShape, r), outShape, r);
  ArrayPtr filler = ops.castTo(ops.toArray(fillValue(x->dtype), r), JaxType{x->dtype, false}, r);
  return ops.castTo(ops.toArray(ops.where(v, selected, filler, r), r), JaxType{x->dtype, x->weak}, r);
}

ArrayPtr rollAxis(Elaborator &el, const ArrayPtr &x, const Obj &shift, int64_t axis, SourceRange r) {
  if (std::optional<int64_t> s = el.staticInt(shift))
    return rollStatic(el, x, *s, axis, r);
  // A dynamic shift: result[i] = x[(i - shift) mod n], a one-hot selection.
  ArrayOps &ops = el.arrays();
  int64_t n = x->shape[axis];
  Obj iota = ops.iota({n}, 0, DType::I32, r);
  Obj shiftI32 = ops.cast(ops.toArray(shift, r), DType::I32, r);
  Obj positions =
      ops.binary(BinaryOp::Mod, ops.binary(BinaryOp::Sub, iota, shiftI32, r), makeInt(n), r);
  return takeAlong(el, x, ops.toArray(positions, r), axis, r);
}

Obj take(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"indices"}, {"axis", none()}, {"out", none(), true},
                               {"mode", none(), true}, {"unique_indices", none(), true},
                               {"indices_are_sorted", none(), true}, {"fill_value", none(), true}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.take");
  if (isNone(a[2]))
    x = el.arrays().reshape(x, {product(x->shape)}, args.range);
  int64_t axis = isNone(a[2]) ? 0 : el.normalizeAxis(a[2], x->rank(), a.range(2));
  ArrayPtr idx = el.arrays().toArray(a[1], a.range(1));
  if (!isInteger(idx->dtype))
    el.fail(a.range(1), "jnp.take needs integer indices");
  bool clip = !isNone(a[4]) && el.toStr(a[4], a.range(4), "mode") == "clip";
  return takeAlong(el, x, idx, axis, args.range, /*fill=*/!clip);
}

Obj takeAlongAxis(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"arr"}, {"indices"}, {"axis"}, {"mode", none(), true},
                               {"fill_value", none(), true}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.take_along_axis");
  ArrayPtr idx = el.arrays().toArray(a[1], a.range(1));
  if (idx->rank() != x->rank())
    el.fail(a.range(1), "take_along_axis needs indices of the array's rank");
  int64_t axis = el.normalizeAxis(a[2], x->rank(), a.range(2));
  ArrayOps &ops = el.arrays();
  SourceRange r = args.range;
  // out[..., j, ...] = x[..., idx[..., j, ...], ...]: one-hot over x's axis.
  std::vector<int64_t> shape = ops.broadcastShapes(x->shape, idx->shape, r);
  shape[axis] = idx->shape[axis];
  int64_t n = x->shape[axis];
  std::vector<int64_t> work = shape;
  work.push_back(n);
  // x with its axis moved last, as a trailing size-n axis.
  std::vector<int64_t> moved;
  for (int64_t d = 0; d < x->rank(); ++d)
    if (d != axis)
      moved.push_back(d);
  moved.push_back(axis);
  std::vector<int64_t> movedShape;
  for (int64_t d : moved)
    movedShape.push_back(x->shape[d]);
  ArrayPtr xt = ops.transpose(x, moved, r);
  std::vector<int64_t> withUnit = movedShape;
  withUnit.insert(withUnit.begin() + axis, 1);
  ArrayPtr xb = ops.broadcastTo(ops.reshape(xt, withUnit, r), work, r);
  ArrayPtr i32 = ops.cast(idx, DType::I32, r);
  bool clip = !isNone(a[3]) && el.toStr(a[3], a.range(3), "mode") == "clip";
  Obj valid = inRange(ops, i32, n, r);
  i32 = ops.toArray(ops.wrapNegativeIndex(i32, n, r), r);
  i32 = ops.toArray(ops.minimum(ops.maximum(i32, makeInt(0), r), makeInt(n - 1), r), r);
  std::vector<int64_t> idxShape = i32->shape;
  idxShape.push_back(1);
  ArrayPtr ib = ops.broadcastTo(ops.reshape(ops.broadcastTo(i32, shape, r), idxShape, r), work, r);
  Obj mask = ops.compare(CompareOp::Eq, ib, ops.iota(work, static_cast<int64_t>(work.size() - 1), DType::I32, r), r);
  ArrayPtr selected = selectAlong(el, xb, mask, static_cast<int64_t>(work.size() - 1), r);
  if (clip)
    return selected;
  ArrayPtr v = ops.broadcastTo(ops.toArray(valid, r), shape, r);
  ArrayPtr filler = ops.castTo(ops.toArray(fillValue(x->dtype), r), JaxType{x->dtype, false}, r);
  return ops.castTo(ops.toArray(ops.where(v, selected, filler, r), r), JaxType{x->dtype, x->weak}, r);
}

Obj split(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"ary"}, {"indices_or_sections"}, {"axis", makeInt(0)}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.split");
  int64_t axis = el.normalizeAxis(a[2], x->rank(), a.range(2));
  int64_t n = x->shape[axis];
  std::vector<int64_t> cuts;
  if (llvm::isa<SequenceObj>(a[1].get())) {
    cuts = intList(el, a[1], a.range(1), "split index");
  } else {
    int64_t sections = el.toInt(a[1], a.range(1), "sections");
    if (sections <= 0 || n % sections)
      el.fail(a.range(1), "array split does not result in an equal division");
    for (int64_t k = 1; k < sections; ++k)
      cuts.push_back(k * (n / sections));
  }
  std::vector<Obj> parts;
  int64_t start = 0;
  cuts.push_back(n);
  for (int64_t cut : cuts) {
    cut = std::clamp<int64_t>(cut < 0 ? cut + n : cut, 0, n);
    if (cut <= start)
      el.fail(a.range(1), "jnp.split pieces must not be empty (zero-size arrays are not supported)");
    parts.push_back(sliceAxis(el, x, axis, start, cut, 1, args.range));
    start = cut;
  }
  return makeList(parts);
}

Obj flip(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"m"}, {"axis", none()}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.flip");
  std::vector<int64_t> axes;
  if (isNone(a[1]))
    for (int64_t d = 0; d < x->rank(); ++d)
      axes.push_back(d);
  else
    axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
  for (int64_t axis : axes)
    x = flipAxis(el, x, axis, args.range);
  return x;
}

Obj moveaxis(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"a"}, {"source"}, {"destination"}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "jnp.moveaxis");
  std::vector<int64_t> src = el.normalizeAxes(a[1], x->rank(), a.range(1)),
                       dst = el.normalizeAxes(a[2], x->rank(), a.range(2));
  if (src.size() != dst.size())
    el.fail(args.range, "moveaxis needs as many destinations as sources");
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x->rank(); ++d)
    if (!llvm::is_contained(src, d))
      order.push_back(d);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (size_t i = 0; i < src.size(); ++i)
    moves.emplace_back(dst[i], src[i]);
  std::sort(moves.begin(), moves.end());
  for (auto [to, from] : moves)
    order.insert(order.begin() + to, from);
  return el.arrays().transpose(x, order, args.range);
}

//===----------------------------------------------------------------------===//
// Dynamic windows of values, x.at[...] updates
//===----------------------------------------------------------------------===//

/// A scalar start index for an axis of size `n` with a window of `size`,
/// clamped as lax.dynamic_slice clamps (an i32 value), or static.
Obj clampedStart(Elaborator &el, const Obj &start, int64_t n, int64_t size, SourceRange r) {
  if (std::optional<int64_t> s = el.staticInt(start))
    return makeInt(std::clamp<int64_t>(*s, 0, n - size));
  ArrayOps &ops = el.arrays();
  ArrayPtr s = ops.cast(ops.toArray(start, r), DType::I32, r);
  return ops.minimum(ops.maximum(s, makeInt(0), r), makeInt(n - size), r);
}

/// x[..., start:start+size, ...] along `axis` with a dynamic start: a
/// one-hot selection per output position.
ArrayPtr dynamicSliceAxis(Elaborator &el, const ArrayPtr &x, const Obj &start, int64_t size,
                          int64_t axis, SourceRange r) {
  if (std::optional<int64_t> s = el.staticInt(start))
    return sliceAxis(el, x, axis, *s, *s + size, 1, r);
  ArrayOps &ops = el.arrays();
  ArrayPtr positions = ops.toArray(
      ops.binary(BinaryOp::Add, ops.iota({size}, 0, DType::I32, r), start, r), r);
  return takeAlong(el, x, positions, axis, r);
}

Obj dynamicSlice(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"operand"}, {"start_indices"}, {"slice_sizes"}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.dynamic_slice");
  std::vector<Obj> starts = el.iterate(a[1], a.range(1));
  std::vector<int64_t> sizes = intList(el, a[2], a.range(2), "slice size");
  if (static_cast<int64_t>(starts.size()) != x->rank() || static_cast<int64_t>(sizes.size()) != x->rank())
    el.fail(args.range, "lax.dynamic_slice needs one start and one size per axis");
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (sizes[d] < 1 || sizes[d] > x->shape[d])
      el.fail(a.range(2), "slice size " + std::to_string(sizes[d]) + " does not fit axis " +
                              std::to_string(d) + " of size " + std::to_string(x->shape[d]));
    x = dynamicSliceAxis(el, x, clampedStart(el, starts[d], x->shape[d], sizes[d], args.range),
                         sizes[d], d, args.range);
  }
  return x;
}

/// The positions (a boolean mask of x's shape) and the update broadcast to
/// x's shape for writing `update` at `starts` (static or dynamic, clamped).
std::pair<Obj, ArrayPtr> placeUpdate(Elaborator &el, const ArrayPtr &x, const ArrayPtr &update,
                                     const std::vector<Obj> &starts, SourceRange r,
                                     bool clamp = true) {
  ArrayOps &ops = el.arrays();
  Obj mask = makeBool(true);
  ArrayPtr placed = update;
  for (int64_t d = 0; d < x->rank(); ++d) {
    int64_t n = x->shape[d], size = placed->shape[d];
    // Without `clamp` (x.at[i] updates), a window outside the array writes
    // nothing, as JAX's scatters drop out-of-bounds updates.
    Obj start = clamp ? clampedStart(el, starts[d], n, size, r) : starts[d];
    ArrayPtr iota = ops.iota(x->shape, d, DType::I32, r);
    Obj fromStart = ops.compare(CompareOp::Ge, iota, start, r);
    Obj end = ops.binary(BinaryOp::Add, start, makeInt(size), r);
    Obj inside =
        ops.logical(BinaryOp::BitAnd, fromStart, ops.compare(CompareOp::Lt, iota, end, r), r);
    mask = ops.logical(BinaryOp::BitAnd, mask, inside, r);
    if (size == n)
      continue;
    // Spread the update along the axis: position i takes update[i - start].
    if (std::optional<int64_t> s = el.staticInt(start)) {
      std::vector<ArrayPtr> parts;
      std::vector<int64_t> shape = placed->shape;
      if (*s) {
        shape[d] = *s;
        parts.push_back(ops.castTo(ops.full(shape, makeInt(0), placed->dtype, r), JaxType{placed->dtype, placed->weak}, r));
      }
      parts.push_back(placed);
      if (n - *s - size) {
        shape[d] = n - *s - size;
        parts.push_back(ops.castTo(ops.full(shape, makeInt(0), placed->dtype, r), JaxType{placed->dtype, placed->weak}, r));
      }
      placed = concatAxis(el, parts, d, r);
    } else {
      ArrayPtr positions = ops.toArray(ops.binary(BinaryOp::Sub, ops.iota({n}, 0, DType::I32, r), start, r), r);
      placed = takeAlong(el, placed, positions, d, r);
    }
  }
  return {mask, ops.broadcastTo(placed, x->shape, r)};
}

Obj dynamicUpdateSlice(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"operand"}, {"update"}, {"start_indices"}});
  ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.dynamic_update_slice");
  ArrayPtr u = el.arrays().castTo(el.arrays().toArray(a[1], a.range(1)), JaxType{x->dtype, x->weak},
                                  a.range(1));
  std::vector<Obj> starts = el.iterate(a[2], a.range(2));
  if (u->rank() != x->rank() || static_cast<int64_t>(starts.size()) != x->rank())
    el.fail(args.range, "lax.dynamic_update_slice needs an update of the operand's rank and one "
                        "start per axis");
  auto [mask, placed] = placeUpdate(el, x, u, starts, args.range);
  return el.arrays().where(mask, placed, x, args.range);
}

enum class AtUpdate { Set, Add, Multiply, Divide, Min, Max, Power };

/// `x.at[idx].set(v)` and friends: idx holds ints, slices (step 1),
/// pl.ds-like windows and dynamic scalar indices.
Obj atUpdate(Elaborator &el, const ArrayPtr &x, const Obj &index, const Obj &value, AtUpdate kind,
             SourceRange r) {
  ArrayOps &ops = el.arrays();
  JaxType xt{x->dtype, x->weak};
  // A boolean mask of the array's shape with a scalar update
  // (`x.at[jnp.isnan(x)].set(0)`): the update where the mask holds.
  if (auto *mask = llvm::dyn_cast<ArrayObj>(index.get()); mask && mask->dtype == DType::Bool) {
    ArrayPtr u = ops.toArray(value, r);
    if (mask->shape != x->shape || u->rank() != 0)
      el.fail(r, "x.at[mask] updates take a boolean mask of the array's shape (" +
                     shapeText(x->shape) + ") and a scalar; for other masks use jnp.where");
    Obj combined;
    switch (kind) {
    case AtUpdate::Set:
      combined = u;
      break;
    case AtUpdate::Add:
      combined = ops.binary(BinaryOp::Add, x, u, r);
      break;
    case AtUpdate::Multiply:
      combined = ops.binary(BinaryOp::Mul, x, u, r);
      break;
    case AtUpdate::Divide:
      combined = ops.binary(BinaryOp::Div, x, u, r);
      break;
    case AtUpdate::Power:
      combined = ops.power(x, u, r);
      break;
    case AtUpdate::Min:
      combined = ops.minimum(x, u, r);
      break;
    default:
      combined = ops.maximum(x, u, r);
      break;
    }
    ArrayPtr c = ops.broadcastTo(ops.castTo(ops.toArray(combined, r), xt, r), x->shape, r);
    return ops.where(index, c, x, r);
  }
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);
  // Expand `...` and trailing axes; collect each axis's start and size.
  std::vector<Obj> starts;
  std::vector<int64_t> sizes, updateShape;
  size_t given = 0;
  for (const Obj &e : entries)
    given += llvm::isa<EllipsisObj>(e.get()) ? 0 : 1;
  if (given > static_cast<size_t>(x->rank()))
    el.fail(r, "too many indices for an array of rank " + std::to_string(x->rank()));
  int64_t axis = 0;
  auto addWhole = [&](int64_t count) {
    for (int64_t k = 0; k < count; ++k, ++axis) {
      starts.push_back(makeInt(0));
      sizes.push_back(x->shape[axis]);
      updateShape.push_back(x->shape[axis]);
    }
  };
  for (const Obj &e : entries) {
    if (llvm::isa<EllipsisObj>(e.get())) {
      addWhole(x->rank() - static_cast<int64_t>(given));
      continue;
    }
    int64_t n = x->shape[axis];
    if (auto *s = llvm::dyn_cast<SliceObj>(e.get())) {
      auto bound = [&](const Obj &o, int64_t fallback) {
        if (isNone(o))
          return fallback;
        int64_t v = el.toInt(o, r, "slice bound");
        return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n);
      };
      if (!isNone(s->step) && el.toInt(s->step, r, "slice step") != 1)
        el.fail(r, "x.at[...] updates with strided slices are not supported");
      int64_t lo = bound(s->start, 0), hi = bound(s->stop, n);
      if (hi <= lo)
        el.fail(r, "x.at[...] slice selects no elements");
      starts.push_back(makeInt(lo));
      sizes.push_back(hi - lo);
      updateShape.push_back(hi - lo);
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      staticDsSize(el, *ds, r);
      starts.push_back(ds->start);
      sizes.push_back(ds->size);
      updateShape.push_back(ds->size);
    } else if (ArrayOps::isNumeric(e) && !llvm::isa<FloatObj>(e.get())) {
      if (auto *arr = llvm::dyn_cast<ArrayObj>(e.get()); arr && arr->rank() > 0)
        el.fail(r, "x.at[...] updates with integer-array indices (scatters on values) are not "
                   "supported; write through a Ref instead");
      Obj i = e;
      if (std::optional<int64_t> v = el.staticInt(e)) {
        if (*v < -n || *v >= n)
          el.fail(r, "index " + std::to_string(*v) + " is out of bounds for axis " +
                         std::to_string(axis) + " with size " + std::to_string(n));
        i = makeInt(*v < 0 ? *v + n : *v);
      } else { // a negative index counts from the end
        ArrayPtr iv = ops.cast(ops.toArray(e, r), DType::I32, r);
        i = ops.wrapNegativeIndex(iv, n, r);
      }
      starts.push_back(i);
      sizes.push_back(1);
      // An int index drops the axis from the update's shape.
    } else {
      el.fail(r, "x.at[...] takes ints, slices and pl.ds, got " + repr(*e));
    }
    ++axis;
  }
  addWhole(x->rank() - axis);
  // The update value, broadcast to the window (with the int axes kept as 1).
  ArrayPtr u = ops.toArray(value, r);
  std::vector<int64_t> windowShape = sizes;
  std::vector<int64_t> target = updateShape;
  u = ops.broadcastTo(u, target, r);
  u = ops.reshape(u, windowShape, r);
  if (kind == AtUpdate::Set) {
    u = ops.castTo(u, xt, r);
    auto [mask, placed] = placeUpdate(el, x, u, starts, r, /*clamp=*/false);
    return ops.where(mask, placed, x, r);
  }
  // add / multiply / ...: combine the window with the update, then set it.
  ArrayPtr window = x;
  for (int64_t d = 0; d < x->rank(); ++d)
    window = dynamicSliceAxis(el, window, clampedStart(el, starts[d], x->shape[d], sizes[d], r),
                              sizes[d], d, r);
  Obj combined;
  switch (kind) {
  case AtUpdate::Add: combined = ops.binary(BinaryOp::Add, window, u, r); break;
  case AtUpdate::Multiply: combined = ops.binary(BinaryOp::Mul, window, u, r); break;
  case AtUpdate::Divide: combined = ops.binary(BinaryOp::Div, window, u, r); break;
  case AtUpdate::Power: combined = ops.power(window, u, r); break;
  case AtUpdate::Min: combined = ops.minimum(window, u, r); break;
  default: combined = ops.maximum(window, u, r); break;
  }
  ArrayPtr c = ops.castTo(ops.toArray(combined, r), xt, r);
  auto [mask, placed] = placeUpdate(el, x, c, starts, r, /*clamp=*/false);
  return ops.where(mask, placed, x, r);
}

} // namespace

/// `x` with axis `axis` narrowed by a static slice (its step too).
ArrayPtr sliceValueAxis(Elaborator &el, const ArrayPtr &x, int64_t axis, const Obj &slice,
                        SourceRange r) {
  std::vector<Obj> index(static_cast<size_t>(axis),
                         std::make_shared<SliceObj>(none(), none(), none()));
  index.push_back(slice);
  return el.arrays().toArray(subscript(el, x, makeTuple(index), r), r);
}

/// `x` with axis `axis` narrowed to a pl.ds window of unit stride: a
/// negative start counts from the end, then the window is clamped into
/// the axis, as lax.dynamic_slice does.
ArrayPtr dsValueAxis(Elaborator &el, const ArrayPtr &x, int64_t axis, const DynamicSliceObj &ds,
                     SourceRange r) {
  ArrayOps &ops = el.arrays();
  int64_t n = x->shape[axis];
  staticDsSize(el, ds, r);
  if (ds.stride != 1)
    el.fail(r, "indexing a value with a strided pl.ds is not supported");
  if (ds.size > n)
    el.fail(r, "pl.ds size " + std::to_string(ds.size) + " exceeds axis " + std::to_string(axis) +
                   " of size " + std::to_string(n));
  Obj start = ds.start;
  if (!el.staticInt(start))
    start = ops.wrapNegativeIndex(ops.cast(ops.toArray(start, r), DType::I32, r), n, r);
  return dynamicSliceAxis(el, x, clampedStart(el, start, n, ds.size, r), ds.size, axis, r);
}

/// `x[index]` on a value with several integer indices, one of them an
/// array (an expanded index: one entry per leading axis, no Ellipsis):
/// NumPy's advanced indexing. The integer indices broadcast together and
/// select along their axes at once; their shape takes their place when
/// they are adjacent (`x[:, i, j]`), else it comes first (`x[i, :, j]`).
/// Slices and pl.ds keep their axes. Entries clamp, as JAX's gathers do.
ArrayPtr indexValueAdvanced(Elaborator &el, ArrayPtr x, const std::vector<Obj> &expanded,
                            SourceRange r) {
  ArrayOps &ops = el.arrays();
  std::vector<int64_t> advancedAxes;
  std::vector<ArrayPtr> advancedIndices;
  std::vector<int64_t> broadcast;
  for (size_t i = 0; i < expanded.size(); ++i) {
    const Obj &e = expanded[i];
    int64_t axis = static_cast<int64_t>(i);
    if (isNone(e))
      el.fail(r, "None (a new axis) cannot be combined with integer-array indexing");
    int64_t n = x->shape[axis];
    if (llvm::isa<SliceObj>(e.get())) {
      x = sliceValueAxis(el, x, axis, e, r);
      continue;
    }
    if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      x = dsValueAxis(el, x, axis, *ds, r);
      continue;
    }
    if (!ArrayOps::isNumeric(e) || llvm::isa<FloatObj>(e.get()))
      el.fail(r, "invalid index of type '" + typeName(*e) + "'");
    if (std::optional<int64_t> v = el.staticInt(e); v && (*v < -n || *v >= n))
      el.fail(r, "index " + std::to_string(*v) + " is out of bounds for axis " +
                     std::to_string(axis) + " with size " + std::to_string(n));
    ArrayPtr idx = ops.toArray(e, r);
    if (!isInteger(idx->dtype) && idx->dtype != DType::Bool)
      el.fail(r, std::string("index arrays must be integers, got ") + numpyName(idx->dtype));
    idx = ops.toArray(ops.wrapNegativeIndex(ops.cast(idx, DType::I32, r), n, r), r);
    idx = ops.toArray(ops.minimum(ops.maximum(idx, makeInt(0), r), makeInt(n - 1), r), r);
    broadcast = ops.broadcastShapes(broadcast, idx->shape, r);
    advancedAxes.push_back(axis);
    advancedIndices.push_back(idx);
  }
  // The indexed axes first, as one axis of their elements, row-major.
  std::vector<int64_t> order = advancedAxes, restShape;
  for (int64_t d = 0; d < x->rank(); ++d)
    if (!llvm::is_contained(advancedAxes, d)) {
      order.push_back(d);
      restShape.push_back(x->shape[d]);
    }
  x = ops.transpose(x, order, r);
  int64_t flat = 1;
  for (size_t j = 0; j < advancedAxes.size(); ++j)
    flat *= x->shape[j];
  Obj linear = makeInt(0);
  int64_t stride = 1;
  for (size_t j = advancedAxes.size(); j-- > 0;) {
    linear = ops.binary(BinaryOp::Add, linear,
                        ops.binary(BinaryOp::Mul, advancedIndices[j], makeInt(stride), r), r);
    stride *= x->shape[j];
  }
  std::vector<int64_t> flatShape = {flat};
  flatShape.insert(flatShape.end(), restShape.begin(), restShape.end());
  x = takeAlong(el, ops.reshape(x, flatShape, r),
                ops.broadcastTo(ops.cast(ops.toArray(linear, r), DType::I32, r), broadcast, r), 0,
                r);
  // Adjacent integer indices: their shape goes where they were.
  int64_t at = advancedAxes.front();
  bool adjacent = advancedAxes.back() - at + 1 == static_cast<int64_t>(advancedAxes.size());
  if (adjacent && at > 0) {
    int64_t b = static_cast<int64_t>(broadcast.size());
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < at; ++d)
      perm.push_back(b + d);
    for (int64_t d = 0; d < b; ++d)
      perm.push_back(d);
    for (int64_t d = b + at; d < x->rank(); ++d)
      perm.push_back(d);
    x = ops.transpose(x, perm, r);
  }
  return x;
}

/// `x[index]` on a value where the index has parts computed in the kernel:
/// dynamic ints and pl.ds starts (a negative one counts from the end, then
/// the window is clamped into the axis, as lax.dynamic_slice does) and
/// integer arrays (NumPy's advanced indexing: one array's shape replaces
/// its axis, several go through indexValueAdvanced; entries clamp, as
/// JAX's gathers do).
Obj indexValueDynamic(Elaborator &el, const ArrayPtr &value, const Obj &index, SourceRange r) {
  ArrayOps &ops = el.arrays();
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);
  size_t used = 0;
  for (const Obj &e : entries)
    used += llvm::isa<EllipsisObj>(e.get()) || isNone(e) ? 0 : 1;
  if (used > static_cast<size_t>(value->rank()))
    el.fail(r, "too many indices for an array of rank " + std::to_string(value->rank()));
  std::vector<Obj> expanded;
  for (const Obj &e : entries) {
    if (llvm::isa<EllipsisObj>(e.get())) {
      for (size_t k = 0; k < value->rank() - used; ++k)
        expanded.push_back(std::make_shared<SliceObj>(none(), none(), none()));
      used = static_cast<size_t>(value->rank());
      continue;
    }
    expanded.push_back(e);
  }
  // Several integer indices with an array among them select together.
  size_t arrayIndices = 0, integerIndices = 0;
  for (const Obj &e : expanded) {
    auto *a = llvm::dyn_cast<ArrayObj>(e.get());
    arrayIndices += a && a->rank() > 0;
    integerIndices += ArrayOps::isNumeric(e) && !llvm::isa<FloatObj>(e.get());
  }
  if (arrayIndices > 0 && integerIndices > 1)
    return indexValueAdvanced(el, value, expanded, r);
  ArrayPtr x = value;
  int64_t axis = 0;
  std::vector<int64_t> squeeze;
  std::vector<int64_t> newAxes;
  int64_t outAxis = 0;
  for (const Obj &e : expanded) {
    if (isNone(e)) {
      newAxes.push_back(outAxis++);
      continue;
    }
    int64_t n = x->shape[axis];
    if (llvm::isa<SliceObj>(e.get())) {
      x = sliceValueAxis(el, x, axis, e, r);
      ++axis;
      ++outAxis;
      continue;
    }
    if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      x = dsValueAxis(el, x, axis, *ds, r);
      ++axis;
      ++outAxis;
      continue;
    }
    if (auto *a = llvm::dyn_cast<ArrayObj>(e.get()); a && a->rank() > 0) {
      if (!isInteger(a->dtype))
        el.fail(r, std::string("index arrays must be integers, got ") + numpyName(a->dtype));
      ArrayPtr idx = std::static_pointer_cast<ArrayObj>(e);
      x = takeAlong(el, x, idx, axis, r);
      axis += idx->rank();
      outAxis += idx->rank();
      continue;
    }
    if (ArrayOps::isNumeric(e) && !llvm::isa<FloatObj>(e.get())) {
      Obj i = e;
      if (std::optional<int64_t> v = el.staticInt(e)) {
        if (*v < -n || *v >= n)
          el.fail(r, "index " + std::to_string(*v) + " is out of bounds for axis " +
                         std::to_string(axis) + " with size " + std::to_string(n));
        i = makeInt(*v < 0 ? *v + n : *v);
      } else {
        ArrayPtr iv = ops.cast(ops.toArray(e, r), DType::I32, r);
        i = ops.wrapNegativeIndex(iv, n, r);
      }
      x = dynamicSliceAxis(el, x, clampedStart(el, i, n, 1, r), 1, axis, r);
      squeeze.push_back(axis);
      ++axis;
      continue;
    }
    el.fail(r, "invalid index of type '" + typeName(*e) + "'");
  }
  if (!squeeze.empty())
    x = ops.squeeze(x, squeeze, r);
  if (!newAxes.empty())
    x = ops.expandDims(x, newAxes, r);
  return x;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

Obj generalDot(Elaborator &el, const Obj &lhsObj, const Obj &rhsObj, std::vector<int64_t> lc,
               std::vector<int64_t> rc, std::vector<int64_t> lb, std::vector<int64_t> rb,
               const Obj &preferred, const Obj &precision, SourceRange r) {
  ArrayPtr lhs = valueOperand(el, lhsObj, r, "a dot"), rhs = valueOperand(el, rhsObj, r, "a dot");
  ArrayOps &ops = el.arrays();
  if (lc.size() != rc.size() || lb.size() != rb.size())
    el.fail(r, "dot_general needs as many contracting (and batch) dimensions on each side");
  for (size_t i = 0; i < lc.size(); ++i)
    if (lhs->shape[lc[i]] != rhs->shape[rc[i]])
      el.fail(r, "dot_general contracting dimensions differ in size: " +
                     std::to_string(lhs->shape[lc[i]]) + " and " + std::to_string(rhs->shape[rc[i]]));
  for (size_t i = 0; i < lb.size(); ++i)
    if (lhs->shape[lb[i]] != rhs->shape[rb[i]])
      el.fail(r, "dot_general batch dimensions differ in size");
  auto freeAxes = [](const ArrayPtr &a, const std::vector<int64_t> &c, const std::vector<int64_t> &b) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < a->rank(); ++d)
      if (!llvm::is_contained(c, d) && !llvm::is_contained(b, d))
        f.push_back(d);
    return f;
  };
  std::vector<int64_t> lf = freeAxes(lhs, lc, lb), rf = freeAxes(rhs, rc, rb);
  // The 2-D cases the dot op takes directly.
  if (lb.empty() && lc.size() == 1 && lhs->rank() == 2 && rhs->rank() == 2)
    return dotBuiltin(el, lhs, rhs, lc[0] == 0, rc[0] == 1, preferred, precision, r);
  auto gather = [](const ArrayPtr &a, const std::vector<int64_t> &axes) {
    std::vector<int64_t> s;
    for (int64_t d : axes)
      s.push_back(a->shape[d]);
    return s;
  };
  std::vector<int64_t> batchShape = gather(lhs, lb), lfShape = gather(lhs, lf), rfShape = gather(rhs, rf);
  int64_t B = product(batchShape), M = product(lfShape), K = product(gather(lhs, lc)),
          N = product(rfShape);
  std::vector<int64_t> lperm = lb, rperm = rb;
  lperm.insert(lperm.end(), lf.begin(), lf.end());
  lperm.insert(lperm.end(), lc.begin(), lc.end());
  rperm.insert(rperm.end(), rc.begin(), rc.end());
  rperm.insert(rperm.end(), rf.begin(), rf.end());
  ArrayPtr l3 = ops.reshape(ops.transpose(lhs, lperm, r), {B, M, K}, r);
  ArrayPtr r3 = ops.reshape(ops.transpose(rhs, rperm, r), {B, K, N}, r);
  std::vector<int64_t> outShape = batchShape;
  outShape.insert(outShape.end(), lfShape.begin(), lfShape.end());
  outShape.insert(outShape.end(), rfShape.begin(), rfShape.end());
  // A batch of inner products or matrix-vector products is one broadcast
  // product summed over K, not B dots of a row or a column (einsum
  // 'bqhd,bqhd->bhq' of 256 rows was 256 dots and 27k lines of PTX). It
  // accumulates as the dot would: floats in f32 (f64 for f64), integers
  // in the result's type, rounded to the result once.
  JaxType t = promoteTypes(ops.typeOf(l3, r), ops.typeOf(r3, r));
  std::optional<DType> preferredType;
  if (!isNone(preferred))
    preferredType = el.toDType(preferred, r, "preferred_element_type");
  DType resultType = preferredType ? *preferredType : t.dtype;
  if (B > 1 && (M == 1 || N == 1) && B * M * K * N <= (int64_t(1) << 16) &&
      t.dtype != DType::Bool && isFloat(resultType) == isFloat(t.dtype)) {
    DType accumulate = !isFloat(resultType)                                  ? resultType
                       : (t.dtype == DType::F64 || resultType == DType::F64) ? DType::F64
                                                                             : DType::F32;
    std::vector<int64_t> full{B, M, K, N};
    ArrayPtr l4 =
        ops.broadcastTo(ops.reshape(ops.cast(l3, accumulate, r), {B, M, K, 1}, r), full, r);
    ArrayPtr r4 =
        ops.broadcastTo(ops.reshape(ops.cast(r3, accumulate, r), {B, 1, K, N}, r), full, r);
    ArrayPtr sum = ops.toArray(
        ops.reduce(Reduction::Sum, ops.binary(BinaryOp::Mul, l4, r4, r), {2}, false, r), r);
    return ops.reshape(ops.cast(sum, resultType, r, t.weak && !preferredType), outShape, r);
  }
  std::vector<ArrayPtr> products;
  for (int64_t b = 0; b < B; ++b) {
    ArrayPtr lb2 = ops.reshape(sliceAxis(el, l3, 0, b, b + 1, 1, r), {M, K}, r);
    ArrayPtr rb2 = ops.reshape(sliceAxis(el, r3, 0, b, b + 1, 1, r), {K, N}, r);
    ArrayPtr p = ops.toArray(dotBuiltin(el, lb2, rb2, false, false, preferred, precision, r), r);
    products.push_back(ops.reshape(p, {1, M, N}, r));
  }
  ArrayPtr out = concatAxis(el, products, 0, r);
  return ops.reshape(out, outShape, r);
}

Obj matmulBuiltin(Elaborator &el, const Obj &a, const Obj &b, const Obj &preferred,
                  const Obj &precision, SourceRange r) {
  auto *x0 = llvm::dyn_cast<ArrayObj>(a.get());
  auto *y0 = llvm::dyn_cast<ArrayObj>(b.get());
  if (!x0 || !y0 || (x0->rank() <= 2 && y0->rank() <= 2))
    return dotBuiltin(el, a, b, false, false, preferred, precision, r);
  ArrayOps &ops = el.arrays();
  ArrayPtr x = ops.toArray(a, r), y = ops.toArray(b, r);
  // A vector operand is a matrix of one row (left) or one column (right)
  // whose axis the result drops.
  bool xVector = x->rank() == 1, yVector = y->rank() == 1;
  if (xVector)
    x = ops.reshape(x, {1, x->shape[0]}, r);
  if (yVector)
    y = ops.reshape(y, {y->shape[0], 1}, r);
  std::vector<int64_t> xBatch(x->shape.begin(), x->shape.end() - 2),
      yBatch(y->shape.begin(), y->shape.end() - 2);
  // The batch axes broadcast as NumPy's do, aligned at their ends.
  size_t rank = std::max(xBatch.size(), yBatch.size());
  std::vector<int64_t> batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = i < rank - xBatch.size() ? 1 : xBatch[i - (rank - xBatch.size())];
    int64_t q = i < rank - yBatch.size() ? 1 : yBatch[i - (rank - yBatch.size())];
    if (p != q && p != 1 && q != 1)
      el.fail(r, "matmul: the batch shapes of " + shapeText(x0->shape) + " and " +
                     shapeText(y0->shape) + " do not broadcast");
    batch[i] = p == 1 ? q : p;
  }
  auto withBatch = [&](const ArrayPtr &m) {
    std::vector<int64_t> shape = batch;
    shape.insert(shape.end(), m->shape.end() - 2, m->shape.end());
    return ops.broadcastTo(m, shape, r);
  };
  x = withBatch(x);
  y = withBatch(y);
  std::vector<int64_t> batchAxes;
  for (size_t i = 0; i < rank; ++i)
    batchAxes.push_back(static_cast<int64_t>(i));
  int64_t n = static_cast<int64_t>(rank);
  ArrayPtr product = ops.toArray(
      generalDot(el, x, y, {n + 1}, {n}, batchAxes, batchAxes, preferred, precision, r), r);
  std::vector<int64_t> shape = batch;
  if (!xVector)
    shape.push_back(x->shape[n]);
  if (!yVector)
    shape.push_back(y->shape[n + 1]);
  return ops.reshape(product, shape, r);
}

namespace {

Obj dotGeneralBuiltin(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"lhs"}, {"rhs"}, {"dimension_numbers"}, {"precision", none()},
                               {"preferred_element_type", none()}, {"out_sharding", none(), true}});
  std::vector<Obj> dims = el.iterate(a[2], a.range(2));
  if (dims.size() != 2)
    el.fail(a.range(2), "dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))");
  std::vector<Obj> contract = el.iterate(dims[0], a.range(2)), batch = el.iterate(dims[1], a.range(2));
  if (contract.size() != 2 || batch.size() != 2)
    el.fail(a.range(2), "dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))");
  ArrayPtr lhs = valueOperand(el, a[0], a.range(0), "lax.dot_general");
  ArrayPtr rhs = valueOperand(el, a[1], a.range(1), "lax.dot_general");
  auto axes = [&](const Obj &o, int64_t rank) {
    std::vector<int64_t> out;
    for (const Obj &x : el.iterate(o, a.range(2)))
      out.push_back(el.normalizeAxis(x, rank, a.range(2)));
    return out;
  };
  return generalDot(el, lhs, rhs, axes(contract[0], lhs->rank()), axes(contract[1], rhs->rank()),
                    axes(batch[0], lhs->rank()), axes(batch[1], rhs->rank()), a[4], a[3],
                    args.range);
}

/// One operand of an einsum: its array and the letter of each axis.
struct EinsumTerm {
  ArrayPtr array;
  std::string letters;
};

/// Takes the diagonal of each letter an operand repeats ('ii->i'), then
/// sums the axes whose letters no other operand and not the output name
/// ('ij->i'), as JAX's einsum does before any product.
EinsumTerm reduceEinsumTerm(Elaborator &el, EinsumTerm term, const std::string &needed,
                            SourceRange r) {
  ArrayOps &ops = el.arrays();
  DType dtype = term.array->dtype;
  auto sumAxes = [&](const ArrayPtr &a, std::vector<int64_t> axes) {
    if (axes.empty())
      return a;
    ArrayPtr sum = ops.toArray(ops.reduce(Reduction::Sum, a, axes, false, r), r);
    return ops.cast(sum, dtype, r, a->weak); // as lax.reduce_sum, in the operand's dtype
  };
  for (size_t p = 0; p < term.letters.size(); ++p) {
    size_t q;
    while ((q = term.letters.find(term.letters[p], p + 1)) != std::string::npos) {
      ArrayPtr a = term.array;
      if (a->shape[p] != a->shape[q])
        el.fail(r, std::string("einsum index '") + term.letters[p] + "' names axes of sizes " +
                       std::to_string(a->shape[p]) + " and " + std::to_string(a->shape[q]));
      Obj alongP = ops.iota(a->shape, static_cast<int64_t>(p), DType::I32, r);
      Obj alongQ = ops.iota(a->shape, static_cast<int64_t>(q), DType::I32, r);
      Obj onDiagonal = ops.compare(CompareOp::Eq, alongP, alongQ, r);
      ArrayPtr masked = ops.toArray(ops.where(onDiagonal, a, makeInt(0), r), r);
      term.array =
          sumAxes(ops.castTo(masked, JaxType{dtype, a->weak}, r), {static_cast<int64_t>(q)});
      term.letters.erase(q, 1);
    }
  }
  std::vector<int64_t> unused;
  std::string kept;
  for (size_t i = 0; i < term.letters.size(); ++i)
    if (needed.find(term.letters[i]) == std::string::npos)
      unused.push_back(static_cast<int64_t>(i));
    else
      kept += term.letters[i];
  term.array = sumAxes(term.array, unused);
  term.letters = kept;
  return term;
}

/// jnp.einsum: any number of operands (contracted left to right, each
/// pair as one dot_general), explicit or implicit output, repeated
/// indices within an operand (diagonals) and indices summed away.
Obj einsumBuiltin(Elaborator &el, CallArgs &args) {
  if (args.positional.size() < 2)
    el.fail(args.range, "jnp.einsum needs a subscripts string and at least one operand");
  if (!llvm::isa<StrObj>(args.positional[0].get()))
    el.fail(args.rangeOf(0), "jnp.einsum's interleaved form (operand, axes, operand, axes, ...) "
                             "is not supported; give a subscripts string such as 'ij,jk->ik'");
  std::string spec = el.toStr(args.positional[0], args.rangeOf(0), "einsum subscripts");
  spec.erase(std::remove(spec.begin(), spec.end(), ' '), spec.end());
  SourceRange specRange = args.rangeOf(0);
  size_t arrow = spec.find("->");
  std::vector<std::string> inputs;
  {
    std::string all = spec.substr(0, arrow);
    size_t from = 0, comma;
    while ((comma = all.find(',', from)) != std::string::npos) {
      inputs.push_back(all.substr(from, comma - from));
      from = comma + 1;
    }
    inputs.push_back(all.substr(from));
  }
  size_t operands = args.positional.size() - 1;
  if (inputs.size() != operands)
    el.fail(specRange, "einsum '" + spec + "' names " + std::to_string(inputs.size()) +
                           " operands but " + std::to_string(operands) + " were given");
  std::vector<ArrayPtr> arrays;
  for (size_t i = 0; i < operands; ++i)
    arrays.push_back(valueOperand(el, args.positional[i + 1], args.rangeOf(i + 1), "jnp.einsum"));
  // '...' (NumPy's broadcast axes): each operand's unnamed axes get fresh
  // letters, aligned from the right across operands; an implicit output
  // puts them first.
  std::string ellipsisLetters;
  if (spec.find("...") != std::string::npos) {
    std::vector<int64_t> counts(operands, 0);
    int64_t most = 0;
    for (size_t i = 0; i < operands; ++i) {
      size_t at = inputs[i].find("...");
      if (at == std::string::npos)
        continue;
      if (inputs[i].find("...", at + 3) != std::string::npos)
        el.fail(specRange,
                "einsum operand subscripts '" + inputs[i] + "' have more than one '...'");
      counts[i] = arrays[i]->rank() - static_cast<int64_t>(inputs[i].size() - 3);
      if (counts[i] < 0)
        el.fail(specRange, "einsum '" + spec + "' names more axes than operand " +
                               std::to_string(i) + " has (rank " +
                               std::to_string(arrays[i]->rank()) + ")");
      most = std::max(most, counts[i]);
    }
    for (char c : std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
      if (static_cast<int64_t>(ellipsisLetters.size()) < most && spec.find(c) == std::string::npos)
        ellipsisLetters += c;
    if (static_cast<int64_t>(ellipsisLetters.size()) < most)
      el.fail(specRange, "einsum '" + spec + "' leaves too few letters for its '...' axes");
    for (size_t i = 0; i < operands; ++i)
      if (size_t at = inputs[i].find("..."); at != std::string::npos)
        inputs[i].replace(at, 3, ellipsisLetters.substr(most - counts[i]));
    if (arrow != std::string::npos) {
      std::string tail = spec.substr(arrow + 2);
      if (size_t at = tail.find("..."); at != std::string::npos)
        tail.replace(at, 3, ellipsisLetters);
      spec = spec.substr(0, arrow + 2) + tail;
    }
  }
  std::map<char, int> uses;
  for (const std::string &letters : inputs)
    for (char c : letters) {
      if (!std::isalpha(static_cast<unsigned char>(c)))
        el.fail(specRange, "einsum subscripts may only use letters, commas and '->'; got '" +
                               std::string(1, c) + "' in '" + spec + "'");
      ++uses[c];
    }
  std::string out;
  if (arrow == std::string::npos) {
    out = ellipsisLetters;
    for (const auto &[c, n] : uses) // implicit output: the letters used once, sorted
      if (n == 1 && ellipsisLetters.find(c) == std::string::npos)
        out += c;
  } else {
    out = spec.substr(arrow + 2);
    for (size_t i = 0; i < out.size(); ++i)
      if (!uses.count(out[i]) || out.find(out[i], i + 1) != std::string::npos)
        el.fail(specRange,
                "einsum output '" + out + "' must name distinct indices of the operands");
  }
  Obj preferred = none(), precision = none();
  for (const auto &[k, v] : args.keywords)
    if (k == "preferred_element_type")
      preferred = v;
    else if (k == "precision")
      precision = v;
    else if (k != "optimize" && k != "out_sharding")
      el.fail(args.range, "jnp.einsum got an unexpected keyword argument '" + k + "'");
  std::vector<EinsumTerm> terms;
  for (size_t i = 0; i < operands; ++i) {
    ArrayPtr a = arrays[i];
    if (inputs[i].size() != static_cast<size_t>(a->rank()))
      el.fail(specRange, "einsum '" + spec + "' gives operand " + std::to_string(i) + " " +
                             std::to_string(inputs[i].size()) + " indices but it has rank " +
                             std::to_string(a->rank()));
    terms.push_back({a, inputs[i]});
  }
  auto neededBesides = [&](size_t skipFrom, size_t skipTo) {
    std::string needed = out;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j < skipFrom || j > skipTo)
        needed += terms[j].letters;
    return needed;
  };
  for (size_t i = 0; i < terms.size(); ++i)
    terms[i] = reduceEinsumTerm(el, terms[i], neededBesides(i, i), args.range);
  while (terms.size() > 1) {
    const EinsumTerm &a = terms[0], &b = terms[1];
    std::string needed = neededBesides(0, 1);
    std::vector<int64_t> lc, rc, lb, rb;
    std::string batch, lhsFree, rhsFree;
    for (size_t i = 0; i < a.letters.size(); ++i) {
      char c = a.letters[i];
      size_t j = b.letters.find(c);
      if (j == std::string::npos) {
        lhsFree += c;
        continue;
      }
      bool kept = needed.find(c) != std::string::npos;
      (kept ? lb : lc).push_back(static_cast<int64_t>(i));
      (kept ? rb : rc).push_back(static_cast<int64_t>(j));
      if (kept)
        batch += c;
      if (a.array->shape[i] != b.array->shape[j])
        el.fail(specRange, std::string("einsum index '") + c + "' names axes of sizes " +
                               std::to_string(a.array->shape[i]) + " and " +
                               std::to_string(b.array->shape[j]));
    }
    for (char c : b.letters)
      if (a.letters.find(c) == std::string::npos)
        rhsFree += c;
    ArrayPtr product = el.arrays().toArray(
        generalDot(el, a.array, b.array, lc, rc, lb, rb, preferred, precision, args.range),
        args.range);
    terms.erase(terms.begin(), terms.begin() + 2);
    terms.insert(terms.begin(), EinsumTerm{product, batch + lhsFree + rhsFree});
  }
  EinsumTerm &result = terms[0];
  if (operands == 1 && !isNone(preferred))
    result.array = el.arrays().cast(
        result.array, el.toDType(preferred, args.range, "preferred_element_type"), args.range);
  if (result.letters == out)
    return result.array;
  std::vector<int64_t> perm;
  for (char c : out)
    perm.push_back(static_cast<int64_t>(result.letters.find(c)));
  return el.arrays().transpose(result.array, perm, args.range);
}

//===----------------------------------------------------------------------===//
// Control: switch, select_n
//===----------------------------------------------------------------------===//

Obj switchBuiltin(Elaborator &el, CallArgs &args) {
  if (args.positional.size() < 2)
    el.fail(args.range, "lax.switch(index, branches, *operands) needs an index and branches");
  std::vector<Obj> branches = el.iterate(args.positional[1], args.rangeOf(1));
  if (branches.empty())
    el.fail(args.rangeOf(1), "lax.switch needs at least one branch");
  std::vector<Obj> operands(args.positional.begin() + 2, args.positional.end());
  SourceRange r = args.range;
  int64_t n = static_cast<int64_t>(branches.size());
  auto callBranch = [&](const Obj &branch) {
    CallArgs call;
    call.range = r;
    for (const Obj &o : operands)
      call.addPositional(o, r);
    return el.call(branch, call);
  };
  if (std::optional<int64_t> i = el.staticInt(args.positional[0]))
    return callBranch(branches[std::clamp<int64_t>(*i, 0, n - 1)]);
  if (n == 1)
    return callBranch(branches[0]);
  ArrayOps &ops = el.arrays();
  // JAX clamps the index into range; then a chain of two-way branches.
  Obj index = ops.minimum(ops.maximum(ops.cast(ops.toArray(args.positional[0], args.rangeOf(0)),
                                               DType::I32, r),
                                      makeInt(0), r),
                          makeInt(n - 1), r);
  std::function<Obj(int64_t)> build = [&](int64_t k) -> Obj {
    if (k == n - 1)
      return branches[k];
    Obj rest = build(k + 1);
    Obj first = branches[k];
    return std::make_shared<BuiltinObj>("lax.switch branch", [=](Elaborator &el, CallArgs &inner) -> Obj {
      Obj predicate = el.arrays().compare(CompareOp::Eq, index, makeInt(k), r);
      return el.cond(predicate, first, rest, inner.positional, r);
    });
  };
  Obj chain = build(0);
  return callBranch(chain);
}

/// lax.scan with a carry only, as Pallas supports it (no per-iteration
/// inputs; outputs must be empty): a fori_loop over `length`.
Obj scanBuiltin(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"f"}, {"init"}, {"xs", none()}, {"length", none()},
                               {"reverse", makeBool(false)}, {"unroll", makeInt(1)},
                               {"_split_transpose", makeBool(false), true}});
  if (!isNone(a[2]))
    el.fail(a.range(2), "lax.scan over xs (per-iteration inputs) is not supported in kernels, as "
                        "in Pallas; index a Ref in a lax.fori_loop instead");
  if (isNone(a[3]))
    el.fail(args.range, "lax.scan without xs needs length=");
  Obj f = a[0];
  SourceRange r = args.range;
  auto body = std::make_shared<BuiltinObj>("lax.scan body", [f, r](Elaborator &el, CallArgs &inner) -> Obj {
    CallArgs call;
    call.range = r;
    call.addPositional(inner.positional[1], r);
    call.addPositional(none(), r);
    Obj result = el.call(f, call);
    std::vector<Obj> pair = el.iterate(result, r);
    if (pair.size() != 2)
      el.fail(r, "lax.scan's function must return (carry, output)");
    std::vector<Obj> leaves;
    flatten(pair[1], leaves);
    if (!leaves.empty())
      el.fail(r, "lax.scan with per-iteration outputs is not supported in kernels, as in Pallas; "
                 "write them to a Ref");
    return pair[0];
  });
  Obj carry = el.foriLoop(makeInt(0), a[3], body, a[1], r);
  return makeTuple({carry, none()});
}

Obj selectN(Elaborator &el, CallArgs &args) {
  if (args.positional.size() < 2)
    el.fail(args.range, "lax.select_n(which, *cases) needs at least one case");
  ArrayOps &ops = el.arrays();
  Obj which = args.positional[0];
  std::vector<Obj> cases(args.positional.begin() + 1, args.positional.end());
  if (cases.size() == 1)
    return cases[0];
  JaxType t = ops.typeOf(which, args.rangeOf(0));
  if (t.dtype == DType::Bool) {
    if (cases.size() != 2)
      el.fail(args.range, "lax.select_n with a boolean selector takes two cases");
    return ops.where(which, cases[1], cases[0], args.range);
  }
  Obj result = cases.back();
  for (int64_t k = static_cast<int64_t>(cases.size()) - 2; k >= 0; --k)
    result = ops.where(ops.compare(CompareOp::Eq, which, makeInt(k), args.range), cases[k], result,
                       args.range);
  return result;
}

} // namespace

void defineArrayFunctions(Elaborator &el, NamespaceObj &jnp, NamespaceObj &lax) {
  auto cumulativeJnp = [](Reduction kind) {
    return [kind](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"dtype", none()}, {"out", none(), true}});
      return cumulative(el, a[0], a[1], false, kind, cumulativeDType(el, a[0], a[2], a.range(2)),
                        /*flattenNone=*/true, args.range);
    };
  };
  define(jnp, "cumsum", cumulativeJnp(Reduction::Sum));
  define(jnp, "cumprod", cumulativeJnp(Reduction::Prod));
  // jnp.cumulative_sum / cumulative_prod: cumsum / cumprod, with
  // include_initial=True prepending the identity along the axis (tokamax's
  // group offsets start with 0 this way).
  NamespaceObj *numpy = &jnp;
  for (auto [name, base, identity] : {std::tuple{"cumulative_sum", "cumsum", "zeros"},
                                      std::tuple{"cumulative_prod", "cumprod", "ones"}}) {
    Obj scan = jnp.members[base];
    std::string id = identity;
    jnp.members[name] = builtin(
        std::string("jax.numpy.") + name, [scan, id, numpy](Elaborator &el, CallArgs &args) -> Obj {
          Obj include = args.takeKeyword("include_initial");
          Obj axis = args.positional.size() > 1 ? args.positional[1] : nullptr;
          for (const auto &[k, v] : args.keywords)
            if (k == "axis")
              axis = v;
          Obj result = el.call(scan, args);
          if (!include || !el.truthy(include, args.range))
            return result;
          SourceRange r = args.range;
          std::vector<Obj> shape;
          for (const Obj &d : el.iterate(getAttribute(el, result, "shape", r), r))
            shape.push_back(d);
          int64_t rank = static_cast<int64_t>(shape.size());
          int64_t at = !axis || isNone(axis) ? 0 : el.toInt(axis, r, "axis");
          if (at < -rank || at >= rank)
            el.fail(r, "axis " + std::to_string(at) + " is out of range for rank " +
                           std::to_string(rank));
          at = at < 0 ? at + rank : at;
          shape[at] = makeInt(1);
          Obj initial = callAt(el, numpy->members.at(id),
                               {makeTuple(shape), getAttribute(el, result, "dtype", r)}, {}, r);
          return callAt(el, numpy->members.at("concatenate"), {makeTuple({initial, result})},
                        {{"axis", makeInt(at)}}, r);
        });
  }
  // jnp.broadcast_shapes(*shapes): NumPy's broadcast of static shapes.
  define(jnp, "broadcast_shapes", [](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.keywords.empty())
      el.fail(args.range, "broadcast_shapes takes the shapes positionally");
    std::vector<int64_t> result;
    for (size_t i = 0; i < args.positional.size(); ++i)
      result = el.arrays().broadcastShapes(
          result, el.toShape(args.positional[i], args.rangeOf(i), "shape"), args.rangeOf(i));
    std::vector<Obj> dims;
    for (int64_t d : result)
      dims.push_back(makeInt(d));
    return makeTuple(dims);
  });
  // lax.broadcast_to_rank(x, rank): x with leading unit axes up to `rank`.
  define(lax, "broadcast_to_rank", [numpy](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"rank"}});
    int64_t rank = el.toInt(a[1], a.range(1), "rank");
    std::vector<Obj> shape;
    for (const Obj &d : el.iterate(getAttribute(el, a[0], "shape", a.range(0)), a.range(0)))
      shape.push_back(d);
    if (static_cast<int64_t>(shape.size()) >= rank)
      return a[0];
    shape.insert(shape.begin(), rank - shape.size(), makeInt(1));
    return callAt(el, numpy->members.at("reshape"), {a[0], makeTuple(shape)}, {}, args.range);
  });
  auto cumulativeLax = [](Reduction kind) {
    return [kind](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"operand"}, {"axis", makeInt(0)}, {"reverse", makeBool(false)}});
      return cumulative(el, a[0], a[1], el.truthy(a[2], a.range(2)), kind, std::nullopt,
                        /*flattenNone=*/false, args.range);
    };
  };
  define(lax, "cumsum", cumulativeLax(Reduction::Sum));
  define(lax, "cumprod", cumulativeLax(Reduction::Prod));
  define(lax, "cummax", cumulativeLax(Reduction::Max));
  define(lax, "cummin", cumulativeLax(Reduction::Min));
  // lax.cumlogsumexp: JAX's associative scan of logaddexp (how it lowers
  // off TPU), floats only.
  define(lax, "cumlogsumexp", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"axis", makeInt(0)}, {"reverse", makeBool(false)}});
    JaxType t = el.arrays().typeOf(a[0], a.range(0));
    if (!isFloat(t.dtype))
      el.fail(a.range(0), std::string("lax.cumlogsumexp takes floating-point values, got ") +
                              numpyName(t.dtype));
    SourceRange r = args.range;
    CombineValues logAdd = [&el, r](const ArrayPtr &u, const ArrayPtr &v) {
      return logAddExp(el, u, v, /*base2=*/false, r);
    };
    return cumulativeWith(el, a[0], a[1], el.truthy(a[2], a.range(2)), logAdd, std::nullopt,
                          /*flattenNone=*/false, r);
  });
  define(lax, "associative_scan", associativeScan);
  define(jnp, "tile", tile);
  define(jnp, "repeat", repeat);
  define(jnp, "pad", pad);
  define(jnp, "roll", roll);
  define(jnp, "flip", flip);
  define(jnp, "diagonal", diagonal);
  define(jnp, "take", take);
  define(jnp, "histogram", histogram);
  define(jnp, "take_along_axis", takeAlongAxis);
  define(jnp, "split", split);
  define(jnp, "moveaxis", moveaxis);
  define(jnp, "einsum", einsumBuiltin);
  define(lax, "dot_general", dotGeneralBuiltin);
  define(lax, "dynamic_slice", dynamicSlice);
  define(lax, "dynamic_update_slice", dynamicUpdateSlice);
  define(lax, "dynamic_slice_in_dim", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"start_index"}, {"slice_size"}, {"axis", makeInt(0)}});
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.dynamic_slice_in_dim");
    int64_t axis = el.normalizeAxis(a[3], x->rank(), a.range(3));
    int64_t size = el.toInt(a[2], a.range(2), "slice_size");
    if (size < 1 || size > x->shape[axis])
      el.fail(a.range(2), "slice size does not fit the axis");
    return dynamicSliceAxis(el, x, clampedStart(el, a[1], x->shape[axis], size, args.range), size,
                            axis, args.range);
  });
  define(lax, "rev", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"dimensions"}});
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.rev");
    for (int64_t axis : el.normalizeAxes(a[1], x->rank(), a.range(1)))
      x = flipAxis(el, x, axis, args.range);
    return x;
  });
  define(lax, "pad", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"padding_value"}, {"padding_config"}});
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "lax.pad");
    std::vector<Obj> config = el.iterate(a[2], a.range(2));
    if (static_cast<int64_t>(config.size()) != x->rank())
      el.fail(a.range(2), "lax.pad needs one (low, high, interior) triple per axis");
    ArrayOps &ops = el.arrays();
    for (int64_t axis = 0; axis < x->rank(); ++axis) {
      std::vector<int64_t> c = intList(el, config[axis], a.range(2), "padding");
      if (c.size() != 3 || c[2] != 0 || c[0] < 0 || c[1] < 0)
        el.fail(a.range(2), "lax.pad supports non-negative low and high padding without interior "
                            "padding");
      std::vector<ArrayPtr> parts;
      std::vector<int64_t> shape = x->shape;
      auto filled = [&](int64_t count) {
        shape[axis] = count;
        return ops.castTo(ops.toArray(ops.broadcastTo(ops.toArray(a[1], a.range(1)), shape, args.range), args.range),
                          JaxType{x->dtype, x->weak}, args.range);
      };
      if (c[0])
        parts.push_back(filled(c[0]));
      parts.push_back(x);
      if (c[1])
        parts.push_back(filled(c[1]));
      x = concatAxis(el, parts, axis, args.range);
    }
    return x;
  });
  define(lax, "switch", switchBuiltin);
  define(lax, "scan", scanBuiltin);
  define(lax, "select_n", selectN);
  define(lax, "optimization_barrier", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}});
    return a[0];
  });
}

void defineTpuArrayFunctions(Elaborator &el, NamespaceObj &tpu) {
  // pltpu.roll(x, shift, axis): jnp.roll's rotation (shift may be dynamic).
  define(tpu, "roll", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"shift"}, {"axis"}, {"stride", none(), true},
                                 {"stride_axis", none(), true}});
    if (!isNone(a[3]))
      el.fail(a.range(3), "pltpu.roll with a stride is not supported");
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "pltpu.roll");
    return rollAxis(el, x, a[1], el.normalizeAxis(a[2], x->rank(), a.range(2)), args.range);
  });
  // pltpu.repeat(x, repeats, axis): the array concatenated `repeats` times.
  define(tpu, "repeat", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"repeats"}, {"axis"}});
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "pltpu.repeat");
    int64_t n = el.toInt(a[1], a.range(1), "repeats");
    if (n < 1)
      el.fail(a.range(1), "pltpu.repeat needs a positive count");
    return concatAxis(el, std::vector<ArrayPtr>(n, x), el.normalizeAxis(a[2], x->rank(), a.range(2)),
                      args.range);
  });
  // pltpu.bitcast(x, ty): the bits reinterpreted as another dtype; between
  // widths, rows of the second-minor axis pack into rows of the wider type
  // (RefBitcast.cpp).
  define(tpu, "bitcast", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"ty"}});
    ArrayPtr x = valueOperand(el, a[0], a.range(0), "pltpu.bitcast");
    DType to = el.toDType(a[1], a.range(1), "ty");
    if (x->rank() < 2)
      el.fail(args.range, "pltpu.bitcast needs at least 2 dimensions, got a value of rank " +
                              std::to_string(x->rank()));
    return packingBitcast(el, x, to, args.range);
  });
}

Obj arrayAtUpdate(Elaborator &el, const Obj &array, const Obj &index, const std::string &method,
                  CallArgs &args) {
  if (el.mode() == EmitMode::Export && Elaborator::holdsGlobalArray(array))
    return el.arrayCodeCall("at." + method, args, {array, index},
                            [&](std::vector<Obj> &at, CallArgs &traced) {
                              return arrayAtUpdate(el, at[0], at[1], method, traced);
                            });
  static const std::map<std::string, AtUpdate> kinds = {
      {"set", AtUpdate::Set},     {"add", AtUpdate::Add},       {"multiply", AtUpdate::Multiply},
      {"mul", AtUpdate::Multiply}, {"divide", AtUpdate::Divide}, {"min", AtUpdate::Min},
      {"max", AtUpdate::Max},     {"power", AtUpdate::Power}};
  ArrayPtr x = valueOperand(el, array, args.range, "x.at[...]");
  if (method == "get") {
    el.bind(args, {{"indices_are_sorted", none(), true}, {"unique_indices", none(), true},
                   {"mode", none(), true}, {"fill_value", none(), true}});
    return subscript(el, x, index, args.range);
  }
  auto it = kinds.find(method);
  if (it == kinds.end())
    el.fail(args.range, "x.at[...]." + method + " is not supported (set, add, multiply, divide, min, "
                        "max, power and get are)");
  BoundArgs a = el.bind(args, {{"values"}, {"indices_are_sorted", none(), true},
                               {"unique_indices", none(), true}, {"mode", none(), true}});
  return atUpdate(el, x, index, a[0], it->second, args.range);
}

ArrayPtr reverseAxis(Elaborator &el, const ArrayPtr &a, int64_t axis, SourceRange r) {
  return flipAxis(el, a, axis, r);
}

} // namespace pk::elab
