//===- BuiltinsNumpy.cpp - jax.numpy (and numpy, math) --------------------===//
//
// jnp functions work on block values inside kernels. On static numbers
// they compute at compile time, so that `SCALE = 1 / jnp.sqrt(128)` at
// module level and `np.prod(shape)` keep working.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StaticArray.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace pk::elab {

using ast::BinaryOp;
using ast::CompareOp;

namespace {

double referenceRsqrtStatic(double x) { return 1.0 / std::sqrt(x); }

std::optional<DType> optionalDType(Elaborator &el, const Obj &o, SourceRange r) {
  if (isNone(o))
    return std::nullopt;
  return el.toDType(o, r, "dtype");
}

bool isStatic(const Obj &o) { return ArrayOps::isStaticNumber(o); }

double staticDouble(const Obj &o) {
  if (auto *f = llvm::dyn_cast<FloatObj>(o.get()))
    return f->value;
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    return static_cast<double>(i->value);
  return llvm::cast<BoolObj>(o.get())->value ? 1.0 : 0.0;
}

/// Registers `name(x)`: `fn` on block values, `staticFn` on static numbers.
void unary(NamespaceObj &ns, const std::string &name,
           std::function<Obj(Elaborator &, const Obj &, SourceRange)> fn,
           double (*staticFn)(double) = nullptr) {
  define(ns, name, [fn, staticFn](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    if (staticFn && isStatic(a[0]))
      return makeFloat(staticFn(staticDouble(a[0])));
    return fn(el, a[0], args.range);
  });
}

void binary(NamespaceObj &ns, const std::string &name,
            std::function<Obj(Elaborator &, const Obj &, const Obj &, SourceRange)> fn) {
  define(ns, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    return fn(el, a[0], a[1], args.range);
  });
}

void binaryOperatorFn(NamespaceObj &ns, const std::string &name, BinaryOp op) {
  binary(ns, name, [op](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return binaryOperator(el, op, a, b, r);
  });
}

void compareFn(NamespaceObj &ns, const std::string &name, CompareOp op) {
  binary(ns, name, [op](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return compareOperator(el, op, a, b, r);
  });
}

ArrayPtr asArray(Elaborator &el, const Obj &o, SourceRange r) { return el.arrays().toArray(o, r); }

/// The shape and dtype of what a *_like function copies: a value, a Ref
/// (read only for its type, as in `jnp.zeros_like(acc_ref)`) or a
/// ShapeDtypeStruct.
std::pair<std::vector<int64_t>, DType> shapeAndDType(Elaborator &el, const Obj &o, SourceRange r) {
  if (auto *ref = llvm::dyn_cast<RefObj>(o.get())) {
    rejectRaggedView(el, *ref, r);
    return {ref->shape, ref->dtype};
  }
  if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(o.get())) {
    std::vector<int64_t> shape;
    for (const Dim &d : s->shape)
      shape.push_back(el.toInt(makeDim(d), r, "shape"));
    return {shape, s->dtype};
  }
  ArrayPtr x = asArray(el, o, r);
  return {x->shape, x->dtype};
}

/// A constant array from a static (possibly nested) list of numbers.
Obj arrayFromStatic(Elaborator &el, const Obj &value, std::optional<DType> dtype, SourceRange r) {
  if (isStatic(value)) {
    if (!dtype)
      return el.arrays().toArray(value, r);
    return el.arrays().toArray(value, r, JaxType{*dtype, false});
  }
  if (auto array = std::dynamic_pointer_cast<ArrayObj>(value))
    return dtype ? Obj(el.arrays().cast(array, *dtype, r)) : value;
  if (llvm::isa<SymIntObj>(value.get()))
    return el.arrays().toArray(value, r, dtype ? std::optional<JaxType>(JaxType{*dtype, false})
                                               : std::nullopt);
  el.checkNotOpaque(value, r); // a jax.Device, a module pkc does not have: say why
  auto *seq = llvm::dyn_cast<SequenceObj>(value.get());
  if (!seq)
    el.fail(r, "cannot make an array from '" + typeName(*value) + "'");
  std::vector<Obj> rows;
  for (const Obj &item : seq->items)
    rows.push_back(arrayFromStatic(el, item, dtype, r));
  if (rows.empty())
    el.fail(r, "empty arrays are not supported");
  std::vector<Obj> expanded;
  for (const Obj &row : rows) {
    ArrayPtr a = el.arrays().toArray(row, r);
    expanded.push_back(el.arrays().expandDims(a, {0}, r));
  }
  return el.arrays().concatenate(expanded, 0, r);
}

/// Static reductions over a tuple of numbers (np.prod(shape)).
std::optional<Obj> staticReduction(Elaborator &el, const Obj &x, int kind, SourceRange r) {
  auto *seq = llvm::dyn_cast<SequenceObj>(x.get());
  if (!seq || !std::all_of(seq->items.begin(), seq->items.end(), isStatic))
    return std::nullopt;
  Obj acc;
  for (const Obj &item : seq->items) {
    if (!acc) {
      acc = item;
      continue;
    }
    switch (static_cast<Reduction>(kind)) {
    case Reduction::Sum:
      acc = binaryOperator(el, BinaryOp::Add, acc, item, r);
      break;
    case Reduction::Prod:
      acc = binaryOperator(el, BinaryOp::Mul, acc, item, r);
      break;
    case Reduction::Max:
      if (el.truthy(compareOperator(el, CompareOp::Gt, item, acc, r), r))
        acc = item;
      break;
    case Reduction::Min:
      if (el.truthy(compareOperator(el, CompareOp::Lt, item, acc, r), r))
        acc = item;
      break;
    default:
      return std::nullopt;
    }
  }
  if (!acc)
    return static_cast<Reduction>(kind) == Reduction::Prod ? makeInt(1) : makeInt(0);
  return acc;
}

