//===- MosaicGpuPallasCall.cpp - pallas_call as Mosaic GPU lowers it -----===//
//
// A pallas_call that Mosaic GPU compiles (plgpu.CompilerParams) and that
// uses Mosaic GPU's own memory (plgpu.ACC, plgpu.SMEM, plgpu.Barrier
// scratch, plgpu.BlockSpec transforms / delay_release, which wgmma
// operands need, or blocks placed in plgpu.GMEM / SMEM) becomes what JAX's
// lower_pipelined_jaxpr_to_module makes of it:
//
//   plgpu.kernel over the grid's parallel axes, one Pallas thread per CTA,
//     scratch allocated once for the kernel,
//     plgpu.emit_pipeline over the sequential axes, blocks in SMEM (TMA):
//       kernel(*blocks, *scratch), pl.program_id answering from both.
//
// So such a kernel runs everywhere plgpu.kernel and emit_pipeline run
// (interpreter, simulator, sm_90a), with Mosaic GPU's semantics: the
// scratch lives across the sequential steps of a CTA, a block read by
// wgmma can be released late (delay_release), an output block is stored
// when the index of the next step's block differs. Other pallas_calls
// keep pkc's own GPU lowering (PallasCall.cpp), whose results are the
// same for the array code both accept.
//
//===----------------------------------------------------------------------===//

#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Tree.h"

namespace pk::elab {

namespace {

/// The option `name` of Mosaic GPU's compiler params, or null.
Obj mosaicGpuOption(const PallasCallableObj &call, llvm::StringRef name) {
  auto *p = llvm::dyn_cast_or_null<CompilerParamsObj>(call.compilerParams.get());
  if (!p)
    return nullptr;
  for (const auto &[k, v] : p->options)
    if (k == name)
      return v;
  return nullptr;
}

/// plgpu.CompilerParams (Mosaic GPU's, which say so as their "lowering")
/// or backend="mosaic_gpu".
bool compiledByMosaicGpu(const PallasCallableObj &call) {
  if (call.backend == "mosaic_gpu")
    return true;
  auto *lowering = llvm::dyn_cast_or_null<StrObj>(mosaicGpuOption(call, "lowering").get());
  return lowering && lowering->value == "mosaic_gpu";
}

/// Every leaf of a pytree of specs or scratch requests.
std::vector<Obj> leavesOf(const Obj &tree) {
  std::vector<Obj> leaves;
  if (tree)
    pytreeLeaves(tree, leaves);
  return leaves;
}

bool usesMosaicGpuMemory(const PallasCallableObj &call) {
  for (const Obj &leaf : leavesOf(call.scratchShapes))
    if (llvm::isa<AllocationObj, RefUnionObj>(leaf.get()))
      return true;
  for (const Obj *specs : {&call.inSpecs, &call.outSpecs})
    for (const Obj &leaf : leavesOf(*specs))
      if (auto *spec = llvm::dyn_cast<BlockSpecObj>(leaf.get())) {
        if (spec->mosaicGpu && (!spec->transforms.empty() || spec->delayRelease > 0))
          return true;
        // A block left in GMEM is copied by the kernel itself.
        if (spec->memorySpace == MemorySpace::GPUGlobal ||
            spec->memorySpace == MemorySpace::GPUShared)
          return true;
      }
  return false;
}

/// One BlockSpec per operand: `specs` as a sequence (one per operand, None
/// for a whole-array block), one BlockSpec for all, or None (whole arrays).
std::vector<std::shared_ptr<BlockSpecObj>>
specsPerOperand(Elaborator &el, const Obj &specs, size_t count, SourceRange r, const char *what) {
  auto whole = [&] {
    auto spec = std::make_shared<BlockSpecObj>();
    spec->blockShape = none();
    spec->indexMap = none();
    spec->indexingMode = none();
    spec->range = r;
    return spec;
  };
  std::vector<std::shared_ptr<BlockSpecObj>> out;
  auto take = [&](const Obj &o) {
    if (isNone(o)) {
      out.push_back(whole());
      return;
    }
    auto *spec = llvm::dyn_cast<BlockSpecObj>(o.get());
    if (!spec)
      el.fail(r, std::string("the ") + what +
                     " of a Mosaic GPU pallas_call are BlockSpecs (one "
                     "per array), got " +
                     typeName(*o));
    out.push_back(std::make_shared<BlockSpecObj>(*spec));
  };
  if (!specs || isNone(specs)) {
    for (size_t i = 0; i < count; ++i)
      out.push_back(whole());
  } else if (auto *seq = llvm::dyn_cast<SequenceObj>(specs.get())) {
    if (seq->items.size() != count)
      el.fail(r, std::string(what) + " has " + std::to_string(seq->items.size()) +
                     " BlockSpecs for " + std::to_string(count) + " arrays");
    for (const Obj &item : seq->items)
      take(item);
  } else {
    for (size_t i = 0; i < count; ++i)
      take(specs);
  }
  return out;
}

/// How the pallas_call's grid splits: which axes run as CTAs, which as
/// the steps of the pipeline, and what pl.program_id says at a step.
struct GridSplit {
  std::vector<int64_t> grid;
  std::vector<bool> parallel;

