//===- BuiltinsStdlib.cpp - The Python standard library around kernels ---===//
//
// What real Pallas programs import besides JAX: dataclasses, typing,
// collections, enum, abc, contextlib, itertools, operator, sys and os (the
// parts that are static), re (BuiltinsRegex.cpp), more of math and
// functools, and Python's class builtins (object, property, classmethod,
// staticmethod, type, super).
//
// A module that is neither one of these, nor JAX, nor a .pk file on the
// import path is *opaque*: importing it succeeds (real modules import
// absltest, jax._src.test_util, ...), and using anything from it is an
// error that names it, at the line that uses it.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Tree.h"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

namespace pk::elab {

namespace {

/// A decorator that returns what it decorates (`functools.wraps(f)`,
/// `typing.final`, `jax.tree_util.register_pytree_node_class`), callable
/// bare or with options first.
Obj identityDecorator(const std::string &name) {
  return builtin(name, [name](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() == 1 && args.keywords.empty() &&
        llvm::isa<FunctionObj, ClassObj, PartialObj, BuiltinObj>(args.positional[0].get()))
      return args.positional[0];
    return builtin(name, [](Elaborator &el, CallArgs &inner) -> Obj {
      if (inner.positional.size() != 1)
        el.fail(inner.range, "a decorator takes the function it decorates");
      return inner.positional[0];
    });
  });
}

//===----------------------------------------------------------------------===//
// dataclasses
//===----------------------------------------------------------------------===//

/// dataclasses.replace(spec, **changes): JAX's BlockSpec is a dataclass.
/// pl.BlockSpec is called again with the changed fields (it checks them)
/// and the spec's own block shape and index map; what else is not changed
/// is copied.
Obj replaceBlockSpec(Elaborator &el, const BlockSpecObj &spec, CallArgs &args) {
  static const std::set<std::string> kFields = {"block_shape", "index_map", "memory_space",
                                                "pipeline_mode", "indexing_mode"};
  CallArgs call;
  call.range = args.range;
  std::set<std::string> changed;
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    const std::string &name = args.keywords[i].first;
    if (spec.mosaicGpu &&
        (name == "transforms" || name == "delay_release" || name == "collective_axes"))
      el.fail(args.rangeOfKeyword(name), "replace() of a plgpu.BlockSpec's " + name +
                                             " is not supported by pkc yet; build a new "
                                             "plgpu.BlockSpec");
    if (!kFields.count(name))
      el.fail(args.rangeOfKeyword(name), "replace() got an unexpected field '" + name + "'");
    changed.insert(name);
    call.keywords.push_back(args.keywords[i]);
    call.keywordRanges.push_back(args.rangeOfKeyword(name));
  }
  for (auto [name, value] :
       {std::pair{"block_shape", spec.blockShape}, std::pair{"index_map", spec.indexMap}})
    if (!changed.count(name)) {
      call.keywords.emplace_back(name, value ? value : none());
      call.keywordRanges.push_back(args.range);
    }
  Obj blockSpec = getAttribute(el, el.importModule("jax.experimental.pallas", args.range),
                               "BlockSpec", args.range);
  auto made = std::dynamic_pointer_cast<BlockSpecObj>(el.call(blockSpec, call));
  auto replaced = std::make_shared<BlockSpecObj>(spec);
  replaced->blockShape = made->blockShape;
  replaced->indexMap = made->indexMap;
  replaced->range = args.range;
  if (changed.count("memory_space"))
    replaced->memorySpace = made->memorySpace;
  if (changed.count("pipeline_mode")) {
    replaced->bufferCount = made->bufferCount;
    replaced->useLookahead = made->useLookahead;
    replaced->revisit = made->revisit;
  }
  if (changed.count("indexing_mode"))
    replaced->indexingMode = made->indexingMode;
  return replaced;
}

std::shared_ptr<NamespaceObj> makeDataclasses(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("dataclasses");
  NamespaceObj &n = *ns;
  auto decorate = [](Elaborator &el, const Obj &target, bool frozen, bool kwOnly,
                     SourceRange r) -> Obj {
    auto cls = std::dynamic_pointer_cast<ClassObj>(target);
    if (!cls)
      el.fail(r, "@dataclass decorates a class, got " + repr(*target));
    makeDataclass(el, cls, frozen, kwOnly, r);
    return cls;
  };
  define(n, "dataclass", [decorate](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {optionalParam("cls"), {"init", makeBool(true), true},
                                 {"repr", makeBool(true), true}, {"eq", makeBool(true), true},
                                 {"order", makeBool(false), true},
                                 {"unsafe_hash", makeBool(false), true},
                                 {"frozen", makeBool(false), true},
                                 {"match_args", makeBool(true), true},
                                 {"kw_only", makeBool(false), true},
                                 {"slots", makeBool(false), true},
                                 {"weakref_slot", makeBool(false), true}});
    bool frozen = el.truthy(a[6], a.range(6)), kwOnly = el.truthy(a[8], a.range(8));
    if (a[0])
      return decorate(el, a[0], frozen, kwOnly, args.range);
    SourceRange at = args.range;
    return builtin("dataclass", [decorate, frozen, kwOnly, at](Elaborator &el, CallArgs &inner) {
      BoundArgs c = el.bind(inner, {{"cls"}});
      return decorate(el, c[0], frozen, kwOnly, at);
    });
  });
  define(n, "field", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"default", none(), true}, {"default_factory", none(), true},
                                 {"init", makeBool(true), true}, {"repr", makeBool(true), true},
                                 {"hash", none(), true}, {"compare", makeBool(true), true},
                                 {"metadata", none(), true}, {"kw_only", none(), true}});
    auto field = std::make_shared<InstanceObj>(dataclassFieldClass());
    field->set("default", a[0]);
    field->set("default_factory", a[1]);
    field->set("init", a[2]);
    field->set("kw_only", a[7]);
    field->set("metadata", a[6]);
    field->initialized = true;
    return field;
  });
  define(n, "replace", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() != 1)
      el.fail(args.range, "replace() takes the object and keyword arguments");
    Obj target = args.positional[0];
    if (auto *spec = llvm::dyn_cast<BlockSpecObj>(target.get()))
      return replaceBlockSpec(el, *spec, args);
    std::vector<std::pair<std::string, Obj>> values = fieldValues(target);
    std::shared_ptr<ClassObj> cls;
    if (auto *inst = llvm::dyn_cast<InstanceObj>(target.get()); inst && inst->cls->isDataclass)
      cls = inst->cls;
    if (!cls && llvm::isa<MgpuObject>(target.get()))
      return replaceMosaicGpu(el, target, args);
    if (!cls)
      el.fail(args.rangeOf(0), "replace() should be called on dataclass instances, got " +
                                   repr(*target));
    CallArgs call;
    call.range = args.range;
    for (auto &[name, value] : values) {
      Obj v = value;
      for (const auto &[k, kv] : args.keywords)
        if (k == name)
          v = kv;
      call.keywords.emplace_back(name, v);
      call.keywordRanges.push_back(args.range);
    }
    for (const auto &keyword : args.keywords) {
      const std::string &k = keyword.first;
      if (std::none_of(values.begin(), values.end(), [&](const auto &f) { return f.first == k; }))
        el.fail(args.rangeOfKeyword(k), "replace() got an unexpected field '" + k + "'");
    }
    return instantiate(el, cls, call);
  });
  define(n, "fields", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"class_or_instance"}});
    std::shared_ptr<ClassObj> cls = std::dynamic_pointer_cast<ClassObj>(a[0]);
    if (auto *inst = llvm::dyn_cast<InstanceObj>(a[0].get()))
      cls = inst->cls;
    if (!cls || !cls->isDataclass)
      el.fail(a.range(0), "fields() needs a dataclass or an instance of one");
    std::vector<Obj> out;
    for (const ClassObj::Field &f : cls->fields()) {
      auto field = std::make_shared<InstanceObj>(dataclassFieldClass());
      field->set("name", makeStr(f.name));
      field->set("default", f.defaultValue ? f.defaultValue : none());
      field->initialized = true;
      out.push_back(field);
    }
    return makeTuple(out);
  });
  auto asContainer = [](bool asDict) {
    return [asDict](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"obj"}});
      auto values = fieldValues(a[0]);
      if (!asDict) {
        std::vector<Obj> items;
        for (auto &[n, v] : values)
          items.push_back(v);
        return makeTuple(items);
      }
      auto dict = std::make_shared<DictObj>();
      for (auto &[n, v] : values)
        dict->entries.emplace_back(makeStr(n), v);
      return dict;
    };
  };
  define(n, "asdict", asContainer(true));
  define(n, "astuple", asContainer(false));
  define(n, "is_dataclass", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}});
    if (auto *c = llvm::dyn_cast<ClassObj>(a[0].get()))
      return makeBool(c->isDataclass);
    if (auto *i = llvm::dyn_cast<InstanceObj>(a[0].get()))
      return makeBool(i->cls->isDataclass);
    return makeBool(false);
  });
  n.members["KW_ONLY"] = typeMarker("dataclasses.KW_ONLY");
  n.members["InitVar"] = typeMarker("dataclasses.InitVar");
  n.members["Field"] = dataclassFieldClass();
  n.members["FrozenInstanceError"] =
      std::make_shared<ExceptionTypeObj>("dataclasses.FrozenInstanceError");
  return ns;
}

