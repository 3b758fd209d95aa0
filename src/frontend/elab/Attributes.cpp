//===- Attributes.cpp - `value.name`: attributes and methods --------------===//
#include "frontend/elab/ArrayOps.h"
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/RefBitcast.h"
#include "frontend/elab/Sets.h"
#include "frontend/elab/StaticArray.h"
#include "support/ShapeText.h"

#include <set>

namespace pk::elab {

namespace {

Obj shapeTuple(const std::vector<int64_t> &shape) {
  std::vector<Obj> dims;
  for (int64_t d : shape)
    dims.push_back(makeInt(d));
  return makeTuple(dims);
}

Obj dimsTuple(const std::vector<Dim> &shape) {
  std::vector<Obj> dims;
  for (const Dim &d : shape)
    dims.push_back(makeDim(d));
  return makeTuple(dims);
}

} // namespace

Obj shapeAttribute(const std::string &name, const std::vector<int64_t> &shape, DType dtype) {
  if (name == "shape")
    return shapeTuple(shape);
  if (name == "dtype")
    return std::make_shared<DTypeObj>(dtype);
  if (name == "ndim")
    return makeInt(static_cast<int64_t>(shape.size()));
  if (name == "size")
    return makeInt(elementCount(shape));
  return nullptr;
}

namespace {

/// `x.sum(...)` is `jnp.sum(x, ...)`: forward to the jnp function.
Obj jnpMethod(Elaborator &el, const Obj &self, const std::string &name,
              const std::string &jnpName, SourceRange r) {
  Obj jnp = el.importModule("jax.numpy", r);
  const auto &members = llvm::cast<NamespaceObj>(*jnp).members;
  auto it = members.find(jnpName);
  if (it == members.end())
    el.fail(r, "'Array' object has no attribute '" + name + "'");
  return method(self, name, llvm::cast<BuiltinObj>(*it->second).fn);
}

/// `x.reshape(4, 8)` and `x.reshape((4, 8))`; same for transpose.
Obj varargsShapeMethod(const Obj &self, const std::string &name, bool isReshape) {
  return method(self, name, [isReshape](Elaborator &el, CallArgs &args) -> Obj {
    ArrayPtr x = el.arrays().toArray(args.positional[0], args.range);
    std::vector<Obj> parts(args.positional.begin() + 1, args.positional.end());
    if (parts.size() == 1 && llvm::isa<SequenceObj>(parts[0].get()))
      parts = el.iterate(parts[0], args.rangeOf(1));
    if (isReshape) {
      std::vector<int64_t> shape;
      for (const Obj &p : parts)
        shape.push_back(el.toInt(p, args.range, "reshape dimension"));
      return el.arrays().reshape(x, shape, args.range);
    }
    std::vector<int64_t> perm;
    if (parts.empty() || (parts.size() == 1 && isNone(parts[0])))
      for (int64_t i = x->rank() - 1; i >= 0; --i)
        perm.push_back(i);
    else
      for (const Obj &p : parts)
        perm.push_back(el.normalizeAxis(p, x->rank(), args.range));
    return el.arrays().transpose(x, perm, args.range);
  });
}

Obj arrayAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  auto array = std::static_pointer_cast<ArrayObj>(value);
  if (Obj found = shapeAttribute(name, array->shape, array->dtype))
    return found;
  if (name == "T" || name == "mT") {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < array->rank(); ++i)
      perm.push_back(i);
    if (name == "T")
      std::reverse(perm.begin(), perm.end());
    else if (array->rank() >= 2)
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return el.arrays().transpose(array, perm, r);
  }
  if (name == "astype")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"dtype"}});
      return el.arrays().cast(el.arrays().toArray(a[0], args.range),
                              el.toDType(a[1], a.range(1), "dtype"), args.range);
    });
  if (name == "reshape")
    return varargsShapeMethod(value, name, true);
  if (name == "transpose")
    return varargsShapeMethod(value, name, false);
  static const std::map<std::string, std::string> forwarded = {
      {"sum", "sum"},       {"max", "max"},       {"min", "min"},
      {"mean", "mean"},     {"prod", "prod"},     {"argmax", "argmax"},
      {"argmin", "argmin"}, {"any", "any"},       {"all", "all"},
      {"var", "var"},       {"std", "std"},       {"squeeze", "squeeze"},
      {"ravel", "ravel"},   {"flatten", "ravel"}, {"swapaxes", "swapaxes"},
      {"clip", "clip"},     {"round", "round"},   {"dot", "dot"},
      {"repeat", "repeat"}, {"cumsum", "cumsum"}, {"cumprod", "cumprod"},
      {"take", "take"},     {"sort", "sort"},     {"argsort", "argsort"}};
  auto it = forwarded.find(name);
  if (it != forwarded.end())
    return jnpMethod(el, value, name, it->second, r);
  if (name == "at")
    return std::make_shared<ArrayAtObj>(value, nullptr);
  el.fail(r, "'Array' object has no attribute '" + name + "'");
}

