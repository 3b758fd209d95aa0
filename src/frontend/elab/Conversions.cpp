//===- Conversions.cpp - Reading static values as ints, shapes, dtypes ----===//
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Sets.h"
#include "frontend/elab/StaticArray.h"

#include <cmath>

namespace pk::elab {

std::optional<int64_t> Elaborator::staticInt(const Obj &o) {
  if (auto *i = llvm::dyn_cast<IntObj>(o.get()))
    return i->value;
  if (auto *bo = llvm::dyn_cast<BoolObj>(o.get()))
    return bo->value ? 1 : 0;
  // A 0-d integer NumPy array is an int (operator.index).
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get());
      a && a->shape.empty() && !isFloat(a->dtype))
    return a->ints[0];
  // A member of an enum.IntEnum is an int (MatmulDimension.N as minor_dim).
  if (auto *member = llvm::dyn_cast<InstanceObj>(o.get()); member && member->cls->isIntEnum)
    if (auto *i = llvm::dyn_cast_or_null<IntObj>(member->get("value").get()))
      return i->value;
  return std::nullopt;
}

int64_t Elaborator::toInt(const Obj &o, SourceRange r, const std::string &what) {
  if (std::optional<int64_t> v = staticInt(o))
    return *v;
  if (llvm::isa<SymIntObj>(o.get()))
    fail(r, what + " must be known at compile time, but it depends on the symbolic size " +
                repr(*o) + " (fix it with -D, or make it static)");
  if (llvm::isa<ArrayObj>(o.get()))
    fail(r, what + " must be a static integer, not a value computed in the kernel");
  checkNotOpaque(o, r); // a value pkc does not have says why
  fail(r, what + " must be an integer, got " + typeName(*o) + (llvm::isa<FloatObj>(o.get()) ? " " + repr(*o) : ""));
}

int64_t Elaborator::floatToInt(double v, SourceRange r) {
  if (std::isnan(v))
    fail(r, "cannot convert float NaN to integer");
  if (std::isinf(v))
    fail(r, "cannot convert float infinity to integer");
  // [-2**63, 2**63): what a 64-bit compile-time int holds.
  if (v < -9223372036854775808.0 || v >= 9223372036854775808.0)
    fail(r, "cannot convert float " + repr(*makeFloat(v)) +
                " to integer: it does not fit in 64 bits");
  return static_cast<int64_t>(v);
}

double Elaborator::toDouble(const Obj &o, SourceRange r, const std::string &what) {
  if (auto *f = llvm::dyn_cast<FloatObj>(o.get()))
    return f->value;
  if (auto *a = llvm::dyn_cast<StaticArrayObj>(o.get()); a && a->shape.empty() && isFloat(a->dtype))
    return a->floats[0];
  if (std::optional<int64_t> v = staticInt(o))
    return static_cast<double>(*v);
  checkNotOpaque(o, r); // a value pkc does not have says why
  fail(r, what + " must be a number known at compile time, got " + typeName(*o));
}

std::string Elaborator::toStr(const Obj &o, SourceRange r, const std::string &what) {
  if (auto *s = llvm::dyn_cast<StrObj>(o.get()))
    return s->value;
  checkNotOpaque(o, r); // a value pkc does not have says why
  fail(r, what + " must be a string, got " + typeName(*o));
}

bool Elaborator::truthy(const Obj &o, SourceRange r) {
  checkNotOpaque(o, r);
  switch (o->kind()) {
  case Object::Kind::None:
    return false;
  case Object::Kind::Bool:
    return llvm::cast<BoolObj>(*o).value;
  case Object::Kind::Int:
    return llvm::cast<IntObj>(*o).value != 0;
  case Object::Kind::Float:
    return llvm::cast<FloatObj>(*o).value != 0.0;
  case Object::Kind::Str:
    return !llvm::cast<StrObj>(*o).value.empty();
  case Object::Kind::Tuple:
  case Object::Kind::List:
    return !llvm::cast<SequenceObj>(*o).items.empty();
  case Object::Kind::Dict:
    return !llvm::cast<DictObj>(*o).entries.empty();
  case Object::Kind::Set:
    return !llvm::cast<SetObj>(*o).items.empty();
  case Object::Kind::StaticArray:
    return static_array::truthy(*this, llvm::cast<StaticArrayObj>(*o), r);
  case Object::Kind::Array:
    fail(r, "the truth value of an array is not known at compile time; use it in an 'if' "
            "statement, pl.when, or jnp.where");
  case Object::Kind::GlobalArray:
    // jax.jit raises a ConcretizationTypeError here: the export is compiled
    // once, for every input.
    fail(r, "the truth value of the whole array '" + llvm::cast<GlobalArrayObj>(*o).name +
                "' is not known at compile time (an export is compiled once, for every input, "
                "as jax.jit traces); choose inside a kernel, or with jnp.where");
  case Object::Kind::SymInt:
    fail(r, "the symbolic size " + repr(*o) + " is not known at compile time");
  case Object::Kind::Range: {
    const auto &range = llvm::cast<RangeObj>(*o);
    return !iterate(o, r).empty() || !staticInt(range.stop);
  }
  case Object::Kind::Instance:
    // Python: __bool__, else __len__, else true.
    if (std::optional<Obj> b = callDunder(*this, o, "__bool__", {}, r))
      return truthy(*b, r);
    if (std::optional<Obj> n = callDunder(*this, o, "__len__", {}, r))
      return truthy(*n, r);
    return true;
  default:
    return true;
  }
}

