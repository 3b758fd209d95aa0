//===- Operators.cpp - Python operators on elaborator objects -------------===//
#include "frontend/elab/Operators.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Sets.h"
#include "frontend/elab/StaticArray.h"

#include <cmath>
#include <limits>

namespace pk::elab {

using ast::BinaryOp;
using ast::CompareOp;
using ast::UnaryOp;

namespace {

bool isInt(const Obj &o) { return llvm::isa<IntObj, BoolObj>(o.get()); }

int64_t intValue(const Obj &o) {
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    return i->value;
  return llvm::cast<BoolObj>(o.get())->value ? 1 : 0;
}

double floatValue(const Obj &o) {
  if (auto *f = llvm::dyn_cast<FloatObj>(o.get()))
    return f->value;
  return static_cast<double>(intValue(o));
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0)))
    m += b;
  return m;
}

/// `[0] * n` and `"-" * n` build their result at compile time: refuse sizes
/// that would exhaust memory instead of hanging.
void checkRepetitionSize(Elaborator &el, size_t size, int64_t count, const char *what,
                         SourceRange r) {
  constexpr uint64_t kLimit = uint64_t(1) << 24;
  if (count <= 0 || size == 0)
    return;
  uint64_t total = 0;
  bool overflowed =
      __builtin_mul_overflow(static_cast<uint64_t>(size), static_cast<uint64_t>(count), &total);
  if (overflowed || total > kLimit)
    el.fail(r, "this repetition would build " +
                   (overflowed ? "more than 2**64" : std::to_string(total)) + " " + what +
                   " at compile time; the limit is " + std::to_string(kLimit));
}

Obj staticIntOp(Elaborator &el, BinaryOp op, int64_t a, int64_t b, SourceRange r) {
  int64_t result = 0;
  auto overflow = [&]() -> Obj {
    el.fail(r, "integer overflow in a compile-time computation");
  };
  switch (op) {
  case BinaryOp::Add:
    if (__builtin_add_overflow(a, b, &result))
      overflow();
    return makeInt(result);
  case BinaryOp::Sub:
    if (__builtin_sub_overflow(a, b, &result))
      overflow();
    return makeInt(result);
  case BinaryOp::Mul:
    if (__builtin_mul_overflow(a, b, &result))
      overflow();
    return makeInt(result);
  case BinaryOp::Div:
    if (b == 0)
      el.fail(r, "division by zero");
    return makeFloat(static_cast<double>(a) / static_cast<double>(b));
  case BinaryOp::FloorDiv:
    if (b == 0)
      el.fail(r, "integer division by zero");
    if (a == INT64_MIN && b == -1) // the one quotient that does not fit (and traps)
      overflow();
    return makeInt(floorDiv(a, b));
  case BinaryOp::Mod:
    if (b == 0)
      el.fail(r, "integer modulo by zero");
    if (b == -1) // INT64_MIN % -1 traps in C++; the answer is 0 for every a
      return makeInt(0);
    return makeInt(floorMod(a, b));
  case BinaryOp::Pow: {
    if (b < 0 && a == 0)
      el.fail(r, "0 cannot be raised to a negative power");
    if (b < 0)
      return makeFloat(std::pow(static_cast<double>(a), static_cast<double>(b)));
    // Square and multiply: `1 ** 10**18` must not take 10**18 steps.
    int64_t value = 1, base = a;
    for (int64_t e = b; e > 0; e >>= 1) {
      if ((e & 1) && __builtin_mul_overflow(value, base, &value))
        overflow();
      if (e > 1 && __builtin_mul_overflow(base, base, &base))
        overflow();
    }
    return makeInt(value);
  }
  case BinaryOp::LShift:
    if (b < 0)
      el.fail(r, "negative shift count");
    if (a == 0)
      return makeInt(0);
    // In range exactly when a is within the int64 range shifted right by
    // b (tested before shifting: an overflowing shift is undefined).
    if (b >= 63 || a > (std::numeric_limits<int64_t>::max() >> b) ||
        a < (std::numeric_limits<int64_t>::min() >> b))
      overflow();
    return makeInt(static_cast<int64_t>(static_cast<uint64_t>(a) << b));
  case BinaryOp::RShift:
    if (b < 0)
      el.fail(r, "negative shift count");
    return makeInt(b >= 63 ? (a < 0 ? -1 : 0) : a >> b);
  case BinaryOp::BitAnd:
    return makeInt(a & b);
  case BinaryOp::BitOr:
    return makeInt(a | b);
  case BinaryOp::BitXor:
    return makeInt(a ^ b);
  case BinaryOp::MatMul:
    el.fail(r, "'@' needs arrays, got ints");
  }
  return makeInt(0);
}

