//===- EvalAsync.cpp - mbarriers, TMA copies, named barriers --------------===//
//
// PTX ISA semantics ("mbarrier", "cp.async.bulk.tensor"): an mbarrier
// counts pending arrivals and transaction bytes of its current phase; the
// phase completes when both reach zero, and the next one starts expecting
// the init count again. try_wait.parity(P) returns once the phase of
// parity P is no longer the current one. A TMA load copies its box at
// once and completes its bytes on its mbarrier; a TMA store copies its
// box when its bulk group is waited for (cp.async.bulk.wait_group), or
// when the CTA ends: the source is read as late as the hardware may.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace pk::sim {

Executor *Executor::ownerOf(const Instr &instr, uint16_t thread, uint64_t pointer) {
  for (Executor *peer : cluster->ctas)
    if (peer->shared && pointerAllocation(pointer) == peer->shared)
      return peer;
  fail(instr, thread, "a pointer that is not into the shared memory of a CTA of the cluster");
}

Executor::Mbarrier &Executor::mbarrierAt(const Instr &instr, uint16_t thread, uint64_t pointer) {
  // The barrier may be a peer's (mbarrier.arrive through mapa).
  Executor *owner = ownerOf(instr, thread, pointer);
  auto it = owner->mbarriers.find(pointer);
  if (it == owner->mbarriers.end())
    fail(instr, thread,
         "an mbarrier operation on shared memory byte " + std::to_string(pointerOffset(pointer)) +
             (owner == this ? "" : " of another CTA of the cluster") +
             ", where no mbarrier was initialized");
  return it->second;
}

void Executor::completeIfDone(Mbarrier &m) {
  if (m.pending != 0 || m.transactions != 0)
    return;
  ++m.phase;
  m.pending = m.expected;
  m.fromPeers = 0;
  synchronizeCta();
}

void Executor::landCopy(const PendingCopy &copy, uint16_t t) {
  Instr instr; // for messages: the cp.async that started the copy
  instr.op = Op::CpAsync;
  instr.id = copy.instr;
  uint8_t buffer[16] = {};
  Accessor who = accessor(t, copy.instr);
  // cp.async's source size: that many bytes are read (alignment is the
  // copy's), the rest of the destination is zero-filled.
  if (copy.sourceBytes > 0) {
    Violation v = memory.read(copy.global, Space::Global, copy.sourceBytes, copy.bytes, buffer, who);
    if (v.kind != Violation::Kind::None)
      fail(instr, t, describeViolation(v, false, copy.sourceBytes));
  }
  Violation v = memory.write(copy.shared, Space::Shared, copy.bytes, copy.bytes, buffer, who);
  if (v.kind != Violation::Kind::None)
    fail(instr, t, describeViolation(v, true, copy.bytes));
}

void Executor::retireTmaStores(uint16_t t, int64_t pending) {
  tmaStores[t].retireAllBut(pending, [&](const std::vector<PendingStore> &group) {
    for (const PendingStore &store : group)
      tmaCopy(*store.instr, t, /*toShared=*/false, store.operands);
  });
}

void Executor::finishTmaStores() {
  for (uint16_t t = 0; t < tmaStores.size(); ++t) {
    tmaStores[t].commit();
    retireTmaStores(t, 0);
  }
}

