//===- LowerMosaicGpu.cpp - Barriers, semaphores, async copies, views -----===//
//
// The thread-level code of the Mosaic GPU ops the outline stage leaves in
// a kernel. A Pallas thread is a warpgroup, so each op is executed by its
// 128 threads together: what the program does once per Pallas thread
// (an arrival, a semaphore signal, a TMA copy, a bulk group) is done by
// the warpgroup's first thread after the warpgroup has synchronized, and
// what every thread must observe (a barrier phase, a finished bulk group)
// is awaited by all of them, or by the first thread before the warpgroup
// synchronizes (a semaphore's count). Copies TMA cannot carry (MeshTma.h)
// are done by the warpgroup's threads element by element, and then
// complete their barrier like a TMA copy would.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/LowerMosaicGpu.h"
#include "backends/cuda/Async.h"
#include "backends/cuda/Distribute.h"
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Wgmma.h"
#include "ir/MosaicGpuRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace pk::gpu {

using namespace mlir;

RefInfo &refOf(Emitter &e, Value ref) { return e.refs.at(ref.getAsOpaquePointer()); }

Value i32Of(Emitter &e, Value index) {
  return arith::IndexCastOp::create(e.b, e.loc, e.b.getI32Type(), index);
}

Value isFirstThread(Emitter &e) {
  if (e.warpLevel)
    return isFirstLane(e);
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.threadId(), e.index(0));
}

/// Whether the executing thread is the CTA's first: the one that sets up
/// what all of its Pallas threads share (barriers, semaphores).
Value isFirstCtaThread(Emitter &e) {
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.ctaThreadId(), e.index(0));
}

/// Whether the executing thread is lane 0 of its warp.
Value isFirstLane(Emitter &e) {
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.laneId(), e.index(0));
}

/// The index of `indices` in a row-major array of `shape`.
Value linearOf(Emitter &e, ValueRange indices, ArrayRef<int64_t> shape) {
  SmallVector<Value> c;
  for (Value v : indices)
    c.push_back(e.values.lookup(v));
  if (c.empty())
    return e.index(0);
  return e.linearIndex(c, shape);
}

/// The array coordinate of a Ref coordinate.
SmallVector<Value> arrayCoordinate(Emitter &e, const RefInfo &ref, ArrayRef<Value> refCoordinate) {
  SmallVector<Value> array(ref.offsets.begin(), ref.offsets.end());
  for (size_t j = 0; j < refCoordinate.size(); ++j)
    array[ref.refToArray[j]] = arith::AddIOp::create(e.b, e.loc, array[ref.refToArray[j]], refCoordinate[j]);
  return array;
}

/// The address of the element at a Ref coordinate.
Value pointerAt(Emitter &e, const RefInfo &ref, ArrayRef<Value> refCoordinate) {
  return e.refPointer(ref, arrayCoordinate(e, ref, refCoordinate));
}

namespace {

// ---- Clusters.

/// The running CTA's place in its cluster, for a kernel whose CTAs reach
/// into each other's shared memory (kClusterShapeAttr): its rank (CTAs
/// are numbered row-major over the grid, then the cluster axes, on x, so
/// the rank is the block index modulo the cluster's size, as the
/// hardware's %cluster_ctarank) and its coordinate along each axis.
struct ClusterPlace {
  SmallVector<int64_t> shape, strides; ///< per cluster axis
  Value rank;                          ///< index
  SmallVector<Value> coordinates;      ///< index, per cluster axis
};

ClusterPlace clusterPlace(Emitter &e) {
  ClusterPlace place;
  auto shape = e.func->getAttrOfType<DenseI64ArrayAttr>(kClusterShapeAttr);
  place.shape.assign(shape.asArrayRef().begin(), shape.asArrayRef().end());
  place.strides.assign(place.shape.size(), 1);
  int64_t size = 1;
  for (size_t a = place.shape.size(); a-- > 0;) {
    place.strides[a] = size;
    size *= place.shape[a];
  }
  // Computed once, in the kernel's prologue, for every op that asks.
  place.rank = e.cached("cluster-rank", [&](OpBuilder &p) -> Value {
    Value block = ::mlir::gpu::BlockIdOp::create(p, e.loc, ::mlir::gpu::Dimension::x);
    return arith::RemUIOp::create(p, e.loc, block, e.index(size));
  });
  for (size_t a = 0; a < place.shape.size(); ++a)
    place.coordinates.push_back(
        e.cached("cluster-coordinate:" + std::to_string(a), [&](OpBuilder &p) -> Value {
          Value above = arith::DivUIOp::create(p, e.loc, place.rank, e.index(place.strides[a]));
          return arith::RemUIOp::create(p, e.loc, above, e.index(place.shape[a]));
        }));
  return place;
}

/// The cluster positions of the axes a cluster barrier names.
SmallVector<unsigned> clusterAxes(Emitter &e, pk::BarrierType type) {
  auto names = e.func->getAttrOfType<ArrayAttr>(kClusterNamesAttr);
  SmallVector<unsigned> axes;
  for (Attribute a : type.getClusterAxes())
    for (auto [i, name] : llvm::enumerate(names))
      if (name == a)
        axes.push_back(static_cast<unsigned>(i));
  return axes;
}

/// How many CTAs arrive at each of a cluster barrier's barriers: the CTA
/// itself and every other CTA along each of its axes (the interpreter's
/// rule, and Mosaic GPU's).
int64_t clusterBarrierArrivers(Emitter &e, pk::BarrierType type) {
  auto shape = e.func->getAttrOfType<DenseI64ArrayAttr>(kClusterShapeAttr).asArrayRef();
  int64_t arrivers = 1;
  for (unsigned a : clusterAxes(e, type))
    arrivers += shape[a] - 1;
  return arrivers;
}

} // namespace

