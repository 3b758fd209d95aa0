//===- BuiltinsMosaicGpu.cpp - jax.experimental.pallas.mosaic_gpu ---------===//
//
// The `plgpu` namespace of the Mosaic GPU programming model: memory spaces
// and allocation requests (SMEM, Barrier, ACC, semaphores), transforms,
// layouts, meshes, plgpu.kernel and plgpu.BlockSpec, plus the names the
// seed documents that pkc cannot give a meaning yet (parts of Blackwell,
// multi-device memory), each rejected by name. The ops themselves are in
// MosaicGpuMemory.cpp, MosaicGpuTensorMemory.cpp, MosaicGpuKernel.cpp and
// MosaicGpuPipeline.cpp.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"
#include "ir/MosaicGpuRules.h"
#include "ir/SmemTransforms.h"
#include "support/ShapeText.h"

namespace pk::elab {

namespace {

mlir::MLIRContext *ctxOf(Elaborator &el) { return &el.context(); }

/// A name of the seed's API that pkc rejects: calling it, or reading it
/// where a value is needed, reports `why`.
Obj unsupported(const std::string &name, const std::string &why) {
  auto builtin =
      std::make_shared<BuiltinObj>(name, [name, why](Elaborator &el, CallArgs &args) -> Obj {
        el.fail(args.range, name + " is not supported: " + why);
      });
  builtin->unsupportedBecause = why;
  return builtin;
}

const char *kBlackwell =
    "pkc has Blackwell's tcgen05_mma, tcgen05_commit_arrive, TMEM loads and stores and cluster "
    "launch control (--target=cuda:sm_100a), not yet this part of it (copies into tensor "
    "memory, Mosaic GPU's tcgen05 register layouts)";
const char *kAmpereMma =
    "Mosaic GPU's Ampere MMA (plgpu.mma and its MMA_* layouts, from JAX 0.11) is not modelled: "
    "pkc follows JAX 0.10.2's Mosaic GPU, whose kernels use plgpu.wgmma (sm_90a) or "
    "plgpu.tcgen05_mma (sm_100a)";
const char *kMultiDevice =
    "it addresses the memory of other devices (NVLINK, multimem); pkc compiles kernels for one "
    "device";

std::vector<int64_t> positiveShape(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  std::vector<int64_t> shape = el.toShape(o, r, what);
  for (int64_t d : shape)
    if (d <= 0)
      el.fail(r, std::string(what) + " dimensions must be positive, got " + shapeText(shape));
  return shape;
}

/// The transforms argument: a tuple of plgpu transforms.
mlir::ArrayAttr transformList(Elaborator &el, const Obj &o, SourceRange r) {
  if (!o || isNone(o))
    return nullptr;
  std::vector<mlir::Attribute> attrs;
  for (const Obj &t : el.iterate(o, r)) {
    auto *transform = llvm::dyn_cast<TransformObj>(t.get());
    if (!transform)
      el.fail(r, "transforms must be plgpu.TilingTransform, plgpu.SwizzleTransform or "
                 "plgpu.TransposeTransform objects, got " +
                     typeName(*t));
    attrs.push_back(transform->attr);
  }
  if (attrs.empty())
    return nullptr;
  return mlir::ArrayAttr::get(ctxOf(el), attrs);
}

Obj barrierAllocation(Elaborator &el, CallArgs &args, bool cluster) {
  std::vector<Param> params{{"num_arrivals", makeInt(1), true},
                            {"num_barriers", makeInt(1), true},
                            {"orders_tensor_core", makeBool(false), true}};
  if (cluster) {
    params.insert(params.begin(), Param{"collective_axes", nullptr, true});
    params.push_back(Param{"leader_tracked", makeBool(false), true});
  }
  BoundArgs a = el.bind(args, params);
  size_t at = cluster ? 1 : 0;
  int64_t arrivals = el.toInt(a[at], a.range(at), "num_arrivals");
  if (arrivals < 1)
    el.fail(a.range(at),
            "a barrier needs at least one arrival, got num_arrivals=" + std::to_string(arrivals));
  std::vector<int64_t> shape = positiveShape(el, a[at + 1], a.range(at + 1), "num_barriers");
  bool orders = el.truthy(a[at + 2], a.range(at + 2));
  std::vector<mlir::Attribute> axes;
  if (cluster) {
    if (auto *groups = llvm::dyn_cast<SequenceObj>(a[0].get()))
      for (const Obj &group : groups->items)
        if (llvm::isa<SequenceObj>(group.get()))
          el.fail(a.range(0), "groups of axes in a plgpu.ClusterBarrier's collective_axes (" +
                                  repr(*a[0]) +
                                  ") are not supported yet: name each cluster axis once");
    for (const std::string &n : axisNames(el, a[0], a.range(0), "collective_axes"))
      axes.push_back(mlir::StringAttr::get(ctxOf(el), n));
    if (axes.empty())
      el.fail(a.range(0), "plgpu.ClusterBarrier needs collective_axes: the cluster axes whose "
                          "CTAs it synchronizes");
    if (el.truthy(a[4], a.range(4)))
      el.fail(a.range(4), "plgpu.ClusterBarrier(leader_tracked=True) is not supported yet: "
                          "barriers whose arrivals only the cluster's leader CTA tracks are not "
                          "modelled");
  }
  auto type = pk::BarrierType::get(ctxOf(el), shape, arrivals,
                                   mlir::ArrayAttr::get(ctxOf(el), axes), orders);
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Barrier, type);
  alloc->range = args.range;
  return alloc;
}

} // namespace

Obj semaphoreAllocation(Elaborator &el, std::vector<int64_t> shape, pk::SemaphoreKind kind,
                        SourceRange r) {
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Semaphore,
                                               pk::SemaphoreType::get(ctxOf(el), shape, kind));
  alloc->range = r;
  return alloc;
}

namespace {

Obj accumulator(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"shape"}, {"dtype", std::make_shared<DTypeObj>(DType::F32)}});
  std::vector<int64_t> shape = positiveShape(el, a[0], a.range(0), "accumulator shape");
  DType dtype = el.toDType(a[1], a.range(1), "dtype");
  if (shape.size() != 2 || shape[0] % 64 || shape[1] % 8)
    el.fail(a.range(0), "a wgmma accumulator is (m, n) with m a multiple of 64 and n a multiple of "
                        "8, got " +
                            shapeText(shape));
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::I32)
    el.fail(a.range(1), std::string("a wgmma accumulator holds float32, float16 or int32, got ") +
                            numpyName(dtype));
  auto type = pk::RefType::get(shape, storageType(ctxOf(el), dtype),
                               pk::MemorySpaceAttr::get(ctxOf(el), MemorySpace::GPUAccumulator));
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Accumulator, type);
  alloc->range = args.range;
  return alloc;
}

Obj accumulatorInit(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"array"}});
  el.requireKernel(args.range, "plgpu.ACC.init");
  ArrayPtr x = el.arrays().toArray(a[0], a.range(0));
  if (x->rank() != 2 || x->shape[0] % 64 || x->shape[1] % 8)
    el.fail(a.range(0), "plgpu.ACC.init needs an (m, n) array with m a multiple of 64 and n a "
                        "multiple of 8, got shape " +
                            shapeText(x->shape));
  if (x->dtype != DType::F32 && x->dtype != DType::F16 && x->dtype != DType::I32)
    el.fail(a.range(0), std::string("a wgmma accumulator holds float32, float16 or int32, got ") +
                            numpyName(x->dtype));
  auto type = pk::RefType::get(x->shape, storageType(ctxOf(el), x->dtype),
                               pk::MemorySpaceAttr::get(ctxOf(el), MemorySpace::GPUAccumulator));
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Accumulator, type);
  alloc->initialValue = x;
  alloc->range = args.range;
  return alloc;
}

