//===- BuiltinsAliases.cpp - jnp / lax functions that are others' calls ---===//
//
// Functions JAX defines in a line or two from others (the array API's
// names for NumPy's, hstack from concatenate, lax.index_in_dim from
// slice, nansum from where and sum, ...), defined here the same way: as
// calls of the builtins they are made of, with JAX's arguments, so that
// they behave exactly as those do, in kernels and in array code around
// them.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Promotion.h"

#include <cmath>
#include <functional>

namespace pk::elab {

namespace {

/// Calls `ns.name` with positional `args` and `keywords`.
Obj callMember(Elaborator &el, NamespaceObj &ns, const std::string &name, std::vector<Obj> args,
               SourceRange r, std::vector<std::pair<std::string, Obj>> keywords = {}) {
  CallArgs call;
  call.range = r;
  for (Obj &a : args)
    call.addPositional(std::move(a), r);
  for (auto &[k, v] : keywords)
    call.keywords.emplace_back(k, v);
  auto it = ns.members.find(name);
  if (it == ns.members.end())
    el.fail(r, "internal error: " + ns.name + "." + name + " is missing");
  return el.call(it->second, call);
}

void alias(NamespaceObj &ns, const std::string &name, const std::string &of) {
  ns.members[name] = ns.members.at(of);
}

/// `x` as the float type jnp's float-only functions compute in
/// (promote_args_inexact: integers and bools become float32).
ArrayPtr inexact(Elaborator &el, const Obj &x, SourceRange r) {
  return el.arrays().toArray(x, r, toInexact(el.arrays().typeOf(x, r)));
}

int64_t rankOf(Elaborator &el, const Obj &x, SourceRange r) {
  return static_cast<int64_t>(el.arrays().toArray(x, r)->rank());
}

/// jnp.atleast_1d/2d/3d of one array, as JAX's: a 0-d array becomes
/// (1,), (1, 1), (1, 1, 1); a 1-d one (1, n) / (1, n, 1); a 2-d one (m, n, 1).
Obj atLeast(Elaborator &el, const Obj &x, int64_t rank, SourceRange r) {
  ArrayPtr a = el.arrays().toArray(x, r);
  std::vector<int64_t> s = a->shape;
  if (static_cast<int64_t>(s.size()) >= rank)
    return a;
  std::vector<int64_t> shape;
  if (s.empty())
    shape.assign(rank, 1);
  else if (s.size() == 1)
    shape = rank == 2 ? std::vector<int64_t>{1, s[0]} : std::vector<int64_t>{1, s[0], 1};
  else
    shape = {s[0], s[1], 1};
  return el.arrays().reshape(a, shape, r);
}

BuiltinObj::Fn atLeastFn(int64_t rank) {
  return [rank](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.keywords.empty())
      el.fail(args.range, "jnp.atleast_" + std::to_string(rank) + "d takes arrays only");
    std::vector<Obj> out;
    for (size_t i = 0; i < args.positional.size(); ++i)
      out.push_back(atLeast(el, args.positional[i], rank, args.rangeOf(i)));
    return out.size() == 1 ? out[0] : makeList(out);
  };
}

/// hstack / vstack / dstack / column_stack: concatenate after atleast_Nd.
BuiltinObj::Fn stackFn(NamespaceObj &jnp, const char *name) {
  std::string which = name;
  return [&jnp, which](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"tup"}, {"dtype", none(), true}});
    std::vector<Obj> items = el.iterate(a[0], a.range(0));
    if (items.empty())
      el.fail(a.range(0), "jnp." + which + " needs at least one array");
    std::vector<Obj> parts;
    int64_t axis = 0;
    for (const Obj &item : items) {
      if (which == "vstack") {
        parts.push_back(atLeast(el, item, 2, a.range(0)));
      } else if (which == "dstack") {
        parts.push_back(atLeast(el, item, 3, a.range(0)));
        axis = 2;
      } else if (which == "column_stack") {
        Obj x = item;
        if (rankOf(el, x, a.range(0)) < 2) {
          ArrayPtr v = el.arrays().toArray(x, a.range(0));
          x = el.arrays().reshape(v, {v->rank() ? v->shape[0] : 1, 1}, a.range(0));
        }
        parts.push_back(x);
        axis = 1;
      } else { // hstack: along axis 1, or 0 for 1-d arrays
        Obj x = atLeast(el, item, 1, a.range(0));
        axis = rankOf(el, x, a.range(0)) == 1 ? 0 : 1;
        parts.push_back(x);
      }
    }
    std::vector<std::pair<std::string, Obj>> keywords = {{"axis", makeInt(axis)}};
    if (!isNone(a[1]))
      keywords.emplace_back("dtype", a[1]);
    return callMember(el, jnp, "concatenate", {makeList(parts)}, args.range, keywords);
  };
}