//===----------------------------------------------------------------------===//
// typing, collections, enum, abc
//===----------------------------------------------------------------------===//

std::shared_ptr<NamespaceObj> makeTyping() {
  auto ns = std::make_shared<NamespaceObj>("typing");
  NamespaceObj &n = *ns;
  for (const char *t :
       {"Any", "Callable", "Sequence", "Tuple", "Optional", "Union", "List", "Dict", "Set",
        "FrozenSet", "Iterable", "Iterator", "Mapping", "MutableMapping", "MutableSequence",
        "Literal", "Final", "ClassVar", "Generic", "Protocol", "Type", "Hashable", "Sized",
        "Collection", "Container", "Generator", "Annotated", "TypeAlias", "Self", "Never",
        "NoReturn", "ParamSpec", "Concatenate", "TypeGuard", "SupportsIndex", "Unpack",
        "TypeVarTuple", "Required", "NotRequired", "LiteralString", "AbstractSet", "Awaitable",
        "Coroutine", "AsyncIterator", "Reversible", "ContextManager", "Pattern", "Match",
        "NamedTuple", "TypedDict"})
    n.members[t] = typeMarker(std::string("typing.") + t);
  n.members["TYPE_CHECKING"] = makeBool(false);
  define(n, "TypeVar", [](Elaborator &el, CallArgs &args) -> Obj {
    return typeMarker("typing.TypeVar");
  });
  define(n, "NewType", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"name"}, {"tp"}});
    return a[1]; // calling it is the identity on its base type's values
  });
  define(n, "cast", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"typ"}, {"val"}});
    return a[1];
  });
  define(n, "assert_type", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"val"}, {"typ"}});
    return a[0];
  });
  define(n, "get_args", [](Elaborator &el, CallArgs &args) -> Obj { return makeTuple({}); });
  for (const char *d : {"overload", "final", "runtime_checkable", "no_type_check", "override"})
    n.members[d] = identityDecorator(std::string("typing.") + d);
  return ns;
}

std::shared_ptr<NamespaceObj> makeCollections(const std::shared_ptr<NamespaceObj> &typing) {
  auto ns = std::make_shared<NamespaceObj>("collections");
  NamespaceObj &n = *ns;
  define(n, "namedtuple", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"typename"}, {"field_names"}, {"rename", makeBool(false), true},
                                 {"defaults", none(), true}, {"module", none(), true}});
    std::string name = el.toStr(a[0], a.range(0), "typename");
    std::vector<std::string> fields;
    if (auto *s = llvm::dyn_cast<StrObj>(a[1].get())) {
      std::string word;
      for (char c : s->value + " ") {
        if (c == ' ' || c == ',') {
          if (!word.empty())
            fields.push_back(word);
          word.clear();
        } else {
          word += c;
        }
      }
    } else {
      for (const Obj &f : el.iterate(a[1], a.range(1)))
        fields.push_back(el.toStr(f, a.range(1), "field name"));
    }
    std::vector<Obj> defaults;
    if (!isNone(a[3]))
      defaults = el.iterate(a[3], a.range(3));
    if (defaults.size() > fields.size())
      el.fail(a.range(3), "got more default values than field names");
    return makeNamedTupleClass(name, fields, defaults);
  });
  define(n, "OrderedDict", [](Elaborator &el, CallArgs &args) -> Obj {
    CallArgs copy = args;
    copy.callee = "dict";
    return el.call(el.lookup("dict", args.range), copy);
  });
  // defaultdict(factory, ...): a dict whose missing keys read as factory()
  // (stored); the other arguments are dict's.
  define(n, "defaultdict", [](Elaborator &el, CallArgs &args) -> Obj {
    CallArgs rest = args;
    rest.callee = "dict";
    Obj factory = none();
    if (!rest.positional.empty()) {
      factory = rest.positional.front();
      if (!isNone(factory) && !isCallable(factory))
        el.raise(rest.rangeOf(0), "TypeError", "first argument must be callable or None");
      rest.positional.erase(rest.positional.begin());
      if (!rest.positionalRanges.empty())
        rest.positionalRanges.erase(rest.positionalRanges.begin());
    }
    Obj made = el.call(el.lookup("dict", args.range), rest);
    auto dict = std::dynamic_pointer_cast<DictObj>(made);
    if (!dict)
      el.fail(args.range, "internal error: dict() made no dict");
    if (!isNone(factory))
      dict->defaultFactory = factory;
    return dict;
  });
  auto abc = std::make_shared<NamespaceObj>("collections.abc");
  for (const char *t : {"Callable", "Sequence", "Iterable", "Iterator", "Mapping",
                        "MutableMapping", "MutableSequence", "Set", "Hashable", "Sized",
                        "Collection", "Container", "Generator", "Reversible", "Awaitable"})
    abc->members[t] = typing->members.at(t);
  n.members["abc"] = abc;
  return ns;
}

