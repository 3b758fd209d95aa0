//===- BuiltinsJax.cpp - The jax namespace around kernels -----------------===//
//
// What JAX programs write around their pallas_calls: jax.jit in each of
// its decorator forms (compilation is what pkc does anyway, so jit's
// options change nothing), jax.named_scope and other contexts that only
// name things, jax.custom_vjp / custom_jvp (a call runs the primal; the
// registered rules stay callable), jax.ShapeDtypeStruct.like, and
// jax.tree / jax.tree_util over tuples, lists, dicts and NamedTuples.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Tree.h"

namespace pk::elab {

std::string computeCapabilityOfDevice(const std::string &deviceKind) {
  // The kinds backends::Target::deviceKind names for CUDA targets.
  static const std::pair<const char *, const char *> kinds[] = {{"NVIDIA B200", "10.0"},
                                                                {"NVIDIA H100", "9.0"},
                                                                {"NVIDIA L4", "8.9"},
                                                                {"NVIDIA A100", "8.0"},
                                                                {"NVIDIA A10", "8.6"}};
  for (auto [prefix, cc] : kinds)
    if (llvm::StringRef(deviceKind).starts_with(prefix))
      return cc;
  return "";
}

std::vector<int64_t> computeCapabilityParts(Elaborator &el, const std::string &text,
                                            SourceRange r) {
  std::vector<int64_t> parts;
  llvm::SmallVector<llvm::StringRef> pieces;
  llvm::StringRef(text).split(pieces, '.');
  for (llvm::StringRef part : pieces) {
    int64_t v = 0;
    if (part.getAsInteger(10, v))
      el.raise(r, "ValueError", "invalid literal for int() with base 10: '" + part.str() + "'");
    parts.push_back(v);
  }
  return parts;
}

Obj namingContext(const std::string &name) {
  return builtin(name, [name](Elaborator &, CallArgs &) -> Obj {
    return std::make_shared<ContextManagerObj>(name, none());
  });
}

namespace {

/// jax.tree.map(f, tree, *rest), or with `withPath` map_with_path: `f`
/// of each leaf (after its key path), and the leaves of `rest` at the same
/// places, in `tree`'s structure.
Obj mapOverLeaves(Elaborator &el, CallArgs &args, bool withPath) {
  const char *name = withPath ? "tree_map_with_path" : "tree_map";
  if (args.positional.size() < 2)
    el.fail(args.range, std::string(name) + "(f, tree, *rest) needs a function and a tree");
  std::vector<std::pair<Obj, Obj>> first;
  if (withPath) {
    pytreeLeavesWithPaths(args.positional[1], first);
  } else {
    std::vector<Obj> leaves;
    pytreeLeaves(args.positional[1], leaves);
    for (const Obj &leaf : leaves)
      first.emplace_back(nullptr, leaf);
  }
  std::vector<std::vector<Obj>> rest;
  for (size_t i = 2; i < args.positional.size(); ++i) {
    // `tree` is a prefix of each of them: a leaf of it takes a whole
    // subtree (None included).
    rest.emplace_back();
    if (!pytreeLeavesUpTo(args.positional[1], args.positional[i], rest.back()))
      el.fail(args.rangeOf(i), std::string(name) +
                                   ": this tree does not have the structure of "
                                   "the first tree (" +
                                   name +
                                   "(f, tree, *rest) needs `tree` to be a prefix of each of rest)");
  }
  std::vector<Obj> mapped;
  for (size_t j = 0; j < first.size(); ++j) {
    CallArgs call;
    call.range = args.range;
    if (withPath)
      call.addPositional(first[j].first, args.rangeOf(1));
    call.addPositional(first[j].second, args.rangeOf(1));
    for (size_t i = 0; i < rest.size(); ++i)
      call.addPositional(rest[i][j], args.rangeOf(i + 2));
    mapped.push_back(el.call(args.positional[0], call));
  }
  size_t next = 0;
  return pytreeRebuild(args.positional[1], mapped, next);
}

Obj treeMap(Elaborator &el, CallArgs &args) { return mapOverLeaves(el, args, false); }

std::shared_ptr<NamespaceObj> makeTreeNamespace(const std::string &name, bool prefixed) {
  auto ns = std::make_shared<NamespaceObj>(name);
  auto named = [&](const char *plain) { return (prefixed ? "tree_" : "") + std::string(plain); };
  define(*ns, named("map"), treeMap);
  define(*ns, named("leaves"), [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"tree"}, {"is_leaf", none(), true}});
    std::vector<Obj> leaves;
    pytreeLeaves(a[0], leaves);
    return makeList(leaves);
  });
  // reduce(function, tree, initializer): functools.reduce over the leaves.
  define(*ns, named("reduce"), [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args, {{"function"}, {"tree"}, optionalParam("initializer"), {"is_leaf", none(), true}});
    std::vector<Obj> leaves;
    pytreeLeaves(a[1], leaves);
    size_t first = 0;
    Obj acc = a[2];
    if (!acc) {
      if (leaves.empty())
        el.raise(args.range, "TypeError", "reduce() of empty iterable with no initial value");
      acc = leaves[first++];
    }
    for (size_t i = first; i < leaves.size(); ++i)
      acc = callAt(el, a[0], {acc, leaves[i]}, {}, args.range);
    return acc;
  });
  define(*ns, named("flatten"), [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"tree"}, {"is_leaf", none(), true}});
    std::vector<Obj> leaves;
    pytreeLeaves(a[0], leaves);
    // The "treedef" is the tree itself: tree_unflatten only needs its shape.
    return makeTuple({makeList(leaves), a[0]});
  });
  define(*ns, named("unflatten"), [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"treedef"}, {"leaves"}});
    std::vector<Obj> leaves = el.iterate(a[1], a.range(1));
    std::vector<Obj> old;
    pytreeLeaves(a[0], old);
    if (old.size() != leaves.size())
      el.fail(args.range, "tree_unflatten: the structure has " + std::to_string(old.size()) +
                              " leaves but " + std::to_string(leaves.size()) + " were given");
    size_t next = 0;
    return pytreeRebuild(a[0], leaves, next);
  });
  // [(path, leaf), ...], as tree_leaves_with_path returns them.
  auto leavesWithPaths = [](const Obj &tree) {
    std::vector<std::pair<Obj, Obj>> leaves;
    pytreeLeavesWithPaths(tree, leaves);
    std::vector<Obj> pairs;
    for (auto &[path, leaf] : leaves)
      pairs.push_back(makeTuple({path, leaf}));
    return makeList(pairs);
  };
  define(*ns, named("leaves_with_path"), [leavesWithPaths](Elaborator &el, CallArgs &args) {
    BoundArgs a = el.bind(args, {{"tree"}, {"is_leaf", none(), true}});
    return leavesWithPaths(a[0]);
  });
  define(*ns, named("flatten_with_path"), [leavesWithPaths](Elaborator &el, CallArgs &args) {
    BoundArgs a = el.bind(args, {{"tree"}, {"is_leaf", none(), true}});
    return makeTuple({leavesWithPaths(a[0]), a[0]});
  });
  define(*ns, named("map_with_path"),
         [](Elaborator &el, CallArgs &args) -> Obj { return mapOverLeaves(el, args, true); });
  define(*ns, named("structure"), [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"tree"}, {"is_leaf", none(), true}});
    return a[0];
  });
  return ns;
}

