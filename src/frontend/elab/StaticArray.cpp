//===- StaticArray.cpp - NumPy arrays: elements, promotion, indexing ------===//
//
// The core of the compile-time NumPy engine (StaticArray.h): storage and
// conversion of elements, NumPy's dtype promotion, broadcasting,
// element-wise arithmetic and comparisons, and indexing.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/StaticArray.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Promotion.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <limits>

namespace pk::elab::static_array {

using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

namespace {

/// Integer `v` wrapped to `t`'s width (sign- or zero-extended back).
int64_t wrapInt(int64_t v, DType t) {
  if (t == DType::Bool)
    return v != 0;
  unsigned bits = bitWidth(t);
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1, u = uint64_t(v) & mask;
  if (isSignedInteger(t) && (u >> (bits - 1)))
    return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

/// `v` rounded to the precision of the float dtype `t`.
double roundFloat(double v, DType t) {
  switch (t) {
  case DType::F64:
    return v;
  case DType::F32:
    return static_cast<double>(static_cast<float>(v));
  case DType::F16:
  case DType::BF16: {
    llvm::APFloat f(v);
    bool lost = false;
    f.convert(t == DType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  default:
    return v;
  }
}

/// A float converted to int64 as C converts (truncation), saturating
/// where C would be undefined; NaN is INT64_MIN, as NumPy gives on x86.
int64_t truncate(double v) {
  if (std::isnan(v) || v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  if (v >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

/// An element or a Python scalar, exactly: integers (signed or unsigned
/// 64-bit) as __int128, floats as double.
struct Num {
  bool isFloat = false;
  __int128 i = 0;
  double f = 0;
  double toDouble() const { return isFloat ? f : static_cast<double>(i); }
  int64_t toBits() const { return isFloat ? truncate(f) : static_cast<int64_t>(i); }
};

Num numAt(const StaticArrayObj &a, int64_t k) {
  Num n;
  if (isFloat(a.dtype)) {
    n.isFloat = true;
    n.f = a.floats[k];
  } else if (a.dtype == DType::U64) {
    n.i = static_cast<__int128>(static_cast<uint64_t>(a.ints[k]));
  } else {
    n.i = a.ints[k];
  }
  return n;
}

std::optional<Num> numOf(const Obj &o) {
  Num n;
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    n.i = i->value;
  else if (auto *b = llvm::dyn_cast<BoolObj>(o.get()))
    n.i = b->value;
  else if (auto *f = llvm::dyn_cast<FloatObj>(o.get())) {
    n.isFloat = true;
    n.f = f->value;
  } else
    return std::nullopt;
  return n;
}

void storeNum(StaticArrayObj &a, int64_t k, const Num &n) {
  if (n.isFloat)
    storeDouble(a, k, n.f);
  else if (n.i > std::numeric_limits<int64_t>::max())
    storeInt(a, k, static_cast<int64_t>(static_cast<uint64_t>(n.i)), true);
  else
    storeInt(a, k, static_cast<int64_t>(n.i));
}

bool isNumber(const Obj &o) { return llvm::isa<IntObj, FloatObj, BoolObj>(o.get()); }
/// A Python number, which NEP 50 makes weak (not a NumPy scalar).
bool isPythonScalar(const Obj &o) { return isNumber(o) && !numpyScalarType(*o); }

int floatRank(DType t) { return t == DType::F64 ? 3 : t == DType::F32 ? 2 : 1; }

/// For each element of `to`, the flat index of the element of `from` that
/// broadcasting puts there.
std::vector<int64_t> broadcastMap(const std::vector<int64_t> &from,
                                  const std::vector<int64_t> &to) {
  int64_t n = 1;
  for (int64_t d : to)
    n *= d;
  std::vector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < from.size(); ++i) {
    size_t d = from.size() - 1 - i, o = to.size() - 1 - i;
    strides[o] = from[d] == 1 ? 0 : stride;
    stride *= from[d];
  }
  std::vector<int64_t> map(n), coord(to.size(), 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < n; ++k) {
    map[k] = offset;
    for (size_t d = to.size(); d-- > 0;) {
      ++coord[d];
      offset += strides[d];
      if (coord[d] < to[d])
        break;
      offset -= strides[d] * coord[d];
      coord[d] = 0;
    }
  }
  return map;
}

} // namespace

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

int64_t elementCount(Elaborator &el, const std::vector<int64_t> &shape, SourceRange r) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      el.raise(r, "ValueError", "negative dimensions are not allowed");
    if (d && n > std::numeric_limits<int64_t>::max() / d)
      el.raise(r, "ValueError", "array is too big");
    n *= d;
  }
  return n;
}

void requireBudget(Elaborator &el, const std::vector<int64_t> &shape, SourceRange r) {
  int64_t n = elementCount(el, shape, r);
  try {
    checkStaticItems(static_cast<size_t>(n));
  } catch (StaticBudgetExceeded &) {
    el.failStaticBudget(r);
  }
}

StaticArrayPtr make(Elaborator &el, std::vector<int64_t> shape, DType dtype, bool numpy,
                    SourceRange r) {
  requireBudget(el, shape, r);
  int64_t n = elementCount(el, shape, r);
  try {
    countStaticItems(static_cast<size_t>(n));
  } catch (StaticBudgetExceeded &) {
    el.failStaticBudget(r);
  }
  auto a = std::make_shared<StaticArrayObj>(std::move(shape), dtype, numpy);
  if (isFloat(dtype))
    a->floats.assign(n, 0.0);
  else
    a->ints.assign(n, 0);
  return a;
}

double asDouble(const StaticArrayObj &a, int64_t k) { return numAt(a, k).toDouble(); }

int64_t asInt(const StaticArrayObj &a, int64_t k) { return numAt(a, k).toBits(); }

void storeDouble(StaticArrayObj &a, int64_t k, double v) {
  if (isFloat(a.dtype))
    a.floats[k] = roundFloat(v, a.dtype);
  else if (a.dtype == DType::Bool)
    a.ints[k] = v != 0.0;
  else if (a.dtype == DType::I32 && !(v > -2147483649.0 && v < 2147483648.0))
    a.ints[k] = std::numeric_limits<int32_t>::min(); // x86's answer, which NumPy gives
  else
    a.ints[k] = wrapInt(truncate(v), a.dtype);
}

void storeInt(StaticArrayObj &a, int64_t k, int64_t v, bool fromUnsigned) {
  if (isFloat(a.dtype))
    a.floats[k] = roundFloat(fromUnsigned ? static_cast<double>(static_cast<uint64_t>(v))
                                          : static_cast<double>(v),
                             a.dtype);
  else
    a.ints[k] = wrapInt(v, a.dtype);
}

void copyElement(const StaticArrayObj &src, int64_t from, StaticArrayObj &dst, int64_t to) {
  if (isFloat(src.dtype))
    storeDouble(dst, to, src.floats[from]);
  else
    storeInt(dst, to, src.ints[from], src.dtype == DType::U64);
}

Obj pythonElement(const StaticArrayObj &a, int64_t k) {
  if (isFloat(a.dtype))
    return makeFloat(a.floats[k]);
  if (a.dtype == DType::Bool)
    return makeBool(a.ints[k] != 0);
  return makeInt(a.ints[k]);
}

Obj elementObj(const StaticArrayObj &a, int64_t k) {
  // jax.Array elements stay numbers: pkc does not track which are weak.
  if (!a.numpy || a.dtype == DType::Bool)
    return pythonElement(a, k);
  if (isFloat(a.dtype))
    return std::make_shared<FloatObj>(a.floats[k], a.dtype);
  return std::make_shared<IntObj>(a.ints[k], a.dtype);
}

Obj pythonNumber(const Obj &number) {
  if (auto *i = llvm::dyn_cast<IntObj>(number.get()); i && i->numpyType)
    return makeInt(i->value);
  if (auto *f = llvm::dyn_cast<FloatObj>(number.get()); f && f->numpyType)
    return makeFloat(f->value);
  return number;
}

Obj numpyScalar(Elaborator &el, DType dtype, const Obj &number, SourceRange r,
                const std::string &what) {
  StaticArrayPtr a = make(el, {}, dtype, true, r);
  if (auto *f = llvm::dyn_cast<FloatObj>(number.get()))
    isFloat(dtype) ? storeDouble(*a, 0, f->value) : storeInt(*a, 0, el.floatToInt(f->value, r));
  else
    isFloat(dtype) ? storeDouble(*a, 0, el.toDouble(number, r, what))
                   : storeInt(*a, 0, el.toInt(number, r, what));
  return elementObj(*a, 0);
}

Obj result(const StaticArrayPtr &a) { return a->shape.empty() ? elementObj(*a, 0) : Obj(a); }

DType defaultInt(bool numpy) { return numpy ? DType::I64 : DType::I32; }
DType defaultFloat(bool numpy) { return numpy ? DType::F64 : DType::F32; }

DType toDType(Elaborator &el, const Obj &o, SourceRange r, bool numpy) {
  if (auto *builtin = llvm::dyn_cast<BuiltinObj>(o.get())) {
    if (builtin->name == "int")
      return defaultInt(numpy);
    if (builtin->name == "float")
      return defaultFloat(numpy);
  }
  return el.toDType(o, r, "dtype");
}

//===----------------------------------------------------------------------===//
// Making arrays from data
//===----------------------------------------------------------------------===//

bool isStaticData(const Obj &o) {
  if (isNumber(o) || llvm::isa<StaticArrayObj>(o.get()))
    return true;
  auto *seq = llvm::dyn_cast<SequenceObj>(o.get());
  return seq && !seq->namedTuple && llvm::all_of(seq->items, isStaticData);
}

namespace {

/// The shape of nested data and the dtype NumPy infers for it; false when
/// the rows are ragged.
bool inferShape(const Obj &o, size_t depth, std::vector<int64_t> &shape,
                std::optional<DType> &dtype, bool numpy) {
  auto merge = [&](DType t) { dtype = dtype ? promote(*dtype, t) : t; };
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get())) {
    for (size_t d = 0; d < a->shape.size(); ++d) {
      if (depth + d == shape.size())
        shape.push_back(a->shape[d]);
      else if (shape[depth + d] != a->shape[d])
        return false;
    }
    if (depth + a->shape.size() != shape.size())
      return false;
    merge(a->dtype);
    return true;
  }
  if (isNumber(o)) {
    if (depth != shape.size())
      return false;
    std::optional<DType> scalar = numpyScalarType(*o);
    merge(scalar                        ? *scalar
          : llvm::isa<BoolObj>(o.get()) ? DType::Bool
          : llvm::isa<IntObj>(o.get())  ? defaultInt(numpy)
                                        : defaultFloat(numpy));
    return true;
  }
  const auto &items = llvm::cast<SequenceObj>(*o).items;
  int64_t n = static_cast<int64_t>(items.size());
  if (depth == shape.size())
    shape.push_back(n);
  else if (depth > shape.size() || shape[depth] != n)
    return false;
  for (const Obj &item : items)
    if (!inferShape(item, depth + 1, shape, dtype, numpy))
      return false;
  return true;
}

void fill(const Obj &o, StaticArrayObj &out, int64_t &k) {
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get())) {
    for (int64_t i = 0; i < a->size(); ++i)
      copyElement(*a, i, out, k++);
    return;
  }
  if (std::optional<Num> n = numOf(o)) {
    storeNum(out, k++, *n);
    return;
  }
  for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
    fill(item, out, k);
}

} // namespace