DType Elaborator::toDType(const Obj &o, SourceRange r, const std::string &what) {
  if (auto *d = llvm::dyn_cast<DTypeObj>(o.get()))
    return d->dtype;
  if (auto *e = llvm::dyn_cast<ExtendedDTypeObj>(o.get()); e && e->kind == 's')
    fail(r, what + " must be an array dtype; " + e->name +
                " is the dtype of semaphore Refs, which hold no values");
  if (auto *e = llvm::dyn_cast<ExtendedDTypeObj>(o.get()))
    fail(r, "the dtype " + e->name + " is not supported: pkc's backends do not compute with " +
                e->name + " values (use int8, float16, bfloat16, float32, ...)");
  if (auto *s = llvm::dyn_cast<StrObj>(o.get()))
    if (std::optional<DType> t = parseDType(s->value))
      return *t;
  if (auto *builtin = llvm::dyn_cast<BuiltinObj>(o.get())) {
    // Python's own types, as NumPy reads them (64-bit mode off).
    if (builtin->name == "float")
      return DType::F32;
    if (builtin->name == "int")
      return DType::I32;
    if (builtin->name == "bool")
      return DType::Bool;
  }
  // Anything with a dtype stands for it, as np.dtype(x) reads x.dtype.
  if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(o.get()))
    return s->dtype;
  if (auto *a = llvm::dyn_cast<ArrayObj>(o.get()))
    return a->dtype;
  fail(r, what + " must be a dtype such as jnp.float32, got " + repr(*o));
}

