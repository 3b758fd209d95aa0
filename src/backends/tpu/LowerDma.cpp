//===- LowerDma.cpp - Ref views, async copies, semaphores, scopes ---------===//
//
// As Pallas lowers them (jax/_src/pallas/mosaic/lowering.py): a Ref view
// (`x_ref.at[pl.ds(i, 8)]`, `sem.at[i]`) is a tpu.memref_slice from its
// start indices, then tpu.memref_squeeze for axes indexed by an integer;
// a window of a traced size (`pl.ds(s, n)`, n read at run time) slices
// with that size as the memref_slice's dynamic size; a copy's start() is
// tpu.enqueue_dma and its wait() tpu.wait_dma2, each
// taking its views anew where it is called; semaphore ops are
// tpu.sem_signal / sem_wait / sem_read on a squeezed semaphore memref;
// pl.run_scoped is a tpu.region allocating its buffers with memref.alloca
// and its semaphores with tpu.sem_alloc.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}

/// A squeezed memref (rank 0 for a single semaphore) from `base` at
/// `indices` (index values), one per axis: the element those pick.
Value element(BodyLowering &l, Value base, ValueRange pkIndices, Location loc) {
  auto type = llvm::cast<MemRefType>(base.getType());
  if (type.getRank() == 0)
    return base;
  OpBuilder &b = l.builder();
  SmallVector<Value> starts;
  for (Value i : pkIndices)
    starts.push_back(toI32(b, loc, l.lookup(i)));
  if (pkIndices.empty()) // the one semaphore of a (1,) array
    starts.assign(type.getRank(), l.i32Constant(0, loc));
  return sliceMemref(b, loc, base, starts, SmallVector<int64_t>(type.getRank(), 1), {});
}

Value semaphore(BodyLowering &l, Value pkSemaphore, ValueRange indices, Location loc) {
  return element(l, l.lookup(pkSemaphore), indices, loc);
}

} // namespace

FailureOr<RefBinding> lowerRefViewHere(Operation *op, BodyLowering &l) {
  auto view = llvm::cast<pk::RefViewOp>(op);
  const RefBinding *base = l.ref(view.getRef());
  if (!base)
    return op->emitError("the TPU backend does not know this Ref");
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  SmallVector<Value> starts;
  SmallVector<int64_t> sliceShape, squeezedShape;
  RefBinding result;
  result.boolAsI32 = base->boolAsI32;
  SmallVector<Value> dynamicSizes; // of a ragged copy's window, as i32
  unsigned dynamic = 0, dynamicSize = 0;
  int next = 0;
  for (int axis : base->refAxis) {
    if (axis < 0) { // a squeezed block axis stays, with size 1
      starts.push_back(l.i32Constant(0, loc));
      sliceShape.push_back(1);
      squeezedShape.push_back(1);
      result.refAxis.push_back(-1);
      continue;
    }
    int64_t offset = view.getStaticOffsets()[axis];
    starts.push_back(ShapedType::isDynamic(offset)
                         ? toI32(b, loc, l.lookup(view.getOffsets()[dynamic++]))
                         : l.i32Constant(offset, loc));
    int64_t size = view.getSizes()[axis];
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(toI32(b, loc, l.lookup(view.getDynamicSizes()[dynamicSize++])));
    sliceShape.push_back(size);
    if (llvm::is_contained(view.getSqueeze(), static_cast<int64_t>(axis)))
      continue;
    squeezedShape.push_back(view.getSizes()[axis]);
    result.refAxis.push_back(next++);
  }
  result.memref =
      sliceMemref(b, loc, base->memref, starts, sliceShape, squeezedShape, dynamicSizes);
  return result;
}