StaticArrayPtr fromData(Elaborator &el, const Obj &o, std::optional<DType> dtype, bool numpy,
                        SourceRange r) {
  if (!isStaticData(o))
    return nullptr;
  std::vector<int64_t> shape;
  std::optional<DType> inferred;
  if (!inferShape(o, 0, shape, inferred, numpy))
    el.raise(r, "ValueError",
             "setting an array element with a sequence: the requested array has an "
             "inhomogeneous shape");
  DType t = dtype ? *dtype : inferred ? *inferred : defaultFloat(numpy); // np.array([]) is f64
  if (!numpy && !dtype) // JAX without x64: 64-bit data becomes 32-bit
    t = t == DType::I64   ? DType::I32
        : t == DType::U64 ? DType::U32
        : t == DType::F64 ? DType::F32
                          : t;
  StaticArrayPtr out = make(el, shape, t, numpy, r);
  int64_t k = 0;
  fill(o, *out, k);
  return out;
}

StaticArrayPtr toStatic(Elaborator &el, const Obj &o, SourceRange r, const char *what, bool numpy) {
  if (auto a = std::dynamic_pointer_cast<StaticArrayObj>(o))
    return a;
  if (StaticArrayPtr a = fromData(el, o, std::nullopt, numpy, r))
    return a;
  el.checkNotOpaque(o, r);
  el.fail(r, std::string(what) + " must be an array known at compile time (NumPy data), got " +
                 typeName(*o));
}

