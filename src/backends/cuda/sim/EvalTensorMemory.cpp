//===- EvalTensorMemory.cpp - Blackwell's tensor memory and tcgen05 -------===//
//
// PTX ISA semantics of the sm_100a instructions pkc emits, modelled from
// the ISA and independently of the compiler's LowerTensorMemory.cpp:
//
// - tcgen05.alloc (a warp): the CTA's tensor memory, 128 lanes of
//   `columns` (a power of two from 32 to 512) 32-bit columns; the address
//   of lane 0, column 0 (lane << 16 | column) is written into the 4 bytes
//   of shared memory the instruction names. One allocation per CTA.
// - tcgen05.ld / st .32x32b.xN (a warp): warp w of the CTA reaches lanes
//   32 (w % 4) to 32 (w % 4) + 31 only, and the address's lane must be the
//   first of them; thread l moves lane + l, columns column to column + N.
// - tcgen05.mma.cta_group::1.kind::f16: D (M x N, f32, lanes 0 to M - 1
//   from D's column) = A B (+ D), A M x K and B K x N of f16 or bf16 read
//   through shared memory descriptors ("Shared Memory Descriptor": wgmma's
//   fields, the version 0b001 in bits 46-48, the swizzle in bits 61-63)
//   and the instruction descriptor ("Instruction descriptor": D, A and B
//   formats, majorness, N / 8, M / 16), K = 16. It completes when issued,
//   products exact and summed in double, rounded to f32 once.
// - tcgen05.commit: one arrival at the mbarrier (the MMAs are done).
// - clusterlaunchcontrol.try_cancel: the answer is "not cancelled", which
//   the hardware may always give (the CTAs of a launch all run here): 16
//   zero bytes into shared memory (of each CTA of the cluster with
//   .multicast), completing 16 transaction bytes on the mbarrier;
//   query_cancel reads bit 0 (is_canceled) or a CTA id word.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/MatrixDescriptor.h"
#include "backends/cuda/sim/Numerics.h"

#include <cstring>

