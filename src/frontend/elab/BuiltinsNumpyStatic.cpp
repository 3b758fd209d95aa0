//===- BuiltinsNumpyStatic.cpp - np.* on arrays known at compile time -----===//
//
// The NumPy functions, ndarray methods and attributes of the compile-time
// NumPy engine (StaticArray.h), and where static arrays turn into the
// arrays JAX would make of them.
//
// Elaborator::call asks static_numpy::call first: an np function the
// engine has runs here when nothing traced reaches it (outside kernels;
// in a kernel only when a static array does), so `np.arange(8)` in a
// kernel stays an iota and `np.prod(shape)` a number.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/StaticArray.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace pk::elab::static_numpy {

namespace sa = static_array;
using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

namespace {

/// An np function of the engine; `numpy` is false when jnp's spelling
/// runs at module level (JAX's dtypes then).
using Fn = std::function<Obj(Elaborator &, CallArgs &, bool numpy)>;

struct Entry {
  Fn fn;
  /// Makes an array from nothing but numbers and shapes (np.zeros): runs
  /// statically even when no static array is among its arguments.
  bool creation = false;
};

bool isTraced(const Obj &o) {
  return llvm::isa<ArrayObj, RefObj, GlobalArrayObj, SymIntObj, DynamicSliceObj>(o.get()) ||
         asOpaque(o);
}

/// Whether `holds` is true of some argument's leaves.
bool anyArgument(const CallArgs &args, const std::function<bool(const Obj &)> &holds) {
  if (llvm::any_of(args.positional, holds))
    return true;
  return llvm::any_of(args.keywords, [&](const auto &keyword) { return holds(keyword.second); });
}

bool holdsTraced(const Obj &o) {
  bool found = false;
  forEachLeaf(o, [&](const Obj &leaf) { found |= isTraced(leaf); });
  return found;
}

StaticArrayPtr arrayArg(Elaborator &el, const BoundArgs &a, size_t i, bool numpy) {
  return sa::toStatic(el, a[i], a.range(i), "the array", numpy);
}

std::optional<DType> dtypeArg(Elaborator &el, const BoundArgs &a, size_t i, bool numpy) {
  if (isNone(a[i]))
    return std::nullopt;
  return sa::toDType(el, a[i], a.range(i), numpy);
}

/// An axis argument: None (every axis), an int, or a tuple of ints.
std::vector<int64_t> axesArg(Elaborator &el, const Obj &o, SourceRange r) {
  std::vector<int64_t> axes;
  if (isNone(o))
    return axes;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    for (const Obj &item : seq->items)
      axes.push_back(el.toInt(item, r, "axis"));
    if (axes.empty())
      axes.push_back(-1000000); // an empty tuple reduces nothing: marked below
    return axes;
  }
  axes.push_back(el.toInt(o, r, "axis"));
  return axes;
}

std::vector<int64_t> shapeArg(Elaborator &el, const Obj &o, SourceRange r) {
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    return {i->value};
  return el.toShape(o, r, "shape");
}

/// Reductions: np.sum(a, axis=None, dtype=None, out=None, keepdims=False).
Obj reduction(Elaborator &el, CallArgs &args, bool numpy, sa::Reduction kind) {
  bool takesDtype =
      kind == sa::Reduction::Sum || kind == sa::Reduction::Prod || kind == sa::Reduction::Mean;
  BoundArgs a = el.bind(
      args,
      {{"a"}, {"axis", none()}, {"dtype", none()}, {"out", none()}, {"keepdims", makeBool(false)}});
  if (!takesDtype && !isNone(a[2]))
    el.fail(a.range(2), "this reduction takes no dtype");
  if (!isNone(a[3]))
    el.fail(a.range(3), "out= is not supported at compile time");
  StaticArrayPtr x = arrayArg(el, a, 0, numpy);
  std::vector<int64_t> axes = axesArg(el, a[1], a.range(1));
  if (axes.size() == 1 && axes[0] == -1000000) // axis=(): nothing reduced
    return sa::result(
        dtypeArg(el, a, 2, numpy) ? sa::astype(el, *x, *dtypeArg(el, a, 2, numpy), args.range) : x);
  if ((kind == sa::Reduction::ArgMax || kind == sa::Reduction::ArgMin) && axes.size() > 1)
    el.fail(a.range(1), "argmax/argmin take one axis");
  if (x->rank() == 0 && axes.empty() &&
      (kind == sa::Reduction::ArgMax || kind == sa::Reduction::ArgMin))
    return makeInt(0);
  return sa::reduce(el, *x, kind, axes, el.truthy(a[4], a.range(4)), dtypeArg(el, a, 2, numpy),
                    args.range);
}

Obj argReduction(Elaborator &el, CallArgs &args, bool numpy, sa::Reduction kind) {
  BoundArgs a =
      el.bind(args, {{"a"}, {"axis", none()}, {"out", none()}, {"keepdims", makeBool(false)}});
  StaticArrayPtr x = arrayArg(el, a, 0, numpy);
  if (isNone(a[1])) {
    // Over the flattened array.
    StaticArrayPtr flat = sa::reshape(el, *x, {x->size()}, args.range);
    return sa::reduce(el, *flat, kind, {0}, false, std::nullopt, args.range);
  }
  return sa::reduce(el, *x, kind, {el.toInt(a[1], a.range(1), "axis")}, el.truthy(a[3], a.range(3)),
                    std::nullopt, args.range);
}

std::vector<StaticArrayPtr> arrayList(Elaborator &el, const Obj &o, SourceRange r, bool numpy) {
  std::vector<StaticArrayPtr> arrays;
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get())) {
    for (const Obj &row : sa::rows(el, *a, r))
      arrays.push_back(sa::toStatic(el, row, r, "an array", numpy));
    return arrays;
  }
  for (const Obj &item : el.iterate(o, r))
    arrays.push_back(sa::toStatic(el, item, r, "an array", numpy));
  return arrays;
}

