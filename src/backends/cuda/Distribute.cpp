//===- Distribute.cpp - The pk-gpu-distribute pass ------------------------===//
//
// Translates each kernel body op by op into a fresh body: ops on scalars
// are copied, ops with regions are rebuilt with their tensors' types
// replaced by per-thread vectors, and ops on block values go to their
// lowering. Refs are not values after this stage: loads and stores read
// the memory recorded for them.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/Async.h"
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUDISTRIBUTE
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

class Translator {
public:
  Translator(Emitter &e) : e(e) {}

  LogicalResult translate(Block &from) {
    for (Operation &op : from) {
      // What an op becomes keeps its location: the simulator's reports
      // (a race, a deadlock) name the user's line through it.
      Location outer = e.loc;
      e.loc = op.getLoc();
      LogicalResult translated = translate(&op);
      e.loc = outer;
      if (failed(translated))
        return failure();
    }
    return success();
  }

private:
  Type convert(Type t) {
    if (auto tensor = llvm::dyn_cast<RankedTensorType>(t))
      return e.vectorType(tensor);
    return t;
  }

  LogicalResult translate(Operation *op);
  LogicalResult rebuildWithRegions(Operation *op);
  /// pk.warp_map: every warp runs the body in place, at warp level,
  /// between two syncs of the Pallas thread (a fork and a join).
  LogicalResult translateWarpMap(pk::WarpMapOp op) {
    e.barrier();
    e.warpLevel = true;
    LogicalResult body = translate(op.getBody().front());
    e.warpLevel = false;
    e.barrier();
    return body;
  }
  LogicalResult lowerBlockValueOp(Operation *op);

  Emitter &e;
};

bool touchesTensors(Operation *op) {
  auto isTensor = [](Type t) { return llvm::isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) || llvm::any_of(op->getResultTypes(), isTensor);
}

LogicalResult Translator::translate(Operation *op) {
  if (auto print = llvm::dyn_cast<pk::DebugPrintOp>(op))
    return lowerDebugPrint(e, print);
  if (auto ref = llvm::dyn_cast<GlobalRefOp>(op))
    return recordGlobalRef(e, ref);
  if (auto ref = llvm::dyn_cast<SharedRefOp>(op))
    return recordSharedRef(e, ref);
  if (auto barrier = llvm::dyn_cast<BarrierAllocOp>(op))
    return recordBarrierAlloc(e, barrier);
  if (auto copy = llvm::dyn_cast<AsyncCopyOp>(op))
    return lowerAsyncCopy(e, copy);
  if (auto copy = llvm::dyn_cast<TmaCopyOp>(op))
    return lowerTmaCopy(e, copy);
  if (auto warps = llvm::dyn_cast<pk::WarpMapOp>(op))
    return translateWarpMap(warps);
  if (std::optional<LogicalResult> lowered = lowerMosaicGpuOp(e, op))
    return *lowered;
  // Region terminators pass the (already distributed) values on as they are.
  if (llvm::isa<scf::YieldOp, scf::ConditionOp>(op)) {
    e.b.clone(*op, e.values);
    return success();
  }
  if (llvm::isa<pk::LoadOp, pk::StoreOp, pk::GatherOp, pk::ScatterOp, pk::AtomicRmwOp,
                pk::AtomicCasOp>(op) ||
      touchesTensors(op))
    if (op->getNumRegions() == 0)
      return lowerBlockValueOp(op);
  if (op->getNumRegions() > 0)
    return rebuildWithRegions(op);
  e.b.clone(*op, e.values);
  return success();
}

LogicalResult Translator::rebuildWithRegions(Operation *op) {
  OperationState state(op->getLoc(), op->getName());
  for (Value v : op->getOperands())
    state.addOperands(e.values.lookupOrDefault(v));
  for (Type t : op->getResultTypes())
    state.addTypes(convert(t));
  state.addAttributes(op->getAttrs());
  state.propertiesAttr = op->getPropertiesAsAttribute();
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    state.addRegion();
  Operation *copy = e.b.create(state);
  for (auto [from, to] : llvm::zip(op->getRegions(), copy->getRegions())) {
    for (Block &block : from) {
      Block *newBlock = new Block();
      to.push_back(newBlock);
      for (BlockArgument arg : block.getArguments())
        e.values.map(arg, newBlock->addArgument(convert(arg.getType()), arg.getLoc()));
    }
    for (auto [oldBlock, newBlock] : llvm::zip(from, to)) {
      OpBuilder::InsertionGuard guard(e.b);
      e.b.setInsertionPointToEnd(&newBlock);
      if (failed(translate(oldBlock)))
        return failure();
    }
  }
  e.values.map(op->getResults(), copy->getResults());
  return success();
}

