//===- Pipeline.h - The CUDA backend's stages as pass pipelines -*- C++ -*-===//
//
// The stages from pk IR to the LLVM and NVVM dialects, each a pass
// pipeline. CudaBackend runs them one after another (dumping each stage's
// IR for --dump-dir); pk-opt has them registered under the names below,
// so that `pk-opt --pk-cuda-distribute-stage file.mlir` replays one stage
// from a dump of the one before, and `pk-opt --pk-cuda-pipeline` the
// whole way from pk IR:
//
//   pk-cuda-outline-stage      -> 01-outlined
//   pk-cuda-layout-stage       -> 02-layouts
//   pk-cuda-distribute-stage   -> 03-gpu     (what the simulator runs)
//   pk-cuda-nvvm-stage         -> 04-nvvm    (LLVM + NVVM dialects)
//
// After 04 come LLVM's NVPTX back end and ptxas (CudaBackend.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_PIPELINE_H
#define PK_BACKENDS_CUDA_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace pk::gpu {

/// Warps per CTA when a kernel's compiler_params do not say.
constexpr unsigned kDefaultNumWarps = 4;

/// 01: pallas_calls outlined into gpu.func kernels, arith made defined;
/// with `wgmma` (sm_90a), their dots put on the warpgroup tensor cores.
void buildOutlineStage(mlir::OpPassManager &pm, unsigned defaultNumWarps = kDefaultNumWarps,
                       bool wgmma = false);
/// 02: a distributed layout for every block value.
void buildLayoutStage(mlir::OpPassManager &pm);
/// 03: per-thread code; the asynchronous Hopper ops (pkgpu.tma_*,
/// pkgpu.wgmma*) lowered to NVVM, so the stage holds what the simulator
/// and MLIR's convert-gpu-to-nvvm take.
void buildDistributeStage(mlir::OpPassManager &pm);
/// 04: MLIR's lowering to the LLVM and NVVM dialects, inside each
/// gpu.module, and the kernels' parameter ABI (tensor maps by value).
void buildNvvmStage(mlir::OpPassManager &pm);
/// 01 to 04 in order.
void buildCudaPipeline(mlir::OpPassManager &pm, unsigned defaultNumWarps = kDefaultNumWarps,
                       bool wgmma = false);

/// Registers the pipelines above with pk-opt's pass registry.
void registerCudaPipelines();

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_PIPELINE_H
