//===- Executor.cpp - Control flow, masks and errors of one CTA -----------===//
#include "backends/cuda/sim/Executor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace pk::sim {

Executor::Executor(const Kernel &kernel, Memory &memory, Counters &counters, uint32_t &nextInterval)
    : k(kernel), memory(memory), counters(counters), nextInterval(nextInterval) {
  regs.assign(k.wordsPerThread * k.threads(), 0);
  for (const auto &[slot, lanes] : k.constants) {
    uint64_t *r = reg(slot);
    unsigned w = widthOf(slot);
    for (unsigned t = 0; t < k.threads(); ++t)
      for (unsigned e = 0; e < w; ++e)
        r[t * w + e] = lanes[e];
  }
  for (unsigned t = 0; t < k.threads(); ++t)
    all.push_back(static_cast<uint16_t>(t));
}

std::string Executor::where(int thread) const {
  std::ostringstream os;
  os << "kernel '" << k.name << "', CTA (" << cta[0] << ", " << cta[1] << ", " << cta[2] << ")";
  if (thread >= 0)
    os << ", thread " << thread << " (warp " << thread / 32 << ", lane " << thread % 32 << ")";
  return os.str();
}

void Executor::fail(const Instr &instr, int thread, const std::string &message) const {
  throw SimError(where(thread) + ": " + message + "\n  at " + describeOp(k.ops[instr.id]));
}

void Executor::poison(const Instr &instr, unsigned thread, const char *what) {
  if (counters.poison++ == 0)
    counters.firstPoison = where(static_cast<int>(thread)) + ": " + what + "\n  at " +
                           describeOp(k.ops[instr.id]);
}

void Executor::beginCta(const LaunchState &state, const uint64_t coordinates[3], uint32_t linear,
                        uint32_t sharedMemory, ClusterRun &clusterRun, pk::Cooperative *scheduler) {
  launch = &state;
  shared = sharedMemory;
  cluster = &clusterRun;
  cluster->liveThreads += k.threads();
  clusterArrival.assign(k.threads(), -1);
  workers = scheduler;
  ctaBarrierArrived = 0;
  for (unsigned i = 0; i < 3; ++i)
    cta[i] = coordinates[i];
  linearCta = linear;
  synchronizeCta();
  ++counters.ctas;
  for (size_t p = 0; p < k.params.size(); ++p) {
    uint64_t *r = reg(k.params[p]);
    uint64_t word = state.params[p];
    if (k.paramTypes[p].kind != Kind::Ptr)
      word &= widthMask(bitsOf(k.paramTypes[p].kind));
    for (unsigned t = 0; t < k.threads(); ++t)
      r[t] = word;
  }
  mbarriers.clear();
  namedBarriers.fill({});
  cpAsync.assign(k.threads(), {});
  tmaStores.assign(k.threads(), {});
  wgmmas.assign((k.threads() + 127) / 128, {});
  tensorMemory.clear();
}

void Executor::runWorker(unsigned worker) {
  Mask mine;
  if (workerCount() == 1) {
    mine = all;
  } else {
    for (unsigned t = 0; t < 128; ++t)
      mine.push_back(static_cast<uint16_t>(worker * 128 + t));
  }
  runBlock(0, mine);
  // Its threads exit: barrier.cluster no longer waits for them.
  cluster->liveThreads -= mine.size();
  cluster->completeIfAllArrived();
}

void Executor::endCta() {
  workers = nullptr;
  finishTmaStores();
}

void ClusterRun::completeIfAllArrived() {
  if (arrived > 0 && arrived >= liveThreads) {
    arrived = 0;
    ++generation;
  }
}