LogicalResult Translator::lowerBlockValueOp(Operation *op) {
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(e, constant);
  if (llvm::isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return lowerElementwise(e, op);
  if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
    return lowerLoad(e, load);
  if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
    return lowerStore(e, store);
  if (auto gather = llvm::dyn_cast<pk::GatherOp>(op))
    return lowerGather(e, gather);
  if (auto scatter = llvm::dyn_cast<pk::ScatterOp>(op))
    return lowerScatter(e, scatter);
  if (auto atomic = llvm::dyn_cast<pk::AtomicRmwOp>(op))
    return lowerAtomicRmw(e, atomic);
  if (auto cas = llvm::dyn_cast<pk::AtomicCasOp>(op))
    return lowerAtomicCas(e, cas);
  if (auto iota = llvm::dyn_cast<pk::IotaOp>(op))
    return lowerIota(e, iota);
  if (auto broadcast = llvm::dyn_cast<pk::BroadcastInDimOp>(op))
    return lowerBroadcast(e, broadcast);
  if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op))
    return lowerTranspose(e, transpose);
  if (auto reshape = llvm::dyn_cast<pk::ReshapeOp>(op))
    return lowerReshape(e, reshape);
  if (auto convert = llvm::dyn_cast<ConvertLayoutOp>(op))
    return lowerConvertLayout(e, convert);
  if (auto slice = llvm::dyn_cast<pk::SliceOp>(op))
    return lowerSlice(e, slice);
  if (auto concat = llvm::dyn_cast<pk::ConcatenateOp>(op))
    return lowerConcatenate(e, concat);
  if (auto butterfly = llvm::dyn_cast<pk::ButterflyOp>(op))
    return lowerButterfly(e, butterfly);
  if (auto reduce = llvm::dyn_cast<pk::ReduceOp>(op))
    return lowerReduce(e, reduce);
  if (auto argReduce = llvm::dyn_cast<pk::ArgReduceOp>(op))
    return lowerArgReduce(e, argReduce);
  if (auto dot = llvm::dyn_cast<pk::DotOp>(op))
    return lowerDot(e, dot);
  return e.fail(op, "the CUDA backend cannot lower '" + op->getName().getStringRef() +
                        "' on block values");
}