// ---- Barriers.

/// The executing warp's index in the CTA.
Value ctaWarp(Emitter &e) {
  return arith::DivUIOp::create(e.b, e.loc, e.ctaThreadId(), e.index(32));
}

BarrierAt barrierAt(Emitter &e, Value barrier, ValueRange indices) {
  const BarrierInfo &info = e.barriers.at(barrier.getAsOpaquePointer());
  Value linear = linearOf(e, indices, info.shape);
  BarrierAt at;
  at.barrier = e.sharedPointer(e.index(info.offset), e.b.getI64Type(), linear);
  Value word = arith::DivUIOp::create(e.b, e.loc, linear, e.index(32));
  Value wordStart = arith::MulIOp::create(e.b, e.loc, word, e.index(info.ctaWarps));
  Value slot = arith::AddIOp::create(e.b, e.loc, wordStart, ctaWarp(e));
  at.parity = e.sharedPointer(e.index(info.parityOffset), e.b.getI32Type(), slot);
  at.bit = i32Of(e, arith::RemUIOp::create(e.b, e.loc, linear, e.index(32)));
  return at;
}

namespace {

/// One arrival of the running Pallas thread, once all of its threads got
/// here (so that what they did before happens before the arrival).
void arriveOnce(Emitter &e, Value barrier) {
  e.barrier();
  e.guarded(isFirstThread(e), [&] { async::mbarrierArrive(e.b, e.loc, barrier); });
}

LogicalResult lowerBarrierArrive(Emitter &e, pk::BarrierArriveOp op) {
  tensorCoreFence(e, op.getBarrier(), /*beforeSync=*/true);
  Value barrier = barrierAt(e, op.getBarrier(), op.getIndices()).barrier;
  auto type = llvm::cast<pk::BarrierType>(op.getBarrier().getType());
  if (!type.isClusterBarrier() || !e.func->hasAttr(kClusterShapeAttr)) {
    arriveOnce(e, barrier);
    return success();
  }
  // A cluster barrier: one arrival at the same barrier of this CTA and of
  // every other CTA along each of its axes, through the cluster window.
  ClusterPlace place = clusterPlace(e);
  SmallVector<Value> ranks{place.rank};
  for (unsigned a : clusterAxes(e, type))
    for (int64_t delta = 1; delta < place.shape[a]; ++delta) {
      // Coordinate c + delta (mod size) along axis a: rank + (c' - c) * stride.
      Value moved = arith::RemUIOp::create(e.b, e.loc, e.add(place.coordinates[a], e.index(delta)),
                                           e.index(place.shape[a]));
      Value base = arith::SubIOp::create(e.b, e.loc, place.rank,
                                         e.mul(place.coordinates[a], e.index(place.strides[a])));
      ranks.push_back(e.add(base, e.mul(moved, e.index(place.strides[a]))));
    }
  e.barrier();
  e.guarded(isFirstThread(e), [&] {
    for (Value rank : ranks)
      async::mbarrierArriveCluster(e.b, e.loc,
                                   async::mapaShared(e.b, e.loc, barrier, i32Of(e, rank)));
  });
  return success();
}

/// A Pallas thread (a warpgroup) waits as a whole, so each warp keeps one
/// parity bit per barrier: lane 0 reads the word and hands it to the warp
/// (shfl.sync, which every lane passes together), and after the wait
/// writes it flipped. Only lane 0 touches the word.
/// Lane 0's value `v` (i32), in every lane of the warp.
Value fromFirstLane(Emitter &e, Value v) {
  return ::mlir::gpu::ShuffleOp::create(e.b, e.loc, v, e.i32(0), e.i32(32),
                                        ::mlir::gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

/// The warp's parity word of a barrier (read by lane 0) and the parity of
/// the phase it waits for next.
std::pair<Value, Value> parityOf(Emitter &e, const BarrierAt &at) {
  Type i32 = e.b.getI32Type();
  Value read = e.guardedValue(
      isFirstLane(e), i32,
      [&] { return LLVM::LoadOp::create(e.b, e.loc, i32, at.parity).getResult(); }, e.i32(0));
  Value word = fromFirstLane(e, read);
  Value parity =
      arith::AndIOp::create(e.b, e.loc, arith::ShRUIOp::create(e.b, e.loc, word, at.bit), e.i32(1));
  return {word, parity};
}

/// Lane 0 writes the parity word back with the barrier's bit xor `flip`
/// (i32, 0 or 1).
void storeFlipped(Emitter &e, const BarrierAt &at, Value word, Value flip) {
  Value flipped =
      arith::XOrIOp::create(e.b, e.loc, word, arith::ShLIOp::create(e.b, e.loc, flip, at.bit));
  e.guarded(isFirstLane(e), [&] { LLVM::StoreOp::create(e.b, e.loc, flipped, at.parity); });
}

LogicalResult lowerBarrierWait(Emitter &e, pk::BarrierWaitOp op) {
  BarrierAt at = barrierAt(e, op.getBarrier(), op.getIndices());
  auto [word, parity] = parityOf(e, at);
  async::mbarrierWait(e.b, e.loc, at.barrier, parity);
  tensorCoreFence(e, op.getBarrier(), /*beforeSync=*/false);
  storeFlipped(e, at, word, e.i32(1));
  return success();
}

/// As Mosaic GPU's BarrierRef.test: the phase barrier_wait would wait for
/// has completed, or not, and a completed one counts as waited for. One
/// thread tests (the first of the Pallas thread, or lane 0 in warp-level
/// code) and hands the answer to the others, so that they agree (Mosaic
/// GPU ORs the answers of all of them: once complete, a phase stays so
/// until it is waited for, so either agrees with some moment of the
/// test); then each warp flips its parity bit, as after a wait.
LogicalResult lowerBarrierTest(Emitter &e, pk::BarrierTestOp op) {
  BarrierAt at = barrierAt(e, op.getBarrier(), op.getIndices());
  auto [word, parity] = parityOf(e, at);
  Type i32 = e.b.getI32Type();
  auto test = [&] {
    return arith::ExtUIOp::create(e.b, e.loc, i32,
                                  async::mbarrierTest(e.b, e.loc, at.barrier, parity))
        .getResult();
  };
  Value done; // i32: 0 or 1
  if (e.warpLevel) {
    done = fromFirstLane(e, e.guardedValue(isFirstLane(e), i32, test, e.i32(0)));
  } else {
    int64_t offset = e.beginSharedTemporary(4);
    Value slot = e.sharedPointer(e.index(offset), i32, e.index(0));
    e.guarded(isFirstThread(e), [&] { LLVM::StoreOp::create(e.b, e.loc, test(), slot); });
    e.barrier();
    done = LLVM::LoadOp::create(e.b, e.loc, i32, slot);
  }
  Value isDone = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ne, done, e.i32(0));
  e.guarded(isDone, [&] { tensorCoreFence(e, op.getBarrier(), /*beforeSync=*/false); });
  storeFlipped(e, at, word, done);
  e.values.map(op.getResult(), isDone);
  return success();
}

// ---- Semaphores.

/// A generic pointer to the counter of `semaphore` at `indices`.
Value semaphorePointer(Emitter &e, Value semaphore, ValueRange indices) {
  const SemaphoreInfo &info = e.semaphores.at(semaphore.getAsOpaquePointer());
  Value linear = linearOf(e, indices, info.shape);
  Value pointer;
  if (info.sharedOffset >= 0) {
    pointer = e.sharedPointer(e.index(info.sharedOffset), e.b.getI32Type(), linear);
  } else {
    const RefInfo &buffer = e.refs.at(info.buffer);
    pointer = pointerAt(e, buffer, {e.add(linear, e.index(info.wordOffset))});
  }
  return LLVM::AddrSpaceCastOp::create(e.b, e.loc, LLVM::LLVMPointerType::get(e.b.getContext()),
                                       pointer);
}

/// As Mosaic GPU's SemaphoreRef.signal: the Pallas thread's writes are
/// done (its warpgroup synchronizes), then its first thread adds with
/// release semantics.
LogicalResult lowerSemaphoreSignal(Emitter &e, pk::SemaphoreSignalOp op) {
  Value increment = e.values.lookup(op.getIncrement());
  e.barrier();
  e.guarded(isFirstThread(e), [&] {
    SemaphoreSignalOp::create(e.b, e.loc, semaphorePointer(e, op.getSemaphore(), op.getIndices()),
                              increment);
  });
  return success();
}

/// As Mosaic GPU's SemaphoreRef.wait: the first thread waits (and
/// acquires), then its warpgroup synchronizes so that every thread may
/// read what the signals released.
LogicalResult lowerSemaphoreWait(Emitter &e, pk::SemaphoreWaitOp op) {
  Value value = e.values.lookup(op.getValue());
  e.guarded(isFirstThread(e), [&] {
    auto wait = SemaphoreWaitOp::create(
        e.b, e.loc, semaphorePointer(e, op.getSemaphore(), op.getIndices()), value);
    wait.setNoDecrement(op.getNoDecrement());
  });
  e.barrier();
  return success();
}

/// pl.semaphore_read: every thread loads the counter with acquire
/// semantics at GPU scope (an atomic load: signals may race with it).
LogicalResult lowerSemaphoreRead(Emitter &e, pk::SemaphoreReadOp op) {
  Value pointer = semaphorePointer(e, op.getSemaphore(), op.getIndices());
  Value value = LLVM::LoadOp::create(
      e.b, e.loc, e.b.getI32Type(), pointer, /*alignment=*/4, /*isVolatile=*/false,
      /*isNonTemporal=*/false, /*isInvariant=*/false, /*isInvariantGroup=*/false,
      LLVM::AtomicOrdering::acquire, "device");
  e.values.map(op.getResult(), value);
  return success();
}

LogicalResult recordSemaphoreAlloc(Emitter &e, SemaphoreAllocOp op) {
  auto type = llvm::cast<pk::SemaphoreType>(op.getType());
  SemaphoreInfo info;
  info.sharedOffset = static_cast<int64_t>(op.getOffset());
  info.shape.assign(type.getShape().begin(), type.getShape().end());
  e.semaphores[op.getResult().getAsOpaquePointer()] = info;
  // Zeroed by thread 0 before any thread of the CTA may signal them.
  e.guarded(isFirstCtaThread(e), [&] {
    auto loop =
        scf::ForOp::create(e.b, e.loc, e.index(0), e.index(type.getNumElements()), e.index(1));
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(loop.getBody());
    LLVM::StoreOp::create(
        e.b, e.loc, e.i32(0),
        e.sharedPointer(e.index(info.sharedOffset), e.b.getI32Type(), loop.getInductionVar()));
  });
  ::mlir::gpu::BarrierOp::create(e.b, e.loc);
  return success();
}

LogicalResult recordSemaphoreView(Emitter &e, SemaphoreViewOp op) {
  auto type = llvm::cast<pk::SemaphoreType>(op.getType());
  SemaphoreInfo info;
  info.buffer = op.getBuffer().getAsOpaquePointer();
  info.wordOffset = static_cast<int64_t>(op.getOffset());
  info.shape.assign(type.getShape().begin(), type.getShape().end());
  e.semaphores[op.getResult().getAsOpaquePointer()] = info;
  e.func->setAttr(kCtasWaitForEachOtherAttr, e.b.getUnitAttr());
  return success();
}

// ---- Async copies.

/// The warpgroup copies `from` to `to` (Refs of one shape), element by
/// element: thread t moves elements t, t + 128, ...
void copyBySimt(Emitter &e, const RefInfo &from, const RefInfo &to) {
  ArrayRef<int64_t> shape = to.refShape;
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  int64_t rounds = (count + 127) / 128;
  auto loop = scf::ForOp::create(e.b, e.loc, e.index(0), e.index(rounds), e.index(1));
  OpBuilder::InsertionGuard guard(e.b);
  e.b.setInsertionPointToStart(loop.getBody());
  Value roundStart = arith::MulIOp::create(e.b, e.loc, loop.getInductionVar(), e.index(128));
  Value linear = arith::AddIOp::create(e.b, e.loc, roundStart, e.threadId());
  Value inside = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ult, linear, e.index(count));
  e.guarded(inside, [&] {
    SmallVector<Value> coordinate(shape.size());
    Value rest = linear;
    for (size_t d = shape.size(); d-- > 0;) {
      coordinate[d] = d == 0 ? rest : arith::RemUIOp::create(e.b, e.loc, rest, e.index(shape[d])).getResult();
      if (d > 0)
        rest = arith::DivUIOp::create(e.b, e.loc, rest, e.index(shape[d]));
    }
    Type memory = from.element.isInteger(1) ? e.b.getI8Type() : from.element;
    if (memory.isInteger() && !memory.isSignlessInteger())
      memory = e.b.getIntegerType(memory.getIntOrFloatBitWidth());
    // A global window may reach past its array (x.at[pl.ds(start, n)] near
    // its end): as TMA does, elements past it load as zeros and are not
    // stored.
    const RefInfo &global = from.shared ? to : from;
    SmallVector<Value> at = arrayCoordinate(e, global, coordinate);
    Value inArray;
    for (unsigned d : global.refToArray)
      inArray = e.andOf(inArray, arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ult, at[d],
                                                       global.sizes[d]));
    if (!from.shared) {
      auto load = scf::IfOp::create(e.b, e.loc, TypeRange{memory}, inArray, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard branch(e.b);
        e.b.setInsertionPointToStart(load.thenBlock());
        scf::YieldOp::create(
            e.b, e.loc,
            ValueRange{LLVM::LoadOp::create(e.b, e.loc, memory, pointerAt(e, from, coordinate))});
        e.b.setInsertionPointToStart(load.elseBlock());
        Value zero = arith::ConstantOp::create(e.b, e.loc, e.b.getZeroAttr(memory));
        scf::YieldOp::create(e.b, e.loc, ValueRange{zero});
      }
      LLVM::StoreOp::create(e.b, e.loc, load.getResult(0), pointerAt(e, to, coordinate));
      return;
    }
    e.guarded(inArray, [&] {
      Value v = LLVM::LoadOp::create(e.b, e.loc, memory, pointerAt(e, from, coordinate));
      LLVM::StoreOp::create(e.b, e.loc, v, pointerAt(e, to, coordinate));
    });
  });
}

} // namespace