std::vector<Obj> Elaborator::iterate(const Obj &o, SourceRange r) {
  checkNotOpaque(o, r);
  switch (o->kind()) {
  case Object::Kind::Tuple:
  case Object::Kind::List:
    return llvm::cast<SequenceObj>(*o).items;
  case Object::Kind::Set:
    return setIterationOrder(llvm::cast<SetObj>(*o));
  case Object::Kind::Iterator: { // what `next` has not taken, once
    auto &it = const_cast<IteratorObj &>(llvm::cast<IteratorObj>(*o));
    std::vector<Obj> rest(it.items.begin() + it.position, it.items.end());
    it.position = it.items.size();
    return rest;
  }
  case Object::Kind::Dict: {
    std::vector<Obj> keys;
    for (const auto &entry : llvm::cast<DictObj>(*o).entries)
      keys.push_back(entry.first);
    return keys;
  }
  case Object::Kind::Str: {
    std::vector<Obj> chars;
    for (char c : llvm::cast<StrObj>(*o).value)
      chars.push_back(makeStr(std::string(1, c)));
    return chars;
  }
  case Object::Kind::Range: {
    const auto &range = llvm::cast<RangeObj>(*o);
    std::optional<int64_t> start = staticInt(range.start), stop = staticInt(range.stop),
                           step = staticInt(range.step);
    if (!start || !stop || !step)
      fail(r, "this range has bounds known only at run time; use it directly in a 'for' "
              "statement, or use lax.fori_loop");
    std::vector<Obj> items;
    for (int64_t i = *start; *step > 0 ? i < *stop : i > *stop; i += *step) {
      spendFuel(r);
      items.push_back(makeInt(i));
    }
    return items;
  }
  case Object::Kind::Array: {
    auto array = std::static_pointer_cast<ArrayObj>(o);
    if (array->rank() == 0)
      fail(r, "iteration over a 0-d array");
    std::vector<Obj> rows;
    std::vector<int64_t> start(array->rank(), 0), limit = array->shape,
                         stride(array->rank(), 1);
    for (int64_t i = 0; i < array->shape[0]; ++i) {
      start[0] = i;
      limit[0] = i + 1;
      ArrayPtr row = arrays().slice(array, start, limit, stride, r);
      rows.push_back(arrays().squeeze(row, {0}, r));
    }
    return rows;
  }
  case Object::Kind::GlobalArray: {
    // A whole array iterates over its rows, as a traced JAX array does:
    // x[0], x[1], ... (each array code at export level).
    const auto &g = llvm::cast<GlobalArrayObj>(*o);
    if (g.shape.empty())
      fail(r, "iteration over a 0-d array");
    if (!g.shape[0].isStatic())
      fail(r, "iterating over the whole array '" + g.name + "' needs a static leading dimension, "
              "but it is " + describeDims({g.shape[0]}) + "; index it, or fix the size with -D");
    constexpr int64_t kMaxRows = 4096; // each row is a step of the program
    if (g.shape[0].value > kMaxRows)
      fail(r, "iterating over the whole array '" + g.name + "' makes one array per row, and it "
              "has " + std::to_string(g.shape[0].value) + " (at most " +
              std::to_string(kMaxRows) + "); index it instead");
    std::vector<Obj> rows;
    for (int64_t i = 0; i < g.shape[0].value; ++i)
      rows.push_back(subscript(*this, o, makeInt(i), r));
    return rows;
  }
  case Object::Kind::StaticArray:
    return static_array::rows(*this, llvm::cast<StaticArrayObj>(*o), r);
  case Object::Kind::Ref:
    fail(r, "a Ref is not iterable; index it, e.g. x_ref[i]");
  case Object::Kind::Class: {
    // An Enum class iterates over its members.
    const auto &cls = llvm::cast<ClassObj>(*o);
    if (!cls.isEnum)
      fail(r, "'type' object is not iterable");
    std::vector<Obj> members;
    for (const auto &[name, member] : cls.attributes)
      if (auto *m = llvm::dyn_cast<InstanceObj>(member.get()); m && m->cls.get() == &cls)
        members.push_back(member);
    return members;
  }
  case Object::Kind::Instance:
    if (std::optional<Obj> items = callDunder(*this, o, "__iter__", {}, r))
      return iterate(*items, r);
    fail(r, "'" + typeName(*o) + "' object is not iterable");
  default:
    fail(r, "'" + typeName(*o) + "' object is not iterable");
  }
}

Dim Elaborator::toDim(const Obj &o, SourceRange r, const std::string &what) {
  if (auto *s = llvm::dyn_cast<SymIntObj>(o.get()))
    return Dim{0, s->expr};
  int64_t v = toInt(o, r, what);
  if (v < 0)
    fail(r, what + " must not be negative, got " + std::to_string(v));
  return Dim{v, {}};
}

std::vector<Dim> Elaborator::toDims(const Obj &o, SourceRange r, const std::string &what) {
  if (!llvm::isa<SequenceObj>(o.get()))
    return {toDim(o, r, what)};
  std::vector<Dim> dims;
  for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
    dims.push_back(toDim(item, r, what));
  return dims;
}

std::vector<int64_t> Elaborator::toShape(const Obj &o, SourceRange r, const std::string &what) {
  std::vector<int64_t> shape;
  if (!llvm::isa<SequenceObj>(o.get())) {
    shape.push_back(toInt(o, r, what));
  } else {
    for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
      shape.push_back(toInt(item, r, what));
  }
  for (int64_t d : shape)
    if (d < 0)
      fail(r, what + " must not have negative dimensions, got " + std::to_string(d));
  return shape;
}

int64_t Elaborator::normalizeAxis(const Obj &axisObj, int64_t rank, SourceRange r) {
  int64_t axis = toInt(axisObj, r, "axis");
  if (axis < -rank || axis >= rank)
    fail(r, "axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> Elaborator::normalizeAxes(const Obj &axes, int64_t rank, SourceRange r) {
  if (isNone(axes))
    return {};
  std::vector<int64_t> out;
  if (llvm::isa<SequenceObj>(axes.get())) {
    for (const Obj &a : llvm::cast<SequenceObj>(*axes).items)
      out.push_back(normalizeAxis(a, rank, r));
    if (out.empty())
      fail(r, "reducing over an empty tuple of axes is not supported");
  } else {
    out.push_back(normalizeAxis(axes, rank, r));
  }
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    fail(r, "repeated axis in " + repr(*axes));
  return sorted;
}

bool Elaborator::staticEquals(const Obj &a, const Obj &b) { return staticEqual(a, b); }

} // namespace pk::elab