Obj transformBuiltin(const char *name) {
  std::string n = name;
  return std::make_shared<BuiltinObj>("plgpu." + n, [n](Elaborator &el, CallArgs &args) -> Obj {
    mlir::MLIRContext *ctx = ctxOf(el);
    if (n == "SwizzleTransform") {
      BoundArgs a = el.bind(args, {{"swizzle"}});
      int64_t s = el.toInt(a[0], a.range(0), "swizzle");
      if (s != 32 && s != 64 && s != 128)
        el.fail(a.range(0), "SwizzleTransform(" + std::to_string(s) +
                                ") is not supported: the swizzle must be 32, 64 or 128 bytes");
      return std::make_shared<TransformObj>(pk::SwizzleTransformAttr::get(ctx, s));
    }
    BoundArgs a = el.bind(args, {{n == "TransposeTransform" ? "permutation" : "tiling"}});
    std::vector<int64_t> values = el.toShape(a[0], a.range(0), n.c_str());
    if (n == "TransposeTransform") {
      std::vector<int64_t> sorted = values;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<int64_t>(i))
          el.fail(a.range(0), "TransposeTransform needs a permutation, got " + shapeText(values));
      return std::make_shared<TransformObj>(pk::TransposeTransformAttr::get(ctx, values));
    }
    if (values.empty())
      el.fail(a.range(0), "TilingTransform needs a tile shape such as (8, 64)");
    for (int64_t v : values)
      if (v <= 0)
        el.fail(a.range(0), "tile sizes must be positive, got " + shapeText(values));
    return std::make_shared<TransformObj>(pk::TileTransformAttr::get(ctx, values));
  });
}

Obj layoutNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("plgpu.Layout");
  const std::pair<const char *, pk::GpuLayout> layouts[] = {
      {"WGMMA", pk::GpuLayout::WGMMA},
      {"WGMMA_ROW", pk::GpuLayout::WGMMARow},
      {"WGMMA_COL", pk::GpuLayout::WGMMACol},
      {"WGMMA_TRANSPOSED", pk::GpuLayout::WGMMATransposed},
      {"WGMMA_8BIT", pk::GpuLayout::WGMMA8Bit},
      {"WGMMA_UPCAST_2X", pk::GpuLayout::WGMMAUpcast2x},
      {"WGMMA_UPCAST_4X", pk::GpuLayout::WGMMAUpcast4x},
      {"WG_SPLAT", pk::GpuLayout::WGSplat},
      {"WG_STRIDED", pk::GpuLayout::WGStrided},
      {"TILED", pk::GpuLayout::Tiled},
      {"SMEM_GMEM_COPY", pk::GpuLayout::SmemGmemCopy},
      {"TMA_INDICES", pk::GpuLayout::TmaIndices},
      {"TMA_GATHER_INDICES", pk::GpuLayout::TmaIndices},
  };
  for (auto [name, kind] : layouts)
    ns->members[name] = std::make_shared<LayoutObj>(pk::GpuLayoutAttr::get(ctxOf(el), kind),
                                                    std::string("plgpu.Layout.") + name);
  // Register layouts of TMEM loads (plgpu.async_load_tmem(layout=)): a
  // hint there, as pkc chooses the layout; no #pk.layout of their own.
  for (const char *name : {"TCGEN05", "TCGEN05_TRANSPOSED", "TCGEN05_M64_COLLECTIVE",
                           "TCGEN05_TMEM_NATIVE", "TCGEN05_M64_COLLECTIVE_NATIVE"})
    ns->members[name] =
        std::make_shared<LayoutObj>(mlir::Attribute(), std::string("plgpu.Layout.") + name);
  ns->members["TMA_INDICES_4"] = unsupported("plgpu.Layout.TMA_INDICES_4", kBlackwell);
  for (const char *name : {"MMA_LHS", "MMA_RHS", "MMA_ACC"})
    ns->members[name] = unsupported(std::string("plgpu.Layout.") + name, kAmpereMma);
  return ns;
}

Obj mesh(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"grid", makeTuple({}), true},
                               {"grid_names", makeTuple({}), true},
                               {"cluster", makeTuple({}), true},
                               {"cluster_names", makeTuple({}), true},
                               {"num_threads", none(), true},
                               {"thread_name", none(), true},
                               {"kernel_name", none(), true}});
  auto m = std::make_shared<MeshObj>();
  m->range = args.range;
  m->grid = positiveShape(el, a[0], a.range(0), "grid");
  for (const Obj &n : el.iterate(a[1], a.range(1)))
    m->gridNames.push_back(el.toStr(n, a.range(1), "grid axis name"));
  m->cluster = positiveShape(el, a[2], a.range(2), "cluster");
  for (const Obj &n : el.iterate(a[3], a.range(3)))
    m->clusterNames.push_back(el.toStr(n, a.range(3), "cluster axis name"));
  if (m->gridNames.size() != m->grid.size())
    el.fail(a.range(1), "grid_names must name each of the " + std::to_string(m->grid.size()) +
                            " grid axes, got " + std::to_string(m->gridNames.size()) + " names");
  if (m->clusterNames.size() != m->cluster.size())
    el.fail(a.range(3), "cluster_names must name each of the " + std::to_string(m->cluster.size()) +
                            " cluster axes, got " + std::to_string(m->clusterNames.size()) +
                            " names");
  if (m->cluster.size() > 3)
    el.fail(a.range(2), "a cluster has at most 3 axes, got " + shapeText(m->cluster));
  int64_t clusterSize = 1;
  for (int64_t c : m->cluster)
    clusterSize *= c;
  if (clusterSize > 16)
    el.fail(a.range(2), "a cluster has at most 16 CTAs, got " + std::to_string(clusterSize));
  if (isNone(a[4]) != isNone(a[5]))
    el.fail(isNone(a[4]) ? a.range(5) : a.range(4),
            "num_threads and thread_name go together: give both or neither");
  if (!isNone(a[4])) {
    m->numThreads = el.toInt(a[4], a.range(4), "num_threads");
    if (m->numThreads < 1 || m->numThreads > 16)
      el.fail(a.range(4), "num_threads counts Pallas threads (warpgroups of 128 CUDA threads): "
                          "between 1 and 16 per CTA, got " +
                              std::to_string(m->numThreads));
    m->threadName = el.toStr(a[5], a.range(5), "thread_name");
  }
  if (!isNone(a[6]))
    m->kernelName = el.toStr(a[6], a.range(6), "kernel_name");
  std::vector<std::string> all = m->gridNames;
  all.insert(all.end(), m->clusterNames.begin(), m->clusterNames.end());
  if (!m->threadName.empty())
    all.push_back(m->threadName);
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i + 1 < all.size(); ++i)
    if (all[i] == all[i + 1])
      el.fail(args.range, "mesh axis names must be distinct, but '" + all[i] + "' names two axes");
  return m;
}

