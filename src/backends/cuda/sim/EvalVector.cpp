//===- EvalVector.cpp - A thread's registers as 1-D vectors ---------------===//
#include "backends/cuda/sim/Executor.h"

namespace pk::sim {

namespace {
/// What a poison lane (a shuffle mask of -1) holds: recognizably garbage.
constexpr uint64_t kPoisonPattern = 0xdeadbeefcafef00dull;
} // namespace

void Executor::evalVector(const Instr &instr, const Mask &mask) {
  const unsigned w = instr.width;
  uint64_t *r = reg(instr.out[0]);
  const uint64_t resultMask = widthMask(bitsOf(instr.resultKind));
  switch (instr.op) {
  case Op::VExtract: {
    const uint64_t *source = reg(instr.in[0]);
    unsigned sourceWidth = static_cast<unsigned>(instr.imm2);
    const uint64_t *position = instr.imm < 0 ? reg(instr.in[1]) : nullptr;
    for (uint16_t t : mask) {
      int64_t p = position ? signExtend(position[t], bitsOf(k.slots[instr.in[1]].kind)) : instr.imm;
      if (p < 0 || p >= sourceWidth) {
        poison(instr, t, "vector.extract at a position outside the vector");
        r[t] = kPoisonPattern & resultMask;
        continue;
      }
      r[t] = source[size_t(t) * sourceWidth + p];
    }
    return;
  }
  case Op::VInsert: {
    const uint64_t *scalar = reg(instr.in[0]), *dest = reg(instr.in[1]);
    const uint64_t *position = instr.imm < 0 ? reg(instr.in[2]) : nullptr;
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      std::copy(dest + base, dest + base + w, r + base);
      int64_t p = position ? signExtend(position[t], bitsOf(k.slots[instr.in[2]].kind)) : instr.imm;
      if (p < 0 || p >= w) {
        poison(instr, t, "vector.insert at a position outside the vector");
        continue;
      }
      r[base + p] = scalar[t];
    }
    return;
  }
  case Op::Repack: {
    // A bitcast between types of one size: the source's elements laid end
    // to end, element 0 in the low bits (little-endian, as on the GPU),
    // cut into the result's elements.
    const uint64_t *source = reg(instr.in[0]);
    const unsigned sourceWidth = static_cast<unsigned>(instr.imm2);
    const unsigned sourceBits = bitsOf(instr.kind), resultBits = bitsOf(instr.resultKind);
    for (uint16_t t : mask) {
      for (unsigned e = 0; e < w; ++e)
        r[size_t(t) * w + e] = 0;
      for (unsigned bit = 0; bit < sourceWidth * sourceBits; ++bit) {
        uint64_t value = (source[size_t(t) * sourceWidth + bit / sourceBits] >> (bit % sourceBits)) & 1;
        r[size_t(t) * w + bit / resultBits] |= value << (bit % resultBits);
      }
    }
    return;
  }
  case Op::VFromElements: {
    for (unsigned e = 0; e < w; ++e) {
      const uint64_t *element = reg(instr.in[e]);
      for (uint16_t t : mask)
        r[size_t(t) * w + e] = element[t];
    }
    return;
  }
  case Op::VBroadcast: {
    const uint64_t *source = reg(instr.in[0]);
    bool scalar = instr.imm == 1;
    for (uint16_t t : mask)
      for (unsigned e = 0; e < w; ++e)
        r[size_t(t) * w + e] = scalar ? source[t] : source[size_t(t) * w + e];
    return;
  }
  case Op::VShuffle: {
    const uint64_t *v1 = reg(instr.in[0]), *v2 = reg(instr.in[1]);
    size_t w1 = static_cast<size_t>(instr.imm), w2 = static_cast<size_t>(instr.imm2);
    // The result may not alias an operand (SSA), so write directly.
    for (uint16_t t : mask)
      for (unsigned e = 0; e < w; ++e) {
        int64_t m = instr.list[e];
        uint64_t v;
        if (m < 0)
          v = kPoisonPattern & resultMask;
        else if (static_cast<size_t>(m) < w1)
          v = v1[t * w1 + m];
        else
          v = v2[t * w2 + (m - w1)];
        r[size_t(t) * w + e] = v;
      }
    return;
  }
  default:
    return;
  }
}

} // namespace pk::sim