Obj staticFloatOp(Elaborator &el, BinaryOp op, double a, double b, SourceRange r) {
  switch (op) {
  case BinaryOp::Add:
    return makeFloat(a + b);
  case BinaryOp::Sub:
    return makeFloat(a - b);
  case BinaryOp::Mul:
    return makeFloat(a * b);
  case BinaryOp::Div:
    if (b == 0)
      el.fail(r, "float division by zero");
    return makeFloat(a / b);
  case BinaryOp::FloorDiv:
    if (b == 0)
      el.fail(r, "float floor division by zero");
    return makeFloat(std::floor(a / b));
  case BinaryOp::Mod: {
    if (b == 0)
      el.fail(r, "float modulo by zero");
    double m = std::fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0)))
      m += b;
    return makeFloat(m);
  }
  case BinaryOp::Pow:
    if (a == 0 && b < 0)
      el.fail(r, "0.0 cannot be raised to a negative power");
    return makeFloat(std::pow(a, b));
  default:
    el.fail(r, std::string("unsupported operand types for ") + ast::spelling(op) +
                   ": 'float' and 'float'");
  }
}

Obj sequenceOp(Elaborator &el, BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  auto *ls = llvm::dyn_cast<SequenceObj>(lhs.get());
  auto *rs = llvm::dyn_cast<SequenceObj>(rhs.get());
  if (op == BinaryOp::Add && ls && rs) {
    if (ls->isList() != rs->isList())
      el.fail(r, "can only concatenate " + typeName(*lhs) + " (not \"" + typeName(*rhs) +
                     "\") to " + typeName(*lhs));
    checkStaticItems(ls->items.size() + rs->items.size());
    std::vector<Obj> items;
    items.reserve(ls->items.size() + rs->items.size());
    items.insert(items.end(), ls->items.begin(), ls->items.end());
    items.insert(items.end(), rs->items.begin(), rs->items.end());
    return ls->isList() ? makeList(std::move(items)) : makeTuple(std::move(items));
  }
  if (op == BinaryOp::Mul && (ls || rs)) {
    const SequenceObj *seq = ls ? ls : rs;
    const Obj &count = ls ? rhs : lhs;
    if (!llvm::isa<IntObj>(count.get()))
      el.fail(r, "can't multiply a sequence by non-int of type '" + typeName(*count) + "'");
    int64_t times = llvm::cast<IntObj>(*count).value;
    checkRepetitionSize(el, seq->items.size(), times, "items", r);
    // An empty sequence repeats to itself however large the count.
    if (seq->items.empty() || times < 0)
      times = 0;
    size_t total = seq->items.size() * static_cast<size_t>(times); // checked above
    checkStaticItems(total);
    std::vector<Obj> items;
    items.reserve(total);
    for (int64_t i = 0; i < times; ++i)
      items.insert(items.end(), seq->items.begin(), seq->items.end());
    return seq->isList() ? makeList(std::move(items)) : makeTuple(std::move(items));
  }
  auto *lstr = llvm::dyn_cast<StrObj>(lhs.get());
  auto *rstr = llvm::dyn_cast<StrObj>(rhs.get());
  if (op == BinaryOp::Add && lstr && rstr) {
    checkStaticItems((lstr->value.size() + rstr->value.size()) / 16);
    return makeStr(lstr->value + rstr->value);
  }
  if (op == BinaryOp::Mod && lstr)
    return percentFormat(el, lstr->value, rhs, r);
  if (op == BinaryOp::Mul && (lstr || rstr)) {
    const StrObj *s = lstr ? lstr : rstr;
    const Obj &count = lstr ? rhs : lhs;
    if (!llvm::isa<IntObj>(count.get()))
      el.fail(r, "can't multiply a string by non-int");
    int64_t times = llvm::cast<IntObj>(*count).value;
    checkRepetitionSize(el, s->value.size(), times, "characters", r);
    if (s->value.empty() || times < 0)
      times = 0;
    checkStaticItems(s->value.size() * static_cast<size_t>(times) / 16);
    std::string out;
    for (int64_t i = 0; i < times; ++i)
      out += s->value;
    return makeStr(out);
  }
  return nullptr;
}

