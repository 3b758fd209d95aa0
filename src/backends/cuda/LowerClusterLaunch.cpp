//===- LowerClusterLaunch.cpp - Blackwell's cluster launch control --------===//
//
// plgpu.try_cluster_cancel and query_cluster_cancel on sm_100a, as Mosaic
// GPU lowers them. Every Pallas thread arrives at the request's barrier:
// the first warpgroup announces the 16-byte answer (arrive.expect_tx), the
// others just arrive, and the first thread of the cluster's first CTA
// asks (clusterlaunchcontrol.try_cancel, multicast to the cluster's CTAs
// when it has several), the answer completing the transaction. A query
// reads the answer and turns the cancelled cluster's first CTA into grid
// indices: CTAs are numbered row-major over (grid, cluster) on x.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Async.h"
#include "backends/cuda/LowerMosaicGpu.h"
#include "backends/cuda/OutlineMesh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// The answer's bytes: 16.
constexpr int64_t kAnswerBytes = 16;

Value isFirstWarpgroup(Emitter &e) {
  if (!e.warpgroup())
    return Value();
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.warpgroup(), e.index(0));
}

LogicalResult lowerTryClusterCancel(Emitter &e, pk::TryClusterCancelOp op) {
  Value answer = pointerAt(e, refOf(e, op.getResult()), {e.index(0)});
  Value barrier = barrierAt(e, op.getBarrier(), op.getIndices()).barrier;
  Value firstGroup = isFirstWarpgroup(e);
  auto shape = e.func->getAttrOfType<DenseI64ArrayAttr>(kClusterShapeAttr);
  int64_t clusterSize = 1;
  if (shape)
    for (int64_t c : shape.asArrayRef())
      clusterSize *= c;
  // What the Pallas thread did before (reading the slot's last answer) is
  // done before it arrives.
  e.barrier();
  e.guarded(e.andOf(isFirstThread(e), firstGroup), [&] {
    async::mbarrierArriveExpectTx(e.b, e.loc, barrier, e.i32(kAnswerBytes));
    Value leader = clusterSize > 1
                       ? arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq,
                                               async::clusterCtaRank(e.b, e.loc), e.i32(0))
                             .getResult()
                       : Value();
    e.guarded(leader, [&] {
      NVVM::ClusterLaunchControlTryCancelOp::create(e.b, e.loc, /*multicast=*/clusterSize > 1,
                                                    answer, barrier);
    });
  });
  if (firstGroup) {
    Value others = arith::XOrIOp::create(
        e.b, e.loc, firstGroup, arith::ConstantIntOp::create(e.b, e.loc, e.b.getI1Type(), 1));
    e.guarded(e.andOf(isFirstThread(e), others),
              [&] { async::mbarrierArrive(e.b, e.loc, barrier); });
  }
  return success();
}

LogicalResult lowerQueryClusterCancel(Emitter &e, pk::QueryClusterCancelOp op) {
  auto grid = op->getAttrOfType<DenseI64ArrayAttr>(kMeshGridAttr);
  auto clusterSize = op->getAttrOfType<IntegerAttr>(kMeshClusterSizeAttr);
  if (!grid || !clusterSize)
    return e.fail(op, "internal error: plgpu.query_cluster_cancel outside an outlined kernel");
  Value pointer = pointerAt(e, refOf(e, op.getResult()), {e.index(0)});
  Type i128 = e.b.getIntegerType(128);
  Value answer = LLVM::LoadOp::create(e.b, e.loc, i128, pointer, /*alignment=*/kAnswerBytes);
  // The next request may overwrite the slot (async proxy) once this read
  // (generic proxy) is done.
  async::fenceAsyncShared(e.b, e.loc);
  auto query = [&](NVVM::ClusterLaunchControlQueryType type, Type result) {
    return NVVM::ClusterLaunchControlQueryCancelOp::create(
               e.b, e.loc, result,
               NVVM::ClusterLaunchControlQueryTypeAttr::get(e.b.getContext(), type), answer)
        .getResult();
  };
  Value cancelled = query(NVVM::ClusterLaunchControlQueryType::IS_CANCELED, e.b.getI1Type());
  Value cta = query(NVVM::ClusterLaunchControlQueryType::GET_FIRST_CTA_ID_X, e.b.getI32Type());
  // Defined only for a cancelled launch: 0 otherwise.
  cta = arith::SelectOp::create(e.b, e.loc, cancelled, cta, e.i32(0));
  Value linear = arith::DivUIOp::create(e.b, e.loc, cta, e.i32(clusterSize.getInt()));
  ArrayRef<int64_t> extents = grid.asArrayRef();
  SmallVector<Value> point(extents.size());
  for (size_t d = extents.size(); d-- > 0;) {
    point[d] = arith::RemUIOp::create(e.b, e.loc, linear, e.i32(extents[d]));
    linear = arith::DivUIOp::create(e.b, e.loc, linear, e.i32(extents[d]));
  }
  for (auto [result, axis] : llvm::zip(op.getIndices(), op.getGridAxes()))
    e.values.map(result, point[static_cast<size_t>(axis)]);
  e.values.map(op.getCanceled(), cancelled);
  return success();
}

} // namespace

std::optional<LogicalResult> lowerClusterLaunchOp(Emitter &e, Operation *op) {
  if (auto request = llvm::dyn_cast<pk::TryClusterCancelOp>(op))
    return lowerTryClusterCancel(e, request);
  if (auto query = llvm::dyn_cast<pk::QueryClusterCancelOp>(op))
    return lowerQueryClusterCancel(e, query);
  return std::nullopt;
}

} // namespace pk::gpu
