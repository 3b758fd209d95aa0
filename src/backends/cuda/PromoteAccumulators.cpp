//===- PromoteAccumulators.cpp - plgpu.ACC Refs become SSA values ---------===//
//
// A wgmma accumulator is a Ref the program mutates (`plgpu.wgmma(acc, a,
// b)`, `acc[...] = x`) and reads (`acc[...]`), but it lives in registers:
// after the outline stage it must be a value. This is mem2reg over
// structured control flow: walking each block in order with the current
// value of every accumulator, a wgmma makes a new value
// (`pkgpu.wgmma_tile`), a read waits for it (`pkgpu.wgmma_wait_tile 0`),
// a store replaces it, `plgpu.wgmma_wait` waits for all of them, and an
// scf.for or scf.if that changes one carries it as an iteration argument
// or a result.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/OutlineMesh.h"

#include "backends/cuda/ir/PkGpuDialect.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/MapVector.h"

namespace pk::gpu {

using namespace mlir;

namespace {

using Values = llvm::MapVector<Value, Value>; ///< accumulator Ref -> its value now

class Promoter {
public:
  explicit Promoter(OpBuilder &b) : b(b) {}

  LogicalResult promote(Block &block, Values &current);

private:
  /// Whether `op` (or an op nested in it) reads or changes an accumulator.
  bool touches(Operation *op, const Values &current);
  LogicalResult promoteFor(scf::ForOp loop, Values &current);
  LogicalResult promoteIf(scf::IfOp branch, Values &current);
  LogicalResult wholeAccess(Operation *op, pk::RefType ref, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides, bool dynamic);

  OpBuilder &b;
};

bool Promoter::touches(Operation *op, const Values &current) {
  bool found = false;
  op->walk([&](Operation *inner) {
    if (llvm::isa<pk::WgmmaWaitOp, AccumulatorOp>(inner))
      found = true;
    for (Value v : inner->getOperands())
      if (current.count(v))
        found = true;
  });
  return found;
}

LogicalResult Promoter::wholeAccess(Operation *op, pk::RefType ref, ArrayRef<int64_t> offsets,
                                    ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides, bool dynamic) {
  bool whole = !dynamic && sizes == ref.getShape() &&
               llvm::all_of(offsets, [](int64_t o) { return o == 0; }) &&
               llvm::all_of(strides, [](int64_t s) { return s == 1; });
  if (whole)
    return success();
  return op->emitError("the CUDA backend reads and writes wgmma accumulators (plgpu.ACC) whole "
                       "(acc[...]); a part of one is not supported yet");
}

LogicalResult Promoter::promote(Block &block, Values &current) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    b.setInsertionPoint(&op);
    if (auto alloc = llvm::dyn_cast<AccumulatorOp>(op)) {
      // Zero where it is allocated (each time, in a loop), as plgpu.ACC is.
      auto ref = llvm::cast<pk::RefType>(alloc.getType());
      auto type = RankedTensorType::get(ref.getShape(), ref.getElementType());
      Value zero = arith::ConstantOp::create(b, op.getLoc(), type, b.getZeroAttr(type));
      current.insert({alloc.getResult(), zero});
      continue;
    }
    if (auto wgmma = llvm::dyn_cast<pk::WgmmaOp>(op)) {
      auto it = current.find(wgmma.getAcc());
      if (it == current.end())
        return wgmma.emitError("plgpu.wgmma's accumulator must be a plgpu.ACC allocation");
      it->second = WgmmaTileOp::create(b, op.getLoc(), it->second.getType(), it->second, wgmma.getA(),
                                       wgmma.getB());
      op.erase();
      continue;
    }
    if (auto wait = llvm::dyn_cast<pk::WgmmaWaitOp>(op)) {
      SmallVector<Value> values;
      for (auto &[ref, value] : current)
        values.push_back(value);
      auto waited = WgmmaWaitTileOp::create(b, op.getLoc(), ValueRange(values).getTypes(),
                                            b.getI64IntegerAttr(wait.getAllowInFlight()), values);
      unsigned i = 0;
      for (auto &[ref, value] : current)
        value = waited.getResult(i++);
      op.erase();
      continue;
    }
    if (auto load = llvm::dyn_cast<pk::LoadOp>(op)) {
      auto it = current.find(load.getRef());
      if (it != current.end()) {
        if (failed(wholeAccess(load, load.getRefType(), load.getStaticOffsets(), load.getSizes(),
                               load.getStrides(), !load.getOffsets().empty() || load.getMask())))
          return failure();
        // Reading the accumulator waits for the wgmma ops writing it.
        auto waited = WgmmaWaitTileOp::create(b, op.getLoc(), TypeRange{it->second.getType()},
                                              b.getI64IntegerAttr(0), ValueRange{it->second});
        it->second = waited.getResult(0);
        load.getResult().replaceAllUsesWith(it->second);
        op.erase();
        continue;
      }
    }
    if (auto store = llvm::dyn_cast<pk::StoreOp>(op)) {
      auto it = current.find(store.getRef());
      if (it != current.end()) {
        if (failed(wholeAccess(store, store.getRefType(), store.getStaticOffsets(), store.getSizes(),
                               store.getStrides(), !store.getOffsets().empty() || store.getMask())))
          return failure();
        Value v = store.getValue();
        if (v.getType() != it->second.getType())
          return store.emitError("the CUDA backend stores into a wgmma accumulator only a whole "
                                 "block of its shape and dtype");
        it->second = v;
        op.erase();
        continue;
      }
    }
    if (op.getNumRegions() == 0 || !touches(&op, current)) {
      for (Value v : op.getOperands())
        if (current.count(v))
          return op.emitError("the CUDA backend cannot use a wgmma accumulator (plgpu.ACC) in '")
                 << op.getName() << "' yet";
      continue;
    }
    if (auto loop = llvm::dyn_cast<scf::ForOp>(op)) {
      if (failed(promoteFor(loop, current)))
        return failure();
      continue;
    }
    if (auto branch = llvm::dyn_cast<scf::IfOp>(op)) {
      if (failed(promoteIf(branch, current)))
        return failure();
      continue;
    }
    if (llvm::isa<pk::WarpMapOp>(op))
      return op.emitError("plgpu.wgmma and its accumulators (plgpu.ACC) need a whole warpgroup; "
                          "they cannot be used in warp-level code (plgpu.WarpMesh)");
    return op.emitError("the CUDA backend cannot carry a wgmma accumulator (plgpu.ACC) through '")
           << op.getName() << "' yet";
  }
  return success();
}