/// `x_ref.reshape(*shape)`: the same elements in row-major order, as
/// Pallas's ReshapeTransform (one -1 stands for the rest).
Obj refReshape(Elaborator &el, CallArgs &args) {
  if (args.positional.empty() || !args.keywords.empty())
    el.fail(args.range, "Ref.reshape takes the new shape, as integers or one tuple");
  const auto &ref = llvm::cast<RefObj>(*args.positional[0]);
  std::vector<Obj> dims(args.positional.begin() + 1, args.positional.end());
  if (dims.size() == 1 && llvm::isa<SequenceObj>(dims[0].get()))
    dims = llvm::cast<SequenceObj>(*dims[0]).items;
  int64_t count = mlir::ShapedType::getNumElements(ref.shape), known = 1;
  std::vector<int64_t> shape;
  std::optional<size_t> inferred;
  for (const Obj &d : dims) {
    int64_t n = el.toInt(d, args.range, "Ref.reshape dimension");
    if (n == -1 && !inferred) {
      inferred = shape.size();
      shape.push_back(1);
      continue;
    }
    if (n < 0)
      el.raise(args.range, "ValueError",
               "Ref.reshape dimensions must be non-negative (one may "
               "be -1), got " +
                   std::to_string(n));
    shape.push_back(n);
    known *= n;
  }
  if (inferred && known != 0 && count % known == 0)
    shape[*inferred] = count / known;
  if (mlir::ShapedType::getNumElements(shape) != count)
    el.raise(args.range, "TypeError",
             "cannot reshape a Ref of shape " + shapeText(ref.shape) + " (" +
                 std::to_string(count) + " elements) into shape " + shapeText(shape));
  if (ref.isBitcast())
    return reshapeBitcastView(el, ref, shape, args.range);
  return reshapedRef(el, ref, shape, args.range);
}

} // namespace

std::shared_ptr<RefObj> reshapedRef(Elaborator &el, const RefObj &ref,
                                    const std::vector<int64_t> &shape, SourceRange r) {
  mlir::Value base = materializeRef(el, ref, r);
  auto type = llvm::cast<pk::RefType>(base.getType());
  if (type.hasTransforms())
    el.fail(r, "Ref.reshape of a transformed shared-memory Ref (tiling, swizzle) is not "
               "supported");
  auto to = pk::RefType::get(shape, type.getElementType(), type.getMemorySpace());
  mlir::Value v = pk::RefReshapeOp::create(el.builder(), el.loc(r), to, base);
  return std::make_shared<RefObj>(v, shape, ref.dtype);
}