/// A kernel call once its body is known: `what(body, ...)` gives it at
/// once; `@what(...)` (no body) decorates one.
Obj withBody(Elaborator &el, const std::shared_ptr<KernelCallObj> &call, const Obj &body,
             SourceRange bodyRange, const std::string &what) {
  auto finish = [call, what](Elaborator &el, const Obj &body, SourceRange r) -> Obj {
    if (!llvm::isa<FunctionObj, PartialObj, BuiltinObj>(body.get()))
      el.fail(r, what + "'s body must be a function, got " + typeName(*body));
    auto done = std::make_shared<KernelCallObj>(*call);
    done->body = body;
    if (done->name.empty()) {
      if (auto *f = llvm::dyn_cast<FunctionObj>(body.get()))
        done->name = f->name;
      else if (auto *p = llvm::dyn_cast<PartialObj>(body.get());
               p && llvm::isa<FunctionObj>(p->function.get()))
        done->name = llvm::cast<FunctionObj>(*p->function).name;
      else
        done->name = "kernel";
    }
    return done;
  };
  if (isNone(body)) // @what(out_shape=...): a decorator
    return std::make_shared<BuiltinObj>(
        what + "(...)", [finish, what](Elaborator &el, CallArgs &inner) -> Obj {
          if (inner.positional.size() != 1 || !inner.keywords.empty())
            el.fail(inner.range, what + "(...) decorates one kernel function");
          return finish(el, inner.positional[0], inner.rangeOf(0));
        });
  return finish(el, body, bodyRange);
}

Obj kernel(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"body", none()},
                               {"out_shape", none()},
                               {"out_type", none(), true},
                               {"scratch_types", none(), true},
                               {"scratch_shapes", none(), true},
                               {"compiler_params", none(), true},
                               {"grid", makeTuple({}), true},
                               {"grid_names", makeTuple({}), true},
                               {"cluster", makeTuple({}), true},
                               {"cluster_names", makeTuple({}), true},
                               {"num_threads", none(), true},
                               {"thread_name", none(), true},
                               {"interpret", none(), true},
                               {"kernel_name", none(), true},
                               {"name", none(), true}});
  if (!isNone(a[1]) && !isNone(a[2]))
    el.fail(a.range(2), "give out_shape or out_type, not both (out_type is the newer spelling)");
  if (!isNone(a[3]) && !isNone(a[4]))
    el.fail(a.range(4), "give scratch_shapes or scratch_types, not both");
  auto call = std::make_shared<KernelCallObj>();
  call->range = args.range;
  call->outShape = isNone(a[2]) ? a[1] : a[2];
  call->outShapeRange = isNone(a[2]) ? a.range(1) : a.range(2);
  call->scratch = isNone(a[4]) ? a[3] : a[4];
  call->scratchRange = isNone(a[4]) ? a.range(3) : a.range(4);
  call->compilerParams = a[5];
  CallArgs meshArgs;
  meshArgs.range = args.range;
  const char *meshKeys[] = {"grid",        "grid_names",  "cluster",    "cluster_names",
                            "num_threads", "thread_name", "kernel_name"};
  const size_t meshIndex[] = {6, 7, 8, 9, 10, 11, 13};
  for (size_t i = 0; i < 7; ++i) {
    meshArgs.keywords.emplace_back(meshKeys[i], a[meshIndex[i]]);
    meshArgs.keywordRanges.push_back(a.range(meshIndex[i]));
  }
  call->mesh = std::static_pointer_cast<MeshObj>(mesh(el, meshArgs));
  if (!isNone(a[14]))
    call->name = el.toStr(a[14], a.range(14), "name");
  else if (!call->mesh->kernelName.empty())
    call->name = call->mesh->kernelName;
  return withBody(el, call, a[0], a.range(0), "plgpu.kernel");
}

/// pl.kernel(body, out_type=, mesh=, scratch_types=, compiler_params=,
/// name=): JAX's kernel entry over a mesh. Over a plgpu.Mesh it is
/// plgpu.kernel; over a TensorCore mesh a TPU kernel (TpuKernel.cpp).
Obj plKernel(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"body", none()},
                               {"out_shape", none()},
                               {"mesh", nullptr, true},
                               {"out_type", none(), true},
                               {"scratch_shapes", none(), true},
                               {"scratch_types", none(), true},
                               {"compiler_params", none(), true},
                               {"interpret", none(), true},
                               {"cost_estimate", none(), true},
                               {"debug", none(), true},
                               {"name", none(), true},
                               {"metadata", none(), true}});
  if (!isNone(a[1]) && !isNone(a[3]))
    el.fail(a.range(3), "give out_shape or out_type, not both (out_type is the newer spelling)");
  if (!isNone(a[4]) && !isNone(a[5]))
    el.fail(a.range(5), "give scratch_shapes or scratch_types, not both");
  Obj outType = isNone(a[3]) ? a[1] : a[3];
  SourceRange outRange = isNone(a[3]) ? a.range(1) : a.range(3);
  Obj scratch = isNone(a[5]) ? a[4] : a[5];
  if (isTensorCoreMesh(a[2]))
    return tensorCoreKernel(el, a[2], a[0], outType, scratch, a[6], a[10], args.range);
  // Over a plgpu.WarpMesh (in a Mosaic GPU kernel): the body runs in each
  // warp of the running Pallas thread when called, as pl.core_map's does.
  if (auto *warps = llvm::dyn_cast<WarpMeshObj>(a[2].get())) {
    if (!isNone(outType) || !isNone(scratch))
      el.fail(isNone(outType) ? args.range : outRange,
              "pl.kernel over a plgpu.WarpMesh runs in the warps of the running Pallas thread; "
              "it takes no out_type or scratch_types (write the kernel's Refs)");
    std::string axis = warps->axisName;
    SourceRange r = args.range;
    auto overWarps = [axis, r](Obj body) -> Obj {
      return builtin("pl.kernel(mesh=plgpu.WarpMesh(...))",
                     [axis, r, body](Elaborator &el, CallArgs &call) -> Obj {
                       if (!call.positional.empty() || !call.keywords.empty())
                         el.fail(call.range,
                                 "a pl.kernel over a plgpu.WarpMesh takes no arguments");
                       warpMap(el, axis, body, /*passIndex=*/false, r);
                       return none();
                     });
    };
    if (!isNone(a[0]))
      return overWarps(a[0]);
    return builtin("pl.kernel(mesh=plgpu.WarpMesh(...))",
                   [overWarps](Elaborator &el, CallArgs &inner) -> Obj {
                     if (inner.positional.size() != 1)
                       el.fail(inner.range, "pl.kernel(mesh=...) decorates a kernel function");
                     return overWarps(inner.positional[0]);
                   });
  }
  auto m = std::dynamic_pointer_cast<MeshObj>(a[2]);
  if (!m)
    el.fail(a.range(2), "pl.kernel needs a mesh: plgpu.Mesh(...), plgpu.WarpMesh(...) or "
                        "pltpu.create_tensorcore_mesh(...), got " +
                            typeName(*a[2]));
  auto call = std::make_shared<KernelCallObj>();
  call->range = args.range;
  call->outShape = outType;
  call->outShapeRange = outRange;
  call->scratch = isNone(scratch) ? makeTuple({}) : scratch;
  call->scratchRange = isNone(a[5]) ? a.range(4) : a.range(5);
  call->compilerParams = a[6];
  call->mesh = m;
  if (!isNone(a[10]))
    call->name = el.toStr(a[10], a.range(10), "name");
  else
    call->name = m->kernelName;
  return withBody(el, call, a[0], a.range(0), "pl.kernel");
}

