//===- PallasCall.cpp - pallas_call(kernel, ...)(args) -> pk.pallas_call --===//
//
// Normalizes the grid, out_shape, BlockSpecs (both Pallas spellings),
// scratch shapes, aliases and compiler params; traces each index map as an
// affine function of the grid indices when it is one (and into the
// index_map region when it is not); and elaborates the kernel body once,
// with one Ref per operand.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StateRefs.h"
#include "frontend/elab/StaticArray.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace pk::elab {

namespace {

/// One operand of the call (input or output) as the kernel will see it.
struct Operand {
  std::string what; ///< "input 0 ('x')" for messages
  std::vector<Dim> dims; ///< as the program sees them (without vmapped axes)
  DType dtype;
  Obj spec; ///< BlockSpecObj, None, or null (no spec given)
  SourceRange specRange; ///< in_specs / out_specs, or the call without them
  std::vector<BatchAxis> batch; ///< axes mapped by enclosing jax.vmaps

  std::vector<Dim> physicalDims() const {
    GlobalArrayObj a(nullptr, dims, dtype, "");
    a.batch = batch;
    return a.physicalShape();
  }
};

std::vector<Obj> sequenceItems(Elaborator &el, const Obj &o, SourceRange r) {
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get()))
    return seq->items;
  return {o};
}

/// Appends one spec per array leaf of `tree` (an operand's pytree: an
/// array, None, or tuples, lists and dicts of them) from `spec`, the
/// matching part of in_specs / out_specs: a BlockSpec per array, None for
/// a None operand. As older Pallas did, None for an array means the whole
/// array, and None for a tuple of arrays means each whole.
void matchSpecs(Elaborator &el, const Obj &spec, const Obj &tree, const std::string &what,
                std::vector<Obj> &out, SourceRange r) {
  if (isNone(tree)) {
    if (!isNone(spec))
      el.fail(r, what + " is None, so its spec must be None too, got " + repr(*spec));
    return;
  }
  if (auto *seq = llvm::dyn_cast<SequenceObj>(tree.get())) {
    if (isNone(spec)) {
      std::vector<Obj> leaves;
      pytreeLeaves(tree, leaves);
      out.insert(out.end(), leaves.size(), none());
      return;
    }
    auto *specs = llvm::dyn_cast<SequenceObj>(spec.get());
    if (!specs || specs->items.size() != seq->items.size())
      el.fail(r, "the specs of " + what + " (" + repr(*spec) + ") do not match its structure: it is a " +
                     (seq->isList() ? "list" : "tuple") + " of " + std::to_string(seq->items.size()) +
                     ", so give a " + (seq->isList() ? "list" : "tuple") + " of " +
                     std::to_string(seq->items.size()) + " specs");
    for (size_t i = 0; i < seq->items.size(); ++i)
      matchSpecs(el, specs->items[i], seq->items[i], what + "[" + std::to_string(i) + "]", out, r);
    return;
  }
  if (const std::vector<std::string> *fields = pytreeDataFields(tree)) {
    if (isNone(spec)) {
      std::vector<Obj> leaves;
      pytreeLeaves(tree, leaves);
      out.insert(out.end(), leaves.size(), none());
      return;
    }
    const auto &inst = llvm::cast<InstanceObj>(*tree);
    auto *specs = llvm::dyn_cast<InstanceObj>(spec.get());
    if (!specs || specs->cls != inst.cls)
      el.fail(r, "the specs of " + what + " do not match its structure: it is a " + inst.cls->name +
                     ", so give a " + inst.cls->name +
                     " of specs (jax.tree.map over it makes one)");
    for (const std::string &name : *fields) {
      Obj value = inst.get(name), s = specs->get(name);
      matchSpecs(el, s ? s : none(), value ? value : none(), what + "." + name, out, r);
    }
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(tree.get())) {
    std::vector<Obj> leaves;
    if (isNone(spec)) {
      pytreeLeaves(tree, leaves);
      out.insert(out.end(), leaves.size(), none());
      return;
    }
    auto *specs = llvm::dyn_cast<DictObj>(spec.get());
    if (!specs || specs->entries.size() != dict->entries.size())
      el.fail(r, "the specs of " + what + " do not match its structure: give a dict with the same keys");
    // In the order pytreeLeaves visits the keys (sorted).
    for (const auto &[k, v] : sortedEntries(*dict)) {
      Obj s = dictGet(*specs, k);
      if (!s)
        el.fail(r, "the specs of " + what + " have no entry " + repr(*k));
      matchSpecs(el, s, v, what + "[" + repr(*k) + "]", out, r);
    }
    return;
  }
  if (!isNone(spec) && !llvm::isa<BlockSpecObj>(spec.get()))
    el.fail(r, "specs must be BlockSpecs (or None), got " + typeName(*spec) + " for " + what);
  out.push_back(spec);
}

/// The specs of the operands in `trees` (one tree per pallas_call input,
/// or the out_shape tree alone), one per array leaf; null ones when no
/// specs are given. `operand` is "input" or "output".
std::vector<Obj> specsFor(Elaborator &el, const Obj &specs, const std::vector<Obj> &trees,
                          const std::vector<std::string> &names, const char *what,
                          const char *operand, SourceRange r) {
  std::vector<Obj> out;
  if (!specs || isNone(specs)) {
    for (const Obj &t : trees) {
      std::vector<Obj> leaves;
      pytreeLeaves(t, leaves);
      out.insert(out.end(), leaves.size(), nullptr); // no BlockSpecs: whole arrays
    }
    return out;
  }
  auto operands = [&](size_t n) {
    return std::to_string(n) + " " + operand + (n == 1 ? "" : "s");
  };
  std::vector<Obj> items;
  if (llvm::isa<BlockSpecObj>(specs.get())) {
    if (trees.size() != 1)
      el.fail(r, std::string(what) + " is a single BlockSpec but there are " +
                     operands(trees.size()) + "; give a list with one BlockSpec per " + operand);
    items = {specs};
  } else {
    auto *seq = llvm::dyn_cast<SequenceObj>(specs.get());
    if (!seq)
      el.fail(r, std::string(what) + " must be a BlockSpec or a list of BlockSpecs, got " +
                     typeName(*specs));
    items = seq->items;
    if (items.size() != trees.size())
      el.fail(r, std::string(what) + " has " + std::to_string(items.size()) + " BlockSpec" +
                     (items.size() == 1 ? "" : "s") + " but there " +
                     (trees.size() == 1 ? "is " : "are ") + operands(trees.size()) +
                     "; give one BlockSpec per " + operand);
  }
  for (size_t i = 0; i < items.size(); ++i)
    matchSpecs(el, items[i], trees[i], names[i], out, r);
  return out;
}