namespace {

Obj sequenceMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  auto *seq = llvm::cast<SequenceObj>(value.get());
  if (name == "index" || name == "count")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"value"}});
      const auto &items = llvm::cast<SequenceObj>(*a[0]).items;
      int64_t count = 0;
      for (size_t i = 0; i < items.size(); ++i)
        if (staticEqual(items[i], a[1])) {
          if (name == "index")
            return makeInt(static_cast<int64_t>(i));
          ++count;
        }
      if (name == "index")
        el.fail(args.range, repr(*a[1]) + " is not in the sequence");
      return makeInt(count);
    });
  if (seq->isList()) {
    if (name == "copy")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}});
        return makeList(llvm::cast<SequenceObj>(*a[0]).items);
      });
    if (name == "clear" || name == "reverse")
      return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}});
        auto &items = llvm::cast<SequenceObj>(*a[0]).items;
        if (name == "clear")
          items.clear();
        else
          std::reverse(items.begin(), items.end());
        return none();
      });
    if (name == "remove")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"value"}});
        auto &items = llvm::cast<SequenceObj>(*a[0]).items;
        auto it = std::find_if(items.begin(), items.end(),
                               [&](const Obj &item) { return staticEqual(item, a[1]); });
        if (it == items.end())
          el.raise(args.range, "ValueError", "list.remove(x): x not in list", false);
        items.erase(it);
        return none();
      });
    if (name == "sort") // in place, as sorted() orders: stable, key=, reverse=
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a =
            el.bind(args, {{"self"}, {"key", none(), true}, {"reverse", makeBool(false), true}});
        auto &items = llvm::cast<SequenceObj>(*a[0]).items;
        items = sortItems(el, items, a[1], el.truthy(a[2], a.range(2)), args.range);
        return none();
      });
    if (name == "append")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"object"}});
        llvm::cast<SequenceObj>(*a[0]).items.push_back(a[1]);
        countStaticItems(1);
        return none();
      });
    if (name == "extend")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"iterable"}});
        std::vector<Obj> items = el.iterate(a[1], a.range(1));
        countStaticItems(items.size());
        auto &list = llvm::cast<SequenceObj>(*a[0]).items;
        list.insert(list.end(), items.begin(), items.end());
        return none();
      });
    if (name == "insert")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"index"}, {"object"}});
        auto &items = llvm::cast<SequenceObj>(*a[0]).items;
        int64_t i = el.toInt(a[1], a.range(1), "index");
        int64_t n = static_cast<int64_t>(items.size());
        i = i < 0 ? std::max<int64_t>(0, i + n) : std::min(i, n);
        items.insert(items.begin() + i, a[2]);
        countStaticItems(1);
        return none();
      });
    if (name == "pop")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"index", makeInt(-1)}});
        auto &items = llvm::cast<SequenceObj>(*a[0]).items;
        if (items.empty())
          el.fail(args.range, "pop from empty list");
        int64_t i = el.toInt(a[1], a.range(1), "index");
        int64_t n = static_cast<int64_t>(items.size());
        if (i < 0)
          i += n;
        if (i < 0 || i >= n)
          el.fail(args.range, "pop index out of range");
        Obj item = items[i];
        items.erase(items.begin() + i);
        return item;
      });
  }
  el.fail(r, "'" + typeName(*value) + "' object has no attribute '" + name + "'");
}

/// JAX's Ref methods: `ref.get(idx=())`, `ref.set(value, idx=())`,
/// `ref.swap(value, idx=())` (the old value) and `ref.addupdate(value,
/// idx=())`, as `ref[idx]` reads and writes; `()` is the whole Ref.
Obj refAccess(Elaborator &el, CallArgs &args, const std::string &name) {
  bool reads = name == "get";
  BoundArgs a = reads ? el.bind(args, {{"self"}, {"idx", makeTuple({})}})
                      : el.bind(args, {{"self"}, {"value"}, {"idx", makeTuple({})}});
  const auto &ref = llvm::cast<RefObj>(*a[0]);
  Obj index = a[reads ? 1 : 2];
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && t->items.empty())
    index = std::make_shared<EllipsisObj>();
  if (reads)
    return loadRef(el, ref, index, nullptr, nullptr, args.range);
  Obj old = name == "set" ? nullptr : loadRef(el, ref, index, nullptr, nullptr, args.range);
  Obj stored =
      name == "addupdate" ? binaryOperator(el, ast::BinaryOp::Add, old, a[1], args.range) : a[1];
  storeRef(el, ref, index, stored, nullptr, args.range);
  return name == "swap" ? old : none();
}

