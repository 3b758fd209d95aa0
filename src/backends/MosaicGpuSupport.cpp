//===- MosaicGpuSupport.cpp - Rejecting Mosaic GPU ops by name ------------===//
#include "backends/MosaicGpuSupport.h"

#include "ir/PkDialect.h"
#include "transforms/Passes.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace pk::backends {

llvm::StringRef mosaicGpuName(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, llvm::StringRef>(op)
      .Case([](pk::MeshKernelOp) { return "plgpu.kernel (and pl.core_map)"; })
      .Case([](pk::AxisIndexOp) { return "lax.axis_index"; })
      .Case([](pk::WarpMapOp) { return "plgpu.WarpMesh (pl.core_map over warps)"; })
      .Case([](pk::RunScopedOp) { return "pl.run_scoped"; })
      .Case([](pk::RefViewOp) { return "Ref views (x_ref.at[...]) passed to Mosaic GPU ops"; })
      .Case([](pk::RefTransposeOp) { return "plgpu.transpose_ref"; })
      .Case([](pk::RefReshapeOp) { return "Ref.reshape"; })
      .Case([](pk::RefReinterpretOp) { return "plgpu.RefUnion"; })
      .Case([](pk::BarrierArriveOp) { return "plgpu.barrier_arrive"; })
      .Case([](pk::BarrierWaitOp) { return "plgpu.barrier_wait"; })
      .Case([](pk::BarrierTestOp) { return "plgpu.barrier_test"; })
      .Case([](pk::CopyGmemToSmemOp) { return "plgpu.copy_gmem_to_smem"; })
      .Case([](pk::CopySmemToGmemOp) { return "plgpu.copy_smem_to_gmem"; })
      .Case([](pk::WaitSmemToGmemOp) { return "plgpu.wait_smem_to_gmem"; })
      .Case([](pk::CommitGroupOp) { return "plgpu.commit_smem_to_gmem_group"; })
      .Case([](pk::CommitSmemOp) { return "plgpu.commit_smem"; })
      .Case([](pk::FenceAsyncSharedOp) { return "plgpu.inline_mgpu (a proxy fence)"; })
      .Case([](pk::NamedBarrierOp) { return "plgpu.inline_mgpu (a named barrier)"; })
      .Case([](pk::WgmmaOp) { return "plgpu.wgmma"; })
      .Case([](pk::WgmmaWaitOp) { return "plgpu.wgmma_wait"; })
      .Case([](pk::LayoutCastOp) { return "plgpu.layout_cast"; })
      .Case([](pk::SetMaxRegistersOp) { return "plgpu.set_max_registers"; })
      .Case([](pk::GetGlobalOp) { return "pl.get_global"; })
      .Case([](pk::SemaphoreSignalOp) { return "pl.semaphore_signal"; })
      .Case([](pk::SemaphoreWaitOp) { return "pl.semaphore_wait"; })
      .Case([](pk::SemaphoreReadOp) { return "pl.semaphore_read"; })
      .Case([](pk::Tcgen05MmaOp) { return "plgpu.tcgen05_mma"; })
      .Case([](pk::Tcgen05CommitArriveOp) { return "plgpu.tcgen05_commit_arrive"; })
      .Case([](pk::AsyncLoadTmemOp) { return "plgpu.async_load_tmem"; })
      .Case([](pk::AsyncStoreTmemOp) { return "plgpu.async_store_tmem"; })
      .Case([](pk::WaitLoadTmemOp) { return "plgpu.wait_load_tmem"; })
      .Case([](pk::CommitTmemOp) { return "plgpu.commit_tmem"; })
      .Case([](pk::TryClusterCancelOp) { return "plgpu.try_cluster_cancel"; })
      .Case([](pk::QueryClusterCancelOp) { return "plgpu.query_cluster_cancel"; })
      .Case([](pk::DmaStartOp) { return "pltpu async copies (make_async_copy, sync_copy)"; })
      .Case([](pk::DmaWaitOp) { return "pltpu async copies (make_async_copy, sync_copy)"; })
      .Case([](pk::PipelineOp op) {
        return op.isTpu()                ? "pltpu.emit_pipeline"
               : op.getWarpSpecialized() ? "plgpu.emit_pipeline_warp_specialized"
                                         : "plgpu.emit_pipeline";
      })
      .Default([](mlir::Operation *) { return ""; });
}