void Executor::ctaBarrier(const Instr &instr, const Mask &mask) {
  unsigned expected = workers ? k.threads() / workerCount() : k.threads();
  if (mask.size() != expected)
    fail(instr, mask.front(),
         "a CTA barrier reached by " + std::to_string(mask.size()) + " of the " +
             std::to_string(expected) + (workers ? " threads of its warpgroup" : " threads of the CTA") +
             " (a barrier under divergent control flow is undefined behaviour)");
  if (workers) {
    // Every warpgroup must get here before any goes on.
    uint64_t generation = ctaBarrierGeneration;
    if (++ctaBarrierArrived == workerCount()) {
      ctaBarrierArrived = 0;
      ++ctaBarrierGeneration;
    } else {
      workers->wait(nullptr, "at a CTA barrier (bar.sync 0) for the other warpgroups\n    at " +
                        describeOp(k.ops[instr.id]),
                    [this, generation] { return ctaBarrierGeneration != generation; });
    }
  }
  synchronizeCta();
}

void Executor::runBlock(uint32_t block, const Mask &mask) {
  for (const Instr &instr : k.blocks[block].body)
    exec(instr, mask);
}

void Executor::transfer(const std::vector<int32_t> &from, const std::vector<int32_t> &to,
                        const Mask &mask) {
  // All reads before any write.
  std::vector<uint64_t> staged;
  for (int32_t s : from) {
    const uint64_t *r = reg(s);
    unsigned w = widthOf(s);
    for (uint16_t t : mask)
      staged.insert(staged.end(), r + size_t(t) * w, r + size_t(t) * w + w);
  }
  size_t i = 0;
  for (int32_t s : to) {
    uint64_t *r = reg(s);
    unsigned w = widthOf(s);
    for (uint16_t t : mask)
      for (unsigned e = 0; e < w; ++e)
        r[size_t(t) * w + e] = staged[i++];
  }
}

void Executor::transfer(const std::vector<int32_t> &from, const llvm::SmallVectorImpl<int32_t> &to,
                        const Mask &mask) {
  transfer(from, std::vector<int32_t>(to.begin(), to.end()), mask);
}

