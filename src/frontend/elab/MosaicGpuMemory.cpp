//===- MosaicGpuMemory.cpp - Views, barriers, copies, wgmma, semaphores ---===//
//
// The plgpu builtins that emit the Mosaic GPU memory and synchronization
// ops. Each checks its operands with the rules the op verifiers use
// (ir/MosaicGpuRules.h, ir/SmemTransforms.h), so that misuse is reported at
// the user's line with the hardware's reason.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "ir/DTypeMapping.h"
#include "ir/MosaicGpuRules.h"
#include "ir/SmemTransforms.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk::elab {

RefObj &refArg(Elaborator &el, const Obj &o, SourceRange r, const std::string &what) {
  auto *ref = llvm::dyn_cast<RefObj>(o.get());
  if (!ref)
    el.fail(r, what + " must be a Ref, got " + typeName(*o));
  requirePlainRef(el, *ref, r);
  return *ref;
}

/// One barrier (or semaphore) for an op that takes a single one.
SyncRefObj &syncArg(Elaborator &el, const Obj &o, SourceRange r, bool barrier,
                    const std::string &what) {
  auto *sync = llvm::dyn_cast<SyncRefObj>(o.get());
  if (!sync || sync->isBarrier() != barrier)
    el.fail(r, what + " must be a " +
                   (barrier ? "barrier (allocated with plgpu.Barrier())"
                            : "semaphore (plgpu.SemaphoreType.REGULAR)") +
                   ", got " + typeName(*o));
  if (sync->indices.empty()) {
    int64_t count = sync->size(); // the array's, or its window's (barrier.at[2:4])
    if (count != 1)
      el.fail(r, what + " is an array of " + std::to_string(count) +
                     (barrier ? " barriers" : " semaphores") + "; pass one of them (" +
                     (barrier ? "barrier" : "sem") + ".at[i])");
  }
  return *sync;
}

namespace {

Obj noValue() { return none(); }

/// One regular (or barrier) semaphore: signal and wait do not take DMA
/// semaphores, whose counts belong to the copies that name them.
SyncRefObj &regularSemaphore(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  SyncRefObj &sem = syncArg(el, o, r, false, "the semaphore");
  if (llvm::cast<pk::SemaphoreType>(sem.value.getType()).isDma())
    el.fail(r, std::string(what) + " takes a regular semaphore (pltpu.SemaphoreType.REGULAR); a "
                                   "DMA semaphore is signalled by the copies that name it and "
                                   "waited for with the copy's .wait()");
  return sem;
}

mlir::Value i32Value(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  ArrayPtr a = el.arrays().toArray(o, r);
  if (a->rank() != 0 || isFloat(a->dtype) || a->dtype == DType::Bool)
    el.fail(r, std::string(what) + " must be an integer scalar");
  return el.arrays().cast(a, DType::I32, r)->value;
}

Obj copyGmemToSmem(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"src"},
                               {"dst"},
                               {"barrier"},
                               {"collective_axes", none(), true},
                               {"leader_tracked", none(), true},
                               {"oob_mode", none(), true},
                               {"partitioned_axis", none(), true}});
  const MeshInfo &mesh = requireMesh(el, args.range, "plgpu.copy_gmem_to_smem");
  if (!isNone(a[4]) || !isNone(a[6]))
    el.fail(isNone(a[4]) ? a.range(6) : a.range(4),
            "partitioned and leader-tracked collective copies are not supported: they belong to "
            "Blackwell's collective MMA (sm_100a)");
  if (!isNone(a[5]))
    checkOobFillMode(el, a[5], a.range(5), "oob_mode");
  mlir::Value src = materializeRef(el, refArg(el, a[0], a.range(0), "the source"), a.range(0));
  mlir::Value dst = materializeRef(el, refArg(el, a[1], a.range(1), "the destination"), a.range(1));
  std::string why = pk::asyncCopyProblem(llvm::cast<pk::RefType>(src.getType()),
                                         llvm::cast<pk::RefType>(dst.getType()), true);
  if (!why.empty())
    el.fail(args.range, "plgpu.copy_gmem_to_smem: " + why);
  SyncRefObj &barrier = syncArg(el, a[2], a.range(2), true, "the barrier");
  if (llvm::cast<pk::BarrierType>(barrier.value.getType()).isClusterBarrier())
    el.fail(a.range(2), "an async copy completes on a plgpu.Barrier of its own CTA, not on a "
                        "plgpu.ClusterBarrier");
  std::vector<mlir::Attribute> axes;
  for (const std::string &name : axisNames(el, a[3], a.range(3), "collective axis")) {
    auto axis = mesh.find(name);
    if (!axis || axis->first != 1) {
      std::string clusters;
      for (const std::string &c : mesh.mesh->clusterNames)
        clusters += (clusters.empty() ? "'" : ", '") + c + "'";
      el.fail(a.range(3), "a collective copy is multicast to the CTAs of a cluster, but '" + name +
                              "' is not a cluster axis of this kernel " +
                              (clusters.empty() ? std::string("(it has none: declare cluster=(2,), "
                                                              "cluster_names=(\"x\",))")
                                                : "(its cluster axes: " + clusters + ")"));
    }
    axes.push_back(el.builder().getStringAttr(name));
  }
  pk::CopyGmemToSmemOp::create(el.builder(), el.loc(args.range), src, dst, barrier.value,
                               barrier.indices, el.builder().getArrayAttr(axes));
  return noValue();
}