LogicalResult Promoter::promoteFor(scf::ForOp loop, Values &current) {
  SmallVector<Value> inits(loop.getInitArgs());
  for (auto &[ref, value] : current)
    inits.push_back(value);
  auto next = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep(), inits);
  next.setUnsignedCmp(loop.getUnsignedCmp());
  Block *body = next.getBody();
  // The new body: the old one's ops, its arguments replaced.
  if (!body->empty())
    body->getTerminator()->erase();
  Block *old = loop.getBody();
  for (auto [from, to] : llvm::zip(old->getArguments(), body->getArguments()))
    from.replaceAllUsesWith(to);
  body->getOperations().splice(body->end(), old->getOperations());
  Values inner = current;
  unsigned first = loop.getNumRegionIterArgs() + 1;
  unsigned i = 0;
  for (auto &[ref, value] : current)
    inner[ref] = body->getArgument(first + i++);
  if (failed(promote(*body, inner)))
    return failure();
  Operation *yield = body->getTerminator();
  SmallVector<Value> yielded(yield->getOperands());
  for (auto &[ref, value] : current) // accumulators allocated inside stay there
    yielded.push_back(inner.lookup(ref));
  yield->setOperands(yielded);
  for (auto [from, to] : llvm::zip(loop.getResults(), next.getResults()))
    from.replaceAllUsesWith(to);
  i = 0;
  for (auto &[ref, value] : current)
    value = next.getResult(loop.getNumResults() + i++);
  loop.erase();
  return success();
}

LogicalResult Promoter::promoteIf(scf::IfOp branch, Values &current) {
  SmallVector<Type> types(branch.getResultTypes());
  for (auto &[ref, value] : current)
    types.push_back(value.getType());
  auto next = scf::IfOp::create(b, branch.getLoc(), types, branch.getCondition(), /*withElse=*/true);
  auto moveRegion = [&](Region &from, Region &to) -> LogicalResult {
    Block &target = to.front();
    target.clear();
    Values inner = current;
    if (!from.empty()) {
      target.getOperations().splice(target.end(), from.front().getOperations());
      if (failed(promote(target, inner)))
        return failure();
    } else {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(&target);
      scf::YieldOp::create(b, branch.getLoc());
    }
    Operation *yield = target.getTerminator();
    SmallVector<Value> yielded(yield->getOperands());
    for (auto &[ref, value] : current)
      yielded.push_back(inner.lookup(ref));
    yield->setOperands(yielded);
    return success();
  };
  if (failed(moveRegion(branch.getThenRegion(), next.getThenRegion())) ||
      failed(moveRegion(branch.getElseRegion(), next.getElseRegion())))
    return failure();
  for (auto [from, to] : llvm::zip(branch.getResults(), next.getResults()))
    from.replaceAllUsesWith(to);
  unsigned i = 0;
  for (auto &[ref, value] : current)
    value = next.getResult(branch.getNumResults() + i++);
  branch.erase();
  return success();
}

} // namespace

LogicalResult promoteAccumulators(::mlir::gpu::GPUFuncOp func) {
  SmallVector<AccumulatorOp> accumulators;
  func.walk([&](AccumulatorOp op) { accumulators.push_back(op); });
  if (accumulators.empty())
    return success();
  OpBuilder b(func.getContext());
  Values current;
  Promoter promoter(b);
  if (failed(promoter.promote(func.getBody().front(), current)))
    return failure();
  for (AccumulatorOp op : accumulators) {
    if (!op->use_empty())
      return op.emitError("a wgmma accumulator is used where the CUDA backend cannot follow it");
    op.erase();
  }
  return success();
}

} // namespace pk::gpu
