//===- Async.h - Builders for Hopper's asynchronous machinery ---*- C++ -*-===//
//
// What a lowering emits to use Hopper's asynchronous units from per-thread
// (stage 03) code, as NVVM ops: mbarriers, TMA copies and their bulk
// groups, proxy fences, warpgroup matrix multiplies, warpgroup ids and
// register reallocation. Each function emits at the builder's insertion
// point and documents which threads must execute it; the PTX ISA section
// it follows is named. TMA and wgmma go through the pkgpu ops of
// PkGpuAsyncOps.td (lowered by pk-gpu-lower-async with the patterns
// below); the rest are single NVVM ops.
//
// Shared memory operands are `!llvm.ptr<3>` values (Emitter::sharedPointer
// gives them); tensor maps are the kernel parameters a kernel lists in its
// `pkgpu.tensor_map_params` attribute (`!llvm.ptr`, generic: the address
// of the by-value CUtensorMap in the parameter space).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_ASYNC_H
#define PK_BACKENDS_CUDA_ASYNC_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace pk::gpu {

/// The kernel attribute listing the parameters that are tensor maps
/// (array<i64>): pk-gpu-kernel-abi passes them by value, the simulator
/// binds them to the launch's tensor-map arguments.
constexpr const char *kTensorMapParamsAttr = "pkgpu.tensor_map_params";
/// Of a pallas_call kernel whose operand windows TMA copies
/// (pk-gpu-prefetch-operands): per entry of kTensorMapParamsAttr, the
/// tensor map it is (array<i64: operand parameter, swizzle bytes,
/// optional (1: encoded only for some sizes), box outermost first...>), a
/// box over the whole operand, which the host program describes in the
/// manifest (HostProgram.cpp).
constexpr const char *kOperandTensorMapsAttr = "pkgpu.operand_tensor_maps";

namespace async {

// ---- mbarriers (PTX ISA, "Parallel Synchronization and Communication
// Instructions: mbarrier"). An mbarrier is 8 bytes of shared memory,
// 8-byte aligned.

/// Initializes the mbarrier at `barrier` for `count` (i32) arrivals per
/// phase, phase 0. One thread, before any other use; then
/// fenceMbarrierInit and a CTA barrier (or cluster barrier) publish it.
void mbarrierInit(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier, mlir::Value count);
/// Makes mbarrier initializations visible to the async proxy and the
/// cluster (fence.mbarrier_init.release.cluster).
void fenceMbarrierInit(mlir::OpBuilder &b, mlir::Location loc);
/// One arrival of the executing thread on the current phase.
void mbarrierArrive(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier);
/// Adds `bytes` (i32) to the current phase's expected transactions, then
/// arrives: how the thread that issues TMA loads announces their bytes.
void mbarrierArriveExpectTx(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                            mlir::Value bytes);
/// Blocks until the phase of parity `parity` (i32, 0 or 1) has completed:
/// phases alternate parity, so a loop over stages waits with parity
/// (iteration / stages) % 2. Every thread that reads what the phase
/// guards waits itself.
void mbarrierWait(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier, mlir::Value parity);
/// Whether the phase of `parity` (i32, 0 or 1) of the mbarrier has
/// completed, without waiting (i1; mbarrier.test_wait.parity).
mlir::Value mbarrierTest(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                         mlir::Value parity);

// ---- Clusters (PTX ISA, "barrier.cluster", "mapa"): the CTAs of a
// cluster see each other's shared memory through the shared::cluster
// window (address space 7).

/// Synchronizes the whole cluster: every thread of every warp of its CTAs
/// arrives (barrier.cluster.arrive.aligned, release semantics, or none
/// with `relaxedArrival`: ptxas fences every global access before a
/// release) and waits for every non-exited thread of the cluster
/// (barrier.cluster.wait.aligned, acquire semantics).
void clusterSync(mlir::OpBuilder &b, mlir::Location loc, bool relaxedArrival = false);
/// The address of `shared` (!llvm.ptr<3>) in the CTA of cluster rank
/// `rank` (i32): the same offset in its shared memory, as !llvm.ptr<7>.
mlir::Value mapaShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value shared,
                       mlir::Value rank);
