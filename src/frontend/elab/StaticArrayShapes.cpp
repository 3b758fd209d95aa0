//===- StaticArrayShapes.cpp - NumPy arrays: making, reshaping, reducing --===//
//
// The shape-changing half of the compile-time NumPy engine
// (StaticArray.h): ranges and fills, reshapes and transposes,
// concatenation and padding, reductions, sorting and np.where.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/StaticArray.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pk::elab::static_array {

namespace {

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Calls `fn(offset)` for each element of the sub-block `shape` of an
/// array with `strides`, starting at `base`, in row-major order.
template <typename Fn>
void forEachOffset(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                   int64_t base, Fn fn) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<int64_t> coord(shape.size(), 0);
  int64_t offset = base;
  for (int64_t k = 0; k < n; ++k) {
    fn(offset);
    for (size_t d = shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++coord[d] < shape[d])
        break;
      offset -= strides[d] * coord[d];
      coord[d] = 0;
    }
  }
}

} // namespace

StaticArrayPtr arange(Elaborator &el, const Obj &start, const Obj &stop, const Obj &step,
                      std::optional<DType> dtype, bool numpy, SourceRange r) {
  bool anyFloat = llvm::isa<FloatObj>(start.get()) || llvm::isa<FloatObj>(stop.get()) ||
                  llvm::isa<FloatObj>(step.get());
  double first = el.toDouble(start, r, "arange's start");
  double last = el.toDouble(stop, r, "arange's stop");
  double delta = el.toDouble(step, r, "arange's step");
  if (delta == 0)
    el.raise(r, "ZeroDivisionError", "division by zero");
  double count = std::ceil((last - first) / delta);
  if (count > 4.0e18)
    el.raise(r, "ValueError", "Maximum allowed size exceeded");
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  DType t = dtype ? *dtype : anyFloat ? defaultFloat(numpy) : defaultInt(numpy);
  StaticArrayPtr out = make(el, {n}, t, numpy, r);
  for (int64_t k = 0; k < n; ++k) {
    if (anyFloat || isFloat(t))
      storeDouble(*out, k, first + static_cast<double>(k) * delta);
    else
      storeInt(*out, k,
               static_cast<int64_t>(static_cast<uint64_t>(el.toInt(start, r, "start")) +
                                    static_cast<uint64_t>(k) *
                                        static_cast<uint64_t>(el.toInt(step, r, "step"))));
  }
  return out;
}

StaticArrayPtr full(Elaborator &el, const std::vector<int64_t> &shape, const Obj &value,
                    DType dtype, bool numpy, SourceRange r) {
  StaticArrayPtr fill = toStatic(el, value, r, "the fill value", numpy);
  StaticArrayPtr typed = astype(el, *fill, dtype, r);
  StaticArrayPtr out = broadcastTo(el, *typed, shape, r);
  out->numpy = numpy;
  return out;
}

int64_t normalizeAxis(Elaborator &el, int64_t axis, int64_t rank, SourceRange r) {
  if (axis < -rank || axis >= rank)
    el.raise(r, "AxisError",
             "axis " + std::to_string(axis) +
                 " is out of bounds for array of "
                 "dimension " +
                 std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

StaticArrayPtr reshape(Elaborator &el, const StaticArrayObj &a, std::vector<int64_t> shape,
                       SourceRange r) {
  __int128 known = 1;
  int64_t unknown = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (unknown >= 0)
        el.raise(r, "ValueError", "can only specify one unknown dimension");
      unknown = static_cast<int64_t>(d);
    } else {
      if (shape[d] < 0)
        el.raise(r, "ValueError", "negative dimensions are not allowed");
      known = std::min<__int128>(known * shape[d], __int128(1) << 64); // saturating
    }
  }
  if (unknown >= 0 && known > 0 && a.size() % known == 0)
    shape[unknown] = static_cast<int64_t>(a.size() / known);
  if (elementCount(el, shape, r) != a.size())
    el.raise(r, "ValueError",
             "cannot reshape array of size " + std::to_string(a.size()) +
                 " into the requested shape");
  auto out = std::make_shared<StaticArrayObj>(a);
  out->shape = std::move(shape);
  return out;
}

