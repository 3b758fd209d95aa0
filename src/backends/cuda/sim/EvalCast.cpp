//===- EvalCast.cpp - Comparisons, select and casts -----------------------===//
//
// As LLVM defines them: cmpi with signed and unsigned predicates, cmpf
// ordered / unordered, sign and zero extension, truncation, float
// extension (exact) and truncation (one rounding to nearest even),
// integer <-> float conversions (fptosi/fptoui of NaN or out-of-range
// values are poison: see Numerics.h).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

namespace pk::sim {

using mlir::arith::CmpFPredicate;
using mlir::arith::CmpIPredicate;

namespace {

bool compareInts(CmpIPredicate p, uint64_t x, uint64_t y, unsigned bits) {
  int64_t sx = signExtend(x, bits), sy = signExtend(y, bits);
  switch (p) {
  case CmpIPredicate::eq:
    return x == y;
  case CmpIPredicate::ne:
    return x != y;
  case CmpIPredicate::slt:
    return sx < sy;
  case CmpIPredicate::sle:
    return sx <= sy;
  case CmpIPredicate::sgt:
    return sx > sy;
  case CmpIPredicate::sge:
    return sx >= sy;
  case CmpIPredicate::ult:
    return x < y;
  case CmpIPredicate::ule:
    return x <= y;
  case CmpIPredicate::ugt:
    return x > y;
  case CmpIPredicate::uge:
    return x >= y;
  }
  return false;
}

bool compareFloats(CmpFPredicate p, double x, double y) {
  bool unordered = std::isnan(x) || std::isnan(y);
  switch (p) {
  case CmpFPredicate::AlwaysFalse:
    return false;
  case CmpFPredicate::OEQ:
    return !unordered && x == y;
  case CmpFPredicate::OGT:
    return !unordered && x > y;
  case CmpFPredicate::OGE:
    return !unordered && x >= y;
  case CmpFPredicate::OLT:
    return !unordered && x < y;
  case CmpFPredicate::OLE:
    return !unordered && x <= y;
  case CmpFPredicate::ONE:
    return !unordered && x != y;
  case CmpFPredicate::ORD:
    return !unordered;
  case CmpFPredicate::UEQ:
    return unordered || x == y;
  case CmpFPredicate::UGT:
    return unordered || x > y;
  case CmpFPredicate::UGE:
    return unordered || x >= y;
  case CmpFPredicate::ULT:
    return unordered || x < y;
  case CmpFPredicate::ULE:
    return unordered || x <= y;
  case CmpFPredicate::UNE:
    return unordered || x != y;
  case CmpFPredicate::UNO:
    return unordered;
  case CmpFPredicate::AlwaysTrue:
    return true;
  }
  return false;
}

constexpr int64_t kNsw = 1, kNuw = 2;

} // namespace

void Executor::evalCompareSelectCast(const Instr &instr, const Mask &mask) {
  const unsigned w = instr.width;
  const uint64_t *a = reg(instr.in[0]);
  uint64_t *r = reg(instr.out[0]);
  const unsigned from = bitsOf(instr.kind), to = bitsOf(instr.resultKind);
  const uint64_t toMask = widthMask(to);
  auto each = [&](auto f) {
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e)
        r[base + e] = f(base + e, t);
    }
  };

  switch (instr.op) {
  case Op::CmpI: {
    const uint64_t *b = reg(instr.in[1]);
    auto p = static_cast<CmpIPredicate>(instr.imm);
    return each([&](size_t i, uint16_t) -> uint64_t { return compareInts(p, a[i], b[i], from); });
  }
  case Op::CmpF: {
    const uint64_t *b = reg(instr.in[1]);
    auto p = static_cast<CmpFPredicate>(instr.imm);
    Kind k = instr.kind;
    return each([&](size_t i, uint16_t) -> uint64_t {
      return compareFloats(p, floatWordToDouble(k, a[i]), floatWordToDouble(k, b[i]));
    });
  }
  case Op::Select: {
    // a is the condition: one per thread, or one per lane.
    const uint64_t *x = reg(instr.in[1]), *y = reg(instr.in[2]);
    bool perLane = instr.imm2 > 1 || w == 1;
    for (uint16_t t : mask) {
      size_t base = size_t(t) * w;
      for (unsigned e = 0; e < w; ++e) {
        uint64_t condition = perLane ? a[base + e] : a[t];
        r[base + e] = condition ? x[base + e] : y[base + e];
      }
    }
    return;
  }
  case Op::ExtSI:
    return each([&](size_t i, uint16_t) { return static_cast<uint64_t>(signExtend(a[i], from)) & toMask; });
  case Op::ExtUI:
    return each([&](size_t i, uint16_t) { return a[i]; });
  case Op::TruncI:
    return each([&](size_t i, uint16_t t) {
      uint64_t v = a[i] & toMask;
      if ((instr.imm & kNuw) && v != a[i])
        poison(instr, t, "a truncation marked nuw dropped set bits");
      if ((instr.imm & kNsw) && signExtend(v, to) != signExtend(a[i], from))
        poison(instr, t, "a truncation marked nsw changed the value");
      return v;
    });
  case Op::IndexCast:
    return each([&](size_t i, uint16_t) {
      return to > from ? static_cast<uint64_t>(signExtend(a[i], from)) & toMask : a[i] & toMask;
    });
  case Op::IndexCastUI:
    return each([&](size_t i, uint16_t) { return a[i] & toMask; });
  case Op::Bitcast:
    return each([&](size_t i, uint16_t) { return a[i] & toMask; });
  case Op::ExtF:
  case Op::TruncF: {
    Kind k = instr.kind, rk = instr.resultKind;
    return each([&](size_t i, uint16_t) { return doubleToFloatWord(rk, floatWordToDouble(k, a[i])); });
  }
  case Op::SIToFP:
  case Op::UIToFP: {
    bool isSigned = instr.op == Op::SIToFP;
    Kind rk = instr.resultKind;
    return each([&](size_t i, uint16_t) { return intToFloatWord(rk, a[i], from, isSigned); });
  }
  case Op::FPToSI:
  case Op::FPToUI: {
    bool isSigned = instr.op == Op::FPToSI;
    Kind k = instr.kind;
    return each([&](size_t i, uint16_t t) {
      bool isPoison = false;
      uint64_t v = floatToIntWord(k, a[i], to, isSigned, isPoison);
      if (isPoison)
        poison(instr, t, isSigned ? "fptosi of NaN or of a value outside the integer type"
                                  : "fptoui of NaN or of a value outside the integer type");
      return v;
    });
  }
  default:
    return;
  }
}

} // namespace pk::sim
