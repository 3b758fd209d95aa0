//===- MeshRuntime.h - Running Mosaic GPU kernels: threads and sync -*- C++ -*-===//
//
// A pk.mesh_kernel runs its body once per Pallas thread of every CTA. The
// threads of a cluster (of the whole grid, when the kernel synchronizes
// CTAs with semaphores) run concurrently enough for producer / consumer
// protocols: each is an OS thread, but a Scheduler lets exactly one run at
// a time and switches only when the running one must wait (a barrier
// phase, a semaphore, a pipeline slot): pk::Cooperative
// (support/Cooperative.h). Execution is therefore deterministic, and when
// every unfinished thread waits the run stops with a deadlock error at a
// waiting op instead of hanging.
//
// Barriers follow JAX's GPU interpret mode: a thread waits for exactly the
// phase after the last one it waited for; a barrier must not complete
// again before some thread waited for its previous completion. Unlike
// JAX, phases nobody waits for once a thread has stopped waiting are fine
// when the scope ends, as on the hardware (a pipeline's producer does not
// wait for the consumers' last releases). Async copies and wgmma complete when they are issued
// (their barrier arrival is immediate), which every valid program
// tolerates. Cluster launch control cancels clusters not yet started
// (MeshRun::cancelled).
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_MESHRUNTIME_H
#define PK_INTERPRETER_MESHRUNTIME_H

#include "interpreter/Evaluator.h"
#include "ir/PkDialect.h"
#include "support/Cooperative.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pk::interp {

/// One mbarrier.
struct Barrier {
  int64_t arrivalsNeeded = 1;
  int64_t arrivals = 0;
  int64_t phase = 0;                 ///< phases completed
  bool observed = true;              ///< some thread waited since the last completion
  std::map<int64_t, int64_t> waited; ///< phases each thread (by id) waited for
};

struct BarrierArray {
  std::vector<Barrier> barriers;
  pk::BarrierType type;
};

struct SemaphoreArray {
  std::vector<int64_t> counts;
};

/// What one pk.run_scoped execution allocated, per block argument.
struct Allocation {
  struct Slot {
    std::unique_ptr<RefBuffer> ref;
    std::unique_ptr<BarrierArray> barriers;
    std::unique_ptr<SemaphoreArray> semaphores;
  };
  std::vector<Slot> slots;
  int64_t releases = 0; ///< threads that left the scope
};

/// A hardware named barrier of a CTA (bar.sync / bar.arrive id, count):
/// it completes when `count` threads have arrived, then starts over.
struct NamedBarrier {
  int64_t arrived = 0;   ///< threads arrived in the current round
  int64_t count = 0;     ///< the thread count of the current round
  int64_t completed = 0; ///< rounds completed
};

struct PipelineState;
struct MeshRun;

/// One CTA of the kernel.
struct CtaState {
  std::vector<int64_t> gridIndex, clusterIndex;
  /// Allocations every thread of the CTA shares, by (op, occurrence).
  std::map<std::pair<mlir::Operation *, int64_t>, std::shared_ptr<Allocation>> collective;
  /// Warp-specialized pipelines in progress, by (op, occurrence).
  std::map<std::pair<mlir::Operation *, int64_t>, std::shared_ptr<PipelineState>> pipelines;
  /// Named barriers (pk.named_barrier), by id.
  std::map<int64_t, NamedBarrier> namedBarriers;
  /// plgpu.try_cluster_cancel requests this CTA made so far.
  int64_t cancelRequests = 0;
};

/// One Pallas thread.
struct ThreadContext {
  MeshRun *run = nullptr;
  CtaState *cta = nullptr;
  int64_t threadIndex = 0; ///< in its CTA
  int64_t id = 0;          ///< unique in the run
  /// In a pk.warp_map: its axis name and this warp's index (0-3) in the
  /// Pallas thread; each warp is a thread of its own here.
  std::string warpAxis;
  int64_t warpIndex = 0;
  /// The ids its warps have in every pk.warp_map it runs (each warp keeps
  /// its barrier phases from one to the next, as on the GPU).
  std::vector<int64_t> warpIds;
  /// How many times this thread entered each collective op so far.
  std::map<mlir::Operation *, int64_t> occurrences;
};

/// A running pk.mesh_kernel.
struct MeshRun {
  pk::MeshKernelOp op;
  pk::Cooperative *scheduler = nullptr;
  std::vector<std::unique_ptr<CtaState>> ctas; ///< every CTA, row-major (grid, then cluster)
  std::map<mlir::Operation *, std::unique_ptr<SemaphoreArray>> globals; ///< pl.get_global
  int64_t nextThreadId = 0; ///< ThreadContext::id of the next thread (or warp)
  /// Cluster launch control. The CTAs run one cluster (group) at a time,
  /// in order; a try_cluster_cancel cancels the next group that has not
  /// started, which then never runs: its work is the canceller's. The
  /// answer to request k of the running group is decided by the group's
  /// first CTA to make it, and shared by the others (the hardware
  /// multicasts one answer to the cluster).
  std::vector<bool> cancelled;              ///< per group
  size_t nextGroup = 0;                     ///< the first group not started or cancelled
  bool groupsRunTogether = false;           ///< the whole grid runs at once: nothing to cancel
  std::map<int64_t, int64_t> cancelAnswers; ///< request k -> cancelled group, or -1
  /// The CTA at grid x cluster coordinates.
  CtaState *ctaAt(const std::vector<int64_t> &grid, const std::vector<int64_t> &cluster);
};

/// Runs a pk.mesh_kernel on its inputs; returns its outputs.
std::vector<TensorPtr> runMeshKernel(pk::MeshKernelOp op, const std::vector<TensorPtr> &inputs,
                                     const std::vector<int64_t> &symbols, uint64_t maxSteps);

/// "line 12" for an op's location, for messages.
std::string lineOf(mlir::Location loc);

} // namespace pk::interp

#endif // PK_INTERPRETER_MESHRUNTIME_H