namespace pk::sim {

namespace {

constexpr unsigned kLanes = 128, kColumns = 512;

/// A tcgen05 shared memory descriptor, or a reason it is not one pkc's
/// model reads.
bool decodeTcgen05Descriptor(uint64_t d, MatrixDescriptor &r, std::string &why) {
  if (((d >> 46) & 7) != 1) {
    why = "its bits 46-48 are not the fixed 0b001";
    return false;
  }
  if (((d >> 49) & 7) != 0 || ((d >> 52) & 1) != 0) {
    why = "it has a base offset or an absolute leading dimension (not modelled)";
    return false;
  }
  r.start = (d & 0x3FFF) << 4;
  r.leading = ((d >> 16) & 0x3FFF) << 4;
  r.stride = ((d >> 32) & 0x3FFF) << 4;
  switch (d >> 61) {
  case 2:
    r.span = 128;
    return true;
  case 4:
    r.span = 64;
    return true;
  case 6:
    r.span = 32;
    return true;
  default:
    why = "its swizzle mode " + std::to_string(d >> 61) +
          " is not one of 128, 64 or 32 bytes (the others are not modelled)";
    return false;
  }
}

} // namespace

void Executor::evalTensorMemory(const Instr &instr, const Mask &mask) {
  auto lanesOf = [&](uint16_t t) { return 32u * ((t / 32u) % 4u); };
  auto needMemory = [&](uint16_t t) {
    if (tensorMemory.empty())
      fail(instr, t, "tensor memory used before tcgen05.alloc");
  };
  switch (instr.op) {
  case Op::TmemAlloc: {
    uint16_t first = mask.front();
    if (mask.size() != 32 || first % 32 != 0)
      fail(instr, first,
           "tcgen05.alloc executed by " + std::to_string(mask.size()) +
               " threads; it takes one whole warp");
    uint64_t columns = reg(instr.in[1])[first] & 0xffffffffu;
    if (columns < 32 || columns > kColumns || (columns & (columns - 1)))
      fail(instr, first,
           "tcgen05.alloc of " + std::to_string(columns) +
               " columns (a power of two from 32 to 512)");
    if (!tensorMemory.empty())
      fail(instr, first, "a second tcgen05.alloc in a CTA (not modelled)");
    tensorMemory.assign(size_t(kLanes) * kColumns, 0x7fffffffu); // uninitialized: NaN
    allocatedColumns = static_cast<unsigned>(columns);
    uint32_t address = 0;
    Accessor who = accessor(first, instr.id);
    Violation v = memory.write(reg(instr.in[0])[first], Space::Shared, 4, 4, &address, who);
    if (v.kind != Violation::Kind::None)
      fail(instr, first, "tcgen05.alloc's address: " + describeViolation(v, true, 4));
    return;
  }
  case Op::TmemLoad:
  case Op::TmemStore: {
    bool load = instr.op == Op::TmemLoad;
    unsigned n = load ? instr.width : static_cast<unsigned>(instr.imm);
    for (uint16_t t : mask) {
      needMemory(t);
      uint32_t address = static_cast<uint32_t>(reg(instr.in[0])[t]);
      unsigned lane = address >> 16, column = address & 0xffff;
      if (lane != lanesOf(t))
        fail(instr, t,
             std::string(load ? "tcgen05.ld" : "tcgen05.st") + " by warp " +
                 std::to_string(t / 32) + " of lanes from " + std::to_string(lane) +
                 ": a warp reaches lanes " + std::to_string(lanesOf(t)) + " to " +
                 std::to_string(lanesOf(t) + 31) + " only, from the first");
      if (column + n > allocatedColumns)
        fail(instr, t,
             "tensor memory columns " + std::to_string(column) + " to " +
                 std::to_string(column + n - 1) + " outside the " +
                 std::to_string(allocatedColumns) + " allocated");
      uint32_t *row = &tensorMemory[size_t(lane + t % 32) * kColumns + column];
      for (unsigned j = 0; j < n; ++j) {
        if (load)
          reg(instr.out[0])[size_t(t) * n + j] = row[j];
        else
          row[j] = static_cast<uint32_t>(reg(instr.in[1])[size_t(t) * n + j]);
      }
    }
    return;
  }
  case Op::Tcgen05Mma:
    for (uint16_t t : mask) {
      needMemory(t);
      uint32_t d = static_cast<uint32_t>(reg(instr.in[0])[t]);
      uint64_t da = reg(instr.in[1])[t], db = reg(instr.in[2])[t];
      uint32_t id = static_cast<uint32_t>(reg(instr.in[3])[t]);
      bool accumulate = reg(instr.in[4])[t] & 1;
      unsigned dFormat = (id >> 4) & 3, aFormat = (id >> 7) & 7, bFormat = (id >> 10) & 7;
      bool aMnMajor = (id >> 15) & 1, bMnMajor = (id >> 16) & 1;
      unsigned n = ((id >> 17) & 0x3f) << 3, m = ((id >> 24) & 0x1f) << 4;
      if (dFormat != 1 || aFormat > 1 || aFormat != bFormat || (id & 0xf) || ((id >> 13) & 3))
        fail(instr, t,
             "a tcgen05.mma instruction descriptor other than f16 or bf16 operands "
             "with an f32 accumulator (no sparsity, saturation or negation)");
      if (m != 128 || n < 8 || n > 256)
        fail(instr, t,
             "a tcgen05.mma of M = " + std::to_string(m) + ", N = " + std::to_string(n) +
                 " (modelled: M = 128, N a multiple of 8 up to 256)");
      if ((d >> 16) != 0 || (d & 0xffff) + n > allocatedColumns)
        fail(instr, t,
             "tcgen05.mma's D (lane " + std::to_string(d >> 16) + ", columns " +
                 std::to_string(d & 0xffff) + " to " + std::to_string((d & 0xffff) + n - 1) +
                 ") is not in lanes 0-127 of "
                 "the " +
                 std::to_string(allocatedColumns) + " allocated columns");
      MatrixDescriptor a, b;
      std::string why;
      if (!decodeTcgen05Descriptor(da, a, why))
        fail(instr, t, "tcgen05.mma's A descriptor: " + why);
      if (!decodeTcgen05Descriptor(db, b, why))
        fail(instr, t, "tcgen05.mma's B descriptor: " + why);
      Kind kind = aFormat == 1 ? Kind::BF16 : Kind::F16;
      auto read = [&](uint64_t address) {
        uint8_t bytes[2] = {};
        uint64_t pointer = makePointer(shared, static_cast<int64_t>(address));
        Accessor who = accessor(t, instr.id);
        Violation v = memory.read(pointer, Space::Shared, 2, 2, bytes, who);
        if (v.kind != Violation::Kind::None)
          fail(instr, t, "a tcgen05.mma operand: " + describeViolation(v, false, 2));
        uint16_t word = 0;
        std::memcpy(&word, bytes, 2);
        return floatWordToDouble(kind, word);
      };
      constexpr unsigned kDepth = 16;
      std::vector<double> A(size_t(m) * kDepth), B(size_t(kDepth) * n);
      for (unsigned row = 0; row < m; ++row)
        for (unsigned k = 0; k < kDepth; ++k)
          A[row * kDepth + k] = read(operandElementAddress(a, aMnMajor, row, k, 2));
      for (unsigned k = 0; k < kDepth; ++k)
        for (unsigned c = 0; c < n; ++c)
          B[k * n + c] = read(operandElementAddress(b, bMnMajor, c, k, 2));
      for (unsigned row = 0; row < m; ++row)
        for (unsigned c = 0; c < n; ++c) {
          uint32_t &out = tensorMemory[size_t(row) * kColumns + (d & 0xffff) + c];
          double sum = accumulate ? floatWordToDouble(Kind::F32, out) : 0.0;
          for (unsigned k = 0; k < kDepth; ++k)
            sum += A[row * kDepth + k] * B[k * n + c];
          out = static_cast<uint32_t>(doubleToFloatWord(Kind::F32, sum));
        }
    }
    return;
  case Op::Tcgen05Commit:
    for (uint16_t t : mask) {
      Mbarrier &m = mbarrierAt(instr, t, reg(instr.in[0])[t]);
      --m.pending;
      completeIfDone(m);
    }
    return;
  case Op::ClcTryCancel:
    for (uint16_t t : mask) {
      uint64_t answer = reg(instr.in[0])[t], barrier = reg(instr.in[1])[t];
      std::vector<Executor *> receivers{this};
      if (instr.imm)
        receivers = cluster->ctas;
      for (Executor *receiver : receivers) {
        uint8_t zeros[16] = {};
        Accessor who = accessor(t, instr.id);
        Violation v = memory.write(atPeer(receiver, answer), Space::Shared, 16, 16, zeros, who);
        if (v.kind != Violation::Kind::None)
          fail(instr, t,
               "clusterlaunchcontrol.try_cancel's answer: " + describeViolation(v, true, 16));
        Mbarrier &m = mbarrierAt(instr, t, atPeer(receiver, barrier));
        m.transactions -= 16;
        if (receiver != this)
          m.fromPeers += 16;
        receiver->completeIfDone(m);
      }
    }
    return;
  case Op::ClcQuery:
    // The answer is two 64-bit words (low first); is_canceled is bit 0
    // of ours, the CTA ids are what a cancelling answer would hold.
    for (uint16_t t : mask) {
      uint64_t low = reg(instr.in[0])[size_t(t) * 2];
      reg(instr.out[0])[t] = instr.imm == 0 ? (low & 1) : ((low >> 32) & 0xffffffffu);
    }
    return;
  default:
    fail(instr, mask.front(), "internal error: not a tensor memory instruction");
  }
}

} // namespace pk::sim