Obj dictMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (name == "items" || name == "keys" || name == "values")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      std::vector<Obj> out;
      for (const auto &[k, v] : llvm::cast<DictObj>(*args.positional[0]).entries)
        out.push_back(name == "items" ? makeTuple({k, v}) : name == "keys" ? k : v);
      return makeTuple(out);
    });
  if (name == "get")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"key"}, {"default", none()}});
      Obj v = dictGet(llvm::cast<DictObj>(*a[0]), a[1]);
      return v ? v : a[2];
    });
  if (name == "copy")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      auto copy = std::make_shared<DictObj>();
      copy->entries = llvm::cast<DictObj>(*args.positional[0]).entries;
      return copy;
    });
  if (name == "clear")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      llvm::cast<DictObj>(*args.positional[0]).entries.clear();
      return none();
    });
  if (name == "pop" || name == "setdefault")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"key"}, optionalParam("default")});
      auto &dict = llvm::cast<DictObj>(*a[0]);
      auto it = std::find_if(dict.entries.begin(), dict.entries.end(),
                             [&](const auto &entry) { return staticEqual(entry.first, a[1]); });
      if (it != dict.entries.end()) {
        Obj found = it->second;
        if (name == "pop")
          dict.entries.erase(it);
        return found;
      }
      if (name == "setdefault") {
        Obj fallback = a[2] ? a[2] : none();
        dictSet(el, dict, a[1], fallback, a.range(1));
        return fallback;
      }
      if (!a[2])
        el.raise(args.range, "KeyError", repr(*a[1]), false);
      return a[2];
    });
  if (name == "update")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      auto &dict = llvm::cast<DictObj>(*args.positional[0]);
      if (args.positional.size() > 1)
        if (auto *other = llvm::dyn_cast<DictObj>(args.positional[1].get()))
          for (const auto &[k, v] : other->entries)
            dictSet(el, dict, k, v, args.range);
      for (const auto &[k, v] : args.keywords)
        dictSet(el, dict, makeStr(k), v, args.range);
      return none();
    });
  el.fail(r, "'dict' object has no attribute '" + name + "'");
}

} // namespace

namespace {

/// NumPy's scalars are arrays of no axes, and pkc's are Python numbers:
/// outside kernels a number answers the ndarray methods (`x.item()`,
/// `x.astype(t)`, `x.reshape(1)`, `x.sum()`) as a 0-d array would.
Obj numpyScalarAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (name == "item")
    return method(value, name, [](Elaborator &, CallArgs &args) {
      return static_array::pythonNumber(args.positional[0]);
    });
  if (name == "dtype")
    if (std::optional<DType> t = numpyScalarType(*value))
      return std::make_shared<DTypeObj>(*t);
  // A 0-d array's shape (`x = jnp.int32(42)` sizing an out_shape), with
  // JAX's types for Python numbers.
  if (!el.inKernel() && (name == "shape" || name == "ndim" || name == "size" || name == "dtype")) {
    if (name == "shape")
      return makeTuple({});
    if (name != "dtype")
      return makeInt(name == "size" ? 1 : 0);
    DType dtype = llvm::isa<BoolObj>(value.get())    ? DType::Bool
                  : llvm::isa<FloatObj>(value.get()) ? DType::F32
                                                     : DType::I32;
    return std::make_shared<DTypeObj>(dtype);
  }
  static const std::set<std::string> kArrayMethods = {
      "astype", "reshape", "sum",     "prod",  "max",     "min",    "mean",   "any",
      "all",    "tolist",  "flatten", "ravel", "squeeze", "argmax", "argmin", "clip"};
  if (el.inKernel() || !kArrayMethods.count(name))
    return nullptr;
  StaticArrayPtr array = static_array::fromData(el, value, std::nullopt, true, r);
  return static_numpy::attribute(el, array, name, r);
}

} // namespace