StaticArrayPtr expandDims(Elaborator &el, const StaticArrayObj &x, int64_t axis, SourceRange r) {
  std::vector<int64_t> shape = x.shape;
  axis = sa::normalizeAxis(el, axis, x.rank() + 1, r);
  shape.insert(shape.begin() + axis, 1);
  return sa::reshape(el, x, shape, r);
}

StaticArrayPtr squeeze(Elaborator &el, const StaticArrayObj &x, const Obj &axis, SourceRange r) {
  std::vector<int64_t> axes = axesArg(el, axis, r), shape;
  std::vector<bool> drop(x.rank(), axes.empty());
  for (int64_t d : axes) {
    d = sa::normalizeAxis(el, d, x.rank(), r);
    if (x.shape[d] != 1)
      el.raise(r, "ValueError",
               "cannot select an axis to squeeze out which has size not equal to one");
    drop[d] = true;
  }
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!(drop[d] && x.shape[d] == 1))
      shape.push_back(x.shape[d]);
  return sa::reshape(el, x, shape, r);
}

StaticArrayPtr swapAxes(Elaborator &el, const StaticArrayObj &x, int64_t a1, int64_t a2,
                        SourceRange r) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x.rank(); ++d)
    perm.push_back(d);
  std::swap(perm[sa::normalizeAxis(el, a1, x.rank(), r)],
            perm[sa::normalizeAxis(el, a2, x.rank(), r)]);
  return sa::transpose(el, x, perm, r);
}

/// `reshape(2, 3)` or `reshape((2, 3))` as a method takes its shape either way.
std::vector<int64_t> shapeFromArgs(Elaborator &el, CallArgs &args, size_t first) {
  if (args.positional.size() == first + 1)
    return shapeArg(el, args.positional[first], args.rangeOf(first));
  std::vector<int64_t> shape;
  for (size_t i = first; i < args.positional.size(); ++i)
    shape.push_back(el.toInt(args.positional[i], args.rangeOf(i), "a dimension"));
  return shape;
}

std::vector<std::pair<int64_t, int64_t>> padWidths(Elaborator &el, const Obj &o, int64_t rank,
                                                   SourceRange r) {
  // An int, (before, after), ((before, after),) or one pair per axis.
  std::vector<std::pair<int64_t, int64_t>> widths;
  auto pairOf = [&](const Obj &p) -> std::pair<int64_t, int64_t> {
    if (auto *seq = llvm::dyn_cast<SequenceObj>(p.get())) {
      if (seq->items.size() == 1) {
        int64_t w = el.toInt(seq->items[0], r, "pad_width");
        return {w, w};
      }
      if (seq->items.size() == 2)
        return {el.toInt(seq->items[0], r, "pad_width"), el.toInt(seq->items[1], r, "pad_width")};
      el.raise(r, "ValueError", "operands could not be broadcast together (pad_width)");
    }
    int64_t w = el.toInt(p, r, "pad_width");
    return {w, w};
  };
  auto *seq = llvm::dyn_cast<SequenceObj>(o.get());
  if (seq && !seq->items.empty() && llvm::isa<SequenceObj>(seq->items[0].get())) {
    if (seq->items.size() == 1)
      widths.assign(rank, pairOf(seq->items[0]));
    else if (static_cast<int64_t>(seq->items.size()) == rank)
      for (const Obj &item : seq->items)
        widths.push_back(pairOf(item));
    else
      el.raise(r, "ValueError",
               "operands could not be broadcast together with remapped shapes "
               "(pad_width has " +
                   std::to_string(seq->items.size()) + " pairs for " + std::to_string(rank) +
                   " axes)");
  } else {
    widths.assign(rank, pairOf(o));
  }
  return widths;
}