/// nansum, nanmax, ...: the reduction with NaNs replaced by its identity
/// (0 for sums, 1 for products, -inf / +inf for max / min), as JAX's
/// reductions.py writes them; where a slice holds only NaNs, nanmax and
/// nanmin give NaN and nanargmax and nanargmin -1, as JAX's do.
BuiltinObj::Fn nanReduction(NamespaceObj &jnp, const char *reduction) {
  std::string name = reduction;
  return [&jnp, name](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.empty())
      el.fail(args.range, "jnp.nan" + name + " needs an array");
    Obj x = args.positional[0];
    ArrayPtr a = el.arrays().toArray(x, args.rangeOf(0));
    if (!isFloat(a->dtype))
      return el.call(jnp.members.at(name), args); // no NaNs to skip
    Obj nan = el.arrays().isNan(a, args.range);
    CallArgs call = args;
    if (name == "sum" || name == "prod" || name == "mean") {
      if (name == "mean") {
        // The mean of the values that are not NaN.
        Obj kept = el.arrays().logicalNot(nan, args.range);
        CallArgs total = args, count = args;
        total.positional[0] = el.arrays().where(nan, makeFloat(0.0), a, args.range);
        count.positional[0] =
            el.arrays().cast(el.arrays().toArray(kept, args.range), a->dtype, args.range);
        Obj sum = el.call(jnp.members.at("sum"), total);
        Obj n = el.call(jnp.members.at("sum"), count);
        return callMember(el, jnp, "true_divide", {sum, n}, args.range);
      }
      call.positional[0] =
          el.arrays().where(nan, makeFloat(name == "sum" ? 0.0 : 1.0), a, args.range);
      return el.call(jnp.members.at(name), call);
    }
    // max / min / argmax / argmin: NaNs lose; a slice of NaNs only stays NaN.
    bool isMax = name == "max" || name == "argmax";
    double fill = isMax ? -INFINITY : INFINITY;
    call.positional[0] = el.arrays().where(nan, makeFloat(fill), a, args.range);
    Obj result = el.call(jnp.members.at(name), call);
    CallArgs allNan = args;
    allNan.positional[0] = nan;
    allNan.keywords.clear();
    for (const auto &[k, v] : args.keywords)
      if (k == "axis" || k == "keepdims")
        allNan.keywords.emplace_back(k, v);
    for (size_t i = 1; i < args.positional.size() && i < 2; ++i)
      allNan.positional[i] = args.positional[i];
    allNan.positional.resize(std::min<size_t>(args.positional.size(), 2));
    allNan.positionalRanges.resize(allNan.positional.size());
    Obj onlyNans = el.call(jnp.members.at("all"), allNan);
    bool arg = name == "argmax" || name == "argmin";
    return el.arrays().where(onlyNans, arg ? makeInt(-1) : makeFloat(NAN), result, args.range);
  };
}

} // namespace