TmaBoxes tmaBoxes(Emitter &e, int64_t tensorMapParam, ArrayAttr boxAttrs, const RefInfo &global,
                  const RefInfo &shared) {
  TmaBoxes boxes;
  boxes.tensorMap = e.func.getArgument(tensorMapParam);
  // The shared window's first byte: its first element (strips tiles start
  // with it too).
  SmallVector<Value> zeros(shared.refShape.size(), e.index(0));
  Value start = pointerAt(e, shared, zeros);
  for (Attribute a : boxAttrs) {
    ArrayRef<int64_t> fields = llvm::cast<DenseI64ArrayAttr>(a).asArrayRef();
    SmallVector<Value> c;
    for (size_t d = 0; d < global.offsets.size(); ++d) {
      Value at = global.offsets[d];
      if (fields[d])
        at = arith::AddIOp::create(e.b, e.loc, at, e.index(fields[d]));
      c.push_back(i32Of(e, at));
    }
    boxes.coordinates.push_back(c);
    boxes.shared.push_back(LLVM::GEPOp::create(e.b, e.loc, start.getType(), e.b.getI8Type(), start,
                                               ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(fields.back())}));
  }
  return boxes;
}

namespace {

/// The TMA boxes of a copy marked by the outline stage.
TmaBoxes tmaBoxes(Emitter &e, Operation *op, const RefInfo &global, const RefInfo &shared) {
  return tmaBoxes(e, op->getAttrOfType<IntegerAttr>(kTmaParamAttr).getInt(),
                  op->getAttrOfType<ArrayAttr>(kTmaBoxesAttr), global, shared);
}

/// A multicast copy (kTmaMulticastAttr: dimension, rows, bytes, axes):
/// moves each box to this CTA's slice of it, member g of the CTAs along
/// the collective axes taking slice g, and returns the mask (i16) of
/// their cluster ranks, which all receive every slice.
Value multicastSlices(Emitter &e, ArrayRef<int64_t> multicast, TmaBoxes &boxes) {
  unsigned dimension = static_cast<unsigned>(multicast[0]);
  int64_t rows = multicast[1], bytes = multicast[2];
  ArrayRef<int64_t> axes = multicast.drop_front(3);
  ClusterPlace place = clusterPlace(e);
  // The member index (row-major over the axes), the first member's rank,
  // and the ranks' pattern relative to it.
  Value member = e.index(0), first = place.rank;
  SmallVector<int64_t> offsets{0};
  for (int64_t a : axes) {
    member = e.add(e.mul(member, e.index(place.shape[a])), place.coordinates[a]);
    first = arith::SubIOp::create(e.b, e.loc, first,
                                  e.mul(place.coordinates[a], e.index(place.strides[a])));
    SmallVector<int64_t> wider;
    for (int64_t c = 0; c < place.shape[a]; ++c)
      for (int64_t o : offsets)
        wider.push_back(o + c * place.strides[a]);
    offsets = wider;
  }
  int64_t pattern = 0;
  for (int64_t o : offsets)
    pattern |= int64_t(1) << o;
  Value mask = arith::ShLIOp::create(e.b, e.loc, e.i32(pattern), i32Of(e, first));
  Value step = i32Of(e, e.mul(member, e.index(rows)));
  Value byteStep =
      arith::IndexCastOp::create(e.b, e.loc, e.b.getI64Type(), e.mul(member, e.index(bytes)));
  for (size_t i = 0; i < boxes.shared.size(); ++i) {
    boxes.coordinates[i][dimension] =
        arith::AddIOp::create(e.b, e.loc, boxes.coordinates[i][dimension], step);
    boxes.shared[i] = LLVM::GEPOp::create(e.b, e.loc, boxes.shared[i].getType(), e.b.getI8Type(),
                                          boxes.shared[i], ValueRange{byteStep});
  }
  return arith::TruncIOp::create(e.b, e.loc, e.b.getI16Type(), mask);
}

/// Whether `op` is a TMA copy right after another (past ops that touch no
/// memory): the earlier copy's barrier found every thread done with what
/// both buffers held, and since then only one thread has issued a copy.
/// A pipeline fills its K and V blocks this way, step after step.
bool followsTmaCopy(pk::CopyGmemToSmemOp op) {
  if (!op->hasAttr(kTmaParamAttr))
    return false;
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto copy = llvm::dyn_cast<pk::CopyGmemToSmemOp>(prev))
      return copy->hasAttr(kTmaParamAttr);
    if (prev->getNumRegions() != 0 || !isMemoryEffectFree(prev))
      return false;
  }
  return false;
}

