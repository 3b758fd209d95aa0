//===- TpuMemory.cpp - Async copies and semaphores of TPU kernels ---------===//
//
// What TPU Pallas kernels use to move memory themselves
// (`from jax.experimental.pallas import tpu as pltpu`):
// pltpu.SemaphoreType.{DMA,REGULAR,BARRIER} scratch, make_async_copy /
// async_copy / sync_copy with their descriptors' start() and wait(), and
// the semaphore ops under both spellings (pl.semaphore_* and the
// deprecated pltpu.semaphore_*). Copies emit pk.dma_start / pk.dma_wait;
// like Pallas, a descriptor emits nothing itself, and each start() and
// wait() takes its Ref views anew where it is called.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "ir/DTypeMapping.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk::elab {

namespace {

std::shared_ptr<RefObj> copyRef(Elaborator &el, const Obj &o, SourceRange r, const char *what) {
  auto ref = std::dynamic_pointer_cast<RefObj>(o);
  if (!ref)
    el.fail(r, std::string("the copy's ") + what + " must be a Ref (x_ref or x_ref.at[...]), got " +
                   typeName(*o));
  requireRefMemory(el, *ref, r);
  return ref;
}

/// One DMA semaphore (`sem`, or `sems.at[i]`).
std::shared_ptr<SyncRefObj> dmaSemaphore(Elaborator &el, const Obj &o, SourceRange r) {
  auto sem = std::dynamic_pointer_cast<SyncRefObj>(o);
  auto type = sem ? llvm::dyn_cast<pk::SemaphoreType>(sem->value.getType()) : nullptr;
  if (!type || !type.isDma())
    el.fail(r, "an async copy completes on a DMA semaphore (pltpu.SemaphoreType.DMA), got " +
                   (type ? std::string("a regular semaphore") : typeName(*o)));
  if (sem->indices.empty() && sem->size() != 1) // the array's, or its window's (sems.at[0:2])
    el.fail(r, "this is an array of " + std::to_string(sem->size()) +
                   " DMA semaphores; pass one of them (sem.at[i])");
  return sem;
}

/// A copy's operands, checked where the descriptor is made.
struct Copy {
  std::shared_ptr<RefObj> src, dst;
  std::shared_ptr<SyncRefObj> sem;
};

Copy checkedCopy(Elaborator &el, const Obj &src, const Obj &dst, const Obj &sem, SourceRange r,
                 SourceRange srcRange, SourceRange dstRange, SourceRange semRange) {
  el.requireKernel(r, "an async copy");
  Copy c{copyRef(el, src, srcRange, "source"), copyRef(el, dst, dstRange, "destination"),
         dmaSemaphore(el, sem, semRange)};
  if (c.src->shape != c.dst->shape)
    el.fail(r, "an async copy needs a source and destination of the same shape, got " +
                   shapeText(c.src->shape) + " and " + shapeText(c.dst->shape) +
                   (c.src->isRagged() || c.dst->isRagged()
                        ? " (? is a pl.ds size known only at run time: both sides need one on "
                          "the same axes)"
                        : ""));
  if (c.src->dtype != c.dst->dtype)
    el.fail(r, std::string("an async copy cannot convert: the source holds ") +
                   numpyName(c.src->dtype) + " and the destination " + numpyName(c.dst->dtype));
  for (const auto &ref : {c.src, c.dst})
    if (auto space = llvm::cast<pk::RefType>(ref->value.getType()).getSpace();
        space && (*space == MemorySpace::GPUShared || *space == MemorySpace::GPUGlobal ||
                  *space == MemorySpace::GPUAccumulator))
      el.fail(ref.get() == c.src.get() ? srcRange : dstRange,
              "pltpu async copies move TPU memory (pl.ANY, pltpu.HBM, VMEM, SMEM); for Mosaic "
              "GPU memory use plgpu.copy_gmem_to_smem / copy_smem_to_gmem");
  return c;
}

void emitStart(Elaborator &el, const Copy &c, int64_t priority, SourceRange r) {
  mlir::Value src = materializeRef(el, *c.src, r, /*allowRagged=*/true);
  mlir::Value dst = materializeRef(el, *c.dst, r, /*allowRagged=*/true);
  auto op = pk::DmaStartOp::create(el.builder(), el.loc(r), src, dst, c.sem->value,
                                   c.sem->indices);
  op.setPriority(static_cast<int32_t>(priority));
}

void emitWait(Elaborator &el, const Copy &c, SourceRange r) {
  mlir::Value src = materializeRef(el, *c.src, r, /*allowRagged=*/true);
  mlir::Value dst = materializeRef(el, *c.dst, r, /*allowRagged=*/true);
  pk::DmaWaitOp::create(el.builder(), el.loc(r), src, dst, c.sem->value, c.sem->indices);
}

const char *kRemote = "copies to or from another device or core are not supported: pkc compiles "
                      "kernels for one TPU core";

/// What make_async_copy returns: an object with start() and wait().
Obj descriptor(const Copy &copy) {
  auto d = std::make_shared<NamespaceObj>("pltpu.AsyncCopyDescriptor");
  define(*d, "start", [copy](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"priority", makeInt(0), true}, {"add", makeBool(false), true}});
    el.requireKernel(args.range, "an async copy's start()");
    int64_t priority = el.toInt(a[0], a.range(0), "priority");
    if (priority < 0 || priority > 1)
      el.fail(a.range(0), "a DMA's priority is 0 or 1, got " + std::to_string(priority));
    if (el.truthy(a[1], a.range(1)))
      el.fail(a.range(1), "start(add=True) (a DMA that adds into its destination) is not "
                          "supported");
    emitStart(el, copy, priority, args.range);
    return none();
  });
  define(*d, "wait", [copy](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    el.requireKernel(args.range, "an async copy's wait()");
    emitWait(el, copy, args.range);
    return none();
  });
  for (const char *remoteOnly : {"wait_recv", "wait_send"})
    define(*d, remoteOnly, [remoteOnly](Elaborator &el, CallArgs &args) -> Obj {
      el.fail(args.range, std::string(remoteOnly) + "() waits for one side of a copy between "
                                                    "devices; " +
                              kRemote);
    });
  return d;
}