Obj customDerivative(const std::string &kind) {
  return builtin("jax." + kind, [kind](Elaborator &el, CallArgs &args) -> Obj {
    // nondiff_argnames only says which arguments have no gradient: the
    // forward computation pkc compiles does not depend on it.
    BoundArgs a = el.bind(args, {{"fun"},
                                 {"nondiff_argnums", makeTuple({})},
                                 {"nondiff_argnames", makeTuple({}), true}});
    auto f = std::make_shared<CustomDerivativeObj>(kind, a[0]);
    for (const Obj &i : el.iterate(a[1], a.range(1)))
      f->nondiffArgnums.push_back(el.toInt(i, a.range(1), "nondiff_argnums"));
    for (const Obj &name : el.iterate(a[2], a.range(2)))
      el.toStr(name, a.range(2), "nondiff_argnames");
    return f;
  });
}

/// jax.custom_batching.custom_vmap(f): f with a batching rule given by
/// `@f.def_vmap` (tokamax's persistent Mosaic GPU kernels batch their grid
/// this way). A call runs f; under jax.vmap the rule would run instead,
/// which pkc does not do: refused by name there.
Obj customVmap() {
  return builtin("jax.custom_batching.custom_vmap", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"fun"}});
    Obj fun = a[0];
    auto wrapped = std::make_shared<BuiltinObj>(
        "custom_vmap function", [fun](Elaborator &el, CallArgs &call) -> Obj {
          if (!el.activeVmaps().empty())
            el.fail(call.range, "a jax.custom_batching.custom_vmap function under jax.vmap is not "
                                "supported: pkc does not run batching rules");
          return el.call(fun, call);
        });
    wrapped->members["def_vmap"] = builtin("def_vmap", [](Elaborator &el, CallArgs &rule) -> Obj {
      BoundArgs r = el.bind(rule, {{"vmap_rule"}});
      return r[0];
    });
    return wrapped;
  });
}