StaticArrayPtr astype(Elaborator &el, const StaticArrayObj &a, DType dtype, SourceRange r) {
  StaticArrayPtr out = make(el, a.shape, dtype, a.numpy, r);
  for (int64_t k = 0; k < a.size(); ++k)
    copyElement(a, k, *out, k);
  return out;
}

//===----------------------------------------------------------------------===//
// Promotion and broadcasting
//===----------------------------------------------------------------------===//

DType promote(DType a, DType b) {
  if (a == b || b == DType::Bool)
    return a;
  if (a == DType::Bool)
    return b;
  if (isFloat(a) && isFloat(b)) {
    if (floatRank(a) == floatRank(b)) // float16 with bfloat16
      return DType::F32;
    return floatRank(a) > floatRank(b) ? a : b;
  }
  if (isFloat(a) || isFloat(b)) {
    DType f = isFloat(a) ? a : b, i = isFloat(a) ? b : a;
    // The float that holds every value of the integer type.
    unsigned bits = bitWidth(i);
    DType needed = bits == 8 ? DType::F16 : bits == 16 ? DType::F32 : DType::F64;
    if (floatRank(f) >= floatRank(needed))
      return f;
    return needed == DType::F16 ? f : needed;
  }
  if (isUnsigned(a) == isUnsigned(b))
    return bitWidth(a) >= bitWidth(b) ? a : b;
  DType s = isUnsigned(a) ? b : a, u = isUnsigned(a) ? a : b;
  if (bitWidth(s) > bitWidth(u))
    return s;
  switch (bitWidth(u)) {
  case 8:
    return DType::I16;
  case 16:
    return DType::I32;
  case 32:
    return DType::I64;
  default:
    return DType::F64;
  }
}

DType promoteWithScalar(DType array, const Obj &scalar, bool numpy) {
  if (llvm::isa<BoolObj>(scalar.get()))
    return array;
  if (llvm::isa<IntObj>(scalar.get()))
    return array == DType::Bool ? defaultInt(numpy) : array;
  return isFloat(array) ? array : defaultFloat(numpy);
}