std::map<std::string, Entry> &table() {
  static std::map<std::string, Entry> entries = [] {
    std::map<std::string, Entry> t;
    auto creation = [&](const char *name, Fn fn) { t[name] = Entry{std::move(fn), true}; };
    auto function = [&](const char *name, Fn fn) { t[name] = Entry{std::move(fn), false}; };

    // Making arrays.
    auto array = [](bool copy) {
      return [copy](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"object"},
                                     {"dtype", none()},
                                     {"copy", none(), true},
                                     {"order", none(), true},
                                     {"ndmin", makeInt(0), true}});
        std::optional<DType> dtype = dtypeArg(el, a, 1, numpy);
        if (auto *x = llvm::dyn_cast<StaticArrayObj>(a[0].get())) {
          if (!copy && (!dtype || *dtype == x->dtype) && x->numpy == numpy)
            return a[0];
          StaticArrayPtr out = sa::astype(el, *x, dtype ? *dtype : x->dtype, args.range);
          out->numpy = numpy;
          return out;
        }
        StaticArrayPtr out = sa::fromData(el, a[0], dtype, numpy, args.range);
        return out ? Obj(out) : nullptr; // not data: jnp's array() decides
      };
    };
    creation("array", array(true));
    creation("asarray", array(false));
    creation("asanyarray", array(false));
    creation("ascontiguousarray", array(false));
    creation("arange", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a =
          el.bind(args, {{"start"}, {"stop", none()}, {"step", none()}, {"dtype", none()}});
      Obj start = a[0], stop = a[1], step = isNone(a[2]) ? makeInt(1) : a[2];
      if (isNone(stop)) {
        stop = start;
        start = makeInt(0);
      }
      return sa::arange(el, start, stop, step, dtypeArg(el, a, 3, numpy), numpy, args.range);
    });
    auto filled = [](int which) { // 0 zeros, 1 ones, 2 empty, 3 full
      return [which](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = which == 3 ? el.bind(args, {{"shape"}, {"fill_value"}, {"dtype", none()}})
                                 : el.bind(args, {{"shape"}, {"dtype", none()}});
        std::vector<int64_t> shape = shapeArg(el, a[0], a.range(0));
        size_t dtypeAt = which == 3 ? 2 : 1;
        Obj value = which == 3 ? a[1] : makeInt(which == 1 ? 1 : 0);
        std::optional<DType> dtype = dtypeArg(el, a, dtypeAt, numpy);
        if (!dtype)
          dtype = which == 3 ? sa::toStatic(el, value, a.range(1), "fill_value", numpy)->dtype
                             : sa::defaultFloat(numpy);
        return sa::full(el, shape, value, *dtype, numpy, args.range);
      };
    };
    creation("zeros", filled(0));
    creation("ones", filled(1));
    creation("empty", filled(2));
    creation("full", filled(3));
    auto like = [](int which) {
      return [which](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a =
            which == 3
                ? el.bind(args, {{"a"}, {"fill_value"}, {"dtype", none()}, {"shape", none()}})
                : el.bind(args, {{"a"}, {"dtype", none()}, {"shape", none()}});
        size_t dtypeAt = which == 3 ? 2 : 1;
        StaticArrayPtr x = arrayArg(el, a, 0, numpy);
        std::optional<DType> dtype = dtypeArg(el, a, dtypeAt, numpy);
        std::vector<int64_t> shape =
            isNone(a[dtypeAt + 1]) ? x->shape : shapeArg(el, a[dtypeAt + 1], a.range(dtypeAt + 1));
        Obj value = which == 3 ? a[1] : makeInt(which == 1 ? 1 : 0);
        return sa::full(el, shape, value, dtype ? *dtype : x->dtype, x->numpy, args.range);
      };
    };
    function("zeros_like", like(0));
    function("ones_like", like(1));
    function("empty_like", like(2));
    function("full_like", like(3));
    creation("eye", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"N"}, {"M", none()}, {"k", makeInt(0)}, {"dtype", none()}});
      int64_t rows = el.toInt(a[0], a.range(0), "N");
      int64_t cols = isNone(a[1]) ? rows : el.toInt(a[1], a.range(1), "M");
      int64_t k = el.toInt(a[2], a.range(2), "k");
      std::optional<DType> dtype = dtypeArg(el, a, 3, numpy);
      StaticArrayPtr out =
          sa::make(el, {rows, cols}, dtype ? *dtype : sa::defaultFloat(numpy), numpy, args.range);
      for (int64_t i = 0; i < rows && k < cols && k > -rows; ++i)
        if (i + k >= 0 && i + k < cols)
          sa::storeInt(*out, i * cols + i + k, 1);
      return out;
    });
    // indices(dimensions): out[k] holds each position's index along axis k.
    creation("indices", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"dimensions"}, {"dtype", none()}, {"sparse", makeBool(false)}});
      if (el.truthy(a[2], a.range(2)))
        el.fail(a.range(2), "indices(sparse=True) is not supported by pkc yet");
      std::vector<int64_t> dims = shapeArg(el, a[0], a.range(0));
      std::optional<DType> dtype = dtypeArg(el, a, 1, numpy);
      std::vector<int64_t> shape{static_cast<int64_t>(dims.size())};
      shape.insert(shape.end(), dims.begin(), dims.end());
      StaticArrayPtr out =
          sa::make(el, shape, dtype ? *dtype : sa::defaultInt(numpy), numpy, args.range);
      int64_t size = 1;
      for (int64_t d : dims)
        size *= d;
      for (size_t k = 0; k < dims.size(); ++k) {
        int64_t inner = 1; // elements per step along axis k
        for (size_t j = k + 1; j < dims.size(); ++j)
          inner *= dims[j];
        for (int64_t flat = 0; flat < size; ++flat)
          sa::storeInt(*out, static_cast<int64_t>(k) * size + flat, (flat / inner) % dims[k]);
      }
      return out;
    });
    creation("identity", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"n"}, {"dtype", none()}});
      CallArgs eye;
      eye.range = args.range;
      eye.addPositional(a[0], a.range(0));
      eye.keywords.push_back({"dtype", a[1]});
      eye.keywordRanges.push_back(a.range(1));
      return table().at("eye").fn(el, eye, numpy);
    });
    creation("linspace", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"start"},
                                   {"stop"},
                                   {"num", makeInt(50)},
                                   {"endpoint", makeBool(true)},
                                   {"retstep", makeBool(false)},
                                   {"dtype", none()}});
      double first = el.toDouble(a[0], a.range(0), "start"),
             last = el.toDouble(a[1], a.range(1), "stop");
      int64_t n = el.toInt(a[2], a.range(2), "num");
      if (n < 0)
        el.raise(a.range(2), "ValueError",
                 "Number of samples, " + std::to_string(n) + ", must be non-negative.");
      if (el.truthy(a[4], a.range(4)))
        el.fail(a.range(4), "np.linspace(retstep=True) is not supported at compile time");
      bool endpoint = el.truthy(a[3], a.range(3));
      std::optional<DType> dtype = dtypeArg(el, a, 5, numpy);
      StaticArrayPtr out =
          sa::make(el, {n}, dtype ? *dtype : sa::defaultFloat(numpy), numpy, args.range);
      double div = endpoint ? static_cast<double>(n - 1) : static_cast<double>(n);
      double step = div > 0 ? (last - first) / div : 0;
      for (int64_t k = 0; k < n; ++k)
        sa::storeDouble(*out, k,
                        endpoint && k == n - 1 && n > 1 ? last
                                                        : first + static_cast<double>(k) * step);
      return out;
    });
    creation("ndindex", [](Elaborator &el, CallArgs &args, bool) -> Obj {
      std::vector<int64_t> shape = shapeFromArgs(el, args, 0);
      int64_t n = sa::elementCount(el, shape, args.range);
      std::vector<Obj> items;
      std::vector<int64_t> coord(shape.size(), 0);
      for (int64_t k = 0; k < n; ++k) {
        el.spendFuel(args.range);
        std::vector<Obj> index;
        for (int64_t c : coord)
          index.push_back(makeInt(c));
        items.push_back(makeTuple(std::move(index)));
        for (size_t d = coord.size(); d-- > 0;) {
          if (++coord[d] < shape[d])
            break;
          coord[d] = 0;
        }
      }
      return std::make_shared<IteratorObj>(std::move(items));
    });
    auto triangle = [](bool lower) {
      return [lower](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"m"}, {"k", makeInt(0)}});
        StaticArrayPtr x = arrayArg(el, a, 0, numpy);
        int64_t k = el.toInt(a[1], a.range(1), "k");
        if (x->rank() == 0)
          el.raise(a.range(0), "ValueError", "input array must be at least 1-d");
        if (x->rank() == 1) // NumPy masks a square of the row
          x = sa::broadcastTo(el, *x, {x->shape[0], x->shape[0]}, args.range);
        StaticArrayPtr out = sa::astype(el, *x, x->dtype, args.range);
        int64_t rows = x->shape[x->rank() - 2], cols = x->shape.back();
        for (int64_t e = 0; e < out->size(); ++e) {
          int64_t j = e % cols, i = (e / cols) % rows;
          if (lower ? j - i > k : j - i < k)
            sa::storeInt(*out, e, 0);
        }
        return out;
      };
    };
    function("tril", triangle(true));
    function("triu", triangle(false));

    // Shapes.
    function("reshape", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"shape"}});
      return sa::reshape(el, *arrayArg(el, a, 0, numpy), shapeArg(el, a[1], a.range(1)),
                         args.range);
    });
    function("ravel", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      StaticArrayPtr x = arrayArg(el, a, 0, numpy);
      return sa::reshape(el, *x, {x->size()}, args.range);
    });
    function("transpose", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axes", none()}});
      std::vector<int64_t> perm =
          isNone(a[1]) ? std::vector<int64_t>{} : el.toShape(a[1], a.range(1), "axes");
      return sa::transpose(el, *arrayArg(el, a, 0, numpy), perm, args.range);
    });
    function("swapaxes", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis1"}, {"axis2"}});
      return swapAxes(el, *arrayArg(el, a, 0, numpy), el.toInt(a[1], a.range(1), "axis1"),
                      el.toInt(a[2], a.range(2), "axis2"), args.range);
    });
    function("expand_dims", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis"}});
      return expandDims(el, *arrayArg(el, a, 0, numpy), el.toInt(a[1], a.range(1), "axis"),
                        args.range);
    });
    function("squeeze", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}});
      return sa::result(squeeze(el, *arrayArg(el, a, 0, numpy), a[1], args.range));
    });
    function("broadcast_to", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"array"}, {"shape"}});
      return sa::broadcastTo(el, *arrayArg(el, a, 0, numpy), shapeArg(el, a[1], a.range(1)),
                             args.range);
    });
    function("concatenate", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a =
          el.bind(args, {{"arrays"}, {"axis", makeInt(0)}, {"out", none()}, {"dtype", none()}});
      std::vector<StaticArrayPtr> arrays = arrayList(el, a[0], a.range(0), numpy);
      if (isNone(a[1]))
        for (StaticArrayPtr &x : arrays)
          x = sa::reshape(el, *x, {x->size()}, args.range);
      StaticArrayPtr out = sa::concatenate(
          el, arrays, isNone(a[1]) ? 0 : el.toInt(a[1], a.range(1), "axis"), args.range);
      std::optional<DType> dtype = dtypeArg(el, a, 3, numpy);
      return dtype ? sa::astype(el, *out, *dtype, args.range) : out;
    });
    function("stack", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a =
          el.bind(args, {{"arrays"}, {"axis", makeInt(0)}, {"out", none()}, {"dtype", none()}});
      std::vector<StaticArrayPtr> arrays = arrayList(el, a[0], a.range(0), numpy);
      if (arrays.empty())
        el.raise(args.range, "ValueError", "need at least one array to stack");
      int64_t axis = el.toInt(a[1], a.range(1), "axis");
      std::vector<int64_t> shape = arrays[0]->shape;
      for (StaticArrayPtr &x : arrays) {
        if (x->shape != shape)
          el.raise(args.range, "ValueError", "all input arrays must have the same shape");
        x = expandDims(el, *x, axis, args.range);
      }
      StaticArrayPtr out = sa::concatenate(
          el, arrays, sa::normalizeAxis(el, axis, arrays[0]->rank(), args.range), args.range);
      std::optional<DType> dtype = dtypeArg(el, a, 3, numpy);
      return dtype ? sa::astype(el, *out, *dtype, args.range) : out;
    });
    auto stackAlong = [](bool vertical) {
      return [vertical](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"tup"}});
        std::vector<StaticArrayPtr> arrays = arrayList(el, a[0], a.range(0), numpy);
        int64_t axis = 0;
        for (StaticArrayPtr &x : arrays) {
          if (vertical && x->rank() < 2)
            x = sa::reshape(el, *x, {1, x->size()}, args.range);
          if (!vertical && x->rank() == 0)
            x = sa::reshape(el, *x, {1}, args.range);
        }
        if (!vertical && !arrays.empty() && arrays[0]->rank() > 1)
          axis = 1;
        return sa::concatenate(el, arrays, axis, args.range);
      };
    };
    function("vstack", stackAlong(true));
    function("hstack", stackAlong(false));
    function("pad", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"array"},
                                   {"pad_width"},
                                   {"mode", makeStr("constant")},
                                   {"constant_values", makeInt(0), true}});
      StaticArrayPtr x = arrayArg(el, a, 0, numpy);
      std::string mode = el.toStr(a[2], a.range(2), "mode");
      if (mode != "constant" && mode != "edge")
        el.fail(a.range(2),
                "np.pad at compile time supports mode='constant' and 'edge', not '" + mode + "'");
      return sa::pad(el, *x, padWidths(el, a[1], x->rank(), a.range(1)), mode == "edge", a[3],
                     args.range);
    });
    function("tile", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"A"}, {"reps"}});
      StaticArrayPtr x = arrayArg(el, a, 0, numpy);
      std::vector<int64_t> reps = shapeArg(el, a[1], a.range(1));
      std::vector<int64_t> shape = x->shape;
      while (shape.size() < reps.size())
        shape.insert(shape.begin(), 1);
      while (reps.size() < shape.size())
        reps.insert(reps.begin(), 1);
      std::vector<int64_t> target = shape;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (reps[d] < 0 || reps[d] > (int64_t(1) << 30))
          el.raise(a.range(1), "ValueError", "tile's reps must be between 0 and 2**30");
        target[d] *= reps[d];
      }
      sa::requireBudget(el, target, args.range);
      if (sa::elementCount(el, target, args.range) == 0)
        return sa::make(el, target, x->dtype, x->numpy, args.range);
      StaticArrayPtr out = sa::reshape(el, *x, shape, args.range);
      for (size_t d = 0; d < shape.size(); ++d)
        out = sa::concatenate(el, std::vector<StaticArrayPtr>(reps[d], out),
                              static_cast<int64_t>(d), args.range);
      return out;
    });

    // Searching and reducing.
    function("nonzero", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      std::vector<Obj> coords;
      for (StaticArrayPtr &c : sa::nonzero(el, *arrayArg(el, a, 0, numpy), args.range))
        coords.push_back(c);
      return makeTuple(std::move(coords));
    });
    function("flatnonzero", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      StaticArrayPtr x = arrayArg(el, a, 0, numpy);
      return sa::nonzero(el, *sa::reshape(el, *x, {x->size()}, args.range), args.range)[0];
    });
    function("argwhere", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      std::vector<StaticArrayPtr> coords = sa::nonzero(el, *arrayArg(el, a, 0, numpy), args.range);
      for (StaticArrayPtr &c : coords)
        c = expandDims(el, *c, 1, args.range);
      return sa::concatenate(el, coords, 1, args.range);
    });
    function("where", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"condition"}, optionalParam("x"), optionalParam("y")});
      if (!a[1] && !a[2]) {
        std::vector<Obj> coords;
        for (StaticArrayPtr &c : sa::nonzero(el, *arrayArg(el, a, 0, numpy), args.range))
          coords.push_back(c);
        return makeTuple(std::move(coords));
      }
      if (!a[1] || !a[2])
        el.raise(args.range, "ValueError", "either both or neither of x and y should be given");
      return sa::select3(el, a[0], a[1], a[2], args.range);
    });
    function("array_equal", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a1"}, {"a2"}, {"equal_nan", makeBool(false)}});
      return makeBool(sa::equalContents(*arrayArg(el, a, 0, numpy), *arrayArg(el, a, 1, numpy),
                                        el.truthy(a[2], a.range(2))));
    });
    auto reduceWith = [](sa::Reduction kind) {
      return [kind](Elaborator &el, CallArgs &args, bool numpy) {
        return reduction(el, args, numpy, kind);
      };
    };
    function("sum", reduceWith(sa::Reduction::Sum));
    function("prod", reduceWith(sa::Reduction::Prod));
    function("mean", reduceWith(sa::Reduction::Mean));
    function("max", reduceWith(sa::Reduction::Max));
    function("amax", reduceWith(sa::Reduction::Max));
    function("min", reduceWith(sa::Reduction::Min));
    function("amin", reduceWith(sa::Reduction::Min));
    function("any", reduceWith(sa::Reduction::Any));
    function("all", reduceWith(sa::Reduction::All));
    function("argmax", [](Elaborator &el, CallArgs &args, bool numpy) {
      return argReduction(el, args, numpy, sa::Reduction::ArgMax);
    });
    function("argmin", [](Elaborator &el, CallArgs &args, bool numpy) {
      return argReduction(el, args, numpy, sa::Reduction::ArgMin);
    });
    function("count_nonzero", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"keepdims", makeBool(false)}});
      return sa::reduce(el, *arrayArg(el, a, 0, numpy), sa::Reduction::CountNonzero,
                        axesArg(el, a[1], a.range(1)), el.truthy(a[2], a.range(2)), std::nullopt,
                        args.range);
    });
    auto cumulative = [](bool product) {
      return [product](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"dtype", none()}});
        StaticArrayPtr out = sa::cumulative(
            el, *arrayArg(el, a, 0, numpy), product,
            isNone(a[1]) ? std::nullopt
                         : std::optional<int64_t>(el.toInt(a[1], a.range(1), "axis")),
            args.range);
        std::optional<DType> dtype = dtypeArg(el, a, 2, numpy);
        return dtype ? sa::astype(el, *out, *dtype, args.range) : out;
      };
    };
    function("cumsum", cumulative(false));
    function("cumprod", cumulative(true));
    auto sorting = [](bool indices) {
      return [indices](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a =
            el.bind(args, {{"a"}, {"axis", makeInt(-1)}, {"kind", none()}, {"order", none()}});
        return sa::sort(el, *arrayArg(el, a, 0, numpy),
                        isNone(a[1]) ? std::nullopt
                                     : std::optional<int64_t>(el.toInt(a[1], a.range(1), "axis")),
                        indices, args.range);
      };
    };
    function("sort", sorting(false));
    function("argsort", sorting(true));
    function("unique", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"ar"}});
      return sa::unique(el, *arrayArg(el, a, 0, numpy), args.range);
    });

    // Element-wise.
    auto binaryFn = [](BinaryOp op) {
      return [op](Elaborator &el, CallArgs &args, bool) -> Obj {
        BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
        return sa::binary(el, op, a[0], a[1], args.range);
      };
    };
    for (auto [name, op] : {std::pair{"add", BinaryOp::Add},
                            {"subtract", BinaryOp::Sub},
                            {"multiply", BinaryOp::Mul},
                            {"divide", BinaryOp::Div},
                            {"true_divide", BinaryOp::Div},
                            {"floor_divide", BinaryOp::FloorDiv},
                            {"mod", BinaryOp::Mod},
                            {"remainder", BinaryOp::Mod},
                            {"power", BinaryOp::Pow},
                            {"bitwise_and", BinaryOp::BitAnd},
                            {"bitwise_or", BinaryOp::BitOr},
                            {"bitwise_xor", BinaryOp::BitXor},
                            {"left_shift", BinaryOp::LShift},
                            {"right_shift", BinaryOp::RShift},
                            {"matmul", BinaryOp::MatMul},
                            {"dot", BinaryOp::MatMul}})
      function(name, binaryFn(op));
    auto compareFn = [](CompareOp op) {
      return [op](Elaborator &el, CallArgs &args, bool) -> Obj {
        BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
        return sa::compare(el, op, a[0], a[1], args.range);
      };
    };
    for (auto [name, op] : {std::pair{"equal", CompareOp::Eq},
                            {"not_equal", CompareOp::Ne},
                            {"less", CompareOp::Lt},
                            {"less_equal", CompareOp::Le},
                            {"greater", CompareOp::Gt},
                            {"greater_equal", CompareOp::Ge}})
      function(name, compareFn(op));
    auto logicalFn = [](BinaryOp op) {
      return [op](Elaborator &el, CallArgs &args, bool) -> Obj {
        BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
        return sa::logical(el, op, a[0], a[1], args.range);
      };
    };
    function("logical_and", logicalFn(BinaryOp::BitAnd));
    function("logical_or", logicalFn(BinaryOp::BitOr));
    function("logical_xor", logicalFn(BinaryOp::BitXor));
    function("logical_not", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      return sa::compare(el, CompareOp::Eq, arrayArg(el, a, 0, numpy), makeBool(false), args.range);
    });
    auto extremumFn = [](bool maximum) {
      return [maximum](Elaborator &el, CallArgs &args, bool) -> Obj {
        BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
        return sa::extremum(el, maximum, a[0], a[1], args.range);
      };
    };
    function("maximum", extremumFn(true));
    function("minimum", extremumFn(false));
    function("clip", [](Elaborator &el, CallArgs &args, bool) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"a_min", none()}, {"a_max", none()}});
      Obj x = a[0];
      if (!isNone(a[1]))
        x = sa::extremum(el, true, x, a[1], args.range);
      if (!isNone(a[2]))
        x = sa::extremum(el, false, x, a[2], args.range);
      return x;
    });
    auto unaryFn = [](UnaryOp op) {
      return [op](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"x"}});
        return sa::unary(el, op, *arrayArg(el, a, 0, numpy), args.range);
      };
    };
    function("negative", unaryFn(UnaryOp::Negate));
    function("invert", unaryFn(UnaryOp::Invert));
    function("bitwise_not", unaryFn(UnaryOp::Invert));
    auto absolute = [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      StaticArrayPtr x = arrayArg(el, a, 0, numpy);
      if (x->dtype == DType::Bool || isUnsigned(x->dtype))
        return sa::result(x);
      if (isFloat(x->dtype)) // |-0.0| is 0.0
        return sa::mapFloat(el, x, static_cast<double (*)(double)>(std::fabs), args.range, numpy);
      Obj negative = sa::compare(el, CompareOp::Lt, x, makeInt(0), args.range);
      return sa::select3(el, negative, sa::unary(el, UnaryOp::Negate, *x, args.range), x,
                         args.range);
    };
    function("abs", absolute);
    function("absolute", absolute);
    auto floatFn = [](double (*fn)(double)) {
      return [fn](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
        BoundArgs a = el.bind(args, {{"x"}});
        return sa::mapFloat(el, a[0], fn, args.range, numpy);
      };
    };
    using F = double (*)(double);
    function("sqrt", floatFn(static_cast<F>(std::sqrt)));
    function("exp", floatFn(static_cast<F>(std::exp)));
    function("log", floatFn(static_cast<F>(std::log)));
    function("log2", floatFn(static_cast<F>(std::log2)));
    function("sin", floatFn(static_cast<F>(std::sin)));
    function("cos", floatFn(static_cast<F>(std::cos)));
    function("tanh", floatFn(static_cast<F>(std::tanh)));
    function("floor", floatFn(static_cast<F>(std::floor)));
    function("ceil", floatFn(static_cast<F>(std::ceil)));
    function("rint", floatFn(static_cast<F>(std::nearbyint)));
    function("astype", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}, {"dtype"}});
      return sa::astype(el, *arrayArg(el, a, 0, numpy), sa::toDType(el, a[1], a.range(1), numpy),
                        args.range);
    });
    function("shape", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      return attribute(el, arrayArg(el, a, 0, numpy), "shape", args.range);
    });
    function("ndim", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      return makeInt(arrayArg(el, a, 0, numpy)->rank());
    });
    function("size", [](Elaborator &el, CallArgs &args, bool numpy) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      return makeInt(arrayArg(el, a, 0, numpy)->size());
    });
    return t;
  }();
  return entries;
}