Obj gpuBlockSpec(Elaborator &el, CallArgs &args, NamespaceObj &pl) {
  // plgpu.BlockSpec is pl.BlockSpec plus transforms, delay_release,
  // collective_axes and oob_fill_mode; the rest is bound by pl.BlockSpec.
  Obj transforms, delayRelease, collective;
  SourceRange transformsRange = args.range, delayRange = args.range, collectiveRange = args.range;
  CallArgs rest;
  rest.range = args.range;
  rest.callee = "plgpu.BlockSpec";
  for (size_t i = 0; i < args.positional.size(); ++i)
    rest.addPositional(args.positional[i], args.rangeOf(i));
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    const auto &[name, value] = args.keywords[i];
    SourceRange kr = args.rangeOfKeyword(name);
    if (name == "transforms") {
      transforms = value;
      transformsRange = kr;
    } else if (name == "delay_release") {
      delayRelease = value;
      delayRange = kr;
    } else if (name == "collective_axes") {
      collective = value;
      collectiveRange = kr;
    } else if (name == "oob_fill_mode") {
      // What a block's load reads past its array: zeros in every mode.
      if (!isNone(value))
        checkOobFillMode(el, value, kr, "oob_fill_mode");
    } else {
      rest.keywords.push_back(args.keywords[i]);
      rest.keywordRanges.push_back(kr);
    }
  }
  Obj specObj = el.call(pl.members.at("BlockSpec"), rest);
  auto spec = std::static_pointer_cast<BlockSpecObj>(specObj);
  spec->mosaicGpu = true;
  if (mlir::ArrayAttr list = transformList(el, transforms, transformsRange))
    spec->transforms.assign(list.begin(), list.end());
  if (delayRelease) {
    spec->delayRelease = el.toInt(delayRelease, delayRange, "delay_release");
    if (spec->delayRelease < 0)
      el.fail(delayRange, "delay_release must not be negative");
  }
  if (collective)
    spec->collectiveAxes = axisNames(el, collective, collectiveRange, "collective_axes");
  if (spec->memorySpace && *spec->memorySpace != MemorySpace::GPUShared &&
      *spec->memorySpace != MemorySpace::GPUGlobal)
    el.fail(spec->range, "a plgpu.BlockSpec lives in plgpu.SMEM or plgpu.GMEM");
  return spec;
}

Obj compilerParams(Elaborator &el, CallArgs &args) {
  if (!args.positional.empty())
    el.fail(args.range, "plgpu.CompilerParams takes keyword arguments only");
  static const char *known[] = {"approx_math",
                                "dimension_semantics",
                                "max_concurrent_steps",
                                "unsafe_no_auto_barriers",
                                "reduction_scratch_bytes",
                                "profile_space",
                                "profile_dir",
                                "profile_trace_scope",
                                "lowering_semantics",
                                "delay_release"};
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    const std::string &k = args.keywords[i].first;
    if (std::find(std::begin(known), std::end(known), k) == std::end(known))
      el.fail(args.rangeOfKeyword(k), "plgpu.CompilerParams has no option '" + k +
                                          "' (Mosaic GPU's options: approx_math, "
                                          "dimension_semantics, max_concurrent_steps, ...)");
    if (k == "max_concurrent_steps" &&
        el.toInt(args.keywords[i].second, args.rangeOfKeyword(k), "max_concurrent_steps") < 1)
      el.fail(args.rangeOfKeyword(k), "max_concurrent_steps must be at least 1");
  }
  auto params = std::make_shared<CompilerParamsObj>("gpu");
  for (const auto &[k, v] : args.keywords)
    if (k != "lowering_semantics" && k != "profile_trace_scope")
      params->options.emplace_back(k, v);
  // JAX lowers a pallas_call with these parameters through Mosaic GPU, not
  // Triton: the CUDA backend gives its kernel Mosaic GPU's float semantics.
  params->options.emplace_back("lowering", makeStr("mosaic_gpu"));
  return params;
}

Obj findSwizzle(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"minor_dim_bits"}, {"what", makeStr("")}});
  int64_t bits = el.toInt(a[0], a.range(0), "minor_dim_bits");
  for (int64_t bytes : {128, 64, 32, 16})
    if (bits % (bytes * 8) == 0)
      return makeInt(bytes);
  std::string what = el.toStr(a[1], a.range(1), "what");
  el.fail(args.range, "no valid swizzle" + (what.empty() ? std::string() : " for " + what) +
                          ": the minor dimension has " + std::to_string(bits) +
                          " bits, which is not a multiple of 128 (16 bytes)");
}

} // namespace

//===----------------------------------------------------------------------===//
// Hooks
//===----------------------------------------------------------------------===//

std::string mosaicGpuTypeName(const Object &o) {
  switch (llvm::cast<MgpuObject>(o).which) {
  case MgpuObject::Which::Transform:
    return "transform";
  case MgpuObject::Which::Allocation:
    return "allocation";
  case MgpuObject::Which::BarrierRef:
    return "Barrier Ref";
  case MgpuObject::Which::SemaphoreRef:
    return "Semaphore Ref";
  case MgpuObject::Which::Layout:
    return "Layout";
  case MgpuObject::Which::Mesh:
    return "Mesh";
  case MgpuObject::Which::KernelCall:
    return "plgpu.kernel";
  case MgpuObject::Which::SyncAt:
    return "Ref indexer";
  case MgpuObject::Which::Callable:
    return "function";
  case MgpuObject::Which::WarpMesh:
    return "WarpMesh";
  case MgpuObject::Which::RefUnion:
    return "RefUnion";
  }
  return "object";
}

std::vector<int64_t> SyncRefObj::shape() const {
  std::vector<int64_t> full;
  if (auto b = llvm::dyn_cast<pk::BarrierType>(value.getType()))
    full.assign(b.getShape().begin(), b.getShape().end());
  else
    full.assign(llvm::cast<pk::SemaphoreType>(value.getType()).getShape().begin(),
                llvm::cast<pk::SemaphoreType>(value.getType()).getShape().end());
  if (!indices.empty())
    return {};
  if (windowStart.empty())
    return full;
  std::vector<int64_t> window;
  for (const auto &[axis, size] : windowAxes)
    window.push_back(size);
  return window;
}

int64_t SyncRefObj::size() const {
  int64_t count = 1;
  for (int64_t d : shape())
    count *= d;
  return count;
}

Obj callMosaicGpu(Elaborator &el, const Obj &callee, CallArgs &args) {
  if (auto *k = llvm::dyn_cast<KernelCallObj>(callee.get()))
    return applyKernelCall(el, *k, args);
  if (auto *c = llvm::dyn_cast<CallableObj>(callee.get())) {
    if (args.callee.empty())
      args.callee = c->name;
    return c->fn(el, args);
  }
  if (auto *alloc = llvm::dyn_cast<AllocationObj>(callee.get());
      alloc && alloc->what == AllocationObj::What::Semaphore) {
    // plgpu.SemaphoreType.REGULAR((4,)): an array of semaphores.
    BoundArgs a = el.bind(args, {{"shape"}});
    std::vector<int64_t> shape = el.toShape(a[0], a.range(0), "semaphore shape");
    for (int64_t d : shape)
      if (d <= 0)
        el.fail(a.range(0), "semaphore array dimensions must be positive");
    return semaphoreAllocation(el, shape, llvm::cast<pk::SemaphoreType>(alloc->type).getKind(),
                               args.range);
  }
  if (llvm::isa<LayoutObj>(callee.get()))
    return callee; // Layout.WG_STRIDED(shape, vec_size=...): parameters only guide the lowering
  el.fail(args.range, "'" + typeName(*callee) + "' object is not callable");
}