mlir::Attribute paramAttr(Elaborator &el, const Obj &o, SourceRange r) {
  mlir::OpBuilder &b = el.builder();
  switch (o->kind()) {
  case Object::Kind::Bool:
    return b.getBoolAttr(llvm::cast<BoolObj>(*o).value);
  case Object::Kind::Int:
    return b.getI64IntegerAttr(llvm::cast<IntObj>(*o).value);
  case Object::Kind::Float:
    return b.getF64FloatAttr(llvm::cast<FloatObj>(*o).value);
  case Object::Kind::Str:
    return b.getStringAttr(llvm::cast<StrObj>(*o).value);
  case Object::Kind::Tuple:
  case Object::Kind::List: {
    std::vector<mlir::Attribute> items;
    for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
      items.push_back(paramAttr(el, item, r));
    return b.getArrayAttr(items);
  }
  case Object::Kind::Dict: {
    std::vector<mlir::NamedAttribute> entries;
    for (const auto &[k, v] : llvm::cast<DictObj>(*o).entries)
      if (!isNone(v))
        entries.push_back(b.getNamedAttr(el.toStr(k, r, "compiler parameter name"), paramAttr(el, v, r)));
    return b.getDictionaryAttr(entries);
  }
  default:
    el.fail(r, "compiler parameters must be numbers, strings or tuples of them, got " + repr(*o));
  }
}

/// compiler_params as {tpu = {...}, gpu = {...}}, plus the cost estimate
/// (`cost_estimate = {flops = ..., ...}`) when one is given.
mlir::DictionaryAttr compilerParams(Elaborator &el, const Obj &params, const Obj &costEstimate,
                                    SourceRange r) {
  mlir::OpBuilder &b = el.builder();
  std::vector<mlir::NamedAttribute> backends;
  if (auto *estimate = llvm::dyn_cast_or_null<NamespaceObj>(costEstimate.get())) {
    auto fields = std::make_shared<DictObj>(); // pl.CostEstimate's, as a dict attribute
    for (const auto &[name, value] : estimate->members)
      fields->entries.emplace_back(makeStr(name), value);
    backends.push_back(b.getNamedAttr("cost_estimate", paramAttr(el, fields, r)));
  }
  if (!params || isNone(params))
    return backends.empty() ? mlir::DictionaryAttr() : b.getDictionaryAttr(backends);
  auto addBackend = [&](const std::string &backend,
                        const std::vector<std::pair<std::string, Obj>> &options) {
    std::vector<mlir::NamedAttribute> entries;
    for (const auto &[k, v] : options)
      if (!isNone(v))
        entries.push_back(b.getNamedAttr(k, paramAttr(el, v, r)));
    backends.push_back(b.getNamedAttr(backend.empty() ? "common" : backend, b.getDictionaryAttr(entries)));
  };
  if (auto *p = llvm::dyn_cast<CompilerParamsObj>(params.get())) {
    addBackend(p->backend, p->options);
  } else if (auto *d = llvm::dyn_cast<DictObj>(params.get())) {
    // Older Pallas: dict(mosaic=dict(...)) / dict(triton=dict(...)).
    for (const auto &[k, v] : d->entries) {
      std::string name = el.toStr(k, r, "compiler_params key");
      std::string backend = name == "mosaic" ? "tpu" : name == "triton" ? "gpu" : name;
      std::vector<std::pair<std::string, Obj>> options;
      if (auto *inner = llvm::dyn_cast<DictObj>(v.get()))
        for (const auto &[ik, iv] : inner->entries)
          options.emplace_back(el.toStr(ik, r, "compiler parameter name"), iv);
      else if (auto *p = llvm::dyn_cast<CompilerParamsObj>(v.get()))
        options = p->options;
      else
        el.fail(r, "compiler_params['" + name + "'] must be a dict");
      addBackend(backend, options);
    }
  } else {
    el.fail(r, "compiler_params must be pltpu.CompilerParams(...), plgpu.CompilerParams(...) "
               "or a dict, got " + typeName(*params));
  }
  return b.getDictionaryAttr(backends);
}

/// The call's compiler_params, with `gpu.lowering` saying which GPU
/// compiler JAX hands it to where `backend=` says so (Mosaic GPU's
/// plgpu.CompilerParams say "mosaic_gpu" themselves).
mlir::DictionaryAttr compilerParams(Elaborator &el, const PallasCallableObj &call) {
  mlir::DictionaryAttr attr =
      compilerParams(el, call.compilerParams, call.costEstimate, call.range);
  if (call.backend != "triton" && call.backend != "mosaic_gpu")
    return attr;
  mlir::OpBuilder &b = el.builder();
  mlir::NamedAttrList backends;
  if (attr)
    backends.append(attr.getValue());
  auto gpu = backends.get("gpu") ? llvm::cast<mlir::DictionaryAttr>(backends.get("gpu"))
                                 : b.getDictionaryAttr({});
  mlir::NamedAttrList options(gpu);
  options.set("lowering", b.getStringAttr(call.backend));
  backends.set("gpu", options.getDictionary(b.getContext()));
  return backends.getDictionary(b.getContext());
}

} // namespace

std::vector<BatchAxis> Elaborator::outputBatchAxes(size_t rank, const std::string &what) {
  const auto &levels = activeVmaps();
  std::vector<int> layout(rank, -1); // -1: a program-visible axis; else a level index
  for (size_t l = levels.size(); l-- > 0;) {
    int64_t at = levels[l].outAxis.value_or(0);
    int64_t n = static_cast<int64_t>(layout.size()) + 1;
    if (at < -n || at >= n)
      fail(levels[l].range, "jax.vmap out_axes=" + std::to_string(at) +
                                   " is out of range for " + what + " (rank " +
                                   std::to_string(n) + " under the vmap)");
    layout.insert(layout.begin() + (at < 0 ? at + n : at), static_cast<int>(l));
  }
  std::vector<BatchAxis> batch;
  for (size_t axis = 0; axis < layout.size(); ++axis)
    if (layout[axis] >= 0)
      batch.push_back({levels[layout[axis]].id, axis, levels[layout[axis]].size});
  return batch;
}

std::optional<size_t> Elaborator::namedGridAxis(const Obj &name) const {
  auto *s = llvm::dyn_cast<StrObj>(name.get());
  if (!s || activeMesh || activePipelineGrid)
    return std::nullopt;
  for (size_t axis = 0; axis < gridNames.size(); ++axis)
    if (gridNames[axis] == s->value)
      return axis;
  return std::nullopt;
}