/// A method `name` of a static array that is the np function of the same
/// name with the array first.
Obj tableMethod(const Obj &self, const std::string &name) {
  return method(self, name, [name](Elaborator &el, CallArgs &args) -> Obj {
    return table().at(name).fn(el, args, llvm::cast<StaticArrayObj>(*args.positional[0]).numpy);
  });
}

DType canonical(DType t) { return withoutX64(t); }

/// The arith.constant holding `a`'s elements as `dtype`.
Obj denseConstant(Elaborator &el, const StaticArrayObj &a, DType dtype, SourceRange r) {
  if (dtype == DType::Bool && !a.shape.empty()) {
    // Bytes, compared with zero: MLIR's textual form of i1 element data
    // differs between versions (Mosaic's parser reads it bit-packed).
    Obj bytes = denseConstant(el, a, DType::U8, r);
    return el.arrays().compare(CompareOp::Ne, bytes, makeInt(0), r);
  }
  mlir::Type element = signlessType(&el.context(), dtype);
  mlir::Type type = el.arrays().valueType(a.shape, dtype);
  StaticArrayPtr typed = sa::astype(el, a, dtype, r);
  llvm::SmallVector<mlir::Attribute> values;
  for (int64_t k = 0; k < typed->size(); ++k) {
    if (isFloat(dtype))
      values.push_back(mlir::FloatAttr::get(element, typed->floats[k]));
    else
      values.push_back(mlir::IntegerAttr::get(element, typed->ints[k]));
  }
  mlir::TypedAttr attr =
      a.shape.empty() ? llvm::cast<mlir::TypedAttr>(values[0])
                      : mlir::DenseElementsAttr::get(llvm::cast<mlir::ShapedType>(type), values);
  mlir::Value value = mlir::arith::ConstantOp::create(el.builder(), el.loc(r), type, attr);
  return el.arrays().wrap(value, a.shape, dtype, false);
}