Obj method(const Obj &self, const std::string &name, BuiltinObj::Fn fn) {
  return std::make_shared<BoundMethodObj>(self, name, std::move(fn));
}

Obj getAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (Obj found = classAttribute(el, value, name, r))
    return found;
  switch (value->kind()) {
  case Object::Kind::Namespace: {
    auto &ns = const_cast<NamespaceObj &>(llvm::cast<NamespaceObj>(*value));
    auto it = ns.members.find(name);
    if (it != ns.members.end()) {
      return it->second;
    }
    if (ns.opaque) { // `absltest.main`: as opaque as its module
      auto child = std::make_shared<NamespaceObj>(ns.name + "." + name);
      child->opaque = true;
      child->why = ns.why;
      child->importedAt = ns.importedAt;
      ns.members[name] = child;
      return child;
    }
    el.raise(r, "AttributeError",
             "module '" + ns.name + "' has no attribute '" + name + "'" +
                 (ns.name.find("pallas") != std::string::npos || ns.name.find("jax") == 0 ||
                          ns.name == "numpy"
                      ? " (or pkc does not support it yet; see docs/language.md)"
                      : ""),
             false);
  }
  case Object::Kind::Array:
    return arrayAttribute(el, value, name, r);
  case Object::Kind::Ref: {
    const auto &ref = llvm::cast<RefObj>(*value);
    if (name == "shape" || name == "size" || name == "at" || name == "reshape")
      rejectRaggedView(el, ref, r);
    if (Obj found = shapeAttribute(name, ref.shape, ref.dtype))
      return found;
    if (name == "at")
      return std::make_shared<RefAtObj>(std::static_pointer_cast<RefObj>(value));
    if (name == "reshape")
      return method(value, name, refReshape);
    if (name == "get" || name == "set" || name == "swap" || name == "addupdate")
      return method(value, name,
                    [name](Elaborator &el, CallArgs &args) { return refAccess(el, args, name); });
    // Python's protocol methods called by name (`o.__setitem__(..., v)` in a
    // lambda): what the syntax does.
    if (name == "__getitem__")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"key"}});
        return subscript(el, a[0], a[1], args.range);
      });
    if (name == "__setitem__")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"key"}, {"value"}});
        storeSubscript(el, a[0], a[1], a[2], args.range);
        return none();
      });
    // Transposed views, as JAX's TransformedRef has them.
    if (name == "T") {
      std::vector<int64_t> reversed;
      for (size_t d = ref.shape.size(); d-- > 0;)
        reversed.push_back(static_cast<int64_t>(d));
      return transposedRef(el, value, reversed, r);
    }
    if (name == "transpose")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        if (args.positional.size() < 2)
          el.fail(args.range, "Ref.transpose takes a permutation");
        Obj perm = args.positional.size() == 2
                       ? args.positional[1]
                       : makeTuple({args.positional.begin() + 1, args.positional.end()});
        return transposedRef(el, args.positional[0], el.toShape(perm, args.range, "permutation"),
                             args.range);
      });
    if (name == "bitcast")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"self"}, {"dtype"}});
        el.requireKernel(args.range, "Ref.bitcast");
        return bitcastRefView(el, std::static_pointer_cast<RefObj>(a[0]),
                              el.toDType(a[1], a.range(1), "dtype"), args.range);
      });
    el.fail(r, "'Ref' object has no attribute '" + name + "'");
  }
  case Object::Kind::StaticArray:
    return static_numpy::attribute(el, value, name, r);
  case Object::Kind::DynamicSlice: {
    const auto &s = llvm::cast<DynamicSliceObj>(*value);
    if (name == "start")
      return s.start;
    if (name == "size")
      return s.dynamicSize ? s.dynamicSize : makeInt(s.size);
    if (name == "stride")
      return makeInt(s.stride);
    el.raise(r, "AttributeError", "'Slice' object has no attribute '" + name + "'", false);
  }
  case Object::Kind::Slice: {
    const auto &s = llvm::cast<SliceObj>(*value);
    if (name == "start" || name == "stop" || name == "step")
      return name == "start" ? s.start : name == "stop" ? s.stop : s.step;
    el.raise(r, "AttributeError", "'slice' object has no attribute '" + name + "'", false);
  }
  case Object::Kind::Range: {
    const auto &range = llvm::cast<RangeObj>(*value);
    if (name == "start" || name == "stop" || name == "step")
      return name == "start" ? range.start : name == "stop" ? range.stop : range.step;
    el.raise(r, "AttributeError", "'range' object has no attribute '" + name + "'", false);
  }
  case Object::Kind::GlobalArray: {
    const auto &g = llvm::cast<GlobalArrayObj>(*value);
    if (name == "shape")
      return dimsTuple(g.shape);
    if (name == "dtype")
      return std::make_shared<DTypeObj>(g.dtype);
    if (name == "ndim")
      return makeInt(static_cast<int64_t>(g.shape.size()));
    if (name == "size") {
      Obj n = makeInt(1);
      for (const Dim &d : g.shape)
        n = binaryOperator(el, ast::BinaryOp::Mul, n, makeDim(d), r);
      return n;
    }
    if (name == "itemsize")
      return makeInt(byteWidth(g.dtype));
    if (name == "at")
      return std::make_shared<ArrayAtObj>(value, nullptr);
    return globalArrayMember(el, value, name, r);
  }
  case Object::Kind::ShapeDtypeStruct: {
    const auto &s = llvm::cast<ShapeDtypeStructObj>(*value);
    if (name == "shape")
      return dimsTuple(s.shape);
    if (name == "dtype")
      return std::make_shared<DTypeObj>(s.dtype);
    if (name == "ndim")
      return makeInt(static_cast<int64_t>(s.shape.size()));
    if (name == "size") {
      Obj n = makeInt(1);
      for (const Dim &d : s.shape)
        n = binaryOperator(el, ast::BinaryOp::Mul, n, makeDim(d), r);
      return n;
    }
    // x.update(shape=, dtype=): a copy with those changed (tokamax adds a
    // batch axis to its out_type this way).
    if (name == "update")
      return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
        const auto &self = llvm::cast<ShapeDtypeStructObj>(*args.positional[0]);
        args.positional.erase(args.positional.begin());
        args.positionalRanges.erase(args.positionalRanges.begin());
        BoundArgs a = el.bind(args, {{"shape", none(), true},
                                     {"dtype", none(), true},
                                     {"sharding", none(), true},
                                     {"weak_type", none(), true}});
        std::vector<Dim> shape = isNone(a[0]) ? self.shape : el.toDims(a[0], a.range(0), "shape");
        DType dtype = isNone(a[1]) ? self.dtype : el.toDType(a[1], a.range(1), "dtype");
        return std::make_shared<ShapeDtypeStructObj>(shape, dtype);
      });
    break;
  }
  case Object::Kind::DType: {
    DType t = llvm::cast<DTypeObj>(*value).dtype;
    if (name == "itemsize")
      return makeInt(byteWidth(t));
    if (name == "name")
      return makeStr(numpyName(t));
    // dtype.type is the scalar type (jnp.float32), which pkc does not tell
    // apart from the dtype.
    if (name == "dtype" || name == "type")
      return value;
    break;
  }
  case Object::Kind::Tuple:
  case Object::Kind::List:
    return sequenceMethod(el, value, name, r);
  case Object::Kind::Dict:
    return dictMethod(el, value, name, r);
  case Object::Kind::Set:
    return setMethod(el, value, name, r);
  case Object::Kind::Super:
    return superAttribute(el, llvm::cast<SuperObj>(*value), name, r);
  case Object::Kind::Str:
    return strMethod(el, value, name, r);
  case Object::Kind::Int:
  case Object::Kind::Bool:
    if (Obj found = numpyScalarAttribute(el, value, name, r))
      return found;
    return intMethod(el, value, name, r);
  case Object::Kind::BlockSpec: {
    const auto &spec = llvm::cast<BlockSpecObj>(*value);
    if (name == "block_shape")
      return spec.blockShape;
    if (name == "index_map")
      return spec.indexMap;
    break;
  }
  case Object::Kind::CompilerParams: {
    // The options it was given; dimension_semantics, which kernels read to
    // pick a core split, is None when not.
    const auto &params = llvm::cast<CompilerParamsObj>(*value);
    for (const auto &[option, v] : params.options)
      if (option == name)
        return v;
    if (name == "dimension_semantics")
      return none();
    break;
  }
  case Object::Kind::GridSpec: {
    // The fields kernel libraries read back (tokamax rebuilds grid specs).
    const auto &spec = llvm::cast<GridSpecObj>(*value);
    if (name == "grid")
      return spec.grid;
    if (name == "in_specs")
      return spec.inSpecs;
    if (name == "out_specs")
      return spec.outSpecs;
    if (name == "scratch_shapes")
      return spec.scratchShapes;
    if (name == "num_scalar_prefetch")
      return makeInt(spec.numScalarPrefetch);
    break;
  }
  case Object::Kind::MosaicGpu:
    return mosaicGpuAttribute(el, value, name, r);
  case Object::Kind::CustomDerivative: {
    auto f = std::static_pointer_cast<CustomDerivativeObj>(value);
    if (name == "defvjp")
      return std::make_shared<BuiltinObj>(f->name + ".defvjp", [f](Elaborator &el, CallArgs &args) {
        BoundArgs a = el.bind(args, {{"fwd"}, {"bwd"}, {"symbolic_zeros", makeBool(false), true},
                                     {"optimize_remat", makeBool(false), true}});
        f->forward = a[0];
        f->backward = a[1];
        return none();
      });
    if (name == "defjvp") // also a decorator: returns the rule
      return std::make_shared<BuiltinObj>(f->name + ".defjvp", [f](Elaborator &el, CallArgs &args) {
        BoundArgs a = el.bind(args, {{"jvp"}, {"symbolic_zeros", makeBool(false), true}});
        f->forward = a[0];
        return a[0];
      });
    if (name == "defjvps")
      return std::make_shared<BuiltinObj>(f->name + ".defjvps", [](Elaborator &, CallArgs &) -> Obj {
        return none();
      });
    if (name == "fun" || name == "__wrapped__")
      return f->function;
    if (name == "fwd" && f->forward)
      return f->forward;
    if (name == "bwd" && f->backward)
      return f->backward;
    if (name == "nondiff_argnums") {
      std::vector<Obj> items;
      for (int64_t i : f->nondiffArgnums)
        items.push_back(makeInt(i));
      return makeTuple(items);
    }
    if (name == "__name__")
      return getAttribute(el, f->function, name, r);
    break;
  }
  case Object::Kind::ExtendedDType: {
    const auto &t = llvm::cast<ExtendedDTypeObj>(*value);
    if (name == "itemsize")
      return makeInt(std::max(1u, t.bits / 8));
    if (name == "name")
      return makeStr(t.name);
    if (name == "kind")
      return makeStr(std::string(1, t.kind));
    if (name == "dtype")
      return value;
    break;
  }
  case Object::Kind::ArrayAt: {
    const auto &at = llvm::cast<ArrayAtObj>(*value);
    if (!at.index)
      break;
    Obj array = at.array, index = at.index;
    return std::make_shared<BuiltinObj>("at." + name, [array, index, name](Elaborator &el,
                                                                             CallArgs &args) {
      return arrayAtUpdate(el, array, index, name, args);
    });
  }
  case Object::Kind::Function:
    if (name == "__name__" || name == "__qualname__")
      return makeStr(llvm::cast<FunctionObj>(*value).name);
    break;
  case Object::Kind::Builtin: {
    const auto &b = llvm::cast<BuiltinObj>(*value);
    if (auto it = b.members.find(name); it != b.members.end())
      return it->second;
    if (name == "__name__")
      return makeStr(b.name.substr(b.name.rfind('.') + 1));
    if (!b.unsupportedBecause.empty())
      el.fail(r, b.name + "." + name + " is not supported: " + b.unsupportedBecause);
    break;
  }
  case Object::Kind::Partial: {
    const auto &p = llvm::cast<PartialObj>(*value);
    if (name == "func")
      return p.function;
    if (name == "args")
      return makeTuple(p.args);
    if (name == "keywords") {
      auto dict = std::make_shared<DictObj>();
      for (const auto &[k, v] : p.kwargs)
        dict->entries.emplace_back(makeStr(k), v);
      return dict;
    }
    break;
  }
  case Object::Kind::Float:
    if (Obj found = numpyScalarAttribute(el, value, name, r))
      return found;
    if (name == "is_integer") {
      double v = llvm::cast<FloatObj>(*value).value;
      return method(value, name, [v](Elaborator &, CallArgs &) -> Obj {
        return makeBool(v == static_cast<double>(static_cast<int64_t>(v)));
      });
    }
    break;
  default:
    break;
  }
  el.checkNotOpaque(value, r);
  el.raise(r, "AttributeError", "'" + typeName(*value) + "' object has no attribute '" + name + "'",
           false);
}