std::shared_ptr<NamespaceObj> makeEnum() {
  auto ns = std::make_shared<NamespaceObj>("enum");
  for (const char *t : {"Enum", "IntEnum", "StrEnum", "Flag"})
    ns->members[t] = typeMarker(std::string("enum.") + t);
  // `auto()` gives the next integer when the class body runs (Classes.cpp).
  define(*ns, "auto", [](Elaborator &el, CallArgs &args) -> Obj { return typeMarker("enum.auto"); });
  ns->members["unique"] = identityDecorator("enum.unique");
  return ns;
}

std::shared_ptr<NamespaceObj> makeAbc() {
  auto ns = std::make_shared<NamespaceObj>("abc");
  ns->members["ABC"] = typeMarker("abc.ABC");
  ns->members["ABCMeta"] = typeMarker("abc.ABCMeta");
  ns->members["abstractmethod"] = identityDecorator("abc.abstractmethod");
  return ns;
}

//===----------------------------------------------------------------------===//
// contextlib, sys, os, warnings, itertools, operator
//===----------------------------------------------------------------------===//

std::shared_ptr<NamespaceObj> makeContextlib() {
  auto ns = std::make_shared<NamespaceObj>("contextlib");
  define(*ns, "nullcontext", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"enter_result", none()}});
    return std::make_shared<ContextManagerObj>("contextlib.nullcontext", a[0]);
  });
  // @contextlib.contextmanager: calling the decorated generator function
  // makes a context that runs the `with` body at its yield (Generators.cpp).
  define(*ns, "contextmanager", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"func"}});
    auto function = std::dynamic_pointer_cast<FunctionObj>(a[0]);
    if (!function || !el.isGenerator(*function))
      el.fail(a.range(0), "contextlib.contextmanager decorates a generator function (a def with "
                          "a yield), got " +
                              typeName(*a[0]));
    Obj factory = builtin(function->name, [function](Elaborator &, CallArgs &call) -> Obj {
      auto context = std::make_shared<ContextManagerObj>(function->name + "(...)", none());
      CallArgs arguments = call;
      context->run = [function, arguments](Elaborator &el,
                                           const std::function<Flow(const Obj &)> &body) {
        CallArgs args = arguments;
        return el.runContextGenerator(*function, args, body);
      };
      return context;
    });
    // A partial of nothing: in a class body it binds self, as the
    // function Python's contextmanager returns does.
    auto method = std::make_shared<PartialObj>();
    method->function = factory;
    return method;
  });
  define(*ns, "suppress", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "contextlib.suppress is not supported; use try/except");
  });
  return ns;
}

/// jaxtyping, which many JAX code bases put in every signature
/// (`Float[Array, "b n"]`, module-level aliases such as `Int[Array, ""] |
/// Int[np.generic, ""]`): its array types are markers, as typing's are;
/// `@jaxtyped(typechecker=...)` and the import hook check nothing, since
/// pkc checks shapes itself while tracing.
std::shared_ptr<NamespaceObj> makeJaxtyping() {
  auto ns = std::make_shared<NamespaceObj>("jaxtyping");
  for (const char *t :
       {"Array",        "ArrayLike",    "Scalar",     "ScalarLike", "PRNGKeyArray", "Key",
        "PyTree",       "Shaped",       "Float",      "Int",        "Integer",      "UInt",
        "Bool",         "Num",          "Real",       "Inexact",    "Complex",      "Complex64",
        "Complex128",   "Float8e4m3fn", "Float8e5m2", "BFloat16",   "Float16",      "Float32",
        "Float64",      "Int4",         "Int8",       "Int16",      "Int32",        "Int64",
        "UInt4",        "UInt8",        "UInt16",     "UInt32",     "UInt64",       "AbstractArray",
        "AbstractDtype"})
    ns->members[t] = typeMarker(std::string("jaxtyping.") + t);
  ns->members["jaxtyped"] = identityDecorator("jaxtyping.jaxtyped");
  define(*ns, "install_import_hook", [](Elaborator &el, CallArgs &args) -> Obj {
    return std::make_shared<ContextManagerObj>("jaxtyping.install_import_hook", none());
  });
  return ns;
}

/// pydantic, whose dataclasses hold kernel configurations (tokamax's
/// Config classes): pydantic.dataclasses.dataclass is dataclasses.dataclass
/// (its `config=` and `validate_on_init=` set how pydantic validates, and
/// are dropped), Field(default=, default_factory=) a dataclass field whose
/// constraints are metadata, the constrained types (PositiveInt,
/// StrictBool, ...) markers, and ConfigDict a dict. pkc does not validate
/// field values as pydantic does: a kernel configured with a value pydantic
/// would refuse compiles with it as given.
std::shared_ptr<NamespaceObj> makePydantic(const NamespaceObj &dataclasses) {
  auto ns = std::make_shared<NamespaceObj>("pydantic");
  auto pydanticDataclasses = std::make_shared<NamespaceObj>("pydantic.dataclasses");
  Obj dataclass = dataclasses.members.at("dataclass");
  define(*pydanticDataclasses, "dataclass", [dataclass](Elaborator &el, CallArgs &args) -> Obj {
    CallArgs forwarded = args;
    forwarded.takeKeyword("config");
    forwarded.takeKeyword("validate_on_init");
    return el.call(dataclass, forwarded);
  });
  ns->members["dataclasses"] = pydanticDataclasses;
  Obj field = dataclasses.members.at("field");
  define(*ns, "Field", [field](Elaborator &el, CallArgs &args) -> Obj {
    CallArgs forwarded;
    forwarded.range = args.range;
    if (!args.positional.empty()) { // Field(default, ...)
      forwarded.keywords.emplace_back("default", args.positional[0]);
      forwarded.keywordRanges.push_back(args.rangeOf(0));
    }
    for (size_t i = 0; i < args.keywords.size(); ++i)
      if (args.keywords[i].first == "default" || args.keywords[i].first == "default_factory") {
        forwarded.keywords.push_back(args.keywords[i]);
        forwarded.keywordRanges.push_back(args.keywordRanges[i]);
      }
    return el.call(field, forwarded);
  });
  define(*ns, "ConfigDict", [](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.positional.empty())
      el.fail(args.range, "pydantic.ConfigDict takes keyword arguments");
    auto dict = std::make_shared<DictObj>();
    for (const auto &[name, value] : args.keywords)
      dict->entries.emplace_back(makeStr(name), value);
    return dict;
  });
  // Validators are not run (above): the decorators give the function, and
  // the functional validators of Annotated fields are markers.
  for (const char *name : {"field_validator", "model_validator", "validator", "root_validator"})
    ns->members[name] = identityDecorator(std::string("pydantic.") + name);
  for (const char *name : {"AfterValidator", "BeforeValidator", "PlainValidator", "WrapValidator"})
    define(*ns, name, [](Elaborator &el, CallArgs &args) -> Obj { return none(); });
  for (const char *t :
       {"PositiveInt", "NegativeInt", "NonNegativeInt", "NonPositiveInt", "PositiveFloat",
        "NegativeFloat", "NonNegativeFloat", "NonPositiveFloat", "FiniteFloat", "StrictBool",
        "StrictInt", "StrictFloat", "StrictStr", "conint", "confloat"})
    ns->members[t] = typeMarker(std::string("pydantic.") + t);
  return ns;
}

