//===- TpuKernel.cpp - pl.kernel over a TensorCore mesh -------------------===//
//
// `pl.kernel(body, out_type=, mesh=pltpu.create_tensorcore_mesh("core"),
// scratch_types=)` runs `body` once per TensorCore of the chip, with Refs to
// the whole inputs and outputs in HBM, then the scratch. pkc builds the
// pallas_call Pallas builds for it: one program per core, every operand in
// memory space ANY, so the body moves its data itself (async copies,
// pltpu.emit_pipeline). In the body, lax.axis_index(axis) is the program's
// core, lax.axis_size(axis) the number of cores, and
// pltpu.emit_pipeline(core_axis_name=axis) shares its grid among them.
//
// A chip's TensorCore count comes from the device in JAX; pkc compiles for
// no particular chip and takes one core (v5e, v6e) unless num_cores= says.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Tree.h"

namespace pk::elab {

namespace {

constexpr const char *kMeshName = "pltpu.TensorCoreMesh";

struct MeshAxis {
  std::string name;
  int64_t size;
};

MeshAxis meshAxis(const Obj &mesh) {
  const auto &ns = llvm::cast<NamespaceObj>(*mesh);
  return {llvm::cast<StrObj>(*ns.members.at("axis_name")).value,
          llvm::cast<IntObj>(*ns.members.at("size")).value};
}

/// `tree` with every array leaf (or output shape) replaced by `leaf(it)`;
/// None and the pytree nodes (tuples, lists, dicts, registered
/// dataclasses) stay.
Obj mapTree(const Obj &tree, const std::function<Obj(const Obj &)> &leaf) {
  return mapLeaves(tree, [&](const Obj &o) -> Obj {
    if (isNone(o) || llvm::isa<SequenceObj, DictObj>(o.get()) || pytreeDataFields(o))
      return nullptr; // walked by mapLeaves
    return leaf(o);
  });
}

/// `tree` with every array leaf replaced by `spec` (None stays None).
Obj specsLike(const Obj &tree, const Obj &spec) {
  return mapTree(tree, [&](const Obj &) { return spec; });
}

/// The body as the pallas_call's kernel: it first records its core's index
/// (the program id, read before any pipeline renames program ids) for
/// lax.axis_index. Scratch given as a dict reaches the body as keyword
/// arguments, as JAX passes it (`scratchByName`).
Obj bodyOnCores(const Obj &body, MeshAxis axis, bool scratchByName) {
  return std::make_shared<BuiltinObj>(
      "pl.kernel body", [body, axis, scratchByName](Elaborator &el, CallArgs &args) -> Obj {
        if (scratchByName && !args.positional.empty())
          if (auto named = std::dynamic_pointer_cast<DictObj>(args.positional.back())) {
            args.positional.pop_back();
            if (args.positionalRanges.size() > args.positional.size())
              args.positionalRanges.resize(args.positional.size());
            for (const auto &[key, ref] : named->entries) {
              args.keywords.emplace_back(el.toStr(key, args.range, "a scratch name"), ref);
              args.keywordRanges.push_back(args.range);
            }
          }
        CallArgs first;
        first.range = args.range;
        first.addPositional(makeInt(0), args.range);
        std::optional<Elaborator::TpuCoreAxis> saved = el.tpuCoreAxis;
        el.tpuCoreAxis = Elaborator::TpuCoreAxis{axis.name, axis.size, programId(el, first)};
        struct Restore {
          Elaborator &el;
          std::optional<Elaborator::TpuCoreAxis> saved;
          ~Restore() { el.tpuCoreAxis = saved; }
        } restore{el, saved};
        return el.call(body, args);
      });
}

bool namesCoreAxis(Elaborator &el, const Obj &names) {
  if (!el.tpuCoreAxis)
    return false;
  if (auto *s = llvm::dyn_cast<StrObj>(names.get()))
    return s->value == el.tpuCoreAxis->name;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(names.get()); seq && seq->items.size() == 1)
    return namesCoreAxis(el, seq->items[0]);
  return false;
}

} // namespace