namespace {

LogicalResult lowerRefView(Operation *op, BodyLowering &l) {
  auto view = llvm::cast<pk::RefViewOp>(op);
  if (llvm::any_of(view.getStrides(), [](int64_t s) { return s != 1; }))
    return op->emitError("strided Ref views (x_ref.at[::2]) are not supported on TPU; "
                         "Mosaic's memref_slice takes unit strides");
  l.deferView(view.getResult(), op);
  return success();
}

/// `x_ref.reshape(...)`: tpu.memref_reshape of the Ref's memref (squeezed
/// block axes, kept there as 1, reshape away with the rest).
LogicalResult lowerRefReshape(Operation *op, BodyLowering &l) {
  auto reshape = llvm::cast<pk::RefReshapeOp>(op);
  const RefBinding *base = l.ref(reshape.getRef());
  if (!base)
    return op->emitError("the TPU backend does not know this Ref");
  auto from = llvm::cast<MemRefType>(base->memref.getType());
  auto shape = llvm::cast<pk::RefType>(reshape.getType()).getShape();
  auto to = MemRefType::get(shape, from.getElementType(), MemRefLayoutAttrInterface(),
                            from.getMemorySpace());
  RefBinding result;
  result.boolAsI32 = base->boolAsI32;
  result.memref = mosaic::MemRefReshapeOp::create(l.builder(), op->getLoc(), to, base->memref);
  for (size_t d = 0; d < shape.size(); ++d)
    result.refAxis.push_back(static_cast<int>(d));
  l.bindRef(reshape.getResult(), result);
  return success();
}

/// The memrefs a copy moves between, the destination's views taken
/// first, as Pallas takes them.
FailureOr<std::pair<Value, Value>> copyEnds(Operation *op, BodyLowering &l, Value src, Value dst) {
  const RefBinding *to = l.ref(dst);
  const RefBinding *from = to ? l.ref(src) : nullptr;
  if (!from || !to)
    return op->emitError("the TPU backend does not know a Ref of this copy");
  return std::make_pair(from->memref, to->memref);
}

LogicalResult lowerDmaStart(Operation *op, BodyLowering &l) {
  auto start = llvm::cast<pk::DmaStartOp>(op);
  Location loc = op->getLoc();
  Value sem = semaphore(l, start.getSemaphore(), start.getIndices(), loc);
  auto ends = copyEnds(op, l, start.getSrc(), start.getDst());
  if (failed(ends))
    return failure();
  OpBuilder &b = l.builder();
  auto dma = mosaic::EnqueueDMAOp::create(b, loc, ends->first, /*source_semaphore=*/Value(),
                                          ends->second, sem, Value(), Value(), Value());
  dma.setPriority(start.getPriority());
  return success();
}

LogicalResult lowerDmaWait(Operation *op, BodyLowering &l) {
  auto wait = llvm::cast<pk::DmaWaitOp>(op);
  Location loc = op->getLoc();
  Value sem = semaphore(l, wait.getSemaphore(), wait.getIndices(), loc);
  auto ends = copyEnds(op, l, wait.getSrc(), wait.getDst());
  if (failed(ends))
    return failure();
  mosaic::WaitDMA2Op::create(l.builder(), loc, sem, ends->first, ends->second, Value(), Value());
  return success();
}

LogicalResult lowerSignal(Operation *op, BodyLowering &l) {
  auto signal = llvm::cast<pk::SemaphoreSignalOp>(op);
  Location loc = op->getLoc();
  Value sem = semaphore(l, signal.getSemaphore(), signal.getIndices(), loc);
  mosaic::SemaphoreSignalOp::create(l.builder(), loc, sem, l.lookup(signal.getIncrement()),
                                    Value(), Value(), Value());
  return success();
}

LogicalResult lowerWait(Operation *op, BodyLowering &l) {
  auto wait = llvm::cast<pk::SemaphoreWaitOp>(op);
  if (wait.getNoDecrement())
    return op->emitError("pl.semaphore_wait(..., decrement=False) is not supported on TPU: "
                         "Mosaic's sem_wait always takes the value off");
  Location loc = op->getLoc();
  Value sem = semaphore(l, wait.getSemaphore(), wait.getIndices(), loc);
  mosaic::SemaphoreWaitOp::create(l.builder(), loc, sem, l.lookup(wait.getValue()));
  return success();
}

LogicalResult lowerRead(Operation *op, BodyLowering &l) {
  auto read = llvm::cast<pk::SemaphoreReadOp>(op);
  Location loc = op->getLoc();
  Value sem = semaphore(l, read.getSemaphore(), read.getIndices(), loc);
  l.map(read.getResult(),
        mosaic::SemaphoreReadOp::create(l.builder(), loc, l.builder().getI32Type(), sem));
  return success();
}

LogicalResult lowerRunScoped(Operation *op, BodyLowering &l) {
  auto scoped = llvm::cast<pk::RunScopedOp>(op);
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  SmallVector<Type> results;
  for (Type t : scoped.getResultTypes())
    results.push_back(BodyLowering::convertType(t));
  auto region = mosaic::RegionOp::create(b, loc, results);
  Block *block = new Block();
  region.getRegion().push_back(block);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    for (BlockArgument arg : scoped.getBodyBlock().getArguments()) {
      if (auto sem = llvm::dyn_cast<pk::SemaphoreType>(arg.getType())) {
        l.map(arg, mosaic::SemaphoreAllocOp::create(b, loc, semaphoreMemRefType(sem)));
        continue;
      }
      auto ref = llvm::cast<pk::RefType>(arg.getType());
      l.bindRef(arg, wholeRefBinding(memref::AllocaOp::create(b, loc, memrefTypeOf(ref)), ref));
    }
    if (failed(l.lowerOps(scoped.getBodyBlock())))
      return failure();
  }
  for (auto [from, to] : llvm::zip(scoped.getResults(), region.getResults()))
    l.map(from, to);
  return success();
}

LogicalResult lowerScopeYield(Operation *op, BodyLowering &l) {
  SmallVector<Value> values;
  for (Value v : op->getOperands())
    values.push_back(l.lookup(v));
  mosaic::YieldOp::create(l.builder(), op->getLoc(), values);
  return success();
}

} // namespace

void addDmaRules(RuleTable &rules) {
  rules[TypeID::get<pk::RefViewOp>()] = lowerRefView;
  rules[TypeID::get<pk::RefReshapeOp>()] = lowerRefReshape;
  rules[TypeID::get<pk::DmaStartOp>()] = lowerDmaStart;
  rules[TypeID::get<pk::DmaWaitOp>()] = lowerDmaWait;
  rules[TypeID::get<pk::SemaphoreSignalOp>()] = lowerSignal;
  rules[TypeID::get<pk::SemaphoreWaitOp>()] = lowerWait;
  rules[TypeID::get<pk::SemaphoreReadOp>()] = lowerRead;
  rules[TypeID::get<pk::RunScopedOp>()] = lowerRunScoped;
  rules[TypeID::get<pk::ScopeYieldOp>()] = lowerScopeYield;
}

} // namespace pk::backends::tpu