std::shared_ptr<NamespaceObj> makeSys() {
  auto ns = std::make_shared<NamespaceObj>("sys");
  // What a Linux CPython 3.11 says; pkc's programs are compiled there.
  ns->members["platform"] = makeStr("linux");
  ns->members["version_info"] = makeTuple({makeInt(3), makeInt(11), makeInt(0)});
  ns->members["maxsize"] = makeInt(INT64_MAX);
  ns->members["byteorder"] = makeStr("little");
  return ns;
}

std::shared_ptr<NamespaceObj> makeOs() {
  auto ns = std::make_shared<NamespaceObj>("os");
  // The environment is empty: a compiled kernel must not depend on it.
  ns->members["environ"] = std::make_shared<DictObj>();
  define(*ns, "getenv", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"key"}, {"default", none()}});
    return a[1];
  });
  return ns;
}

/// json.dumps as Python writes it with the default separators.
void writeJson(Elaborator &el, const Obj &o, std::string &out, SourceRange r, int depth) {
  if (depth > 200)
    el.raise(r, "RecursionError", "maximum recursion depth exceeded while encoding a JSON object");
  auto quote = [](const std::string &text) {
    std::string q = "\"";
    for (unsigned char c : text) {
      switch (c) {
      case '"':
        q += "\\\"";
        break;
      case '\\':
        q += "\\\\";
        break;
      case '\n':
        q += "\\n";
        break;
      case '\r':
        q += "\\r";
        break;
      case '\t':
        q += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          q += buffer;
        } else {
          q += static_cast<char>(c);
        }
      }
    }
    return q + "\"";
  };
  switch (o->kind()) {
  case Object::Kind::None:
    out += "null";
    return;
  case Object::Kind::Bool:
    out += llvm::cast<BoolObj>(*o).value ? "true" : "false";
    return;
  case Object::Kind::Int:
    out += std::to_string(llvm::cast<IntObj>(*o).value);
    return;
  case Object::Kind::Float: {
    double v = llvm::cast<FloatObj>(*o).value;
    out += std::isnan(v) ? "NaN" : std::isinf(v) ? (v > 0 ? "Infinity" : "-Infinity") : repr(*o);
    return;
  }
  case Object::Kind::Str:
    out += quote(llvm::cast<StrObj>(*o).value);
    return;
  case Object::Kind::Tuple:
  case Object::Kind::List: {
    out += "[";
    const auto &items = llvm::cast<SequenceObj>(*o).items;
    for (size_t i = 0; i < items.size(); ++i) {
      out += i ? ", " : "";
      writeJson(el, items[i], out, r, depth + 1);
    }
    out += "]";
    return;
  }
  case Object::Kind::Dict: {
    out += "{";
    bool first = true;
    for (const auto &[key, value] : llvm::cast<DictObj>(*o).entries) {
      out += first ? "" : ", ";
      first = false;
      if (auto *str = llvm::dyn_cast<StrObj>(key.get()))
        out += quote(str->value);
      else if (llvm::isa<IntObj, FloatObj, BoolObj, NoneObj>(key.get())) {
        std::string text;
        writeJson(el, key, text, r, depth + 1);
        out += quote(text);
      } else
        el.raise(r, "TypeError",
                 "keys must be str, int, float, bool or None, not " + typeName(*key));
      out += ": ";
      writeJson(el, value, out, r, depth + 1);
    }
    out += "}";
    return;
  }
  default:
    // An enum.IntEnum member is an int.
    if (std::optional<int64_t> v = el.staticInt(o)) {
      out += std::to_string(*v);
      return;
    }
    el.raise(r, "TypeError", "Object of type " + typeName(*o) + " is not JSON serializable");
  }
}

std::shared_ptr<NamespaceObj> makeJson() {
  auto ns = std::make_shared<NamespaceObj>("json");
  define(*ns, "dumps", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"obj"}, {"indent", none(), true}, {"sort_keys", makeBool(false), true}});
    if (!isNone(a[1]))
      el.fail(a.range(1), "json.dumps(indent=...) is not supported; pkc writes the one-line form");
    if (el.truthy(a[2], a.range(2)))
      el.fail(a.range(2), "json.dumps(sort_keys=True) is not supported");
    std::string out;
    writeJson(el, a[0], out, args.range, 0);
    return makeStr(out);
  });
  return ns;
}

/// threading: the locks modules guard their state with (tokamax's patching
/// of pl.load). pkc elaborates on one thread, so a lock is a context that
/// changes nothing; acquire() succeeds.
std::shared_ptr<NamespaceObj> makeThreading() {
  auto ns = std::make_shared<NamespaceObj>("threading");
  for (const char *name : {"Lock", "RLock"}) {
    std::string full = std::string("threading.") + name;
    define(*ns, name, [full](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {});
      return std::make_shared<ContextManagerObj>(full, makeBool(true));
    });
  }
  return ns;
}