mlir::AffineExpr affineOf(Elaborator &el, const Obj &o) {
  if (auto *s = llvm::dyn_cast<SymIntObj>(o.get()))
    return s->expr;
  return mlir::getAffineConstantExpr(intValue(o), &el.context());
}

} // namespace

namespace {

/// Whether an operation between `lhs` and `rhs` involves a NumPy array
/// known at compile time: computed statically when both are static data
/// (`static`), or with the array JAX makes of it when the other operand
/// is traced (`traced`).
enum class StaticOperands { None, Static, Traced };

StaticOperands staticOperands(const Obj &lhs, const Obj &rhs) {
  if (!llvm::isa<StaticArrayObj>(lhs.get()) && !llvm::isa<StaticArrayObj>(rhs.get()))
    return StaticOperands::None;
  if (static_array::isStaticData(lhs) && static_array::isStaticData(rhs))
    return StaticOperands::Static;
  auto traced = [](const Obj &o) {
    return llvm::isa<ArrayObj, GlobalArrayObj, SymIntObj>(o.get());
  };
  return traced(lhs) || traced(rhs) ? StaticOperands::Traced : StaticOperands::None;
}

/// The dtype of `lhs op rhs` on static numbers where one is a NumPy
/// scalar, as NEP 50 types it (a Python int takes the scalar's dtype, a
/// Python float makes an integer scalar float64); none for two Python
/// numbers.
std::optional<DType> numpyResultType(BinaryOp op, const Obj &lhs, const Obj &rhs) {
  std::optional<DType> a = numpyScalarType(*lhs), b = numpyScalarType(*rhs);
  if (!a && !b)
    return std::nullopt;
  DType t;
  if (a && b) {
    t = static_array::promote(*a, *b);
  } else {
    DType scalar = a ? *a : *b;
    const Obj &python = a ? rhs : lhs;
    t = llvm::isa<FloatObj>(python.get()) && !isFloat(scalar) ? DType::F64 : scalar;
  }
  if (op == BinaryOp::Div && !isFloat(t))
    t = DType::F64;
  return t;
}

Obj asJaxOperand(Elaborator &el, const Obj &o, SourceRange r) {
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get()))
    return static_numpy::materialize(el, *a, r);
  return o;
}

} // namespace

