//===- BuiltinsPython.cpp - range, len, min, max, print, ... --------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Sets.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace pk::elab {

void define(NamespaceObj &ns, const std::string &name, BuiltinObj::Fn fn) {
  ns.members[name] = std::make_shared<BuiltinObj>(ns.name + "." + name, std::move(fn));
}

Obj builtin(const std::string &name, BuiltinObj::Fn fn) {
  return std::make_shared<BuiltinObj>(name, std::move(fn));
}

namespace {

using Builtins = std::unordered_map<std::string, Obj>;

void add(Builtins &builtins, const std::string &name, BuiltinObj::Fn fn) {
  builtins[name] = std::make_shared<BuiltinObj>(name, std::move(fn));
}

/// `key(item)` for sorted(), min() and max().
Obj applyKey(Elaborator &el, const Obj &key, const Obj &item, SourceRange r) {
  CallArgs call;
  call.range = r;
  call.addPositional(item, r);
  return el.call(key, call);
}

/// Whether `x < y` in Python's order of static values.
bool less(Elaborator &el, const Obj &x, const Obj &y, SourceRange r) {
  return el.truthy(compareOperator(el, ast::CompareOp::Lt, x, y, r), r);
}

/// min() / max() over static numbers, symbolic sizes or block values, with
/// Python's `key=` and `default=` (the first of equal items wins).
Obj minMax(Elaborator &el, CallArgs &args, bool isMax) {
  const char *name = isMax ? "max" : "min";
  Obj key, fallback;
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    const auto &[keyword, value] = args.keywords[k];
    if (keyword == "key")
      key = isNone(value) ? nullptr : value;
    else if (keyword == "default")
      fallback = value;
    else
      el.fail(args.keywordRanges[k],
              std::string(name) + "() got an unexpected keyword argument '" + keyword + "'");
  }
  std::vector<Obj> items = args.positional;
  if (items.empty())
    el.fail(args.range, std::string(name) + " expected at least 1 argument, got 0");
  if (items.size() == 1)
    items = el.iterate(items[0], args.rangeOf(0));
  else if (fallback)
    el.fail(args.range, std::string("Cannot specify a default for ") + name +
                            "() with multiple positional arguments");
  if (items.empty()) {
    if (fallback)
      return fallback;
    el.fail(args.range, std::string(name) + "() arg is an empty sequence");
  }
  if (key) {
    size_t best = 0;
    Obj bestKey = applyKey(el, key, items[0], args.range);
    for (size_t i = 1; i < items.size(); ++i) {
      Obj k = applyKey(el, key, items[i], args.range);
      if (isMax ? less(el, bestKey, k, args.range) : less(el, k, bestKey, args.range)) {
        best = i;
        bestKey = k;
      }
    }
    return items[best];
  }
  Obj best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    const Obj &x = items[i];
    bool dynamic = !ArrayOps::isStaticNumber(best) || !ArrayOps::isStaticNumber(x);
    if (dynamic) {
      if (!ArrayOps::isNumeric(best) || !ArrayOps::isNumeric(x)) {
        // Tuples, strings: Python's order.
        if (!ArrayOps::isNumeric(best) && !ArrayOps::isNumeric(x)) {
          if (isMax ? less(el, best, x, args.range) : less(el, x, best, args.range))
            best = x;
          continue;
        }
        el.fail(args.range, std::string(name) + "() of '" + typeName(*best) + "' and '" +
                                typeName(*x) + "' is not supported");
      }
      if (llvm::isa<ArrayObj>(best.get()) || llvm::isa<ArrayObj>(x.get()))
        el.fail(args.range, std::string("Python's ") + name + "() cannot compare arrays; use jnp." +
                                (isMax ? "maximum" : "minimum"));
      // Symbolic sizes: not affine, but a kernel can compute it.
      el.requireKernel(args.range, std::string(name) + "() of symbolic sizes");
      best = isMax ? el.arrays().maximum(best, x, args.range)
                   : el.arrays().minimum(best, x, args.range);
      continue;
    }
    if (isMax ? less(el, best, x, args.range) : less(el, x, best, args.range))
      best = x;
  }
  return best;
}

