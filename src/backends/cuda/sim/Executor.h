//===- Executor.h - One CTA of a kernel, in lockstep -------------*- C++ -*-===//
//
// Runs a decoded kernel for one CTA: every thread of the CTA executes each
// instruction before the next one starts, and each thread has its own
// value in every slot. Divergence is modelled with active masks, as a GPU
// does: both sides of a divergent scf.if run, each under the threads that
// took it; an scf.while keeps running the threads whose condition holds.
// What a GPU leaves undefined is an error here:
//
//  - gpu.barrier reached by only some threads of the CTA;
//  - scf.for whose bounds or step differ between the active threads;
//  - gpu.shuffle with a lane of its member mask inactive, mma.sync with
//    a lane of its warp inactive;
//  - integer division by zero or signed overflow in a division (undefined
//    behaviour in LLVM);
//  - memory accesses out of bounds, misaligned, or racing (Memory.h);
//  - mbarriers used before mbarrier.init, waits that nothing can satisfy
//    (a deadlock), TMA copies outside their tensor map's rules.
//
// The warpgroups of a Mosaic GPU kernel (Kernel::warpgroups > 1) run as
// cooperative workers (support/Cooperative.h), each in lockstep by itself: a CTA
// barrier waits for every warpgroup, a named barrier (bar.sync id, n)
// until n threads have arrived (a warpgroup's own, n = 128, at once), an
// mbarrier wait until the phase completes. TMA
// copies happen when issued and complete their transaction bytes at
// once. Race detection counts a completed mbarrier phase or wait, and a
// named barrier round several warpgroups reach, as a synchronization of
// the whole CTA; a warpgroup's own barrier orders only its threads
// (coarser than the hardware: it may miss races, it does not invent them).
//
// Poison that LLVM would propagate (shifts by the width or more,
// out-of-range float-to-int conversions, broken nsw/nuw/exact promises)
// yields a defined but deliberately unhelpful value and is counted.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_EXECUTOR_H
#define PK_BACKENDS_CUDA_SIM_EXECUTOR_H

#include "backends/cuda/sim/Kernel.h"
#include "backends/cuda/sim/Memory.h"
#include "runtime/TensorMap.h"
#include "support/Cooperative.h"

#include <array>
#include <map>

#include <stdexcept>
#include <string>
#include <vector>

namespace pk::sim {

/// A simulation error: the kernel did something a GPU leaves undefined
/// (or the simulator cannot model). The message names the kernel, the
/// CTA, the thread and the op.
class SimError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What one launch passes to each of its CTAs.
struct LaunchState {
  uint64_t grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  /// Global accesses of different CTAs in one launch race. A semaphore
  /// wait orders everything before it before everything after (the
  /// simulator does not follow which CTAs a semaphore links): it moves
  /// the launch to a new number from `launchCounter`.
  mutable uint32_t launch = 0;
  uint32_t *launchCounter = nullptr;
  std::vector<uint64_t> params; ///< one word per kernel parameter
  /// The launch's tensor maps; a tensor map parameter's word is its index
  /// here. `address` is a pointer word of the simulator's memory.
  std::vector<rt::TensorMapDesc> tensorMaps;
  /// The allocations holding the kernel's constant tables
  /// (Kernel::constantTables), in order.
  std::vector<uint32_t> constantTables;
};

/// Counters over a whole simulation.
struct Counters {
  uint64_t ctas = 0;
  uint64_t instructions = 0;       ///< executed per CTA (once for all threads)
  uint64_t threadInstructions = 0; ///< summed over the active threads
  uint64_t poison = 0;             ///< poison values produced
  std::string firstPoison;         ///< where the first one came from
  std::string firstUninitialized;  ///< where memory was first read before written
  uint64_t maxInstructions = 4'000'000'000ull; ///< a bound for kernels that do not end
};

class Executor;

/// The CTAs of one cluster, which run together (Device.cpp): each one's
/// executor by cluster rank, and the state of barrier.cluster, which
/// waits for every thread of the cluster that has not exited.
struct ClusterRun {
  std::vector<Executor *> ctas;
  uint64_t liveThreads = 0; ///< threads not exited
  uint64_t arrived = 0;     ///< arrivals in the current phase
  uint64_t generation = 0;  ///< phases completed
  /// Completes the phase when every live thread has arrived.
  void completeIfAllArrived();
};

class Executor {
public:
  Executor(const Kernel &kernel, Memory &memory, Counters &counters, uint32_t &nextInterval);

