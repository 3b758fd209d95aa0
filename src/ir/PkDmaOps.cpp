//===- PkDmaOps.cpp - Verifiers of the explicit-copy ops ------------------===//
#include "ir/PkDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;

namespace pk {

namespace {

/// The copy's two Refs hold the same elements, and its semaphore is one
/// DMA semaphore.
LogicalResult verifyCopy(Operation *op, RefType src, RefType dst, SemaphoreType sem,
                         size_t numIndices) {
  if (src.getShape() != dst.getShape() || src.getElementType() != dst.getElementType())
    return op->emitOpError() << "copies between Refs of the same shape and element type, got "
                             << src << " and " << dst;
  for (RefType ref : {src, dst})
    if (std::optional<MemorySpace> space = ref.getSpace();
        space && (*space == MemorySpace::GPUShared || *space == MemorySpace::GPUAccumulator))
      return op->emitOpError() << "copies between TPU memories (any, hbm, vmem, smem), got " << ref;
  if (!sem.isDma())
    return op->emitOpError() << "completes on a DMA semaphore, got " << sem;
  return verifyElementIndices(op, sem.getShape(), numIndices, "semaphore");
}

} // namespace

LogicalResult DmaStartOp::verify() {
  if (getPriority() > 1)
    return emitOpError() << "priority must be 0 or 1, got " << getPriority();
  return verifyCopy(*this, getSrc().getType(), getDst().getType(), getSemaphore().getType(),
                    getIndices().size());
}

LogicalResult DmaWaitOp::verify() {
  return verifyCopy(*this, getSrc().getType(), getDst().getType(), getSemaphore().getType(),
                    getIndices().size());
}

LogicalResult SemaphoreReadOp::verify() {
  return verifyElementIndices(*this, getSemaphore().getType().getShape(), getIndices().size(),
                              "semaphore");
}

} // namespace pk

#define GET_OP_CLASSES
#include "ir/PkDmaOps.cpp.inc"