std::vector<int64_t> broadcastShapes(Elaborator &el, const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b, SourceRange r) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      auto text = [](const std::vector<int64_t> &s) {
        std::string t = "(";
        for (size_t d = 0; d < s.size(); ++d)
          t += (d ? ", " : "") + std::to_string(s[d]);
        return t + (s.size() == 1 ? ",)" : ")");
      };
      el.raise(r, "ValueError",
               "operands could not be broadcast together with shapes " + text(a) + " " + text(b));
    }
    out[n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

StaticArrayPtr broadcastTo(Elaborator &el, const StaticArrayObj &a,
                           const std::vector<int64_t> &shape, SourceRange r) {
  bool compatible = a.shape.size() <= shape.size();
  for (size_t i = 0; compatible && i < a.shape.size(); ++i) {
    int64_t from = a.shape[a.shape.size() - 1 - i], to = shape[shape.size() - 1 - i];
    compatible = from == to || from == 1;
  }
  if (!compatible)
    el.raise(r, "ValueError",
             "cannot broadcast an array of shape " + repr(*makeTuple([&] {
               std::vector<Obj> d;
               for (int64_t s : a.shape)
                 d.push_back(makeInt(s));
               return d;
             }())) +
                 " to the requested shape");
  StaticArrayPtr out = make(el, shape, a.dtype, a.numpy, r);
  std::vector<int64_t> map = broadcastMap(a.shape, shape);
  for (int64_t k = 0; k < out->size(); ++k)
    copyElement(a, map[k], *out, k);
  return out;
}

//===----------------------------------------------------------------------===//
// Element-wise operations
//===----------------------------------------------------------------------===//

namespace {

/// The two operands of an element-wise operation as arrays, with the
/// dtype NumPy (or JAX, for a jax.Array operand) computes in.
struct Operands {
  StaticArrayPtr lhs, rhs;
  DType common;
  bool numpy;
  std::vector<int64_t> shape;
  std::vector<int64_t> lhsMap, rhsMap;
};

Operands operands(Elaborator &el, const Obj &lhs, const Obj &rhs, SourceRange r,
                  bool comparison = false, bool elementwise = true) {
  auto *la = llvm::dyn_cast<StaticArrayObj>(lhs.get());
  auto *ra = llvm::dyn_cast<StaticArrayObj>(rhs.get());
  Operands o;
  o.numpy = (!la || la->numpy) && (!ra || ra->numpy);
  o.lhs = toStatic(el, lhs, r, "an operand", o.numpy);
  o.rhs = toStatic(el, rhs, r, "an operand", o.numpy);
  if (!o.numpy) {
    // A jax.Array operand: JAX's lattice, Python scalars weak.
    auto jaxType = [](const Obj &x, const StaticArrayObj &a) {
      if (!isPythonScalar(x))
        return JaxType{a.dtype, false};
      if (llvm::isa<IntObj>(x.get()))
        return pythonIntType();
      if (llvm::isa<FloatObj>(x.get()))
        return pythonFloatType();
      return JaxType{a.dtype, false};
    };
    o.common = promoteTypes(jaxType(lhs, *o.lhs), jaxType(rhs, *o.rhs)).dtype;
  } else if (isPythonScalar(lhs) && !isPythonScalar(rhs)) {
    o.common = promoteWithScalar(o.rhs->dtype, lhs, true);
  } else if (isPythonScalar(rhs) && !isPythonScalar(lhs)) {
    o.common = promoteWithScalar(o.lhs->dtype, rhs, true);
  } else {
    o.common = promote(o.lhs->dtype, o.rhs->dtype);
  }
  // NEP 50: a Python int meets an integer array in the array's dtype, and
  // must fit in it.
  for (const Obj &side : {lhs, rhs}) {
    auto *i = llvm::dyn_cast<IntObj>(side.get());
    if (comparison || !o.numpy || !i || i->numpyType || !isInteger(o.common))
      continue; // NumPy compares out-of-range ints exactly
    StaticArrayPtr probe = make(el, {}, o.common, true, r);
    storeInt(*probe, 0, i->value);
    if (probe->ints[0] != i->value || (o.common == DType::U64 && i->value < 0))
      el.raise(r, "OverflowError",
               "Python integer " + std::to_string(i->value) + " out of bounds for " +
                   numpyName(o.common));
  }
  if (!elementwise)
    return o;
  o.shape = broadcastShapes(el, o.lhs->shape, o.rhs->shape, r);
  requireBudget(el, o.shape, r); // before the index maps, as big as the result
  o.lhsMap = broadcastMap(o.lhs->shape, o.shape);
  o.rhsMap = broadcastMap(o.rhs->shape, o.shape);
  return o;
}

/// Python's floor division and modulo on integers; NumPy gives 0 for a
/// zero divisor (with a warning).
int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floorMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

int64_t intPow(Elaborator &el, int64_t base, int64_t exponent, SourceRange r) {
  if (exponent < 0)
    el.raise(r, "ValueError", "Integers to negative integer powers are not allowed.");
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e; e >>= 1) {
    if (e & 1)
      result *= b;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

Num integerOp(Elaborator &el, BinaryOp op, int64_t a, int64_t b, DType t, SourceRange r) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool u = isUnsigned(t);
  Num n;
  switch (op) {
  case BinaryOp::Add:
    n.i = static_cast<int64_t>(ua + ub);
    break;
  case BinaryOp::Sub:
    n.i = static_cast<int64_t>(ua - ub);
    break;
  case BinaryOp::Mul:
    n.i = static_cast<int64_t>(ua * ub);
    break;
  case BinaryOp::FloorDiv:
    n.i = u ? static_cast<int64_t>(ub ? ua / ub : 0) : floorDiv(a, b);
    break;
  case BinaryOp::Mod:
    n.i = u ? static_cast<int64_t>(ub ? ua % ub : 0) : floorMod(a, b);
    break;
  case BinaryOp::Pow:
    n.i = intPow(el, a, u ? static_cast<int64_t>(ub & 0x7fffffffffffffff) : b, r);
    break;
  case BinaryOp::BitAnd:
    n.i = a & b;
    break;
  case BinaryOp::BitOr:
    n.i = a | b;
    break;
  case BinaryOp::BitXor:
    n.i = a ^ b;
    break;
  case BinaryOp::LShift:
    n.i = (ub >= 64 || b < 0) ? 0 : static_cast<int64_t>(ua << ub);
    break;
  case BinaryOp::RShift:
    if (u)
      n.i = ub >= 64 ? 0 : static_cast<int64_t>(ua >> ub);
    else
      n.i = (ub >= 64 || b < 0) ? (a < 0 ? -1 : 0) : (a >> b);
    break;
  default:
    break;
  }
  n.i = wrapInt(static_cast<int64_t>(n.i), t);
  if (t == DType::U64)
    n.i = static_cast<__int128>(static_cast<uint64_t>(static_cast<int64_t>(n.i)));
  return n;
}

double floatOp(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::FloorDiv:
    return std::floor(a / b);
  case BinaryOp::Mod: {
    double m = std::fmod(a, b);
    if (m == 0)
      return std::copysign(0.0, b); // the divisor's sign, as Python's
    return (m < 0) != (b < 0) ? m + b : m;
  }
  case BinaryOp::Pow:
    return std::pow(a, b);
  default:
    return 0;
  }
}

std::string dtypeText(DType t) { return numpyName(t); }

} // namespace