std::string describe(const StaticArrayObj &a) {
  std::string what = std::string(a.numpy ? "a NumPy array " : "an array ") + shortName(a.dtype);
  for (size_t d = 0; d < a.shape.size(); ++d)
    what += (d ? ", " : "[") + std::to_string(a.shape[d]);
  return what + (a.shape.empty() ? "[]" : "]");
}

} // namespace

std::optional<Obj> call(Elaborator &el, const std::string &name, CallArgs &args) {
  bool numpy = llvm::StringRef(name).starts_with("numpy.");
  bool jnp = llvm::StringRef(name).starts_with("jax.numpy.");
  if (!numpy && !jnp)
    return std::nullopt;
  std::string tail = name.substr(name.find('.', numpy ? 0 : 4) + 1);
  auto it = table().find(tail);
  if (it == table().end() || anyArgument(args, holdsTraced))
    return std::nullopt;
  bool statics = anyArgument(args, holdsStaticArray);
  if (jnp) {
    // jnp runs eagerly only at module level; elsewhere a static array
    // operand becomes the array JAX would make of it.
    if (el.mode() != EmitMode::Module || (!statics && !it->second.creation))
      return std::nullopt;
  } else if (!statics && el.mode() != EmitMode::Module && el.mode() != EmitMode::Export &&
             tail != "ndindex") {
    // np.arange(8) in a kernel is an iota, as before; np.ndindex makes
    // tuples of ints, which a kernel iterates as well.
    return std::nullopt;
  }
  Obj result = it->second.fn(el, args, numpy);
  if (!result)
    return std::nullopt;
  return result;
}