LogicalResult lowerCopyGmemToSmem(Emitter &e, pk::CopyGmemToSmemOp op) {
  const RefInfo &src = refOf(e, op.getSrc()), &dst = refOf(e, op.getDst());
  Value barrier = barrierAt(e, op.getBarrier(), op.getBarrierIndices()).barrier;
  // The warpgroup is done with what `dst` held.
  if (!followsTmaCopy(op))
    e.barrier();
  if (!op->hasAttr(kTmaParamAttr)) {
    copyBySimt(e, src, dst);
    arriveOnce(e, barrier);
    return success();
  }
  TmaBoxes boxes = tmaBoxes(e, op, src, dst);
  int64_t bytes = op->getAttrOfType<IntegerAttr>(kTmaBytesAttr).getInt();
  Value mask;
  if (auto multicast = op->getAttrOfType<DenseI64ArrayAttr>(kTmaMulticastAttr))
    mask = multicastSlices(e, multicast.asArrayRef(), boxes);
  e.guarded(isFirstThread(e), [&] {
    // Every CTA of a multicast expects the whole copy's bytes: its own
    // slice and those its peers send.
    async::mbarrierArriveExpectTx(e.b, e.loc, barrier, e.i32(bytes));
    for (size_t i = 0; i < boxes.shared.size(); ++i)
      TmaLoadOp::create(e.b, e.loc, boxes.tensorMap, boxes.coordinates[i], boxes.shared[i], barrier,
                        mask);
  });
  return success();
}