Obj makeAsyncCopy(Elaborator &el, CallArgs &args, bool start) {
  BoundArgs a = el.bind(args, {{"src_ref"}, {"dst_ref"}, {"sem"}, {"priority", makeInt(0), true}});
  Copy c = checkedCopy(el, a[0], a[1], a[2], args.range, a.range(0), a.range(1), a.range(2));
  if (start)
    emitStart(el, c, el.toInt(a[3], a.range(3), "priority"), args.range);
  return descriptor(c);
}

/// pltpu.sync_copy(src, dst): a copy on a DMA semaphore of its own,
/// started and waited for in a scope (as Pallas lowers it).
Obj syncCopy(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"src_ref"}, {"dst_ref"}});
  el.requireKernel(args.range, "pltpu.sync_copy");
  Obj request = semaphoreAllocation(el, {}, pk::SemaphoreKind::DMA, args.range);
  return scoped(el, request, {}, args.range, [&](const Obj &sem) -> Obj {
    Copy c = checkedCopy(el, a[0], a[1], sem, args.range, a.range(0), a.range(1), args.range);
    emitStart(el, c, 0, args.range);
    emitWait(el, c, args.range);
    return none();
  });
}

} // namespace

void defineTpuMemory(Elaborator &el, NamespaceObj &tpu, NamespaceObj &pl) {
  auto semaphores = std::make_shared<NamespaceObj>("pltpu.SemaphoreType");
  semaphores->members["REGULAR"] =
      semaphoreAllocation(el, {}, pk::SemaphoreKind::Regular, SourceRange());
  semaphores->members["BARRIER"] =
      semaphoreAllocation(el, {}, pk::SemaphoreKind::Barrier, SourceRange());
  semaphores->members["DMA"] = semaphoreAllocation(el, {}, pk::SemaphoreKind::DMA, SourceRange());
  tpu.members["SemaphoreType"] = semaphores;
  define(tpu, "make_async_copy",
         [](Elaborator &el, CallArgs &args) { return makeAsyncCopy(el, args, false); });
  define(tpu, "async_copy",
         [](Elaborator &el, CallArgs &args) { return makeAsyncCopy(el, args, true); });
  define(tpu, "sync_copy", syncCopy);
  for (const char *remote : {"make_async_remote_copy", "async_remote_copy"})
    define(tpu, remote, [remote](Elaborator &el, CallArgs &args) -> Obj {
      el.fail(args.range, std::string("pltpu.") + remote + ": " + kRemote);
    });
  defineTpuPipelines(el, tpu);
  // The semaphore ops and DeviceIdType, under their deprecated pltpu names too.
  for (const char *name : {"semaphore_signal", "semaphore_wait", "semaphore_read", "DeviceIdType"})
    if (pl.members.count(name))
      tpu.members[name] = pl.members[name];
}

} // namespace pk::elab