std::shared_ptr<NamespaceObj> makeWarnings() {
  auto ns = std::make_shared<NamespaceObj>("warnings");
  define(*ns, "warn", [](Elaborator &el, CallArgs &args) -> Obj {
    std::string text = args.positional.empty() ? "warning" : repr(*args.positional[0]);
    if (!args.positional.empty())
      if (auto *s = llvm::dyn_cast<StrObj>(args.positional[0].get()))
        text = s->value;
    el.warn(args.range, text);
    return none();
  });
  define(*ns, "filterwarnings", [](Elaborator &, CallArgs &) -> Obj { return none(); });
  define(*ns, "simplefilter", [](Elaborator &, CallArgs &) -> Obj { return none(); });
  define(*ns, "resetwarnings", [](Elaborator &, CallArgs &) -> Obj { return none(); });
  // `with warnings.catch_warnings(record=True) as caught:` gives a list,
  // which stays empty: pkc reports warnings where they are raised.
  define(*ns, "catch_warnings", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"record", makeBool(false), true},
                                 {"module", none(), true},
                                 {"action", none(), true},
                                 {"category", none(), true},
                                 {"lineno", none(), true},
                                 {"append", makeBool(false), true}});
    Obj entered = el.truthy(a[0], a.range(0)) ? makeList({}) : none();
    return std::make_shared<ContextManagerObj>("warnings.catch_warnings", entered);
  });
  return ns;
}

/// inspect.signature(f).parameters: the parameters of a program's
/// functions and classes (a dataclass's fields, otherwise __init__'s after
/// self), and the keyword names of pltpu.CompilerParams, which kernels
/// probe for options (JAX 0.10.2's fields; the defaults are not given).
/// Anything else raises what CPython raises (TypeError for what is not
/// callable, ValueError for a builtin), which a program may catch.
std::shared_ptr<NamespaceObj> makeInspect() {
  auto ns = std::make_shared<NamespaceObj>("inspect");
  auto parameterClass = std::make_shared<NamespaceObj>("inspect.Parameter");
  Obj empty = std::make_shared<NamespaceObj>("inspect.Parameter.empty");
  parameterClass->members["empty"] = empty;
  for (const char *kind : {"POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL",
                           "KEYWORD_ONLY", "VAR_KEYWORD"})
    parameterClass->members[kind] = makeStr(kind);
  ns->members["Parameter"] = parameterClass;
  auto parameter = [empty](const std::string &name, const char *kind, Obj defaultValue) {
    auto p = std::make_shared<NamespaceObj>("inspect.Parameter");
    p->members["name"] = makeStr(name);
    p->members["kind"] = makeStr(kind);
    p->members["default"] = defaultValue ? defaultValue : empty;
    return std::make_pair(makeStr(name), Obj(p));
  };
  auto ofFunction = [parameter](const FunctionObj &f, size_t skip) {
    std::vector<std::pair<Obj, Obj>> out;
    for (size_t i = skip; f.parameters && i < f.parameters->size(); ++i) {
      const ast::Parameter &p = (*f.parameters)[i];
      using K = ast::Parameter::Kind;
      const char *kind = p.kind == K::PositionalOnly  ? "POSITIONAL_ONLY"
                         : p.kind == K::KeywordOnly   ? "KEYWORD_ONLY"
                         : p.kind == K::VarPositional ? "VAR_POSITIONAL"
                         : p.kind == K::VarKeyword    ? "VAR_KEYWORD"
                                                      : "POSITIONAL_OR_KEYWORD";
      out.push_back(parameter(p.name, kind, i < f.defaults.size() ? f.defaults[i] : nullptr));
    }
    return out;
  };
  define(*ns, "signature", [parameter, ofFunction](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"obj"}});
    std::vector<std::pair<Obj, Obj>> params;
    if (auto *f = llvm::dyn_cast<FunctionObj>(a[0].get())) {
      params = ofFunction(*f, 0);
    } else if (auto *cls = llvm::dyn_cast<ClassObj>(a[0].get()); cls && cls->isDataclass) {
      for (const ClassObj::Field &field : cls->fields())
        if (field.init)
          params.push_back(parameter(field.name,
                                     field.kwOnly ? "KEYWORD_ONLY" : "POSITIONAL_OR_KEYWORD",
                                     field.defaultValue));
    } else if (cls) { // __init__'s parameters after self; none without one
      if (auto *init = llvm::dyn_cast_or_null<FunctionObj>(cls->lookup("__init__").get()))
        params = ofFunction(*init, 1);
    } else if (auto *b = llvm::dyn_cast<BuiltinObj>(a[0].get());
               b && b->name == "tpu.CompilerParams") {
      for (const char *name :
           {"dimension_semantics", "allow_input_fusion", "vmem_limit_bytes", "collective_id",
            "has_side_effects", "flags", "internal_scratch_in_bytes", "serialization_format",
            "disable_bounds_checks", "disable_semaphore_checks", "skip_device_barrier",
            "allow_collective_id_without_custom_barrier", "shape_invariant_numerics",
            "use_tc_tiling_on_sc", "needs_layout_passes", "fuse_transposed_lhs_in_matmul"})
        params.push_back(parameter(name, "KEYWORD_ONLY", nullptr));
    } else if (!isCallable(a[0])) {
      el.raise(a.range(0), "TypeError", repr(*a[0]) + " is not a callable object");
    } else {
      el.raise(a.range(0), "ValueError", "no signature found for " + repr(*a[0]));
    }
    auto dict = std::make_shared<DictObj>();
    dict->entries = std::move(params);
    auto signature = std::make_shared<NamespaceObj>("inspect.Signature");
    signature->members["parameters"] = dict;
    return signature;
  });
  return ns;
}

/// logging: loggers whose messages go nowhere. A program logs from its
/// host-side code; nothing of it reaches a kernel.
std::shared_ptr<NamespaceObj> makeLogging() {
  auto ns = std::make_shared<NamespaceObj>("logging");
  auto logger = std::make_shared<NamespaceObj>("logging.Logger");
  auto ignore = [](Elaborator &, CallArgs &) -> Obj { return none(); };
  for (const char *name : {"debug", "info", "warning", "warn", "error", "exception", "critical",
                           "fatal", "log", "setLevel", "addHandler", "removeHandler"}) {
    define(*logger, name, ignore);
    define(*ns, name, ignore);
  }
  define(*logger, "isEnabledFor", [](Elaborator &, CallArgs &) -> Obj { return makeBool(false); });
  define(*ns, "getLogger", [logger](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {{"name", none()}});
    return logger;
  });
  define(*ns, "basicConfig", ignore);
  const std::pair<const char *, int64_t> levels[] = {{"NOTSET", 0},    {"DEBUG", 10}, {"INFO", 20},
                                                     {"WARNING", 30},  {"WARN", 30},  {"ERROR", 40},
                                                     {"CRITICAL", 50}, {"FATAL", 50}};
  for (const auto &[name, level] : levels)
    ns->members[name] = makeInt(level);
  return ns;
}