Obj mosaicGpuAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (auto *c = llvm::dyn_cast<CallableObj>(value.get())) {
    auto it = c->members.find(name);
    if (it != c->members.end())
      return it->second;
  }
  if (auto *layout = llvm::dyn_cast<LayoutObj>(value.get());
      layout && name == "reduce" && !layout->attr) {
    // A layout of tensor-memory transfers (TCGEN05...) reduced: a hint,
    // as the layout itself is.
    return std::make_shared<BoundMethodObj>(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      auto *layout = llvm::cast<LayoutObj>(args.positional[0].get());
      if (args.positional.size() != 2)
        el.fail(args.range, "Layout.reduce(axes) takes the reduced axes");
      return std::make_shared<LayoutObj>(mlir::Attribute(), layout->name + ".reduce(...)");
    });
  }
  if (auto *layout = llvm::dyn_cast<LayoutObj>(value.get());
      layout && name == "reduce" && layout->attr) {
    Obj self = value;
    return std::make_shared<BoundMethodObj>(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      auto *layout = llvm::cast<LayoutObj>(args.positional[0].get());
      std::vector<Obj> rest(args.positional.begin() + 1, args.positional.end());
      if (rest.size() != 1)
        el.fail(args.range, "Layout.reduce(axes) takes the reduced axes");
      std::vector<int64_t> axes =
          llvm::isa<SequenceObj>(rest[0].get())
              ? el.toShape(rest[0], args.rangeOf(1), "axes")
              : std::vector<int64_t>{el.toInt(rest[0], args.rangeOf(1), "axis")};
      auto kind = llvm::cast<pk::GpuLayoutAttr>(layout->attr).getValue();
      if (kind == pk::GpuLayout::WGMMA && axes == std::vector<int64_t>{1})
        return std::make_shared<LayoutObj>(
            pk::GpuLayoutAttr::get(&el.context(), pk::GpuLayout::WGMMARow),
            "plgpu.Layout.WGMMA_ROW");
      if (kind == pk::GpuLayout::WGMMA && axes == std::vector<int64_t>{0})
        return std::make_shared<LayoutObj>(
            pk::GpuLayoutAttr::get(&el.context(), pk::GpuLayout::WGMMACol),
            "plgpu.Layout.WGMMA_COL");
      // A row or a column reduced once more: a scalar, splat over the
      // warpgroup.
      if ((kind == pk::GpuLayout::WGMMARow || kind == pk::GpuLayout::WGMMACol) &&
          axes == std::vector<int64_t>{0})
        return std::make_shared<LayoutObj>(
            pk::GpuLayoutAttr::get(&el.context(), pk::GpuLayout::WGSplat), "plgpu.Layout.WG_SPLAT");
      el.fail(args.range, layout->name + ".reduce(" + shapeText(axes) +
                              ") is not supported: only plgpu.Layout.WGMMA reduces (to "
                              "WGMMA_ROW with axis 1, WGMMA_COL with axis 0), and those to "
                              "WG_SPLAT with axis 0");
    });
  }
  if (auto sync = std::dynamic_pointer_cast<SyncRefObj>(value)) {
    if (name == "at") {
      if (!sync->indices.empty())
        el.fail(r, "this barrier is already one element of its array");
      return std::make_shared<SyncAtObj>(sync);
    }
    if (auto sem = llvm::dyn_cast<pk::SemaphoreType>(sync->value.getType()); sem && name == "dtype")
      return semaphoreDType(sem.getKind());
    if (name == "shape") {
      std::vector<Obj> dims;
      for (int64_t d : sync->shape())
        dims.push_back(makeInt(d));
      return makeTuple(dims);
    }
  }
  // plgpu.Barrier's fields, as JAX's dataclass has them (tokamax adds
  // arrivals to a barrier with dataclasses.replace(b, num_arrivals=...)).
  if (auto *alloc = llvm::dyn_cast<AllocationObj>(value.get());
      alloc && alloc->what == AllocationObj::What::Barrier) {
    auto type = llvm::cast<pk::BarrierType>(alloc->type);
    if (name == "num_arrivals")
      return makeInt(type.getNumArrivals());
    if (name == "num_barriers") {
      std::vector<Obj> dims;
      for (int64_t d : type.getShape())
        dims.push_back(makeInt(d));
      return dims.size() == 1 ? dims[0] : makeTuple(dims);
    }
    if (name == "orders_tensor_core")
      return makeBool(type.getOrdersTensorCore());
    if (name == "collective_axes" && type.isClusterBarrier()) {
      std::vector<Obj> axes;
      for (mlir::Attribute a : type.getClusterAxes())
        axes.push_back(makeStr(llvm::cast<mlir::StringAttr>(a).getValue().str()));
      return makeTuple(axes);
    }
  }
  if (auto *m = llvm::dyn_cast<MeshObj>(value.get())) {
    auto ints = [](const std::vector<int64_t> &v) {
      std::vector<Obj> items;
      for (int64_t x : v)
        items.push_back(makeInt(x));
      return makeTuple(items);
    };
    auto strs = [](const std::vector<std::string> &v) {
      std::vector<Obj> items;
      for (const std::string &x : v)
        items.push_back(makeStr(x));
      return makeTuple(items);
    };
    if (name == "grid")
      return ints(m->grid);
    if (name == "cluster")
      return ints(m->cluster);
    if (name == "grid_names")
      return strs(m->gridNames);
    if (name == "cluster_names")
      return strs(m->clusterNames);
    if (name == "num_threads")
      return m->threadName.empty() ? none() : makeInt(m->numThreads);
    if (name == "thread_name")
      return m->threadName.empty() ? none() : makeStr(m->threadName);
  }
  el.fail(r, "'" + typeName(*value) + "' object has no attribute '" + name + "'");
}

Obj replaceMosaicGpu(Elaborator &el, const Obj &target, CallArgs &args) {
  auto *alloc = llvm::dyn_cast<AllocationObj>(target.get());
  if (!alloc || alloc->what != AllocationObj::What::Barrier)
    el.fail(args.rangeOf(0),
            "replace() should be called on dataclass instances, got " + repr(*target));
  // plgpu.Barrier (or ClusterBarrier) again, of its fields with the
  // changes: the constructor checks them.
  auto type = llvm::cast<pk::BarrierType>(alloc->type);
  CallArgs call;
  call.range = args.range;
  auto field = [&](const std::string &name, Obj value) {
    for (size_t i = 0; i < args.keywords.size(); ++i)
      if (args.keywords[i].first == name) {
        call.keywords.push_back(args.keywords[i]);
        call.keywordRanges.push_back(args.keywordRanges[i]);
        return;
      }
    call.keywords.emplace_back(name, value);
    call.keywordRanges.push_back(args.range);
  };
  for (const auto &[name, value] : args.keywords)
    if (name != "num_arrivals" && name != "num_barriers" && name != "orders_tensor_core")
      el.fail(args.rangeOfKeyword(name),
              "replace() got an unexpected field '" + name + "' of plgpu.Barrier");
  field("num_arrivals", mosaicGpuAttribute(el, target, "num_arrivals", args.range));
  field("num_barriers", mosaicGpuAttribute(el, target, "num_barriers", args.range));
  field("orders_tensor_core", makeBool(type.getOrdersTensorCore()));
  if (type.isClusterBarrier())
    field("collective_axes", mosaicGpuAttribute(el, target, "collective_axes", args.range));
  Obj made = barrierAllocation(el, call, type.isClusterBarrier());
  llvm::cast<AllocationObj>(*made).range = alloc->range;
  return made;
}