void defineTensorCoreMesh(NamespaceObj &tpu) {
  define(tpu, "create_tensorcore_mesh", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"axis_name"}, {"devices", none()}, {"num_cores", none()}});
    std::string name = el.toStr(a[0], a.range(0), "axis_name");
    int64_t cores = isNone(a[2]) ? 1 : el.toInt(a[2], a.range(2), "num_cores");
    if (cores < 1)
      el.fail(a.range(2), "num_cores must be positive, got " + std::to_string(cores));
    auto mesh = std::make_shared<NamespaceObj>(kMeshName);
    mesh->members["axis_name"] = makeStr(name);
    mesh->members["axis_names"] = makeTuple({makeStr(name)});
    mesh->members["size"] = makeInt(cores);
    auto shape = std::make_shared<DictObj>();
    shape->entries.emplace_back(makeStr(name), makeInt(cores));
    mesh->members["shape"] = shape;
    std::vector<Obj> devices;
    for (int64_t i = 0; i < cores; ++i)
      devices.push_back(makeStr("TensorCore(id=" + std::to_string(i) + ")"));
    mesh->members["devices"] = makeTuple(devices);
    return mesh;
  });

  // pltpu.run_on_first_core(core_axis_name): a decorator that runs its
  // function (of no arguments) on core 0 only; pltpu.core_barrier(sem,
  // core_axis_name=): every core waits for the others.
  define(tpu, "run_on_first_core", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"core_axis_name"}});
    Obj axis = a[0];
    SourceRange r = a.range(0);
    return std::make_shared<BuiltinObj>(
        "pltpu.run_on_first_core(...)", [axis, r](Elaborator &el, CallArgs &inner) -> Obj {
          BoundArgs f = el.bind(inner, {{"f"}});
          Obj core = tensorCoreAxisIndex(el, axis);
          if (!core)
            el.fail(r, "pltpu.run_on_first_core names the axis of a TensorCore mesh, inside "
                       "pl.kernel(mesh=pltpu.create_tensorcore_mesh(...)); " +
                           repr(*axis) + " is not one here");
          if (*tensorCoreAxisSize(el, axis) == 1) { // as JAX: just call it
            CallArgs none;
            none.range = inner.range;
            return el.call(f[0], none);
          }
          Obj first = compareOperator(el, ast::CompareOp::Eq, core, makeInt(0), r);
          el.when(first, f[0], inner.range);
          return none();
        });
  });
  define(tpu, "core_barrier", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"sem"}, {"core_axis_name", nullptr, true}});
    std::optional<int64_t> cores = tensorCoreAxisSize(el, a[1]);
    if (!cores)
      el.fail(a.range(1), "pltpu.core_barrier names the axis of a TensorCore mesh, inside "
                          "pl.kernel(mesh=pltpu.create_tensorcore_mesh(...)); " +
                              repr(*a[1]) + " is not one here");
    if (*cores != 1)
      el.fail(args.range, "pltpu.core_barrier across " + std::to_string(*cores) +
                              " TensorCores is not supported yet (pkc's TensorCore meshes "
                              "signal no other core)");
    return none(); // one core: nothing to wait for
  });
}

bool isTensorCoreMesh(const Obj &mesh) {
  auto *ns = llvm::dyn_cast<NamespaceObj>(mesh.get());
  return ns && ns->name == kMeshName;
}