Obj copySmemToGmem(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"src"},
                               {"dst"},
                               {"predicate", none()},
                               {"commit_group", makeBool(true), true},
                               {"reduction_op", none(), true}});
  requireMesh(el, args.range, "plgpu.copy_smem_to_gmem");
  if (!isNone(a[4]))
    el.fail(a.range(4), "reduction_op= (TMA reductions into GMEM) is not supported yet");
  mlir::Value src = materializeRef(el, refArg(el, a[0], a.range(0), "the source"), a.range(0));
  mlir::Value dst = materializeRef(el, refArg(el, a[1], a.range(1), "the destination"), a.range(1));
  std::string why = pk::asyncCopyProblem(llvm::cast<pk::RefType>(src.getType()),
                                         llvm::cast<pk::RefType>(dst.getType()), false);
  if (!why.empty())
    el.fail(args.range, "plgpu.copy_smem_to_gmem: " + why);
  mlir::Value predicate;
  if (!isNone(a[2])) {
    ArrayPtr p = el.arrays().toArray(a[2], a.range(2));
    if (p->rank() != 0)
      el.fail(a.range(2), "the predicate must be a scalar");
    predicate = el.arrays().cast(p, DType::Bool, a.range(2))->value;
  }
  auto op = pk::CopySmemToGmemOp::create(el.builder(), el.loc(args.range), src, dst, predicate);
  if (!el.truthy(a[3], a.range(3)))
    op.setNoCommit(true);
  return noValue();
}

Obj waitSmemToGmem(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"n"}, {"wait_read_only", makeBool(false)}});
  requireMesh(el, args.range, "plgpu.wait_smem_to_gmem");
  int64_t n = el.toInt(a[0], a.range(0), "the number of copy groups left in flight");
  if (n < 0)
    el.fail(a.range(0), "wait_smem_to_gmem(n) leaves n copy groups in flight; n must not be "
                        "negative");
  auto op = pk::WaitSmemToGmemOp::create(el.builder(), el.loc(args.range), n);
  if (el.truthy(a[1], a.range(1)))
    op.setReadOnly(true);
  return noValue();
}

Obj barrierOp(Elaborator &el, CallArgs &args, bool wait) {
  BoundArgs a = el.bind(args, {{"barrier"}});
  requireMesh(el, args.range, wait ? "plgpu.barrier_wait" : "plgpu.barrier_arrive");
  SyncRefObj &barrier = syncArg(el, a[0], a.range(0), true, "the barrier");
  if (wait)
    pk::BarrierWaitOp::create(el.builder(), el.loc(args.range), barrier.value, barrier.indices);
  else
    pk::BarrierArriveOp::create(el.builder(), el.loc(args.range), barrier.value, barrier.indices);
  return noValue();
}