StaticArrayPtr transpose(Elaborator &el, const StaticArrayObj &a, const std::vector<int64_t> &perm,
                         SourceRange r) {
  std::vector<int64_t> axes = perm;
  if (axes.empty())
    for (int64_t d = a.rank(); d-- > 0;)
      axes.push_back(d);
  if (static_cast<int64_t>(axes.size()) != a.rank())
    el.raise(r, "ValueError", "axes don't match array");
  std::vector<bool> seen(a.rank(), false);
  for (int64_t &d : axes) {
    d = normalizeAxis(el, d, a.rank(), r);
    if (seen[d])
      el.raise(r, "ValueError", "repeated axis in transpose");
    seen[d] = true;
  }
  std::vector<int64_t> shape, strides = stridesOf(a.shape), permuted;
  for (int64_t d : axes) {
    shape.push_back(a.shape[d]);
    permuted.push_back(strides[d]);
  }
  StaticArrayPtr out = make(el, shape, a.dtype, a.numpy, r);
  int64_t k = 0;
  forEachOffset(shape, permuted, 0, [&](int64_t offset) { copyElement(a, offset, *out, k++); });
  return out;
}

StaticArrayPtr concatenate(Elaborator &el, const std::vector<StaticArrayPtr> &arrays, int64_t axis,
                           SourceRange r) {
  if (arrays.empty())
    el.raise(r, "ValueError", "need at least one array to concatenate");
  const StaticArrayObj &first = *arrays[0];
  if (first.rank() == 0)
    el.raise(r, "ValueError", "zero-dimensional arrays cannot be concatenated");
  axis = normalizeAxis(el, axis, first.rank(), r);
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  DType t = first.dtype;
  bool numpy = true;
  for (const StaticArrayPtr &a : arrays) {
    if (a->rank() != first.rank())
      el.raise(r, "ValueError",
               "all the input array dimensions except for the concatenation "
               "axis must match exactly, but the arrays have different numbers "
               "of dimensions");
    for (int64_t d = 0; d < a->rank(); ++d)
      if (d != axis && a->shape[d] != first.shape[d])
        el.raise(r, "ValueError",
                 "all the input array dimensions except for the concatenation "
                 "axis must match exactly, but along dimension " +
                     std::to_string(d) + ", the array at index 0 has size " +
                     std::to_string(first.shape[d]) + " and another has size " +
                     std::to_string(a->shape[d]));
    shape[axis] += a->shape[axis];
    t = promote(t, a->dtype);
    numpy &= a->numpy;
  }
  StaticArrayPtr out = make(el, shape, t, numpy, r);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < first.rank(); ++d)
    inner *= shape[d];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const StaticArrayPtr &a : arrays) {
      int64_t chunk = a->shape[axis] * inner;
      for (int64_t i = 0; i < chunk; ++i)
        copyElement(*a, o * chunk + i, *out, k++);
    }
  return out;
}

StaticArrayPtr pad(Elaborator &el, const StaticArrayObj &a,
                   const std::vector<std::pair<int64_t, int64_t>> &widths, bool edge,
                   const Obj &value, SourceRange r) {
  std::vector<int64_t> shape = a.shape;
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (widths[d].first < 0 || widths[d].second < 0)
      el.raise(r, "ValueError", "index can't contain negative values");
    if (widths[d].first > (int64_t(1) << 40) || widths[d].second > (int64_t(1) << 40))
      el.raise(r, "ValueError", "array is too big");
    if (edge && a.shape[d] == 0 && (widths[d].first || widths[d].second))
      el.raise(r, "ValueError",
               "can't extend empty axis " + std::to_string(d) +
                   " using modes other than 'constant' or 'empty'");
    shape[d] += widths[d].first + widths[d].second;
  }
  StaticArrayPtr out = make(el, shape, a.dtype, a.numpy, r);
  if (!edge) {
    StaticArrayPtr fill = toStatic(el, value, r, "constant_values", a.numpy);
    if (fill->size() != 1)
      el.fail(r, "np.pad's constant_values must be one number at compile time");
    for (int64_t k = 0; k < out->size(); ++k)
      copyElement(*fill, 0, *out, k);
  }
  std::vector<int64_t> strides = stridesOf(a.shape), coord(shape.size(), 0);
  for (int64_t k = 0; k < out->size(); ++k) {
    int64_t source = 0;
    bool inside = true;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t c = coord[d] - widths[d].first;
      if (c < 0 || c >= a.shape[d]) {
        inside = false;
        c = std::clamp<int64_t>(c, 0, a.shape[d] - 1);
      }
      source += c * strides[d];
    }
    if (inside || edge)
      copyElement(a, source, *out, k);
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < shape[d])
        break;
      coord[d] = 0;
    }
  }
  return out;
}

