//===- EvalWgmma.cpp - wgmma.mma_async of one warpgroup -------------------===//
//
// PTX ISA semantics, modelled independently of the compiler's Wgmma.cpp:
// one wgmma.mma_async.m64nNk16 of a warpgroup computes D = A B (+ D) for
// A 64 x 16 (in shared memory, or for 16-bit types in registers) and B 16 x N (m64nNk8 and 64 x 8, 8 x N for tf32, whose
// 32-bit elements are read K-major only and truncated to their 19 high
// bits, as the tensor cores read f32 words; m64nNk32 for s8 / u8, K-major,
// into s32 accumulators that wrap) read from shared memory
// through their matrix
// descriptors ("Matrix Descriptor Format": start address, leading and
// stride byte offsets, swizzle mode), D in the accumulator fragment of
// "Register Fragments: wgmma D": thread i of the warpgroup (warp w, lane
// l) holds, in register r, row 16 w + l / 4 + 8 ((r % 4) / 2) and column
// 8 (r / 4) + 2 (l % 4) + r % 2. Operands are read from the canonical
// swizzled layouts ("Shared Memory Matrix Layout"); the unswizzled
// (interleaved) ones are not modelled. The instruction computes when it
// is issued; products are exact and summed in double, rounded to f32 once.
// The hardware may read its operands any time until the wgmma.wait_group
// that retires it: the values read are kept with its group, and that wait
// reads them again and fails if any changed (a copy or store into a
// buffer a wgmma still reads).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/MatrixDescriptor.h"
#include "backends/cuda/sim/Numerics.h"

#include <cstring>

