//===- PromoteAccumulators.cpp - plgpu.ACC Refs become SSA values ---------===//
//
// A wgmma accumulator is a Ref the program mutates (`plgpu.wgmma(acc, a,
// b)`, `acc[...] = x`) and reads (`acc[...]`), but it lives in registers:
// after the outline stage it must be a value. This is mem2reg over
// structured control flow: walking each block in order with the current
// value of every accumulator, a wgmma makes a new value
// (`pkgpu.wgmma_tile`; on a view of its columns, `acc.at[:, a:b]`, one
// that computes those columns), a read waits for it
// (`pkgpu.wgmma_wait_tile 0`; a view's read then takes its columns), a
// store replaces it, `plgpu.wgmma_wait` waits for all of them, and an
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

/// A view of an accumulator (`acc.at[:, a:b]`): its columns
/// [first, first + count), all its rows.
struct AccumulatorView {
  Value accumulator;
  int64_t first = 0, count = 0;
};

class Promoter {
public:
  explicit Promoter(OpBuilder &b) : b(b) {}

  LogicalResult promote(Block &block, Values &current);
  /// Erases the views of accumulators, once nothing uses them.
  LogicalResult eraseViews();

private:
  /// Whether `op` (or an op nested in it) reads or changes an accumulator.
  bool touches(Operation *op, const Values &current);
  LogicalResult promoteFor(scf::ForOp loop, Values &current);
  LogicalResult promoteIf(scf::IfOp branch, Values &current);
  LogicalResult wholeAccess(Operation *op, pk::RefType ref, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides, bool dynamic);

  /// `view` of an accumulator (or of a view of one), as a window of its
  /// columns; fails with an error where it is another kind of view.
  LogicalResult recordView(pk::RefViewOp view, AccumulatorView parent);
  bool isAccumulator(Value v, const Values &current) const {
    return current.count(v) || views.count(v);
  }

  OpBuilder &b;
  llvm::DenseMap<Value, AccumulatorView> views;
  SmallVector<Operation *> viewOps;
};

LogicalResult Promoter::recordView(pk::RefViewOp view, AccumulatorView parent) {
  auto type = llvm::cast<pk::RefType>(view.getRef().getType());
  ArrayRef<int64_t> offsets = view.getStaticOffsets(), sizes = view.getSizes();
  bool columns = view.getOffsets().empty() && view.getDynamicSizes().empty() &&
                 view.getSqueeze().empty() && type.getShape().size() == 2 &&
                 llvm::all_of(view.getStrides(), [](int64_t s) { return s == 1; }) &&
                 offsets[0] == 0 && sizes[0] == type.getShape()[0];
  if (!columns)
    return view.emitError("the CUDA backend views a wgmma accumulator (plgpu.ACC) only as a "
                          "static window of its columns with all its rows (acc.at[:, a:b]) so far");
  int64_t first = parent.first + offsets[1];
  if (first % 8 || sizes[1] % 8)
    return view.emitError("a view of a wgmma accumulator's columns must start and end at "
                          "multiples of 8 (whole registers), got columns [")
           << offsets[1] << ", " << offsets[1] + sizes[1] << ")";
  views[view.getResult()] = {parent.accumulator, first, sizes[1]};
  viewOps.push_back(view);
  return success();
}

LogicalResult Promoter::eraseViews() {
  for (Operation *op : llvm::reverse(viewOps)) {
    if (!op->use_empty())
      return op->emitError("a view of a wgmma accumulator is used where the CUDA backend cannot "
                           "follow it (it takes plgpu.wgmma and reads of the whole view)");
    op->erase();
  }
  viewOps.clear();
  return success();
}

bool Promoter::touches(Operation *op, const Values &current) {
  bool found = false;
  op->walk([&](Operation *inner) {
    if (llvm::isa<pk::WgmmaWaitOp, AccumulatorOp>(inner))
      found = true;
    for (Value v : inner->getOperands())
      if (isAccumulator(v, current))
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
    if (auto view = llvm::dyn_cast<pk::RefViewOp>(op)) {
      Value source = view.getRef();
      std::optional<AccumulatorView> parent;
      if (current.count(source))
        parent =
            AccumulatorView{source, 0, llvm::cast<pk::RefType>(source.getType()).getShape()[1]};
      else if (auto v = views.find(source); v != views.end())
        parent = v->second;
      if (parent) {
        if (failed(recordView(view, *parent)))
          return failure();
        continue;
      }
    }
    if (auto wgmma = llvm::dyn_cast<pk::WgmmaOp>(op)) {
      Value acc = wgmma.getAcc();
      DenseI64ArrayAttr columns;
      if (auto v = views.find(acc); v != views.end()) {
        acc = v->second.accumulator;
        columns = b.getDenseI64ArrayAttr({v->second.first, v->second.count});
      }
      auto it = current.find(acc);
      if (it == current.end())
        return wgmma.emitError("plgpu.wgmma's accumulator must be a plgpu.ACC allocation");
      it->second = WgmmaTileOp::create(b, op.getLoc(), it->second.getType(), it->second,
                                       wgmma.getA(), wgmma.getB(), columns);
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
      Value acc = load.getRef();
      int64_t first = 0;
      if (auto v = views.find(acc); v != views.end()) {
        acc = v->second.accumulator;
        first = v->second.first;
      }
      auto it = current.find(acc);
      if (it != current.end()) {
        // Reading the accumulator waits for the wgmma ops writing it; a
        // part of it (acc[:, :64], or a view's columns) is then a slice,
        // of whole registers where it cuts at multiples of 8 columns.
        auto waited = WgmmaWaitTileOp::create(b, op.getLoc(), TypeRange{it->second.getType()},
                                              b.getI64IntegerAttr(0), ValueRange{it->second});
        it->second = waited.getResult(0);
        Value read = it->second;
        ArrayRef<int64_t> offsets = load.getStaticOffsets(), sizes = load.getSizes();
        bool whole = first == 0 && sizes == load.getRefType().getShape() &&
                     load.getType() == it->second.getType() &&
                     llvm::all_of(offsets, [](int64_t o) { return o == 0; });
        if (!whole) {
          bool staticWindow = load.getOffsets().empty() && !load.getMask() &&
                              load.getSqueeze().empty() && sizes.size() == 2 &&
                              llvm::all_of(load.getStrides(), [](int64_t s) { return s == 1; });
          if (!staticWindow)
            return load.emitError("the CUDA backend reads a wgmma accumulator (plgpu.ACC) whole "
                                  "or as a static window (acc[:, :64]); this read is not "
                                  "supported yet");
          read = pk::SliceOp::create(
              b, op.getLoc(), load.getType(), read,
              b.getDenseI64ArrayAttr({offsets[0], first + offsets[1]}),
              b.getDenseI64ArrayAttr({offsets[0] + sizes[0], first + offsets[1] + sizes[1]}),
              b.getDenseI64ArrayAttr({1, 1}));
        }
        load.getResult().replaceAllUsesWith(read);
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
        if (isAccumulator(v, current))
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
  if (failed(promoter.promote(func.getBody().front(), current)) || failed(promoter.eraseViews()))
    return failure();
  for (AccumulatorOp op : accumulators) {
    if (!op->use_empty())
      return op.emitError("a wgmma accumulator is used where the CUDA backend cannot follow it");
    op.erase();
  }
  return success();
}

} // namespace pk::gpu