namespace {

/// What the CUDA backend does not lower yet in a kernel it otherwise
/// takes: the construct's name, or "".
std::string unsupportedOnCuda(mlir::Operation *op) {
  if (auto pipeline = llvm::dyn_cast<pk::PipelineOp>(op);
      pipeline && !pipeline.getOutSpecs().empty()) {
    // As in JAX: its compute warpgroups would store the same slots
    // without synchronizing with each other.
    if (pipeline.getWarpSpecialized() && pipeline.getNumComputeWgs().value_or(1) > 1)
      return "plgpu.emit_pipeline_warp_specialized with out_specs and several compute warpgroups";
    if (pipeline.getWarpSpecialized())
      return "";
    auto mesh = pipeline->getParentOfType<pk::MeshKernelOp>();
    if (mesh && mesh.getNumThreads() > 1)
      return "plgpu.emit_pipeline with out_specs in a kernel of several Pallas threads";
  }
  return "";
}

/// Whether the TPU backend lowers `op`, one of the ops above: explicit
/// memory management in an ordinary pallas_call (scoped VMEM/SMEM scratch
/// and semaphores, Ref views, async copies, semaphores).
bool tpuLowers(mlir::Operation *op) {
  if (op->getParentOfType<pk::MeshKernelOp>())
    return false;
  if (auto scoped = llvm::dyn_cast<pk::RunScopedOp>(op))
    return llvm::all_of(scoped.getBodyBlock().getArgumentTypes(), [](mlir::Type t) {
      if (auto ref = llvm::dyn_cast<pk::RefType>(t)) {
        std::optional<MemorySpace> space = ref.getSpace();
        return !space || *space == MemorySpace::VMEM || *space == MemorySpace::SMEM;
      }
      return llvm::isa<pk::SemaphoreType>(t);
    });
  if (auto pipeline = llvm::dyn_cast<pk::PipelineOp>(op))
    return pipeline.isTpu();
  return llvm::isa<pk::RefViewOp, pk::RefReshapeOp, pk::SemaphoreSignalOp, pk::SemaphoreWaitOp,
                   pk::SemaphoreReadOp, pk::DmaStartOp, pk::DmaWaitOp>(op);
}

} // namespace