Obj logSumExp(Elaborator &el, const Obj &x, const Obj &axisObj, bool keepDims, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  std::vector<int64_t> axes = el.normalizeAxes(axisObj, a->rank(), r);
  Obj max = ops.reduce(Reduction::Max, a, axes, /*keepDims=*/true, r);
  // A row of -inf must not produce nan: subtract 0 there instead.
  Obj finiteMax = ops.where(ops.isFinite(max, r), max, makeFloat(0.0), r);
  Obj shifted = ops.floatUnary(FloatUnary::Exp, binaryOperator(el, BinaryOp::Sub, a, finiteMax, r), r);
  Obj sum = ops.reduce(Reduction::Sum, shifted, axes, /*keepDims=*/true, r);
  Obj result = binaryOperator(el, BinaryOp::Add, ops.floatUnary(FloatUnary::Log, sum, r), finiteMax, r);
  if (!keepDims) {
    std::vector<int64_t> squeezeAxes = axes;
    if (squeezeAxes.empty())
      for (int64_t i = 0; i < a->rank(); ++i)
        squeezeAxes.push_back(i);
    result = ops.squeeze(std::static_pointer_cast<ArrayObj>(result), squeezeAxes, r);
  }
  return result;
}

/// `jnp.einsum` for the two-operand matrix products kernels use:
/// "ij,jk->ik", "ik,jk->ij", "ki,kj->ij", ...
Obj einsum(Elaborator &el, CallArgs &args) {
  if (args.positional.size() != 3)
    el.fail(args.range, "jnp.einsum supports a subscripts string and two operands");
  std::string spec = el.toStr(args.positional[0], args.rangeOf(0), "einsum subscripts");
  spec.erase(std::remove(spec.begin(), spec.end(), ' '), spec.end());
  size_t comma = spec.find(','), arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos)
    el.fail(args.rangeOf(0), "einsum subscripts must look like 'ij,jk->ik'");
  std::string a = spec.substr(0, comma), b = spec.substr(comma + 1, arrow - comma - 1),
              out = spec.substr(arrow + 2);
  if (a.size() != 2 || b.size() != 2 || out.size() != 2)
    el.fail(args.rangeOf(0), "jnp.einsum supports 2-D operands with one contracted index, got '" +
                                 spec + "'");
  char contracted = 0;
  for (char c : a)
    if (b.find(c) != std::string::npos && out.find(c) == std::string::npos)
      contracted = c;
  if (!contracted)
    el.fail(args.rangeOf(0), "einsum '" + spec + "' has no contracted index");
  bool transposeA = a[0] == contracted, transposeB = b[1] == contracted;
  char m = transposeA ? a[1] : a[0], n = transposeB ? b[0] : b[1];
  Obj preferred = none(), precision = none();
  for (const auto &[k, v] : args.keywords)
    if (k == "preferred_element_type")
      preferred = v;
    else if (k == "precision")
      precision = v;
  Obj result = dotBuiltin(el, args.positional[1], args.positional[2], transposeA, transposeB,
                          preferred, precision, args.range);
  if (out == std::string{m, n})
    return result;
  if (out == std::string{n, m})
    return el.arrays().transpose(std::static_pointer_cast<ArrayObj>(result), {1, 0}, args.range);
  el.fail(args.rangeOf(0), "einsum output '" + out + "' does not match the operands");
}

/// jnp.finfo / jnp.iinfo: a namespace with min, max, eps, ...
Obj typeInfo(Elaborator &el, CallArgs &args, bool isFloatInfo) {
  BoundArgs a = el.bind(args, {{"dtype"}});
  DType t = llvm::isa<ArrayObj>(a[0].get()) ? llvm::cast<ArrayObj>(*a[0]).dtype
                                            : el.toDType(a[0], a.range(0), "dtype");
  auto info = std::make_shared<NamespaceObj>(isFloatInfo ? "finfo" : "iinfo");
  info->members["dtype"] = std::make_shared<DTypeObj>(t);
  info->members["bits"] = makeInt(bitWidth(t));
  if (isFloatInfo) {
    if (!isFloat(t))
      el.fail(a.range(0), std::string("finfo needs a float dtype, got ") + numpyName(t));
    double max, tiny, eps;
    switch (t) {
    case DType::F16: max = 65504.0; tiny = 6.103515625e-05; eps = 0.0009765625; break;
    case DType::BF16: max = 3.3895313892515355e+38; tiny = 1.1754943508222875e-38; eps = 0.0078125; break;
    case DType::F64: max = std::numeric_limits<double>::max(); tiny = std::numeric_limits<double>::min(); eps = std::numeric_limits<double>::epsilon(); break;
    default: max = std::numeric_limits<float>::max(); tiny = std::numeric_limits<float>::min(); eps = std::numeric_limits<float>::epsilon(); break;
    }
    // NumPy scalars of the dtype, which JAX types strongly.
    auto scalar = [&](double v) { return std::make_shared<FloatObj>(v, t); };
    info->members["max"] = scalar(max);
    info->members["min"] = scalar(-max);
    info->members["tiny"] = scalar(tiny);
    info->members["smallest_normal"] = scalar(tiny);
    info->members["eps"] = scalar(eps);
    return info;
  }
  if (!isInteger(t))
    el.fail(a.range(0), std::string("iinfo needs an integer dtype, got ") + numpyName(t));
  unsigned bits = bitWidth(t);
  if (isUnsigned(t)) {
    info->members["min"] = makeInt(0);
    info->members["max"] = makeInt(bits == 64 ? INT64_MAX : (int64_t(1) << bits) - 1);
  } else {
    info->members["min"] = makeInt(bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)));
    info->members["max"] = makeInt(bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1);
  }
  return info;
}

} // namespace

Obj logAddExp(Elaborator &el, const Obj &x1, const Obj &x2, bool base2, SourceRange r) {
  if (isStatic(x1) && isStatic(x2)) {
    double a = staticDouble(x1), b = staticDouble(x2), delta = a - b;
    if (std::isnan(delta))
      return makeFloat(a + b);
    double high = std::max(a, b);
    return makeFloat(base2 ? high + std::log1p(std::exp2(-std::fabs(delta))) / std::log(2.0)
                           : high + std::log1p(std::exp(-std::fabs(delta))));
  }
  // As JAX's lax_other.logaddexp after promote_args_inexact: where the
  // difference is NaN (a NaN, or infinities of one sign) the answer is
  // the sum, so that logaddexp(-inf, -inf) is -inf (a masked scan's
  // start), not NaN.
  ArrayOps &ops = el.arrays();
  JaxType t = toInexact(promoteTypes(ops.typeOf(x1, r), ops.typeOf(x2, r)));
  ArrayPtr a = ops.toArray(x1, r, t), b = ops.toArray(x2, r, t);
  Obj delta = ops.binary(BinaryOp::Sub, a, b, r);
  Obj decay = ops.negate(ops.abs(delta, r), r);
  Obj tail =
      base2
          ? ops.binary(
                BinaryOp::Mul, makeFloat(1.0 / std::log(2.0)),
                ops.floatUnary(FloatUnary::Log1p, ops.floatUnary(FloatUnary::Exp2, decay, r), r), r)
          : ops.floatUnary(FloatUnary::Log1p, ops.floatUnary(FloatUnary::Exp, decay, r), r);
  Obj isNan = ops.isNan(delta, r);
  Obj sum = ops.binary(BinaryOp::Add, a, b, r);
  Obj larger = ops.maximum(a, b, r);
  return ops.where(isNan, sum, ops.binary(BinaryOp::Add, larger, tail, r), r);
}