/// A transformation that leaves the computation pkc compiles as it is:
/// `name(f, ...)`, `@name`, `@name(options...)` and
/// `functools.partial(name, options...)` all give the function itself.
Obj transparentTransform(const std::string &name) {
  return builtin(name, [name](Elaborator &el, CallArgs &args) -> Obj {
    if (!args.positional.empty())
      return args.positional[0];
    return builtin(name, [name](Elaborator &el, CallArgs &inner) -> Obj {
      if (inner.positional.size() != 1)
        el.fail(inner.range, name + "(...) used as a decorator takes the function only");
      return inner.positional[0];
    });
  });
}

} // namespace

void addExtendedDTypes(NamespaceObj &numpy) {
  // JAX's dtypes beyond pkc's: nameable and comparable (`x.dtype in
  // [jnp.int8, jnp.int4]`), an error where a value would need one.
  static const struct {
    const char *name;
    unsigned bits;
    char kind;
  } extended[] = {
      {"int2", 2, 'i'},           {"uint2", 2, 'u'},          {"int4", 4, 'i'},
      {"uint4", 4, 'u'},          {"float4_e2m1fn", 4, 'f'},  {"float8_e3m4", 8, 'f'},
      {"float8_e4m3", 8, 'f'},    {"float8_e4m3fn", 8, 'f'},  {"float8_e4m3fnuz", 8, 'f'},
      {"float8_e4m3b11fnuz", 8, 'f'}, {"float8_e5m2", 8, 'f'}, {"float8_e5m2fnuz", 8, 'f'},
      {"float8_e8m0fnu", 8, 'f'}, {"complex64", 64, 'c'},     {"complex128", 128, 'c'},
  };
  for (const auto &t : extended)
    numpy.members[t.name] = std::make_shared<ExtendedDTypeObj>(t.name, t.bits, t.kind);
}