Obj mosaicGpuSubscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r) {
  // Objects that define their own indexing (an inline_mgpu argument's
  // registers).
  if (auto *c = llvm::dyn_cast<CallableObj>(container.get()))
    if (auto it = c->members.find("__getitem__"); it != c->members.end())
      return callAt(el, it->second, {index}, {}, r);
  auto *at = llvm::dyn_cast<SyncAtObj>(container.get());
  if (!at)
    el.fail(r, "'" + typeName(*container) + "' object is not subscriptable" +
                   (llvm::isa<SyncRefObj>(container.get())
                        ? llvm::cast<SyncRefObj>(*container).isBarrier()
                              ? std::string("; pick one barrier with barrier.at[i]")
                              : std::string("; pick one semaphore with sem.at[i] (read a count "
                                            "with pl.semaphore_read)")
                        : std::string()));
  el.requireKernel(r, "indexing a barrier");
  std::vector<Obj> entries = llvm::isa<SequenceObj>(index.get())
                                 ? llvm::cast<SequenceObj>(*index).items
                                 : std::vector<Obj>{index};
  const SyncRefObj &ref = *at->ref;
  std::vector<int64_t> shape = ref.shape();
  const char *what = ref.isBarrier() ? " barriers" : " semaphores";
  if (entries.size() != shape.size())
    el.fail(r, std::string("this array of") + what + " has shape " + shapeText(shape) +
                   "; index it with " + std::to_string(shape.size()) + " integer" +
                   (shape.size() == 1 ? "" : "s") + " or slice" + (shape.size() == 1 ? "" : "s"));
  // The window so far: the whole array, or what earlier .at[...] kept.
  std::vector<Obj> start = ref.windowStart;
  std::vector<std::pair<size_t, int64_t>> axes = ref.windowAxes;
  if (start.empty()) {
    start.assign(shape.size(), makeInt(0));
    for (size_t d = 0; d < shape.size(); ++d)
      axes.emplace_back(d, shape[d]);
  }
  // Each entry narrows the window along its axis: an integer picks one
  // element (and drops the axis), a slice keeps a static range of them.
  std::vector<std::pair<size_t, int64_t>> kept;
  for (size_t d = 0; d < entries.size(); ++d) {
    auto [axis, size] = axes[d];
    const Obj &entry = entries[d];
    int64_t first = 0, count = 1;
    bool slice = llvm::isa<SliceObj, DynamicSliceObj>(entry.get());
    if (auto *s = llvm::dyn_cast<SliceObj>(entry.get())) {
      auto bound = [&](const Obj &o, int64_t dflt) {
        if (isNone(o))
          return dflt;
        std::optional<int64_t> v = el.staticInt(o);
        if (!v)
          el.fail(r, std::string("a slice of") + what + " needs static bounds");
        return *v < 0 ? *v + size : *v;
      };
      if (!isNone(s->step) && el.staticInt(s->step) != std::optional<int64_t>(1))
        el.fail(r, std::string("a slice of") + what + " takes consecutive ones (step 1)");
      first = std::clamp<int64_t>(bound(s->start, 0), 0, size);
      count = std::clamp<int64_t>(bound(s->stop, size), first, size) - first;
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(entry.get())) {
      std::optional<int64_t> at = el.staticInt(ds->start);
      if (!at || ds->dynamicSize || ds->stride != 1)
        el.fail(r, std::string("a slice of") + what + " needs a static start and size (stride 1)");
      first = *at;
      count = ds->size;
    } else if (std::optional<int64_t> i = el.staticInt(entry)) {
      if (*i < 0 || *i >= size)
        el.fail(r, "index " + std::to_string(*i) + " is out of range for " + std::to_string(size) +
                       what);
      first = *i;
    }
    if (slice && (count < 1 || first < 0 || first + count > size))
      el.fail(r, "the slice [" + std::to_string(first) + ", " + std::to_string(first + count) +
                     ") is empty or reaches outside the " + std::to_string(size) + what);
    if (slice)
      kept.emplace_back(axis, count);
    Obj offset = slice || el.staticInt(entry) ? makeInt(first) : entry;
    start[axis] = binaryOperator(el, ast::BinaryOp::Add, start[axis], offset, r);
  }
  // One element (every kept axis of size 1, as JAX's single barrier of a
  // shape-(1,) Ref) is selected; a larger window stays a window.
  if (llvm::all_of(kept, [](const auto &k) { return k.second == 1; })) {
    std::vector<mlir::Value> indices;
    for (const Obj &s : start)
      indices.push_back(indexValue(el, s, r));
    return std::make_shared<SyncRefObj>(ref.which, ref.value, indices);
  }
  auto window = std::make_shared<SyncRefObj>(ref.which, ref.value);
  window->windowStart = start;
  window->windowAxes = kept;
  return window;
}

Obj allocateGpuMemory(Elaborator &el, MemorySpace space, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"shape"},
                               {"dtype"},
                               {"transforms", makeTuple({}), true},
                               {"packed", none(), true},
                               {"collective", none(), true},
                               {"layout", none(), true}});
  bool tmem = space == MemorySpace::GPUTensorMemory;
  const char *what = tmem                              ? "plgpu.TMEM"
                     : space == MemorySpace::GPUShared ? "plgpu.SMEM"
                                                       : "plgpu.GMEM";
  for (size_t i : {3, 4, 5})
    if (!tmem && !isNone(a[i]))
      el.fail(a.range(i), "packed, collective and layout are for plgpu.TMEM");
  std::vector<int64_t> shape = positiveShape(el, a[0], a.range(0), what);
  DType dtype = el.toDType(a[1], a.range(1), "dtype");
  mlir::ArrayAttr transforms = transformList(el, a[2], a.range(2));
  mlir::Type element = storageType(ctxOf(el), dtype);
  if (tmem) {
    if (transforms)
      el.fail(a.range(2), "plgpu.TMEM buffers take no transforms");
    if (!isNone(a[4]) && el.truthy(a[4], a.range(4)))
      el.fail(a.range(4), "collective tensor memory (for collective MMA) is not supported yet");
    if (!isNone(a[5]))
      el.fail(a.range(5), "layout= is not supported for plgpu.TMEM: pkc lays a (128, n) buffer "
                          "out one row per lane");
    if (!isNone(a[3]) && el.truthy(a[3], a.range(3)))
      el.fail(a.range(3), "packed tensor memory (two 16-bit elements per column) is not "
                          "supported yet");
    std::string why = pk::tmemAllocationProblem(shape, element);
    if (!why.empty())
      el.fail(args.range, why);
  }
  if (transforms && space != MemorySpace::GPUShared)
    el.fail(a.range(2), "only shared-memory (plgpu.SMEM) Refs have transforms");
  if (transforms) {
    std::string why = pk::checkSmemTransforms(shape, element, transforms);
    if (!why.empty())
      el.fail(a.range(2), "these transforms cannot lay out a " + std::string(numpyName(dtype)) +
                              shapeText(shape) + " buffer: " + why);
  }
  auto type =
      pk::RefType::get(shape, element, pk::MemorySpaceAttr::get(ctxOf(el), space), transforms);
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Ref, type);
  alloc->range = args.range;
  return alloc;
}