void Executor::tmaCopy(const Instr &instr, uint16_t t, bool toShared,
                       const std::vector<uint64_t> &operand) {
  // Operands: load (shared, map, mbarrier, coordinates...); store (shared,
  // map, coordinates...). Coordinates are PTX's: innermost first.
  size_t firstCoordinate = toShared ? 3 : 2;
  bool multicast = toShared && instr.imm == 1; // the CTA mask is the last operand
  uint64_t mapWord = operand[1];
  if (mapWord >= launch->tensorMaps.size())
    fail(instr, t, "a TMA copy through a tensor map parameter the launch did not pass");
  const rt::TensorMapDesc &map = launch->tensorMaps[mapWord];
  unsigned rank = map.rank;
  if (rank == 0)
    fail(instr, t,
         "a TMA copy through an optional tensor map that could not be encoded for these "
         "sizes (the runtime passed zeros; the kernel should have copied without it)");
  size_t coordinates = instr.in.size() - firstCoordinate - (multicast ? 1 : 0);
  if (coordinates != rank)
    fail(instr, t,
         "a TMA copy with " + std::to_string(coordinates) +
             " coordinates through a tensor map of rank " + std::to_string(rank));
  // The CTAs that receive a load: this one, or every one of the mask
  // (at the same shared memory offsets, completing their own barriers).
  std::vector<Executor *> receivers{this};
  if (multicast) {
    uint64_t ctaMask = operand.back() & 0xffff;
    receivers.clear();
    for (unsigned r = 0; r < 16; ++r) {
      if (!(ctaMask >> r & 1))
        continue;
      if (r >= cluster->ctas.size())
        fail(instr, t,
             "a TMA multicast to cluster rank " + std::to_string(r) + " in a cluster of " +
                 std::to_string(cluster->ctas.size()) + " CTAs");
      receivers.push_back(cluster->ctas[r]);
    }
    if (receivers.empty())
      fail(instr, t, "a TMA multicast with an empty CTA mask");
  }
  if (map.interleave != rt::TmaInterleave::None)
    fail(instr, t, "a TMA copy through an interleaved tensor map (not modelled)");
  // A swizzled box lands with its 16-byte chunks permuted (Types.h).
  unsigned span = rt::swizzleBytes(map.swizzle);
  int64_t start[rt::kMaxTensorMapRank];
  for (unsigned i = 0; i < rank; ++i)
    start[i] = signExtend(operand[firstCoordinate + i], 32);
  uint64_t box = operand[0]; // the box's first byte in shared memory
  if (pointerOffset(box) % 128 != 0)
    fail(instr, t,
         "a TMA copy to or from shared memory at byte " + std::to_string(pointerOffset(box)) +
             " (it must be 128-byte aligned)");
  if (map.swizzle != rt::TmaSwizzle::None && map.box[0] * map.elementBytes > rt::swizzleBytes(map.swizzle))
    fail(instr, t, "a swizzled TMA box wider than the swizzle's span");
  unsigned bytes = map.elementBytes;
  uint64_t boxElements = 1;
  for (unsigned i = 0; i < rank; ++i)
    boxElements *= map.box[i];
  Accessor who = accessor(t, instr.id);
  uint8_t element[16];
  for (uint64_t n = 0; n < boxElements; ++n) {
    // The element's place in the box (innermost first) and in the array.
    uint64_t rest = n, offset = 0;
    bool inside = true;
    for (unsigned i = 0; i < rank; ++i) {
      int64_t g = start[i] + static_cast<int64_t>(rest % map.box[i]);
      rest /= map.box[i];
      if (g < 0 || static_cast<uint64_t>(g) >= map.dims[i])
        inside = false;
      else
        offset += static_cast<uint64_t>(g) * map.strides[i];
    }
    uint64_t global = makePointer(pointerAllocation(map.address),
                                  pointerOffset(map.address) + static_cast<int64_t>(offset));
    uint64_t local =
        makePointer(pointerAllocation(box),
                    swizzledAddress(pointerOffset(box) + static_cast<int64_t>(n * bytes), span));
    Violation v;
    if (toShared) {
      if (inside) {
        v = memory.read(global, Space::Global, bytes, bytes, element, who);
        if (v.kind != Violation::Kind::None)
          fail(instr, t, "the TMA load's source: " + describeViolation(v, false, bytes));
      } else {
        // Out of bounds: zeros, or NaN for floats with the NaN fill.
        std::memset(element, 0, bytes);
        if (map.oobFill == rt::TmaOobFill::Nan && map.isFloat)
          std::memset(element, 0xff, bytes);
      }
      // Read once, written into every receiver's shared memory.
      for (Executor *receiver : receivers) {
        v = memory.write(atPeer(receiver, local), Space::Shared, bytes, bytes, element, who);
        if (v.kind != Violation::Kind::None)
          fail(instr, t, "the TMA load's destination: " + describeViolation(v, true, bytes));
      }
    } else {
      v = memory.read(local, Space::Shared, bytes, bytes, element, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, "the TMA store's source: " + describeViolation(v, false, bytes));
      if (!inside)
        continue; // never written
      v = memory.write(global, Space::Global, bytes, bytes, element, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, "the TMA store's destination: " + describeViolation(v, true, bytes));
    }
  }
  if (!toShared)
    return;
  for (Executor *receiver : receivers) {
    Mbarrier &m = mbarrierAt(instr, t, atPeer(receiver, operand[2]));
    m.transactions -= static_cast<int64_t>(boxElements * bytes);
    // A peer's bytes may come before the receiver announces them (the
    // transaction count goes below zero while arrivals are pending); a
    // CTA's own loads must be announced first.
    if (receiver != this)
      m.fromPeers += static_cast<int64_t>(boxElements * bytes);
    else if (m.transactions + m.fromPeers < 0)
      fail(instr, t, "a TMA load completes " + std::to_string(boxElements * bytes) +
                         " bytes on an mbarrier whose phase expects fewer (arrive.expect_tx first)");
    completeIfDone(m);
  }
}