/// plgpu.barrier_test(barrier): a bool scalar, true when the barrier's
/// next phase has completed (which then counts as waited for).
Obj barrierTest(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"barrier"}});
  requireMesh(el, args.range, "plgpu.barrier_test");
  SyncRefObj &barrier = syncArg(el, a[0], a.range(0), true, "the barrier");
  if (llvm::cast<pk::BarrierType>(barrier.value.getType()).isClusterBarrier())
    el.fail(a.range(0), "plgpu.barrier_test tests a plgpu.Barrier of its own CTA, not a "
                        "plgpu.ClusterBarrier");
  mlir::Value done = pk::BarrierTestOp::create(
      el.builder(), el.loc(args.range), el.builder().getI1Type(), barrier.value, barrier.indices);
  return el.arrays().wrap(done, {}, DType::Bool, false);
}

Obj wgmma(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"acc"}, {"a"}, {"b"}});
  requireMesh(el, args.range, "plgpu.wgmma");
  mlir::Value acc = materializeRef(el, refArg(el, a[0], a.range(0), "the accumulator"), a.range(0));
  mlir::Value lhs;
  if (llvm::isa<RefObj>(a[1].get()))
    lhs = materializeRef(el, llvm::cast<RefObj>(*a[1]), a.range(1));
  else if (llvm::isa<ArrayObj>(a[1].get()))
    lhs = llvm::cast<ArrayObj>(*a[1]).value;
  else
    el.fail(a.range(1),
            "the A operand must be a Ref in shared memory or an array, got " + typeName(*a[1]));
  mlir::Value rhs = materializeRef(el, refArg(el, a[2], a.range(2), "the B operand"), a.range(2));
  std::string why = pk::wgmmaProblem(llvm::cast<pk::RefType>(acc.getType()), lhs.getType(),
                                     llvm::cast<pk::RefType>(rhs.getType()));
  if (!why.empty())
    el.fail(args.range, "plgpu.wgmma: " + why);
  pk::WgmmaOp::create(el.builder(), el.loc(args.range), acc, lhs, rhs);
  return noValue();
}

/// `plgpu.wgmma_accumulator_load(acc, wait_n=0)`: `plgpu.wgmma_wait(wait_n)`
/// (none when wait_n is None), then `acc[...]`. Reading an accumulator
/// already waits for the wgmma ops that write it (PromoteAccumulators), so
/// a larger wait_n never lets pkc read registers the tensor cores still own.
Obj wgmmaAccumulatorLoad(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"acc"}, {"wait_n", makeInt(0), true}});
  requireMesh(el, args.range, "plgpu.wgmma_accumulator_load");
  RefObj &acc = refArg(el, a[0], a.range(0), "the accumulator");
  if (llvm::cast<pk::RefType>(acc.value.getType()).getSpace() != MemorySpace::GPUAccumulator)
    el.fail(a.range(0), "plgpu.wgmma_accumulator_load reads a wgmma accumulator (plgpu.ACC), got "
                        "a Ref in another memory space");
  if (!isNone(a[1])) {
    int64_t count = el.toInt(a[1], a.range(1), "wait_n");
    if (count < 0)
      el.fail(a.range(1), "wait_n must not be negative, got " + std::to_string(count));
    pk::WgmmaWaitOp::create(el.builder(), el.loc(args.range), count);
  }
  return loadRef(el, acc, std::make_shared<EllipsisObj>(), nullptr, nullptr, args.range);
}

/// Whether a signal with these `device_id=` and `core_index=` reaches
/// the kernel's own core: both absent, or naming a TensorCore mesh of one
/// core (pl.core_map / pl.kernel over pltpu.create_tensorcore_mesh), where
/// every core index is this core's.
bool signalsOwnCore(Elaborator &el, const Obj &deviceId, const Obj &coreIndex) {
  auto oneCore = [&](const Obj &axis) {
    std::optional<int64_t> cores = tensorCoreAxisSize(el, axis);
    return cores && *cores == 1;
  };
  if (!isNone(deviceId)) {
    auto *d = llvm::dyn_cast<DictObj>(deviceId.get());
    if (!d || d->entries.size() != 1 || !oneCore(d->entries[0].first))
      return false;
  }
  return isNone(coreIndex) || (el.tpuCoreAxis && el.tpuCoreAxis->size == 1);
}