void Executor::exec(const Instr &instr, const Mask &mask) {
  if (++counters.instructions > counters.maxInstructions)
    fail(instr, -1, "the simulation ran more than " + std::to_string(counters.maxInstructions) +
                        " instructions; the kernel may not terminate");
  counters.threadInstructions += mask.size();
  switch (instr.op) {
  case Op::AddI: case Op::SubI: case Op::MulI: case Op::DivSI: case Op::DivUI: case Op::RemSI:
  case Op::RemUI: case Op::CeilDivSI: case Op::CeilDivUI: case Op::FloorDivSI: case Op::AndI:
  case Op::OrI: case Op::XOrI: case Op::ShLI: case Op::ShRSI: case Op::ShRUI: case Op::MaxSI:
  case Op::MaxUI: case Op::MinSI: case Op::MinUI: case Op::MulSIExtended: case Op::MulUIExtended:
  case Op::AddUIExtended: case Op::AbsI: case Op::CtLz: case Op::CtTz: case Op::CtPop:
  case Op::IPowI:
    return evalInteger(instr, mask);
  case Op::AddF: case Op::SubF: case Op::MulF: case Op::DivF: case Op::RemF: case Op::MaximumF:
  case Op::MinimumF: case Op::MaxNumF: case Op::MinNumF: case Op::PowF: case Op::Atan2:
  case Op::CopySign: case Op::NegF: case Op::AbsF: case Op::Exp: case Op::Exp2: case Op::ExpM1:
  case Op::Log: case Op::Log1p: case Op::Log2: case Op::Log10: case Op::Sqrt: case Op::Rsqrt:
  case Op::Cbrt: case Op::Sin: case Op::Cos: case Op::Tan: case Op::Tanh: case Op::Sinh:
  case Op::Cosh: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Asinh: case Op::Acosh:
  case Op::Atanh: case Op::Erf: case Op::Erfc: case Op::Floor: case Op::Ceil: case Op::Trunc:
  case Op::Round: case Op::RoundEven: case Op::Fma: case Op::FPowI: case Op::IsNaN:
  case Op::IsInf: case Op::IsFinite:
    return evalFloat(instr, mask);
  case Op::CmpI: case Op::CmpF: case Op::Select: case Op::ExtSI: case Op::ExtUI: case Op::TruncI:
  case Op::ExtF: case Op::TruncF: case Op::SIToFP: case Op::UIToFP: case Op::FPToSI:
  case Op::FPToUI: case Op::IndexCast: case Op::IndexCastUI: case Op::Bitcast:
    return evalCompareSelectCast(instr, mask);
  case Op::VExtract: case Op::VInsert: case Op::VFromElements: case Op::VBroadcast:
  case Op::VShuffle: case Op::Repack:
    return evalVector(instr, mask);
  case Op::Mma:
    return evalMma(instr, mask);
  case Op::Wgmma:
    return evalWgmma(instr, mask);
  case Op::WgmmaCommit: case Op::WgmmaWait:
    return evalWgmmaGroups(instr, mask);
  case Op::TmemAlloc:
  case Op::TmemLoad:
  case Op::TmemStore:
  case Op::Tcgen05Mma:
  case Op::Tcgen05Commit:
  case Op::ClcTryCancel:
  case Op::ClcQuery:
    return evalTensorMemory(instr, mask);
  case Op::SharedAddress: {
    const uint64_t *from = reg(instr.in[0]);
    uint64_t *to = reg(instr.out[0]);
    for (uint16_t t : mask) {
      if (pointerAllocation(from[t]) != shared)
        fail(instr, t, "a ptrtoint of a pointer that is not into the CTA's shared memory");
      to[t] = static_cast<uint64_t>(pointerOffset(from[t]));
    }
    return;
  }
  case Op::MbarInit: case Op::MbarArrive: case Op::MbarArriveExpectTx: case Op::MbarTryWait:
  case Op::MbarTestWait:
  case Op::TmaLoad:
  case Op::TmaStore:
  case Op::BulkCommit:
  case Op::BulkWait:
  case Op::NamedBarrier:
  case Op::NamedBarrierArrive:
  case Op::Nop:
  case Op::PtrCast:
  case Op::Mapa:
  case Op::ClusterArrive:
  case Op::ClusterWait:
  case Op::CpAsync: case Op::CpAsyncCommit: case Op::CpAsyncWait:
    return evalAsync(instr, mask);
  case Op::ThreadId: case Op::BlockId: case Op::BlockDim: case Op::GridDim: case Op::LaneId:
  case Op::Barrier: case Op::Shuffle:
    return evalThreads(instr, mask);
  case Op::AddressOf: case Op::GEP: case Op::Load: case Op::Store:
    return evalMemory(instr, mask);
  case Op::AtomicRMW: case Op::CmpXchg:
    return evalAtomic(instr, mask);
  case Op::SemSignal:
  case Op::SemWait:
  case Op::AtomicLoad:
    return evalSemaphore(instr, mask);
  case Op::For:
    return evalFor(instr, mask);
  case Op::If:
    return evalIf(instr, mask);
  case Op::While:
    return evalWhile(instr, mask);
  case Op::Printf:
    return evalPrintf(instr, mask);
  case Op::ExecuteRegion: {
    const Block &body = k.blocks[instr.regions[0]];
    runBlock(instr.regions[0], mask);
    transfer(body.yields, instr.out, mask);
    return;
  }
  }
}

void Executor::evalFor(const Instr &instr, const Mask &mask) {
  // Operands: lower bound, upper bound, step, initial values.
  unsigned bits = bitsOf(instr.kind);
  bool isUnsigned = instr.imm != 0;
  auto read = [&](unsigned operand, const char *what) -> uint64_t {
    const uint64_t *r = reg(instr.in[operand]);
    uint64_t first = r[mask.front()];
    for (uint16_t t : mask)
      if (r[t] != first)
        fail(instr, t,
             std::string("threads disagree on the ") + what + " of scf.for (thread " +
                 std::to_string(mask.front()) + " has " + std::to_string(signExtend(first, bits)) +
                 ", this one " + std::to_string(signExtend(r[t], bits)) +
                 "); the backend's loops must be uniform across the CTA");
    return first;
  };
  const Block &body = k.blocks[instr.regions[0]];
  std::vector<int32_t> inits(instr.in.begin() + 3, instr.in.end());
  std::vector<int32_t> carried(body.args.begin() + 1, body.args.end());
  if (mask.empty())
    return;
  uint64_t lower = read(0, "lower bound"), upper = read(1, "upper bound"), step = read(2, "step");
  if (step == 0 || (!isUnsigned && signExtend(step, bits) <= 0))
    fail(instr, -1, "scf.for with a step of " + std::to_string(signExtend(step, bits)) +
                        " (it must be positive)");
  transfer(inits, carried, mask);
  uint64_t *iv = reg(body.args[0]);
  auto below = [&](uint64_t i) {
    return isUnsigned ? (i & widthMask(bits)) < (upper & widthMask(bits))
                      : signExtend(i, bits) < signExtend(upper, bits);
  };
  for (uint64_t i = lower; below(i);) {
    for (uint16_t t : mask)
      iv[t] = i;
    runBlock(instr.regions[0], mask);
    transfer(body.yields, carried, mask);
    // The next value, stopping where it would wrap.
    uint64_t next = (i + step) & widthMask(bits);
    bool wrapped = isUnsigned ? next < i : signExtend(next, bits) < signExtend(i, bits);
    if (wrapped)
      break;
    i = next;
  }
  transfer(carried, instr.out, mask);
}