void Executor::evalCluster(const Instr &instr, const Mask &mask) {
  switch (instr.op) {
  case Op::Mapa: {
    const uint64_t *pointer = reg(instr.in[0]), *rank = reg(instr.in[1]);
    uint64_t *to = reg(instr.out[0]);
    for (uint16_t t : mask) {
      if (pointerAllocation(pointer[t]) != shared || !shared)
        fail(instr, t, "mapa of a pointer that is not into the CTA's shared memory");
      uint64_t r = rank[t] & 0xffffffffu;
      if (r >= cluster->ctas.size())
        fail(instr, t,
             "mapa to cluster rank " + std::to_string(r) + " in a cluster of " +
                 std::to_string(cluster->ctas.size()) + " CTAs");
      to[t] = makePointer(cluster->ctas[r]->shared, pointerOffset(pointer[t]));
    }
    return;
  }
  case Op::ClusterArrive:
    for (uint16_t t : mask) {
      if (clusterArrival[t] >= 0)
        fail(instr, t, "barrier.cluster.arrive twice without a wait in between");
      clusterArrival[t] = static_cast<int64_t>(cluster->generation);
      ++cluster->arrived;
    }
    cluster->completeIfAllArrived();
    return;
  case Op::ClusterWait: {
    uint16_t first = mask.front();
    int64_t arrival = clusterArrival[first];
    for (uint16_t t : mask)
      if (clusterArrival[t] != arrival || arrival < 0)
        fail(instr, t,
             "barrier.cluster.wait by a thread that has not arrived in the same phase as "
             "the rest of its warpgroup");
    ClusterRun *run = cluster;
    auto done = [run, arrival] { return run->generation > static_cast<uint64_t>(arrival); };
    if (!done()) {
      std::string what = "at a cluster barrier (barrier.cluster.wait) for the other CTAs\n    at " +
                         describeOp(k.ops[instr.id]);
      if (!workers)
        fail(instr, first,
             "deadlock: the CTA waits " + what + "\n  and no other thread can arrive");
      workers->wait(nullptr, what, done);
    }
    for (uint16_t t : mask)
      clusterArrival[t] = -1;
    synchronizeCta();
    return;
  }
  default:
    return;
  }
}

