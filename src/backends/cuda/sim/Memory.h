//===- Memory.h - Checked global and shared memory --------------*- C++ -*-===//
//
// The simulated device's memory: allocations (global buffers the host
// program made, and one CTA's dynamic shared memory), each with a shadow
// byte per byte that catches what a GPU would do silently:
//
//  - an access outside its allocation, through a null or stale pointer,
//    into the wrong address space, or misaligned for its width;
//  - data races: a thread reading or writing a byte that another thread of
//    its CTA wrote (or, for a write, read) since the last barrier; and in
//    global memory, a CTA reading or writing a byte that another CTA of
//    the same launch wrote (or, for a write, read), since CTAs run in
//    parallel on a GPU; a store of the value already there is not
//    reported against another store (every order leaves the same memory:
//    CTAs that each store a result they all computed);
//  - atomics race with plain accesses (of other threads or CTAs) to the
//    same bytes, not with each other;
//  - reads of bytes nothing has written (uninitialized shared memory,
//    outputs and temporaries not yet written): counted and reported as
//    warnings, the bytes themselves hold a garbage pattern.
//
// Barrier intervals and launches are numbered globally, so a shadow entry
// from an earlier interval never matches the current one.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_MEMORY_H
#define PK_BACKENDS_CUDA_SIM_MEMORY_H

#include "backends/cuda/sim/Types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pk::sim {

enum class Space : uint8_t { Global = 1, Shared = 3 };

/// Who is accessing memory: a thread of a CTA in a barrier interval of a
/// launch, executing instruction `op` of its kernel.
struct Accessor {
  uint32_t interval = 0;
  uint32_t launch = 0;
  uint32_t cta = 0; ///< linear CTA index within the launch
  uint16_t thread = 0;
  uint32_t op = 0;
  /// Accesses of different warpgroups (workers) of a CTA are ordered only
  /// by a synchronization of several of them (`epoch` changes); those of
  /// one warpgroup also by its own barriers (`interval` changes).
  uint32_t epoch = 0;
  uint16_t workerThreads = 0; ///< threads per warpgroup, 0: one worker
  unsigned workerOf(uint16_t t) const { return workerThreads ? t / workerThreads : 0; }
};

/// What went wrong with an access.
struct Violation {
  enum class Kind { None, BadPointer, WrongSpace, OutOfBounds, Misaligned, Race } kind = Kind::None;
  int64_t offset = 0;   ///< byte offset in the allocation
  uint32_t allocation = 0;
  // Races: the conflicting access.
  bool otherWasWrite = false;
  bool otherWasAtomic = false;
  bool acrossCtas = false;
  uint32_t otherThread = 0; ///< kManyThreads when several
  uint32_t otherCta = 0;
  uint32_t otherOp = 0;
};

constexpr uint16_t kManyThreads = 0xffff;
constexpr uint32_t kManyCtas = 0xffffffff;

struct Allocation {
  std::string name; ///< "param 0 (x)", "temporary 1", "shared memory"
  Space space = Space::Global;
  std::vector<uint8_t> bytes;
  bool freed = false;

  struct Shadow {
    uint32_t writeInterval = 0, readInterval = 0;
    uint32_t writeEpoch = 0, readEpoch = 0, atomicEpoch = 0;
    uint16_t readWorker = 0; ///< the readers' warpgroup, or kManyThreads
    uint32_t writeOp = 0, readOp = 0;
    uint16_t writer = 0, reader = 0;
    uint32_t writeLaunch = 0, writerCta = 0;
    uint32_t readLaunch = 0, readerCta = 0;
    // Atomics race with plain accesses of other threads, not each other.
    uint32_t atomicInterval = 0, atomicOp = 0;
    uint16_t atomicThread = 0;
    uint32_t atomicLaunch = 0, atomicCta = 0;
    bool initialized = false;
  };
  std::vector<Shadow> shadow;

  /// Base address alignment: 256 for cudaMalloc'd buffers, 16 for dynamic
  /// shared memory.
  unsigned baseAlignment() const { return space == Space::Global ? 256 : 16; }
};

/// Counts of uninitialized reads, with the first one's description.
struct UninitializedReads {
  uint64_t count = 0;
  uint32_t firstAllocation = 0;
  int64_t firstOffset = 0;
  uint32_t firstOp = 0;
  uint16_t firstThread = 0;
};

class Memory {
public:
  Memory();

  /// A new allocation of `bytes`, every byte `fill`, all uninitialized (or
  /// initialized, for inputs).
  uint32_t allocate(Space space, size_t bytes, const std::string &name, uint8_t fill, bool initialized);
  /// Refills an allocation with `fill` and forgets its history (a new
  /// CTA's shared memory).
  void reset(uint32_t id, uint8_t fill);
  /// Releases an allocation's bytes; pointers to it become stale.
  void free(uint32_t id);
  /// The space of the allocation a generic pointer points into (global
  /// when none: an access through it then fails as a bad pointer).
  Space spaceOf(uint64_t pointer) const {
    uint32_t id = pointerAllocation(pointer);
    return id != 0 && id < allocations.size() ? allocations[id]->space : Space::Global;
  }
  Allocation &get(uint32_t id) { return *allocations[id]; }
  const Allocation &get(uint32_t id) const { return *allocations[id]; }
  /// Marks a range written by the host (a copy step).
  void markInitialized(uint32_t id, size_t offset, size_t bytes);

  /// Reads or writes `size` bytes at pointer word `pointer`; on a
  /// violation nothing is transferred and the violation is returned.
  Violation read(uint64_t pointer, Space space, unsigned size, unsigned alignment, void *out,
                 const Accessor &who);
  Violation write(uint64_t pointer, Space space, unsigned size, unsigned alignment, const void *in,
                  const Accessor &who);

  /// An atomic read-modify-write of `size` bytes: checked as a write, but
  /// atomics do not race with each other (only with plain accesses of
  /// other threads or CTAs). On success `bytes` points at the memory.
  Violation atomic(uint64_t pointer, Space space, unsigned size, unsigned alignment, uint8_t *&bytes,
                   const Accessor &who);

  const UninitializedReads &uninitializedReads() const { return uninitialized; }

private:
  Violation locate(uint64_t pointer, Space space, unsigned size, unsigned alignment, Allocation *&a,
                   int64_t &offset) const;

  std::vector<std::unique_ptr<Allocation>> allocations; ///< [0] is null
  UninitializedReads uninitialized;
};

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_MEMORY_H