void Executor::evalIf(const Instr &instr, const Mask &mask) {
  const uint64_t *condition = reg(instr.in[0]);
  Mask taken, notTaken;
  for (uint16_t t : mask)
    (condition[t] ? taken : notTaken).push_back(t);
  if (!taken.empty()) {
    runBlock(instr.regions[0], taken);
    transfer(k.blocks[instr.regions[0]].yields, instr.out, taken);
  }
  if (!notTaken.empty() && instr.regions.size() > 1) {
    runBlock(instr.regions[1], notTaken);
    transfer(k.blocks[instr.regions[1]].yields, instr.out, notTaken);
  }
}

void Executor::evalWhile(const Instr &instr, const Mask &mask) {
  const Block &before = k.blocks[instr.regions[0]];
  const Block &after = k.blocks[instr.regions[1]];
  std::vector<int32_t> inits(instr.in.begin(), instr.in.end());
  transfer(inits, before.args, mask);
  Mask running = mask;
  while (!running.empty()) {
    runBlock(instr.regions[0], running);
    const uint64_t *condition = reg(before.condition);
    Mask staying, leaving;
    for (uint16_t t : running)
      (condition[t] ? staying : leaving).push_back(t);
    if (!leaving.empty())
      transfer(before.yields, instr.out, leaving);
    if (staying.empty())
      break;
    transfer(before.yields, after.args, staying);
    runBlock(instr.regions[1], staying);
    transfer(after.yields, before.args, staying);
    running = std::move(staying);
  }
}