Obj reductionBuiltin(Elaborator &el, CallArgs &args, int kind) {
  BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"dtype", none()}, {"out", none()},
                               {"keepdims", makeBool(false)}, {"initial", none()},
                               {"where", none()}});
  if (!isNone(a[3]))
    el.fail(args.range, "the out= argument is not supported");
  Reduction reduction = static_cast<Reduction>(kind);
  bool hasInitial = !isNone(a[5]), hasWhere = !isNone(a[6]);
  if (!hasInitial && !hasWhere)
    if (std::optional<Obj> s = staticReduction(el, a[0], kind, args.range); s && isNone(a[1]))
      return *s;
  ArrayPtr x = asArray(el, a[0], a.range(0));
  if (!isNone(a[2]))
    x = el.arrays().cast(x, el.toDType(a[2], a.range(2), "dtype"), args.range);
  std::vector<int64_t> axes = el.normalizeAxes(a[1], std::max<int64_t>(x->rank(), 1), a.range(1));
  bool keepDims = el.truthy(a[4], a.range(4));
  bool isMax = reduction == Reduction::Max, isMin = reduction == Reduction::Min;
  if (hasWhere) {
    // As jnp's _reduction: masked-off elements become the operation's
    // identity; max and min have none, so they need `initial`.
    if ((isMax || isMin) && !hasInitial)
      el.fail(args.range, std::string("reduction operation ") + (isMax ? "max" : "min") +
                              " does not have an identity, so to use a where mask one has to "
                              "specify 'initial'");
    Obj identity;
    switch (reduction) {
    case Reduction::Sum: identity = makeInt(0); break;
    case Reduction::Prod: identity = makeInt(1); break;
    case Reduction::Any: identity = makeBool(false); break;
    case Reduction::All: identity = makeBool(true); break;
    case Reduction::Max:
    case Reduction::Min: {
      if (isFloat(x->dtype))
        identity = makeFloat(isMax ? -std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::infinity());
      else if (x->dtype == DType::Bool)
        identity = makeBool(isMin);
      else {
        unsigned bits = bitWidth(x->dtype);
        int64_t low = isUnsigned(x->dtype) ? 0 : bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1));
        int64_t high = isUnsigned(x->dtype) ? (bits >= 63 ? INT64_MAX : (int64_t(1) << bits) - 1)
                                            : bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
        identity = makeInt(isMax ? low : high);
      }
      break;
    }
    }
    if (reduction == Reduction::Any || reduction == Reduction::All)
      x = el.arrays().cast(x, DType::Bool, args.range);
    auto masked = std::static_pointer_cast<ArrayObj>(el.arrays().where(a[6], x, identity, args.range));
    if (masked->shape != x->shape)
      el.fail(a.range(6), "the where= mask must broadcast to the reduced array's shape");
    x = el.arrays().castTo(masked, {x->dtype, false}, args.range);
  }
  Obj result = el.arrays().reduce(reduction, x, axes, keepDims, args.range);
  if (hasInitial) {
    // The initial value joins the result with the reduction's operation.
    ArrayPtr r = std::static_pointer_cast<ArrayObj>(result);
    ArrayPtr initial = el.arrays().toArray(a[5], a.range(5), JaxType{r->dtype, false});
    if (initial->rank() != 0)
      el.fail(a.range(5), "initial value must be a scalar");
    switch (reduction) {
    case Reduction::Sum: result = binaryOperator(el, BinaryOp::Add, initial, r, args.range); break;
    case Reduction::Prod: result = binaryOperator(el, BinaryOp::Mul, initial, r, args.range); break;
    case Reduction::Max: result = el.arrays().maximum(initial, r, args.range); break;
    case Reduction::Min: result = el.arrays().minimum(initial, r, args.range); break;
    case Reduction::Any: result = el.arrays().logical(BinaryOp::BitOr, initial, r, args.range); break;
    case Reduction::All: result = el.arrays().logical(BinaryOp::BitAnd, initial, r, args.range); break;
    }
  }
  // jnp's reductions give strongly typed results (lax's keep weak types).
  auto array = std::static_pointer_cast<ArrayObj>(result);
  // An explicit dtype is the result's: jnp.sum(int8s, dtype=jnp.int8) wraps
  // in int8 instead of widening to int32.
  if (!isNone(a[2]) && (kind == int(Reduction::Sum) || kind == int(Reduction::Prod)))
    return el.arrays().cast(array, x->dtype, args.range);
  return array->weak ? el.arrays().wrap(array->value, array->shape, array->dtype) : result;
}

bool tf32Allowed(Elaborator &el, const Obj &precision, SourceRange r) {
  if (isNone(precision))
    return el.tf32ByDefault;
  if (auto *s = llvm::dyn_cast<StrObj>(precision.get())) {
    // lax.Precision's members and the names jax.default_matmul_precision
    // and lax.Precision(...) take.
    std::string name = llvm::StringRef(s->value).lower();
    // A lax.DotAlgorithmPreset: its operands' types say whether f32
    // operands may be rounded. The algorithms that reach f32 accuracy
    // from narrower products (_X3, _X6, _X9) multiply in f32, at least as
    // accurate; those of narrower operands round f32 operands to TF32,
    // as Pallas's GPU lowering of precision "bfloat16" does.
    if (llvm::StringRef preset = s->value; preset.consume_front("DotAlgorithmPreset.")) {
      if (preset == "DEFAULT")
        return el.tf32ByDefault;
      return !(preset == "F32_F32_F32" || preset == "F64_F64_F64" || preset.ends_with("_X3") ||
               preset.ends_with("_X6") || preset.ends_with("_X9"));
    }
    if (name == "default" || name == "high" || name == "fastest" || name == "bfloat16" ||
        name == "tensorfloat32" || name == "bfloat16_3x")
      return true;
    if (name == "highest" || name == "float32")
      return false;
  } else if (auto *pair = llvm::dyn_cast<SequenceObj>(precision.get())) {
    // Pallas's GPU lowering uses TF32 when either operand's precision allows it.
    if (pair->items.size() == 2)
      return tf32Allowed(el, pair->items[0], r) || tf32Allowed(el, pair->items[1], r);
  }
  el.fail(r, "precision " + repr(*precision) +
                 " is not supported: use None, lax.Precision.DEFAULT, HIGH or HIGHEST (or their "
                 "names), a pair of them, or a lax.DotAlgorithmPreset");
}