/// jax.eval_shape(fun, *args, **kwargs): fun traced on stand-ins for the
/// arrays and ShapeDtypeStructs among the arguments, in a scratch module
/// erased afterwards; the shapes and dtypes of what it returns, as
/// ShapeDtypeStructs in the same pytree. The stand-ins are block values,
/// as in a kernel, so that everything a kernel may compute (pltpu.roll,
/// ...) is traced as JAX traces it abstractly; where a shape is symbolic
/// (outside a kernel only) they are full arrays instead, traced as array
/// code.
static Obj evalShape(Elaborator &el, CallArgs &args) {
  if (args.positional.empty())
    el.fail(args.range, "jax.eval_shape needs a function");
  auto shapeOf = [](const Obj &leaf) -> std::optional<std::pair<std::vector<Dim>, DType>> {
    if (auto *spec = llvm::dyn_cast<ShapeDtypeStructObj>(leaf.get()))
      return std::make_pair(spec->shape, spec->dtype);
    if (auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get()))
      return std::make_pair(g->shape, g->dtype);
    if (auto *a = llvm::dyn_cast<ArrayObj>(leaf.get())) {
      std::vector<Dim> dims;
      for (int64_t d : a->shape)
        dims.push_back(Dim{d, {}});
      return std::make_pair(dims, a->dtype);
    }
    return std::nullopt;
  };
  bool symbolic = false;
  auto noteSymbolic = [&](const Obj &leaf) {
    if (auto shape = shapeOf(leaf))
      for (const Dim &d : shape->first)
        symbolic |= !d.isStatic();
  };
  for (size_t i = 1; i < args.positional.size(); ++i)
    forEachLeaf(args.positional[i], noteSymbolic);
  for (const auto &keyword : args.keywords)
    forEachLeaf(keyword.second, noteSymbolic);
  bool asBlocks = !symbolic || el.mode() == EmitMode::Kernel;
  mlir::OpBuilder &b = el.builder();
  mlir::Location at = el.loc(args.range);
  mlir::OwningOpRef<mlir::ModuleOp> scratch = mlir::ModuleOp::create(at);
  mlir::Block *body = scratch->getBody();
  Elaborator::ModeGuard mode(el, asBlocks ? EmitMode::Kernel : EmitMode::Export);
  b.setInsertionPointToEnd(body);
  auto standIn = [&](const Obj &leaf) -> Obj {
    auto shape = shapeOf(leaf);
    if (!shape)
      return Obj(); // mapLeaves goes on into containers; other leaves stay
    const auto &[dims, dtype] = *shape;
    if (!asBlocks)
      return std::make_shared<GlobalArrayObj>(body->addArgument(el.globalType(dims, dtype), at),
                                              dims, dtype, "eval_shape argument");
    std::vector<int64_t> sizes;
    for (const Dim &d : dims) {
      if (!d.isStatic())
        el.fail(args.range, "jax.eval_shape in a kernel needs static shapes, got (" +
                                el.describeDims(dims) + ")");
      sizes.push_back(d.value);
    }
    return el.arrays().wrap(body->addArgument(el.arrays().valueType(sizes, dtype), at), sizes,
                            dtype);
  };
  CallArgs call;
  call.range = args.range;
  call.callee = args.callee;
  for (size_t i = 1; i < args.positional.size(); ++i)
    call.addPositional(mapLeaves(args.positional[i], standIn), args.rangeOf(i));
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    call.keywords.emplace_back(args.keywords[i].first, mapLeaves(args.keywords[i].second, standIn));
    call.keywordRanges.push_back(i < args.keywordRanges.size() ? args.keywordRanges[i]
                                                               : args.range);
  }
  Obj result = el.call(args.positional[0], call);
  return mapLeaves(result, [&](const Obj &leaf) -> Obj {
    if (auto shape = shapeOf(leaf))
      return std::make_shared<ShapeDtypeStructObj>(shape->first, shape->second);
    // Python scalars: JAX's weakly typed 0-d arrays.
    if (llvm::isa<BoolObj>(leaf.get()))
      return std::make_shared<ShapeDtypeStructObj>(std::vector<Dim>{}, DType::Bool);
    if (llvm::isa<IntObj>(leaf.get()))
      return std::make_shared<ShapeDtypeStructObj>(std::vector<Dim>{}, DType::I32);
    if (llvm::isa<FloatObj>(leaf.get()))
      return std::make_shared<ShapeDtypeStructObj>(std::vector<Dim>{}, DType::F32);
    return Obj();
  });
}