  std::vector<int64_t> axes(bool wantParallel) const {
    std::vector<int64_t> out;
    for (size_t a = 0; a < grid.size(); ++a)
      if (parallel[a] == wantParallel)
        out.push_back(grid[a]);
    return out;
  }
  /// The whole grid's indices: the CTA's along the parallel axes, the
  /// step's along the sequential ones.
  Elaborator::PipelineGrid at(const std::vector<Obj> &ctaIndices,
                              const std::vector<Obj> &stepIndices) const {
    Elaborator::PipelineGrid g;
    size_t c = 0, s = 0;
    for (size_t a = 0; a < grid.size(); ++a) {
      g.indices.push_back(parallel[a] ? ctaIndices[c++] : stepIndices[s++]);
      g.extents.push_back(makeInt(grid[a]));
    }
    return g;
  }
};

GridSplit splitGrid(Elaborator &el, const PallasCallableObj &call) {
  GridSplit split;
  const Obj &grid = call.grid;
  std::vector<Obj> extents = llvm::isa<SequenceObj>(grid.get())
                                 ? llvm::cast<SequenceObj>(*grid).items
                                 : std::vector<Obj>{grid};
  for (const Obj &e : extents) {
    std::optional<int64_t> n = el.staticInt(e);
    if (!n)
      el.fail(call.gridRange, "a Mosaic GPU pallas_call needs a static grid (as in JAX: dynamic "
                              "grid bounds are not supported by Mosaic GPU), got " +
                                  repr(*e));
    if (*n <= 0)
      el.fail(call.gridRange, "grid sizes must be positive, got " + std::to_string(*n));
    split.grid.push_back(*n);
  }
  split.parallel.assign(split.grid.size(), true);
  if (Obj semantics = mosaicGpuOption(call, "dimension_semantics");
      semantics && !isNone(semantics)) {
    std::vector<Obj> items = el.iterate(semantics, call.range);
    if (items.size() != split.grid.size())
      el.fail(call.range, "dimension_semantics has " + std::to_string(items.size()) +
                              " entries for a grid of rank " + std::to_string(split.grid.size()));
    for (size_t a = 0; a < items.size(); ++a) {
      std::string s = el.toStr(items[a], call.range, "dimension_semantics entry");
      if (s != "parallel" && s != "sequential" && s != "arbitrary")
        el.fail(call.range,
                "dimension_semantics entries are 'parallel' or 'sequential', got '" + s + "'");
      split.parallel[a] = s == "parallel";
    }
  }
  return split;
}

/// Mosaic GPU's compiler params without those the pipeline takes.
Obj kernelCompilerParams(const PallasCallableObj &call) {
  auto *p = llvm::dyn_cast_or_null<CompilerParamsObj>(call.compilerParams.get());
  if (!p)
    return none();
  auto params = std::make_shared<CompilerParamsObj>(p->backend);
  for (const auto &[k, v] : p->options)
    if (k != "dimension_semantics" && k != "max_concurrent_steps" && k != "delay_release")
      params->options.emplace_back(k, v);
  return params;
}

} // namespace

bool isMosaicGpuPallasCall(const PallasCallableObj &call) {
  return compiledByMosaicGpu(call) && usesMosaicGpuMemory(call);
}

Obj applyMosaicGpuPallasCall(Elaborator &el, const PallasCallableObj &call, CallArgs &args) {
  SourceRange r = call.range;
  if (call.numScalarPrefetch)
    el.fail(r, "scalar prefetch is not supported in a Mosaic GPU pallas_call (nor by JAX's "
               "Mosaic GPU lowering)");
  if (!el.activeVmaps().empty())
    el.fail(args.range, "jax.vmap over a Mosaic GPU pallas_call is not supported");
  if (auto *aliases = llvm::dyn_cast_or_null<DictObj>(call.aliases.get());
      aliases && !aliases->entries.empty())
    el.fail(call.aliasesRange, "input_output_aliases are not supported in a Mosaic GPU "
                               "pallas_call yet");
  GridSplit split = splitGrid(el, call);
  int64_t maxConcurrent = 1;
  if (Obj steps = mosaicGpuOption(call, "max_concurrent_steps"); steps && !isNone(steps))
    maxConcurrent = el.toInt(steps, r, "max_concurrent_steps");

  size_t numIns = args.positional.size();
  size_t numOuts = 1;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(call.outShape.get()))
    numOuts = seq->items.size();
  auto inSpecs = specsPerOperand(el, call.inSpecs, numIns, call.inSpecsRange, "in_specs");
  auto outSpecs = specsPerOperand(el, call.outSpecs, numOuts, call.outSpecsRange, "out_specs");