Obj binary(Elaborator &el, BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  Operands o = operands(el, lhs, rhs, r, false, /*elementwise=*/op != BinaryOp::MatMul);
  if (op == BinaryOp::MatMul) {
    const StaticArrayObj &a = *o.lhs, &b = *o.rhs;
    if (a.rank() == 0 || b.rank() == 0 || a.rank() > 2 || b.rank() > 2)
      el.fail(r, "'@' of NumPy arrays at compile time takes 1-d and 2-d operands");
    int64_t m = a.rank() == 2 ? a.shape[0] : 1, k = a.shape.back();
    int64_t kb = b.shape[0], n = b.rank() == 2 ? b.shape[1] : 1;
    if (k != kb)
      el.raise(r, "ValueError",
               "matmul: Input operand 1 has a mismatch in its core dimension 0 (size " +
                   std::to_string(kb) + " is different from " + std::to_string(k) + ")");
    std::vector<int64_t> shape;
    if (a.rank() == 2)
      shape.push_back(m);
    if (b.rank() == 2)
      shape.push_back(n);
    StaticArrayPtr out = make(el, shape, o.common, o.numpy, r);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (isFloat(o.common)) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += asDouble(a, i * k + p) * asDouble(b, p * n + j);
          storeDouble(*out, i * n + j, sum);
        } else {
          uint64_t sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += static_cast<uint64_t>(asInt(a, i * k + p)) *
                   static_cast<uint64_t>(asInt(b, p * n + j));
          storeInt(*out, i * n + j, static_cast<int64_t>(sum));
        }
      }
    return result(out);
  }
  DType t = o.common;
  if (op == BinaryOp::Div && !isFloat(t))
    t = defaultFloat(o.numpy);
  bool bitwise = op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor ||
                 op == BinaryOp::LShift || op == BinaryOp::RShift;
  if (bitwise && isFloat(t))
    el.raise(r, "TypeError",
             std::string("ufunc '") + ast::spelling(op) + "' not supported for the input types (" +
                 dtypeText(t) + ")");
  if (t == DType::Bool) {
    if (op == BinaryOp::Sub)
      el.raise(r, "TypeError",
               "numpy boolean subtract, the `-` operator, is not supported, use "
               "the bitwise_xor, the `^` operator, or the logical_xor function "
               "instead.");
    if (op == BinaryOp::Add)
      op = BinaryOp::BitOr;
    else if (op == BinaryOp::Mul)
      op = BinaryOp::BitAnd;
    else if (!bitwise)
      t = o.numpy ? DType::I8 : defaultInt(false); // True // True is int8 in NumPy
  }
  StaticArrayPtr out = make(el, o.shape, t, o.numpy, r);
  for (int64_t k = 0; k < out->size(); ++k) {
    Num a = numAt(*o.lhs, o.lhsMap[k]), b = numAt(*o.rhs, o.rhsMap[k]);
    if (isFloat(t)) {
      double x = roundFloat(a.toDouble(), t), y = roundFloat(b.toDouble(), t);
      storeDouble(*out, k, floatOp(op, x, y));
    } else {
      Num n = integerOp(el, op, wrapInt(a.toBits(), t), wrapInt(b.toBits(), t), t, r);
      storeNum(*out, k, n);
    }
  }
  return result(out);
}

Obj compare(Elaborator &el, CompareOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  Operands o = operands(el, lhs, rhs, r, /*comparison=*/true);
  StaticArrayPtr out = make(el, o.shape, DType::Bool, o.numpy, r);
  for (int64_t k = 0; k < out->size(); ++k) {
    Num a = numAt(*o.lhs, o.lhsMap[k]), b = numAt(*o.rhs, o.rhsMap[k]);
    int order;
    bool unordered = false;
    if (a.isFloat || b.isFloat) {
      double x = a.toDouble(), y = b.toDouble();
      unordered = std::isnan(x) || std::isnan(y);
      order = x < y ? -1 : x > y ? 1 : 0;
    } else {
      order = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    }
    bool v = false;
    switch (op) {
    case CompareOp::Lt:
      v = !unordered && order < 0;
      break;
    case CompareOp::Gt:
      v = !unordered && order > 0;
      break;
    case CompareOp::Le:
      v = !unordered && order <= 0;
      break;
    case CompareOp::Ge:
      v = !unordered && order >= 0;
      break;
    case CompareOp::Eq:
      v = !unordered && order == 0;
      break;
    case CompareOp::Ne:
      v = unordered || order != 0;
      break;
    default:
      break;
    }
    out->ints[k] = v;
  }
  return result(out);
}

Obj unary(Elaborator &el, UnaryOp op, const StaticArrayObj &a, SourceRange r) {
  if (op == UnaryOp::Not)
    return makeBool(!truthy(el, a, r));
  if (op == UnaryOp::Negate && a.dtype == DType::Bool)
    el.raise(r, "TypeError",
             "The numpy boolean negative, the `-` operator, is not supported, "
             "use the `~` operator or the logical_not function instead.");
  if (op == UnaryOp::Invert && isFloat(a.dtype))
    el.raise(r, "TypeError",
             "ufunc 'invert' not supported for the input types (" + dtypeText(a.dtype) + ")");
  StaticArrayPtr out = make(el, a.shape, a.dtype, a.numpy, r);
  for (int64_t k = 0; k < a.size(); ++k) {
    if (isFloat(a.dtype))
      out->floats[k] = op == UnaryOp::Negate ? -a.floats[k] : a.floats[k];
    else if (op == UnaryOp::Negate)
      out->ints[k] = wrapInt(static_cast<int64_t>(0 - static_cast<uint64_t>(a.ints[k])), a.dtype);
    else if (op == UnaryOp::Invert)
      out->ints[k] = a.dtype == DType::Bool ? !a.ints[k] : wrapInt(~a.ints[k], a.dtype);
    else
      out->ints[k] = a.ints[k];
  }
  return result(out);
}

Obj extremum(Elaborator &el, bool maximum, const Obj &lhs, const Obj &rhs, SourceRange r) {
  Operands o = operands(el, lhs, rhs, r);
  StaticArrayPtr out = make(el, o.shape, o.common, o.numpy, r);
  for (int64_t k = 0; k < out->size(); ++k) {
    Num a = numAt(*o.lhs, o.lhsMap[k]), b = numAt(*o.rhs, o.rhsMap[k]);
    if (isFloat(o.common)) {
      double x = a.toDouble(), y = b.toDouble();
      storeDouble(*out, k,
                  std::isnan(x) || std::isnan(y) ? NAN
                  : maximum                      ? std::max(x, y)
                                                 : std::min(x, y));
    } else {
      bool first = maximum ? a.i >= b.i : a.i <= b.i;
      storeNum(*out, k, first ? a : b);
    }
  }
  return result(out);
}