void Executor::evalAsync(const Instr &instr, const Mask &mask) {
  switch (instr.op) {
  case Op::MbarInit:
    for (uint16_t t : mask) {
      uint64_t pointer = reg(instr.in[0])[t];
      if (pointerAllocation(pointer) != shared || pointerOffset(pointer) % 8 != 0)
        fail(instr, t, "mbarrier.init of memory that is not 8-byte aligned shared memory");
      uint32_t count = static_cast<uint32_t>(reg(instr.in[1])[t]);
      if (count == 0)
        fail(instr, t, "mbarrier.init with an arrival count of 0");
      Mbarrier &m = mbarriers[pointer];
      m = Mbarrier{count, count, 0, 0};
    }
    return;
  case Op::MbarArrive:
  case Op::MbarArriveExpectTx:
    for (uint16_t t : mask) {
      Mbarrier &m = mbarrierAt(instr, t, reg(instr.in[0])[t]);
      if (instr.op == Op::MbarArriveExpectTx)
        m.transactions += static_cast<int64_t>(reg(instr.in[1])[t] & 0xffffffffu);
      --m.pending;
      completeIfDone(m);
      if (!instr.out.empty())
        reg(instr.out[0])[t] = 0; // the state token: unused
    }
    return;
  case Op::MbarTryWait: {
    uint16_t first = mask.front();
    uint64_t pointer = reg(instr.in[0])[first];
    uint64_t parity = reg(instr.in[1])[first] & 1;
    for (uint16_t t : mask)
      if (reg(instr.in[0])[t] != pointer || (reg(instr.in[1])[t] & 1) != parity)
        fail(instr, t, "threads of one warpgroup wait on different mbarriers or parities at once "
                       "(not modelled)");
    Mbarrier &m = mbarrierAt(instr, first, pointer);
    auto done = [&m, parity] { return (m.phase & 1) != parity; };
    if (!done()) {
      std::string what = "for phase parity " + std::to_string(parity) + " of the mbarrier at shared byte " +
                         std::to_string(pointerOffset(pointer)) + "\n    at " + describeOp(k.ops[instr.id]);
      // Warp-specialized code (plgpu.WarpMesh): the other warps of this
      // warpgroup, which might be the ones to arrive, wait behind it.
      if (mask.size() % 128 != 0)
        what += "\n    (only " + std::to_string(mask.size()) +
                " threads of the warpgroup wait here: the simulator runs a warpgroup's warps in "
                "lockstep, so its other warps cannot arrive meanwhile; warps of one warpgroup "
                "that wait for each other are not modelled)";
      if (!workers)
        fail(instr, first, "deadlock: the CTA waits " + what + "\n  and no other thread of it can arrive");
      workers->wait(nullptr, what, done);
    }
    synchronizeCta();
    return;
  }
  case Op::MbarTestWait: {
    // test_wait.parity(P): whether the phase of parity P has completed,
    // now. A poll that finds it incomplete lets the other workers run (a
    // loop of polls must not keep the arriving threads from running).
    bool incomplete = false;
    for (uint16_t t : mask) {
      Mbarrier &m = mbarrierAt(instr, t, reg(instr.in[0])[t]);
      bool done = (m.phase & 1) != (reg(instr.in[1])[t] & 1);
      reg(instr.out[0])[t] = done ? 1 : 0;
      incomplete |= !done;
    }
    synchronizeCta(); // an acquire, as try_wait's
    if (incomplete && workers)
      workers->yield();
    return;
  }
  case Op::TmaLoad:
  case Op::TmaStore:
    for (uint16_t t : mask) {
      std::vector<uint64_t> operands;
      for (uint32_t r : instr.in)
        operands.push_back(reg(r)[t]);
      if (instr.op == Op::TmaLoad)
        tmaCopy(instr, t, /*toShared=*/true, operands);
      else
        tmaStores[t].open.push_back({&instr, std::move(operands)});
    }
    return;
  case Op::BulkCommit:
    for (uint16_t t : mask)
      tmaStores[t].commit();
    return;
  case Op::BulkWait:
    // All but the `imm` most recent committed groups complete (with
    // .read only their reads must have: the same here).
    for (uint16_t t : mask)
      retireTmaStores(t, instr.imm);
    synchronizeCta();
    return;
  case Op::NamedBarrier:
  case Op::NamedBarrierArrive:
    return evalNamedBarrier(instr, mask);
  case Op::CpAsync: {
    // Operands: the shared destination, the global source. Until its
    // group is waited for, the destination holds poison (all ones: NaN
    // in every float type): the hardware may write it any time from now,
    // so a read or an in-flight wgmma of it in the meantime is wrong,
    // and a read by another thread before a barrier is a data race.
    const uint64_t *shared = reg(instr.in[0]), *global = reg(instr.in[1]);
    const uint64_t *sourceSize = instr.in.size() > 2 ? reg(instr.in[2]) : nullptr;
    unsigned bytes = static_cast<unsigned>(instr.imm);
    uint8_t poison[16];
    std::fill(std::begin(poison), std::end(poison), uint8_t(0xFF));
    for (uint16_t t : mask) {
      Accessor who = accessor(t, instr.id);
      Violation v = memory.write(shared[t], Space::Shared, bytes, bytes, poison, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, describeViolation(v, true, bytes));
      uint64_t source = sourceSize ? sourceSize[t] & 0xffffffffu : bytes;
      if (source > bytes)
        fail(instr, t, "a cp.async whose source size (" + std::to_string(source) +
                           ") exceeds its copy size (" + std::to_string(bytes) + ")");
      cpAsync[t].open.push_back({shared[t], global[t], bytes, static_cast<unsigned>(source), instr.id});
    }
    return;
  }
  case Op::CpAsyncCommit:
    for (uint16_t t : mask)
      cpAsync[t].commit();
    return;
  case Op::CpAsyncWait:
    // All but the `imm` most recent committed groups complete.
    for (uint16_t t : mask)
      cpAsync[t].retireAllBut(instr.imm, [&](const std::vector<PendingCopy> &group) {
        for (const PendingCopy &copy : group)
          landCopy(copy, t);
      });
    synchronizeCta();
    return;
  case Op::Mapa:
  case Op::ClusterArrive:
  case Op::ClusterWait:
    return evalCluster(instr, mask);
  case Op::PtrCast: {
    const uint64_t *from = reg(instr.in[0]);
    uint64_t *to = reg(instr.out[0]);
    for (uint16_t t : mask)
      to[t] = from[t];
    return;
  }
  default:
    return;
  }
}