void extendJaxNamespace(Elaborator &el, NamespaceObj &n) {
  // Compiling is what pkc does anyway.
  n.members["jit"] = transparentTransform("jax.jit");
  // jax.default_matmul_precision(name): within the `with`, dots without
  // a precision take this one ("float32" and "highest" keep f32 exact).
  define(n, "default_matmul_precision", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"precision"}});
    bool tf32 = tf32Allowed(el, a[0], a.range(0));
    auto context = std::make_shared<ContextManagerObj>("jax.default_matmul_precision", none());
    auto saved = std::make_shared<bool>(true);
    context->enter = [tf32, saved](Elaborator &el) {
      *saved = el.tf32ByDefault;
      el.tf32ByDefault = tf32;
    };
    context->exit = [saved](Elaborator &el) { el.tf32ByDefault = *saved; };
    return context;
  });
  for (const char *name :
       {"named_scope", "ensure_compile_time_eval", "disable_jit", "numpy_dtype_promotion",
        "checking_leaks", "default_device", "log_compiles"})
    n.members[name] = namingContext(std::string("jax.") + name);
  // jax.named_call(fun, name=): a name for profiles; the function unchanged.
  define(n, "named_call", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"fun"}, {"name", none(), true}});
    if (!isCallable(a[0]))
      el.fail(a.range(0), "jax.named_call takes a function, got " + typeName(*a[0]));
    return a[0];
  });
  auto profiler = std::make_shared<NamespaceObj>("jax.profiler");
  profiler->members["TraceAnnotation"] = namingContext("jax.profiler.TraceAnnotation");
  profiler->members["annotate_function"] = builtin(
      "jax.profiler.annotate_function", [](Elaborator &el, CallArgs &args) -> Obj {
        if (args.positional.empty())
          el.fail(args.range, "annotate_function needs a function");
        return args.positional[0];
      });
  n.members["profiler"] = profiler;
  // Rematerialization only changes what a gradient recomputes; pkc
  // compiles the forward computation, which these leave as it is.
  Obj checkpoint = transparentTransform("jax.checkpoint");
  n.members["checkpoint"] = checkpoint;
  n.members["remat"] = checkpoint;
  auto policies = std::make_shared<NamespaceObj>("jax.checkpoint_policies");
  for (const char *policy : {"everything_saveable", "nothing_saveable", "dots_saveable",
                             "checkpoint_dots", "dots_with_no_batch_dims_saveable",
                             "save_anything_except_these_names", "save_only_these_names",
                             "save_any_names_but_these", "save_from_both_policies"})
    policies->members[policy] = builtin(std::string("jax.checkpoint_policies.") + policy,
                                        [](Elaborator &, CallArgs &) -> Obj { return none(); });
  n.members["checkpoint_policies"] = policies;
  auto adCheckpoint = std::make_shared<NamespaceObj>("jax.ad_checkpoint");
  adCheckpoint->members["checkpoint"] = checkpoint;
  adCheckpoint->members["remat"] = checkpoint;
  adCheckpoint->members["checkpoint_policies"] = policies;
  define(*adCheckpoint, "checkpoint_name", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"name"}});
    return a[0];
  });
  n.members["ad_checkpoint"] = adCheckpoint;
  // jax.typing: names for annotations.
  auto typing = std::make_shared<NamespaceObj>("jax.typing");
  for (const char *t : {"ArrayLike", "DTypeLike", "DeviceLike"})
    typing->members[t] = typeMarker(std::string("jax.typing.") + t);
  n.members["typing"] = typing;
  n.members["custom_vjp"] = customDerivative("custom_vjp");
  n.members["custom_jvp"] = customDerivative("custom_jvp");
  auto customBatching = std::make_shared<NamespaceObj>("jax.custom_batching");
  customBatching->members["custom_vmap"] = customVmap();
  n.members["custom_batching"] = customBatching;

  // jax.ShapeDtypeStruct.like(x): x's shape and dtype.
  if (auto *sds = llvm::dyn_cast<BuiltinObj>(n.members["ShapeDtypeStruct"].get()))
    sds->members["like"] = builtin("jax.ShapeDtypeStruct.like", [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"x"}});
      Obj shape = getAttribute(el, a[0], "shape", a.range(0));
      Obj dtype = getAttribute(el, a[0], "dtype", a.range(0));
      return std::make_shared<ShapeDtypeStructObj>(el.toDims(shape, a.range(0), "shape"),
                                                   el.toDType(dtype, a.range(0), "dtype"));
    });

  auto treeUtil = makeTreeNamespace("jax.tree_util", /*prefixed=*/true);
  auto identity = [](const char *name) {
    return builtin(name, [](Elaborator &el, CallArgs &args) -> Obj {
      if (args.positional.empty())
        el.fail(args.range, "a decorator takes the class it registers");
      return args.positional[0];
    });
  };
  treeUtil->members["register_pytree_node_class"] = identity("register_pytree_node_class");
  for (const char *name : {"DictKey", "SequenceKey", "GetAttrKey"})
    treeUtil->members[name] = pytreeKeyClass(name);
  // keystr(path): "['a'][0].b"; simple=True: the keys themselves, joined
  // by `separator`.
  define(*treeUtil, "keystr", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args, {{"keys"}, {"simple", makeBool(false), true}, {"separator", makeStr(""), true}});
    bool simple = el.truthy(a[1], a.range(1));
    std::string separator = el.toStr(a[2], a.range(2), "separator"), out;
    bool first = true;
    for (const Obj &entry : el.iterate(a[0], a.range(0))) {
      auto *k = llvm::dyn_cast<SequenceObj>(entry.get());
      std::string text;
      if (k && k->namedTuple && k->items.size() == 1) {
        const Obj &v = k->items[0];
        const std::string &kind = k->namedTuple->name;
        if (simple)
          text = llvm::isa<StrObj>(v.get()) ? llvm::cast<StrObj>(*v).value : repr(*v);
        else if (kind == "GetAttrKey")
          text = "." + el.toStr(v, a.range(0), "attribute name");
        else
          text = "[" + repr(*v) + "]";
      } else {
        text = llvm::isa<StrObj>(entry.get()) ? llvm::cast<StrObj>(*entry).value : repr(*entry);
      }
      out += (first ? "" : separator) + text;
      first = false;
    }
    return makeStr(out);
  });
  treeUtil->members["register_dataclass"] =
      builtin("register_dataclass", [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"nodetype"},
                                     {"data_fields", none()},
                                     {"meta_fields", none()},
                                     {"drop_fields", makeTuple({})}});
        auto cls = std::dynamic_pointer_cast<ClassObj>(a[0]);
        if (!cls)
          el.fail(a.range(0), "register_dataclass registers a class, got " + typeName(*a[0]));
        if (isNone(a[1]) != isNone(a[2]))
          el.raise(args.range, "TypeError",
                   "register_dataclass: data_fields and meta_fields must both be specified "
                   "when either is specified.");
        std::vector<std::string> data;
        if (!isNone(a[1])) {
          for (const Obj &name : el.iterate(a[1], a.range(1)))
            data.push_back(el.toStr(name, a.range(1), "data field"));
        } else {
          if (!cls->isDataclass)
            el.raise(args.range, "TypeError",
                     "register_dataclass: data_fields and meta_fields are required when "
                     "nodetype is not a dataclass.");
          // A dataclass's fields are data unless field(metadata={"static": True}).
          for (const ClassObj::Field &f : cls->fields())
            if (!f.pytreeStatic)
              data.push_back(f.name);
        }
        cls->pytreeDataFields = std::move(data);
        return cls;
      });
  define(*treeUtil, "register_pytree_node", [](Elaborator &, CallArgs &) -> Obj { return none(); });
  // register_static(cls): cls's instances are pytree nodes without leaves
  // (not leaves themselves, as other objects are), kept whole in the
  // tree's structure: a registered class with no data fields.
  define(*treeUtil, "register_static", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"cls"}});
    auto cls = std::dynamic_pointer_cast<ClassObj>(a[0]);
    if (!cls)
      el.fail(a.range(0), "register_static registers a class, got " + typeName(*a[0]));
    cls->pytreeDataFields = std::vector<std::string>();
    return cls;
  });
  define(*treeUtil, "Partial", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.empty())
      el.fail(args.range, "Partial() needs a function");
    auto p = std::make_shared<PartialObj>();
    p->function = args.positional[0];
    p->args.assign(args.positional.begin() + 1, args.positional.end());
    p->kwargs = args.keywords;
    return p;
  });
  n.members["tree_util"] = treeUtil;
  // Parts of JAX that only run outside kernels, on devices: importing and
  // naming them is fine, using them in a .pk program is an error at that use.
  for (const char *part : {"random", "config", "sharding", "distributed", "export"}) {
    n.members[part] =
        opaqueNamespace(std::string("jax.") + part,
                        std::string("jax.") + part +
                            " runs on devices at run time, outside the kernels pkc compiles");
  }
  // The device a kernel will run on is not known ahead of time. Programs
  // that size a persistent grid by it (JAX's hopper_matmul_mgpu.py:
  // `get_abstract_mesh().abstract_device`, else the default device's
  // `core_count`; transposed_ragged_dot_mgpu.py: `jax.devices()[0]`) see
  // no abstract mesh and an H100 SXM / H200: 132 SMs. The grid still runs
  // anywhere; it fits those devices exactly. What kind of device it is
  // (`device_kind`, `platform`) pkc answers only when the compilation is
  // for one kind (the driver says which): TPU kernels branch on it, and
  // for plain --target=tpu, or for a TPU and a GPU at once, an answer
  // would silently choose for them. A TPU generation's device counts its
  // TensorCores, as JAX's does.
  auto device = std::make_shared<NamespaceObj>("jax.Device");
  device->opaque = true;
  const std::string &kind = el.deviceKind();
  int64_t tpuCores = tpuCoresOfDevice(kind);
  device->why = "pkc compiles ahead of time, for a device it does not see; of a jax.Device it "
                "answers core_count and num_cores (132, an H100 SXM / H200; a TPU's TensorCores "
                "for --target=tpu:GEN) and id (0)" +
                std::string(kind.empty() ? ", and device_kind only when compiling for CUDA targets "
                                           "of one architecture, one TPU generation "
                                           "(--target=tpu:v6e, ...) or running on the "
                                           "interpreter (platform: for targets of one platform)"
                                         : ", device_kind and platform");
  std::string platform = el.platform();
  if (!kind.empty()) {
    device->members["device_kind"] = makeStr(kind);
    if (platform.empty())
      platform = kind == "cpu" ? "cpu" : tpuCores ? "tpu" : "gpu";
    if (std::string cc = computeCapabilityOfDevice(kind); !cc.empty())
      device->members["compute_capability"] = makeStr(cc);
  }
  if (!platform.empty())
    device->members["platform"] = makeStr(platform);
  device->members["core_count"] = makeInt(tpuCores ? tpuCores : 132);
  device->members["num_cores"] = makeInt(tpuCores ? tpuCores : 132);
  device->members["id"] = makeInt(0);
  // jax.default_backend(): the platform of the device above, when known.
  n.members["default_backend"] =
      builtin("jax.default_backend", [device](Elaborator &el, CallArgs &args) -> Obj {
        el.bind(args, {});
        auto platform = device->members.find("platform");
        // (A failed `d.platform` may have left an opaque member behind.)
        if (platform == device->members.end() || !llvm::isa<StrObj>(platform->second.get()))
          el.raise(args.range, "RuntimeError",
                   "jax.default_backend() is answered only when the compilation is for one "
                   "platform: CUDA targets (\"gpu\"), TPU targets (\"tpu\") or the interpreter "
                   "(\"cpu\"); `pkc check` answers it with --target");
        return platform->second;
      });
  for (const char *name : {"devices", "local_devices"})
    n.members[name] = builtin(std::string("jax.") + name,
                              [device](Elaborator &el, CallArgs &args) -> Obj {
                                el.bind(args, {{"backend", none()}});
                                return makeList({device});
                              });
  auto backend = std::make_shared<NamespaceObj>("jax.extend.backend");
  backend->members["get_default_device"] = builtin("jax.extend.backend.get_default_device",
                                                   [device](Elaborator &el, CallArgs &args) -> Obj {
                                                     el.bind(args, {});
                                                     return device;
                                                   });
  auto extend = std::make_shared<NamespaceObj>("jax.extend");
  extend->members["backend"] = backend;
  n.members["extend"] = extend;
  // jax.lib.xla_bridge (older JAX, still in scripts that pick a kernel by
  // platform): get_backend() is the backend of the one device above, whose
  // `platform` is known as jax.default_backend()'s is.
  auto xlaBackend = std::make_shared<NamespaceObj>("jax.lib.xla_bridge.Backend");
  xlaBackend->opaque = true;
  xlaBackend->why = device->why;
  if (auto platform = device->members.find("platform"); platform != device->members.end())
    xlaBackend->members["platform"] = platform->second;
  xlaBackend->members["device_count"] =
      builtin("device_count",
              [](Elaborator &el, CallArgs &args) -> Obj { return el.bind(args, {}), makeInt(1); });
  xlaBackend->members["local_device_count"] = xlaBackend->members["device_count"];
  xlaBackend->members["devices"] = n.members["devices"];
  xlaBackend->members["local_devices"] = n.members["local_devices"];
  auto xlaBridge = std::make_shared<NamespaceObj>("jax.lib.xla_bridge");
  xlaBridge->members["get_backend"] = builtin("jax.lib.xla_bridge.get_backend",
                                              [xlaBackend](Elaborator &el, CallArgs &args) -> Obj {
                                                el.bind(args, {{"platform", none()}});
                                                return xlaBackend;
                                              });
  xlaBridge->members["devices"] = n.members["devices"];
  xlaBridge->members["local_devices"] = n.members["local_devices"];
  xlaBridge->members["default_backend"] = n.members["default_backend"];
  auto lib = std::make_shared<NamespaceObj>("jax.lib");
  lib->members["xla_bridge"] = xlaBridge;
  n.members["lib"] = lib;
  auto *sharding = llvm::cast<NamespaceObj>(n.members["sharding"].get());
  sharding->members["get_abstract_mesh"] =
      builtin("jax.sharding.get_abstract_mesh", [](Elaborator &el, CallArgs &args) -> Obj {
        el.bind(args, {});
        auto mesh = std::make_shared<NamespaceObj>("jax.sharding.AbstractMesh");
        mesh->members["abstract_device"] = none();
        mesh->members["empty"] = makeBool(true);
        mesh->members["axis_names"] = makeTuple({});
        mesh->members["size"] = makeInt(1);
        return mesh;
      });
  define(n, "eval_shape", evalShape);
  n.members["tree"] = makeTreeNamespace("jax.tree", /*prefixed=*/false);
  // jax.block_until_ready(x) waits for x and returns it: in an export, whose
  // steps run in order, it is x.
  define(n, "block_until_ready", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return a[0];
  });
}