LogicalResult lowerCopySmemToGmem(Emitter &e, pk::CopySmemToGmemOp op) {
  const RefInfo &src = refOf(e, op.getSrc()), &dst = refOf(e, op.getDst());
  Value predicate = op.getPredicate() ? e.values.lookup(op.getPredicate()) : Value();
  e.barrier();
  if (!op->hasAttr(kTmaParamAttr)) {
    e.guarded(predicate, [&] { copyBySimt(e, src, dst); });
    e.barrier();
    return success();
  }
  TmaBoxes boxes = tmaBoxes(e, op, dst, src);
  e.guarded(e.andOf(isFirstThread(e), predicate), [&] {
    for (size_t i = 0; i < boxes.shared.size(); ++i)
      TmaStoreOp::create(e.b, e.loc, boxes.shared[i], boxes.tensorMap, boxes.coordinates[i]);
  });
  if (!op.getNoCommit())
    e.guarded(isFirstThread(e), [&] { async::bulkCommitGroup(e.b, e.loc); });
  return success();
}

// ---- Views.

LogicalResult recordRefView(Emitter &e, pk::RefViewOp op) {
  const RefInfo &parent = refOf(e, op.getRef());
  if (llvm::any_of(op.getStrides(), [](int64_t s) { return s != 1; }))
    return e.fail(op, "the CUDA backend does not lower strided views (x_ref.at[pl.ds(start, size, "
                      "stride)]) of Mosaic GPU Refs yet");
  RefInfo ref = parent;
  auto type = llvm::cast<pk::RefType>(op.getType());
  ref.refShape.assign(type.getShape().begin(), type.getShape().end());
  ref.refToArray.clear();
  unsigned dynamic = 0;
  for (size_t j = 0; j < parent.refShape.size(); ++j) {
    unsigned a = parent.refToArray[j];
    int64_t offset = op.getStaticOffsets()[j];
    Value start = ShapedType::isDynamic(offset) ? e.values.lookup(op.getOffsets()[dynamic++])
                                                : e.index(offset);
    ref.offsets[a] = arith::AddIOp::create(e.b, e.loc, parent.offsets[a], start);
    ref.block[a] = op.getSizes()[j];
    if (!llvm::is_contained(op.getSqueeze(), static_cast<int64_t>(j)))
      ref.refToArray.push_back(a);
  }
  e.refs[op.getResult().getAsOpaquePointer()] = ref;
  return success();
}

} // namespace