Obj semaphoreSignal(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"sem_or_view"},
                               {"inc", makeInt(1)},
                               {"device_id", none(), true},
                               {"device_id_type", none(), true},
                               {"core_index", none(), true}});
  el.requireKernel(args.range, "pl.semaphore_signal");
  if (!signalsOwnCore(el, a[2], a[4]))
    el.fail(isNone(a[2]) ? a.range(4) : a.range(2),
            "signalling a semaphore of another device or core is not supported: pkc compiles "
            "kernels for one device");
  SyncRefObj &sem = regularSemaphore(el, a[0], a.range(0), "pl.semaphore_signal");
  pk::SemaphoreSignalOp::create(el.builder(), el.loc(args.range), sem.value, sem.indices,
                                i32Value(el, a[1], a.range(1), "the increment"));
  return noValue();
}

Obj semaphoreWait(Elaborator &el, CallArgs &args) {
  BoundArgs a =
      el.bind(args, {{"sem_or_view"}, {"value", makeInt(1)}, {"decrement", makeBool(true), true}});
  el.requireKernel(args.range, "pl.semaphore_wait");
  SyncRefObj &sem = regularSemaphore(el, a[0], a.range(0), "pl.semaphore_wait");
  auto op = pk::SemaphoreWaitOp::create(el.builder(), el.loc(args.range), sem.value, sem.indices,
                                        i32Value(el, a[1], a.range(1), "the value"));
  if (!el.truthy(a[2], a.range(2)))
    op.setNoDecrement(true);
  return noValue();
}

Obj semaphoreRead(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"sem_or_view"}});
  el.requireKernel(args.range, "pl.semaphore_read");
  SyncRefObj &sem = syncArg(el, a[0], a.range(0), false, "the semaphore");
  mlir::Value v =
      pk::SemaphoreReadOp::create(el.builder(), el.loc(args.range), el.builder().getI32Type(),
                                  sem.value, sem.indices);
  return el.arrays().wrap(v, {}, DType::I32, false);
}

Obj getGlobal(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"what"}});
  requireMesh(el, args.range, "pl.get_global");
  auto *alloc = llvm::dyn_cast<AllocationObj>(a[0].get());
  bool semaphore = alloc && alloc->what == AllocationObj::What::Semaphore;
  if (!semaphore || llvm::cast<pk::SemaphoreType>(alloc->type).getKind() == pk::SemaphoreKind::DMA)
    el.fail(a.range(0),
            "pl.get_global allocates semaphores (plgpu.SemaphoreType.REGULAR), got " +
                (semaphore ? std::string("a DMA semaphore (a TPU construct)") : typeName(*a[0])));
  mlir::Value v = pk::GetGlobalOp::create(el.builder(), el.loc(args.range), alloc->type);
  return std::make_shared<SyncRefObj>(MgpuObject::Which::SemaphoreRef, v);
}

Obj layoutCast(Elaborator &el, const Obj &x, const Obj &layout, SourceRange xr, SourceRange lr) {
  auto *l = llvm::dyn_cast<LayoutObj>(layout.get());
  if (!l)
    el.fail(lr, "the layout must be a plgpu.Layout, got " + typeName(*layout));
  ArrayPtr a = el.arrays().toArray(x, xr);
  // The register layouts of tensor-memory transfers (TCGEN05...) are
  // hints, as in plgpu.async_load_tmem(layout=): pkc chooses how rows move
  // between tensor memory and registers, whatever layout a value has.
  if (!l->attr)
    return a;
  // Outside a Mosaic GPU kernel (a pallas_call that pkc lowers itself,
  // whose layouts it chooses) the cast is what it means to the values:
  // nothing.
  if (!el.activeMesh)
    return a;
  mlir::Value v = pk::LayoutCastOp::create(el.builder(), el.loc(xr), a->value.getType(), a->value,
                                           llvm::cast<pk::GpuLayoutAttr>(l->attr));
  return el.arrays().wrap(v, a->shape, a->dtype, a->weak);
}