std::shared_ptr<NamespaceObj> makeItertools() {
  auto ns = std::make_shared<NamespaceObj>("itertools");
  NamespaceObj &n = *ns;
  define(n, "product", [](Elaborator &el, CallArgs &args) -> Obj {
    int64_t repeat = 1;
    for (size_t k = 0; k < args.keywords.size(); ++k)
      if (args.keywords[k].first == "repeat")
        repeat = el.toInt(args.keywords[k].second, args.rangeOfKeyword("repeat"), "repeat");
      else
        el.fail(args.rangeOfKeyword(args.keywords[k].first),
                "product() got an unexpected keyword argument '" + args.keywords[k].first + "'");
    std::vector<std::vector<Obj>> pools;
    for (int64_t r = 0; r < repeat; ++r)
      for (size_t i = 0; i < args.positional.size(); ++i)
        pools.push_back(el.iterate(args.positional[i], args.rangeOf(i)));
    std::vector<std::vector<Obj>> result = {{}};
    for (const auto &pool : pools) {
      std::vector<std::vector<Obj>> next;
      for (const auto &prefix : result)
        for (const Obj &item : pool) {
          el.spendFuel(args.range);
          next.push_back(prefix);
          next.back().push_back(item);
        }
      result = std::move(next);
    }
    std::vector<Obj> out;
    for (auto &combo : result)
      out.push_back(makeTuple(combo));
    return makeTuple(out);
  });
  define(n, "chain", [](Elaborator &el, CallArgs &args) -> Obj {
    std::vector<Obj> out;
    for (size_t i = 0; i < args.positional.size(); ++i)
      for (const Obj &item : el.iterate(args.positional[i], args.rangeOf(i)))
        out.push_back(item);
    return makeTuple(out);
  });
  define(n, "repeat", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}, optionalParam("times")});
    if (!a[1])
      el.fail(args.range, "itertools.repeat without 'times' never ends; give a count");
    return makeTuple(std::vector<Obj>(el.toInt(a[1], a.range(1), "times"), a[0]));
  });
  define(n, "accumulate", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}, {"func", none()}, {"initial", none(), true}});
    std::vector<Obj> out;
    Obj acc = isNone(a[2]) ? nullptr : a[2];
    if (acc)
      out.push_back(acc);
    for (const Obj &item : el.iterate(a[0], a.range(0))) {
      if (!acc) {
        acc = item;
      } else if (isNone(a[1])) {
        acc = binaryOperator(el, ast::BinaryOp::Add, acc, item, args.range);
      } else {
        CallArgs call;
        call.range = args.range;
        call.addPositional(acc, args.range);
        call.addPositional(item, args.range);
        acc = el.call(a[1], call);
      }
      out.push_back(acc);
    }
    return makeTuple(out);
  });
  auto choose = [](bool permutations) {
    return [permutations](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"iterable"}, {"r", none()}});
      std::vector<Obj> pool = el.iterate(a[0], a.range(0));
      size_t r = isNone(a[1]) ? pool.size()
                              : static_cast<size_t>(el.toInt(a[1], a.range(1), "r"));
      std::vector<Obj> out;
      std::vector<size_t> picked;
      std::vector<bool> used(pool.size(), false);
      std::function<void(size_t)> go = [&](size_t from) {
        el.spendFuel(args.range);
        if (picked.size() == r) {
          std::vector<Obj> items;
          for (size_t i : picked)
            items.push_back(pool[i]);
          out.push_back(makeTuple(items));
          return;
        }
        for (size_t i = permutations ? 0 : from; i < pool.size(); ++i) {
          if (used[i])
            continue;
          used[i] = true;
          picked.push_back(i);
          go(i + 1);
          picked.pop_back();
          used[i] = false;
        }
      };
      if (r <= pool.size())
        go(0);
      return makeTuple(out);
    };
  };
  define(n, "combinations", choose(false));
  define(n, "permutations", choose(true));
  define(n, "islice", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() < 2 || args.positional.size() > 4)
      el.fail(args.range, "islice(iterable, stop) or islice(iterable, start, stop[, step])");
    std::vector<Obj> items = el.iterate(args.positional[0], args.rangeOf(0));
    int64_t start = 0, stop, step = 1;
    auto bound = [&](size_t i, int64_t fallback) {
      return isNone(args.positional[i]) ? fallback
                                        : el.toInt(args.positional[i], args.rangeOf(i), "islice");
    };
    int64_t size = static_cast<int64_t>(items.size());
    if (args.positional.size() == 2) {
      stop = bound(1, size);
    } else {
      start = bound(1, 0);
      stop = bound(2, size);
      if (args.positional.size() == 4)
        step = bound(3, 1);
    }
    std::vector<Obj> out;
    for (int64_t i = start; i < std::min(stop, size); i += std::max<int64_t>(step, 1))
      out.push_back(items[i]);
    return makeTuple(out);
  });
  define(n, "zip_longest", [](Elaborator &el, CallArgs &args) -> Obj {
    Obj fill = none();
    for (const auto &[k, v] : args.keywords)
      if (k == "fillvalue")
        fill = v;
    std::vector<std::vector<Obj>> lists;
    size_t longest = 0;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      lists.push_back(el.iterate(args.positional[i], args.rangeOf(i)));
      longest = std::max(longest, lists.back().size());
    }
    std::vector<Obj> out;
    for (size_t i = 0; i < longest; ++i) {
      std::vector<Obj> row;
      for (auto &l : lists)
        row.push_back(i < l.size() ? l[i] : fill);
      out.push_back(makeTuple(row));
    }
    return makeTuple(out);
  });
  return ns;
}