std::shared_ptr<NamespaceObj> makeTestUtilNamespace(Elaborator &el, const Obj &defaultBackend) {
  // JAX's test helpers ask which device the test runs on; kernels of its
  // tests (and modules copied from them) branch on the answers. The rest
  // of the module stays opaque: using it is an error at that use.
  auto ns = opaqueNamespace(
      "jax._src.test_util",
      "module 'jax._src.test_util' is JAX's test harness; pkc answers only its device queries "
      "(test_device_matches, device_under_test, is_device_tpu, is_device_tpu_at_least, "
      "is_device_cuda, is_device_rocm, is_cuda_compute_capability_at_least, "
      "is_cuda_compute_capability_equal)");
  auto platform = [defaultBackend](Elaborator &el, SourceRange r) {
    CallArgs call;
    call.range = r;
    return llvm::cast<StrObj>(*el.call(defaultBackend, call)).value;
  };
  define(*ns, "device_under_test", [platform](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    return makeStr(platform(el, args.range));
  });
  define(*ns, "test_device_matches", [platform](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"device_types"}});
    std::string here = platform(el, args.range);
    for (const Obj &item : el.iterate(a[0], a.range(0))) {
      auto *s = llvm::dyn_cast<StrObj>(item.get());
      if (!s)
        el.fail(a.range(0), "test_device_matches takes a list of device type names");
      if (s->value == here || (here == "gpu" && s->value == "cuda"))
        return makeBool(true);
    }
    return makeBool(false);
  });
  // The TPU generation of device_kind ("TPU v5 lite" -> 5, "TPU7x" -> 7).
  auto generation = [](Elaborator &el, SourceRange r) -> std::pair<int64_t, std::string> {
    llvm::StringRef kind = el.deviceKind();
    if (!kind.starts_with("TPU"))
      return {0, ""};
    llvm::StringRef rest = kind.drop_front(3).ltrim().ltrim('v');
    llvm::StringRef digits = rest.take_while([](char c) { return c >= '0' && c <= '9'; });
    int64_t v = 0;
    digits.getAsInteger(10, v);
    return {v, rest.drop_front(digits.size()).trim().str()};
  };
  define(*ns, "is_device_tpu", [platform, generation](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"version", none()}, {"variant", makeStr("")}});
    if (platform(el, args.range) != "tpu")
      return makeBool(false);
    if (isNone(a[0]))
      return makeBool(true);
    if (el.deviceKind().empty())
      el.raise(args.range, "RuntimeError",
               "is_device_tpu(version) needs one TPU generation (--target=tpu:v6e, ...)");
    auto [v, variant] = generation(el, args.range);
    std::string wanted = llvm::cast<StrObj>(*a[1]).value;
    bool variantMatches =
        wanted.empty() || variant == wanted || (wanted == "e" && variant == "lite");
    return makeBool(v == el.toInt(a[0], a.range(0), "version") && variantMatches);
  });
  define(
      *ns, "is_device_tpu_at_least", [platform, generation](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"version"}});
        if (platform(el, args.range) != "tpu")
          return makeBool(false);
        if (el.deviceKind().empty())
          el.raise(args.range, "RuntimeError",
                   "is_device_tpu_at_least needs one TPU generation (--target=tpu:v6e, ...)");
        return makeBool(generation(el, args.range).first >= el.toInt(a[0], a.range(0), "version"));
      });
  define(*ns, "is_device_cuda", [platform](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    return makeBool(platform(el, args.range) == "gpu");
  });
  define(*ns, "is_device_rocm", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    return makeBool(false);
  });
  for (bool atLeast : {true, false})
    define(*ns,
           atLeast ? "is_cuda_compute_capability_at_least" : "is_cuda_compute_capability_equal",
           [platform, atLeast](Elaborator &el, CallArgs &args) -> Obj {
             BoundArgs a = el.bind(args, {{"capability"}});
             if (platform(el, args.range) != "gpu")
               return makeBool(false);
             std::string current = computeCapabilityOfDevice(el.deviceKind());
             if (current.empty())
               el.raise(args.range, "RuntimeError",
                        "the compute capability is known only when compiling for CUDA targets of "
                        "one architecture");
             std::string wanted = llvm::isa<StrObj>(a[0].get())
                                      ? llvm::cast<StrObj>(*a[0]).value
                                      : std::to_string(el.toInt(a[0], a.range(0), "capability"));
             std::vector<int64_t> have = computeCapabilityParts(el, current, a.range(0)),
                                  want = computeCapabilityParts(el, wanted, a.range(0));
             return makeBool(atLeast ? have >= want : have == want);
           });
  return ns;
}

} // namespace pk::elab