Obj Elaborator::applyPallasCall(const PallasCallableObj &callable, CallArgs &args) {
  SourceRange r = args.range;
  if (emitMode == EmitMode::Kernel || emitMode == EmitMode::IndexMapRegion)
    fail(r, "pallas_call cannot be called inside a kernel");
  if (emitMode != EmitMode::Export)
    fail(r, "pallas_call can only run inside an @export function");
  if (!args.keywords.empty())
    fail(args.rangeOfKeyword(args.keywords[0].first),
         "the inputs of pallas_call(...)(...) are positional, got keyword argument '" +
             args.keywords[0].first + "'; pass the arrays in the order of the kernel's Refs");
  // NumPy arrays among the inputs are constants (jnp.asarray), and so are
  // Python numbers, as JAX makes them (0-d int32, float32 or bool arrays).
  static_numpy::materializeArguments(*this, args);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    Obj number = args.positional[i];
    if (!llvm::isa<IntObj, FloatObj, BoolObj>(number.get()))
      continue;
    SourceRange at = args.rangeOf(i);
    args.positional[i] = arrayCodeAtExport("jnp.asarray", at, {}, [&](std::vector<Obj> &) -> Obj {
      return arrays().toArray(number, at);
    });
  }
  if (isMosaicGpuPallasCall(callable))
    return applyMosaicGpuPallasCall(*this, callable, args);

  // Inputs: the scalar-prefetch ones, then those with blocks.
  size_t prefetch = static_cast<size_t>(callable.numScalarPrefetch);
  if (prefetch > args.positional.size())
    fail(args.range, "the grid spec has num_scalar_prefetch=" + std::to_string(prefetch) +
                         " but pallas_call gets " + std::to_string(args.positional.size()) +
                         " inputs; the scalar-prefetch arrays come first");
  std::vector<Operand> operands;
  std::vector<mlir::Value> inputs;
  std::vector<mlir::Type> prefetchTypes;
  // Each input is a pytree: an array, None (the kernel gets None), or a
  // tuple, list, dict or NamedTuple of arrays (the kernel gets the same
  // structure of Refs). Operands are its array leaves, in order.
  // Scalar-prefetch inputs are pytrees too (megablox passes a tuple of
  // metadata arrays): one SMEM Ref per leaf, in the same structure.
  std::vector<Obj> inputTrees, prefetchTrees;
  std::vector<std::string> inputNames;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    std::vector<Obj> leaves;
    pytreeLeaves(args.positional[i], leaves);
    if (i < prefetch) {
      prefetchTrees.push_back(args.positional[i]);
    } else {
      inputTrees.push_back(args.positional[i]);
      auto *array = llvm::dyn_cast<GlobalArrayObj>(args.positional[i].get());
      inputNames.push_back("input " + std::to_string(i) +
                           (array ? " ('" + array->name + "')" : std::string()));
    }
    for (const Obj &leaf : leaves) {
      auto *array = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
      if (!array)
        fail(args.rangeOf(i), "pallas_call inputs must be arrays (export parameters or results of "
                              "other pallas_calls), None, or tuples, lists and dicts of them; got " +
                                  repr(*leaf));
      inputs.push_back(array->value);
      if (i < prefetch) {
        std::vector<int64_t> shape;
        for (const Dim &d : array->shape) {
          if (!d.isStatic())
            fail(args.rangeOf(i), "scalar-prefetch input " + std::to_string(i) + " ('" + array->name +
                                      "') has the symbolic shape (" + describeDims(array->shape) +
                                      "); it is copied whole into SMEM, so its shape must be static");
          shape.push_back(d.value);
        }
        if (!array->batch.empty())
          fail(args.rangeOf(i), "jax.vmap over a scalar-prefetch input is not supported");
        prefetchTypes.push_back(pk::RefType::get(shape, storageType(ctx, array->dtype),
                                                 pk::MemorySpaceAttr::get(ctx, pk::MemorySpace::SMEM)));
        continue;
      }
      std::string what = "input " + std::to_string(inputs.size() - 1) + " ('" + array->name + "')";
      operands.push_back({what, array->shape, array->dtype, nullptr, callable.inSpecsRange,
                          array->batch});
    }
  }
  size_t numInputs = operands.size();

  // Grid: one leading axis per enclosing jax.vmap, then the program's.
  const std::vector<VmapLevel> &levels = activeVmaps();
  std::vector<Dim> gridDims;
  for (const VmapLevel &level : levels)
    gridDims.push_back(level.size);
  // A grid size computed from data (a 0-d integer array of the export) is
  // a grid bound: the symbol after the export's (and the earlier bounds').
  std::vector<mlir::Value> gridBounds;
  std::vector<bool> dynamicAxes(levels.size(), false);
  std::vector<std::string> names;
  if (!isNone(callable.grid))
    for (Obj g : sequenceItems(*this, callable.grid, r)) {
      // A named axis: `grid=(("i", 2), ...)`.
      names.emplace_back();
      if (auto *named = llvm::dyn_cast<SequenceObj>(g.get());
          named && named->items.size() == 2 && llvm::isa<StrObj>(named->items[0].get())) {
        names.back() = llvm::cast<StrObj>(*named->items[0]).value;
        g = named->items[1];
      }
      if (auto *bound = llvm::dyn_cast<GlobalArrayObj>(g.get())) {
        if (!bound->shape.empty() || !bound->batch.empty() || isFloat(bound->dtype) ||
            bound->dtype == DType::Bool)
          fail(callable.gridRange, std::string("a grid size computed from data must be a scalar "
                                               "integer array; got ") +
                                       numpyName(bound->dtype) + "[" + describeDims(bound->shape) +
                                       "]" + (bound->batch.empty() ? "" : " mapped by jax.vmap"));
        Obj asI32 = g;
        if (bound->dtype != DType::I32)
          asI32 =
              arrayCodeAtExport("int32", callable.gridRange, {g}, [&](std::vector<Obj> &v) -> Obj {
                return arrays().cast(arrays().toArray(v[0], callable.gridRange), DType::I32,
                                     callable.gridRange);
              });
        gridBounds.push_back(llvm::cast<GlobalArrayObj>(asI32.get())->value);
        unsigned symbol = static_cast<unsigned>(symbolNames.size() + gridBounds.size() - 1);
        gridDims.push_back(Dim{0, mlir::getAffineSymbolExpr(symbol, ctx)});
        dynamicAxes.push_back(true);
        continue;
      }
      Dim d = toDim(g, callable.gridRange, "grid size");
      if (!d.isStatic() && !d.expr.isSymbolicOrConstant())
        fail(callable.gridRange, "grid sizes may only depend on symbolic sizes");
      gridDims.push_back(d);
      dynamicAxes.push_back(false);
    }

  // Outputs: the array leaves of out_shape, a pytree like the inputs (a
  // None leaf gives the kernel None and the caller None).
  std::vector<Obj> outShapes;
  pytreeLeaves(callable.outShape, outShapes);
  // No outputs (out_shape=None, or []): JAX runs a kernel whose effects
  // nothing can see. pkc elaborates it, for its errors and static checks,
  // and then drops it.
  bool noOutputs = outShapes.empty();
  for (size_t i = 0; i < outShapes.size(); ++i) {
    const Obj &o = outShapes[i];
    std::vector<Dim> dims;
    DType dtype;
    if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(o.get())) {
      dims = s->shape;
      dtype = s->dtype;
    } else if (auto *g = llvm::dyn_cast<GlobalArrayObj>(o.get())) {
      dims = g->shape;
      dtype = g->dtype;
    } else {
      fail(callable.outShapeRange, "out_shape must be a jax.ShapeDtypeStruct (or a tuple of them), got " +
                               repr(*o));
    }
    for (const Dim &d : dims) {
      if (d.isStatic() && d.value <= 0)
        fail(callable.outShapeRange, "output " + std::to_string(i) + " has a dimension of size " +
                                 std::to_string(d.value) + "; dimensions must be positive");
      if (!d.isStatic() && !d.expr.isSymbolicOrConstant())
        fail(callable.outShapeRange, "output shapes may only depend on symbolic sizes");
    }
    std::string what = "output " + std::to_string(i);
    operands.push_back({what, dims, dtype, nullptr, callable.outSpecsRange,
                        outputBatchAxes(dims.size(), what)});
  }
  size_t numOutputs = operands.size() - numInputs;

  std::vector<Obj> inSpecs = specsFor(*this, callable.inSpecs, inputTrees, inputNames, "in_specs",
                                      "input", callable.inSpecsRange);
  // out_specs matches out_shape's structure; a single output (or a
  // sequence of one) takes a BlockSpec or a list of one.
  Obj outSpecTree = callable.outSpecs;
  Obj outTree = callable.outShape;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(outTree.get());
      seq && seq->items.size() == 1 && outSpecTree && llvm::isa<BlockSpecObj>(outSpecTree.get()))
    outSpecTree = makeTuple({outSpecTree});
  // A tuple, list, dict or registered dataclass of outputs.
  bool outputsAreNode =
      llvm::isa<SequenceObj, DictObj>(outTree.get()) || pytreeDataFields(outTree) != nullptr;
  if (!outputsAreNode)
    if (auto *seq = llvm::dyn_cast_or_null<SequenceObj>(outSpecTree.get());
        seq && seq->items.size() == 1)
      outSpecTree = seq->items[0];
  std::vector<Obj> outSpecs;
  if (!outSpecTree || isNone(outSpecTree) || llvm::isa<BlockSpecObj>(outSpecTree.get()) ||
      !outputsAreNode) {
    outSpecs = specsFor(*this, outSpecTree, {outTree}, {"output 0"}, "out_specs", "output",
                        callable.outSpecsRange);
  } else {
    auto *specSeq = llvm::dyn_cast<SequenceObj>(outSpecTree.get());
    auto *outSeq = llvm::dyn_cast<SequenceObj>(outTree.get());
    if (!specSeq && !llvm::isa<DictObj, InstanceObj>(outSpecTree.get()))
      fail(callable.outSpecsRange, "out_specs must be a BlockSpec or a list of BlockSpecs, got " +
                                       typeName(*outSpecTree));
    if (specSeq && outSeq && specSeq->items.size() != outSeq->items.size())
      fail(callable.outSpecsRange,
           "out_specs has " + std::to_string(specSeq->items.size()) + " BlockSpec" +
               (specSeq->items.size() == 1 ? "" : "s") + " but there " +
               (outSeq->items.size() == 1 ? "is 1 output" : "are " + std::to_string(outSeq->items.size()) + " outputs") +
               "; give one BlockSpec per output");
    matchSpecs(*this, outSpecTree, outTree, "out_shape", outSpecs, callable.outSpecsRange);
  }
  for (size_t i = 0; i < operands.size(); ++i)
    operands[i].spec = i < numInputs ? inSpecs[i] : outSpecs[i - numInputs];

  // Scratch buffers and semaphores (None entries give the kernel None).
  std::vector<mlir::Type> scratch;
  std::vector<Obj> scratchLeaves;
  pytreeLeaves(callable.scratchShapes, scratchLeaves);
  for (const Obj &s : scratchLeaves) {
    if (auto *shape = llvm::dyn_cast<ScratchShapeObj>(s.get())) {
      scratch.push_back(pk::RefType::get(shape->shape, storageType(ctx, shape->dtype),
                                                 pk::MemorySpaceAttr::get(ctx, shape->space)));
      continue;
    }
    auto *alloc = llvm::dyn_cast<AllocationObj>(s.get());
    if ((alloc && alloc->what != AllocationObj::What::Semaphore) || llvm::isa<RefUnionObj>(s.get()))
      fail(callable.scratchRange,
           "Mosaic GPU scratch (plgpu.SMEM, plgpu.ACC, plgpu.Barrier, plgpu.RefUnion) is allocated "
           "by Mosaic "
           "GPU's lowering of pallas_call: pass compiler_params=plgpu.CompilerParams(...) "
           "(from jax.experimental.pallas.mosaic_gpu), as JAX needs it to pick that lowering");
    if (!alloc)
      fail(callable.scratchRange, "scratch_shapes must hold buffers such as pltpu.VMEM((8, 128), "
                           "jnp.float32) or semaphores (pltpu.SemaphoreType.DMA), got " + repr(*s));
    scratch.push_back(alloc->type);
  }

  // The op, created now so that index maps and the kernel can fill its
  // regions; its spec attributes are set once they are known.
  std::vector<mlir::Type> resultTypes;
  std::vector<mlir::Attribute> outShapeAttrs;
  for (size_t i = numInputs; i < operands.size(); ++i) {
    resultTypes.push_back(globalType(operands[i].physicalDims(), operands[i].dtype));
    outShapeAttrs.push_back(mlir::AffineMapAttr::get(symbolicShape(operands[i].physicalDims())));
  }
  std::vector<mlir::Attribute> scratchTypes;
  for (mlir::Type t : scratch)
    scratchTypes.push_back(mlir::TypeAttr::get(t));
  std::vector<mlir::AffineExpr> gridSizes;
  for (const Dim &d : gridDims)
    gridSizes.push_back(d.isStatic() ? mlir::getAffineConstantExpr(d.value, ctx) : d.expr);
  mlir::AffineMap gridMap = mlir::AffineMap::get(
      0, static_cast<unsigned>(symbolNames.size() + gridBounds.size()), gridSizes, ctx);
  auto op = pk::PallasCallOp::create(
      b, loc(callable.range), resultTypes, inputs, gridBounds, b.getStringAttr(callable.name),
      mlir::AffineMapAttr::get(gridMap), b.getArrayAttr({}), b.getArrayAttr({}),
      b.getArrayAttr(outShapeAttrs), b.getArrayAttr(scratchTypes), b.getDenseI64ArrayAttr({}),
      compilerParams(*this, callable), nullptr,
      b.getI64IntegerAttr(static_cast<int64_t>(prefetchTypes.size())));
  // jax.vmap's batch axes lead the grid. Backends that schedule axes may
  // want to know which they are (Pallas makes them "parallel" on TPU).
  if (!levels.empty())
    op->setAttr("pk.vmap_axes", b.getI64IntegerAttr(static_cast<int64_t>(levels.size())));

  std::vector<Dim> savedGrid = grid;
  std::vector<bool> savedDynamic = dynamicGridAxes;
  std::vector<std::string> savedNames = gridNames;
  gridNames = names;
  size_t savedHidden = hiddenGrid;
  grid.assign(gridDims.begin() + static_cast<std::ptrdiff_t>(levels.size()), gridDims.end());
  dynamicGridAxes.assign(dynamicAxes.begin() + static_cast<std::ptrdiff_t>(levels.size()),
                         dynamicAxes.end());
  hiddenGrid = levels.size();
  indexMapRefTypes = prefetchTypes;
  indexMapPrefetchTrees = prefetchTrees;
  std::vector<mlir::Attribute> specs, pipelineModes;
  bool anyPipelineMode = false;
  for (Operand &o : operands) {
    std::vector<VmappedAxis> vmapped;
    for (const BatchAxis &batch : o.batch) {
      auto level = std::find_if(levels.begin(), levels.end(),
                                [&](const VmapLevel &l) { return l.id == batch.level; });
      if (level == levels.end())
        fail(r, o.what + " was mapped by a jax.vmap that has returned; pass arrays into "
                         "vmapped functions as arguments");
      vmapped.push_back({batch.axis, static_cast<unsigned>(level - levels.begin())});
    }
    specs.push_back(buildBlockSpec(op, o.what, o.dims, o.spec, gridDims, o.specRange, vmapped));
    // pl.Buffered: how the TPU pipeline buffers the block (Mosaic's
    // pipeline_mode); kept beside the specs for the backends that use it.
    mlir::NamedAttrList mode;
    if (auto *bs = llvm::dyn_cast_or_null<BlockSpecObj>(o.spec.get()); bs && bs->bufferCount) {
      mode.append("buffer_count", b.getI64IntegerAttr(bs->bufferCount));
      if (bs->useLookahead)
        mode.append("use_lookahead", b.getUnitAttr());
      if (!bs->revisit.empty())
        mode.append("revisit", b.getStringAttr(bs->revisit));
    }
    pipelineModes.push_back(mode.getDictionary(ctx));
    anyPipelineMode |= !mode.empty();
  }
  if (anyPipelineMode)
    op->setAttr("pk.pipeline_modes", b.getArrayAttr(pipelineModes));
  op.setInSpecsAttr(b.getArrayAttr(llvm::ArrayRef<mlir::Attribute>(specs).take_front(numInputs)));
  op.setOutSpecsAttr(b.getArrayAttr(llvm::ArrayRef<mlir::Attribute>(specs).drop_front(numInputs)));
  finishIndexMapRegion(op, callable.range);

  // Aliases.
  std::vector<int64_t> aliasPairs;
  if (auto *aliases = llvm::dyn_cast<DictObj>(callable.aliases.get())) {
    for (const auto &[k, v] : aliases->entries) {
      int64_t in = toInt(k, callable.aliasesRange, "input_output_aliases key");
      int64_t out = toInt(v, callable.aliasesRange, "input_output_aliases value");
      size_t numAllInputs = inputs.size();
      if (in < 0 || in >= static_cast<int64_t>(numAllInputs) || out < 0 ||
          out >= static_cast<int64_t>(numOutputs))
        fail(callable.aliasesRange, "input_output_aliases maps input " + std::to_string(in) +
                                 " to output " + std::to_string(out) + ", but there " +
                                 (numAllInputs == 1 ? "is 1 input" : "are " + std::to_string(numAllInputs) + " inputs") +
                                 " and " + std::to_string(numOutputs) +
                                 (numOutputs == 1 ? " output" : " outputs") +
                                 " (both numbered from 0)");
      // Inputs count array leaves, the scalar-prefetch ones first, as in Pallas.
      int64_t prefetchLeaves = static_cast<int64_t>(prefetchTypes.size());
      if (in < prefetchLeaves)
        fail(callable.aliasesRange, "input_output_aliases maps scalar-prefetch input " +
                                        std::to_string(in) + " to an output; that is not supported");
      const Operand &a = operands[in - prefetchLeaves], &o = operands[numInputs + out];
      if (a.dtype != o.dtype || globalType(a.dims, a.dtype) != globalType(o.dims, o.dtype) ||
          symbolicShape(a.dims) != symbolicShape(o.dims))
        fail(callable.aliasesRange, "input_output_aliases maps " + a.what + " (" + shortName(a.dtype) +
                                 "[" + describeDims(a.dims) + "]) to " + o.what + " (" +
                                 shortName(o.dtype) + "[" + describeDims(o.dims) +
                                 "]), which differ in shape or dtype");
      if (symbolicShape(a.physicalDims()) != symbolicShape(o.physicalDims()))
        fail(callable.aliasesRange, "input_output_aliases maps " + a.what + " to " + o.what +
                                        ", but under jax.vmap the input is not mapped along the "
                                        "same axes as the output; map it with in_axes like the "
                                        "output's out_axes");
      aliasPairs.push_back(in); // counts the scalar-prefetch inputs, as in Pallas
      aliasPairs.push_back(out);
    }
  } else if (!isNone(callable.aliases)) {
    fail(callable.aliasesRange, "input_output_aliases must be a dict {input_index: output_index}");
  }
  op.setInputOutputAliases(aliasPairs);

  // The kernel: one Ref per input, output and scratch buffer.
  std::vector<mlir::Type> refTypes = prefetchTypes;
  std::vector<mlir::Location> refLocs;
  for (size_t i = 0; i < operands.size(); ++i) {
    auto spec = llvm::cast<pk::BlockSpecAttr>(specs[i]);
    refTypes.push_back(pk::RefType::get(spec.getKernelShape(), storageType(ctx, operands[i].dtype),
                                        spec.getMemorySpace()));
  }
  for (mlir::Attribute t : scratchTypes)
    refTypes.push_back(llvm::cast<mlir::TypeAttr>(t).getValue());
  refLocs.assign(refTypes.size(), loc(callable.range));
  mlir::Block *kernel;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    kernel = b.createBlock(&op.getKernel(), {}, refTypes, refLocs);
  }
  // The kernel's arguments: the Refs in the structure of the inputs,
  // out_shape and scratch_shapes (a None there is a None argument), as
  // Pallas passes them.
  std::vector<Obj> refs;
  for (size_t i = 0; i < refTypes.size(); ++i) {
    if (llvm::isa<pk::SemaphoreType>(refTypes[i])) {
      refs.push_back(
          std::make_shared<SyncRefObj>(MgpuObject::Which::SemaphoreRef, kernel->getArgument(i)));
      continue;
    }
    auto type = llvm::cast<pk::RefType>(refTypes[i]);
    DType dtype = *dtypeOf(type.getElementType());
    refs.push_back(std::make_shared<RefObj>(kernel->getArgument(i),
                                            std::vector<int64_t>(type.getShape()), dtype));
  }
  CallArgs kernelArgs;
  kernelArgs.range = args.range;
  kernelArgs.callee = callable.name;
  std::vector<int64_t> refOfArgument; ///< per kernel argument, its Ref's index, or -1
  auto addArgument = [&](const Obj &value, int64_t refIndex) {
    kernelArgs.addPositional(value, args.range);
    refOfArgument.push_back(refIndex);
  };
  size_t nextRef = 0;
  for (const Obj &tree : prefetchTrees) {
    size_t first = nextRef;
    Obj structured = pytreeRebuild(tree, refs, nextRef);
    addArgument(structured, llvm::isa<RefObj>(structured.get()) ? static_cast<int64_t>(first) : -1);
  }
  auto rebuild = [&](const Obj &tree, bool splat, bool byKeyword = false) {
    size_t first = nextRef;
    Obj structured = pytreeRebuild(tree, refs, nextRef);
    // scratch_shapes as a dict: Pallas passes its Refs by keyword.
    if (auto *named = llvm::dyn_cast<DictObj>(structured.get()); byKeyword && named) {
      for (const auto &[key, value] : named->entries) {
        kernelArgs.keywords.emplace_back(toStr(key, callable.scratchRange, "scratch name"), value);
        kernelArgs.keywordRanges.push_back(args.range);
      }
      return;
    }
    auto *seq = llvm::dyn_cast<SequenceObj>(structured.get());
    if (splat && seq) {
      size_t at = first;
      for (const Obj &item : seq->items) {
        bool isRef = llvm::isa<RefObj, SyncRefObj>(item.get());
        addArgument(item, isRef ? static_cast<int64_t>(at) : -1);
        std::vector<Obj> leaves;
        pytreeLeaves(item, leaves);
        at += leaves.size();
      }
      return;
    }
    addArgument(structured, llvm::isa<RefObj, SyncRefObj>(structured.get()) ? static_cast<int64_t>(first) : -1);
  };
  for (const Obj &tree : inputTrees)
    rebuild(tree, /*splat=*/false);
  rebuild(callable.outShape, /*splat=*/true);
  if (!isNone(callable.scratchShapes))
    rebuild(callable.scratchShapes, /*splat=*/true, /*byKeyword=*/true);

  // Name the kernel's Refs after its parameters, for readable IR.
  const FunctionObj *kernelFunction = llvm::dyn_cast<FunctionObj>(callable.kernel.get());
  {
    size_t skip = 0;
    std::set<std::string> boundByKeyword;
    if (auto *p = llvm::dyn_cast<PartialObj>(callable.kernel.get())) {
      kernelFunction = llvm::dyn_cast<FunctionObj>(p->function.get());
      skip = p->args.size();
      for (const auto &[name, value] : p->kwargs)
        boundByKeyword.insert(name);
    }
    for (const auto &[name, value] : kernelArgs.keywords)
      boundByKeyword.insert(name);
    if (kernelFunction) {
      // One argument per input, output and scratch buffer: say so when the
      // kernel's parameters do not match, rather than "takes 2 positional
      // arguments but 3 were given" about a call the user never wrote.
      size_t slots = 0, argCount = kernelArgs.positional.size();
      bool variadic = false, tooFew = false;
      for (size_t i = skip; i < kernelFunction->parameters->size(); ++i) {
        const ast::Parameter &param = (*kernelFunction->parameters)[i];
        if (param.kind == ast::Parameter::Kind::VarPositional)
          variadic = true;
        if (param.kind != ast::Parameter::Kind::Positional &&
            param.kind != ast::Parameter::Kind::PositionalOnly)
          continue;
        if (slots++ >= argCount && !kernelFunction->defaults[i] && !boundByKeyword.count(param.name))
          tooFew = true;
      }
      if ((!variadic && argCount > slots) || tooFew) {
        std::string passed = std::to_string(numInputs) + " input" + (numInputs == 1 ? "" : "s") +
                             ", " + std::to_string(numOutputs) + " output" +
                             (numOutputs == 1 ? "" : "s");
        if (prefetch)
          passed = std::to_string(prefetch) + " scalar-prefetch, " + passed;
        if (!scratch.empty())
          passed += ", " + std::to_string(scratch.size()) + " scratch buffer" +
                    (scratch.size() == 1 ? "" : "s");
        fail(callable.kernelRange,
             "kernel '" + kernelFunction->name + "' takes " + std::to_string(slots) +
                 " positional parameter" + (slots == 1 ? "" : "s") + " but pallas_call passes " +
                 std::to_string(argCount) + " Ref" + (argCount == 1 ? "" : "s") + " (" + passed +
                 "); a kernel takes one Ref per " + (prefetch ? "scalar-prefetch array, " : "") +
                 "input, output and scratch buffer, in that order");
      }
      std::vector<std::string> names(refTypes.size());
      size_t argument = 0;
      for (size_t i = skip; i < kernelFunction->parameters->size() && argument < refOfArgument.size();
           ++i, ++argument) {
        const ast::Parameter &param = (*kernelFunction->parameters)[i];
        if (param.kind != ast::Parameter::Kind::Positional &&
            param.kind != ast::Parameter::Kind::PositionalOnly)
          break;
        if (refOfArgument[argument] >= 0)
          names[refOfArgument[argument]] = param.name;
      }
      std::vector<llvm::StringRef> nameRefs(names.begin(), names.end());
      op.setKernelArgNamesAttr(b.getStrArrayAttr(nameRefs));
    }
  }
  {
    ModeGuard mode(*this, EmitMode::Kernel);
    b.setInsertionPointToEnd(kernel);
    Obj returned = call(callable.kernel, kernelArgs);
    if (!isNone(returned)) {
      // Blame the kernel's `return` (or a lambda kernel's body).
      SourceRange at = kernelFunction && kernelFunction->lambdaBody
                           ? kernelFunction->lambdaBody->range()
                           : lastJumpRange();
      CallScope inKernel(*this, kernelArgs.range, callable.name);
      fail(at.isValid() ? at : callable.range,
           "a kernel must not return a value (it returned " + repr(*returned) +
               "); write results to the output Refs instead");
    }
    pk::YieldOp::create(b, loc(callable.range));
  }
  grid = savedGrid;
  dynamicGridAxes = savedDynamic;
  gridNames = savedNames;
  hiddenGrid = savedHidden;

  // Refs of whole arrays the kernel used became operands; their outputs
  // come first.
  op = finishStateOperands(*this, op);
  unsigned stateOutputs = op.getNumResults() - static_cast<unsigned>(numOutputs);
  if (noOutputs) {
    if (!stateOutputs)
      op.erase();
    size_t none = 0;
    return pytreeRebuild(callable.outShape, {}, none);
  }
  // The results, in out_shape's structure.
  std::vector<Obj> results;
  for (size_t i = 0; i < numOutputs; ++i) {
    const Operand &o = operands[numInputs + i];
    auto result = std::make_shared<GlobalArrayObj>(op.getResult(stateOutputs + i), o.dims, o.dtype,
                                                   callable.name + " output " + std::to_string(i));
    result->batch = o.batch;
    results.push_back(result);
  }
  size_t nextResult = 0;
  return pytreeRebuild(callable.outShape, results, nextResult);
}