Obj logical(Elaborator &el, BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  Operands o = operands(el, lhs, rhs, r);
  StaticArrayPtr out = make(el, o.shape, DType::Bool, o.numpy, r);
  for (int64_t k = 0; k < out->size(); ++k) {
    bool a = numAt(*o.lhs, o.lhsMap[k]).toDouble() != 0,
         b = numAt(*o.rhs, o.rhsMap[k]).toDouble() != 0;
    out->ints[k] = op == BinaryOp::BitAnd ? (a && b) : op == BinaryOp::BitOr ? (a || b) : (a != b);
  }
  return result(out);
}

Obj mapFloat(Elaborator &el, const Obj &x, double (*fn)(double), SourceRange r, bool numpy) {
  StaticArrayPtr a = toStatic(el, x, r, "the operand", numpy);
  DType t = isFloat(a->dtype) ? a->dtype : defaultFloat(a->numpy);
  StaticArrayPtr out = make(el, a->shape, t, a->numpy, r);
  for (int64_t k = 0; k < a->size(); ++k)
    storeDouble(*out, k, fn(asDouble(*a, k)));
  return result(out);
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

namespace {

/// What an index selects: the result's shape and, for each of its
/// elements, the flat offset of the element of the indexed array.
struct Selection {
  std::vector<int64_t> shape;
  std::vector<int64_t> offsets;
};

struct IndexEntry {
  enum Kind { NewAxis, Slice, Int, Advanced } kind;
  int64_t dim = -1;                       ///< the indexed array's axis (not NewAxis)
  int64_t start = 0, count = 1, step = 1; ///< Slice; Int's index in `start`
  StaticArrayPtr indices;                 ///< Advanced: integer positions
};

int64_t sliceBound(Elaborator &el, const Obj &o, SourceRange r) {
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get());
      a && a->shape.empty() && !isFloat(a->dtype))
    return a->ints[0];
  return el.toInt(o, r, "a slice index");
}

/// Python's slice.indices: start, element count and step along `length`.
void sliceIndices(Elaborator &el, const SliceObj &s, int64_t length, SourceRange r, IndexEntry &e) {
  int64_t step = isNone(s.step) ? 1 : sliceBound(el, s.step, r);
  if (step == 0)
    el.raise(r, "ValueError", "slice step cannot be zero");
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? length - 1 : length;
  auto clamp = [&](const Obj &o, int64_t dflt) {
    if (isNone(o))
      return dflt;
    int64_t v = sliceBound(el, o, r);
    if (v < 0)
      v = std::max(v + length, lower);
    else
      v = std::min(v, upper);
    return v;
  };
  int64_t start = clamp(s.start, step < 0 ? upper : lower);
  int64_t stop = clamp(s.stop, step < 0 ? lower : upper);
  // In 128 bits: a step near 2**63 must not overflow.
  __int128 span =
      step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  int64_t count = span > 0 ? static_cast<int64_t>((span + stride - 1) / stride) : 0;
  e.start = start;
  e.count = count;
  e.step = step;
}

int64_t checkedIndex(Elaborator &el, int64_t i, int64_t dim, int64_t length, SourceRange r) {
  if (i < -length || i >= length)
    el.raise(r, "IndexError",
             "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(dim) +
                 " with size " + std::to_string(length));
  return i < 0 ? i + length : i;
}

