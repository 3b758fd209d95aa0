//===- OutlineMesh.h - Mosaic GPU kernels -> gpu.func -----------*- C++ -*-===//
//
// The outline stage's half for `pk.mesh_kernel`: one CTA per (cluster,
// CTA in cluster), one warpgroup per Pallas thread. The kernel's Refs are
// whole arrays in global memory; mesh axes become block and thread
// indices; every `pk.run_scoped` is inlined with its allocations placed
// in shared memory like a stack (scratch buffers as `pkgpu.shared_ref`,
// barriers as `pkgpu.barrier_alloc`); the copies TMA carries
// (MeshTma.h) get tensor map parameters and are marked with the
// attributes below for pk-gpu-distribute.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_OUTLINEMESH_H
#define PK_BACKENDS_CUDA_OUTLINEMESH_H

#include "backends/cuda/LaunchPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace pk::gpu {

/// On a copy TMA carries: the kernel parameter of its tensor map (i64).
constexpr const char *kTmaParamAttr = "pkgpu.tma_param";
/// ... its boxes: per box, its start in each array dimension from the
/// window's start, then its byte offset in the shared window (an array of
/// array<i64>).
constexpr const char *kTmaBoxesAttr = "pkgpu.tma_boxes";
/// ... the bytes the whole copy moves (i64).
constexpr const char *kTmaBytesAttr = "pkgpu.tma_bytes";
/// ... a multicast copy (MeshTmaCopy::Multicast): the dimension its
/// boxes are sliced along, a slice's extent there and its shared memory
/// bytes, then the cluster positions of its collective axes (array<i64>).
constexpr const char *kTmaMulticastAttr = "pkgpu.tma_multicast";
/// On a kernel whose CTAs reach into each other's shared memory (TMA
/// multicast, plgpu.ClusterBarrier): the cluster's shape and axis names
/// (array<i64>, array of strings). Such a kernel synchronizes its cluster
/// after initializing barriers, which peers may then signal, and before
/// it exits, which ends its shared memory.
constexpr const char *kClusterShapeAttr = "pkgpu.cluster_shape";
constexpr const char *kClusterNamesAttr = "pkgpu.cluster_names";
/// On a kernel (unit) whose CTAs wait for one another through global
/// memory (pl.get_global's semaphores): they must all be running at once,
/// on a GPU (the program's job, as in Mosaic GPU) and in the simulator,
/// which then runs the whole grid together.
constexpr const char *kCtasWaitForEachOtherAttr = "pkgpu.ctas_wait_for_each_other";
/// On a kernel (unit) that has tensor memory (plgpu.TMEM, sm_100a): its
/// barriers with orders_tensor_core order the tensor core's work with
/// tcgen05.fence around thread synchronization.
constexpr const char *kTensorMemoryAttr = "pkgpu.tensor_memory";
/// On a pk.query_cluster_cancel in a kernel: the mesh's grid (array<i64>)
/// and CTAs per cluster (i64), to turn a CTA id into grid indices.
constexpr const char *kMeshGridAttr = "pkgpu.mesh_grid";
constexpr const char *kMeshClusterSizeAttr = "pkgpu.mesh_cluster_size";
/// On a kernel: Pallas threads (warpgroups) per CTA (i64).
constexpr const char *kWarpgroupsAttr = "pkgpu.warpgroups";
/// On a kernel (unit): its floats behave as in the compiler JAX hands it
/// to (pk-gpu-float-semantics). JAX's Pallas on GPU compiles through
/// Triton, which links libdevice in its flush-to-zero mode and fuses
/// multiplies and adds into FMAs; Mosaic GPU does neither, but its
/// `approx_math` computes exp2 with `ex2.approx.ftz`, which libdevice's
/// flush-to-zero mode makes of it.
constexpr const char *kFlushDenormalsAttr = "pkgpu.flush_denormals";
constexpr const char *kContractFpAttr = "pkgpu.contract_fp";
/// On a kernel (unit): f32 division is Triton's `div.full.f32` (within 2
/// ulp) rather than IEEE's correctly rounded `div.rn.f32`.
constexpr const char *kFullRangeDivideAttr = "pkgpu.div_full";

/// The gpu.func both outliners start from (Outline.cpp): one global
/// pointer per operand (inputs, then outputs), one i64 per symbol, then
/// `extraParams`; the kernel attribute, the known block size, the warps
/// that hold a block value (`pkgpu.num_warps`) and the parameters that are
/// one buffer (`pkgpu.aliases`, from (input, output) alias pairs).
mlir::gpu::GPUFuncOp createKernelFunc(mlir::OpBuilder &b, mlir::Location loc, const LaunchPlan &plan,
                                      size_t numInputs, size_t numOutputs, unsigned numSymbols,
                                      llvm::ArrayRef<int64_t> aliases,
                                      llvm::ArrayRef<mlir::Type> extraParams, unsigned numWarps);

/// Marks `func` with the float semantics of the compiler JAX hands its
/// kernel to (kFlushDenormalsAttr, kContractFpAttr, kFullRangeDivideAttr):
/// Triton's for a pallas_call, unless its `compilerParams` are Mosaic
/// GPU's; Mosaic GPU's for those and for a plgpu.kernel (`meshKernel`),
/// flushing only with `approx_math`.
void setFloatSemantics(mlir::gpu::GPUFuncOp func, mlir::DictionaryAttr compilerParams,
                       bool meshKernel);

/// Rewrites every plgpu.emit_pipeline (pk.pipeline) of a Mosaic GPU
/// kernel into scoped slots, barriers, copies and a loop
/// (ExpandPipelines.cpp). Runs before the outline stage plans TMA copies,
/// as the first thing pk-gpu-outline does and before the host program is
/// built.
mlir::LogicalResult expandPipelines(mlir::ModuleOp module);

/// Gives each Mosaic GPU kernel that calls pl.get_global an input of
/// zeroed i32 counters (made by a generated kernel launched just before
/// it) and views its semaphores in it (GlobalSemaphores.cpp). Runs with
/// expandPipelines, before launches are planned; does nothing the second
/// time.
void materializeGlobalSemaphores(mlir::ModuleOp module);

/// Turns the kernel's wgmma accumulators (pkgpu.accumulator Refs) into
/// SSA values (PromoteAccumulators.cpp); errors at the user's line for
/// uses it cannot follow.
mlir::LogicalResult promoteAccumulators(mlir::gpu::GPUFuncOp func);

/// Builds the kernel of `kernel` at `b`'s insertion point (in a
/// gpu.module); null after an error.
mlir::gpu::GPUFuncOp outlineMeshKernel(mlir::OpBuilder &b, pk::MeshKernelOp kernel,
                                       const LaunchPlan &plan);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_OUTLINEMESH_H