Obj refUnion(Elaborator &el, CallArgs &args) {
  if (!args.keywords.empty())
    el.fail(args.rangeOfKeyword(args.keywords[0].first),
            "plgpu.RefUnion takes its groups of Refs positionally");
  if (args.positional.empty())
    el.fail(args.range, "plgpu.RefUnion needs at least one Ref (or group of Refs) to hold");
  auto u = std::make_shared<RefUnionObj>();
  u->range = args.range;
  std::optional<MemorySpace> space;
  for (size_t g = 0; g < args.positional.size(); ++g) {
    std::vector<Obj> leaves;
    pytreeLeaves(args.positional[g], leaves);
    for (const Obj &leaf : leaves) {
      auto *a = llvm::dyn_cast<AllocationObj>(leaf.get());
      auto ref = a ? llvm::dyn_cast<pk::RefType>(a->type) : pk::RefType();
      std::optional<MemorySpace> where = ref ? ref.getSpace() : std::nullopt;
      if (!a || a->what != AllocationObj::What::Ref ||
          (where != MemorySpace::GPUShared && where != MemorySpace::GPUTensorMemory))
        el.fail(args.rangeOf(g),
                "plgpu.RefUnion holds plgpu.SMEM or plgpu.TMEM allocations (in tuples and "
                "lists), got " +
                    (!a                                            ? typeName(*leaf)
                     : a->what == AllocationObj::What::Barrier     ? std::string("a barrier")
                     : a->what == AllocationObj::What::Semaphore   ? std::string("a semaphore")
                     : a->what == AllocationObj::What::Accumulator ? std::string("plgpu.ACC")
                                                                   : typeText(a->type)));
      if (space && *space != *where)
        el.fail(args.rangeOf(g), "all the Refs of a plgpu.RefUnion must be in one memory space "
                                 "(plgpu.SMEM or plgpu.TMEM), not both");
      space = where;
    }
    u->groups.push_back(args.positional[g]);
  }
  if (!space)
    el.fail(args.range, "plgpu.RefUnion needs at least one Ref (or group of Refs) to hold");
  u->space = *space;
  return u;
}

//===----------------------------------------------------------------------===//
// The namespace
//===----------------------------------------------------------------------===//