Obj dotBuiltin(Elaborator &el, const Obj &a, const Obj &b, bool transposeA, bool transposeB,
               const Obj &preferred, const Obj &precision, SourceRange r) {
  std::optional<DType> p = optionalDType(el, preferred, r);
  return el.arrays().dot(a, b, transposeA, transposeB, p, tf32Allowed(el, precision, r), r);
}

std::shared_ptr<NamespaceObj> makeNumpyNamespace(Elaborator &el, const std::string &name) {
  auto ns = std::make_shared<NamespaceObj>(name);
  NamespaceObj &n = *ns;

  // dtypes and constants
  for (DType t : allDTypes)
    n.members[numpyName(t)] = std::make_shared<DTypeObj>(t);
  n.members["bool_"] = std::make_shared<DTypeObj>(DType::Bool);
  n.members["float_"] = std::make_shared<DTypeObj>(DType::F32);
  n.members["int_"] = std::make_shared<DTypeObj>(DType::I32);
  n.members["pi"] = makeFloat(M_PI);
  n.members["e"] = makeFloat(M_E);
  n.members["inf"] = makeFloat(std::numeric_limits<double>::infinity());
  n.members["nan"] = makeFloat(std::numeric_limits<double>::quiet_NaN());
  n.members["newaxis"] = none();
  define(n, "dtype", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}, {"align", none(), true}, {"copy", none(), true}});
    if (llvm::isa<ExtendedDTypeObj>(a[0].get()))
      return a[0];
    if (auto *s = llvm::dyn_cast<StrObj>(a[0].get())) // np.dtype("int4")
      if (Obj extended = dtypeByExtendedName(s->value))
        return extended;
    if (!llvm::isa<DTypeObj, StrObj, BuiltinObj>(a[0].get())) // np.dtype(x): x's dtype
      if (Obj d = [&]() -> Obj {
            try {
              return getAttribute(el, a[0], "dtype", a.range(0));
            } catch (const ElabError &) {
              return nullptr;
            }
          }())
        return d;
    return std::make_shared<DTypeObj>(el.toDType(a[0], a.range(0), "dtype"));
  });
  // Abstract dtype categories, for jnp.issubdtype(x.dtype, jnp.floating).
  for (const char *category :
       {"generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger"})
    n.members[category] = std::make_shared<NamespaceObj>(std::string("numpy.") + category);
  define(n, "issubdtype", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"arg1"}, {"arg2"}});
    auto *category = llvm::dyn_cast<NamespaceObj>(a[1].get());
    if (category && category->name.rfind("numpy.", 0) != 0)
      category = nullptr;
    // Dtypes no array of pkc's holds: int4, float8_*, the semaphores.
    auto *e1 = llvm::dyn_cast<ExtendedDTypeObj>(a[0].get());
    auto *e2 = llvm::dyn_cast<ExtendedDTypeObj>(a[1].get());
    if (e1 && e2)
      return makeBool(e1->name == e2->name || (e1->kind == 's' && e2->name == "semaphore_dtype"));
    // NumPy's kind of the first dtype: 'b', 'i', 'u', 'f', or an extended
    // dtype's ('s' for the semaphores).
    char kind = 0;
    std::optional<DType> t;
    if (e1) {
      kind = e1->kind;
    } else {
      t = el.toDType(a[0], a.range(0), "issubdtype's first argument");
      kind = *t == DType::Bool ? 'b' : isFloat(*t) ? 'f' : isUnsigned(*t) ? 'u' : 'i';
    }
    if (category) {
      std::string k = category->name.substr(6);
      return makeBool(k == "generic" || (k == "number" && kind != 'b' && kind != 's') ||
                      ((k == "inexact" || k == "floating") && kind == 'f') ||
                      (k == "integer" && (kind == 'i' || kind == 'u')) ||
                      (k == "signedinteger" && kind == 'i') ||
                      (k == "unsignedinteger" && kind == 'u'));
    }
    if (e1) // outside categories, pkc compares only the dtypes it computes with
      el.toDType(a[0], a.range(0), "issubdtype's first argument");
    if (e2)
      return makeBool(false);
    return makeBool(*t == el.toDType(a[1], a.range(1), "issubdtype's second argument"));
  });
  define(n, "promote_types", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    JaxType x{el.toDType(a[0], a.range(0), "dtype"), false}, y{el.toDType(a[1], a.range(1), "dtype"), false};
    return std::make_shared<DTypeObj>(promoteTypes(x, y).dtype);
  });
  define(n, "result_type", [](Elaborator &el, CallArgs &args) -> Obj {
    // The dtype jnp would compute with: arrays and numbers by their (weak)
    // types, dtypes as strong types.
    if (args.positional.empty())
      el.fail(args.range, "at least one array or dtype is required");
    std::optional<JaxType> t;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      const Obj &o = args.positional[i];
      JaxType u = ArrayOps::isNumeric(o) ? el.arrays().typeOf(o, args.rangeOf(i))
                                          : JaxType{el.toDType(o, args.rangeOf(i), "dtype"), false};
      t = t ? promoteTypes(*t, u) : u;
    }
    return std::make_shared<DTypeObj>(t->dtype);
  });
  define(n, "astype", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"dtype"}, {"copy", none(), true}, {"device", none(), true}});
    return el.arrays().cast(asArray(el, a[0], a.range(0)), el.toDType(a[1], a.range(1), "dtype"),
                            args.range);
  });
  define(n, "finfo", [](Elaborator &el, CallArgs &args) { return typeInfo(el, args, true); });
  define(n, "iinfo", [](Elaborator &el, CallArgs &args) { return typeInfo(el, args, false); });

  // creation
  auto filled = [](Elaborator &el, const Obj &shape, const Obj &value, const Obj &dtype,
                   SourceRange r) -> Obj {
    std::vector<int64_t> s = el.toShape(shape, r, "shape");
    // Without a dtype, a Python number's fill is weakly typed, as in jnp:
    // jnp.full(shape, 0.5) + bf16_array is bf16. ArrayOps::full keeps that.
    std::optional<DType> t = optionalDType(el, dtype, r);
    return el.arrays().full(s, value, t, r);
  };
  define(n, "zeros", [filled](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"shape"}, {"dtype", none()}});
    return filled(el, a[0], makeFloat(0), isNone(a[1]) ? std::make_shared<DTypeObj>(DType::F32) : a[1], args.range);
  });
  n.members["empty"] = n.members["zeros"];
  define(n, "ones", [filled](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"shape"}, {"dtype", none()}});
    return filled(el, a[0], makeFloat(1), isNone(a[1]) ? std::make_shared<DTypeObj>(DType::F32) : a[1], args.range);
  });
  define(n, "full", [filled](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"shape"}, {"fill_value"}, {"dtype", none()}});
    return filled(el, a[0], a[1], a[2], args.range);
  });
  auto like = [](double fill) {
    return [fill](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"dtype", none()}, {"shape", none()}});
      auto [shape, dtype] = shapeAndDType(el, a[0], a.range(0));
      DType t = isNone(a[1]) ? dtype : el.toDType(a[1], a.range(1), "dtype");
      if (!isNone(a[2]))
        shape = el.toShape(a[2], a.range(2), "shape");
      return el.arrays().full(shape, makeFloat(fill), t, args.range);
    };
  };
  define(n, "zeros_like", like(0.0));
  define(n, "ones_like", like(1.0));
  n.members["empty_like"] = n.members["zeros_like"];
  define(n, "full_like", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"fill_value"}, {"dtype", none()}, {"shape", none()}});
    auto [shape, dtype] = shapeAndDType(el, a[0], a.range(0));
    DType t = isNone(a[2]) ? dtype : el.toDType(a[2], a.range(2), "dtype");
    if (!isNone(a[3]))
      shape = el.toShape(a[3], a.range(3), "shape");
    return el.arrays().full(shape, a[1], t, args.range);
  });
  define(n, "arange", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"start"}, {"stop", none()}, {"step", none()}, {"dtype", none()}});
    Obj start = a[0], stop = a[1], step = isNone(a[2]) ? makeInt(1) : a[2];
    if (isNone(stop)) {
      stop = start;
      start = makeInt(0);
    }
    return el.arrays().arange(start, stop, step, optionalDType(el, a[3], a.range(3)), args.range);
  });
  auto asarray = [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"dtype", none()}, {"copy", none(), true}});
    std::optional<DType> dtype = optionalDType(el, a[1], a.range(1));
    // np.array(jax.devices()): the devices for a jax.sharding.Mesh, which
    // takes them as the list they are (pkc has one device).
    if (auto *seq = llvm::dyn_cast<SequenceObj>(a[0].get());
        seq && !seq->items.empty() && llvm::all_of(seq->items, [](const Obj &item) {
          auto *ns = llvm::dyn_cast<NamespaceObj>(item.get());
          return ns && ns->name == "jax.Device";
        }))
      return a[0];
    return arrayFromStatic(el, a[0], dtype, args.range);
  };
  define(n, "asarray", asarray);
  define(n, "array", asarray);
  // A copy of a value is the value (pkc's arrays are immutable); a NumPy
  // array, which code may then change in place, is copied.
  define(n, "copy", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"order", none(), true}, {"subok", none(), true}});
    if (auto *s = llvm::dyn_cast<StaticArrayObj>(a[0].get()))
      return static_array::astype(el, *s, s->dtype, args.range);
    if (llvm::isa<RefObj>(a[0].get()))
      el.fail(a.range(0), "copy takes an array; read the Ref first (x_ref[...])");
    if (!ArrayOps::isNumeric(a[0]) && !llvm::isa<GlobalArrayObj>(a[0].get()))
      el.fail(a.range(0), "copy takes an array, got " + typeName(*a[0]));
    return a[0];
  });
  define(n, "eye", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"N"}, {"M", none()}, {"k", makeInt(0)}, {"dtype", none()}});
    int64_t rows = el.toInt(a[0], a.range(0), "N");
    int64_t cols = isNone(a[1]) ? rows : el.toInt(a[1], a.range(1), "M");
    DType t = isNone(a[3]) ? DType::F32 : el.toDType(a[3], a.range(3), "dtype");
    ArrayOps &ops = el.arrays();
    Obj row = ops.iota({rows, cols}, 0, DType::I32, args.range);
    Obj col = ops.iota({rows, cols}, 1, DType::I32, args.range);
    Obj diagonal = compareOperator(el, CompareOp::Eq,
                                   binaryOperator(el, BinaryOp::Add, row, a[2], args.range), col,
                                   args.range);
    return ops.cast(std::static_pointer_cast<ArrayObj>(diagonal), t, args.range);
  });
  auto triangle = [](bool lower) {
    return [lower](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"m"}, {"k", makeInt(0)}});
      ArrayPtr x = asArray(el, a[0], a.range(0));
      if (x->rank() < 2)
        el.fail(args.range, "tril/triu need at least 2 dimensions");
      ArrayOps &ops = el.arrays();
      std::vector<int64_t> shape = {x->shape[x->rank() - 2], x->shape[x->rank() - 1]};
      Obj row = ops.iota(shape, 0, DType::I32, args.range);
      Obj col = ops.iota(shape, 1, DType::I32, args.range);
      Obj shifted = binaryOperator(el, BinaryOp::Add, row, a[1], args.range);
      Obj keep = compareOperator(el, lower ? CompareOp::Le : CompareOp::Ge, col, shifted, args.range);
      return ops.where(keep, x, makeInt(0), args.range);
    };
  };
  define(n, "tril", triangle(true));
  define(n, "triu", triangle(false));

  // element-wise math
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference)                                \
  unary(n, Name, [](Elaborator &el, const Obj &x, SourceRange r) {               \
    return el.arrays().floatUnary(FloatUnary::Enum, x, r);                       \
  });