Obj castToDType(Elaborator &el, DType dtype, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"x"}});
  const Obj &x = a[0];
  if (el.mode() == EmitMode::Export && Elaborator::holdsGlobalArray(x))
    return el.arrayCodeAtExport(numpyName(dtype), args.range, {x}, [&](std::vector<Obj> &v) {
      CallArgs traced;
      traced.range = args.range;
      traced.addPositional(v[0], a.range(0));
      return castToDType(el, dtype, traced);
    });
  if (auto *array = llvm::dyn_cast<StaticArrayObj>(x.get()); array && !el.inKernel())
    return static_array::result(static_array::astype(el, *array, dtype, args.range));
  if (!el.inKernel()) {
    // Outside kernels there are no arrays: convert the static number.
    // np.float32(x) and jnp.float32(x) are typed scalars, which JAX types
    // strongly (bf16 + np.float32(1) is f32).
    std::string what = std::string(numpyName(dtype)) + "() argument";
    if (dtype == DType::Bool)
      return makeBool(el.truthy(x, a.range(0)));
    if (llvm::isa<SymIntObj>(x.get()))
      return x;
    return static_array::numpyScalar(el, dtype, x, a.range(0), what);
  }
  if (llvm::isa<SequenceObj>(x.get())) {
    CallArgs call;
    call.range = args.range;
    call.addPositional(x, a.range(0));
    call.keywords.emplace_back("dtype", std::make_shared<DTypeObj>(dtype));
    call.keywordRanges.push_back(args.range);
    Obj jnp = el.importModule("jax.numpy", args.range);
    return el.call(llvm::cast<NamespaceObj>(*jnp).members.at("asarray"), call);
  }
  return el.arrays().toArray(x, a.range(0), JaxType{dtype, false});
}

} // namespace pk::elab