Obj binaryOperator(Elaborator &el, BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  el.checkNotOpaque(lhs, r);
  el.checkNotOpaque(rhs, r);
  if (llvm::isa<RefObj>(lhs.get()) || llvm::isa<RefObj>(rhs.get()))
    el.fail(r, std::string("unsupported operand for '") + ast::spelling(op) +
                   "': a Ref must be read first, e.g. x_ref[...]");
  switch (staticOperands(lhs, rhs)) {
  case StaticOperands::Static:
    return static_array::binary(el, op, lhs, rhs, r);
  case StaticOperands::Traced:
    return binaryOperator(el, op, asJaxOperand(el, lhs, r), asJaxOperand(el, rhs, r), r);
  case StaticOperands::None:
    break;
  }
  if (llvm::isa<GlobalArrayObj>(lhs.get()) || llvm::isa<GlobalArrayObj>(rhs.get())) {
    if (op == BinaryOp::MatMul) {
      CallArgs operands;
      operands.range = r;
      operands.addPositional(lhs, r);
      operands.addPositional(rhs, r);
      auto matmul = [](Elaborator &el, CallArgs &args) {
        return binaryOperator(el, BinaryOp::MatMul, args.positional[0], args.positional[1],
                              args.range);
      };
      if (std::optional<Obj> product = el.vmapBatchedMatmul(matmul, operands))
        return *product;
    }
    return el.arrayCodeAtExport(std::string("operator ") + ast::spelling(op), r, {lhs, rhs},
                                [&](std::vector<Obj> &v) { return binaryOperator(el, op, v[0], v[1], r); });
  }
  if (llvm::isa<ArrayObj>(lhs.get()) || llvm::isa<ArrayObj>(rhs.get()))
    return el.arrays().binary(op, lhs, rhs, r);

  bool lsym = llvm::isa<SymIntObj>(lhs.get()), rsym = llvm::isa<SymIntObj>(rhs.get());
  if ((lsym || rsym) && (lsym || isInt(lhs)) && (rsym || isInt(rhs))) {
    mlir::AffineExpr a = affineOf(el, lhs), b = affineOf(el, rhs);
    if (op == BinaryOp::FloorDiv || op == BinaryOp::Mod)
      if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(b); c && c.getValue() == 0)
        el.fail(r, "integer division by zero");
    if (std::optional<mlir::AffineExpr> e = el.affineBinary(op, a, b))
      return makeSymbolic(*e);
    if (el.inKernel())
      return el.arrays().binary(op, lhs, rhs, r);
    el.failNotAffine(r, std::string("'") + ast::spelling(op) + "' of symbolic sizes (" +
                            repr(*lhs) + ", " + repr(*rhs) +
                            ") is not supported; sizes may use +, -, *, //, % and pl.cdiv");
  }
  // A symbolic size with a float (`N * 0.5`, `N / 2`): in a kernel it is a
  // weakly typed int32 value, as a Python int would be in JAX.
  if ((lsym || rsym) && el.inKernel() && ArrayOps::isNumeric(lhs) && ArrayOps::isNumeric(rhs))
    return el.arrays().binary(op, lhs, rhs, r);
  if (ArrayOps::isStaticNumber(lhs) && ArrayOps::isStaticNumber(rhs)) {
    bool bothBool = llvm::isa<BoolObj>(lhs.get()) && llvm::isa<BoolObj>(rhs.get());
    if (bothBool && (op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor))
      return makeBool(intValue(staticIntOp(el, op, intValue(lhs), intValue(rhs), r)) != 0);
    Obj result = isInt(lhs) && isInt(rhs)
                     ? staticIntOp(el, op, intValue(lhs), intValue(rhs), r)
                     : staticFloatOp(el, op, floatValue(lhs), floatValue(rhs), r);
    if (std::optional<DType> t = numpyResultType(op, lhs, rhs))
      return static_array::numpyScalar(el, *t, result, r);
    return result;
  }
  if (Obj result = sequenceOp(el, op, lhs, rhs, r))
    return result;
  if (Obj result = setOperator(el, op, lhs, rhs, r))
    return result;
  // `int | None`, `jax.Array | np.ndarray`: a type union for annotations.
  if (op == BinaryOp::BitOr && isTypeLike(lhs) && isTypeLike(rhs)) {
    auto u = typeMarker("typing.Union");
    u->attributes.emplace_back("__args__", makeTuple({lhs, rhs}));
    return u;
  }
  // Operators a class defines (__add__, __mul__, ...).
  static const std::map<BinaryOp, std::pair<const char *, const char *>> dunders = {
      {BinaryOp::Add, {"__add__", "__radd__"}},         {BinaryOp::Sub, {"__sub__", "__rsub__"}},
      {BinaryOp::Mul, {"__mul__", "__rmul__"}},         {BinaryOp::Div, {"__truediv__", "__rtruediv__"}},
      {BinaryOp::FloorDiv, {"__floordiv__", "__rfloordiv__"}}, {BinaryOp::Mod, {"__mod__", "__rmod__"}},
      {BinaryOp::MatMul, {"__matmul__", "__rmatmul__"}}, {BinaryOp::BitAnd, {"__and__", "__rand__"}},
      {BinaryOp::BitOr, {"__or__", "__ror__"}},         {BinaryOp::BitXor, {"__xor__", "__rxor__"}},
  };
  if (auto it = dunders.find(op); it != dunders.end()) {
    if (std::optional<Obj> v = callDunder(el, lhs, it->second.first, {rhs}, r))
      return *v;
    if (std::optional<Obj> v = callDunder(el, rhs, it->second.second, {lhs}, r))
      return *v;
  }
  el.fail(r, std::string("unsupported operand types for ") + ast::spelling(op) + ": '" +
                 typeName(*lhs) + "' and '" + typeName(*rhs) + "'");
}