void defineAliases(Elaborator &el, NamespaceObj &jnp, NamespaceObj &lax) {
  // The array API's names for NumPy's.
  for (auto [name, of] : {std::pair{"acos", "arccos"},
                          {"asin", "arcsin"},
                          {"atan", "arctan"},
                          {"acosh", "arccosh"},
                          {"asinh", "arcsinh"},
                          {"atanh", "arctanh"},
                          {"atan2", "arctan2"},
                          {"concat", "concatenate"},
                          {"bitwise_invert", "invert"},
                          {"bitwise_left_shift", "left_shift"},
                          {"bitwise_right_shift", "right_shift"}})
    alias(jnp, name, of);
  define(jnp, "fabs", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return el.arrays().abs(inexact(el, a[0], a.range(0)), args.range);
  });
  auto scaled = [&jnp](double factor) {
    return [&jnp, factor](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      return callMember(el, jnp, "multiply", {inexact(el, a[0], a.range(0)), makeFloat(factor)},
                        args.range);
    };
  };
  define(jnp, "deg2rad", scaled(M_PI / 180.0));
  define(jnp, "radians", scaled(M_PI / 180.0));
  define(jnp, "rad2deg", scaled(180.0 / M_PI));
  define(jnp, "degrees", scaled(180.0 / M_PI));
  define(jnp, "matrix_transpose", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    if (x->rank() < 2)
      el.fail(a.range(0), "jnp.matrix_transpose needs an array of rank at least 2");
    std::vector<int64_t> perm(x->rank());
    for (int64_t d = 0; d < x->rank(); ++d)
      perm[d] = d;
    std::swap(perm[x->rank() - 1], perm[x->rank() - 2]);
    return el.arrays().transpose(x, perm, args.range);
  });
  define(jnp, "atleast_1d", atLeastFn(1));
  define(jnp, "atleast_2d", atLeastFn(2));
  define(jnp, "atleast_3d", atLeastFn(3));
  for (const char *name : {"hstack", "vstack", "dstack", "column_stack"})
    define(jnp, name, stackFn(jnp, name));
  define(jnp, "fliplr", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"m"}});
    return callMember(el, jnp, "flip", {a[0]}, args.range, {{"axis", makeInt(1)}});
  });
  define(jnp, "flipud", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"m"}});
    return callMember(el, jnp, "flip", {a[0]}, args.range, {{"axis", makeInt(0)}});
  });
  define(jnp, "identity", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}, {"dtype", none()}});
    return callMember(el, jnp, "eye", {a[0]}, args.range, {{"dtype", a[1]}});
  });
  define(jnp, "trace", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"},
                                 {"offset", makeInt(0)},
                                 {"axis1", makeInt(0)},
                                 {"axis2", makeInt(1)},
                                 {"dtype", none()},
                                 {"out", none(), true}});
    Obj diagonal = callMember(el, jnp, "diagonal", {a[0]}, args.range,
                              {{"offset", a[1]}, {"axis1", a[2]}, {"axis2", a[3]}});
    return callMember(el, jnp, "sum", {diagonal}, args.range,
                      {{"axis", makeInt(-1)}, {"dtype", a[4]}});
  });
  define(jnp, "tensordot", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"},
                                 {"b"},
                                 {"axes", makeInt(2)},
                                 {"precision", none()},
                                 {"preferred_element_type", none()}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0)), y = el.arrays().toArray(a[1], a.range(1));
    std::vector<int64_t> xc, yc;
    if (auto n = el.staticInt(a[2])) {
      if (*n < 0 || *n > x->rank() || *n > y->rank())
        el.fail(a.range(2),
                "tensordot axes " + std::to_string(*n) + " exceeds the operands' ranks");
      for (int64_t i = 0; i < *n; ++i) {
        xc.push_back(x->rank() - *n + i);
        yc.push_back(i);
      }
    } else {
      std::vector<Obj> pair = el.iterate(a[2], a.range(2));
      if (pair.size() != 2)
        el.fail(a.range(2), "tensordot axes must be an int or a pair of axis sequences");
      auto axes = [&](const Obj &o, int64_t rank) {
        std::vector<int64_t> out;
        if (el.staticInt(o))
          out.push_back(el.normalizeAxis(o, rank, a.range(2)));
        else
          for (const Obj &v : el.iterate(o, a.range(2)))
            out.push_back(el.normalizeAxis(v, rank, a.range(2)));
        return out;
      };
      xc = axes(pair[0], x->rank());
      yc = axes(pair[1], y->rank());
      if (xc.size() != yc.size())
        el.fail(a.range(2), "tensordot needs as many axes of each operand");
    }
    return generalDot(el, x, y, xc, yc, {}, {}, a[4], a[3], args.range);
  });
  // pkc has no complex types: vdot is the dot of the flattened operands.
  define(jnp, "vdot", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"a"}, {"b"}, {"precision", none()}, {"preferred_element_type", none()}});
    Obj x = callMember(el, jnp, "ravel", {a[0]}, args.range);
    Obj y = callMember(el, jnp, "ravel", {a[1]}, args.range);
    return callMember(el, jnp, "dot", {x, y}, args.range,
                      {{"precision", a[2]}, {"preferred_element_type", a[3]}});
  });
  define(jnp, "inner", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"a"}, {"b"}, {"precision", none()}, {"preferred_element_type", none()}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0)), y = el.arrays().toArray(a[1], a.range(1));
    if (x->rank() == 0 || y->rank() == 0)
      return el.arrays().binary(ast::BinaryOp::Mul, x, y, args.range);
    return generalDot(el, x, y, {x->rank() - 1}, {y->rank() - 1}, {}, {}, a[3], a[2], args.range);
  });
  define(jnp, "rot90", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"m"}, {"k", makeInt(1)}, {"axes", makeTuple({makeInt(0), makeInt(1)})}});
    ArrayPtr m = el.arrays().toArray(a[0], a.range(0));
    std::vector<Obj> axes = el.iterate(a[2], a.range(2));
    if (m->rank() < 2 || axes.size() != 2)
      el.fail(args.range, "jnp.rot90 needs an array of rank at least 2 and two axes");
    int64_t a0 = el.normalizeAxis(axes[0], m->rank(), a.range(2));
    int64_t a1 = el.normalizeAxis(axes[1], m->rank(), a.range(2));
    if (a0 == a1)
      el.fail(a.range(2), "jnp.rot90's axes must differ");
    int64_t k = ((el.toInt(a[1], a.range(1), "k") % 4) + 4) % 4;
    auto flip = [&](const Obj &x, int64_t axis) {
      return callMember(el, jnp, "flip", {x}, args.range, {{"axis", makeInt(axis)}});
    };
    std::vector<int64_t> perm(m->rank());
    for (int64_t d = 0; d < m->rank(); ++d)
      perm[d] = d;
    std::swap(perm[a0], perm[a1]);
    auto transpose = [&](const Obj &x) {
      return el.arrays().transpose(el.arrays().toArray(x, args.range), perm, args.range);
    };
    // As JAX's rot90.
    if (k == 0)
      return m;
    if (k == 2)
      return flip(flip(m, a0), a1);
    return k == 1 ? Obj(transpose(flip(m, a1))) : flip(transpose(m), a1);
  });
  define(jnp, "kron", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    ArrayOps &ops = el.arrays();
    ArrayPtr x = ops.toArray(a[0], a.range(0)), y = ops.toArray(a[1], a.range(1));
    // Ranks made equal with leading 1s; then x[i0, 1, i1, 1, ...] times
    // y[1, j0, 1, j1, ...], reshaped to (i0 j0, i1 j1, ...).
    int64_t rank = std::max(x->rank(), y->rank());
    std::vector<int64_t> xs(rank - x->rank(), 1), ys(rank - y->rank(), 1);
    xs.insert(xs.end(), x->shape.begin(), x->shape.end());
    ys.insert(ys.end(), y->shape.begin(), y->shape.end());
    std::vector<int64_t> xi, yi, out;
    for (int64_t d = 0; d < rank; ++d) {
      xi.insert(xi.end(), {xs[d], 1});
      yi.insert(yi.end(), {1, ys[d]});
      out.push_back(xs[d] * ys[d]);
    }
    Obj xWide = ops.reshape(x, xi, args.range), yWide = ops.reshape(y, yi, args.range);
    Obj product = ops.binary(ast::BinaryOp::Mul, xWide, yWide, args.range);
    return ops.reshape(ops.toArray(product, args.range), out, args.range);
  });
  define(jnp, "meshgrid", [](Elaborator &el, CallArgs &args) -> Obj {
    std::string indexing = "xy";
    bool sparse = false;
    for (const auto &[k, v] : args.keywords)
      if (k == "indexing")
        indexing = el.toStr(v, args.range, "indexing");
      else if (k == "sparse")
        sparse = el.truthy(v, args.range);
      else if (k != "copy")
        el.fail(args.range, "jnp.meshgrid got an unexpected keyword argument '" + k + "'");
    if (indexing != "xy" && indexing != "ij")
      el.fail(args.range, "jnp.meshgrid's indexing must be 'xy' or 'ij', got '" + indexing + "'");
    ArrayOps &ops = el.arrays();
    std::vector<ArrayPtr> xs;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      ArrayPtr x = ops.toArray(args.positional[i], args.rangeOf(i));
      if (x->rank() != 1) { // JAX ravels each input
        int64_t n = 1;
        for (int64_t d : x->shape)
          n *= d;
        x = ops.reshape(x, {n}, args.rangeOf(i));
      }
      xs.push_back(x);
      shape.push_back(x->shape[0]);
    }
    bool swap = indexing == "xy" && xs.size() >= 2;
    if (swap)
      std::swap(shape[0], shape[1]);
    std::vector<Obj> grids;
    for (size_t i = 0; i < xs.size(); ++i) {
      size_t axis = swap && i < 2 ? 1 - i : i;
      std::vector<int64_t> one(xs.size(), 1);
      one[axis] = xs[i]->shape[0];
      ArrayPtr g = ops.reshape(xs[i], one, args.range);
      grids.push_back(sparse ? g : ops.broadcastTo(g, shape, args.range));
    }
    return makeList(grids);
  });
  define(jnp, "diag", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"v"}, {"k", makeInt(0)}});
    ArrayOps &ops = el.arrays();
    ArrayPtr v = ops.toArray(a[0], a.range(0));
    int64_t k = el.toInt(a[1], a.range(1), "k");
    if (v->rank() == 2)
      return callMember(el, jnp, "diagonal", {v}, args.range, {{"offset", makeInt(k)}});
    if (v->rank() != 1)
      el.fail(a.range(0), "jnp.diag takes a 1-D or 2-D array");
    int64_t n = v->shape[0], size = n + (k < 0 ? -k : k);
    // v padded to the matrix's size, laid along rows (k >= 0) or columns.
    ArrayPtr padded =
        n == size
            ? v
            : ops.toArray(ops.concatenate({v, ops.constantInt(0, v->dtype, {size - n}, args.range)},
                                          0, args.range),
                          args.range);
    ArrayPtr values = ops.broadcastTo(
        ops.reshape(padded, k >= 0 ? std::vector<int64_t>{size, 1} : std::vector<int64_t>{1, size},
                    args.range),
        {size, size}, args.range);
    Obj rows = ops.iota({size, size}, 0, DType::I32, args.range);
    Obj cols = ops.iota({size, size}, 1, DType::I32, args.range);
    Obj onDiagonal =
        ops.compare(ast::CompareOp::Eq, ops.binary(ast::BinaryOp::Sub, cols, rows, args.range),
                    makeInt(k), args.range);
    return ops.where(onDiagonal, values, ops.constantInt(0, v->dtype, {size, size}, args.range),
                     args.range);
  });
  // indices(dimensions): out[k] holds each position's index along axis k
  // (an iota along k), stacked.
  define(jnp, "indices", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dimensions"}, {"dtype", none()}, {"sparse", makeBool(false)}});
    if (el.truthy(a[2], a.range(2)))
      el.fail(a.range(2), "indices(sparse=True) is not supported by pkc yet");
    std::vector<int64_t> dims = el.toShape(a[0], a.range(0), "dimensions");
    if (dims.empty())
      el.fail(a.range(0), "indices of no dimensions is not supported by pkc");
    DType dtype = isNone(a[1]) ? DType::I32 : el.toDType(a[1], a.range(1), "dtype");
    std::vector<Obj> grids;
    for (size_t k = 0; k < dims.size(); ++k)
      grids.push_back(el.arrays().iota(dims, static_cast<int64_t>(k), dtype, args.range));
    return callMember(el, jnp, "stack", {makeList(grids)}, args.range);
  });
  define(jnp, "tri", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"N"}, {"M", none()}, {"k", makeInt(0)}, {"dtype", none()}});
    ArrayOps &ops = el.arrays();
    int64_t n = el.toInt(a[0], a.range(0), "N");
    int64_t m = isNone(a[1]) ? n : el.toInt(a[1], a.range(1), "M");
    DType dtype = isNone(a[3]) ? DType::F32 : el.toDType(a[3], a.range(3), "dtype");
    Obj rows = ops.iota({n, m}, 0, DType::I32, args.range);
    Obj cols = ops.iota({n, m}, 1, DType::I32, args.range);
    Obj below = ops.compare(ast::CompareOp::Le, cols,
                            ops.binary(ast::BinaryOp::Add, rows, a[2], args.range), args.range);
    return ops.cast(ops.toArray(below, args.range), dtype, args.range);
  });
  for (const char *name : {"sum", "prod", "max", "min", "mean", "argmax", "argmin"})
    define(jnp, std::string("nan") + name, nanReduction(jnp, name));

  // lax's conveniences over slice and dynamic_slice (lax/slicing.py).
  for (auto [name, of] : {std::pair{"acos", "arccos"},
                          {"asin", "arcsin"},
                          {"atan", "arctan"},
                          {"acosh", "arccosh"},
                          {"asinh", "arcsinh"},
                          {"atanh", "arctanh"}})
    lax.members[name] = jnp.members.at(of);
  alias(lax, "bitwise_not", "not");
  define(lax, "full", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"shape"}, {"fill_value"}, {"dtype", none()}, {"sharding", none(), true}});
    return callMember(el, jnp, "full", {a[0], a[1]}, args.range, {{"dtype", a[2]}});
  });
  define(lax, "full_like", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args,
        {{"x"}, {"fill_value"}, {"dtype", none()}, {"shape", none()}, {"sharding", none(), true}});
    return callMember(el, jnp, "full_like", {a[0], a[1]}, args.range,
                      {{"dtype", a[2]}, {"shape", a[3]}});
  });
  // lax.empty: "possibly uninitialized"; JAX's lowering outside TPU and
  // GPU kernels (what interpret mode runs) makes zeros, and so does pkc.
  define(lax, "empty", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"shape"}, {"dtype"}, {"out_sharding", none(), true}});
    return callMember(el, jnp, "zeros", {a[0]}, args.range, {{"dtype", a[1]}});
  });
  // pl.empty_like: lax.empty for each leaf (an array, a Ref or a
  // jax.ShapeDtypeStruct) of a tree of tuples, lists and dicts.
  define(lax, "empty_like", [&jnp](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    std::function<Obj(const Obj &)> empty = [&](const Obj &o) -> Obj {
      if (isNone(o))
        return o;
      if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
        std::vector<Obj> items;
        for (const Obj &item : seq->items)
          items.push_back(empty(item));
        return seq->isList() ? makeList(items) : makeTuple(items);
      }
      if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
        auto out = std::make_shared<DictObj>();
        for (const auto &[k, v] : dict->entries)
          out->entries.emplace_back(k, empty(v));
        return out;
      }
      return callMember(el, jnp, "zeros_like", {o}, args.range);
    };
    return empty(a[0]);
  });
  define(lax, "slice_in_dim", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"},
                                 {"start_index"},
                                 {"limit_index"},
                                 {"stride", makeInt(1)},
                                 {"axis", makeInt(0)}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    int64_t axis = el.normalizeAxis(a[4], x->rank(), a.range(4));
    int64_t n = x->shape[axis];
    auto clampIndex = [&](const Obj &o, int64_t fallback, SourceRange r) {
      int64_t v = isNone(o) ? fallback : el.toInt(o, r, "index");
      return v < 0 ? v + n : v; // as lax.slice_in_dim: negative counts from the end
    };
    std::vector<int64_t> start(x->rank(), 0), limit = x->shape, stride(x->rank(), 1);
    start[axis] = clampIndex(a[1], 0, a.range(1));
    limit[axis] = clampIndex(a[2], n, a.range(2));
    stride[axis] = el.toInt(a[3], a.range(3), "stride");
    return el.arrays().slice(x, start, limit, stride, args.range);
  });
  define(lax, "index_in_dim", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"operand"}, {"index"}, {"axis", makeInt(0)}, {"keepdims", makeBool(true)}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    int64_t axis = el.normalizeAxis(a[2], x->rank(), a.range(2));
    int64_t i = el.toInt(a[1], a.range(1), "index");
    if (i < 0)
      i += x->shape[axis];
    if (i < 0 || i >= x->shape[axis])
      el.raise(a.range(1), "IndexError",
               "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                   " with size " + std::to_string(x->shape[axis]));
    std::vector<int64_t> start(x->rank(), 0), limit = x->shape, stride(x->rank(), 1);
    start[axis] = i;
    limit[axis] = i + 1;
    ArrayPtr sliced = el.arrays().slice(x, start, limit, stride, args.range);
    if (el.truthy(a[3], a.range(3)))
      return sliced;
    return el.arrays().squeeze(sliced, {axis}, args.range);
  });
  // jnp.unstack(x, axis): the slices at each index of the axis, as JAX
  // makes them with lax.index_in_dim.
  define(jnp, "unstack", [&lax](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"axis", makeInt(0)}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    if (x->rank() == 0)
      el.raise(a.range(0), "ValueError",
               "Unstack requires arrays with rank > 0, however a "
               "scalar array was passed.");
    int64_t axis = el.normalizeAxis(a[1], x->rank(), a.range(1));
    std::vector<Obj> slices;
    for (int64_t i = 0; i < x->shape[axis]; ++i)
      slices.push_back(callMember(el, lax, "index_in_dim", {x, makeInt(i), makeInt(axis)},
                                  args.range, {{"keepdims", makeBool(false)}}));
    return makeTuple(std::move(slices));
  });
  define(lax, "dynamic_index_in_dim", [&lax](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"operand"}, {"index"}, {"axis", makeInt(0)}, {"keepdims", makeBool(true)}});
    Obj sliced =
        callMember(el, lax, "dynamic_slice_in_dim", {a[0], a[1], makeInt(1), a[2]}, args.range);
    if (el.truthy(a[3], a.range(3)))
      return sliced;
    ArrayPtr x = el.arrays().toArray(sliced, args.range);
    return el.arrays().squeeze(x, {el.normalizeAxis(a[2], x->rank(), a.range(2))}, args.range);
  });
  define(lax, "dynamic_update_slice_in_dim", [&lax](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"update"}, {"start_index"}, {"axis"}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    int64_t axis = el.normalizeAxis(a[3], x->rank(), a.range(3));
    std::vector<Obj> starts(x->rank(), makeInt(0));
    starts[axis] = a[2];
    return callMember(el, lax, "dynamic_update_slice", {x, a[1], makeTuple(starts)}, args.range);
  });
  define(lax, "dynamic_update_index_in_dim", [&lax](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"update"}, {"index"}, {"axis"}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    ArrayPtr u = el.arrays().toArray(a[1], a.range(1));
    int64_t axis = el.normalizeAxis(a[3], x->rank(), a.range(3));
    if (u->rank() == x->rank() - 1)
      u = el.arrays().expandDims(u, {axis}, args.range);
    std::vector<Obj> starts(x->rank(), makeInt(0));
    starts[axis] = a[2];
    return callMember(el, lax, "dynamic_update_slice", {x, u, makeTuple(starts)}, args.range);
  });
  define(lax, "collapse", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"start_dimension"}, {"stop_dimension", none()}});
    ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
    int64_t start = el.normalizeAxis(a[1], x->rank(), a.range(1));
    int64_t stop = isNone(a[2]) ? x->rank() : el.toInt(a[2], a.range(2), "stop_dimension");
    if (stop < 0)
      stop += x->rank();
    if (stop < start || stop > x->rank())
      el.fail(a.range(2),
              "lax.collapse's stop_dimension must be between start_dimension and the rank");
    std::vector<int64_t> shape(x->shape.begin(), x->shape.begin() + start);
    int64_t merged = 1;
    for (int64_t d = start; d < stop; ++d)
      merged *= x->shape[d];
    shape.push_back(merged);
    shape.insert(shape.end(), x->shape.begin() + stop, x->shape.end());
    return el.arrays().reshape(x, shape, args.range);
  });
}

} // namespace pk::elab