Obj reduce(Elaborator &el, const StaticArrayObj &a, Reduction kind, std::vector<int64_t> axes,
           bool keepdims, std::optional<DType> dtype, SourceRange r) {
  std::vector<bool> reduced(a.rank(), axes.empty());
  for (int64_t axis : axes) {
    int64_t d = normalizeAxis(el, axis, a.rank(), r);
    if (reduced[d])
      el.raise(r, "ValueError", "duplicate value in 'axis'");
    reduced[d] = true;
  }
  bool arg = kind == Reduction::ArgMax || kind == Reduction::ArgMin;
  std::vector<int64_t> kept, keptStrides, gone, goneStrides, strides = stridesOf(a.shape);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (reduced[d]) {
      gone.push_back(a.shape[d]);
      goneStrides.push_back(strides[d]);
      if (keepdims)
        shape.push_back(1);
    } else {
      kept.push_back(a.shape[d]);
      keptStrides.push_back(strides[d]);
      shape.push_back(a.shape[d]);
    }
  }
  int64_t count = 1;
  for (int64_t g : gone)
    count *= g;
  if (count == 0 && (kind == Reduction::Max || kind == Reduction::Min || arg))
    el.raise(r, "ValueError", "zero-size array to reduction operation which has no identity");
  DType t;
  switch (kind) {
  case Reduction::Any:
  case Reduction::All:
    t = DType::Bool;
    break;
  case Reduction::ArgMax:
  case Reduction::ArgMin:
  case Reduction::CountNonzero:
    t = defaultInt(a.numpy);
    break;
  case Reduction::Mean:
    t = dtype ? *dtype : isFloat(a.dtype) ? a.dtype : defaultFloat(a.numpy);
    break;
  case Reduction::Sum:
  case Reduction::Prod:
    // NumPy sums small integers (and bools) in the platform's long; JAX
    // in its default int.
    if (dtype)
      t = *dtype;
    else if (a.dtype == DType::Bool)
      t = defaultInt(a.numpy);
    else if (isInteger(a.dtype) && (a.numpy || bitWidth(a.dtype) < 32))
      t = isUnsigned(a.dtype) ? (a.numpy ? DType::U64 : DType::U32) : defaultInt(a.numpy);
    else
      t = a.dtype;
    break;
  default:
    t = a.dtype;
  }
  StaticArrayPtr out = make(el, shape, t, a.numpy, r);
  int64_t k = 0;
  bool floats = isFloat(a.dtype) || kind == Reduction::Mean || isFloat(t);
  forEachOffset(kept, keptStrides, 0, [&](int64_t base) {
    double fAcc = kind == Reduction::Prod ? 1 : 0;
    uint64_t iAcc = kind == Reduction::Prod ? 1 : 0;
    bool bAcc = kind == Reduction::All;
    int64_t best = -1, position = 0, nonzero = 0;
    forEachOffset(gone, goneStrides, base, [&](int64_t offset) {
      double v = asDouble(a, offset);
      switch (kind) {
      case Reduction::Sum:
      case Reduction::Mean:
        fAcc += v;
        iAcc += static_cast<uint64_t>(asInt(a, offset));
        break;
      case Reduction::Prod:
        fAcc *= v;
        iAcc *= static_cast<uint64_t>(asInt(a, offset));
        break;
      case Reduction::Any:
        bAcc = bAcc || v != 0;
        break;
      case Reduction::All:
        bAcc = bAcc && v != 0;
        break;
      case Reduction::CountNonzero:
        nonzero += v != 0;
        break;
      default: {
        // max, min and their args: the first extremum; NaN wins.
        bool better = best < 0;
        if (!better) {
          double b = asDouble(a, best);
          bool max = kind == Reduction::Max || kind == Reduction::ArgMax;
          if (std::isnan(b))
            better = false;
          else if (std::isnan(v))
            better = true;
          else if (!isFloat(a.dtype) && a.dtype != DType::U64)
            better = max ? asInt(a, offset) > asInt(a, best) : asInt(a, offset) < asInt(a, best);
          else
            better = max ? v > b : v < b;
        }
        if (better) {
          best = offset;
          position = nonzero;
        }
        ++nonzero; // counts positions here
      }
      }
    });
    switch (kind) {
    case Reduction::Sum:
    case Reduction::Prod:
      if (floats)
        storeDouble(*out, k, fAcc);
      else
        storeInt(*out, k, static_cast<int64_t>(iAcc), t == DType::U64);
      break;
    case Reduction::Mean:
      storeDouble(*out, k, count ? fAcc / static_cast<double>(count) : NAN);
      break;
    case Reduction::Any:
    case Reduction::All:
      out->ints[k] = bAcc;
      break;
    case Reduction::CountNonzero:
      out->ints[k] = nonzero;
      break;
    case Reduction::ArgMax:
    case Reduction::ArgMin:
      out->ints[k] = position;
      break;
    default:
      copyElement(a, best, *out, k);
    }
    ++k;
  });
  return result(out);
}