Selection select(Elaborator &el, const StaticArrayObj &a, const Obj &index, SourceRange r) {
  std::vector<Obj> items;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    items = t->items;
  else
    items = {index};
  // Classify; integer data (lists, arrays) is an advanced index and boolean
  // data a mask over as many axes as it has.
  struct Item {
    Obj value;
    StaticArrayPtr array;
  };
  std::vector<Item> classified;
  int64_t consumed = 0;
  bool ellipsis = false;
  for (const Obj &item : items) {
    Item c{item, nullptr};
    if (llvm::isa<NoneObj>(item.get())) {
    } else if (llvm::isa<EllipsisObj>(item.get())) {
      if (ellipsis)
        el.raise(r, "IndexError", "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (llvm::isa<SliceObj>(item.get()) || llvm::isa<IntObj>(item.get())) {
      ++consumed;
    } else if (llvm::isa<BoolObj>(item.get())) {
      el.fail(r, "a boolean scalar index (True/False as an index) is not supported at compile "
                 "time");
    } else if (isStaticData(item)) {
      c.array = toStatic(el, item, r, "an index");
      if (isFloat(c.array->dtype))
        el.raise(r, "IndexError", "arrays used as indices must be of integer (or boolean) type");
      if (c.array->shape.empty() && c.array->dtype != DType::Bool) {
        c.value = makeInt(c.array->ints[0]);
        c.array = nullptr;
        ++consumed;
      } else {
        consumed += c.array->dtype == DType::Bool ? c.array->rank() : 1;
      }
    } else {
      el.checkNotOpaque(item, r);
      el.fail(r, "indices of a NumPy array must be known at compile time (ints, slices, None, "
                 "..., integer or boolean arrays), got " +
                     typeName(*item));
    }
    classified.push_back(c);
  }
  if (consumed > a.rank())
    el.raise(r, "IndexError",
             "too many indices for array: array is " + std::to_string(a.rank()) +
                 "-dimensional, but " + std::to_string(consumed) + " were indexed");
  std::vector<IndexEntry> entries;
  int64_t dim = 0;
  auto fullSlice = [&](int64_t d) {
    IndexEntry e{IndexEntry::Slice, d, 0, a.shape[d], 1, nullptr};
    entries.push_back(e);
  };
  for (const Item &c : classified) {
    const Obj &item = c.value;
    if (llvm::isa<NoneObj>(item.get())) {
      entries.push_back({IndexEntry::NewAxis});
    } else if (llvm::isa<EllipsisObj>(item.get())) {
      for (int64_t n = a.rank() - consumed; n > 0; --n)
        fullSlice(dim++);
    } else if (auto *s = llvm::dyn_cast<SliceObj>(item.get())) {
      IndexEntry e{IndexEntry::Slice, dim};
      sliceIndices(el, *s, a.shape[dim], r, e);
      entries.push_back(e);
      ++dim;
    } else if (auto *i = llvm::dyn_cast<IntObj>(item.get())) {
      IndexEntry e{IndexEntry::Int, dim};
      e.start = checkedIndex(el, i->value, dim, a.shape[dim], r);
      entries.push_back(e);
      ++dim;
    } else if (c.array->dtype == DType::Bool) {
      const StaticArrayObj &mask = *c.array;
      for (int64_t d = 0; d < mask.rank(); ++d)
        if (mask.shape[d] != a.shape[dim + d])
          el.raise(
              r, "IndexError",
              "boolean index did not match indexed array along axis " + std::to_string(dim + d) +
                  "; size of axis is " + std::to_string(a.shape[dim + d]) +
                  " but size of corresponding boolean axis is " + std::to_string(mask.shape[d]));
      if (mask.rank() > 0) // the mask's true positions, one index array per axis
        for (const StaticArrayPtr &coord : nonzero(el, mask, r))
          entries.push_back({IndexEntry::Advanced, dim++, 0, 1, 1, coord});
    } else {
      entries.push_back({IndexEntry::Advanced, dim++, 0, 1, 1, c.array});
    }
  }
  while (dim < a.rank())
    fullSlice(dim++);

  // Advanced indexing: integers join the arrays; all broadcast together,
  // and their result axes go where the first one is when they are
  // adjacent, else first.
  bool advanced =
      llvm::any_of(entries, [](const IndexEntry &e) { return e.kind == IndexEntry::Advanced; });
  std::vector<int64_t> broadcast;
  int64_t firstAdvanced = -1, lastAdvanced = -1;
  if (advanced) {
    for (size_t i = 0; i < entries.size(); ++i) {
      IndexEntry &e = entries[i];
      if (e.kind == IndexEntry::Int) {
        e.kind = IndexEntry::Advanced;
        e.indices = make(el, {}, DType::I64, true, r);
        e.indices->ints[0] = e.start;
      }
      if (e.kind != IndexEntry::Advanced)
        continue;
      broadcast = broadcastShapes(el, broadcast, e.indices->shape, r);
      if (firstAdvanced < 0)
        firstAdvanced = static_cast<int64_t>(i);
      lastAdvanced = static_cast<int64_t>(i);
    }
  }
  bool adjacent = true;
  for (int64_t i = firstAdvanced; advanced && i <= lastAdvanced; ++i)
    adjacent &= entries[i].kind == IndexEntry::Advanced;

  // The result's axes: (entry, -1) for a slice or new axis, (-1, j) for
  // axis j of the broadcast advanced indices.
  std::vector<std::pair<int64_t, int64_t>> axes;
  Selection s;
  auto addBroadcast = [&] {
    for (size_t j = 0; j < broadcast.size(); ++j) {
      axes.push_back({-1, static_cast<int64_t>(j)});
      s.shape.push_back(broadcast[j]);
    }
  };
  if (advanced && !adjacent)
    addBroadcast();
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry &e = entries[i];
    if (e.kind == IndexEntry::Slice || e.kind == IndexEntry::NewAxis) {
      axes.push_back({static_cast<int64_t>(i), -1});
      s.shape.push_back(e.kind == IndexEntry::Slice ? e.count : 1);
    } else if (advanced && adjacent && static_cast<int64_t>(i) == firstAdvanced) {
      addBroadcast();
    }
  }
  std::vector<int64_t> strides(a.rank(), 1);
  for (int64_t d = a.rank() - 1; d > 0; --d)
    strides[d - 1] = strides[d] * a.shape[d];
  std::vector<std::vector<int64_t>> advancedMaps(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].kind == IndexEntry::Advanced)
      advancedMaps[i] = broadcastMap(entries[i].indices->shape, broadcast);

  requireBudget(el, s.shape, r);
  int64_t n = elementCount(el, s.shape, r);
  s.offsets.resize(n);
  std::vector<int64_t> coord(s.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flatBroadcast = 0;
    for (size_t j = 0; j < axes.size(); ++j)
      if (axes[j].first < 0)
        flatBroadcast = flatBroadcast * broadcast[axes[j].second] + coord[j];
    int64_t offset = 0;
    for (size_t j = 0; j < axes.size(); ++j) {
      if (axes[j].first < 0)
        continue;
      const IndexEntry &e = entries[axes[j].first];
      if (e.kind == IndexEntry::Slice)
        offset += (e.start + coord[j] * e.step) * strides[e.dim];
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      const IndexEntry &e = entries[i];
      if (e.kind == IndexEntry::Int)
        offset += e.start * strides[e.dim];
      else if (e.kind == IndexEntry::Advanced) {
        int64_t v = asInt(*e.indices, advancedMaps[i][flatBroadcast]);
        offset += checkedIndex(el, v, e.dim, a.shape[e.dim], r) * strides[e.dim];
      }
    }
    s.offsets[k] = offset;
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < s.shape[d])
        break;
      coord[d] = 0;
    }
  }
  return s;
}

} // namespace

Obj getItem(Elaborator &el, const StaticArrayObj &a, const Obj &index, SourceRange r) {
  Selection s = select(el, a, index, r);
  StaticArrayPtr out = make(el, s.shape, a.dtype, a.numpy, r);
  for (size_t k = 0; k < s.offsets.size(); ++k)
    copyElement(a, s.offsets[k], *out, static_cast<int64_t>(k));
  return result(out);
}

