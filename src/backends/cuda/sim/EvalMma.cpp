//===- EvalMma.cpp - One warp's mma.sync m16n8k16 --------------------------===//
//
// mma.sync is a warp-wide instruction: each lane holds pieces of the A, B
// and C tiles, and every lane receives pieces of D = A * B + C. The
// fragment layouts are PTX's (ISA, "Matrix Fragments for mma.m16n8k16"):
// with g = lane / 4 and q = lane % 4,
//
//   a_i: row g + 8 * ((i >> 1) & 1), column 2q + (i & 1) + 8 * (i >> 2)
//   b_i: row 2q + (i & 1) + 8 * (i >> 1), column g
//   c_i: row g + 8 * (i >> 1), column 2q + (i & 1)
//
// where a_0..a_7 and b_0..b_3 are the halves of the A and B registers in
// order (a register's element 0 in its low bits). Products of halves are
// exact in double; the sum is rounded to f32 once, which the tensor cores'
// wider internal accumulation approximates.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Numerics.h"

namespace pk::sim {

void Executor::evalMma(const Instr &instr, const Mask &mask) {
  std::vector<bool> active(k.threads(), false);
  for (uint16_t t : mask)
    active[t] = true;
  // The i-th half of the registers in slots `first`..: a register is a
  // vector of two halves or an i32 holding them.
  auto half = [&](size_t first, uint16_t thread, unsigned i) -> uint64_t {
    int32_t slot = instr.in[first + i / 2];
    const uint64_t *words = reg(slot);
    if (widthOf(slot) == 2)
      return words[size_t(thread) * 2 + i % 2];
    return (words[thread] >> (16 * (i % 2))) & 0xffff;
  };
  auto value = [&](size_t first, uint16_t thread, unsigned i) {
    return floatWordToDouble(instr.kind, half(first, thread, i));
  };
  constexpr size_t kA = 0, kB = 4, kC = 6;

  std::vector<bool> done(k.threads(), false);
  for (uint16_t t : mask) {
    unsigned warpBase = t - t % 32;
    if (done[warpBase])
      continue;
    done[warpBase] = true;
    for (unsigned lane = 0; lane < 32; ++lane)
      if (warpBase + lane >= k.threads() || !active[warpBase + lane])
        fail(instr, t, "mma.sync executed while lane " + std::to_string(lane) +
                           " of its warp is inactive (the instruction needs the whole warp)");
    double a[16][16], b[16][8], c[16][8];
    for (unsigned lane = 0; lane < 32; ++lane) {
      uint16_t thread = static_cast<uint16_t>(warpBase + lane);
      unsigned g = lane / 4, q = lane % 4;
      for (unsigned i = 0; i < 8; ++i)
        a[g + 8 * ((i >> 1) & 1)][2 * q + (i & 1) + 8 * (i >> 2)] = value(kA, thread, i);
      for (unsigned i = 0; i < 4; ++i)
        b[2 * q + (i & 1) + 8 * (i >> 1)][g] = value(kB, thread, i);
      for (unsigned i = 0; i < 4; ++i)
        c[g + 8 * (i >> 1)][2 * q + (i & 1)] = floatWordToDouble(Kind::F32, reg(instr.in[kC + i])[thread]);
    }
    for (unsigned lane = 0; lane < 32; ++lane) {
      uint16_t thread = static_cast<uint16_t>(warpBase + lane);
      unsigned g = lane / 4, q = lane % 4;
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = g + 8 * (i >> 1), column = 2 * q + (i & 1);
        double sum = c[row][column];
        for (unsigned kk = 0; kk < 16; ++kk)
          sum += a[row][kk] * b[kk][column];
        reg(instr.out[i])[thread] = doubleToFloatWord(Kind::F32, sum);
      }
    }
  }
}

} // namespace pk::sim