namespace pk::sim {

MatrixDescriptor decodeWgmmaDescriptor(uint64_t d) {
  MatrixDescriptor r;
  r.start = (d & 0x3FFF) << 4;
  r.leading = ((d >> 16) & 0x3FFF) << 4;
  r.stride = ((d >> 32) & 0x3FFF) << 4;
  switch (d >> 62) {
  case 1: r.span = 128; break;
  case 2: r.span = 64; break;
  case 3: r.span = 32; break;
  default: r.span = 0; break;
  }
  return r;
}

uint64_t operandElementAddress(const MatrixDescriptor &d, bool mnMajor, unsigned mn, unsigned k,
                               unsigned bytes) {
  uint64_t address;
  if (!mnMajor)
    address = d.start + (mn / 8) * d.stride + (mn % 8) * d.span + k * bytes;
  else
    address = d.start + (uint64_t(mn) * bytes / d.span) * d.leading + (k / 8) * d.stride +
              (k % 8) * d.span + (uint64_t(mn) * bytes % d.span);
  return static_cast<uint64_t>(swizzledAddress(static_cast<int64_t>(address), d.span));
}

void Executor::evalWgmma(const Instr &instr, const Mask &mask) {
  unsigned n = static_cast<unsigned>(instr.imm);
  bool accumulate = instr.imm2 & 1, aMnMajor = instr.imm2 & 2, bMnMajor = instr.imm2 & 4,
       aRegisters = instr.imm2 & 8;
  if (mask.size() % 128 != 0)
    fail(instr, mask.front(), "wgmma executed by " + std::to_string(mask.size()) +
                                  " threads; it needs whole warpgroups");
  for (size_t g = 0; g < mask.size(); g += 128) {
    uint16_t first = mask[g];
    if (first % 128 != 0 || mask[g + 127] != first + 127)
      fail(instr, first, "wgmma executed by a part of a warpgroup (it needs all 128 threads)");
    uint64_t da = reg(instr.in[0])[first], db = reg(instr.in[1])[first];
    for (unsigned t = 1; t < 128; ++t)
      if (reg(instr.in[0])[first + t] != da || reg(instr.in[1])[first + t] != db)
        fail(instr, first + t, "threads of a warpgroup disagree on wgmma's matrix descriptors");
    MatrixDescriptor a = decodeWgmmaDescriptor(da), b = decodeWgmmaDescriptor(db);
    if ((!aRegisters && !a.span) || !b.span)
      fail(instr, first, "a wgmma operand without a swizzle (the interleaved layouts are not modelled)");
    bool tf32 = instr.kind == Kind::F32, integer = instr.kind == Kind::I8;
    unsigned size = tf32 ? 4 : integer ? 1 : 2, depth = tf32 ? 8 : integer ? 32 : 16;
    // 8-bit integers: exact in a double; `operand` 0 is A, 1 is B.
    auto read = [&](uint64_t address, int operand) {
      uint8_t bytes[4] = {};
      uint64_t pointer = makePointer(shared, static_cast<int64_t>(address));
      Accessor who = accessor(first, instr.id);
      Violation v = memory.read(pointer, Space::Shared, size, size, bytes, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, first, "a wgmma operand: " + describeViolation(v, false, size));
      uint32_t word = 0;
      std::memcpy(&word, bytes, size); // little-endian, as the GPU
      wgmmas[first / 128].open.push_back({address, word, static_cast<uint8_t>(size)});
      if (integer)
        return instr.list[operand] ? static_cast<double>(static_cast<int8_t>(word)) : static_cast<double>(word);
      return floatWordToDouble(instr.kind, tf32 ? word & 0xFFFFE000u : word);
    };
    double A[64][32], B[32][256];
    if (aRegisters) {
      // "Register fragment wgmma A" (16-bit types): thread i (warp w,
      // lane l) holds in word j the elements (row 16 w + l / 4 + 8 (j % 2),
      // column 8 (j / 2) + 2 (l % 4) + h), half h = 0 in the low bits.
      size_t words = 2 + n / 2;
      for (unsigned i = 0; i < 128; ++i) {
        unsigned w = i / 32, l = i % 32;
        for (unsigned j = 0; j < 4; ++j) {
          uint64_t word = reg(instr.in[words + j])[first + i];
          for (unsigned h = 0; h < 2; ++h)
            A[16 * w + l / 4 + 8 * (j % 2)][8 * (j / 2) + 2 * (l % 4) + h] =
                floatWordToDouble(instr.kind, static_cast<uint32_t>((word >> (16 * h)) & 0xFFFF));
        }
      }
    } else {
      for (unsigned m = 0; m < 64; ++m)
        for (unsigned k = 0; k < depth; ++k)
          A[m][k] = read(operandElementAddress(a, aMnMajor, m, k, size), 0);
    }
    for (unsigned k = 0; k < depth; ++k)
      for (unsigned c = 0; c < n; ++c)
        B[k][c] = read(operandElementAddress(b, bMnMajor, c, k, size), 1);
    for (unsigned i = 0; i < 128; ++i) {
      uint16_t thread = static_cast<uint16_t>(first + i);
      unsigned w = i / 32, l = i % 32;
      for (unsigned r = 0; r < n / 2; ++r) {
        unsigned row = 16 * w + l / 4 + 8 * ((r % 4) / 2), column = 8 * (r / 4) + 2 * (l % 4) + r % 2;
        double products = 0;
        for (unsigned k = 0; k < depth; ++k)
          products += A[row][k] * B[k][column];
        if (integer) { // s32: the sum wraps (no .satfinite)
          uint32_t sum = accumulate ? static_cast<uint32_t>(reg(instr.in[2 + r])[thread]) : 0u;
          sum += static_cast<uint32_t>(static_cast<int64_t>(products));
          reg(instr.out[r])[thread] = sum;
          continue;
        }
        double sum = accumulate ? floatWordToDouble(Kind::F32, reg(instr.in[2 + r])[thread]) : 0.0;
        reg(instr.out[r])[thread] = doubleToFloatWord(Kind::F32, sum + products);
      }
    }
  }
}

void Executor::evalWgmmaGroups(const Instr &instr, const Mask &mask) {
  for (uint16_t first : mask) {
    if (first % 128 != 0)
      continue;
    AsyncGroups<WgmmaRead> &w = wgmmas[first / 128];
    if (instr.op == Op::WgmmaCommit) {
      w.commit();
      continue;
    }
    // What the retiring groups read must not have changed since they
    // were issued.
    w.retireAllBut(instr.imm, [&](const std::vector<WgmmaRead> &group) {
      for (const WgmmaRead &r : group) {
        uint8_t bytes[4] = {};
        uint64_t pointer = makePointer(shared, static_cast<int64_t>(r.address));
        Accessor who = accessor(first, instr.id);
        Violation v = memory.read(pointer, Space::Shared, r.bytes, r.bytes, bytes, who);
        if (v.kind != Violation::Kind::None)
          fail(instr, first,
               "a wgmma operand, as the wait retiring it reads it: " +
                   describeViolation(v, false, r.bytes));
        uint32_t word = 0;
        std::memcpy(&word, bytes, r.bytes);
        if (word != r.value)
          fail(instr, first,
               "shared memory a wgmma in flight reads (byte " + std::to_string(r.address) +
                   ") changed before the wgmma.wait_group that retires it: the tensor cores may "
                   "read either value");
      }
    });
  }
}

} // namespace pk::sim