/// Memory classes: a Ref's class is its kernel parameter (aliased
/// input/output parameters share one) or its scratch buffer. Classes
/// touched by more than one access (or by one in a loop) need barriers
/// around stores.
std::set<unsigned> classesNeedingBarriers(::mlir::gpu::GPUFuncOp func,
                                          std::map<unsigned, unsigned> &paramClass) {
  unsigned numParams = func.getNumArguments();
  std::vector<unsigned> parent(numParams);
  for (unsigned i = 0; i < numParams; ++i)
    parent[i] = i;
  std::function<unsigned(unsigned)> find = [&](unsigned x) {
    return parent[x] == x ? x : parent[x] = find(parent[x]);
  };
  if (auto aliases = func->getAttrOfType<DenseI64ArrayAttr>("pkgpu.aliases"))
    for (size_t i = 0; i + 1 < static_cast<size_t>(aliases.size()); i += 2)
      parent[find(aliases[i])] = find(aliases[i + 1]);
  for (unsigned i = 0; i < numParams; ++i)
    paramClass[i] = find(i);

  auto classOf = [&](Value ref) -> std::optional<unsigned> {
    // Stores through a transposed or reshaped view touch the buffer too.
    ref = pk::aliasedRef(ref);
    if (auto global = ref.getDefiningOp<GlobalRefOp>())
      if (auto arg = llvm::dyn_cast<BlockArgument>(global.getBase()))
        return paramClass[arg.getArgNumber()];
    if (auto shared = ref.getDefiningOp<SharedRefOp>())
      return sharedMemoryClass(shared);
    return std::nullopt;
  };
  std::map<unsigned, unsigned> accesses;
  auto count = [&](Operation *op, Value ref) {
    if (std::optional<unsigned> c = classOf(ref))
      accesses[*c] += op->getParentOfType<LoopLikeOpInterface>() ? 2 : 1;
  };
  func.walk([&](Operation *op) {
    // Shared buffers that the tensor cores read and cp.async fills are
    // accesses too: a store into a buffer an earlier wgmma read (the
    // staging buffers of a kernel's dots reuse their offsets) must wait
    // for every warp.
    if (auto wgmma = llvm::dyn_cast<WgmmaTileOp>(op)) {
      for (Value operand : {wgmma.getA(), wgmma.getB()})
        if (llvm::isa<pk::RefType>(operand.getType()))
          count(op, operand);
      return;
    }
    if (auto mma = llvm::dyn_cast<pk::Tcgen05MmaOp>(op)) {
      count(op, mma.getA());
      count(op, mma.getB());
      return;
    }
    if (auto copy = llvm::dyn_cast<AsyncCopyOp>(op))
      return count(op, copy.getDst());
    if (auto copy = llvm::dyn_cast<TmaCopyOp>(op))
      return count(op, copy.getDst());
    Value ref;
    if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
      ref = load.getRef();
    else if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
      ref = store.getRef();
    else if (auto gather = llvm::dyn_cast<pk::GatherOp>(op))
      ref = gather.getRef();
    else if (auto scatter = llvm::dyn_cast<pk::ScatterOp>(op))
      ref = scatter.getRef();
    else if (auto atomic = llvm::dyn_cast<pk::AtomicRmwOp>(op))
      ref = atomic.getRef();
    else if (auto cas = llvm::dyn_cast<pk::AtomicCasOp>(op))
      ref = cas.getRef();
    else
      return;
    count(op, ref);
  });
  std::set<unsigned> out;
  for (auto [c, n] : accesses)
    if (n > 1)
      out.insert(c);
  return out;
}

struct DistributePass : impl::PkGpuDistributeBase<DistributePass> {
  void runOnOperation() override {
    SmallVector<::mlir::gpu::GPUFuncOp> funcs;
    getOperation().walk([&](::mlir::gpu::GPUFuncOp f) { funcs.push_back(f); });
    for (::mlir::gpu::GPUFuncOp func : funcs)
      if (failed(distribute(func)))
        return signalPassFailure();
  }

  LogicalResult distribute(::mlir::gpu::GPUFuncOp func) {
    std::map<unsigned, unsigned> paramClass;
    std::set<unsigned> fenced = classesNeedingBarriers(func, paramClass);
    // Move the old body aside; the translation fills the entry block anew.
    Block &entry = func.getBody().front();
    auto old = std::make_unique<Block>();
    old->getOperations().splice(old->end(), entry.getOperations());
    Emitter e(func, entry);
    e.sharedAccessClasses = fenced;
    e.paramClass = paramClass;
    for (BlockArgument arg : entry.getArguments())
      e.values.map(arg, arg);
    LogicalResult result = Translator(e).translate(*old);
    // (A failed translation stops where it failed, with no return.)
    bool translated = succeeded(result) && entry.mightHaveTerminator() &&
                      llvm::isa<::mlir::gpu::ReturnOp>(entry.getTerminator());
    if (translated && e.warpgroups > 0 && func->hasAttr(kTensorMapParamsAttr)) {
      // A CTA's shared memory goes away when it exits: TMA stores still
      // reading it must be done.
      auto ret = llvm::cast<::mlir::gpu::ReturnOp>(entry.getTerminator());
      e.b.setInsertionPoint(ret);
      async::bulkWaitGroup(e.b, e.loc, 0, /*readOnly=*/true);
    }
    if (translated && func->hasAttr(kClusterShapeAttr)) {
      // Nor may it exit while its peers may still signal its barriers or
      // multicast into its shared memory.
      auto ret = llvm::cast<::mlir::gpu::ReturnOp>(entry.getTerminator());
      e.b.setInsertionPoint(ret);
      async::clusterSync(e.b, e.loc);
    }
    e.finish();
    for (Operation &op : llvm::reverse(*old))
      op.dropAllReferences();
    old->clear();
    if (failed(result) || failed(e.status))
      return failure();
    func->setAttr("pkgpu.shared_memory_bytes",
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64), e.sharedMemoryBytes()));
    return success();
  }
};

} // namespace

} // namespace pk::gpu