bool holdsStaticArray(const Obj &o) {
  bool found = false;
  forEachLeaf(o, [&](const Obj &leaf) { found |= llvm::isa<StaticArrayObj>(leaf.get()); });
  return found;
}

Obj materializeLeaves(Elaborator &el, const Obj &o, SourceRange r) {
  if (!holdsStaticArray(o))
    return o;
  return mapLeaves(o, [&](const Obj &leaf) -> Obj {
    if (auto *a = llvm::dyn_cast<StaticArrayObj>(leaf.get()))
      return materialize(el, *a, r);
    return nullptr;
  });
}

void materializeArguments(Elaborator &el, CallArgs &args) {
  for (size_t i = 0; i < args.positional.size(); ++i)
    args.positional[i] = materializeLeaves(el, args.positional[i], args.rangeOf(i));
  for (size_t i = 0; i < args.keywords.size(); ++i)
    args.keywords[i].second =
        materializeLeaves(el, args.keywords[i].second, args.rangeOfKeyword(args.keywords[i].first));
}

Obj materialize(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  if (el.mode() != EmitMode::Export)
    failValue(el, a, r);
  constexpr int64_t kMaxElements = int64_t(1) << 20;
  if (a.size() > kMaxElements)
    el.fail(r, "pkc embeds compile-time arrays in the program as constants, and " + describe(a) +
                   " has more than " + std::to_string(kMaxElements) +
                   " elements; pass it to the export as an argument");
  if (a.size() == 0)
    el.fail(r, describe(a) + " has no elements; pkc makes no empty arrays");
  // JAX without x64 turns 64-bit NumPy data into 32-bit arrays.
  DType t = canonical(a.dtype);
  return el.arrayCodeAtExport(
      "jnp.asarray", r, {}, [&](std::vector<Obj> &) -> Obj { return denseConstant(el, a, t, r); });
}