Obj unaryOperator(Elaborator &el, UnaryOp op, const Obj &operand, SourceRange r) {
  el.checkNotOpaque(operand, r);
  if (auto *array = llvm::dyn_cast<StaticArrayObj>(operand.get()))
    return static_array::unary(el, op, *array, r);
  if (llvm::isa<GlobalArrayObj>(operand.get()) && op != UnaryOp::Not)
    return el.arrayCodeAtExport(std::string("operator ") + ast::spelling(op), r, {operand},
                                [&](std::vector<Obj> &v) { return unaryOperator(el, op, v[0], r); });
  if (llvm::isa<ArrayObj>(operand.get())) {
    switch (op) {
    case UnaryOp::Negate:
      return el.arrays().negate(operand, r);
    case UnaryOp::Plus:
      return operand;
    case UnaryOp::Invert:
      return el.arrays().invert(operand, r);
    case UnaryOp::Not:
      el.fail(r, "'not' needs a static condition; for arrays use '~' or jnp.logical_not");
    }
  }
  if (auto *s = llvm::dyn_cast<SymIntObj>(operand.get())) {
    if (op == UnaryOp::Negate)
      return makeSymbolic(-s->expr);
    if (op == UnaryOp::Plus)
      return operand;
    el.failNotAffine(r, std::string("'") + ast::spelling(op) + "' of a symbolic size is not supported");
  }
  switch (op) {
  case UnaryOp::Not:
    return makeBool(!el.truthy(operand, r));
  case UnaryOp::Plus:
  case UnaryOp::Negate:
    if (std::optional<DType> t = numpyScalarType(*operand); t && op == UnaryOp::Negate)
      return static_array::numpyScalar(
          el, *t, unaryOperator(el, op, static_array::pythonNumber(operand), r), r);
    if (auto *f = llvm::dyn_cast<FloatObj>(operand.get()))
      return makeFloat(op == UnaryOp::Negate ? -f->value : f->value);
    if (isInt(operand)) {
      int64_t v = intValue(operand);
      if (op == UnaryOp::Negate && v == INT64_MIN)
        el.fail(r, "integer overflow in a compile-time computation");
      return makeInt(op == UnaryOp::Negate ? -v : v);
    }
    break;
  case UnaryOp::Invert:
    if (isInt(operand))
      return makeInt(~intValue(operand));
    break;
  }
  el.fail(r, std::string("bad operand type for unary ") + ast::spelling(op) + ": '" +
                 typeName(*operand) + "'");
}