void setItem(Elaborator &el, StaticArrayObj &a, const Obj &index, const Obj &value, SourceRange r) {
  Selection s = select(el, a, index, r);
  StaticArrayPtr v = toStatic(el, value, r, "the assigned value", a.numpy);
  // NumPy drops leading axes of one from the value to fit.
  std::vector<int64_t> valueShape = v->shape;
  while (valueShape.size() > s.shape.size() && valueShape.front() == 1)
    valueShape.erase(valueShape.begin());
  if (valueShape != v->shape) {
    auto reshaped = std::make_shared<StaticArrayObj>(*v);
    reshaped->shape = valueShape;
    v = reshaped;
  }
  bool fits = v->shape.size() <= s.shape.size();
  for (size_t i = 0; fits && i < v->shape.size(); ++i) {
    int64_t from = v->shape[v->shape.size() - 1 - i], to = s.shape[s.shape.size() - 1 - i];
    fits = from == to || from == 1;
  }
  if (!fits)
    el.raise(r, "ValueError",
             "could not broadcast input array of shape " + std::to_string(v->rank()) +
                 "-d into the indexed shape");
  std::vector<int64_t> map = broadcastMap(v->shape, s.shape);
  for (size_t k = 0; k < s.offsets.size(); ++k)
    copyElement(*v, map[k], a, s.offsets[k]);
}

void assignInPlace(Elaborator &el, StaticArrayObj &target, const Obj &result, SourceRange r) {
  StaticArrayPtr value = toStatic(el, result, r, "the result", target.numpy);
  auto kindRank = [](DType t) {
    return t == DType::Bool ? 0 : isUnsigned(t) ? 1 : isInteger(t) ? 2 : 3;
  };
  bool scalar = !llvm::isa<StaticArrayObj>(result.get());
  if (!scalar && kindRank(value->dtype) > kindRank(target.dtype))
    el.raise(r, "TypeError",
             std::string("Cannot cast ufunc output from dtype('") + numpyName(value->dtype) +
                 "') to dtype('" + numpyName(target.dtype) + "') with casting rule 'same_kind'");
  if (broadcastShapes(el, value->shape, target.shape, r) != target.shape)
    el.raise(r, "ValueError", "non-broadcastable output operand");
  std::vector<int64_t> map = broadcastMap(value->shape, target.shape);
  for (int64_t k = 0; k < target.size(); ++k)
    copyElement(*value, map[k], target, k);
}

//===----------------------------------------------------------------------===//
// Python protocols
//===----------------------------------------------------------------------===//

bool truthy(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  if (a.size() == 1)
    return asDouble(a, 0) != 0.0 || (isFloat(a.dtype) && std::isnan(a.floats[0]));
  if (a.size() == 0)
    el.raise(r, "ValueError",
             "The truth value of an empty array is ambiguous. Use "
             "`array.size > 0` to check that an array is not empty.");
  el.raise(r, "ValueError",
           "The truth value of an array with more than one element is "
           "ambiguous. Use a.any() or a.all()");
}

std::vector<Obj> rows(Elaborator &el, const StaticArrayObj &a, SourceRange r) {
  if (a.shape.empty())
    el.raise(r, "TypeError", "iteration over a 0-d array");
  std::vector<Obj> out;
  for (int64_t i = 0; i < a.shape[0]; ++i) {
    el.spendFuel(r);
    out.push_back(a.rank() == 1 ? elementObj(a, i) : getItem(el, a, makeInt(i), r));
  }
  return out;
}

namespace {

Obj nested(const StaticArrayObj &a, size_t dim, int64_t &k) {
  if (dim == a.shape.size())
    return pythonElement(a, k++);
  std::vector<Obj> items;
  for (int64_t i = 0; i < a.shape[dim]; ++i)
    items.push_back(nested(a, dim + 1, k));
  return makeList(std::move(items));
}

std::string nestedText(const StaticArrayObj &a, size_t dim, int64_t &k) {
  if (dim == a.shape.size()) {
    Obj e = pythonElement(a, k++);
    return elab::repr(*e);
  }
  std::string t = "[";
  for (int64_t i = 0; i < a.shape[dim]; ++i)
    t += (i ? ", " : "") + nestedText(a, dim + 1, k);
  return t + "]";
}

} // namespace

Obj toList(const StaticArrayObj &a) {
  int64_t k = 0;
  return nested(a, 0, k);
}

std::string repr(const StaticArrayObj &a) {
  int64_t k = 0;
  std::string body;
  if (a.size() > 1000) { // NumPy summarizes too
    body = "<" + std::to_string(a.size()) + " elements>, shape=(";
    for (size_t d = 0; d < a.shape.size(); ++d)
      body += (d ? ", " : "") + std::to_string(a.shape[d]);
    body += a.shape.size() == 1 ? ",)" : ")";
  } else {
    body = nestedText(a, 0, k);
  }
  bool implied =
      a.numpy && (a.dtype == DType::I64 || a.dtype == DType::F64 || a.dtype == DType::Bool);
  return (a.numpy ? "array(" : "Array(") + body +
         (implied ? std::string(")") : ", dtype=" + std::string(numpyName(a.dtype)) + ")");
}

bool equalContents(const StaticArrayObj &a, const StaticArrayObj &b, bool equalNan) {
  if (a.shape != b.shape)
    return false;
  for (int64_t k = 0; k < a.size(); ++k) {
    Num x = numAt(a, k), y = numAt(b, k);
    if (x.isFloat || y.isFloat) {
      double u = x.toDouble(), v = y.toDouble();
      if (std::isnan(u) || std::isnan(v)) {
        if (!(equalNan && std::isnan(u) && std::isnan(v)))
          return false;
      } else if (u != v) {
        return false;
      }
    } else if (x.i != y.i) {
      return false;
    }
  }
  return true;
}

} // namespace pk::elab::static_array