mlir::Attribute Elaborator::buildBlockSpec(pk::PallasCallOp op, const std::string &what,
                                           const std::vector<Dim> &dims, const Obj &specObj,
                                           const std::vector<Dim> &gridDims, SourceRange callRange,
                                           llvm::ArrayRef<VmappedAxis> vmapped) {
  size_t rank = dims.size();
  auto *spec = specObj ? llvm::dyn_cast<BlockSpecObj>(specObj.get()) : nullptr;
  SourceRange r = spec ? spec->range : callRange;
  std::vector<int64_t> blockShape(rank, 1), low(rank, 0), high(rank, 0);
  std::vector<pk::BlockDimKind> kinds(rank, pk::BlockDimKind::Blocked);

  auto wholeArray = [&](const char *why) {
    for (size_t d = 0; d < rank; ++d) {
      if (!dims[d].isStatic())
        fail(r, what + " has " + why + ", so its block is the whole array, but dimension " +
                    std::to_string(d) + " (" + describeDims({dims[d]}) +
                    ") is symbolic; give a BlockSpec with a static block_shape, or fix the size "
                    "with -D");
      if (dims[d].value <= 0)
        fail(r, what + " has " + why + ", so its block is the whole array, but dimension " +
                    std::to_string(d) + " has size " + std::to_string(dims[d].value) +
                    "; zero-size blocks are not supported (give a BlockSpec and a grid, or a "
                    "non-empty array)");
      blockShape[d] = dims[d].value;
    }
  };
  if (!spec) {
    wholeArray(specObj ? "a None BlockSpec" : "no BlockSpec");
  } else if (isNone(spec->blockShape)) {
    wholeArray("block_shape=None");
  } else {
    std::vector<Obj> entries = llvm::cast<SequenceObj>(*spec->blockShape).items;
    if (entries.size() != rank)
      fail(r, "block_shape " + repr(*spec->blockShape) + " has " + std::to_string(entries.size()) +
                  (entries.size() == 1 ? " dimension" : " dimensions") + " but " + what + " has " +
                  std::to_string(rank) + " (shape (" + describeDims(dims) +
                  (rank == 1 ? ",))" : "))") + "; give one block dimension per array dimension");
    for (size_t d = 0; d < rank; ++d) {
      const Obj &e = entries[d];
      if (isNone(e)) {
        kinds[d] = pk::BlockDimKind::Squeezed;
        continue;
      }
      if (auto *bd = llvm::dyn_cast<BlockDimObj>(e.get())) {
        switch (bd->which) {
        case BlockDimObj::Which::Squeezed:
          kinds[d] = pk::BlockDimKind::Squeezed;
          continue;
        case BlockDimObj::Which::Blocked:
          blockShape[d] = bd->size;
          break;
        case BlockDimObj::Which::Element:
          kinds[d] = pk::BlockDimKind::Element;
          blockShape[d] = bd->size;
          low[d] = bd->low;
          high[d] = bd->high;
          break;
        case BlockDimObj::Which::BoundedSlice:
          fail(r, "pl.BoundedSlice block dimensions are taken by pltpu.emit_pipeline, not by "
                  "pallas_call (as in Pallas)");
        }
      } else if (llvm::isa<SymIntObj>(e.get())) {
        fail(r, "block dimension " + std::to_string(d) + " of " + what + " is " + repr(*e) +
                    ", which depends on a symbolic size; block shapes must be static, so choose "
                    "a fixed block size (the grid can be symbolic)");
      } else {
        blockShape[d] = toInt(e, r, "block dimension");
      }
      if (blockShape[d] <= 0)
        fail(r, "block dimension " + std::to_string(d) + " of " + what + " must be positive, got " +
                    std::to_string(blockShape[d]));
      if (low[d] < 0 || high[d] < 0)
        fail(r, "padding must not be negative");
    }
    if (auto *mode = llvm::dyn_cast<IndexingModeObj>(spec->indexingMode.get()); mode && mode->unblocked) {
      if (!mode->padding.empty() && mode->padding.size() != rank)
        fail(r, "pl.Unblocked padding has " + std::to_string(mode->padding.size()) +
                    " entries but " + what + " has rank " + std::to_string(rank));
      for (size_t d = 0; d < rank; ++d) {
        if (kinds[d] == pk::BlockDimKind::Squeezed)
          continue;
        kinds[d] = pk::BlockDimKind::Element;
        if (!mode->padding.empty()) {
          low[d] = mode->padding[d].first;
          high[d] = mode->padding[d].second;
        }
      }
    }
  }

  // A block is one kernel value; past 2^26 elements no backend (nor the
  // interpreter, in memory) can hold it, and it is surely a mistake.
  constexpr int64_t kMaxBlockElements = int64_t(1) << 26;
  int64_t elements = 1;
  for (int64_t d : blockShape) {
    if (d > kMaxBlockElements || elements > kMaxBlockElements / d)
      fail(r, "the block of " + what + " has more than 2^26 elements; choose smaller blocks (or "
              "a grid) so that one block fits in a kernel");
    elements *= d;
  }

  // The index map: affine when it is, computed in the index_map region
  // when it is not.
  mlir::AffineMap map;
  Obj indexMap = spec ? spec->indexMap : none();
  unsigned numSymbols = static_cast<unsigned>(symbolNames.size());
  size_t hidden = static_cast<size_t>(hiddenGrid); // leading grid axes added by jax.vmap
  size_t visibleGrid = gridDims.size() - hidden;
  size_t firstComputed = computedIndices.size();
  if (isNone(indexMap)) {
    std::vector<mlir::AffineExpr> zeros(rank, mlir::getAffineConstantExpr(0, ctx));
    map = mlir::AffineMap::get(static_cast<unsigned>(gridDims.size()), numSymbols, zeros, ctx);
  } else {
    if (auto *f = llvm::dyn_cast<FunctionObj>(indexMap.get())) {
      // As Python binds them: the required parameters, up to all of them.
      size_t positional = 0, withDefaults = 0;
      bool variadic = false;
      for (const ast::Parameter &p : *f->parameters) {
        if (p.kind == ast::Parameter::Kind::VarPositional)
          variadic = true;
        else if (p.kind == ast::Parameter::Kind::Positional ||
                 p.kind == ast::Parameter::Kind::PositionalOnly)
          ++(f->defaults[&p - &(*f->parameters)[0]] ? withDefaults : positional);
      }
      size_t refs = indexMapPrefetchTrees.size(), given = visibleGrid + refs;
      if (!variadic && (given < positional || given > positional + withDefaults))
        fail(r, "the index_map of " + what + " takes " + std::to_string(positional) +
                    (positional == 1 ? " argument" : " arguments") + " but the grid has " +
                    std::to_string(visibleGrid) +
                    (visibleGrid == 1 ? " dimension" : " dimensions") +
                    (refs ? " and there are " + std::to_string(refs) + " scalar-prefetch arrays"
                          : std::string()) +
                    "; it receives one index per grid dimension" +
                    (refs ? ", then the scalar-prefetch Refs" : ""));
    }
    auto results = [&](const Obj &value) {
      std::vector<Obj> items = llvm::isa<SequenceObj>(value.get())
                                   ? llvm::cast<SequenceObj>(*value).items
                                   : std::vector<Obj>{value};
      if (items.size() != rank)
        fail(r, "the index_map of " + what + " returns " + std::to_string(items.size()) +
                    (items.size() == 1 ? " index" : " indices") + " but the block has rank " +
                    std::to_string(rank) + "; return one block index per dimension");
      return items;
    };
    try {
      ModeGuard mode(*this, EmitMode::IndexMapAffine);
      CallArgs mapArgs;
      mapArgs.range = r;
      mapArgs.callee = "index_map";
      for (size_t g = hidden; g < gridDims.size(); ++g)
        mapArgs.addPositional(makeSymbolic(mlir::getAffineDimExpr(static_cast<unsigned>(g), ctx)), r);
      // Reading a scalar-prefetch Ref is not affine: it sends the map to
      // the index_map region.
      std::vector<Obj> leaves;
      for (mlir::Type t : indexMapRefTypes)
        leaves.push_back(prefetchRef(mlir::Value(), t));
      addPrefetchArguments(mapArgs, leaves, r);
      std::vector<mlir::AffineExpr> exprs;
      for (const Obj &item : results(call(indexMap, mapArgs))) {
        if (auto *s = llvm::dyn_cast<SymIntObj>(item.get()))
          exprs.push_back(s->expr);
        else if (std::optional<int64_t> c = staticInt(item))
          exprs.push_back(mlir::getAffineConstantExpr(*c, ctx));
        else
          throw NotAffine{r};
      }
      map = mlir::AffineMap::get(static_cast<unsigned>(gridDims.size()), numSymbols, exprs, ctx);
    } catch (const NotAffine &) {
      // Not affine: compute the indices with ops in the index_map region.
      ModeGuard mode(*this, EmitMode::IndexMapRegion);
      mlir::Block *block = indexMapBlock(op, gridDims.size());
      b.setInsertionPointToEnd(block);
      CallArgs mapArgs;
      mapArgs.range = r;
      mapArgs.callee = "index_map";
      for (size_t g = hidden; g < gridDims.size(); ++g)
        mapArgs.addPositional(arrays().wrap(block->getArgument(g), {}, DType::I32), r);
      std::vector<Obj> leaves;
      for (size_t p = 0; p < indexMapRefTypes.size(); ++p)
        leaves.push_back(prefetchRef(block->getArgument(gridDims.size() + p), indexMapRefTypes[p]));
      addPrefetchArguments(mapArgs, leaves, r);
      for (const Obj &item : results(call(indexMap, mapArgs))) {
        ArrayPtr a = arrays().toArray(item, r);
        if (a->rank() != 0 || isFloat(a->dtype) || a->dtype == DType::Bool)
          fail(r, "the index_map of " + what + " must return integer scalars");
        computedIndices.push_back(arrays().cast(a, DType::I32, r)->value);
      }
    }
  }

  // Axes mapped by jax.vmap: squeezed, at the index of their grid axis.
  for (const VmappedAxis &v : vmapped) {
    auto at = static_cast<std::ptrdiff_t>(v.axis);
    blockShape.insert(blockShape.begin() + at, 1);
    kinds.insert(kinds.begin() + at, pk::BlockDimKind::Squeezed);
    low.insert(low.begin() + at, 0);
    high.insert(high.begin() + at, 0);
    if (map) {
      std::vector<mlir::AffineExpr> exprs(map.getResults().begin(), map.getResults().end());
      exprs.insert(exprs.begin() + at, mlir::getAffineDimExpr(v.gridAxis, ctx));
      map = mlir::AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs, ctx);
    } else {
      computedIndices.insert(computedIndices.begin() + static_cast<std::ptrdiff_t>(firstComputed) + at,
                             indexMapBlock(op, gridDims.size())->getArgument(v.gridAxis));
    }
  }

  mlir::Attribute memorySpace;
  if (spec && spec->memorySpace)
    memorySpace = pk::MemorySpaceAttr::get(ctx, *spec->memorySpace);
  return pk::BlockSpecAttr::get(ctx, blockShape, kinds, low, high, map, memorySpace);
}