#include "ir/ElementwiseMath.def"
  // The static versions of the common ones.
  for (auto [fname, fn] : std::initializer_list<std::pair<const char *, double (*)(double)>>{
           {"exp", std::exp}, {"log", std::log}, {"sqrt", std::sqrt}, {"tanh", std::tanh},
           {"sin", std::sin}, {"cos", std::cos}, {"log2", std::log2}, {"exp2", std::exp2},
           {"rsqrt", referenceRsqrtStatic}}) {
    std::string fnName = fname;
    FloatUnary which = FloatUnary::Exp;
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference)                                \
  if (fnName == Name)                                                            \
    which = FloatUnary::Enum;
#include "ir/ElementwiseMath.def"
    unary(n, fname, [which](Elaborator &el, const Obj &x, SourceRange r) {
      return el.arrays().floatUnary(which, x, r);
    }, fn);
  }
  unary(n, "abs", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().abs(x, r); });
  n.members["absolute"] = n.members["abs"];
  // jnp.bitwise_count: the set bits of |x|, as uint8 (JAX's ufuncs.py).
  unary(n, "bitwise_count", [](Elaborator &el, const Obj &x, SourceRange r) -> Obj {
    ArrayPtr a = el.arrays().toArray(x, r);
    if (isFloat(a->dtype) || a->dtype == DType::Bool)
      el.fail(r, std::string("jnp.bitwise_count takes integers, got ") + numpyName(a->dtype));
    Obj count = el.arrays().bitCount(el.arrays().abs(a, r), /*leadingZeros=*/false, r);
    return el.arrays().cast(el.arrays().toArray(count, r), DType::U8, r);
  });
  unary(n, "negative", [](Elaborator &el, const Obj &x, SourceRange r) {
    return unaryOperator(el, ast::UnaryOp::Negate, x, r);
  });
  unary(n, "positive", [](Elaborator &, const Obj &x, SourceRange) { return x; });
  unary(n, "sign", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().sign(x, r); });
  unary(n, "floor", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().round(Rounding::Floor, x, r);
  }, std::floor);
  unary(n, "ceil", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().round(Rounding::Ceil, x, r);
  }, std::ceil);
  unary(n, "trunc", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().round(Rounding::Trunc, x, r);
  }, std::trunc);
  unary(n, "rint", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().round(Rounding::RoundEven, x, r);
  }, std::nearbyint);
  define(n, "round", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"decimals", makeInt(0)}});
    int64_t decimals = el.toInt(a[1], a.range(1), "decimals");
    ArrayOps &ops = el.arrays();
    ArrayPtr x = ops.toArray(a[0], a.range(0));
    if (!isFloat(x->dtype)) {
      // Integers are already round. JAX refuses decimals < 0 for them
      // (NotImplementedError), so a program that asks fails in JAX too.
      if (decimals < 0)
        el.fail(a.range(1), "jnp.round of an integer array takes decimals >= 0, as in JAX, got " +
                                std::to_string(decimals));
      return x;
    }
    if (decimals == 0)
      return ops.round(Rounding::RoundEven, x, args.range);
    // As jnp: x * 10^d, rounded to even, / 10^d (float16 through float32).
    ArrayPtr wide = x->dtype == DType::F16 ? ops.cast(x, DType::F32, args.range) : x;
    Obj factor = makeFloat(std::pow(10.0, static_cast<double>(decimals)));
    Obj scaled = ops.round(Rounding::RoundEven,
                           binaryOperator(el, BinaryOp::Mul, wide, factor, args.range), args.range);
    ArrayPtr out =
        ops.toArray(binaryOperator(el, BinaryOp::Div, scaled, factor, args.range), args.range);
    return x->dtype == DType::F16 ? ops.cast(out, DType::F16, args.range) : out;
  });
  n.members["around"] = n.members["round"];
  unary(n, "square", [](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Mul, x, x, r);
  });
  unary(n, "reciprocal", [](Elaborator &el, const Obj &x, SourceRange r) {
    ArrayPtr a = el.arrays().toArray(x, r, toInexact(el.arrays().typeOf(x, r)));
    return binaryOperator(el, BinaryOp::Div, makeFloat(1.0), a, r);
  });
  unary(n, "logical_not", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().logicalNot(x, r);
  });
  unary(n, "bitwise_not", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().invert(x, r);
  });
  n.members["invert"] = n.members["bitwise_not"];
  unary(n, "isnan", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().isNan(x, r); });
  unary(n, "isinf", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().isInf(x, r); });
  unary(n, "isfinite", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().isFinite(x, r);
  });

  binaryOperatorFn(n, "add", BinaryOp::Add);
  binaryOperatorFn(n, "subtract", BinaryOp::Sub);
  binaryOperatorFn(n, "multiply", BinaryOp::Mul);
  binaryOperatorFn(n, "divide", BinaryOp::Div);
  binaryOperatorFn(n, "true_divide", BinaryOp::Div);
  binaryOperatorFn(n, "floor_divide", BinaryOp::FloorDiv);
  binaryOperatorFn(n, "remainder", BinaryOp::Mod);
  binaryOperatorFn(n, "mod", BinaryOp::Mod);
  binaryOperatorFn(n, "power", BinaryOp::Pow);
  binaryOperatorFn(n, "pow", BinaryOp::Pow);
  binaryOperatorFn(n, "bitwise_and", BinaryOp::BitAnd);
  binaryOperatorFn(n, "bitwise_or", BinaryOp::BitOr);
  binaryOperatorFn(n, "bitwise_xor", BinaryOp::BitXor);
  binaryOperatorFn(n, "left_shift", BinaryOp::LShift);
  binaryOperatorFn(n, "right_shift", BinaryOp::RShift);
  binaryOperatorFn(n, "matmul", BinaryOp::MatMul);
  compareFn(n, "equal", CompareOp::Eq);
  compareFn(n, "not_equal", CompareOp::Ne);
  compareFn(n, "less", CompareOp::Lt);
  compareFn(n, "less_equal", CompareOp::Le);
  compareFn(n, "greater", CompareOp::Gt);
  compareFn(n, "greater_equal", CompareOp::Ge);
  binary(n, "maximum", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) -> Obj {
    if (isStatic(a) && isStatic(b))
      return staticDouble(a) >= staticDouble(b) ? a : b;
    return el.arrays().maximum(a, b, r);
  });
  binary(n, "minimum", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) -> Obj {
    if (isStatic(a) && isStatic(b))
      return staticDouble(a) <= staticDouble(b) ? a : b;
    return el.arrays().minimum(a, b, r);
  });
  binary(n, "arctan2", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return el.arrays().arctan2(a, b, r);
  });
  binary(n, "logical_and", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return el.arrays().logical(BinaryOp::BitAnd, a, b, r);
  });
  binary(n, "logical_or", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return el.arrays().logical(BinaryOp::BitOr, a, b, r);
  });
  binary(n, "logical_xor", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return el.arrays().logical(BinaryOp::BitXor, a, b, r);
  });
  binary(n, "logaddexp", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return logAddExp(el, a, b, /*base2=*/false, r);
  });
  binary(n, "logaddexp2", [](Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
    return logAddExp(el, a, b, /*base2=*/true, r);
  });
  defineNumpyComposites(n);
  n.members["linalg"] = makeLinalgNamespace();
  define(n, "where", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"condition"}, {"x", none()}, {"y", none()}});
    if (isNone(a[1]) || isNone(a[2]))
      el.fail(args.range, "jnp.where needs three arguments (the one-argument form has a "
                          "data-dependent shape)");
    return el.arrays().where(a[0], a[1], a[2], args.range);
  });
  define(n, "clip", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"min", none()}, {"max", none()}, {"a_min", none(), true},
                                 {"a_max", none(), true}});
    Obj x = a[0];
    Obj low = isNone(a[1]) ? a[3] : a[1], high = isNone(a[2]) ? a[4] : a[2];
    if (!isNone(low))
      x = el.arrays().maximum(x, low, args.range);
    if (!isNone(high))
      x = el.arrays().minimum(x, high, args.range);
    return x;
  });

  // structure
  define(n, "reshape", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"shape", none()}, {"newshape", none(), true}});
    Obj shape = isNone(a[1]) ? a[2] : a[1];
    std::vector<int64_t> s;
    for (const Obj &d : llvm::isa<SequenceObj>(shape.get()) ? el.iterate(shape, a.range(1))
                                                             : std::vector<Obj>{shape})
      s.push_back(el.toInt(d, a.range(1), "reshape dimension"));
    return el.arrays().reshape(asArray(el, a[0], a.range(0)), s, args.range);
  });
  define(n, "ravel", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}});
    return el.arrays().reshape(asArray(el, a[0], a.range(0)), {-1}, args.range);
  });
  define(n, "transpose", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axes", none()}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> perm;
    if (isNone(a[1]))
      for (int64_t i = x->rank() - 1; i >= 0; --i)
        perm.push_back(i);
    else
      for (const Obj &axis : el.iterate(a[1], a.range(1)))
        perm.push_back(el.normalizeAxis(axis, x->rank(), a.range(1)));
    return el.arrays().transpose(x, perm, args.range);
  });
  n.members["permute_dims"] = n.members["transpose"];
  define(n, "swapaxes", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axis1"}, {"axis2"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < x->rank(); ++i)
      perm.push_back(i);
    std::swap(perm[el.normalizeAxis(a[1], x->rank(), a.range(1))],
              perm[el.normalizeAxis(a[2], x->rank(), a.range(2))]);
    return el.arrays().transpose(x, perm, args.range);
  });
  define(n, "expand_dims", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axis"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<Obj> axesObj = llvm::isa<SequenceObj>(a[1].get()) ? el.iterate(a[1], a.range(1))
                                                                  : std::vector<Obj>{a[1]};
    int64_t rank = x->rank() + static_cast<int64_t>(axesObj.size());
    std::vector<int64_t> axes;
    for (const Obj &axis : axesObj)
      axes.push_back(el.normalizeAxis(axis, rank, a.range(1)));
    return el.arrays().expandDims(x, axes, args.range);
  });
  define(n, "squeeze", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    return el.arrays().squeeze(x, el.normalizeAxes(a[1], x->rank(), a.range(1)), args.range);
  });
  define(n, "broadcast_to", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"array"}, {"shape"}});
    return el.arrays().broadcastTo(asArray(el, a[0], a.range(0)),
                                   el.toShape(a[1], a.range(1), "shape"), args.range);
  });
  define(n, "concatenate", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"arrays"}, {"axis", makeInt(0)}});
    std::vector<Obj> arrays = el.iterate(a[0], a.range(0));
    if (arrays.empty())
      el.fail(args.range, "need at least one array to concatenate");
    int64_t rank = asArray(el, arrays[0], a.range(0))->rank();
    return el.arrays().concatenate(arrays, el.normalizeAxis(a[1], rank, a.range(1)), args.range);
  });
  define(n, "stack", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"arrays"}, {"axis", makeInt(0)}});
    std::vector<Obj> arrays = el.iterate(a[0], a.range(0));
    if (arrays.empty())
      el.fail(args.range, "need at least one array to stack");
    int64_t rank = asArray(el, arrays[0], a.range(0))->rank() + 1;
    int64_t axis = el.normalizeAxis(a[1], rank, a.range(1));
    std::vector<Obj> expanded;
    for (const Obj &x : arrays)
      expanded.push_back(el.arrays().expandDims(asArray(el, x, a.range(0)), {axis}, args.range));
    return el.arrays().concatenate(expanded, axis, args.range);
  });

  // reductions
  define(n, "sum", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::Sum)); });
  define(n, "prod", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::Prod)); });
  define(n, "max", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::Max)); });
  define(n, "min", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::Min)); });
  define(n, "any", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::Any)); });
  define(n, "all", [](Elaborator &el, CallArgs &args) { return reductionBuiltin(el, args, int(Reduction::All)); });
  n.members["amax"] = n.members["max"];
  n.members["amin"] = n.members["min"];
  define(n, "mean", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"dtype", none()}, {"out", none()},
                                 {"keepdims", makeBool(false)}, {"where", none(), true}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
    bool keepDims = el.truthy(a[4], a.range(4));
    Obj m;
    if (isNone(a[5])) {
      m = el.arrays().mean(x, axes, keepDims, args.range);
    } else {
      // jnp.mean(x, where=mask): the sum of the kept elements over their count.
      ArrayOps &ops = el.arrays();
      DType resultType = isFloat(x->dtype) ? x->dtype : DType::F32;
      DType computeType = (resultType == DType::BF16 || resultType == DType::F16) ? DType::F32 : resultType;
      ArrayPtr values = ops.cast(x, computeType, args.range);
      auto kept = std::static_pointer_cast<ArrayObj>(ops.where(a[5], values, makeInt(0), args.range));
      if (kept->shape != x->shape)
        el.fail(a.range(5), "the where= mask must broadcast to the array's shape");
      ArrayPtr mask = ops.broadcastTo(ops.cast(ops.toArray(a[5], a.range(5)), DType::Bool, args.range),
                                      x->shape, args.range);
      Obj total = ops.reduce(Reduction::Sum, ops.castTo(kept, {computeType, false}, args.range), axes,
                             keepDims, args.range);
      Obj count = ops.reduce(Reduction::Sum, ops.cast(mask, computeType, args.range), axes, keepDims,
                             args.range);
      m = ops.cast(std::static_pointer_cast<ArrayObj>(binaryOperator(el, BinaryOp::Div, total, count,
                                                                     args.range)),
                   resultType, args.range);
    }
    if (!isNone(a[2]))
      m = el.arrays().cast(std::static_pointer_cast<ArrayObj>(m), el.toDType(a[2], a.range(2), "dtype"), args.range);
    return m;
  });
  auto moment = [](bool isStd) {
    return [isStd](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"dtype", none()}, {"out", none()},
                                   {"ddof", makeInt(0)}, {"keepdims", makeBool(false)}});
      if (el.toInt(a[4], a.range(4), "ddof") != 0)
        el.fail(a.range(4), "only ddof=0 is supported");
      ArrayPtr x = asArray(el, a[0], a.range(0));
      std::vector<int64_t> axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
      Obj m = el.arrays().mean(x, axes, true, args.range);
      Obj d = binaryOperator(el, BinaryOp::Sub, x, m, args.range);
      Obj v = el.arrays().mean(binaryOperator(el, BinaryOp::Mul, d, d, args.range), axes,
                               el.truthy(a[5], a.range(5)), args.range);
      return isStd ? el.arrays().floatUnary(FloatUnary::Sqrt, v, args.range) : v;
    };
  };
  define(n, "var", moment(false));
  define(n, "std", moment(true));
  auto argReduce = [](bool isMax) {
    return [isMax](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"out", none()}, {"keepdims", makeBool(false), true}});
      ArrayPtr x = asArray(el, a[0], a.range(0));
      std::optional<int64_t> axis;
      if (!isNone(a[1]))
        axis = el.normalizeAxis(a[1], x->rank(), a.range(1));
      return el.arrays().argReduce(isMax, x, axis, el.truthy(a[3], a.range(3)), args.range);
    };
  };
  define(n, "argmax", argReduce(true));
  define(n, "argmin", argReduce(false));

  // products
  define(n, "dot", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}, {"precision", none(), true},
                                 {"preferred_element_type", none(), true}});
    return dotBuiltin(el, a[0], a[1], false, false, a[3], a[2], args.range);
  });
  define(n, "matmul", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}, {"precision", none(), true},
                                 {"preferred_element_type", none(), true}});
    return matmulBuiltin(el, a[0], a[1], a[3], a[2], args.range);
  });
  define(n, "outer", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    ArrayPtr x = el.arrays().reshape(asArray(el, a[0], a.range(0)), {-1, 1}, args.range);
    ArrayPtr y = el.arrays().reshape(asArray(el, a[1], a.range(1)), {1, -1}, args.range);
    return binaryOperator(el, BinaryOp::Mul, x, y, args.range);
  });
  define(n, "einsum", einsum);
  define(n, "logsumexp", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"keepdims", makeBool(false)}});
    return logSumExp(el, a[0], a[1], el.truthy(a[2], a.range(2)), args.range);
  });
  return ns;
}