std::shared_ptr<NamespaceObj> makeOperator() {
  auto ns = std::make_shared<NamespaceObj>("operator");
  static const std::pair<const char *, ast::BinaryOp> binary[] = {
      {"add", ast::BinaryOp::Add},       {"sub", ast::BinaryOp::Sub},
      {"mul", ast::BinaryOp::Mul},       {"truediv", ast::BinaryOp::Div},
      {"floordiv", ast::BinaryOp::FloorDiv}, {"mod", ast::BinaryOp::Mod},
      {"pow", ast::BinaryOp::Pow},       {"matmul", ast::BinaryOp::MatMul},
      {"and_", ast::BinaryOp::BitAnd},   {"or_", ast::BinaryOp::BitOr},
      {"xor", ast::BinaryOp::BitXor},    {"lshift", ast::BinaryOp::LShift},
      {"rshift", ast::BinaryOp::RShift},
  };
  for (const auto &[name, op] : binary) {
    ast::BinaryOp o = op;
    define(*ns, name, [o](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"b"}});
      return binaryOperator(el, o, a[0], a[1], args.range);
    });
  }
  static const std::pair<const char *, ast::CompareOp> comparisons[] = {
      {"lt", ast::CompareOp::Lt},  {"le", ast::CompareOp::Le},        {"gt", ast::CompareOp::Gt},
      {"ge", ast::CompareOp::Ge},  {"eq", ast::CompareOp::Eq},        {"ne", ast::CompareOp::Ne},
      {"is_", ast::CompareOp::Is}, {"is_not", ast::CompareOp::IsNot},
  };
  for (const auto &[name, op] : comparisons) {
    ast::CompareOp o = op;
    define(*ns, name, [o](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}, {"b"}});
      return compareOperator(el, o, a[0], a[1], args.range);
    });
  }
  define(*ns, "contains", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    return compareOperator(el, ast::CompareOp::In, a[1], a[0], args.range);
  });
  static const std::pair<const char *, ast::UnaryOp> unary[] = {
      {"neg", ast::UnaryOp::Negate}, {"pos", ast::UnaryOp::Plus}, {"invert", ast::UnaryOp::Invert},
      {"inv", ast::UnaryOp::Invert}, {"not_", ast::UnaryOp::Not},
  };
  for (const auto &[name, op] : unary) {
    ast::UnaryOp o = op;
    define(*ns, name, [o](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"a"}});
      return unaryOperator(el, o, a[0], args.range);
    });
  }
  define(*ns, "getitem", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}});
    return subscript(el, a[0], a[1], args.range);
  });
  return ns;
}

/// Whether `a` names a type at least as narrow as `b` (a subclass of it,
/// or bool of int), for choosing among the implementations that match.
bool narrowerType(const Obj &a, const Obj &b) {
  auto *ca = llvm::dyn_cast<ClassObj>(a.get());
  auto *cb = llvm::dyn_cast<ClassObj>(b.get());
  if (ca && cb)
    for (const ClassObj *c : ca->mro())
      if (c == cb)
        return true;
  auto *ba = llvm::dyn_cast<BuiltinObj>(a.get());
  auto *bb = llvm::dyn_cast<BuiltinObj>(b.get());
  return ba && bb && ba->name == "bool" && bb->name == "int";
}

/// `functools.singledispatch(f)`: a function that calls, by the type of its
/// first argument, the implementation registered for the narrowest type
/// that argument is an instance of (isinstance, as for classes), else f.
/// `.register(cls, func)`, `.register(cls)` as a decorator and
/// `.register(func)` with the first parameter's annotation register; like
/// CPython, register returns the implementation itself, so a program that
/// names it as the dispatcher rebinds that name to it.
Obj singleDispatch(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"func"}});
  struct Registry {
    Obj fallback;
    std::vector<std::pair<Obj, Obj>> entries; ///< (type, implementation)
  };
  auto registry = std::make_shared<Registry>();
  registry->fallback = a[0];
  std::string name = "functools.singledispatch";
  if (auto *f = llvm::dyn_cast<FunctionObj>(a[0].get()))
    name = f->name;
  auto dispatcher =
      std::make_shared<BuiltinObj>(name, [registry](Elaborator &el, CallArgs &call) -> Obj {
        if (call.positional.empty())
          el.raise(call.range, "TypeError",
                   "singledispatch functions require at least 1 positional "
                   "argument");
        const Obj &first = call.positional[0];
        Obj chosenType, chosen = registry->fallback;
        for (const auto &[type, implementation] : registry->entries)
          if (isInstanceOf(el, first, type, call.rangeOf(0)) &&
              (!chosenType || narrowerType(type, chosenType))) {
            chosenType = type;
            chosen = implementation;
          }
        return el.call(chosen, call);
      });
  auto add = [registry](const Obj &type, const Obj &implementation) {
    registry->entries.emplace_back(type, implementation);
    return implementation;
  };
  dispatcher->members["register"] =
      builtin("register", [add](Elaborator &el, CallArgs &reg) -> Obj {
        BoundArgs r = el.bind(reg, {{"cls"}, {"func", none()}});
        if (!isNone(r[1]))
          return add(r[0], r[1]);
        if (isTypeLike(r[0]) || llvm::isa<BuiltinObj>(r[0].get()) ||
            llvm::isa<SequenceObj>(r[0].get())) {
          Obj type = r[0];
          return builtin("register", [add, type](Elaborator &el, CallArgs &inner) -> Obj {
            BoundArgs f = el.bind(inner, {{"func"}});
            return add(type, f[0]);
          });
        }
        // Else a function whose first parameter's annotation is the type.
        auto *f = llvm::dyn_cast<FunctionObj>(r[0].get());
        const ast::Parameter *first =
            f && f->parameters && !f->parameters->empty() ? &f->parameters->front() : nullptr;
        if (!first || !first->annotation)
          el.raise(r.range(0), "TypeError",
                   "Invalid first argument to `register()`: " + repr(*r[0]) +
                       ". Use either `@register(some_class)` or plain `@register` on an "
                       "annotated function.");
        Obj type;
        {
          Elaborator::FrameSwitch in(el, f->closure);
          type = el.eval(*first->annotation);
        }
        return add(type, r[0]);
      });
  return dispatcher;
}

/// functools beyond partial and reduce.
void extendFunctools(NamespaceObj &n) {
  n.members["wraps"] = builtin("functools.wraps", [](Elaborator &el, CallArgs &args) -> Obj {
    return identityDecorator("functools.wraps");
  });
  n.members["cached_property"] = builtin("functools.cached_property",
                                         [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"func"}});
    return std::make_shared<DescriptorObj>(DescriptorObj::Which::Property, a[0]);
  });
  // Caches change nothing in a program that runs once at compile time.
  for (const char *name : {"lru_cache", "cache", "total_ordering"})
    n.members[name] = identityDecorator(std::string("functools.") + name);
  n.members["singledispatch"] = builtin("functools.singledispatch", singleDispatch);
}