/// One arrival at the mbarrier at `barrier` (!llvm.ptr<7>, possibly in
/// another CTA of the cluster), releasing at CTA scope: the caller has
/// finished its reads of what the barrier guards (Async.cpp says why).
void mbarrierArriveCluster(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier);

// ---- Bulk async groups (PTX ISA, "cp.async.bulk.commit_group",
// "cp.async.bulk.wait_group"): TMA stores of the issuing thread.

/// Closes the thread's open bulk group (its TMA stores since the last
/// commit).
void bulkCommitGroup(mlir::OpBuilder &b, mlir::Location loc);
/// Waits until at most `pending` of the thread's committed bulk groups are
/// unfinished; with `readOnly`, only until they have read their sources
/// (the shared memory may be reused; the global writes may still be in
/// flight). A kernel waits for all (pending 0, not read-only) before its
/// results are needed by the host.
void bulkWaitGroup(mlir::OpBuilder &b, mlir::Location loc, unsigned pending, bool readOnly);

// ---- Proxies (PTX ISA, "Memory Consistency Model: Proxies").

/// fence.proxy.async.shared::cta: orders the thread's earlier ordinary
/// (generic proxy) shared memory writes before later async proxy reads of
/// them (TMA stores, wgmma operands). Every writing thread fences, then
/// the CTA synchronizes before the async operation is issued.
void fenceAsyncShared(mlir::OpBuilder &b, mlir::Location loc);

/// bar.sync id, threads (barrier.sync): the executing warps arrive at
/// named barrier `id` and wait until `threads` threads have; with `arrive`
/// (bar.arrive) they arrive without waiting. `id` and `threads` are i32.
void namedBarrier(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id, mlir::Value threads,
                  bool arrive);

// ---- Warpgroups and registers.

/// griddepcontrol.wait, or with `launchDependents`
/// griddepcontrol.launch_dependents (programmatic dependent launch).
void gridDependency(mlir::OpBuilder &b, mlir::Location loc, bool launchDependents);

/// The index of the executing thread's warpgroup (4 consecutive warps) in
/// the CTA, as an i32 the compiler knows is uniform across the warp
/// (shfl.sync of lane 0's value, as CUTLASS and Mosaic GPU do).
mlir::Value warpgroupId(mlir::OpBuilder &b, mlir::Location loc);
/// True in one lane of the executing warp (elect.sync over the full warp).
mlir::Value electOne(mlir::OpBuilder &b, mlir::Location loc);
/// setmaxnreg.{inc,dec}.sync.aligned.u32 `count`: the warpgroup's threads
/// give up or claim registers (24 to 256, a multiple of 8). Every thread
/// of the warpgroup executes it; ptxas honors it only in kernels with a
/// register cap at entry (setmaxnreg's documentation).
void setMaxRegisters(mlir::OpBuilder &b, mlir::Location loc, unsigned count, bool increase);
/// The executing CTA's rank in its cluster (i32).
mlir::Value clusterCtaRank(mlir::OpBuilder &b, mlir::Location loc);

// ---- Lowerings of the pkgpu async ops (pk-gpu-lower-async).

/// pkgpu.tma_load / pkgpu.tma_store -> nvvm.cp.async.bulk.tensor.*.
void populateTmaToNVVMPatterns(mlir::RewritePatternSet &patterns);
/// pkgpu.wgmma / pkgpu.wgmma_wait -> nvvm.wgmma.* (Wgmma.cpp).
void populateWgmmaToNVVMPatterns(mlir::RewritePatternSet &patterns);
/// The ops the patterns above produce, and that the pkgpu async ops are not.
void configureAsyncLoweringTarget(mlir::ConversionTarget &target);

} // namespace async
} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_ASYNC_H