Obj tensorCoreKernel(Elaborator &el, const Obj &mesh, const Obj &body, const Obj &outType,
                     const Obj &scratch, const Obj &compilerParams, const Obj &name,
                     SourceRange r) {
  MeshAxis axis = meshAxis(mesh);
  if (isNone(outType))
    el.fail(r, "pl.kernel needs out_type: the shapes and dtypes of its outputs");
  auto launch = [=](Elaborator &el, const Obj &kernelBody, CallArgs &inputs) -> Obj {
    if (!inputs.keywords.empty())
      el.fail(inputs.range, "a pl.kernel takes its inputs as positional arguments");
    Obj pallas = el.importModule("jax.experimental.pallas", r);
    CallArgs specArgs;
    specArgs.range = r;
    specArgs.keywords.emplace_back("memory_space", getAttribute(el, pallas, "ANY", r));
    specArgs.keywordRanges.push_back(r);
    Obj anySpec = el.call(getAttribute(el, pallas, "BlockSpec", r), specArgs);
    std::vector<Obj> inSpecs;
    for (const Obj &input : inputs.positional)
      inSpecs.push_back(specsLike(input, anySpec));
    CallArgs call;
    call.range = r;
    call.callee = "pl.kernel";
    call.addPositional(bodyOnCores(kernelBody, axis, llvm::isa<DictObj>(scratch.get())), r);
    auto keyword = [&](const char *key, const Obj &value) {
      call.keywords.emplace_back(key, value);
      call.keywordRanges.push_back(r);
    };
    // An output given as a memory space's shape (`pltpu.HBM(shape,
    // dtype)`, `pltpu.VMEM(...)`) lives there: its spec says so.
    auto spaceSpec = [&](MemorySpace space) {
      CallArgs spaceArgs;
      spaceArgs.range = r;
      spaceArgs.keywords.emplace_back("memory_space", std::make_shared<MemorySpaceObj>(space));
      spaceArgs.keywordRanges.push_back(r);
      return el.call(getAttribute(el, pallas, "BlockSpec", r), spaceArgs);
    };
    keyword("out_shape", mapTree(outType, [](const Obj &leaf) -> Obj {
              auto *s = llvm::dyn_cast<ScratchShapeObj>(leaf.get());
              if (!s)
                return leaf;
              std::vector<Dim> dims;
              for (int64_t d : s->shape)
                dims.push_back(Dim{d, {}});
              return std::make_shared<ShapeDtypeStructObj>(dims, s->dtype);
            }));
    keyword("grid", makeTuple({makeInt(axis.size)}));
    keyword("in_specs", makeList(inSpecs));
    keyword("out_specs", mapTree(outType, [&](const Obj &leaf) -> Obj {
              auto *s = llvm::dyn_cast<ScratchShapeObj>(leaf.get());
              return s && s->space != MemorySpace::HBM ? spaceSpec(s->space) : anySpec;
            }));
    if (!isNone(scratch))
      keyword("scratch_shapes", scratch);
    if (!isNone(compilerParams))
      keyword("compiler_params", compilerParams);
    if (!isNone(name))
      keyword("name", name);
    Obj callable = el.call(getAttribute(el, pallas, "pallas_call", r), call);
    return el.call(callable, inputs);
  };
  auto bound = [launch](const Obj &kernelBody) -> Obj {
    return std::make_shared<BuiltinObj>("pl.kernel(...)",
                                        [launch, kernelBody](Elaborator &el, CallArgs &inputs) {
                                          return launch(el, kernelBody, inputs);
                                        });
  };
  if (!isNone(body))
    return bound(body);
  return std::make_shared<BuiltinObj>(
      "pl.kernel(...)", [bound](Elaborator &el, CallArgs &args) -> Obj {
        if (args.positional.size() != 1 || !args.keywords.empty())
          el.fail(args.range, "pl.kernel(...) decorates one kernel function");
        return bound(args.positional[0]);
      });
}

Obj tensorCoreAxisIndex(Elaborator &el, const Obj &names) {
  return namesCoreAxis(el, names) ? el.tpuCoreAxis->index : nullptr;
}

std::optional<int64_t> tensorCoreAxisSize(Elaborator &el, const Obj &names) {
  if (!namesCoreAxis(el, names))
    return std::nullopt;
  return el.tpuCoreAxis->size;
}

} // namespace pk::elab