void Executor::evalThreads(const Instr &instr, const Mask &mask) {
  const unsigned *block = launch->block;
  switch (instr.op) {
  case Op::ThreadId: {
    uint64_t *r = reg(instr.out[0]);
    for (uint16_t t : mask) {
      uint64_t coordinate[3] = {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
      r[t] = coordinate[instr.imm];
    }
    return;
  }
  case Op::BlockId:
  case Op::BlockDim:
  case Op::GridDim: {
    uint64_t v = instr.op == Op::BlockId ? cta[instr.imm]
                 : instr.op == Op::BlockDim ? block[instr.imm]
                                            : launch->grid[instr.imm];
    uint64_t *r = reg(instr.out[0]);
    for (uint16_t t : mask)
      r[t] = v;
    return;
  }
  case Op::LaneId: {
    uint64_t *r = reg(instr.out[0]);
    for (uint16_t t : mask)
      r[t] = t % 32;
    return;
  }
  case Op::Barrier:
    return ctaBarrier(instr, mask);
  case Op::Shuffle: {
    // gpu.shuffle %value, %offset, %width: lowered to shfl.sync with the
    // member mask of lanes [0, width) and clamp width - 1.
    const uint64_t *value = reg(instr.in[0]), *offset = reg(instr.in[1]), *width = reg(instr.in[2]);
    uint64_t *result = reg(instr.out[0]), *valid = reg(instr.out[1]);
    std::vector<bool> active(k.threads(), false);
    for (uint16_t t : mask)
      active[t] = true;
    // Read every source before writing any result (result may alias
    // nothing, but keep the order a GPU has: all lanes exchange at once).
    std::vector<std::pair<uint64_t, uint64_t>> out(mask.size());
    for (size_t i = 0; i < mask.size(); ++i) {
      uint16_t t = mask[i];
      unsigned lane = t % 32, warpBase = t - lane;
      int64_t w = signExtend(width[t], 32);
      if (w < 1 || w > 32 || (w & (w - 1)) != 0)
        fail(instr, t, "gpu.shuffle with width " + std::to_string(w) + " (a power of two in [1, 32])");
      for (uint16_t u = warpBase; u < warpBase + 32; ++u)
        if (u < k.threads() && active[u] && signExtend(width[u], 32) != w)
          fail(instr, t, "lanes of one warp disagree on gpu.shuffle's width");
      if (lane >= static_cast<unsigned>(w))
        fail(instr, t, "gpu.shuffle executed by a lane outside its member mask (lanes 0.." +
                           std::to_string(w - 1) + ")");
      for (int64_t m = 0; m < w; ++m)
        if (!active[warpBase + m])
          fail(instr, t, "gpu.shuffle executed while lane " + std::to_string(m) +
                             " of its member mask is inactive (shfl.sync needs every lane of the "
                             "mask; divergent shuffles are undefined behaviour)");
      int64_t b = signExtend(offset[t], 32), source = 0;
      bool ok = true;
      switch (instr.imm) {
      case 0: // xor
        source = lane ^ static_cast<unsigned>(b & 31);
        ok = source <= w - 1;
        break;
      case 1: // up
        source = static_cast<int64_t>(lane) - b;
        ok = source >= 0;
        break;
      case 2: // down
        source = static_cast<int64_t>(lane) + b;
        ok = source <= w - 1;
        break;
      default: // idx
        source = b & 31;
        ok = source <= w - 1;
        break;
      }
      if (!ok)
        source = lane;
      out[i] = {value[warpBase + source], ok ? 1u : 0u};
    }
    for (size_t i = 0; i < mask.size(); ++i) {
      result[mask[i]] = out[i].first;
      valid[mask[i]] = out[i].second;
    }
    return;
  }
  default:
    return;
  }
}

std::string Executor::describeViolation(const Violation &v, bool isWrite, unsigned size) const {
  std::ostringstream os;
  const char *access = isWrite ? "write" : "read";
  auto name = [&]() -> std::string {
    if (v.allocation == 0)
      return "a null pointer";
    const Allocation &a = memory.get(v.allocation);
    return a.name + " (" + std::to_string(a.bytes.size()) + " bytes)";
  };
  switch (v.kind) {
  case Violation::Kind::BadPointer:
    os << "a " << access << " through a pointer to no live allocation (allocation " << v.allocation
       << ", offset " << v.offset << ")";
    break;
  case Violation::Kind::WrongSpace:
    os << "a " << access << " of " << name() << " through a pointer of the wrong address space";
    break;
  case Violation::Kind::OutOfBounds:
    os << "out-of-bounds " << access << ": bytes [" << v.offset << ", " << v.offset + size << ") of "
       << name();
    break;
  case Violation::Kind::Misaligned:
    os << "misaligned " << access << " of " << size << " bytes at byte " << v.offset << " of " << name();
    break;
  case Violation::Kind::Race: {
    os << "data race: this " << access << " of byte " << v.offset << " of " << name() << " conflicts with a "
       << (v.otherWasWrite ? "write" : "read") << " by ";
    if (v.acrossCtas) {
      if (v.otherCta == kManyCtas)
        os << "several other CTAs";
      else
        os << "CTA #" << v.otherCta << " (linear index)";
      os << " of the same launch (CTAs run in parallel)";
    } else {
      if (v.otherThread == kManyThreads)
        os << "several other threads";
      else
        os << "thread " << v.otherThread;
      os << " since the last barrier";
    }
    if (v.otherOp < k.ops.size())
      os << "\n  the other access: " << describeOp(k.ops[v.otherOp]);
    break;
  }
  case Violation::Kind::None:
    break;
  }
  return os.str();
}

void Executor::evalMemory(const Instr &instr, const Mask &mask) {
  switch (instr.op) {
  case Op::AddressOf: {
    if (instr.imm > 0) {
      uint64_t word = makePointer(launch->constantTables[static_cast<size_t>(instr.imm - 1)], 0);
      uint64_t *r = reg(instr.out[0]);
      for (uint16_t t : mask)
        r[t] = word;
      return;
    }
    if (!shared)
      fail(instr, -1, "the kernel takes the address of dynamic shared memory, but its launch has "
                      "none (shared_memory.dynamic is 0)");
    uint64_t *r = reg(instr.out[0]);
    uint64_t word = makePointer(shared, 0);
    for (uint16_t t : mask)
      r[t] = word;
    return;
  }
  case Op::GEP: {
    const uint64_t *base = reg(instr.in[0]);
    uint64_t *r = reg(instr.out[0]);
    for (uint16_t t : mask) {
      __int128 offset = pointerOffset(base[t]);
      for (size_t i = 0; i < instr.list.size(); i += 3) {
        int64_t index = instr.list[i + 1];
        if (instr.list[i] >= 0) {
          int32_t slot = static_cast<int32_t>(instr.list[i]);
          index = signExtend(reg(slot)[t], bitsOf(k.slots[slot].kind));
        }
        offset += static_cast<__int128>(index) * instr.list[i + 2];
      }
      if (offset < kMinOffset || offset > kMaxOffset)
        fail(instr, t, "pointer arithmetic moves " + std::to_string(static_cast<int64_t>(offset)) +
                           " bytes from its allocation, beyond what the simulator represents");
      r[t] = makePointer(pointerAllocation(base[t]), static_cast<int64_t>(offset));
    }
    return;
  }
  case Op::Load: {
    const uint64_t *pointer = reg(instr.in[0]);
    uint64_t *r = reg(instr.out[0]);
    unsigned size = static_cast<unsigned>(instr.imm), element = storeBytesOf(instr.resultKind);
    Space space = static_cast<Space>(instr.addressSpace);
    unsigned w = instr.width;
    uint64_t mask64 = widthMask(bitsOf(instr.resultKind));
    uint8_t buffer[64 * 8];
    uint64_t uninitializedBefore = memory.uninitializedReads().count;
    for (uint16_t t : mask) {
      Accessor who = accessor(t, instr.id);
      Violation v = memory.read(pointer[t], space, size, static_cast<unsigned>(instr.imm2), buffer, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, describeViolation(v, false, size));
      for (unsigned e = 0; e < w; ++e) {
        uint64_t word = 0;
        std::memcpy(&word, buffer + e * element, element); // little-endian, as the GPU
        if (instr.resultKind == Kind::I1 && (word & ~uint64_t(1)))
          poison(instr, t, "an i1 load of a byte other than 0 or 1");
        r[size_t(t) * w + e] = word & mask64;
      }
    }
    if (uninitializedBefore == 0 && memory.uninitializedReads().count > 0) {
      const UninitializedReads &u = memory.uninitializedReads();
      counters.firstUninitialized = where(u.firstThread) + ": read byte " + std::to_string(u.firstOffset) +
                                    " of " + memory.get(u.firstAllocation).name +
                                    " before anything wrote it\n  at " + describeOp(k.ops[instr.id]);
    }
    return;
  }
  case Op::Store: {
    const uint64_t *value = reg(instr.in[0]), *pointer = reg(instr.in[1]);
    unsigned size = static_cast<unsigned>(instr.imm), element = storeBytesOf(instr.kind);
    Space space = static_cast<Space>(instr.addressSpace);
    unsigned w = instr.width;
    uint8_t buffer[64 * 8];
    for (uint16_t t : mask) {
      for (unsigned e = 0; e < w; ++e) {
        uint64_t word = value[size_t(t) * w + e];
        std::memcpy(buffer + e * element, &word, element);
      }
      Accessor who = accessor(t, instr.id);
      Violation v = memory.write(pointer[t], space, size, static_cast<unsigned>(instr.imm2), buffer, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, describeViolation(v, true, size));
    }
    return;
  }
  default:
    return;
  }
}

} // namespace pk::sim