// ---- Tensor cores.

bool isMultipleOf(Value v, int64_t m) {
  if (m <= 1)
    return true;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % m == 0;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (llvm::isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return isMultipleOf(def->getOperand(0), m);
  if (llvm::isa<arith::AddIOp>(def))
    return isMultipleOf(def->getOperand(0), m) && isMultipleOf(def->getOperand(1), m);
  if (llvm::isa<arith::MulIOp>(def))
    return isMultipleOf(def->getOperand(0), m) || isMultipleOf(def->getOperand(1), m);
  return false;
}

namespace {

LogicalResult lowerWgmmaTile(Emitter &e, WgmmaTileOp op) {
  auto isOperand = [](const RefInfo *r) { return r && r->shared && r->strips >= 0; };
  auto find = [&](Value ref) -> const RefInfo * {
    auto it = e.refs.find(ref.getAsOpaquePointer());
    return it == e.refs.end() ? nullptr : &it->second;
  };
  // A is a shared buffer, or a value in registers (AssignLayouts put it
  // in wgmma's A fragments).
  auto aValue = llvm::dyn_cast<RankedTensorType>(op.getA().getType());
  const RefInfo *a = aValue ? nullptr : find(op.getA()), *b = find(op.getB());
  if ((!aValue && !isOperand(a)) || !isOperand(b))
    return e.fail(op, "plgpu.wgmma reads B (and A, unless A is a value in registers) from "
                      "plgpu.SMEM buffers of the kernel's scratch; these operands are not such "
                      "buffers");
  auto accType = llvm::cast<RankedTensorType>(op.getAccumulator().getType());
  // A window of the accumulator's columns (plgpu.wgmma on acc.at[:, a:b]).
  int64_t m = accType.getDimSize(0), accN = accType.getDimSize(1), column = 0, n = accN;
  if (std::optional<ArrayRef<int64_t>> columns = op.getColumns()) {
    column = (*columns)[0];
    n = (*columns)[1];
  }
  ArrayRef<int64_t> aShape = aValue ? aValue.getShape() : ArrayRef<int64_t>(a->refShape);
  Type element = aValue ? aValue.getElementType() : a->element;
  if (aShape.size() != 2 || b->refShape.size() != 2 || aShape[0] != m || b->refShape[1] != n ||
      aShape[1] != b->refShape[0])
    return e.fail(op, "plgpu.wgmma multiplies an M x K by a K x N operand into an M x N "
                      "accumulator; the shapes do not match");
  // 8-bit integers multiply into i32 (wgmma's s8 / u8: signless i8 is
  // int8), floats into f32.
  bool integer = element.isInteger(8);
  bool floats = element.isF16() || element.isBF16() || element.isF32();
  Type accElement = accType.getElementType();
  if (!(floats || integer) || b->element != element || (floats && !accElement.isF32()) ||
      (integer && !accElement.isInteger(32)) || (integer && aValue))
    return e.fail(op, "the CUDA backend lowers plgpu.wgmma for f16, bf16 and f32 (tf32) operands "
                      "with an f32 accumulator, and int8 / uint8 operands in shared memory with an "
                      "int32 accumulator, so far; got " +
                          pk::elementName(element) + (aValue ? " A in registers" : " operands") +
                          " with a " + pk::elementName(accElement) + " accumulator");
  if (integer && !llvm::cast<IntegerType>(element).isUnsigned())
    element = IntegerType::get(e.b.getContext(), 8, IntegerType::Signed);
  unsigned bytes = elementBytes(element);
  int64_t k = aShape[1];
  if (k % wgmmaInstructionK(bytes) != 0)
    return e.fail(op, "plgpu.wgmma needs K a multiple of " +
                          std::to_string(wgmmaInstructionK(bytes)) + " for " +
                          (bytes == 4   ? "f32 (tf32)"
                           : bytes == 1 ? "8-bit"
                                        : "16-bit") +
                          " operands");
  // An operand is a whole stored tile, or a window of one starting on a
  // strip (columns) and on a group of 8 rows.
  for (const RefInfo *r : {a, b}) {
    if (!r)
      continue;
    size_t rank = r->arrayShape.size();
    int64_t width = (r->strips ? r->strips : 16) / elementBytes(r->element);
    if (!isMultipleOf(r->offsets[rank - 1], width) || !isMultipleOf(r->offsets[rank - 2], 8))
      return e.fail(op, "plgpu.wgmma reads a window of a shared buffer whose columns do not start at "
                        "a multiple of " + std::to_string(width) +
                        " elements (one swizzled strip) or whose rows do not start at a multiple of 8");
  }
  // Stored with its first dimension as rows: A (M x K) K-major, B (K x N)
  // N-major; a transposed view (plgpu.transpose_ref) flips it.
  auto rowsFirst = [](const RefInfo *r) { return r->refToArray[0] < r->refToArray[1]; };
  bool aTransposed = a && !rowsFirst(a), bTransposed = rowsFirst(b);
  // wgmma transposes 16-bit operands only.
  if (bytes != 2 && (aTransposed || bTransposed))
    return e.fail(op, std::string("plgpu.wgmma reads ") + (bytes == 4 ? "f32 (tf32)" : "8-bit") +
                          " operands K-major only: A as an M x K buffer and B as a transposed view "
                          "(plgpu.transpose_ref) of an N x K buffer");
  SmallVector<Value> zeros(2, e.index(0));
  Value aOperand = a ? pointerAt(e, *a, zeros) : e.values.lookup(op.getA());
  Value bPointer = pointerAt(e, *b, zeros);
  Value accumulator = e.values.lookup(op.getAccumulator());
  auto result = WgmmaOp::create(
      e.b, e.loc, accumulator.getType(), accumulator, aOperand, bPointer, e.b.getI64IntegerAttr(m),
      e.b.getI64IntegerAttr(n), e.b.getI64IntegerAttr(k), TypeAttr::get(element),
      TypeAttr::get(element), e.b.getI64IntegerAttr(a ? a->strips : 0),
      e.b.getI64IntegerAttr(b->strips), aTransposed ? e.b.getUnitAttr() : UnitAttr(),
      bTransposed ? e.b.getUnitAttr() : UnitAttr(), e.b.getBoolAttr(true),
      n != accN ? e.b.getI64IntegerAttr(accN) : IntegerAttr(), e.b.getI64IntegerAttr(column));
  e.values.map(op.getResult(), result.getResult());
  return success();
}

LogicalResult lowerWgmmaWaitTile(Emitter &e, WgmmaWaitTileOp op) {
  SmallVector<Value> accumulators;
  for (Value v : op.getAccumulators())
    accumulators.push_back(e.values.lookup(v));
  auto wait = WgmmaWaitOp::create(e.b, e.loc, ValueRange(accumulators).getTypes(),
                                  e.b.getI64IntegerAttr(op.getPending()), accumulators);
  e.values.map(op.getResults(), wait.getResults());
  return success();
}

LogicalResult recordRefTranspose(Emitter &e, pk::RefTransposeOp op) {
  // The same memory, its dimensions permuted: coordinates reach the array
  // through refToArray.
  const RefInfo &parent = refOf(e, op.getRef());
  RefInfo ref = parent;
  ArrayRef<int64_t> perm = op.getPermutation();
  for (size_t i = 0; i < perm.size(); ++i) {
    ref.refShape[i] = parent.refShape[perm[i]];
    ref.refToArray[i] = parent.refToArray[perm[i]];
  }
  e.refs[op.getResult().getAsOpaquePointer()] = ref;
  return success();
}

} // namespace

LogicalResult recordBarrierAlloc(Emitter &e, BarrierAllocOp op) {
  auto type = llvm::cast<pk::BarrierType>(op.getType());
  BarrierInfo info;
  info.offset = static_cast<int64_t>(op.getOffset());
  info.parityOffset = static_cast<int64_t>(op.getParityOffset());
  info.shape.assign(type.getShape().begin(), type.getShape().end());
  info.ctaWarps = e.numWarps * std::max(1u, e.warpgroups);
  e.barriers[op.getResult().getAsOpaquePointer()] = info;
  int64_t count = type.getNumBarriers();
  int64_t words = BarrierAllocOp::parityWords(count, /*ctaWarps=*/1);
  // Every warp starts waiting for phase 0 of each barrier.
  e.guarded(isFirstLane(e), [&] {
    for (int64_t w = 0; w < words; ++w) {
      Value slot = arith::AddIOp::create(e.b, e.loc, e.index(w * info.ctaWarps), ctaWarp(e));
      LLVM::StoreOp::create(e.b, e.loc, e.i32(0),
                            e.sharedPointer(e.index(info.parityOffset), e.b.getI32Type(), slot));
    }
  });
  bool cluster = e.func->hasAttr(kClusterShapeAttr);
  int64_t arrivals = type.getNumArrivals();
  if (type.isClusterBarrier() && cluster)
    arrivals *= clusterBarrierArrivers(e, type);
  e.guarded(isFirstCtaThread(e), [&] {
    auto loop = scf::ForOp::create(e.b, e.loc, e.index(0), e.index(count), e.index(1));
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(loop.getBody());
    async::mbarrierInit(
        e.b, e.loc, e.sharedPointer(e.index(info.offset), e.b.getI64Type(), loop.getInductionVar()),
        e.i32(arrivals));
  });
  async::fenceMbarrierInit(e.b, e.loc);
  if (cluster) {
    // Peers may signal this barrier (or multicast into memory it guards)
    // once the whole cluster is past its initialization. The fence above
    // released the initialization to the cluster, so the arrival itself
    // need not order anything (CUTLASS's cluster_arrive_relaxed).
    async::clusterSync(e.b, e.loc, /*relaxedArrival=*/true);
  } else {
    ::mlir::gpu::BarrierOp::create(e.b, e.loc);
  }
  return success();
}

/// bar.sync / bar.arrive id, threads: every thread of the running Pallas
/// thread (or warp, in warp-level code) executes it, as in Mosaic GPU's
/// lane semantics for inline_mgpu. Ids 0 to the number of warpgroups are
/// the backend's own (Emitter::barrier): a constant id there would mix
/// the user's arrivals with the backend's.
LogicalResult lowerNamedBarrier(Emitter &e, pk::NamedBarrierOp op) {
  int64_t reserved = e.warpgroups > 1 ? e.warpgroups : 0;
  if (std::optional<int64_t> id = getConstantIntValue(op.getId()); id && *id <= reserved)
    return e.fail(op, "named barrier " + std::to_string(*id) +
                          " is one pkc's CUDA code uses itself (0 is the CTA's barrier, 1 + g "
                          "warpgroup g's); use ids " +
                          std::to_string(reserved + 1) + " to 15");
  auto asI32 = [&](Value v) {
    Value lowered = e.values.lookup(v);
    return lowered.getType().isIndex() ? i32Of(e, lowered) : lowered;
  };
  async::namedBarrier(e.b, e.loc, asI32(op.getId()), asI32(op.getThreads()), op.getArrive());
  return success();
}

std::optional<LogicalResult> lowerMosaicGpuOp(Emitter &e, Operation *op) {
  // In warp-level code (pk.warp_map) each warp runs on its own: what
  // needs the whole warpgroup cannot run there (Mosaic GPU's rule too).
  if (e.warpLevel) {
    const char *whole = nullptr;
    if (llvm::isa<WgmmaTileOp, WgmmaWaitTileOp>(op))
      whole = "plgpu.wgmma";
    else if (llvm::isa<pk::AsyncLoadTmemOp, pk::AsyncStoreTmemOp>(op))
      whole = "a tensor memory load or store";
    else if (llvm::isa<pk::CopyGmemToSmemOp, pk::CopySmemToGmemOp>(op) &&
             !op->hasAttr(kTmaParamAttr))
      whole = "a copy TMA cannot carry (copied by the warpgroup's threads)";
    if (whole)
      return e.fail(op, std::string(whole) + " needs a whole warpgroup; it cannot run in "
                                             "warp-level code (plgpu.WarpMesh)");
  }
  if (std::optional<LogicalResult> lowered = lowerTensorMemoryOp(e, op))
    return lowered;
  if (std::optional<LogicalResult> lowered = lowerClusterLaunchOp(e, op))
    return lowered;
  if (auto view = llvm::dyn_cast<pk::RefViewOp>(op))
    return recordRefView(e, view);
  if (auto transpose = llvm::dyn_cast<pk::RefTransposeOp>(op))
    return recordRefTranspose(e, transpose);
  if (auto wgmma = llvm::dyn_cast<WgmmaTileOp>(op))
    return lowerWgmmaTile(e, wgmma);
  if (auto wait = llvm::dyn_cast<WgmmaWaitTileOp>(op))
    return lowerWgmmaWaitTile(e, wait);
  if (auto named = llvm::dyn_cast<pk::NamedBarrierOp>(op))
    return lowerNamedBarrier(e, named);
  if (llvm::isa<pk::FenceAsyncSharedOp>(op)) {
    async::fenceAsyncShared(e.b, e.loc);
    return success();
  }
  if (auto arrive = llvm::dyn_cast<pk::BarrierArriveOp>(op))
    return lowerBarrierArrive(e, arrive);
  if (auto wait = llvm::dyn_cast<pk::BarrierWaitOp>(op))
    return lowerBarrierWait(e, wait);
  if (auto test = llvm::dyn_cast<pk::BarrierTestOp>(op))
    return lowerBarrierTest(e, test);
  if (auto signal = llvm::dyn_cast<pk::SemaphoreSignalOp>(op))
    return lowerSemaphoreSignal(e, signal);
  if (auto wait = llvm::dyn_cast<pk::SemaphoreWaitOp>(op))
    return lowerSemaphoreWait(e, wait);
  if (auto read = llvm::dyn_cast<pk::SemaphoreReadOp>(op))
    return lowerSemaphoreRead(e, read);
  if (auto alloc = llvm::dyn_cast<SemaphoreAllocOp>(op))
    return recordSemaphoreAlloc(e, alloc);
  if (auto view = llvm::dyn_cast<SemaphoreViewOp>(op))
    return recordSemaphoreView(e, view);
  if (auto copy = llvm::dyn_cast<pk::CopyGmemToSmemOp>(op))
    return lowerCopyGmemToSmem(e, copy);
  if (auto copy = llvm::dyn_cast<pk::CopySmemToGmemOp>(op))
    return lowerCopySmemToGmem(e, copy);
  if (auto wait = llvm::dyn_cast<pk::WaitSmemToGmemOp>(op)) {
    // Only the issuing thread has bulk groups; the others learn from it.
    async::bulkWaitGroup(e.b, e.loc, static_cast<unsigned>(wait.getAllowGroups()), wait.getReadOnly());
    e.barrier();
    return success();
  }
  if (llvm::isa<pk::CommitGroupOp>(op)) {
    e.guarded(isFirstThread(e), [&] { async::bulkCommitGroup(e.b, e.loc); });
    return success();
  }
  if (llvm::isa<pk::CommitSmemOp>(op)) {
    async::fenceAsyncShared(e.b, e.loc);
    e.barrier();
    return success();
  }
  if (auto cast = llvm::dyn_cast<pk::LayoutCastOp>(op)) {
    // A hint: the value is already in the layout its type carries.
    e.values.map(cast.getResult(), e.values.lookup(cast.getValue()));
    return success();
  }
  if (auto dependency = llvm::dyn_cast<pk::GridDependencyOp>(op)) {
    async::gridDependency(e.b, e.loc, dependency.getLaunchDependents());
    return success();
  }
  if (auto registers = llvm::dyn_cast<pk::SetMaxRegistersOp>(op)) {
    async::setMaxRegisters(e.b, e.loc, static_cast<unsigned>(registers.getCount()),
                           registers.getIncrease());
    // ptxas honors setmaxnreg only where it knows the registers a thread
    // has at entry: with the CTA's size (.maxntid) and one CTA per SM
    // (.minnctapersm 1), 64K / threads, as CUTLASS's __launch_bounds__(n, 1)
    // gives it. Without, it ignores the op (warning C7508).
    e.func->setAttr("nvvm.minctasm", e.b.getI32IntegerAttr(1));
    return success();
  }
  return std::nullopt;
}

} // namespace pk::gpu
