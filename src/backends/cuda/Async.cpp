//===- Async.cpp - mbarriers, TMA, bulk groups, proxies, warpgroups -------===//
//
// The builders of Async.h and the TMA patterns of pk-gpu-lower-async.
// wgmma has its own file (Wgmma.cpp).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Async.h"

#include "backends/cuda/ir/PkGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::gpu {

using namespace mlir;

namespace {

bool isPointer(Type t, unsigned addressSpace) {
  auto p = llvm::dyn_cast<LLVM::LLVMPointerType>(t);
  return p && p.getAddressSpace() == addressSpace;
}

/// The checks tma_load and tma_store share.
LogicalResult verifyTma(Operation *op, Value tensorMap, Value shared, ValueRange coordinates) {
  if (!isPointer(tensorMap.getType(), 0))
    return op->emitOpError("takes the tensor map as a generic !llvm.ptr (a kernel parameter), got ")
           << tensorMap.getType();
  if (!isPointer(shared.getType(), 3))
    return op->emitOpError("addresses shared memory as !llvm.ptr<3>, got ") << shared.getType();
  if (coordinates.empty() || coordinates.size() > 5)
    return op->emitOpError("takes 1 to 5 coordinates (TMA tensors have 1 to 5 dimensions), got ")
           << coordinates.size();
  return success();
}

} // namespace

LogicalResult TmaLoadOp::verify() {
  if (failed(verifyTma(*this, getTensorMap(), getDestination(), getCoordinates())))
    return failure();
  if (!isPointer(getBarrier().getType(), 3))
    return emitOpError("completes on an mbarrier in shared memory (!llvm.ptr<3>), got ")
           << getBarrier().getType();
  return success();
}

LogicalResult TmaStoreOp::verify() {
  return verifyTma(*this, getTensorMap(), getSource(), getCoordinates());
}

} // namespace pk::gpu

namespace pk::gpu::async {

using namespace mlir;

void mbarrierInit(OpBuilder &b, Location loc, Value barrier, Value count) {
  NVVM::MBarrierInitOp::create(b, loc, barrier, count, /*predicate=*/Value());
}

void fenceMbarrierInit(OpBuilder &b, Location loc) { NVVM::FenceMbarrierInitOp::create(b, loc); }

void mbarrierArrive(OpBuilder &b, Location loc, Value barrier) {
  NVVM::MBarrierArriveOp::create(
      b, loc, b.getI64Type(), barrier, /*count=*/Value(),
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA));
}

void mbarrierArriveExpectTx(OpBuilder &b, Location loc, Value barrier, Value bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, /*res=*/Type(), barrier, bytes,
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA), b.getBoolAttr(false),
      /*predicate=*/Value());
}

void mbarrierWait(OpBuilder &b, Location loc, Value barrier, Value parity) {
  // try_wait.parity loops until the phase completes; the suspend-time hint
  // is the PTX default's order (CUTLASS passes 0x989680 ns).
  Value ticks = arith::ConstantIntOp::create(b, loc, 0x989680, 32);
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity, ticks);
}

Value mbarrierTest(OpBuilder &b, Location loc, Value barrier, Value parity) {
  return NVVM::MBarrierTestWaitOp::create(b, loc, b.getI1Type(), barrier, parity).getRes();
}

void clusterSync(OpBuilder &b, Location loc, bool relaxedArrival) {
  if (relaxedArrival)
    NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
  else
    NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
}

Value mapaShared(OpBuilder &b, Location loc, Value shared, Value rank) {
  return NVVM::MapaOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), shared, rank);
}

void mbarrierArriveCluster(OpBuilder &b, Location loc, Value barrier) {
  // A barrier in shared::cluster returns no state. Release at CTA scope,
  // as CUTLASS's ClusterBarrier::arrive: release.cluster makes ptxas fence
  // every global access first (MEMBAR.ALL.GPU before each arrival: JAX's
  // collective matmul ran at 0.4x of its speed without clusters), and what
  // a peer waits for here is only that this CTA is done reading shared
  // memory, which its callers have made sure of (wgmma waited for, or a
  // barrier the reading threads passed) before arriving.
  NVVM::MBarrierArriveOp::create(
      b, loc, /*res=*/Type(), barrier, /*count=*/Value(),
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA));
}

