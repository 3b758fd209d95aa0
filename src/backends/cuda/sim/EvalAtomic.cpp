//===- EvalAtomic.cpp - atomicrmw, cmpxchg and semaphores -----------------===//
//
// The active threads perform their atomics one after another, in thread
// order (any order is a valid one); each returns the value it replaced.
// A semaphore wait blocks its worker (the scheduler runs the others)
// until a signal brings the counter to the value.
// Float operations round once to the element type, as the GPU's atomic
// units do; fmax / fmin are LLVM's maxnum / minnum.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Kernel.h"
#include "backends/cuda/sim/Numerics.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cmath>
#include <cstring>

namespace pk::sim {

using mlir::LLVM::AtomicBinOp;

namespace {

/// The new value of an atomicrmw; nullopt for an operation not modelled.
std::optional<uint64_t> combine(AtomicBinOp op, Kind kind, uint64_t old, uint64_t operand) {
  unsigned bits = bitsOf(kind);
  uint64_t m = widthMask(bits);
  int64_t so = signExtend(old, bits), sv = signExtend(operand, bits);
  double fo = 0, fv = 0;
  if (isFloatKind(kind)) {
    fo = floatWordToDouble(kind, old);
    fv = floatWordToDouble(kind, operand);
  }
  switch (op) {
  case AtomicBinOp::xchg:
    return operand;
  case AtomicBinOp::add:
    return (old + operand) & m;
  case AtomicBinOp::sub:
    return (old - operand) & m;
  case AtomicBinOp::_and:
    return old & operand;
  case AtomicBinOp::nand:
    return ~(old & operand) & m;
  case AtomicBinOp::_or:
    return old | operand;
  case AtomicBinOp::_xor:
    return old ^ operand;
  case AtomicBinOp::max:
    return so >= sv ? old : operand;
  case AtomicBinOp::min:
    return so <= sv ? old : operand;
  case AtomicBinOp::umax:
    return old >= operand ? old : operand;
  case AtomicBinOp::umin:
    return old <= operand ? old : operand;
  case AtomicBinOp::uinc_wrap:
    return old >= operand ? 0 : (old + 1) & m;
  case AtomicBinOp::udec_wrap:
    return (old == 0 || old > operand) ? operand : old - 1;
  case AtomicBinOp::fadd:
    return doubleToFloatWord(kind, fo + fv); // exact in double, rounded once
  case AtomicBinOp::fsub:
    return doubleToFloatWord(kind, fo - fv);
  case AtomicBinOp::fmax:
  case AtomicBinOp::fmin: {
    if (std::isnan(fo))
      return operand;
    if (std::isnan(fv))
      return old;
    bool max = op == AtomicBinOp::fmax;
    if (fo == fv)
      return (std::signbit(fo) == max) ? operand : old;
    return (max ? fo > fv : fo < fv) ? old : operand;
  }
  case AtomicBinOp::fmaximum:
  case AtomicBinOp::fminimum: {
    if (std::isnan(fo) || std::isnan(fv))
      return doubleToFloatWord(kind, std::nan(""));
    bool max = op == AtomicBinOp::fmaximum;
    if (fo == fv)
      return (std::signbit(fo) == max) ? operand : old;
    return (max ? fo > fv : fo < fv) ? old : operand;
  }
  default:
    return std::nullopt;
  }
}

} // namespace

void Executor::evalAtomic(const Instr &instr, const Mask &mask) {
  const uint64_t *pointer = reg(instr.in[0]);
  uint64_t *result = reg(instr.out[0]);
  Space space = static_cast<Space>(instr.addressSpace);
  unsigned size = storeBytesOf(instr.kind);
  for (uint16_t t : mask) {
    Accessor who = accessor(t, instr.id);
    uint8_t *bytes = nullptr;
    Violation v = memory.atomic(pointer[t], space, size, static_cast<unsigned>(instr.imm2), bytes, who);
    if (v.kind != Violation::Kind::None)
      fail(instr, t, describeViolation(v, true, size));
    uint64_t old = 0;
    std::memcpy(&old, bytes, size);
    uint64_t replacement;
    if (instr.op == Op::CmpXchg) {
      uint64_t expected = reg(instr.in[1])[t], desired = reg(instr.in[2])[t];
      bool equal = old == expected;
      replacement = equal ? desired : old;
      reg(instr.out[1])[t] = equal ? 1 : 0;
    } else {
      std::optional<uint64_t> next =
          combine(static_cast<AtomicBinOp>(instr.imm), instr.kind, old, reg(instr.in[1])[t]);
      if (!next)
        fail(instr, t, "an atomicrmw operation the simulator does not model");
      replacement = *next;
    }
    std::memcpy(bytes, &replacement, size);
    result[t] = old;
  }
}

void Executor::evalSemaphore(const Instr &instr, const Mask &mask) {
  bool wait = instr.op == Op::SemWait;
  if (instr.op == Op::AtomicLoad) {
    uint64_t *result = reg(instr.out[0]);
    for (uint16_t t : mask) {
      uint64_t pointer = reg(instr.in[0])[t];
      Accessor who = accessor(t, instr.id);
      uint8_t *bytes = nullptr;
      Violation v = memory.atomic(pointer, memory.spaceOf(pointer), 4, 4, bytes, who);
      if (v.kind != Violation::Kind::None)
        fail(instr, t, describeViolation(v, false, 4));
      uint32_t value = 0;
      std::memcpy(&value, bytes, 4);
      result[t] = value;
    }
    return;
  }
  for (uint16_t t : mask) {
    uint64_t pointer = reg(instr.in[0])[t];
    uint32_t operand = static_cast<uint32_t>(reg(instr.in[1])[t]);
    // The pointer is generic: the counter is where its allocation is.
    Space space = memory.spaceOf(pointer);
    Accessor who = accessor(t, instr.id);
    uint8_t *bytes = nullptr;
    Violation v = memory.atomic(pointer, space, 4, 4, bytes, who);
    if (v.kind != Violation::Kind::None)
      fail(instr, t, describeViolation(v, true, 4));
    auto read = [bytes] {
      uint32_t value = 0;
      std::memcpy(&value, bytes, 4);
      return value;
    };
    if (!wait) {
      uint32_t next = read() + operand;
      std::memcpy(bytes, &next, 4);
      continue;
    }
    auto reached = [&read, operand] { return read() >= operand; };
    if (!reached()) {
      std::string what = "for the semaphore at " +
                         std::string(space == Space::Shared ? "shared" : "global") + " byte " +
                         std::to_string(pointerOffset(pointer)) + " to reach " +
                         std::to_string(operand);
      if (!workers)
        fail(instr, t,
             "deadlock: the CTA waits " + what + "\n  and nothing else runs to signal it");
      workers->wait(nullptr, what + "\n    at " + describeOp(k.ops[instr.id]), reached);
    }
    if (instr.imm == 0) {
      uint32_t next = read() - operand;
      std::memcpy(bytes, &next, 4);
    }
    // What the signals released is visible from here on, in this CTA and
    // (the simulator does not follow which CTAs a semaphore links) in all.
    launch->launch = (*launch->launchCounter)++;
    synchronizeCta();
  }
}

} // namespace pk::sim
