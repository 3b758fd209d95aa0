//===- Pipeline.cpp - The CUDA backend's stages, in order ------------------===//
//
// Each stage is a list of named passes; docs/cuda.md's table follows this
// file. The stages are registered for pk-opt (registerCudaPipelines) so
// that every one replays from the IR of the stage before.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Pipeline.h"

#include "backends/cuda/Passes.h"
#include "transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace pk::gpu {

using namespace mlir;

void buildOutlineStage(OpPassManager &pm, unsigned defaultNumWarps, bool wgmma) {
  PkGpuOutlineOptions outline;
  outline.defaultNumWarps = defaultNumWarps;
  pm.addPass(createPkExpandBitcasts()); // GPUs have no row-packing bitcast
  pm.addPass(createPkFoldRefReshapes()); // nor Ref views: squeezed views fold away
  pm.addPass(createPkGpuOutline(outline));
  pm.addPass(createPkGpuDefineArith());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (wgmma) {
    pm.addPass(createPkGpuWgmmaDots());
    pm.addPass(createPkGpuPrefetchOperands());
    pm.addPass(createCanonicalizerPass());
  }
}

void buildLayoutStage(OpPassManager &pm) { pm.addPass(createPkGpuAssignLayouts()); }

// Passes that see one kernel at a time run nested on each op of the
// gpu.module: MLIR runs them on its thread pool, the kernels of a file
// side by side (the output does not depend on the order).
void buildDistributeStage(OpPassManager &pm) {
  pm.addPass(createPkGpuDistribute());
  pm.addPass(createPkGpuLowerAsync());
  OpPassManager &eachKernel = pm.nest<::mlir::gpu::GPUModuleOp>().nestAny();
  eachKernel.addPass(createPkGpuCanonicalizeBlocks());
  eachKernel.addPass(createCSEPass());
  pm.addPass(createPkGpuMergeBarriers());
}

void buildNvvmStage(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<::mlir::gpu::GPUModuleOp>();
  kernels.nestAny().addPass(createPkGpuLowerControlFlow());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  OpPassManager &eachFunction = kernels.nestAny();
  // NVVM ops that have no intrinsic (wgmma.mma_async, the try_wait loop,
  // predicated forms) become inline PTX.
  eachFunction.addPass(createConvertNVVMToLLVMPass());
  // Math ops libdevice does not cover (math.trunc) become LLVM
  // intrinsics.
  eachFunction.addPass(createConvertMathToLLVMPass());
  eachFunction.addPass(createCanonicalizerPass());
  eachFunction.addPass(createCSEPass());
  eachFunction.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createPkGpuKernelAbi());
  kernels.addPass(createPkGpuFloatSemantics());
}

void buildCudaPipeline(OpPassManager &pm, unsigned defaultNumWarps, bool wgmma) {
  buildOutlineStage(pm, defaultNumWarps, wgmma);
  buildLayoutStage(pm);
  buildDistributeStage(pm);
  buildNvvmStage(pm);
}

namespace {

struct OutlineOptions : PassPipelineOptions<OutlineOptions> {
  Option<unsigned> defaultNumWarps{*this, "default-num-warps",
                                   llvm::cl::desc("warps per CTA when compiler_params do not say"),
                                   llvm::cl::init(kDefaultNumWarps)};
  Option<bool> wgmma{*this, "wgmma",
                     llvm::cl::desc("put dots on wgmma (the sm_90a targets do)"),
                     llvm::cl::init(false)};
};

} // namespace

void registerCudaPipelines() {
  PassPipelineRegistration<OutlineOptions>(
      "pk-cuda-outline-stage", "CUDA stage 01: outline pallas_calls into kernels",
      [](OpPassManager &pm, const OutlineOptions &o) {
        buildOutlineStage(pm, o.defaultNumWarps, o.wgmma);
      });
  PassPipelineRegistration<>("pk-cuda-layout-stage",
                             "CUDA stage 02: a distributed layout for every block value",
                             [](OpPassManager &pm) { buildLayoutStage(pm); });
  PassPipelineRegistration<>("pk-cuda-distribute-stage",
                             "CUDA stage 03: per-thread code, Hopper ops lowered to NVVM",
                             [](OpPassManager &pm) { buildDistributeStage(pm); });
  PassPipelineRegistration<>("pk-cuda-nvvm-stage",
                             "CUDA stage 04: the LLVM and NVVM dialects, kernel ABI",
                             [](OpPassManager &pm) { buildNvvmStage(pm); });
  PassPipelineRegistration<OutlineOptions>(
      "pk-cuda-pipeline", "CUDA stages 01 to 04, from pk IR to the LLVM and NVVM dialects",
      [](OpPassManager &pm, const OutlineOptions &o) {
        buildCudaPipeline(pm, o.defaultNumWarps, o.wgmma);
      });
}

} // namespace pk::gpu
