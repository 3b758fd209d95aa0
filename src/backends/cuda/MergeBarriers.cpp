//===- MergeBarriers.cpp - One CTA barrier where lowering made two --------===//
//
// Distribution lowers op by op, and each op that shares memory between the
// CTA's threads brings the barriers it needs: a store to shared memory
// waits for the readers before it and is waited for after it, commit_smem
// fences and waits, barrier initialization fences and waits. Where two
// such ops meet, two barriers follow each other with only address
// arithmetic (or a fence that orders the thread's own accesses) between
// them. The first then orders nothing the second does not: every access
// before it is also before the second, and nothing between them is an
// access. It is erased.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUMERGEBARRIERS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether `op` may stand between two barriers without the first one
/// ordering anything for it: it touches no memory, or it is a fence that
/// orders the running thread's own accesses (which stay on the same side
/// of the remaining barrier).
bool orderingNeutral(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (llvm::isa<NVVM::FenceProxyOp, NVVM::FenceMbarrierInitOp>(op))
    return true;
  return isMemoryEffectFree(op);
}

void mergeBarriers(Block &block) {
  ::mlir::gpu::BarrierOp pending; // the last barrier, if nothing since has touched memory
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto barrier = llvm::dyn_cast<::mlir::gpu::BarrierOp>(op)) {
      if (pending && pending->getAttrDictionary() == barrier->getAttrDictionary())
        pending.erase();
      pending = barrier;
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        mergeBarriers(inner);
    if (!orderingNeutral(&op))
      pending = nullptr;
  }
}

struct MergeBarriersPass : impl::PkGpuMergeBarriersBase<MergeBarriersPass> {
  void runOnOperation() override {
    getOperation().walk([](::mlir::gpu::GPUFuncOp func) {
      for (Block &block : func.getBody())
        mergeBarriers(block);
    });
  }
};

} // namespace

} // namespace pk::gpu