Obj transposeRef(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"ref"}, {"permutation"}});
  RefObj &ref = refArg(el, a[0], a.range(0), "plgpu.transpose_ref's argument");
  el.requireKernel(args.range, "plgpu.transpose_ref");
  std::vector<int64_t> perm = el.toShape(a[1], a.range(1), "permutation");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != ref.shape.size())
      el.fail(a.range(1), "the permutation " + shapeText(perm) + " is not a permutation of the " +
                              std::to_string(ref.shape.size()) + " axes of the Ref");
  if (sorted.size() != ref.shape.size())
    el.fail(a.range(1), "the permutation needs one entry per axis of the Ref");
  mlir::Value base = materializeRef(el, ref, a.range(0));
  auto type = llvm::cast<pk::RefType>(base.getType());
  std::vector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getShape()[d]);
  mlir::ArrayAttr transforms =
      type.hasTransforms() ? pk::transposeTransforms(&el.context(), type.getTransforms(), perm)
                           : nullptr;
  auto result = pk::RefType::get(shape, type.getElementType(), type.getMemorySpace(), transforms);
  mlir::Value v = pk::RefTransposeOp::create(el.builder(), el.loc(args.range), result, base,
                                             el.builder().getDenseI64ArrayAttr(perm));
  return std::make_shared<RefObj>(v, shape, ref.dtype);
}

} // namespace

void checkOobFillMode(Elaborator &el, const Obj &mode, SourceRange r, const char *what) {
  std::optional<int64_t> value = el.staticInt(mode);
  if (!value || *value < 0 || *value > 2)
    el.fail(r, std::string(what) +
                   " must be a plgpu.OOBFillMode (UNDEFINED, PROMISE_IN_BOUNDS or ZEROS), got " +
                   repr(*mode));
}

Obj transposedRef(Elaborator &el, const Obj &ref, const std::vector<int64_t> &permutation,
                  SourceRange r) {
  CallArgs call;
  call.range = r;
  call.addPositional(ref, r);
  std::vector<Obj> axes;
  for (int64_t d : permutation)
    axes.push_back(makeInt(d));
  call.addPositional(makeTuple(axes), r);
  return transposeRef(el, call);
}

mlir::Value indexValue(Elaborator &el, const Obj &o, SourceRange r) {
  if (std::optional<int64_t> i = el.staticInt(o))
    return mlir::arith::ConstantIndexOp::create(el.builder(), el.loc(r), *i);
  ArrayPtr a = el.arrays().toArray(o, r);
  if (a->rank() != 0 || isFloat(a->dtype) || a->dtype == DType::Bool)
    el.fail(r, "an index must be an integer scalar, got " + std::string(numpyName(a->dtype)) +
                   shapeText(a->shape));
  mlir::OpBuilder &b = el.builder();
  return mlir::arith::IndexCastOp::create(b, el.loc(r), b.getIndexType(), a->value);
}

mlir::Value materializeRef(Elaborator &el, const RefObj &ref, SourceRange r, bool allowRagged) {
  requireRefMemory(el, ref, r);
  rejectBitcastView(el, ref, r);
  if (!allowRagged)
    rejectRaggedView(el, ref, r);
  if (!ref.view)
    return ref.value;
  const RefView &view = *ref.view;
  if (!view.gather.empty())
    el.fail(r, "a Ref indexed with integer arrays (x_ref.at[idx]) is a gather, not a window: it "
               "can be read and written, but not passed on as a Ref (to an async copy or another "
               "op); copy its rows one by one, or read it into a value");
  auto base = llvm::cast<pk::RefType>(ref.value.getType());
  std::vector<int64_t> squeeze;
  for (size_t d = 0; d < view.squeezed.size(); ++d)
    if (view.squeezed[d])
      squeeze.push_back(static_cast<int64_t>(d));
  if (base.hasTransforms()) {
    std::string why = pk::checkSmemWindow(base.getShape(), base.getTransforms(), view.staticOffsets,
                                          view.sizes, view.strides, squeeze);
    if (!why.empty())
      el.fail(r, "this view of a transformed shared-memory Ref cannot be taken: " + why);
  }
  for (size_t d = 0; d < view.sizes.size(); ++d)
    if (!mlir::ShapedType::isDynamic(view.sizes[d]) &&
        (view.sizes[d] - 1) * view.strides[d] + 1 > base.getShape()[d])
      el.fail(r, "the view is larger than the Ref along axis " + std::to_string(d));
  mlir::ArrayAttr transforms =
      pk::windowTransforms(&el.context(), base.getTransforms(), squeeze, base.getShape().size());
  auto type = pk::RefType::get(ref.shape, base.getElementType(), base.getMemorySpace(), transforms);
  mlir::OpBuilder &b = el.builder();
  return pk::RefViewOp::create(
      b, el.loc(r), type, ref.value, view.dynamicOffsets, view.dynamicSizes,
      b.getDenseI64ArrayAttr(view.staticOffsets), b.getDenseI64ArrayAttr(view.sizes),
      b.getDenseI64ArrayAttr(view.strides), b.getDenseI64ArrayAttr(squeeze));
}