  auto mesh = std::make_shared<MeshObj>();
  mesh->range = r;
  mesh->grid = split.axes(true);
  for (size_t a = 0; a < mesh->grid.size(); ++a)
    mesh->gridNames.push_back("pallas_call grid axis " + std::to_string(a));
  mesh->kernelName = call.name;

  Obj userKernel = call.kernel;
  Obj scratch = call.scratchShapes;
  // The kernel: the gmem Refs, then the scratch Refs.
  auto body = std::make_shared<BuiltinObj>(call.name, [=](Elaborator &el, CallArgs &k) -> Obj {
    std::vector<Obj> gmem(k.positional.begin(), k.positional.begin() + numIns + numOuts);
    std::vector<Obj> scratchRefs(k.positional.begin() + numIns + numOuts, k.positional.end());
    auto scratchKeywords = k.keywords;
    std::vector<Obj> ctaIndices;
    for (size_t a = 0; a < mesh->grid.size(); ++a)
      ctaIndices.push_back(meshProgramId(el, static_cast<int64_t>(a), r));

    // Index maps see the whole grid, as the pallas_call's do.
    auto wrapSpec = [&](const std::shared_ptr<BlockSpecObj> &spec) -> Obj {
      if (isNone(spec->indexMap))
        return spec;
      Obj indexMap = spec->indexMap;
      auto wrapped = std::make_shared<BlockSpecObj>(*spec);
      wrapped->indexMap =
          std::make_shared<BuiltinObj>("index_map", [=](Elaborator &el, CallArgs &m) -> Obj {
            Elaborator::PipelineGrid grid = split.at(ctaIndices, m.positional);
            CallArgs mapArgs;
            mapArgs.range = m.range;
            mapArgs.callee = "index_map";
            for (const Obj &index : grid.indices)
              mapArgs.addPositional(index, m.range);
            return el.withPipelineGrid(&grid, [&] { return el.call(indexMap, mapArgs); });
          });
      return wrapped;
    };
    std::vector<Obj> ins, outs;
    for (const auto &s : inSpecs)
      ins.push_back(wrapSpec(s));
    for (const auto &s : outSpecs)
      outs.push_back(wrapSpec(s));

    auto step = std::make_shared<BuiltinObj>(call.name, [=](Elaborator &el, CallArgs &p) -> Obj {
      std::vector<Obj> stepIndices = el.iterate(p.positional[0], p.range);
      Elaborator::PipelineGrid grid = split.at(ctaIndices, stepIndices);
      CallArgs kernelArgs;
      kernelArgs.range = r;
      kernelArgs.callee = call.name;
      for (size_t i = 1; i < p.positional.size(); ++i)
        kernelArgs.addPositional(p.positional[i], r);
      for (const Obj &s : scratchRefs)
        kernelArgs.addPositional(s, r);
      for (const auto &[name, ref] : scratchKeywords) {
        kernelArgs.keywords.emplace_back(name, ref);
        kernelArgs.keywordRanges.push_back(r);
      }
      Obj returned = el.withPipelineGrid(&grid, [&] { return el.call(userKernel, kernelArgs); });
      if (!isNone(returned))
        el.fail(r, "a pallas_call kernel must not return a value (it returned " + repr(*returned) +
                       "); write results to the output Refs");
      return none();
    });

    CallArgs pipelineArgs;
    pipelineArgs.range = r;
    pipelineArgs.callee = "plgpu.emit_pipeline";
    pipelineArgs.addPositional(step, r);
    std::vector<Obj> sequential;
    for (int64_t n : split.axes(false))
      sequential.push_back(makeInt(n));
    for (auto [name, value] : {std::pair<const char *, Obj>{"grid", makeTuple(sequential)},
                               {"in_specs", makeList(ins)},
                               {"out_specs", makeList(outs)},
                               {"max_concurrent_steps", makeInt(maxConcurrent)}}) {
      pipelineArgs.keywords.emplace_back(name, value);
      pipelineArgs.keywordRanges.push_back(r);
    }
    Obj pipeline = emitMosaicGpuPipeline(el, pipelineArgs);
    CallArgs refArgs;
    refArgs.range = r;
    refArgs.callee = "pipeline";
    for (const Obj &ref : gmem)
      refArgs.addPositional(ref, r);
    el.call(pipeline, refArgs);
    return none();
  });

  KernelCallObj kernel;
  kernel.body = body;
  kernel.outShape = call.outShape;
  kernel.scratch = isNone(scratch) ? makeTuple({}) : scratch;
  kernel.compilerParams = kernelCompilerParams(call);
  kernel.mesh = mesh;
  kernel.name = call.name;
  kernel.range = r;
  kernel.outShapeRange = call.outShapeRange;
  kernel.scratchRange = call.scratchRange;
  return applyKernelCall(el, kernel, args);
}

} // namespace pk::elab
