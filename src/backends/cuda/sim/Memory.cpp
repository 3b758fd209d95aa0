//===- Memory.cpp - Bounds, alignment and race checks ---------------------===//
#include "backends/cuda/sim/Memory.h"

#include <cstring>

namespace pk::sim {

Memory::Memory() { allocations.push_back(nullptr); }

uint32_t Memory::allocate(Space space, size_t bytes, const std::string &name, uint8_t fill,
                          bool initialized) {
  auto a = std::make_unique<Allocation>();
  a->name = name;
  a->space = space;
  a->bytes.assign(bytes, fill);
  a->shadow.assign(bytes, Allocation::Shadow{});
  if (initialized)
    for (Allocation::Shadow &s : a->shadow)
      s.initialized = true;
  allocations.push_back(std::move(a));
  return static_cast<uint32_t>(allocations.size() - 1);
}

void Memory::reset(uint32_t id, uint8_t fill) {
  Allocation &a = *allocations[id];
  std::memset(a.bytes.data(), fill, a.bytes.size());
  std::fill(a.shadow.begin(), a.shadow.end(), Allocation::Shadow{});
}

void Memory::free(uint32_t id) {
  Allocation &a = *allocations[id];
  a.freed = true;
  a.bytes = {};
  a.shadow = {};
}

void Memory::markInitialized(uint32_t id, size_t offset, size_t bytes) {
  Allocation &a = *allocations[id];
  for (size_t i = offset; i < offset + bytes && i < a.shadow.size(); ++i)
    a.shadow[i].initialized = true;
}

Violation Memory::locate(uint64_t pointer, Space space, unsigned size, unsigned alignment,
                         Allocation *&a, int64_t &offset) const {
  Violation v;
  uint32_t id = pointerAllocation(pointer);
  offset = pointerOffset(pointer);
  v.allocation = id;
  v.offset = offset;
  if (id == 0 || id >= allocations.size() || allocations[id]->freed) {
    v.kind = Violation::Kind::BadPointer;
    return v;
  }
  a = allocations[id].get();
  if (a->space != space) {
    v.kind = Violation::Kind::WrongSpace;
    return v;
  }
  if (offset < 0 || static_cast<uint64_t>(offset) + size > a->bytes.size()) {
    v.kind = Violation::Kind::OutOfBounds;
    return v;
  }
  if (alignment > a->baseAlignment() || offset % alignment != 0) {
    v.kind = Violation::Kind::Misaligned;
    return v;
  }
  return v;
}

namespace {

/// Whether an access by `who` to byte `offset`, whose shadow is `s`,
/// races with an earlier one: a plain write by another thread of the same
/// interval or another CTA of the same launch (global memory only); with
/// `againstReads`, a read likewise; with `againstAtomics`, an atomic.
/// Fills `v` with the first such conflict.
bool findRace(const Allocation::Shadow &s, const Accessor &who, bool global, bool againstReads,
              bool againstAtomics, int64_t offset, Violation &v) {
  auto race = [&](bool otherWrite, bool acrossCtas, uint32_t thread, uint32_t cta, uint32_t op) {
    v.kind = Violation::Kind::Race;
    v.offset = offset;
    v.otherWasWrite = otherWrite;
    v.acrossCtas = acrossCtas;
    v.otherThread = thread;
    v.otherCta = cta;
    v.otherOp = op;
    return true;
  };
  // Unordered: the same epoch, and another warpgroup or the same interval.
  unsigned worker = who.workerOf(who.thread);
  if (s.writeEpoch == who.epoch && s.writer != who.thread &&
      (who.workerOf(s.writer) != worker || s.writeInterval == who.interval))
    return race(true, false, s.writer, who.cta, s.writeOp);
  if (againstReads && s.readEpoch == who.epoch && s.reader != who.thread &&
      (s.readWorker == kManyThreads || s.readWorker != worker || s.readInterval == who.interval))
    return race(false, false, s.reader, who.cta, s.readOp);
  if (global && s.writeLaunch == who.launch && s.writerCta != who.cta)
    return race(true, true, s.writer, s.writerCta, s.writeOp);
  if (againstReads && global && s.readLaunch == who.launch && s.readerCta != who.cta)
    return race(false, true, kManyThreads, s.readerCta, s.readOp);
  if (againstAtomics &&
      ((s.atomicEpoch == who.epoch && s.atomicThread != who.thread &&
        (s.atomicThread == kManyThreads || who.workerOf(s.atomicThread) != worker ||
         s.atomicInterval == who.interval)) ||
       (global && s.atomicLaunch == who.launch && s.atomicCta != who.cta))) {
    race(true, s.atomicEpoch != who.epoch, s.atomicThread, s.atomicCta, s.atomicOp);
    v.otherWasAtomic = true;
    return true;
  }
  return false;
}

} // namespace

Violation Memory::read(uint64_t pointer, Space space, unsigned size, unsigned alignment, void *out,
                       const Accessor &who) {
  Allocation *a = nullptr;
  int64_t offset = 0;
  Violation v = locate(pointer, space, size, alignment, a, offset);
  if (v.kind != Violation::Kind::None)
    return v;
  bool global = a->space == Space::Global;
  for (unsigned i = 0; i < size; ++i)
    if (findRace(a->shadow[offset + i], who, global, /*againstReads=*/false, /*againstAtomics=*/true,
                 offset + i, v))
      return v;
  for (unsigned i = 0; i < size; ++i) {
    Allocation::Shadow &s = a->shadow[offset + i];
    unsigned worker = who.workerOf(who.thread);
    if (s.readEpoch != who.epoch || (s.readWorker == worker && s.readInterval != who.interval)) {
      // After the reads recorded (a synchronization since): this one alone.
      s.readEpoch = who.epoch;
      s.readInterval = who.interval;
      s.readWorker = static_cast<uint16_t>(worker);
      s.reader = who.thread;
      s.readOp = who.op;
    } else {
      if (s.reader != who.thread)
        s.reader = kManyThreads;
      if (s.readWorker != worker)
        s.readWorker = kManyThreads;
    }
    if (global) {
      if (s.readLaunch != who.launch) {
        s.readLaunch = who.launch;
        s.readerCta = who.cta;
      } else if (s.readerCta != who.cta) {
        s.readerCta = kManyCtas;
      }
    }
    if (!s.initialized) {
      if (uninitialized.count++ == 0) {
        uninitialized.firstAllocation = pointerAllocation(pointer);
        uninitialized.firstOffset = offset + i;
        uninitialized.firstOp = who.op;
        uninitialized.firstThread = who.thread;
      }
    }
  }
  std::memcpy(out, a->bytes.data() + offset, size);
  return v;
}

Violation Memory::write(uint64_t pointer, Space space, unsigned size, unsigned alignment, const void *in,
                        const Accessor &who) {
  Allocation *a = nullptr;
  int64_t offset = 0;
  Violation v = locate(pointer, space, size, alignment, a, offset);
  if (v.kind != Violation::Kind::None)
    return v;
  bool global = a->space == Space::Global;
  // A store of the value already there does not race with another store
  // (every order leaves the same memory: CTAs that each store a result
  // they all computed); it still races with reads and atomics.
  bool sameValue = std::memcmp(a->bytes.data() + offset, in, size) == 0;
  const Violation located = v;
  for (unsigned i = 0; i < size; ++i) {
    const Allocation::Shadow &s = a->shadow[offset + i];
    if (!findRace(s, who, global, /*againstReads=*/true, /*againstAtomics=*/true, offset + i, v))
      continue;
    if (!sameValue || !v.otherWasWrite || v.otherWasAtomic)
      return v;
    Allocation::Shadow withoutWriter = s;
    withoutWriter.writeInterval = withoutWriter.writeLaunch = 0; // numbering starts at 1
    withoutWriter.writeEpoch = 0;
    v = located;
    if (findRace(withoutWriter, who, global, true, true, offset + i, v))
      return v;
  }
  for (unsigned i = 0; i < size; ++i) {
    Allocation::Shadow &s = a->shadow[offset + i];
    s.writeInterval = who.interval;
    s.writeEpoch = who.epoch;
    s.writer = who.thread;
    s.writeOp = who.op;
    s.writeLaunch = who.launch;
    s.writerCta = who.cta;
    s.initialized = true;
  }
  std::memcpy(a->bytes.data() + offset, in, size);
  return v;
}


Violation Memory::atomic(uint64_t pointer, Space space, unsigned size, unsigned alignment, uint8_t *&bytes,
                         const Accessor &who) {
  Allocation *a = nullptr;
  int64_t offset = 0;
  Violation v = locate(pointer, space, size, alignment, a, offset);
  if (v.kind != Violation::Kind::None)
    return v;
  bool global = a->space == Space::Global;
  // Atomics race with plain accesses, not with each other.
  for (unsigned i = 0; i < size; ++i)
    if (findRace(a->shadow[offset + i], who, global, /*againstReads=*/true, /*againstAtomics=*/false,
                 offset + i, v))
      return v;
  for (unsigned i = 0; i < size; ++i) {
    Allocation::Shadow &s = a->shadow[offset + i];
    if (s.atomicEpoch != who.epoch || s.atomicInterval != who.interval) {
      s.atomicInterval = who.interval;
      s.atomicEpoch = who.epoch;
      s.atomicThread = who.thread;
      s.atomicOp = who.op;
    } else if (s.atomicThread != who.thread) {
      s.atomicThread = kManyThreads;
    }
    if (global) {
      if (s.atomicLaunch != who.launch) {
        s.atomicLaunch = who.launch;
        s.atomicCta = who.cta;
      } else if (s.atomicCta != who.cta) {
        s.atomicCta = kManyCtas;
      }
    }
    if (!s.initialized && uninitialized.count++ == 0) {
      uninitialized.firstAllocation = pointerAllocation(pointer);
      uninitialized.firstOffset = offset + i;
      uninitialized.firstOp = who.op;
      uninitialized.firstThread = who.thread;
    }
    s.initialized = true;
  }
  bytes = a->bytes.data() + offset;
  return v;
}

} // namespace pk::sim