mlir::Type refTypeOf(Elaborator &el, const RefObj &ref, SourceRange r) {
  return materializeRef(el, ref, r).getType();
}

void defineMosaicGpuMemory(Elaborator &el, NamespaceObj &n, NamespaceObj &pl) {
  define(n, "copy_gmem_to_smem", copyGmemToSmem);
  define(n, "copy_smem_to_gmem", copySmemToGmem);
  define(n, "wait_smem_to_gmem", waitSmemToGmem);
  define(n, "commit_smem_to_gmem_group", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    requireMesh(el, args.range, "plgpu.commit_smem_to_gmem_group");
    pk::CommitGroupOp::create(el.builder(), el.loc(args.range));
    return noValue();
  });
  n.members["commit_group"] = n.members["commit_smem_to_gmem_group"];
  define(n, "commit_smem", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    requireMesh(el, args.range, "plgpu.commit_smem");
    pk::CommitSmemOp::create(el.builder(), el.loc(args.range));
    return noValue();
  });
  define(n, "barrier_arrive",
         [](Elaborator &el, CallArgs &args) { return barrierOp(el, args, false); });
  define(n, "barrier_wait",
         [](Elaborator &el, CallArgs &args) { return barrierOp(el, args, true); });
  define(n, "barrier_test", barrierTest);
  define(n, "wgmma", wgmma);
  define(n, "wgmma_wait", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}});
    requireMesh(el, args.range, "plgpu.wgmma_wait");
    int64_t count = el.toInt(a[0], a.range(0), "the number of wgmma ops left in flight");
    if (count < 0)
      el.fail(a.range(0), "wgmma_wait(n) leaves n wgmma ops in flight; n must not be negative");
    pk::WgmmaWaitOp::create(el.builder(), el.loc(args.range), count);
    return noValue();
  });
  define(n, "wgmma_accumulator_load", wgmmaAccumulatorLoad);
  define(n, "layout_cast", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"new_layout"}});
    el.requireKernel(args.range, "plgpu.layout_cast");
    return layoutCast(el, a[0], a[1], a.range(0), a.range(1));
  });
  define(n, "set_max_registers", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"n"}, {"action", nullptr, true}});
    requireMesh(el, args.range, "plgpu.set_max_registers");
    int64_t count = el.toInt(a[0], a.range(0), "the register count");
    if (count < 24 || count > 256 || count % 8)
      el.fail(a.range(0),
              "setmaxnreg takes a multiple of 8 between 24 and 256, got " + std::to_string(count));
    std::string action = el.toStr(a[1], a.range(1), "action");
    if (action != "increase" && action != "decrease")
      el.fail(a.range(1), "action must be \"increase\" or \"decrease\", got \"" + action + "\"");
    auto op = pk::SetMaxRegistersOp::create(el.builder(), el.loc(args.range), count);
    if (action == "increase")
      op.setIncrease(true);
    return noValue();
  });
  // Mosaic GPU's IntEnum of what a TMA load reads past its source's array.
  auto oobFillMode = std::make_shared<NamespaceObj>("plgpu.OOBFillMode");
  oobFillMode->members["UNDEFINED"] = makeInt(0);
  oobFillMode->members["PROMISE_IN_BOUNDS"] = makeInt(1);
  oobFillMode->members["ZEROS"] = makeInt(2);
  n.members["OOBFillMode"] = oobFillMode;
  for (bool launch : {false, true})
    define(n, launch ? "griddepcontrol_launch_dependents" : "griddepcontrol_wait",
           [launch](Elaborator &el, CallArgs &args) -> Obj {
             el.bind(args, {});
             requireMesh(el, args.range,
                         launch ? "plgpu.griddepcontrol_launch_dependents"
                                : "plgpu.griddepcontrol_wait");
             auto op = pk::GridDependencyOp::create(el.builder(), el.loc(args.range));
             if (launch)
               op.setLaunchDependents(true);
             return noValue();
           });
  define(n, "transpose_ref", transposeRef);
  define(n, "load", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"src"},
                                 {"idx", std::make_shared<EllipsisObj>()},
                                 {"layout", none(), true},
                                 {"optimized", makeBool(true), true}});
    RefObj &ref = refArg(el, a[0], a.range(0), "plgpu.load's source");
    Obj value = loadRef(el, ref, a[1], nullptr, nullptr, args.range);
    if (!isNone(a[2]))
      return layoutCast(el, value, a[2], args.range, a.range(2));
    return value;
  });
  define(n, "broadcasted_iota", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}, {"shape"}, {"dimension"}, {"layout", none(), true}});
    el.requireKernel(args.range, "plgpu.broadcasted_iota");
    std::vector<int64_t> shape = el.toShape(a[1], a.range(1), "shape");
    int64_t dim = el.normalizeAxis(a[2], static_cast<int64_t>(shape.size()), a.range(2));
    Obj value = el.arrays().iota(shape, dim, el.toDType(a[0], a.range(0), "dtype"), args.range);
    if (!isNone(a[3]))
      return layoutCast(el, value, a[3], args.range, a.range(3));
    return value;
  });
  const std::pair<const char *, pk::AtomicKind> atomics[] = {
      {"atomic_add", pk::AtomicKind::Add}, {"atomic_max", pk::AtomicKind::Max},
      {"atomic_min", pk::AtomicKind::Min}, {"atomic_and", pk::AtomicKind::And},
      {"atomic_or", pk::AtomicKind::Or},   {"atomic_xor", pk::AtomicKind::Xor}};
  for (auto [name, kind] : atomics)
    define(
        n, name,
        [name = std::string("plgpu.") + name, kind = kind](Elaborator &el, CallArgs &args) -> Obj {
          // Mosaic GPU's atomics take a Ref (view) and a value.
          BoundArgs a = el.bind(args, {{"ref"}, {"val"}});
          RefObj &ref = refArg(el, a[0], a.range(0), name + "'s first argument");
          pk::AtomicKind k = kind;
          if (isUnsigned(ref.dtype) && k == pk::AtomicKind::Max)
            k = pk::AtomicKind::MaxU;
          if (isUnsigned(ref.dtype) && k == pk::AtomicKind::Min)
            k = pk::AtomicKind::MinU;
          atomicRef(el, ref, std::make_shared<EllipsisObj>(), a[1], nullptr, k, args.range);
          return noValue();
        });
  define(pl, "semaphore_signal", semaphoreSignal);
  define(pl, "semaphore_wait", semaphoreWait);
  // plgpu's variants add the memory scope of the atomic ("sys" or "gpu"):
  // on one device both order what the semaphore guards.
  for (auto [name, op] : {std::pair{"semaphore_signal", &semaphoreSignal},
                          std::pair{"semaphore_wait", &semaphoreWait}})
    define(n, name,
           [op, name = std::string("plgpu.") + name](Elaborator &el, CallArgs &args) -> Obj {
             SourceRange at = args.rangeOfKeyword("memory_scope");
             if (Obj scope = args.takeKeyword("memory_scope")) {
               auto *text = llvm::dyn_cast<StrObj>(scope.get());
               if (!text || (text->value != "sys" && text->value != "gpu"))
                 el.fail(at, name + "'s memory_scope must be \"sys\" or \"gpu\"");
             }
             return op(el, args);
           });
  define(pl, "semaphore_read", semaphoreRead);
  define(pl, "get_global", getGlobal);
}

} // namespace pk::elab