StaticArrayPtr cumulative(Elaborator &el, const StaticArrayObj &a, bool product,
                          std::optional<int64_t> axis, SourceRange r) {
  StaticArrayPtr source = std::make_shared<StaticArrayObj>(a);
  if (!axis) {
    source->shape = {a.size()};
    axis = 0;
  }
  int64_t d = normalizeAxis(el, *axis, source->rank(), r);
  DType t = isFloat(a.dtype)                    ? a.dtype
            : a.numpy && bitWidth(a.dtype) < 64 ? (isUnsigned(a.dtype) ? DType::U64 : DType::I64)
            : a.dtype == DType::Bool            ? defaultInt(a.numpy)
                                                : a.dtype;
  StaticArrayPtr out = make(el, source->shape, t, a.numpy, r);
  std::vector<int64_t> strides = stridesOf(source->shape), outer = source->shape,
                       outerStrides = strides;
  outer[d] = 1;
  int64_t length = source->shape[d], stride = strides[d];
  forEachOffset(outer, outerStrides, 0, [&](int64_t base) {
    double f = product ? 1 : 0;
    uint64_t i = product ? 1 : 0;
    for (int64_t j = 0; j < length; ++j) {
      int64_t at = base + j * stride;
      if (isFloat(t)) {
        f = product ? f * asDouble(*source, at) : f + asDouble(*source, at);
        storeDouble(*out, at, f);
      } else {
        auto v = static_cast<uint64_t>(asInt(*source, at));
        i = product ? i * v : i + v;
        storeInt(*out, at, static_cast<int64_t>(i), t == DType::U64);
      }
    }
  });
  return out;
}

std::vector<StaticArrayPtr> nonzero(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  if (a.rank() == 0)
    el.raise(r, "ValueError",
             "Calling nonzero on 0d arrays is not allowed. Use "
             "np.atleast_1d(scalar).nonzero() instead.");
  int64_t hits = 0;
  for (int64_t k = 0; k < a.size(); ++k)
    hits += asDouble(a, k) != 0;
  std::vector<StaticArrayPtr> coords;
  for (int64_t d = 0; d < a.rank(); ++d)
    coords.push_back(make(el, {hits}, DType::I64, a.numpy, r));
  int64_t h = 0;
  for (int64_t k = 0; k < a.size(); ++k) {
    if (asDouble(a, k) == 0)
      continue;
    int64_t rest = k;
    for (int64_t d = a.rank(); d-- > 0;) {
      coords[d]->ints[h] = rest % a.shape[d];
      rest /= a.shape[d];
    }
    ++h;
  }
  return coords;
}