void failValue(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  if (el.mode() == EmitMode::Module)
    el.fail(r, "pkc runs NumPy-style code on " + describe(a) +
                   " at module level, but not this; "
                   "use it in an export, or pass it to a pallas_call");
  el.fail(r, "the kernel captures " + describe(a) +
                 " known at compile time; pass it to the "
                 "pallas_call as an input, as Pallas requires (a kernel may read its shape and "
                 "dtype)");
}

void defineFunctions(NamespaceObj &numpy) {
  define(numpy, "ndarray", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "np.ndarray(shape) is not supported; make arrays with np.zeros, np.empty "
                        "or np.array");
  });
  for (const auto &[name, entry] : table()) {
    if (numpy.members.count(name))
      continue;
    define(numpy, name, [name = name](Elaborator &el, CallArgs &args) -> Obj {
      if (std::optional<Obj> computed = call(el, "numpy." + name, args))
        return *computed;
      el.fail(args.range, "np." + name +
                              " computes with NumPy arrays known at compile time, "
                              "outside kernels; here it got traced values");
    });
  }
}

Obj attribute(Elaborator &el, const Obj &self, const std::string &name, SourceRange r) {
  const auto &a = llvm::cast<StaticArrayObj>(*self);
  if (Obj found = shapeAttribute(name, a.shape, a.dtype))
    return found;
  if (name == "itemsize")
    return makeInt(byteWidth(a.dtype));
  if (name == "nbytes")
    return makeInt(a.size() * byteWidth(a.dtype));
  if (name == "T")
    return sa::transpose(el, a, {}, r);
  if (name == "mT") { // the last two axes swapped
    if (a.shape.size() < 2)
      el.raise(r, "ValueError", "matrix transpose with ndim < 2 is undefined");
    std::vector<int64_t> perm;
    for (size_t d = 0; d < a.shape.size(); ++d)
      perm.push_back(static_cast<int64_t>(d));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return sa::transpose(el, a, perm, r);
  }
  // Methods that are the np function of the same name with the array first.
  static const std::set<std::string> kSameAsFunction = {
      "sum",    "prod",   "mean",    "max",     "min",     "any",      "all",  "argmax",
      "argmin", "cumsum", "cumprod", "nonzero", "squeeze", "swapaxes", "clip", "argsort"};
  if (kSameAsFunction.count(name))
    return tableMethod(self, name);
  if (name == "astype")
    return method(self, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"},
                                   {"dtype"},
                                   {"order", none(), true},
                                   {"casting", none(), true},
                                   {"copy", none(), true}});
      const auto &x = llvm::cast<StaticArrayObj>(*a[0]);
      return sa::result(sa::astype(el, x, sa::toDType(el, a[1], a.range(1), x.numpy), args.range));
    });
  if (name == "reshape")
    return method(self, name, [](Elaborator &el, CallArgs &args) -> Obj {
      return sa::reshape(el, llvm::cast<StaticArrayObj>(*args.positional[0]),
                         shapeFromArgs(el, args, 1), args.range);
    });
  if (name == "transpose")
    return method(self, name, [](Elaborator &el, CallArgs &args) -> Obj {
      std::vector<int64_t> perm =
          args.positional.size() > 1 ? shapeFromArgs(el, args, 1) : std::vector<int64_t>{};
      return sa::transpose(el, llvm::cast<StaticArrayObj>(*args.positional[0]), perm, args.range);
    });
  if (name == "flatten" || name == "ravel" || name == "copy")
    return method(self, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      const auto &x = llvm::cast<StaticArrayObj>(*args.positional[0]);
      StaticArrayPtr out = sa::astype(el, x, x.dtype, args.range);
      if (name != "copy")
        out->shape = {x.size()};
      return out;
    });
  if (name == "tolist")
    return method(self, name, [](Elaborator &, CallArgs &args) -> Obj {
      return sa::toList(llvm::cast<StaticArrayObj>(*args.positional[0]));
    });
  if (name == "item")
    return method(self, name, [](Elaborator &el, CallArgs &args) -> Obj {
      const auto &x = llvm::cast<StaticArrayObj>(*args.positional[0]);
      if (args.positional.size() > 1)
        return sa::pythonElement(x, el.toInt(args.positional[1], args.rangeOf(1), "index"));
      if (x.size() != 1)
        el.raise(args.range, "ValueError",
                 "can only convert an array of size 1 to a Python scalar");
      return sa::pythonElement(x, 0);
    });
  if (name == "tobytes")
    return method(self, name, [](Elaborator &, CallArgs &args) -> Obj {
      // The bytes, as a string: hashing and comparing them is what code
      // does with them.
      const auto &x = llvm::cast<StaticArrayObj>(*args.positional[0]);
      std::string bytes;
      for (int64_t k = 0; k < x.size(); ++k) {
        if (isFloat(x.dtype)) {
          double v = x.floats[k];
          bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
        } else {
          bytes.append(reinterpret_cast<const char *>(&x.ints[k]), byteWidth(x.dtype));
        }
      }
      return makeStr(bytes);
    });
  if (name == "fill")
    return method(self, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"value"}});
      auto &x = const_cast<StaticArrayObj &>(llvm::cast<StaticArrayObj>(*a[0]));
      sa::setItem(el, x, std::make_shared<EllipsisObj>(), a[1], args.range);
      return none();
    });
  if (name == "at" && !a.numpy)
    el.fail(r, "'.at' of an array made at module level is not supported; build it with NumPy "
               "and assign in place, or make it in the export");
  el.raise(r, "AttributeError",
           std::string("'") + (a.numpy ? "numpy.ndarray" : "Array") +
               "' object has no attribute '" + name +
               "' (or pkc does not compute it at compile time)",
           false);
}

} // namespace pk::elab::static_numpy