/// math beyond what makeMathNamespace defines.
void extendMath(NamespaceObj &n) {
  n.members["tau"] = makeFloat(2 * M_PI);
  auto real = [&](const char *name, double (*fn)(double)) {
    define(n, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      return makeFloat(fn(el.toDouble(a[0], a.range(0), "math argument")));
    });
  };
  real("fabs", std::fabs);
  real("log1p", std::log1p);
  real("expm1", std::expm1);
  real("asin", std::asin);
  real("acos", std::acos);
  real("atan", std::atan);
  real("sinh", std::sinh);
  real("cosh", std::cosh);
  real("erfc", std::erfc);
  real("gamma", std::tgamma);
  real("lgamma", std::lgamma);
  define(n, "log", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, optionalParam("base")});
    double x = el.toDouble(a[0], a.range(0), "math argument");
    if (x <= 0)
      el.raise(a.range(0), "ValueError", "math domain error");
    if (!a[1])
      return makeFloat(std::log(x));
    return makeFloat(std::log(x) / std::log(el.toDouble(a[1], a.range(1), "base")));
  });
  auto real2 = [&](const char *name, double (*fn)(double, double)) {
    define(n, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}, {"y"}});
      return makeFloat(fn(el.toDouble(a[0], a.range(0), "math argument"),
                          el.toDouble(a[1], a.range(1), "math argument")));
    });
  };
  real2("pow", std::pow);
  real2("atan2", std::atan2);
  real2("hypot", std::hypot);
  real2("copysign", std::copysign);
  real2("fmod", std::fmod);
  auto predicate = [&](const char *name, bool (*fn)(double)) {
    define(n, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      return makeBool(fn(el.toDouble(a[0], a.range(0), "math argument")));
    });
  };
  predicate("isnan", [](double x) { return std::isnan(x); });
  predicate("isinf", [](double x) { return std::isinf(x); });
  predicate("isfinite", [](double x) { return std::isfinite(x); });
  define(n, "lcm", [](Elaborator &el, CallArgs &args) -> Obj {
    int64_t l = 1;
    for (size_t i = 0; i < args.positional.size(); ++i)
      l = std::lcm(l, el.toInt(args.positional[i], args.rangeOf(i), "lcm argument"));
    return makeInt(args.positional.empty() ? 1 : l);
  });
  define(n, "factorial", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}});
    int64_t v = el.toInt(a[0], a.range(0), "factorial argument"), f = 1;
    if (v < 0 || v > 20)
      el.fail(a.range(0), "factorial() argument must be in [0, 20] (a 64-bit result)");
    for (int64_t i = 2; i <= v; ++i)
      f *= i;
    return makeInt(f);
  });
  define(n, "comb", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}, {"k"}});
    int64_t n = el.toInt(a[0], a.range(0), "n"), k = el.toInt(a[1], a.range(1), "k");
    if (k < 0 || k > n)
      return makeInt(0);
    __int128 c = 1;
    for (int64_t i = 1; i <= std::min(k, n - k); ++i) {
      c = c * (n - i + 1) / i;
      if (c > INT64_MAX)
        el.fail(args.range, "comb() result does not fit in 64 bits");
    }
    return makeInt(static_cast<int64_t>(c));
  });
  define(n, "fsum", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"iterable"}});
    long double total = 0;
    for (const Obj &x : el.iterate(a[0], a.range(0)))
      total += el.toDouble(x, a.range(0), "fsum item");
    return makeFloat(static_cast<double>(total));
  });
}

} // namespace

void addStdlibModules(Elaborator &el, std::map<std::string, Obj> &m) {
  auto typing = makeTyping();
  m["typing"] = typing;
  m["typing_extensions"] = typing;
  m["dataclasses"] = makeDataclasses(el);
  auto pydantic = makePydantic(llvm::cast<NamespaceObj>(*m["dataclasses"]));
  m["pydantic"] = pydantic;
  m["pydantic.dataclasses"] = pydantic->members.at("dataclasses");
  auto collections = makeCollections(typing);
  m["collections"] = collections;
  m["collections.abc"] = collections->members.at("abc");
  m["enum"] = makeEnum();
  m["abc"] = makeAbc();
  m["contextlib"] = makeContextlib();
  m["sys"] = makeSys();
  m["os"] = makeOs();
  m["warnings"] = makeWarnings();
  m["threading"] = makeThreading();
  m["json"] = makeJson();
  m["logging"] = makeLogging();
  m["inspect"] = makeInspect();
  m["itertools"] = makeItertools();
  m["jaxtyping"] = makeJaxtyping();
  m["operator"] = makeOperator();
  m["re"] = makeRegexModule();
  extendFunctools(llvm::cast<NamespaceObj>(*m.at("functools")));
  extendMath(llvm::cast<NamespaceObj>(*m.at("math")));
}

void installClassBuiltins(Elaborator &el, std::unordered_map<std::string, Obj> &b) {
  auto descriptor = [&](const char *name, DescriptorObj::Which which) {
    b[name] = builtin(name, [which](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"function"}});
      return std::make_shared<DescriptorObj>(which, a[0]);
    });
  };
  descriptor("property", DescriptorObj::Which::Property);
  descriptor("classmethod", DescriptorObj::Which::ClassMethod);
  descriptor("staticmethod", DescriptorObj::Which::StaticMethod);
  auto object = typeMarker("object");
  object->attributes.emplace_back(
      "__setattr__", builtin("object.__setattr__", [](Elaborator &el, CallArgs &args) -> Obj {
        // The escape hatch frozen dataclasses use in __post_init__.
        BoundArgs a = el.bind(args, {{"self"}, {"name"}, {"value"}});
        auto *inst = llvm::dyn_cast<InstanceObj>(a[0].get());
        if (!inst)
          el.fail(a.range(0), "object.__setattr__ needs an instance of a class of the program");
        inst->set(el.toStr(a[1], a.range(1), "attribute name"), a[2]);
        return none();
      }));
  b["object"] = object;
  // `b` is the elaborator's own table: it lives as long as the builtin.
  b["type"] = builtin("type", [&b](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"object"}});
    if (auto *inst = llvm::dyn_cast<InstanceObj>(a[0].get()))
      return inst->cls;
    if (auto *seq = llvm::dyn_cast<SequenceObj>(a[0].get()); seq && seq->namedTuple)
      return seq->namedTuple;
    if (isNone(a[0]))
      return none(); // `type(None)` only ever appears in isinstance checks
    // The builtin type of that name (int, str, ...), or one standing for
    // a type pkc has no name for (a Ref, a module): equal for equal types.
    std::string name = typeName(*a[0]);
    auto known = b.find(name);
    if (known != b.end())
      return known->second;
    Obj &marker = b["<type " + name + ">"]; // a key no program can name
    if (!marker)
      marker = typeMarker(name);
    return marker;
  });
  b["NotImplemented"] = typeMarker("NotImplemented");
  for (const char *name : {"AttributeError", "ImportError", "ModuleNotFoundError", "LookupError",
                           "ZeroDivisionError", "OverflowError", "ArithmeticError", "NameError",
                           "StopIteration", "BaseException", "RecursionError", "UserWarning",
                           "DeprecationWarning", "FutureWarning", "Warning"})
    b[name] = std::make_shared<ExceptionTypeObj>(name);
}

} // namespace pk::elab