namespace {

/// NumPy's sort order: NaNs last.
bool lessThan(const StaticArrayObj &a, int64_t x, int64_t y) {
  if (isFloat(a.dtype)) {
    double u = a.floats[x], v = a.floats[y];
    if (std::isnan(u))
      return false;
    return std::isnan(v) || u < v;
  }
  if (a.dtype == DType::U64)
    return static_cast<uint64_t>(a.ints[x]) < static_cast<uint64_t>(a.ints[y]);
  return a.ints[x] < a.ints[y];
}

} // namespace

StaticArrayPtr sort(Elaborator &el, const StaticArrayObj &a, std::optional<int64_t> axis,
                    bool indices, SourceRange r) {
  StaticArrayPtr source = std::make_shared<StaticArrayObj>(a);
  if (!axis) {
    source->shape = {a.size()};
    axis = -1;
  }
  if (source->rank() == 0)
    el.raise(r, "AxisError", "axis -1 is out of bounds for array of dimension 0");
  int64_t d = normalizeAxis(el, *axis, source->rank(), r);
  StaticArrayPtr out = make(el, source->shape, indices ? defaultInt(a.numpy) : a.dtype, a.numpy, r);
  std::vector<int64_t> strides = stridesOf(source->shape), outer = source->shape;
  outer[d] = 1;
  int64_t length = source->shape[d], stride = strides[d];
  forEachOffset(outer, strides, 0, [&](int64_t base) {
    std::vector<int64_t> order(length);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return lessThan(*source, base + x * stride, base + y * stride);
    });
    for (int64_t j = 0; j < length; ++j) {
      if (indices)
        out->ints[base + j * stride] = order[j];
      else
        copyElement(*source, base + order[j] * stride, *out, base + j * stride);
    }
  });
  return out;
}

StaticArrayPtr unique(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  StaticArrayPtr sorted = sort(el, a, std::nullopt, false, r);
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < sorted->size(); ++k)
    if (k == 0 || lessThan(*sorted, k - 1, k))
      keep.push_back(k);
  StaticArrayPtr out = make(el, {static_cast<int64_t>(keep.size())}, a.dtype, a.numpy, r);
  for (size_t k = 0; k < keep.size(); ++k)
    copyElement(*sorted, keep[k], *out, static_cast<int64_t>(k));
  return out;
}

Obj select3(Elaborator &el, const Obj &cond, const Obj &x, const Obj &y, SourceRange r) {
  StaticArrayPtr c = toStatic(el, cond, r, "the condition");
  bool numpy = c->numpy;
  // The result type is that of x + y (Python scalars weak).
  Obj sum = binary(el, ast::BinaryOp::Add, x, y, r);
  DType t = llvm::isa<StaticArrayObj>(sum.get()) ? llvm::cast<StaticArrayObj>(*sum).dtype
            : llvm::isa<FloatObj>(sum.get())     ? defaultFloat(numpy)
            : llvm::isa<BoolObj>(sum.get())      ? DType::Bool
                                                 : defaultInt(numpy);
  if (llvm::isa<BoolObj>(x.get()) && llvm::isa<BoolObj>(y.get()))
    t = DType::Bool;
  StaticArrayPtr xs = toStatic(el, x, r, "x", numpy), ys = toStatic(el, y, r, "y", numpy);
  std::vector<int64_t> shape =
      broadcastShapes(el, broadcastShapes(el, c->shape, xs->shape, r), ys->shape, r);
  StaticArrayPtr cb = broadcastTo(el, *c, shape, r), xb = broadcastTo(el, *xs, shape, r),
                 yb = broadcastTo(el, *ys, shape, r);
  StaticArrayPtr out = make(el, shape, t, numpy && xs->numpy && ys->numpy, r);
  for (int64_t k = 0; k < out->size(); ++k)
    copyElement(asDouble(*cb, k) != 0 ? *xb : *yb, k, *out, k);
  return result(out);
}

} // namespace pk::elab::static_array