Obj makeRange(Elaborator &el, CallArgs &args) {
  if (!args.keywords.empty())
    el.fail(args.range, "range() takes no keyword arguments");
  size_t n = args.positional.size();
  if (n < 1 || n > 3)
    el.fail(args.range, "range expected 1 to 3 arguments, got " + std::to_string(n));
  auto check = [&](const Obj &o, size_t i) {
    if (!llvm::isa<IntObj, BoolObj, SymIntObj, ArrayObj>(o.get()))
      el.fail(args.rangeOf(i), "'" + typeName(*o) + "' object cannot be interpreted as an integer");
    if (auto *a = llvm::dyn_cast<ArrayObj>(o.get()); a && (a->rank() != 0 || isFloat(a->dtype)))
      el.fail(args.rangeOf(i), "range() bounds must be integer scalars");
    return o;
  };
  Obj start = makeInt(0), stop, step = makeInt(1);
  if (n == 1) {
    stop = check(args.positional[0], 0);
  } else {
    start = check(args.positional[0], 0);
    stop = check(args.positional[1], 1);
    if (n == 3)
      step = check(args.positional[2], 2);
  }
  if (std::optional<int64_t> s = el.staticInt(step); s && *s == 0)
    el.fail(args.rangeOf(2), "range() arg 3 must not be zero");
  return std::make_shared<RangeObj>(start, stop, step);
}

/// isinstance against an abstract collection type of typing or
/// collections.abc (`Sequence`, `Mapping`, ...), which the builtin
/// containers are virtual subclasses of; nullopt for other markers.
std::optional<bool> isAbstractInstance(const std::string &type, const Obj &value) {
  Object::Kind k = value->kind();
  bool sequence = k == Object::Kind::Tuple || k == Object::Kind::List || k == Object::Kind::Str ||
                  k == Object::Kind::Range;
  bool set = k == Object::Kind::Set, mapping = k == Object::Kind::Dict;
  if (type == "typing.Sequence")
    return sequence;
  if (type == "typing.Reversible")
    return sequence || mapping;
  if (type == "typing.MutableSequence")
    return k == Object::Kind::List;
  if (type == "typing.Mapping" || type == "typing.MutableMapping")
    return mapping;
  if (type == "typing.Set" || type == "typing.AbstractSet")
    return set;
  if (type == "typing.Iterable" || type == "typing.Collection" || type == "typing.Container" ||
      type == "typing.Sized")
    return sequence || set || mapping;
  if (type == "typing.Callable")
    return isCallable(value);
  return std::nullopt;
}

} // namespace

namespace {

/// Python's hash(): ints (and floats that are whole) hash as CPython's
/// do; strings, tuples and the rest deterministically (CPython salts
/// string hashes per process, so no program can expect their values).
/// Objects without __hash__ hash by their class, not their address, so
/// that compiling twice gives the same artifact.
int64_t pythonHash(Elaborator &el, const Obj &o, SourceRange r, int depth) {
  if (depth > 200)
    el.raise(r, "RecursionError", "maximum recursion depth exceeded in hash()");
  auto text = [](const std::string &s) {
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (unsigned char c : s)
      h = (h ^ c) * 1099511628211ull;
    return static_cast<int64_t>(h >> 2);
  };
  auto integer = [](__int128 v) {
    const __int128 modulus = (__int128(1) << 61) - 1;
    __int128 h = (v < 0 ? -v : v) % modulus;
    int64_t out = static_cast<int64_t>(v < 0 ? -h : h);
    return out == -1 ? -2 : out;
  };
  if (const Object *bad = firstUnhashable(o))
    el.raise(r, "TypeError", "unhashable type: '" + typeName(*bad) + "'");
  switch (o->kind()) {
  case Object::Kind::None:
    return 0x5f3759df;
  case Object::Kind::Bool:
    return llvm::cast<BoolObj>(*o).value ? 1 : 0;
  case Object::Kind::Int:
    return integer(llvm::cast<IntObj>(*o).value);
  case Object::Kind::Float: {
    double v = llvm::cast<FloatObj>(*o).value;
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e18)
      return integer(static_cast<int64_t>(v));
    return text(repr(*o));
  }
  case Object::Kind::Str:
    return text(llvm::cast<StrObj>(*o).value);
  case Object::Kind::Tuple: {
    uint64_t h = 0x345678;
    for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
      h = (h ^ static_cast<uint64_t>(pythonHash(el, item, r, depth + 1))) * 1000003ull;
    return static_cast<int64_t>(h >> 1);
  }
  case Object::Kind::Set: {  // a frozenset (firstUnhashable refused a set)
    uint64_t h = 0x1f3d5b79; // order-free
    for (const Obj &item : llvm::cast<SetObj>(*o).items)
      h += static_cast<uint64_t>(pythonHash(el, item, r, depth + 1)) * 0x9e3779b97f4a7c15ull;
    return static_cast<int64_t>(h >> 1);
  }
  case Object::Kind::Instance: {
    if (std::optional<Obj> h = callDunder(el, o, "__hash__", {}, r))
      return el.toInt(*h, r, "__hash__'s result");
    const auto &cls = *llvm::cast<InstanceObj>(*o).cls;
    return text("instance of " + cls.name);
  }
  default:
    return text(typeName(*o) + ":" + repr(*o));
  }
}

} // namespace