std::shared_ptr<NamespaceObj> makeMosaicGpuNamespace(Elaborator &el, NamespaceObj &pl,
                                                     NamespaceObj &lax) {
  auto ns = std::make_shared<NamespaceObj>("jax.experimental.pallas.mosaic_gpu");
  NamespaceObj &n = *ns;
  auto space = [](MemorySpace s) { return std::make_shared<MemorySpaceObj>(s); };
  n.members["GMEM"] = space(MemorySpace::GPUGlobal);
  n.members["SMEM"] = space(MemorySpace::GPUShared);
  auto spaces = std::make_shared<NamespaceObj>("plgpu.MemorySpace");
  spaces->members["GMEM"] = n.members["GMEM"];
  spaces->members["SMEM"] = n.members["SMEM"];
  spaces->members["TMEM"] = space(MemorySpace::GPUTensorMemory);
  spaces->members["REGS"] = unsupported("plgpu.REGS", "allocate registers with plgpu.ACC");
  n.members["MemorySpace"] = spaces;
  n.members["GPUMemorySpace"] = spaces;
  n.members["TMEM"] = spaces->members["TMEM"];
  n.members["REGS"] = spaces->members["REGS"];

  for (const char *t : {"TilingTransform", "SwizzleTransform", "TransposeTransform"})
    n.members[t] = transformBuiltin(t);
  n.members["TileTransform"] = n.members["TilingTransform"]; // the seed's spelling
  n.members["Layout"] = layoutNamespace(el);
  define(n, "Barrier",
         [](Elaborator &el, CallArgs &args) { return barrierAllocation(el, args, false); });
  define(n, "ClusterBarrier",
         [](Elaborator &el, CallArgs &args) { return barrierAllocation(el, args, true); });
  auto acc = std::make_shared<CallableObj>("plgpu.ACC", accumulator);
  acc->members["init"] = std::make_shared<BuiltinObj>("plgpu.ACC.init", accumulatorInit);
  n.members["ACC"] = acc;
  n.members["WGMMAAccumulatorRef"] = acc;
  auto semaphores = std::make_shared<NamespaceObj>("plgpu.SemaphoreType");
  semaphores->members["REGULAR"] =
      semaphoreAllocation(el, {}, pk::SemaphoreKind::Regular, SourceRange());
  semaphores->members["BARRIER"] =
      semaphoreAllocation(el, {}, pk::SemaphoreKind::Barrier, SourceRange());
  n.members["SemaphoreType"] = semaphores;
  n.members["Semaphore"] = semaphores;
  define(n, "Mesh", mesh);
  define(n, "WarpMesh", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"axis_name"}});
    return std::make_shared<WarpMeshObj>(el.toStr(a[0], a.range(0), "axis_name"));
  });
  define(n, "warp_map", [](Elaborator &el, CallArgs &args) -> Obj {
    // plgpu.warp_map(f): f(warp_id) once per warp (JAX's helpers.py).
    BoundArgs a = el.bind(args, {{"f"}});
    return warpMap(el, "__warp", a[0], /*passIndex=*/true, args.range);
  });
  define(n, "kernel", kernel);
  define(n, "RefUnion", refUnion);
  NamespaceObj *plPtr = &pl;
  define(n, "BlockSpec",
         [plPtr](Elaborator &el, CallArgs &args) { return gpuBlockSpec(el, args, *plPtr); });
  define(n, "CompilerParams", compilerParams);
  define(n, "find_swizzle", findSwizzle);
  define(n, "as_torch_kernel", [](Elaborator &el, CallArgs &args) -> Obj {
    el.fail(args.range, "plgpu.as_torch_kernel runs a kernel on PyTorch tensors from Python; a "
                        ".pk file compiled by pkc has no Python at run time (load the compiled "
                        "kernel with the runtime library, or call it from Python through JAX)");
  });
  auto loweringSemantics = std::make_shared<NamespaceObj>("plgpu.LoweringSemantics");
  loweringSemantics->members["Lane"] = makeStr("lane");
  loweringSemantics->members["Warpgroup"] = makeStr("warpgroup");
  n.members["LoweringSemantics"] = loweringSemantics;

  // Rejected by name: Blackwell, other devices, and the rest of the seed's
  // API pkc does not model yet.
  for (const char *name : {"tcgen05_commit", "async_copy_smem_to_tmem", "async_copy_scales_to_tmem",
                           "async_copy_sparse_metadata_to_tmem", "TryCancelResultRef", "TMEMLayout",
                           "format_tcgen05_sparse_metadata"})
    n.members[name] = unsupported(std::string("plgpu.") + name, kBlackwell);
  for (const char *name :
       {"remote_ref", "multicast_ref", "PeerMemRef", "semaphore_signal_multicast",
        "semaphore_signal_parallel", "SemaphoreSignal", "multimem_store", "multimem_load_reduce"})
    n.members[name] = unsupported(std::string("plgpu.") + name, kMultiDevice);
  const std::pair<const char *, const char *> others[] = {
      {"cluster_ref", "Refs to another CTA's shared memory are not modelled yet"},
      {"mma", kAmpereMma},
      {"transform_ref", "use plgpu.transpose_ref or allocation transforms"},
      {"async_store_smem",
       "stores into the shared memory of another CTA of the cluster are not modelled yet"},
      {"print_layout", "pkc kernels do not print"},
      {"ShapeDtypeStruct", "use jax.ShapeDtypeStruct"},
      {"TraceScope", "profiling is not supported"},
      {"PipelinePipeline", "pipeline_state= of emit_pipeline_warp_specialized is not supported"},
      {"CopyPartition", "leader-tracked collective copies belong to Blackwell's collective MMA"},
      {"Tiling", "Mosaic GPU's fragmented-array tilings are not exposed"},
      {"Replicated", "Mosaic GPU's fragmented-array layouts are not exposed"},
      {"RefType", "Mosaic GPU's Ref kinds are not exposed"}};
  for (auto [name, why] : others)
    n.members[name] = unsupported(std::string("plgpu.") + name, why);
  // An L2 prefetch is a hint: the copy that follows reads the data either
  // way, so pkc checks the call and emits nothing for it.
  define(n, "async_prefetch", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args, {{"ref"}, {"collective_axes", none(), true}, {"leader_tracked", none(), true}});
    el.requireKernel(args.range, "plgpu.async_prefetch");
    refArg(el, a[0], a.range(0), "plgpu.async_prefetch's argument");
    if (!isNone(a[2]))
      el.fail(a.range(2),
              "plgpu.async_prefetch(leader_tracked=) belongs to Blackwell's collective MMA, "
              "which pkc does not model");
    return none();
  });

  defineMosaicGpuMemory(el, n, pl);
  defineMosaicGpuTensorMemory(el, n);
  defineMosaicGpuClusterLaunch(el, n);
  defineMosaicGpuPipelines(el, n);
  defineInlineMgpu(n);

  // pl and lax members of the Mosaic GPU model.
  define(pl, "core_map", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"mesh"},
                                 {"compiler_params", none(), true},
                                 {"interpret", none(), true},
                                 {"debug", none(), true},
                                 {"name", none(), true},
                                 {"cost_estimate", none(), true},
                                 {"metadata", none(), true}});
    if (auto *warps = llvm::dyn_cast<WarpMeshObj>(a[0].get())) {
      std::string axis = warps->axisName;
      SourceRange r = args.range;
      return std::make_shared<BuiltinObj>(
          "pl.core_map(plgpu.WarpMesh(...))", [axis, r](Elaborator &el, CallArgs &inner) -> Obj {
            if (inner.positional.size() != 1)
              el.fail(inner.range, "pl.core_map(mesh) decorates a kernel function of no arguments");
            return warpMap(el, axis, inner.positional[0], /*passIndex=*/false, r);
          });
    }
    auto m = std::dynamic_pointer_cast<MeshObj>(a[0]);
    if (!m && isTensorCoreMesh(a[0]))
      return tensorCoreMap(el, a[0], a[1], a[4], args.range);
    if (!m)
      el.fail(a.range(0), "pl.core_map needs a mesh (plgpu.Mesh(...), plgpu.WarpMesh(...) or "
                          "pltpu.create_tensorcore_mesh(...)), got " +
                              typeName(*a[0]));
    if (!isNone(a[4]))
      m = std::make_shared<MeshObj>(*m), m->kernelName = el.toStr(a[4], a.range(4), "name");
    SourceRange r = args.range;
    return std::make_shared<BuiltinObj>(
        "pl.core_map(...)", [m, r](Elaborator &el, CallArgs &inner) -> Obj {
          if (inner.positional.size() != 1)
            el.fail(inner.range, "pl.core_map(mesh) decorates a kernel function of no arguments");
          return coreMap(el, m, inner.positional[0], r);
        });
  });
  define(pl, "run_state", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"f"}});
    Obj f = a[0];
    return std::make_shared<BuiltinObj>(
        "pl.run_state(...)", [f](Elaborator &el, CallArgs &inner) -> Obj {
          if (inner.positional.size() != 1 || !inner.keywords.empty())
            el.fail(inner.range,
                    "pl.run_state(f) takes the initial values as one argument (a tuple "
                    "for several)");
          return runState(el, f, inner.positional[0], inner.rangeOf(0));
        });
  });
  define(pl, "run_scoped", runScoped);
  // pl.with_scoped(*types, **named_types): a decorator; calling the
  // decorated f(*args) runs pl.run_scoped(partial(f, *args), *types, ...).
  define(pl, "with_scoped", [](Elaborator &, CallArgs &args) -> Obj {
    CallArgs scope = args;
    return std::make_shared<BuiltinObj>(
        "pl.with_scoped(...)", [scope](Elaborator &el, CallArgs &decorated) -> Obj {
          BoundArgs f = el.bind(decorated, {{"f"}});
          Obj function = f[0];
          return std::make_shared<BuiltinObj>(
              "pl.with_scoped function", [scope, function](Elaborator &el, CallArgs &call) -> Obj {
                if (!call.keywords.empty())
                  el.fail(call.rangeOfKeyword(call.keywords[0].first),
                          "a pl.with_scoped function takes its arguments positionally");
                auto bound = std::make_shared<PartialObj>();
                bound->function = function;
                bound->args = call.positional;
                CallArgs run = scope;
                run.range = call.range;
                run.positional.insert(run.positional.begin(), bound);
                run.positionalRanges.insert(run.positionalRanges.begin(), call.range);
                return runScoped(el, run);
              });
        });
  });
  define(pl, "kernel", plKernel);
  lax.members["axis_index"] =
      std::make_shared<BuiltinObj>("lax.axis_index", [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"axis_name"}});
        if (std::optional<size_t> axis = el.namedGridAxis(a[0]))
          return gridAxisQuery(el, programId, *axis, args.range);
        if (Obj core = tensorCoreAxisIndex(el, a[0]))
          return core;
        if (Obj device = deviceAxisIndex(el, a[0], a.range(0)))
          return device;
        return axisIndex(el, a[0], a.range(0));
      });
  lax.members["axis_size"] =
      std::make_shared<BuiltinObj>("lax.axis_size", [](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"axis_name"}});
        if (std::optional<size_t> axis = el.namedGridAxis(a[0]))
          return gridAxisQuery(el, numPrograms, *axis, args.range);
        if (std::optional<int64_t> cores = tensorCoreAxisSize(el, a[0]))
          return makeInt(*cores);
        if (std::optional<int64_t> devices = deviceAxisSize(el, a[0]))
          return makeInt(*devices);
        return makeInt(axisSize(el, a[0], a.range(0)));
      });
  return ns;
}

} // namespace pk::elab