  /// Runs CTA (x, y, z), whose linear index in the launch is `linear`, in
  /// three steps, so that the CTAs of a cluster run together (Device.cpp):
  /// start it in shared memory allocation `shared`; run each of its
  /// workers (warpgroups, or all its threads) under the cluster's
  /// scheduler (none: a lone CTA of one worker, in lockstep); end it.
  void beginCta(const LaunchState &launch, const uint64_t cta[3], uint32_t linear, uint32_t shared,
                ClusterRun &cluster, pk::Cooperative *scheduler);
  unsigned workerCount() const { return k.warpgroups > 1 ? k.warpgroups : 1; }
  void runWorker(unsigned worker);
  void endCta();
  /// "kernel 'k', CTA (x, y, z)[, thread t ...]" for messages.
  std::string where(int thread) const;

  /// The active threads, in increasing order.
  using Mask = std::vector<uint16_t>;

private:
  uint64_t *reg(int32_t slot) { return regs.data() + k.slots[slot].offset; }
  unsigned widthOf(int32_t slot) const { return k.slots[slot].width; }

  void runBlock(uint32_t block, const Mask &mask);
  void exec(const Instr &instr, const Mask &mask);
  /// Copies slot values `from[i]` -> `to[i]` for the masked threads, all
  /// reads before any write (a yield may permute loop arguments).
  void transfer(const std::vector<int32_t> &from, const std::vector<int32_t> &to, const Mask &mask);
  void transfer(const std::vector<int32_t> &from, const llvm::SmallVectorImpl<int32_t> &to,
                const Mask &mask);

  // Families of instructions (EvalArith.cpp, EvalVector.cpp, Executor.cpp).
  void evalInteger(const Instr &instr, const Mask &mask);
  void evalFloat(const Instr &instr, const Mask &mask);
  void evalCompareSelectCast(const Instr &instr, const Mask &mask);
  void evalVector(const Instr &instr, const Mask &mask);
  void evalThreads(const Instr &instr, const Mask &mask);
  void evalPrintf(const Instr &instr, const Mask &mask);
  void evalMemory(const Instr &instr, const Mask &mask);
  void evalAtomic(const Instr &instr, const Mask &mask);
  void evalSemaphore(const Instr &instr, const Mask &mask);
  void evalMma(const Instr &instr, const Mask &mask);
  void evalAsync(const Instr &instr, const Mask &mask);
  void evalWgmma(const Instr &instr, const Mask &mask);
  void evalTensorMemory(const Instr &instr, const Mask &mask);
  /// A CTA barrier (gpu.barrier, bar.sync 0) reached by `mask`.
  void ctaBarrier(const Instr &instr, const Mask &mask);
  /// TMA: one box between global memory and shared memory; `operands`
  /// are the instruction's operand values for `thread`.
  void tmaCopy(const Instr &instr, uint16_t thread, bool toShared,
               const std::vector<uint64_t> &operands);
  /// The TMA stores still pending when a CTA ends: done then.
  void finishTmaStores();
  void evalFor(const Instr &instr, const Mask &mask);
  void evalIf(const Instr &instr, const Mask &mask);
  void evalWhile(const Instr &instr, const Mask &mask);

  /// Throws a SimError about `instr` in `thread` (-1: the CTA).
  [[noreturn]] void fail(const Instr &instr, int thread, const std::string &message) const;
  /// Records a poison value made by `instr` in `thread`.
  void poison(const Instr &instr, unsigned thread, const char *what);
  std::string describeViolation(const Violation &v, bool isWrite, unsigned size) const;

  const Kernel &k;
  Memory &memory;
  Counters &counters;
  uint32_t &nextInterval;
  std::vector<uint64_t> regs;
  Mask all;
  // The CTA being run, its shared memory and its cluster.
  const LaunchState *launch = nullptr;
  uint32_t shared = 0; ///< the dynamic shared memory allocation, 0 if none
  ClusterRun *cluster = nullptr;
  /// Per thread: the barrier.cluster phase it arrived in, -1 if none.
  std::vector<int64_t> clusterArrival;
  /// The CTA of the cluster whose shared memory `pointer` points into.
  Executor *ownerOf(const Instr &instr, uint16_t thread, uint64_t pointer);
  void evalCluster(const Instr &instr, const Mask &mask);
  uint64_t cta[3] = {0, 0, 0};
  uint32_t linearCta = 0;
  uint32_t interval = 0;
  uint32_t epoch = 0;
  /// A synchronization of the CTA's warpgroups (an mbarrier phase, a CTA
  /// barrier, a named barrier several of them reach): everything before
  /// it is ordered before everything after.
  void synchronizeCta() { interval = epoch = nextInterval++; }
  /// A synchronization within the running warpgroup (its own barrier).
  void synchronizeWarpgroup() { interval = nextInterval++; }
  Accessor accessor(uint16_t thread, uint32_t op) const {
    return {interval,
            launch->launch,
            linearCta,
            thread,
            op,
            epoch,
            static_cast<uint16_t>(k.warpgroups > 1 ? 128 : 0)};
  }