bool staticEqual(const Obj &a, const Obj &b) {
  if (ArrayOps::isStaticNumber(a) && ArrayOps::isStaticNumber(b)) {
    if (isInt(a) && isInt(b))
      return intValue(a) == intValue(b);
    return floatValue(a) == floatValue(b);
  }
  if (a->kind() != b->kind())
    return false;
  switch (a->kind()) {
  case Object::Kind::None:
  case Object::Kind::Ellipsis:
    return true;
  case Object::Kind::Str:
    return llvm::cast<StrObj>(*a).value == llvm::cast<StrObj>(*b).value;
  case Object::Kind::SymInt:
    return llvm::cast<SymIntObj>(*a).expr == llvm::cast<SymIntObj>(*b).expr;
  case Object::Kind::DType:
    return llvm::cast<DTypeObj>(*a).dtype == llvm::cast<DTypeObj>(*b).dtype;
  case Object::Kind::MemorySpace:
    return llvm::cast<MemorySpaceObj>(*a).space == llvm::cast<MemorySpaceObj>(*b).space;
  case Object::Kind::Instance: {
    // Dataclasses compare their fields (and class); other instances are
    // equal only to themselves (no __eq__ runs here: this is static).
    const auto &x = llvm::cast<InstanceObj>(*a), &y = llvm::cast<InstanceObj>(*b);
    if (a.get() == b.get())
      return true;
    if (!x.cls->isDataclass || x.cls != y.cls)
      return false;
    for (const ClassObj::Field &f : x.cls->fields()) {
      Obj u = x.get(f.name), v = y.get(f.name);
      if (!u || !v || !staticEqual(u, v))
        return false;
    }
    return true;
  }
  case Object::Kind::ExtendedDType:
    return llvm::cast<ExtendedDTypeObj>(*a).name == llvm::cast<ExtendedDTypeObj>(*b).name;
  case Object::Kind::Set:
    return setsEqual(llvm::cast<SetObj>(*a), llvm::cast<SetObj>(*b));
  case Object::Kind::Tuple:
  case Object::Kind::List: {
    // Python compares items by identity first, which also ends the
    // recursion of a list that contains itself; the depth limit ends it for
    // two distinct such lists (where Python raises RecursionError).
    thread_local unsigned depth = 0;
    if (a.get() == b.get())
      return true;
    const auto &x = llvm::cast<SequenceObj>(*a).items, &y = llvm::cast<SequenceObj>(*b).items;
    if (x.size() != y.size() || depth > 1000)
      return false;
    ++depth;
    bool equal = true;
    for (size_t i = 0; i < x.size() && equal; ++i)
      equal = staticEqual(x[i], y[i]);
    --depth;
    return equal;
  }
  case Object::Kind::MosaicGpu: {
    // plgpu layouts are values: WGMMA.reduce(1) == WGMMA_ROW.
    auto *x = llvm::dyn_cast<LayoutObj>(a.get()), *y = llvm::dyn_cast<LayoutObj>(b.get());
    if (x && y && x->attr && y->attr)
      return x->attr == y->attr;
    return a.get() == b.get();
  }
  default:
    return a.get() == b.get();
  }
}