void bulkCommitGroup(OpBuilder &b, Location loc) { NVVM::CpAsyncBulkCommitGroupOp::create(b, loc); }

void bulkWaitGroup(OpBuilder &b, Location loc, unsigned pending, bool readOnly) {
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(pending)),
                                       readOnly ? b.getUnitAttr() : UnitAttr());
}

void fenceAsyncShared(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void namedBarrier(OpBuilder &b, Location loc, Value id, Value threads, bool arrive) {
  if (arrive)
    NVVM::BarrierArriveOp::create(b, loc, id, threads);
  else
    NVVM::BarrierOp::create(b, loc, TypeRange{}, id, threads, {}, Value());
}

Value warpgroupId(OpBuilder &b, Location loc) {
  Value tid = ::mlir::gpu::ThreadIdOp::create(b, loc, ::mlir::gpu::Dimension::x);
  Value tid32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), tid);
  Value group =
      arith::DivUIOp::create(b, loc, tid32, arith::ConstantIntOp::create(b, loc, 128, 32));
  // Lane 0's value, so that the compiler knows the warp agrees.
  Value lane0 = arith::ConstantIntOp::create(b, loc, 0, 32);
  Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
  return ::mlir::gpu::ShuffleOp::create(b, loc, group, lane0, width, ::mlir::gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

Value electOne(OpBuilder &b, Location loc) {
  return NVVM::ElectSyncOp::create(b, loc, b.getI1Type(), /*membermask=*/Value());
}

void gridDependency(OpBuilder &b, Location loc, bool launchDependents) {
  NVVM::GriddepcontrolOp::create(b, loc,
                                 launchDependents ? NVVM::GridDepActionKind::launch_dependents
                                                  : NVVM::GridDepActionKind::wait);
}

void setMaxRegisters(OpBuilder &b, Location loc, unsigned count, bool increase) {
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(count)),
      NVVM::SetMaxRegisterActionAttr::get(b.getContext(),
                                          increase ? NVVM::SetMaxRegisterAction::increase
                                                   : NVVM::SetMaxRegisterAction::decrease));
}

Value clusterCtaRank(OpBuilder &b, Location loc) {
  return NVVM::ClusterId::create(b, loc, b.getI32Type(), /*range=*/nullptr);
}

namespace {

/// PTX orders tensor coordinates innermost first; pkc, like NumPy and the
/// manifest, outermost first.
SmallVector<Value> ptxOrder(ValueRange coordinates) {
  return SmallVector<Value>(llvm::reverse(coordinates));
}

struct TmaLoadLowering : OpRewritePattern<TmaLoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TmaLoadOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // The destination is named in the cluster's shared window (address
    // space 7); a CTA's own shared memory is part of it.
    Value destination = LLVM::AddrSpaceCastOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), 7), op.getDestination());
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        rewriter, loc, destination, op.getTensorMap(), ptxOrder(op.getCoordinates()),
        op.getBarrier(),
        /*im2colOffsets=*/ValueRange(), op.getMulticastMask(), /*l2CacheHint=*/Value(),
        NVVM::TMALoadModeAttr::get(rewriter.getContext(), NVVM::TMALoadMode::TILE),
        rewriter.getBoolAttr(false), /*group=*/nullptr, /*predicate=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaStoreLowering : OpRewritePattern<TmaStoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TmaStoreOp op, PatternRewriter &rewriter) const override {
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        rewriter, op.getLoc(), op.getTensorMap(), op.getSource(), ptxOrder(op.getCoordinates()),
        /*l2CacheHint=*/Value(),
        NVVM::TMAStoreModeAttr::get(rewriter.getContext(), NVVM::TMAStoreMode::TILE),
        /*predicate=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateTmaToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<TmaLoadLowering, TmaStoreLowering>(patterns.getContext());
}

void configureAsyncLoweringTarget(ConversionTarget &target) {
  target.addIllegalOp<TmaLoadOp, TmaStoreOp, WgmmaOp, WgmmaWaitOp>();
  target.addLegalDialect<NVVM::NVVMDialect, LLVM::LLVMDialect, arith::ArithDialect,
                         vector::VectorDialect, ::mlir::gpu::GPUDialect, scf::SCFDialect>();
}

} // namespace pk::gpu::async
