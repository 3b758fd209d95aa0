//===- PkClusterLaunchOps.cpp - Verifiers of cluster launch control -------===//
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"

using namespace mlir;

namespace pk {

std::string clusterCancelResultProblem(RefType result) {
  int64_t bytes = result.getElementType().getIntOrFloatBitWidth() / 8;
  for (int64_t d : result.getShape())
    bytes *= d;
  if (result.getSpace() != MemorySpace::GPUShared || bytes != 16)
    return "the answer of a cluster cancel request is 16 bytes of shared memory "
           "(plgpu.TryClusterCancelResult()), got " +
           typeText(result);
  return "";
}

LogicalResult TryClusterCancelOp::verify() {
  if (std::string why = clusterCancelResultProblem(getResult().getType()); !why.empty())
    return emitOpError() << why;
  auto barrier = llvm::cast<BarrierType>(getBarrier().getType());
  if (barrier.isClusterBarrier())
    return emitOpError() << "completes on a barrier of its own CTA, not a cluster barrier";
  return verifyElementIndices(*this, barrier.getShape(), getIndices().size(), "barrier");
}

LogicalResult QueryClusterCancelOp::verify() {
  if (std::string why = clusterCancelResultProblem(getResult().getType()); !why.empty())
    return emitOpError() << why;
  if (getGridAxes().size() != getIndices().size())
    return emitOpError() << "returns one index per grid axis it names: " << getGridAxes().size()
                         << " axes, " << getIndices().size() << " indices";
  if (auto mesh = (*this)->getParentOfType<MeshKernelOp>())
    for (int64_t axis : getGridAxes())
      if (axis < 0 || axis >= static_cast<int64_t>(mesh.getGrid().size()))
        return emitOpError() << "grid axis " << axis << " is not an axis of the kernel's grid";
  return success();
}

} // namespace pk