bool isInstanceOf(Elaborator &el, const Obj &value, const Obj &type, SourceRange r) {
  if (auto *t = llvm::dyn_cast<SequenceObj>(type.get())) {
    for (const Obj &option : t->items)
      if (isInstanceOf(el, value, option, r))
        return true;
    return false;
  }
  if (auto *cls = llvm::dyn_cast<ClassObj>(type.get())) {
    if (cls->builtinBase == "typing.Union") {
      Obj args = cls->lookup("__args__");
      return args && isInstanceOf(el, value, args, r);
    }
    const ClassObj *valueClass = nullptr;
    if (auto *inst = llvm::dyn_cast<InstanceObj>(value.get()))
      valueClass = inst->cls.get();
    else if (auto *seq = llvm::dyn_cast<SequenceObj>(value.get()))
      valueClass = seq->namedTuple.get();
    if (isAbstractInstance(cls->builtinBase, value).value_or(false))
      return true;
    if (!valueClass)
      return cls->builtinBase == "typing.Any";
    for (const ClassObj *c : valueClass->mro())
      if (c == cls)
        return true;
    return false;
  }
  if (llvm::isa<NoneObj>(type.get())) // `isinstance(x, type(None))` spelled through a union
    return llvm::isa<NoneObj>(value.get());
  if (auto *builtin = llvm::dyn_cast<BuiltinObj>(type.get())) {
    const std::string &name = builtin->name;
    switch (value->kind()) {
    case Object::Kind::Bool:
      return name == "bool" || name == "int";
    case Object::Kind::Int:
    case Object::Kind::SymInt:
      return name == "int";
    case Object::Kind::Float:
      return name == "float";
    case Object::Kind::Str:
      return name == "str";
    case Object::Kind::Tuple:
      return name == "tuple";
    case Object::Kind::List:
      return name == "list";
    case Object::Kind::Dict:
      return name == "dict";
    case Object::Kind::Set:
      return name == (llvm::cast<SetObj>(*value).frozen ? "frozenset" : "set");
    case Object::Kind::Slice:
      return name == "slice";
    case Object::Kind::DynamicSlice:
      return name == "jax.experimental.pallas.Slice";
    case Object::Kind::Range:
      return name == "range";
    case Object::Kind::Array:
    case Object::Kind::GlobalArray:
      return name == "jax.Array";
    case Object::Kind::StaticArray:
      return name == (llvm::cast<StaticArrayObj>(*value).numpy ? "numpy.ndarray" : "jax.Array");
    case Object::Kind::Ref:
      return name == "jax.Ref";
    case Object::Kind::BlockSpec:
      return llvm::StringRef(name).ends_with(".BlockSpec");
    case Object::Kind::ShapeDtypeStruct:
      return name == "jax.ShapeDtypeStruct";
    default:
      return false;
    }
  }
  // A class from a module pkc does not have (`quantization_utils.
  // QuantizedTensor`) has no instances in a pkc program: making one calls
  // into the opaque module, which is an error. Real kernels test for such
  // wrappers around plain arrays; the answer is no.
  if (asOpaque(type))
    return false;
  el.fail(r, "isinstance() arg 2 must be a type or a tuple of types");
}