mlir::LogicalResult rejectMosaicGpuOps(mlir::ModuleOp module, const Target &target) {
  llvm::StringSet<> reported;
  bool cuda = target.kind == Target::Kind::Cuda;
  module.walk([&](mlir::Operation *op) {
    if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op); call && cuda) {
      for (mlir::Attribute t : call.getScratchTypes())
        if (llvm::isa<pk::SemaphoreType>(llvm::cast<mlir::TypeAttr>(t).getValue()) &&
            reported.insert("semaphore scratch").second)
          op->emitError() << "the CUDA backend does not lower semaphore scratch "
                             "(pltpu.SemaphoreType) in a pallas_call yet; this kernel runs on "
                             "pkc's interpreter for now (pkc run --device=interpreter)";
      return;
    }
    llvm::StringRef name = mosaicGpuName(op);
    if (name.empty())
      return;
    if (!cuda) {
      if (tpuLowers(op))
        return;
      if (auto scoped = llvm::dyn_cast<pk::RunScopedOp>(op);
          scoped && !op->getParentOfType<pk::MeshKernelOp>()) {
        bool inMemory = llvm::any_of(scoped.getBodyBlock().getArgumentTypes(), [](mlir::Type t) {
          auto ref = llvm::dyn_cast<pk::RefType>(t);
          std::optional<MemorySpace> space = ref ? ref.getSpace() : std::nullopt;
          return space && (*space == MemorySpace::HBM || *space == MemorySpace::Any);
        });
        if (reported.insert(name).second)
          op->emitError() << (inMemory
                                  ? "the TPU backend does not lower pl.run_scoped buffers in "
                                    "pltpu.HBM or pl.ANY yet (it allocates pltpu.VMEM / "
                                    "pltpu.SMEM buffers and semaphores); this kernel runs on "
                                    "pkc's interpreter for now (pkc run --device=interpreter)"
                                  : "on TPU pl.run_scoped allocates pltpu.VMEM / pltpu.SMEM "
                                    "buffers and semaphores; Mosaic GPU allocations (plgpu.SMEM, "
                                    "plgpu.Barrier, plgpu.ACC) cannot be compiled for it");
        return;
      }
      if (reported.insert(name).second)
        op->emitError() << name
                        << " is a Mosaic GPU (NVIDIA) construct; the TPU backend cannot compile it";
      return;
    }
    if (llvm::isa<pk::MeshKernelOp>(op) && target.computeCapability() < 90) {
      if (reported.insert("arch").second)
        op->emitError() << "Mosaic GPU kernels (plgpu.kernel) use Hopper's mbarriers and TMA: "
                           "compile them for sm_90a or newer, not "
                        << target.arch;
      return;
    }
    // Each Pallas thread is a warpgroup of 128 CUDA threads, and a CTA has
    // at most 1024 (JAX's interpreter runs more; a GPU cannot).
    if (auto mesh = llvm::dyn_cast<pk::MeshKernelOp>(op);
        mesh && mesh.getNumThreads() > 8 && reported.insert("threads").second) {
      op->emitError() << "this kernel has " << mesh.getNumThreads()
                      << " Pallas threads (num_threads), " << 128 * mesh.getNumThreads()
                      << " CUDA threads a CTA; a CTA holds at most 1024 (8 warpgroups)";
      return;
    }
    // The tensor cores' instructions belong to one architecture each.
    bool blackwell = llvm::isa<pk::Tcgen05MmaOp, pk::Tcgen05CommitArriveOp, pk::AsyncLoadTmemOp,
                               pk::AsyncStoreTmemOp, pk::WaitLoadTmemOp, pk::CommitTmemOp,
                               pk::TryClusterCancelOp, pk::QueryClusterCancelOp>(op);
    if (auto scoped = llvm::dyn_cast<pk::RunScopedOp>(op))
      for (mlir::Type t : scoped.getBodyBlock().getArgumentTypes())
        if (auto ref = llvm::dyn_cast<pk::RefType>(t);
            ref && ref.getSpace() == MemorySpace::GPUTensorMemory) {
          blackwell = true;
          name = "plgpu.TMEM";
        }
    if (blackwell && !(target.computeCapability() == 100 && target.archSpecific())) {
      if (reported.insert(name).second)
        op->emitError() << name << " is Blackwell's (tensor memory, tcgen05 tensor cores, "
                        << "cluster launch control): compile for cuda:sm_100a, not " << target.arch;
      return;
    }
    if (llvm::isa<pk::WgmmaOp, pk::WgmmaWaitOp>(op) &&
        !(target.computeCapability() == 90 && target.archSpecific())) {
      if (reported.insert(name).second)
        op->emitError() << name << " is Hopper's warpgroup MMA, which only sm_90a has: compile "
                        << "for cuda:sm_90a, not " << target.arch
                        << (target.computeCapability() >= 100
                                ? " (Blackwell multiplies with plgpu.tcgen05_mma)"
                                : "");
      return;
    }
    bool inMeshKernel = llvm::isa<pk::MeshKernelOp>(op) || op->getParentOfType<pk::MeshKernelOp>();
    // Scoped VMEM/SMEM buffers of an ordinary kernel are shared memory, as
    // its scratch is (semaphores are not lowered), and so are plgpu.SMEM
    // buffers without transforms (a Mosaic GPU pallas_call whose only
    // Mosaic GPU memory is scoped in its body).
    if (llvm::isa<pk::RunScopedOp>(op) && !inMeshKernel &&
        llvm::all_of(
            llvm::cast<pk::RunScopedOp>(op).getBodyBlock().getArgumentTypes(), [](mlir::Type t) {
              auto ref = llvm::dyn_cast<pk::RefType>(t);
              std::optional<MemorySpace> space = ref ? ref.getSpace() : std::nullopt;
              return ref && (!space || *space == MemorySpace::VMEM || *space == MemorySpace::SMEM ||
                             (*space == MemorySpace::GPUShared && !ref.hasTransforms()));
            }))
      return;
    // A view an async copy takes is reported as the copy.
    if (llvm::isa<pk::RefViewOp>(op) && !inMeshKernel &&
        llvm::any_of(op->getUsers(), [](mlir::Operation *user) {
          return llvm::isa<pk::DmaStartOp, pk::DmaWaitOp, pk::RefViewOp, pk::RefReshapeOp>(user);
        }))
      return;
    std::string missing = inMeshKernel ? unsupportedOnCuda(op) : name.str() + " outside plgpu.kernel";
    if (llvm::isa<pk::DmaStartOp, pk::DmaWaitOp>(op) ||
        (llvm::isa<pk::SemaphoreReadOp>(op) && !inMeshKernel) ||
        (llvm::isa<pk::PipelineOp>(op) && llvm::cast<pk::PipelineOp>(op).isTpu()))
      missing = name.str() + " (a TPU construct)";
    if (auto reshape = llvm::dyn_cast<pk::RefReshapeOp>(op)) {
      if (foldsIntoAccesses(reshape))
        return; // pk-fold-ref-reshapes makes it loads and stores of the Ref
      missing = "Ref.reshape beyond adding or removing size-1 axes (or used other than by "
                "reads and writes)";
    }
    if (llvm::isa<pk::RunScopedOp>(op) && !inMeshKernel && tpuLowers(op))
      missing = "scoped semaphores (pltpu.SemaphoreType) in a pallas_call";
    if (!missing.empty() && reported.insert(missing).second)
      op->emitError() << "the CUDA backend does not lower " << missing
                      << " yet; this kernel runs on pkc's interpreter for now "
                         "(pkc run --device=interpreter)";
  });
  return mlir::failure(!reported.empty());
}

} // namespace pk::backends