/// bar.sync / bar.arrive id, count: the active threads arrive, whole warps
/// (bar is aligned: a warp arrives as one, with all its threads); the round
/// completes when `count` threads have, and bar.sync waits for that. The
/// warpgroup's own barrier (bar.sync 1 + g, 128) completes at once. For
/// race detection a round that several warpgroups reach synchronizes the
/// whole CTA, as an mbarrier phase does; a round of one warpgroup only
/// that warpgroup.
void Executor::evalNamedBarrier(const Instr &instr, const Mask &mask) {
  uint16_t first = mask.front();
  uint64_t id = reg(instr.in[0])[first] & 0xffffffffu,
           count = reg(instr.in[1])[first] & 0xffffffffu;
  // Every warpgroup barrier of pkc's own code comes here: nothing is
  // allocated unless something is reported.
  std::array<unsigned, 32> lanes{}; // per warp of the CTA (at most 1024 threads)
  size_t warps = (k.threads() + 31) / 32;
  for (uint16_t t : mask) {
    if ((reg(instr.in[0])[t] & 0xffffffffu) != id || (reg(instr.in[1])[t] & 0xffffffffu) != count)
      fail(instr, t, "threads of one warpgroup reach a named barrier with different ids or counts");
    ++lanes[t / 32];
  }
  for (size_t w = 0; w < warps; ++w)
    if (lanes[w] != 0 && lanes[w] != std::min<unsigned>(32, k.threads() - unsigned(w) * 32))
      fail(instr, first,
           "a named barrier reached by " + std::to_string(lanes[w]) + " threads of warp " +
               std::to_string(w) +
               " (bar is aligned: every thread of a warp executes it together)");
  if (id > 15)
    fail(instr, first, "named barrier " + std::to_string(id) + " (a CTA has barriers 0 to 15)");
  if (count == 0 || count % 32 != 0 || count > k.threads())
    fail(instr, first,
         "a named barrier for " + std::to_string(count) + " threads in a CTA of " +
             std::to_string(k.threads()) + " (a multiple of 32, at most the CTA's)");
  NamedBarrierState &b = namedBarriers[id];
  auto name = [id] { return "named barrier " + std::to_string(id); };
  if (b.arrived == 0)
    b.count = count;
  else if (b.count != count)
    fail(instr, first,
         name() + " is used with thread counts " + std::to_string(b.count) + " and " +
             std::to_string(count) + " in one round");
  b.arrived += mask.size();
  b.workers |= 1u << (k.warpgroups > 1 ? first / 128 : 0);
  if (b.arrived > count)
    fail(instr, first,
         std::to_string(b.arrived) + " threads arrived at " + name() + ", more than its count " +
             std::to_string(count));
  if (b.arrived == count) {
    // A round of one warpgroup (its own barrier) orders only its threads.
    if ((b.workers & (b.workers - 1)) != 0) // more than one bit
      synchronizeCta();
    else
      synchronizeWarpgroup();
    b.arrived = 0;
    b.workers = 0;
    ++b.completed;
    return;
  }
  if (instr.op == Op::NamedBarrierArrive) {
    synchronizeWarpgroup(); // a release: the round's completion orders it
    return;
  }
  uint64_t round = b.completed;
  std::string what = "for " + name() + " (" + std::to_string(b.arrived) + " of " +
                     std::to_string(count) + " threads arrived)\n    at " +
                     describeOp(k.ops[instr.id]);
  if (mask.size() % 128 != 0)
    what += "\n    (only " + std::to_string(mask.size()) +
            " threads of the warpgroup wait here: the simulator runs a warpgroup's warps in "
            "lockstep, so its other warps cannot arrive meanwhile)";
  if (!workers)
    fail(instr, first,
         "deadlock: the CTA waits " + what + "\n  and no other thread of it can arrive");
  workers->wait(nullptr, what, [&b, round] { return b.completed != round; });
  synchronizeCta();
}

} // namespace pk::sim
