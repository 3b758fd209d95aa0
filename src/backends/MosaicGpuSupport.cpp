//===- MosaicGpuSupport.cpp - Rejecting Mosaic GPU ops by name ------------===//
#include "backends/MosaicGpuSupport.h"

#include "ir/PkDialect.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace pk::backends {

llvm::StringRef mosaicGpuName(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, llvm::StringRef>(op)
      .Case([](pk::MeshKernelOp) { return "plgpu.kernel (and pl.core_map)"; })
      .Case([](pk::AxisIndexOp) { return "lax.axis_index"; })
      .Case([](pk::RunScopedOp) { return "pl.run_scoped"; })
      .Case([](pk::RefViewOp) { return "Ref views (x_ref.at[...]) passed to Mosaic GPU ops"; })
      .Case([](pk::RefTransposeOp) { return "plgpu.transpose_ref"; })
      .Case([](pk::BarrierArriveOp) { return "plgpu.barrier_arrive"; })
      .Case([](pk::BarrierWaitOp) { return "plgpu.barrier_wait"; })
      .Case([](pk::CopyGmemToSmemOp) { return "plgpu.copy_gmem_to_smem"; })
      .Case([](pk::CopySmemToGmemOp) { return "plgpu.copy_smem_to_gmem"; })
      .Case([](pk::WaitSmemToGmemOp) { return "plgpu.wait_smem_to_gmem"; })
      .Case([](pk::CommitGroupOp) { return "plgpu.commit_smem_to_gmem_group"; })
      .Case([](pk::CommitSmemOp) { return "plgpu.commit_smem"; })
      .Case([](pk::WgmmaOp) { return "plgpu.wgmma"; })
      .Case([](pk::WgmmaWaitOp) { return "plgpu.wgmma_wait"; })
      .Case([](pk::LayoutCastOp) { return "plgpu.layout_cast"; })
      .Case([](pk::SetMaxRegistersOp) { return "plgpu.set_max_registers"; })
      .Case([](pk::GetGlobalOp) { return "pl.get_global"; })
      .Case([](pk::SemaphoreSignalOp) { return "pl.semaphore_signal"; })
      .Case([](pk::SemaphoreWaitOp) { return "pl.semaphore_wait"; })
      .Case([](pk::PipelineOp op) {
        return op.getWarpSpecialized() ? "plgpu.emit_pipeline_warp_specialized"
                                       : "plgpu.emit_pipeline";
      })
      .Default([](mlir::Operation *) { return ""; });
}

mlir::LogicalResult rejectMosaicGpuOps(mlir::ModuleOp module, const Target &target) {
  llvm::StringSet<> reported;
  module.walk([&](mlir::Operation *op) {
    llvm::StringRef name = mosaicGpuName(op);
    if (name.empty() || !reported.insert(name).second)
      return;
    if (target.kind == Target::Kind::Cuda)
      op->emitError() << "the CUDA backend does not lower " << name
                      << " yet; Mosaic GPU kernels run on pkc's interpreter for now "
                         "(pkc run --device=interpreter)";
    else
      op->emitError() << name
                      << " is a Mosaic GPU (NVIDIA) construct; the TPU backend cannot "
                         "compile it";
  });
  return mlir::failure(!reported.empty());
}

} // namespace pk::backends