std::vector<Obj> sortItems(Elaborator &el, std::vector<Obj> items, const Obj &key, bool reverse,
                           SourceRange r) {
  std::vector<Obj> keys = items;
  if (!isNone(key))
    for (Obj &k : keys)
      k = applyKey(el, key, k, r);
  // Stable either way, as Python's: reverse=True keeps equal items in
  // their order.
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? less(el, keys[y], keys[x], r) : less(el, keys[x], keys[y], r);
  });
  std::vector<Obj> sorted;
  for (size_t i : order)
    sorted.push_back(items[i]);
  return sorted;
}

void installPythonBuiltins(Elaborator &el, Builtins &b) {
  installSetBuiltins(b);
  add(b, "super", callSuper);
  add(b, "range", makeRange);
  add(b, "len", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}});
    const Obj &o = a[0];
    switch (o->kind()) {
    case Object::Kind::Tuple:
    case Object::Kind::List:
      return makeInt(static_cast<int64_t>(llvm::cast<SequenceObj>(*o).items.size()));
    case Object::Kind::Str:
      return makeInt(static_cast<int64_t>(llvm::cast<StrObj>(*o).value.size()));
    case Object::Kind::Dict:
      return makeInt(static_cast<int64_t>(llvm::cast<DictObj>(*o).entries.size()));
    case Object::Kind::Set:
      return makeInt(static_cast<int64_t>(llvm::cast<SetObj>(*o).items.size()));
    case Object::Kind::Range:
      return makeInt(static_cast<int64_t>(el.iterate(o, a.range(0)).size()));
    case Object::Kind::Array:
    case Object::Kind::Ref: {
      if (auto *ref = llvm::dyn_cast<RefObj>(o.get()))
        rejectRaggedView(el, *ref, a.range(0));
      const std::vector<int64_t> &shape = llvm::isa<ArrayObj>(o.get())
                                              ? llvm::cast<ArrayObj>(*o).shape
                                              : llvm::cast<RefObj>(*o).shape;
      if (shape.empty())
        el.fail(a.range(0), "len() of unsized object (a 0-d value)");
      return makeInt(shape[0]);
    }
    case Object::Kind::StaticArray: {
      const auto &m = llvm::cast<StaticArrayObj>(*o);
      if (m.shape.empty())
        el.fail(a.range(0), "len() of unsized object (a 0-d array)");
      return makeInt(m.shape[0]);
    }
    case Object::Kind::GlobalArray: {
      const auto &g = llvm::cast<GlobalArrayObj>(*o);
      if (g.shape.empty())
        el.fail(a.range(0), "len() of unsized object (a 0-d array)");
      return makeDim(g.shape[0]);
    }
    case Object::Kind::Instance:
      if (std::optional<Obj> n = callDunder(el, o, "__len__", {}, a.range(0)))
        return *n;
      el.fail(a.range(0), "object of type '" + typeName(*o) + "' has no len()");
    case Object::Kind::Class:
      return makeInt(static_cast<int64_t>(el.iterate(o, a.range(0)).size()));
    default:
      el.fail(a.range(0), "object of type '" + typeName(*o) + "' has no len()");
    }
  });
  add(b, "min", [](Elaborator &el, CallArgs &args) { return minMax(el, args, false); });
  add(b, "max", [](Elaborator &el, CallArgs &args) { return minMax(el, args, true); });
  add(b, "abs", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    if (auto *i = llvm::dyn_cast<IntObj>(a[0].get())) {
      if (i->value == INT64_MIN)
        el.fail(args.range, "integer overflow in a compile-time computation");
      return makeInt(std::llabs(i->value));
    }
    if (auto *f = llvm::dyn_cast<FloatObj>(a[0].get()))
      return makeFloat(std::fabs(f->value));
    return el.arrays().abs(a[0], args.range);
  });
  add(b, "int", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x", makeInt(0)}});
    const Obj &x = a[0];
    if (llvm::isa<IntObj, SymIntObj>(x.get()))
      return x;
    if (auto *bo = llvm::dyn_cast<BoolObj>(x.get()))
      return makeInt(bo->value);
    if (auto *f = llvm::dyn_cast<FloatObj>(x.get()))
      return makeInt(el.floatToInt(f->value, args.range));
    if (auto *s = llvm::dyn_cast<StrObj>(x.get())) {
      try {
        size_t used = 0;
        int64_t v = std::stoll(s->value, &used);
        if (used == s->value.size())
          return makeInt(v);
      } catch (...) {
      }
      el.fail(args.range, "invalid literal for int(): " + repr(*x));
    }
    if (llvm::isa<ArrayObj>(x.get()))
      el.fail(args.range, "int() of a kernel value is not known at compile time; use "
                          ".astype(jnp.int32)");
    el.fail(args.range, "int() argument must be a number, not '" + typeName(*x) + "'");
  });
  add(b, "float", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x", makeFloat(0)}});
    const Obj &x = a[0];
    if (auto *s = llvm::dyn_cast<StrObj>(x.get())) {
      std::string v = s->value;
      if (v == "inf" || v == "+inf")
        return makeFloat(INFINITY);
      if (v == "-inf")
        return makeFloat(-INFINITY);
      if (v == "nan")
        return makeFloat(NAN);
      try {
        size_t used = 0;
        double d = std::stod(v, &used);
        if (used == v.size())
          return makeFloat(d);
      } catch (...) {
      }
      el.fail(args.range, "could not convert string to float: " + repr(*x));
    }
    if (llvm::isa<ArrayObj>(x.get()))
      el.fail(args.range, "float() of a kernel value is not known at compile time; use "
                          ".astype(jnp.float32)");
    return makeFloat(el.toDouble(x, args.rangeOf(0), "float() argument"));
  });
  add(b, "bool", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x", makeBool(false)}});
    return makeBool(el.truthy(a[0], a.range(0)));
  });
  add(b, "str", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object", makeStr("")}});
    return makeStr(strOf(a[0]));
  });
  add(b, "format", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"value"}, {"format_spec", makeStr("")}});
    return makeStr(formatValue(el, a[0], el.toStr(a[1], a.range(1), "format spec"), args.range));
  });
  add(b, "repr", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}});
    return makeStr(repr(*a[0]));
  });
  add(b, "tuple", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable", makeTuple({})}});
    return makeTuple(el.iterate(a[0], a.range(0)));
  });
  add(b, "list", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable", makeTuple({})}});
    return makeList(el.iterate(a[0], a.range(0)));
  });
  add(b, "dict", [](Elaborator &el, CallArgs &args) -> Obj {
    auto dict = std::make_shared<DictObj>();
    if (!args.positional.empty()) {
      if (auto *source = llvm::dyn_cast<DictObj>(args.positional[0].get())) {
        dict->entries = source->entries;
      } else {
        for (const Obj &pair : el.iterate(args.positional[0], args.rangeOf(0))) {
          std::vector<Obj> kv = el.iterate(pair, args.rangeOf(0));
          if (kv.size() != 2)
            el.fail(args.rangeOf(0), "dict() needs (key, value) pairs");
          dictSet(el, *dict, kv[0], kv[1], args.rangeOf(0));
        }
      }
    }
    for (const auto &[k, v] : args.keywords)
      dictSet(el, *dict, makeStr(k), v, args.range);
    return dict;
  });
  add(b, "zip", [](Elaborator &el, CallArgs &args) -> Obj {
    std::vector<std::vector<Obj>> lists;
    size_t n = SIZE_MAX;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      lists.push_back(el.iterate(args.positional[i], args.rangeOf(i)));
      n = std::min(n, lists.back().size());
    }
    if (lists.empty())
      n = 0;
    std::vector<Obj> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Obj> row;
      for (auto &l : lists)
        row.push_back(l[i]);
      out.push_back(makeTuple(row));
    }
    return makeTuple(out);
  });
  // locals(): the running function's variables, its parameters first in
  // CPython's order, then the rest by name (CPython: as first assigned);
  // in a module, its globals. (axlearn forwards its arguments with `**locals()`.)
  add(b, "locals", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    const Frame &frame = el.currentFrame();
    auto dict = std::make_shared<DictObj>();
    std::set<std::string> done;
    auto add = [&](const std::string &name) {
      auto it = frame.vars.find(name);
      if (it == frame.vars.end() || llvm::isa<UndefinedObj>(it->second.get()) ||
          !done.insert(name).second)
        return;
      dict->entries.emplace_back(makeStr(name), it->second);
    };
    // CPython's co_varnames: plain parameters, keyword-only ones, *args, **kwargs.
    using K = ast::Parameter::Kind;
    if (frame.function && frame.function->parameters)
      for (K kind : {K::Positional, K::KeywordOnly, K::VarPositional, K::VarKeyword})
        for (const ast::Parameter &p : *frame.function->parameters)
          if (p.kind == kind || (kind == K::Positional && p.kind == K::PositionalOnly))
            add(p.name);
    std::vector<std::string> rest;
    for (const auto &[name, value] : frame.vars)
      rest.push_back(name);
    llvm::sort(rest);
    for (const std::string &name : rest)
      add(name);
    return dict;
  });
  add(b, "iter", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}});
    if (llvm::isa<IteratorObj>(a[0].get()))
      return a[0];
    return std::make_shared<IteratorObj>(el.iterate(a[0], a.range(0)));
  });
  add(b, "next", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterator"}, optionalParam("default")});
    auto *it = llvm::dyn_cast<IteratorObj>(a[0].get());
    if (!it)
      el.raise(a.range(0), "TypeError", "'" + typeName(*a[0]) + "' object is not an iterator");
    if (it->position < it->items.size())
      return it->items[it->position++];
    if (a[1])
      return a[1];
    el.raise(args.range, "StopIteration", "");
  });
  add(b, "enumerate", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}, {"start", makeInt(0)}});
    int64_t i = el.toInt(a[1], a.range(1), "start");
    std::vector<Obj> out;
    for (const Obj &item : el.iterate(a[0], a.range(0)))
      out.push_back(makeTuple({makeInt(i++), item}));
    return makeTuple(out);
  });
  add(b, "reversed", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"sequence"}});
    std::vector<Obj> items = el.iterate(a[0], a.range(0));
    return makeTuple(std::vector<Obj>(items.rbegin(), items.rend()));
  });
  add(b, "sorted", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"iterable"}, {"key", none(), true}, {"reverse", makeBool(false), true}});
    return makeList(
        sortItems(el, el.iterate(a[0], a.range(0)), a[1], el.truthy(a[2], a.range(2)), args.range));
  });
  add(b, "sum", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}, {"start", makeInt(0)}});
    Obj total = a[1];
    for (const Obj &item : el.iterate(a[0], a.range(0)))
      total = binaryOperator(el, ast::BinaryOp::Add, total, item, args.range);
    return total;
  });
  add(b, "all", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}});
    for (const Obj &item : el.iterate(a[0], a.range(0)))
      if (!el.truthy(item, a.range(0)))
        return makeBool(false);
    return makeBool(true);
  });
  add(b, "any", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}});
    for (const Obj &item : el.iterate(a[0], a.range(0)))
      if (el.truthy(item, a.range(0)))
        return makeBool(true);
    return makeBool(false);
  });
  add(b, "map", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() < 2)
      el.fail(args.range, "map() needs a function and at least one iterable");
    std::vector<std::vector<Obj>> lists;
    size_t n = SIZE_MAX;
    for (size_t i = 1; i < args.positional.size(); ++i) {
      lists.push_back(el.iterate(args.positional[i], args.rangeOf(i)));
      n = std::min(n, lists.back().size());
    }
    std::vector<Obj> out;
    for (size_t i = 0; i < n; ++i) {
      CallArgs call;
      call.range = args.range;
      for (auto &l : lists)
        call.addPositional(l[i], args.range);
      out.push_back(el.call(args.positional[0], call));
    }
    return makeTuple(out);
  });
  add(b, "isinstance", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}, {"class_or_tuple"}});
    return makeBool(isInstanceOf(el, a[0], a[1], a.range(1)));
  });
  add(b, "hash", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}});
    return makeInt(pythonHash(el, a[0], a.range(0), 0));
  });
  add(b, "callable", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}});
    return makeBool(isCallable(a[0]));
  });
  add(b, "divmod", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    return makeTuple({binaryOperator(el, ast::BinaryOp::FloorDiv, a[0], a[1], args.range),
                      binaryOperator(el, ast::BinaryOp::Mod, a[0], a[1], args.range)});
  });
  add(b, "pow", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"base"}, {"exp"}});
    return binaryOperator(el, ast::BinaryOp::Pow, a[0], a[1], args.range);
  });
  add(b, "round", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"number"}, {"ndigits", none()}});
    double v = el.toDouble(a[0], a.range(0), "round() argument");
    if (isNone(a[1]))
      return makeInt(el.floatToInt(std::nearbyint(v), args.range));
    double scale = std::pow(10.0, static_cast<double>(el.toInt(a[1], a.range(1), "ndigits")));
    return makeFloat(std::nearbyint(v * scale) / scale);
  });
  add(b, "slice", [](Elaborator &el, CallArgs &args) -> Obj {
    std::vector<Obj> p = args.positional;
    if (p.empty() || p.size() > 3)
      el.fail(args.range, "slice expected 1 to 3 arguments");
    if (p.size() == 1)
      return std::make_shared<SliceObj>(none(), p[0], none());
    return std::make_shared<SliceObj>(p[0], p[1], p.size() == 3 ? p[2] : none());
  });
  add(b, "getattr", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}, {"name"}, optionalParam("default")});
    std::string name = el.toStr(a[1], a.range(1), "attribute name");
    if (!a[2])
      return getAttribute(el, a[0], name, args.range);
    // getattr(obj, name, default): a missing attribute gives the default.
    try {
      return getAttribute(el, a[0], name, args.range);
    } catch (const ElabError &) {
      return a[2];
    }
  });
  add(b, "hasattr", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}, {"name"}});
    std::string name = el.toStr(a[1], a.range(1), "attribute name");
    try {
      getAttribute(el, a[0], name, args.range);
      return makeBool(true);
    } catch (const ElabError &) {
      return makeBool(false);
    }
  });
  add(b, "print", [](Elaborator &el, CallArgs &args) -> Obj {
    // Runs at compile time: a window into static values and shapes.
    std::string text;
    for (size_t i = 0; i < args.positional.size(); ++i)
      text += (i ? " " : "") + strOf(args.positional[i]);
    Diagnostic d(Severity::Note, args.range, "print: " + text);
    el.note(d);
    return none();
  });
  for (const char *name : {"ValueError", "TypeError", "NotImplementedError", "AssertionError",
                           "RuntimeError", "IndexError", "KeyError", "Exception"})
    b[name] = std::make_shared<ExceptionTypeObj>(name);
  b["Ellipsis"] = std::make_shared<EllipsisObj>();
  b["export"] = std::make_shared<BuiltinObj>("export", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() != 1 || !args.keywords.empty() ||
        !llvm::isa<FunctionObj>(args.positional[0].get()))
      el.fail(args.range, "@export decorates a function: write '@export' above 'def'");
    el.registerExport(std::static_pointer_cast<FunctionObj>(args.positional[0]), args.range);
    return args.positional[0];
  });
  b["autotune"] = std::make_shared<BuiltinObj>("autotune", autotuneBuiltin);
  // Short dtype names for signatures: f32[N], bf16[M, K], ...
  // (`bool` stays Python's bool; `bool[N]` still reads as an array type.)
  for (DType t : allDTypes)
    if (t != DType::Bool)
      b[shortName(t)] = std::make_shared<DTypeObj>(t);
}

} // namespace pk::elab