Obj dtypeByExtendedName(const std::string &name) {
  NamespaceObj probe("numpy");
  addExtendedDTypes(probe);
  auto it = probe.members.find(name);
  return it == probe.members.end() ? nullptr : it->second;
}

std::shared_ptr<NamespaceObj> makeMathNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("math");
  NamespaceObj &n = *ns;
  n.members["pi"] = makeFloat(M_PI);
  n.members["e"] = makeFloat(M_E);
  n.members["inf"] = makeFloat(std::numeric_limits<double>::infinity());
  n.members["nan"] = makeFloat(std::numeric_limits<double>::quiet_NaN());
  auto real = [&](const char *name, double (*fn)(double)) {
    define(n, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      return makeFloat(fn(el.toDouble(a[0], a.range(0), "math argument")));
    });
  };
  real("sqrt", std::sqrt);
  real("exp", std::exp);
  real("log", std::log);
  real("log2", std::log2);
  real("log10", std::log10);
  real("sin", std::sin);
  real("cos", std::cos);
  real("tan", std::tan);
  real("tanh", std::tanh);
  real("erf", std::erf);
  auto rounding = [&](const char *name, double (*fn)(double)) {
    define(n, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      if (std::optional<int64_t> i = el.staticInt(a[0]))
        return makeInt(*i);
      return makeInt(el.floatToInt(fn(el.toDouble(a[0], a.range(0), "math argument")), args.range));
    });
  };
  rounding("ceil", std::ceil);
  rounding("floor", std::floor);
  rounding("trunc", std::trunc);
  define(n, "prod", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}, {"start", makeInt(1), true}});
    Obj acc = a[1];
    for (const Obj &x : el.iterate(a[0], a.range(0)))
      acc = binaryOperator(el, BinaryOp::Mul, acc, x, args.range);
    return acc;
  });
  define(n, "gcd", [](Elaborator &el, CallArgs &args) -> Obj {
    int64_t g = 0;
    for (size_t i = 0; i < args.positional.size(); ++i)
      g = std::gcd(g, el.toInt(args.positional[i], args.rangeOf(i), "gcd argument"));
    return makeInt(g);
  });
  define(n, "isqrt", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}});
    int64_t v = el.toInt(a[0], a.range(0), "isqrt argument");
    if (v < 0)
      el.fail(a.range(0), "isqrt() argument must be nonnegative");
    int64_t root = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
    while (root * root > v)
      --root;
    while ((root + 1) * (root + 1) <= v)
      ++root;
    return makeInt(root);
  });
  define(n, "isclose", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}, {"rel_tol", makeFloat(1e-9), true}, {"abs_tol", makeFloat(0.0), true}});
    double x = el.toDouble(a[0], a.range(0), "a"), y = el.toDouble(a[1], a.range(1), "b");
    double tol = std::max(el.toDouble(a[2], a.range(2), "rel_tol") * std::max(std::fabs(x), std::fabs(y)),
                          el.toDouble(a[3], a.range(3), "abs_tol"));
    return makeBool(std::fabs(x - y) <= tol);
  });
  return ns;
}

} // namespace pk::elab