Obj compareOperator(Elaborator &el, CompareOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  if (op != CompareOp::Is && op != CompareOp::IsNot) {
    el.checkNotOpaque(lhs, r);
    el.checkNotOpaque(rhs, r);
  }
  switch (op) {
  case CompareOp::Is:
  case CompareOp::IsNot: {
    // Identity: singletons, dtypes and memory spaces (enum members in
    // JAX) compare by value, the rest by object.
    bool same = lhs.get() == rhs.get() ||
                (lhs->kind() == rhs->kind() &&
                 llvm::isa<NoneObj, EllipsisObj, BoolObj, DTypeObj, MemorySpaceObj>(lhs.get()) &&
                 staticEqual(lhs, rhs));
    return makeBool(op == CompareOp::Is ? same : !same);
  }
  case CompareOp::In:
  case CompareOp::NotIn: {
    bool found = false;
    if (auto *d = llvm::dyn_cast<DictObj>(rhs.get()))
      found = dictGet(*d, lhs) != nullptr;
    else if (auto *s = llvm::dyn_cast<StrObj>(rhs.get()))
      found = llvm::isa<StrObj>(lhs.get()) &&
              s->value.find(llvm::cast<StrObj>(*lhs).value) != std::string::npos;
    else
      for (const Obj &item : el.iterate(rhs, r))
        found = found || staticEqual(lhs, item);
    return makeBool(op == CompareOp::In ? found : !found);
  }
  default:
    break;
  }
  switch (staticOperands(lhs, rhs)) {
  case StaticOperands::Static:
    return static_array::compare(el, op, lhs, rhs, r);
  case StaticOperands::Traced:
    return compareOperator(el, op, asJaxOperand(el, lhs, r), asJaxOperand(el, rhs, r), r);
  case StaticOperands::None:
    break;
  }
  if (llvm::isa<GlobalArrayObj>(lhs.get()) || llvm::isa<GlobalArrayObj>(rhs.get()))
    return el.arrayCodeAtExport(std::string("operator ") + ast::spelling(op), r, {lhs, rhs},
                                [&](std::vector<Obj> &v) { return compareOperator(el, op, v[0], v[1], r); });
  if (llvm::isa<ArrayObj>(lhs.get()) || llvm::isa<ArrayObj>(rhs.get()))
    return el.arrays().compare(op, lhs, rhs, r);
  if (llvm::isa<SymIntObj>(lhs.get()) || llvm::isa<SymIntObj>(rhs.get())) {
    if ((op == CompareOp::Eq || op == CompareOp::Ne) && staticEqual(lhs, rhs))
      return makeBool(op == CompareOp::Eq);
    if (el.inKernel() && ArrayOps::isNumeric(lhs) && ArrayOps::isNumeric(rhs))
      return el.arrays().compare(op, lhs, rhs, r);
    el.failNotAffine(r, "comparing symbolic sizes (" + repr(*lhs) + " " + ast::spelling(op) + " " +
                            repr(*rhs) + ") is not possible at compile time; fix the size "
                            "with -D, or compare inside the kernel");
  }
  if (op == CompareOp::Eq || op == CompareOp::Ne) {
    bool equal = staticEqual(lhs, rhs);
    return makeBool(op == CompareOp::Eq ? equal : !equal);
  }
  auto order = [&](const Obj &a, const Obj &b) -> int {
    if (ArrayOps::isStaticNumber(a) && ArrayOps::isStaticNumber(b)) {
      if (isInt(a) && isInt(b))
        return intValue(a) < intValue(b) ? -1 : intValue(a) > intValue(b) ? 1 : 0;
      double x = floatValue(a), y = floatValue(b);
      if (std::isnan(x) || std::isnan(y))
        return 2; // unordered
      return x < y ? -1 : x > y ? 1 : 0;
    }
    if (llvm::isa<StrObj>(a.get()) && llvm::isa<StrObj>(b.get()))
      return llvm::cast<StrObj>(*a).value.compare(llvm::cast<StrObj>(*b).value) < 0   ? -1
             : llvm::cast<StrObj>(*a).value.compare(llvm::cast<StrObj>(*b).value) > 0 ? 1
                                                                                      : 0;
    el.fail(r, std::string("'") + ast::spelling(op) + "' not supported between instances of '" +
                   typeName(*a) + "' and '" + typeName(*b) + "'");
  };
  if (std::optional<bool> subset = setOrder(op, lhs, rhs))
    return makeBool(*subset);
  int c;
  auto *ls = llvm::dyn_cast<SequenceObj>(lhs.get());
  auto *rs = llvm::dyn_cast<SequenceObj>(rhs.get());
  if (ls && rs && ls->isList() == rs->isList()) {
    c = 0;
    size_t n = std::min(ls->items.size(), rs->items.size());
    for (size_t i = 0; i < n && c == 0; ++i)
      c = staticEqual(ls->items[i], rs->items[i]) ? 0 : order(ls->items[i], rs->items[i]);
    if (c == 0)
      c = ls->items.size() < rs->items.size() ? -1 : ls->items.size() > rs->items.size() ? 1 : 0;
  } else {
    c = order(lhs, rhs);
  }
  if (c == 2)
    return makeBool(false);
  switch (op) {
  case CompareOp::Lt: return makeBool(c < 0);
  case CompareOp::Le: return makeBool(c <= 0);
  case CompareOp::Gt: return makeBool(c > 0);
  case CompareOp::Ge: return makeBool(c >= 0);
  default: return makeBool(false);
  }
}

Obj dictGet(const DictObj &dict, const Obj &key) {
  for (const auto &[k, v] : dict.entries)
    if (staticEqual(k, key))
      return v;
  return nullptr;
}

bool dictErase(DictObj &dict, const Obj &key) {
  for (auto it = dict.entries.begin(); it != dict.entries.end(); ++it)
    if (staticEqual(it->first, key)) {
      dict.entries.erase(it);
      return true;
    }
  return false;
}

void dictSet(Elaborator &el, DictObj &dict, const Obj &key, const Obj &value, SourceRange r) {
  checkHashable(el, key, r);
  for (auto &entry : dict.entries)
    if (staticEqual(entry.first, key)) {
      entry.second = value;
      return;
    }
  dict.entries.emplace_back(key, value);
}

} // namespace pk::elab