  /// An mbarrier of the running CTA (keyed by its pointer word).
  struct Mbarrier {
    uint32_t expected = 0, pending = 0;
    int64_t transactions = 0; ///< bytes announced and not yet arrived
    int64_t fromPeers = 0;    ///< of those, bytes other CTAs' multicasts brought this phase
    uint64_t phase = 0;       ///< phases completed
  };
  std::map<uint64_t, Mbarrier> mbarriers;
  /// The CTA's named barriers (bar.sync / bar.arrive id, count): threads
  /// arrived in the current round, its count, rounds completed.
  struct NamedBarrierState {
    uint64_t arrived = 0, count = 0, completed = 0;
    uint32_t workers = 0; ///< the warpgroups that arrived this round, a bit each
  };
  std::array<NamedBarrierState, 16> namedBarriers;
  void evalNamedBarrier(const Instr &instr, const Mask &mask);
  /// Asynchronous operations in commit groups (cp.async, bulk copies,
  /// wgmma): the groups committed, oldest first, and the operations not
  /// committed yet. A wait_group retires every committed group but the
  /// `pending` most recent (oldest first, `retire` called on each).
  template <typename T> struct AsyncGroups {
    std::vector<std::vector<T>> committed;
    std::vector<T> open;
    void commit() {
      committed.push_back(std::move(open));
      open.clear();
    }
    template <typename Retire> void retireAllBut(int64_t pending, Retire retire) {
      size_t done = committed.size() > static_cast<size_t>(pending)
                        ? committed.size() - static_cast<size_t>(pending)
                        : 0;
      for (size_t g = 0; g < done; ++g)
        retire(committed[g]);
      committed.erase(committed.begin(), committed.begin() + static_cast<std::ptrdiff_t>(done));
    }
  };
  /// Each thread's cp.async copies.
  struct PendingCopy {
    uint64_t shared = 0, global = 0;
    unsigned bytes = 0;
    unsigned sourceBytes = 0; ///< read from global; the rest is zero-filled
    uint32_t instr = 0;
  };
  std::vector<AsyncGroups<PendingCopy>> cpAsync;
  /// Each thread's TMA stores, with the operand values they were issued
  /// with. A store reads its shared-memory source when its group is
  /// waited for (or the CTA ends), the latest the hardware may: a program
  /// that rewrites the source before waiting stores the new values, and
  /// its results show it.
  struct PendingStore {
    const Instr *instr = nullptr;
    std::vector<uint64_t> operands;
  };
  std::vector<AsyncGroups<PendingStore>> tmaStores;
  /// Runs `thread`'s TMA stores of every committed group but the
  /// `pending` most recent.
  void retireTmaStores(uint16_t thread, int64_t pending);
  /// Each warpgroup's wgmmas in flight: the shared memory they read
  /// (address, the 2 or 4 bytes read).
  struct WgmmaRead {
    uint64_t address = 0;
    uint32_t value = 0;
    uint8_t bytes = 2;
  };
  std::vector<AsyncGroups<WgmmaRead>> wgmmas;
  /// The CTA's tensor memory (Blackwell): 128 lanes of 512 32-bit
  /// columns, lane-major; empty until tcgen05.alloc.
  std::vector<uint32_t> tensorMemory;
  unsigned allocatedColumns = 0;
  /// wgmma.commit_group and wgmma.wait_group of the warpgroups in `mask`.
  void evalWgmmaGroups(const Instr &instr, const Mask &mask);
  /// Lands `copy` of `thread`: global memory read, shared memory written.
  void landCopy(const PendingCopy &copy, uint16_t thread);
  Mbarrier &mbarrierAt(const Instr &instr, uint16_t thread, uint64_t pointer);
  /// The shared memory word `word` of this CTA at the same offset in
  /// `peer`'s (where a multicast lands).
  uint64_t atPeer(const Executor *peer, uint64_t word) const {
    return peer == this ? word : makePointer(peer->shared, pointerOffset(word));
  }
  void completeIfDone(Mbarrier &m);
  /// Several warpgroups: their scheduler, and the CTA barrier's state.
  pk::Cooperative *workers = nullptr;
  unsigned ctaBarrierArrived = 0;
  uint64_t ctaBarrierGeneration = 0;
};

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_EXECUTOR_H