void Elaborator::addPrefetchArguments(CallArgs &mapArgs, const std::vector<Obj> &leaves,
                                      SourceRange r) {
  size_t next = 0;
  for (const Obj &tree : indexMapPrefetchTrees)
    mapArgs.addPositional(pytreeRebuild(tree, leaves, next), r);
}

Obj Elaborator::prefetchRef(mlir::Value value, mlir::Type type) {
  auto ref = llvm::cast<pk::RefType>(type);
  return std::make_shared<RefObj>(value, std::vector<int64_t>(ref.getShape()),
                                  *dtypeOf(ref.getElementType()));
}

mlir::Block *Elaborator::indexMapBlock(pk::PallasCallOp op, size_t gridRank) {
  mlir::Region &region = op.getIndexMap();
  if (!region.empty())
    return &region.front();
  mlir::OpBuilder::InsertionGuard guard(b);
  std::vector<mlir::Type> types(gridRank, b.getI32Type());
  types.insert(types.end(), indexMapRefTypes.begin(), indexMapRefTypes.end());
  std::vector<mlir::Location> locs(types.size(), op.getLoc());
  return b.createBlock(&region, {}, types, locs);
}

void Elaborator::finishIndexMapRegion(pk::PallasCallOp op, SourceRange r) {
  if (op.getIndexMap().empty())
    return;
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&op.getIndexMap().front());
  pk::YieldOp::create(b, loc(r), computedIndices);
  computedIndices.clear();
}

} // namespace pk::elab
