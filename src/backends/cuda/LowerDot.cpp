//===- LowerDot.cpp - Matrix products -------------------------------------===//
//
// x @ y on the tensor cores (f16/bf16 operands): the operands arrive in the
// mma.sync fragment layouts (pk-gpu-assign-layouts converted them), so
// each warp issues mma.sync m16n8k16 over its tiles and the K steps, and
// the result stays in the accumulator layout.
//
// Otherwise with FMAs: the operands go to shared memory one K-chunk at a
// time (small enough to fit next to the kernel's scratch), and each thread
// accumulates the elements of the result its layout gives it, in f32 (i32
// for integers; f64 when the operands are f64), rounding once at the end.
// f32 operands of a dot that allows TF32 are truncated to it first, as
// the tensor cores read them (pk-gpu-wgmma-dots), so that a dot's result
// does not depend on which path it took.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// Shared memory for the FMA path's operand chunks: 64 KiB when the
/// kernel's scratch leaves that much under the smallest limit (99 KiB on
/// sm_86/sm_89), so that most dots stage K whole, once; else 32 KiB.
constexpr int64_t kChunkBytes = 32 * 1024, kWholeChunkBytes = 64 * 1024;

Type accumulatorType(Emitter &e, Type in, Type out) {
  if (llvm::isa<FloatType>(in))
    return in.isF64() || out.isF64() ? Type(e.b.getF64Type()) : Type(e.b.getF32Type());
  return in.getIntOrFloatBitWidth() == 64 || out.getIntOrFloatBitWidth() == 64
             ? Type(e.b.getI64Type())
             : Type(e.b.getI32Type());
}

/// `v` as a `to`; a narrower integer widens by zero extension when
/// `zeroExtend` (the dot's unsigned_operands), by sign extension otherwise.
Value convertElement(Emitter &e, Value v, Type to, bool zeroExtend = false) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (llvm::isa<FloatType>(to)) {
    if (!llvm::isa<FloatType>(from))
      return arith::SIToFPOp::create(e.b, e.loc, to, v);
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? Value(arith::ExtFOp::create(e.b, e.loc, to, v))
               : Value(arith::TruncFOp::create(e.b, e.loc, to, v));
  }
  if (from.getIntOrFloatBitWidth() >= to.getIntOrFloatBitWidth())
    return arith::TruncIOp::create(e.b, e.loc, to, v);
  return zeroExtend ? Value(arith::ExtUIOp::create(e.b, e.loc, to, v))
                    : Value(arith::ExtSIOp::create(e.b, e.loc, to, v));
}

/// Writes the elements of an operand whose K coordinate falls in
/// [chunkStart, chunkStart + chunk) to shared memory at `offset`: as the
/// logical matrix (A is [M][K], B is [K][N]; `swapped` when the operand
/// holds its transpose), with K relative to the chunk, row-major with
/// `rowStride`. Registers that are adjacent along a stored row (the low
/// register bits run along the logical dimension 1) go out as one vector
/// store; a chunk that covers all of K needs no test of the K coordinate.
void writeChunk(Emitter &e, Value vector, RankedTensorType type, bool swapped, unsigned kDim,
                int64_t chunkStart, int64_t chunk, int64_t rowStride, int64_t offset) {
  Layout layout = *layoutOf(type);
  Type element = type.getElementType();
  Value owner = e.isOwner(layout);
  unsigned kValueDim = swapped ? 1 - kDim : kDim, rowValueDim = swapped ? 0 : 1;
  bool wholeK = chunkStart == 0 && chunk >= type.getShape()[kValueDim];
  int64_t bytes = elementBytes(element);
  int64_t width = 1;
  if (element.getIntOrFloatBitWidth() >= 8)
    while (width < 16 / bytes && width < layout.numRegisters() &&
           layout.regs[llvm::Log2_64(width)] == Basis{static_cast<int>(rowValueDim), static_cast<int>(llvm::Log2_64(width))} &&
           type.getShape()[rowValueDim] % (2 * width) == 0 && rowStride % (2 * width) == 0 &&
           offset % (2 * width * bytes) == 0 && (rowValueDim != kValueDim || chunk % (2 * width) == 0))
      width *= 2;
  auto groupType = VectorType::get({width}, element);
  for (int64_t k = 0; k < layout.numRegisters(); k += width) {
    SmallVector<Value> c = e.coordinates(layout, k);
    Value logical[2] = {swapped ? c[1] : c[0], swapped ? c[0] : c[1]};
    Value kc = logical[kDim];
    Value inChunk;
    if (auto fixed = getConstantIntValue(kc)) {
      if (*fixed < chunkStart || *fixed >= chunkStart + chunk)
        continue;
    } else if (!wholeK) {
      Value above = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::sge, kc, e.index(chunkStart));
      Value below = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::slt, kc,
                                          e.index(chunkStart + chunk));
      inChunk = arith::AndIOp::create(e.b, e.loc, above, below);
    }
    Value valid = e.andOf(e.andOf(owner, e.inShape(layout, type.getShape(), k)), inChunk);
    e.guarded(valid, [&] {
      Value at[2] = {logical[0], logical[1]};
      at[kDim] = chunkStart ? arith::SubIOp::create(e.b, e.loc, kc, e.index(chunkStart)).getResult() : kc;
      Value linear = arith::AddIOp::create(
          e.b, e.loc, arith::MulIOp::create(e.b, e.loc, at[0], e.index(rowStride)), at[1]);
      Value pointer = e.sharedPointer(e.index(offset), element, linear);
      if (width == 1) {
        e.storeValue(e.extract(vector, k), pointer, element);
        return;
      }
      SmallVector<Value> group;
      for (int64_t t = 0; t < width; ++t)
        group.push_back(e.extract(vector, k + t));
      LLVM::StoreOp::create(e.b, e.loc, e.fromElements(groupType, group), pointer,
                            static_cast<unsigned>(width * bytes));
    });
  }
}

/// The f32 registers `vector` truncated to TF32: their 13 low mantissa
/// bits cleared, which is what the tensor cores ignore.
Value truncatedToTf32(Emitter &e, Value vector) {
  auto type = llvm::cast<VectorType>(vector.getType());
  Type i32 = e.b.getI32Type();
  Value mask = e.constant(i32, -8192.0); // 0xFFFFE000
  SmallVector<Value> elements;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    Value bits = arith::BitcastOp::create(e.b, e.loc, i32, e.extract(vector, k));
    bits = arith::AndIOp::create(e.b, e.loc, bits, mask);
    elements.push_back(arith::BitcastOp::create(e.b, e.loc, type.getElementType(), bits));
  }
  return e.fromElements(type, elements);
}

/// The register index of `layout` that has `fixed` (basis -> bit value)
/// bits set and all others clear.
int64_t registerIndex(const Layout &layout, ArrayRef<std::pair<Basis, int64_t>> fixed) {
  int64_t k = 0;
  for (auto [basis, bit] : fixed)
    if (bit)
      k |= int64_t(1) << layout.registerBit(basis);
  return k;
}

/// The register bits of `layout` that are not the fragment's own: tiles
/// and K steps.
SmallVector<Basis> outerBits(const Layout &layout, unsigned fragmentBits) {
  return SmallVector<Basis>(layout.regs.begin() + fragmentBits, layout.regs.end());
}

/// A operand elements past K are padding: zero them so they add nothing.
Value zeroKPadding(Emitter &e, Value vector, const Layout &layout, ArrayRef<int64_t> logical,
                   unsigned kDim) {
  if (logical[kDim] >= layout.shape[kDim])
    return vector;
  auto type = llvm::cast<VectorType>(vector.getType());
  Value zero = e.constant(type.getElementType(), 0);
  SmallVector<int64_t> kOnly(layout.shape.begin(), layout.shape.end());
  kOnly[kDim] = logical[kDim];
  SmallVector<Value> elements;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    Value v = e.extract(vector, k);
    if (Value inside = e.inShape(layout, kOnly, k))
      v = arith::SelectOp::create(e.b, e.loc, inside, v, zero);
    elements.push_back(v);
  }
  return e.fromElements(type, elements);
}

LogicalResult lowerMma(Emitter &e, pk::DotOp op, const Layout::Mma &mma) {
  auto lhsType = llvm::cast<RankedTensorType>(op.getLhs().getType());
  auto result = llvm::cast<RankedTensorType>(op.getType());
  Type in = lhsType.getElementType();
  // The operands as (m, k) and (k, n) in their mma layouts: a transposed
  // operand's layout is the transposed mma layout, so its registers are
  // already in place.
  auto lhsShape = lhsType.getShape();
  auto rhsShape = llvm::cast<RankedTensorType>(op.getRhs().getType()).getShape();
  SmallVector<int64_t> aLogical = op.getTransposeLhs() ? SmallVector<int64_t>{lhsShape[1], lhsShape[0]}
                                                       : SmallVector<int64_t>(lhsShape);
  SmallVector<int64_t> bLogical = op.getTransposeRhs() ? SmallVector<int64_t>{rhsShape[1], rhsShape[0]}
                                                       : SmallVector<int64_t>(rhsShape);
  Value a = zeroKPadding(e, e.values.lookup(op.getLhs()), mma.a, aLogical, 1);
  Value b = zeroKPadding(e, e.values.lookup(op.getRhs()), mma.b, bLogical, 0);

  MLIRContext *ctx = e.b.getContext();
  Type f32 = e.b.getF32Type();
  auto fragment = [&](Value vector, int64_t first, int64_t second) -> Value {
    Value pair = e.fromElements(VectorType::get({2}, in), {e.extract(vector, first), e.extract(vector, second)});
    if (in.isBF16()) // bf16 pairs travel as i32
      return LLVM::BitcastOp::create(e.b, e.loc, e.b.getI32Type(), pair);
    return pair;
  };
  Type resultStruct = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});

  SmallVector<Basis> cTiles = outerBits(mma.c, 2);
  SmallVector<Basis> kSteps;
  for (const Basis &basis : outerBits(mma.a, 3))
    if (basis.dim == 1)
      kSteps.push_back(basis);
  SmallVector<Value> out(mma.c.numRegisters());
  for (int64_t tile = 0; tile < (int64_t(1) << cTiles.size()); ++tile) {
    // This tile's bits in C, and where the same bits live in A and B.
    SmallVector<std::pair<Basis, int64_t>> tileBits;
    for (size_t i = 0; i < cTiles.size(); ++i)
      tileBits.push_back({cTiles[i], (tile >> i) & 1});
    // M tiles are rows of A (dimension 0 in both), N tiles columns of B
    // (dimension 1 in both); A's dimension 1 and B's dimension 0 are K.
    auto inOperand = [&](const Layout &layout, int dim) {
      SmallVector<std::pair<Basis, int64_t>> bits;
      for (auto [basis, bit] : tileBits)
        if (basis.dim == dim && layout.registerBit(basis) >= 0)
          bits.push_back({basis, bit});
      return bits;
    };
    SmallVector<std::pair<Basis, int64_t>> aTile = inOperand(mma.a, 0), bTile = inOperand(mma.b, 1);
    Value c[4] = {e.constant(f32, 0), e.constant(f32, 0), e.constant(f32, 0), e.constant(f32, 0)};
    for (int64_t step = 0; step < (int64_t(1) << kSteps.size()); ++step) {
      SmallVector<std::pair<Basis, int64_t>> aBits = aTile, bBits = bTile;
      for (size_t i = 0; i < kSteps.size(); ++i) {
        aBits.push_back({kSteps[i], (step >> i) & 1});
        bBits.push_back({Basis{0, kSteps[i].bit}, (step >> i) & 1});
      }
      // a_i: i = k0 + 2 * row3 + 4 * k3; b_i: i = k0 + 2 * k3.
      auto aReg = [&](int i) {
        SmallVector<std::pair<Basis, int64_t>> bits = aBits;
        bits.append({{Basis{1, 0}, i & 1}, {Basis{0, 3}, (i >> 1) & 1}, {Basis{1, 3}, (i >> 2) & 1}});
        return registerIndex(mma.a, bits);
      };
      auto bReg = [&](int i) {
        SmallVector<std::pair<Basis, int64_t>> bits = bBits;
        bits.append({{Basis{0, 0}, i & 1}, {Basis{0, 3}, (i >> 1) & 1}});
        return registerIndex(mma.b, bits);
      };
      SmallVector<Value> aOperands = {fragment(a, aReg(0), aReg(1)), fragment(a, aReg(2), aReg(3)),
                                      fragment(a, aReg(4), aReg(5)), fragment(a, aReg(6), aReg(7))};
      SmallVector<Value> bOperands = {fragment(b, bReg(0), bReg(1)), fragment(b, bReg(2), bReg(3))};
      std::array<NVVM::MMATypes, 2> types = {in.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16,
                                             in.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16};
      Value d = NVVM::MmaOp::create(e.b, e.loc, resultStruct, aOperands, bOperands, ValueRange(c),
                                    ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt, types,
                                    std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                                   NVVM::MMALayout::col});
      for (int i = 0; i < 4; ++i)
        c[i] = LLVM::ExtractValueOp::create(e.b, e.loc, d, ArrayRef<int64_t>{i});
    }
    // c_i: i = col0 + 2 * row3.
    for (int i = 0; i < 4; ++i) {
      SmallVector<std::pair<Basis, int64_t>> bits = tileBits;
      bits.append({{Basis{1, 0}, i & 1}, {Basis{0, 3}, (i >> 1) & 1}});
      out[registerIndex(mma.c, bits)] = convertElement(e, c[i], result.getElementType());
    }
  }
  e.values.map(op.getResult(), e.fromElements(e.vectorType(result), out));
  return success();
}

} // namespace

LogicalResult lowerDot(Emitter &e, pk::DotOp op) {
  if (std::optional<Layout::Mma> mma = mmaLayouts(op, e.numWarps))
    if (*layoutOf(op.getType()) == mma->c)
      return lowerMma(e, op, *mma);
  auto lhs = llvm::cast<RankedTensorType>(op.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(op.getRhs().getType());
  auto result = llvm::cast<RankedTensorType>(op.getType());
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  int64_t m = result.getShape()[0], n = result.getShape()[1];
  int64_t k = lhs.getShape()[tl ? 0 : 1];
  int64_t mp = paddedExtent(m), np = paddedExtent(n);
  Type in = lhs.getElementType();
  Type acc = accumulatorType(e, in, result.getElementType());
  int64_t bytes = std::max(elementBytes(lhs.getElementType()), elementBytes(rhs.getElementType()));
  int64_t chunk = paddedExtent(k);
  int64_t budget = e.scratchSize() <= 32 * 1024 ? kWholeChunkBytes : kChunkBytes;
  while (chunk > 1 && (mp + np) * chunk * bytes > budget)
    chunk /= 2;

  Layout layout = *layoutOf(result);
  int64_t registers = layout.numRegisters();
  std::vector<Value> rows, columns;
  for (int64_t j = 0; j < registers; ++j) {
    rows.push_back(e.coordinate(layout, j, 0));
    columns.push_back(e.coordinate(layout, j, 1));
  }
  auto accumulators = VectorType::get({registers}, acc);
  Value sum = e.splat(accumulators, e.constant(acc, 0));
  Value aRegisters = e.values.lookup(op.getLhs()), bRegisters = e.values.lookup(op.getRhs());
  if (op.getAllowTf32()) {
    aRegisters = truncatedToTf32(e, aRegisters);
    bRegisters = truncatedToTf32(e, bRegisters);
  }
  for (int64_t start = 0; start < k; start += chunk) {
    int64_t offset = e.beginSharedTemporary((mp + np) * chunk * bytes);
    int64_t offsetB = offset + mp * chunk * bytes;
    // The chunk of A as [m][chunk], of B as [chunk][n].
    writeChunk(e, aRegisters, lhs, tl, /*kDim=*/1, start, chunk, chunk, offset);
    writeChunk(e, bRegisters, rhs, tr, /*kDim=*/0, start, chunk, np, offsetB);
    e.barrier();
    int64_t aRowStride = chunk, aKStride = 1, bKStride = np, bColStride = 1;
    int64_t steps = std::min(chunk, k - start);
    Value lower = e.index(0), upper = e.index(steps), unit = e.index(1);
    auto loop = scf::ForOp::create(e.b, e.loc, lower, upper, unit, ValueRange{sum});
    {
      OpBuilder::InsertionGuard guard(e.b);
      e.b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      Value partial = loop.getRegionIterArgs()[0];
      SmallVector<Value> updated;
      for (int64_t j = 0; j < registers; ++j) {
        Value aRow = arith::MulIOp::create(e.b, e.loc, rows[j], e.index(aRowStride));
        Value aK = arith::MulIOp::create(e.b, e.loc, kk, e.index(aKStride));
        Value aAt = arith::AddIOp::create(e.b, e.loc, aRow, aK);
        Value bK = arith::MulIOp::create(e.b, e.loc, kk, e.index(bKStride));
        Value bColumn = arith::MulIOp::create(e.b, e.loc, columns[j], e.index(bColStride));
        Value bAt = arith::AddIOp::create(e.b, e.loc, bK, bColumn);
        Value a = convertElement(
            e, e.loadValue(e.sharedPointer(e.index(offset), lhs.getElementType(), aAt),
                           lhs.getElementType(), lhs.getElementType()),
            acc, op.getUnsignedOperands());
        Value b = convertElement(
            e, e.loadValue(e.sharedPointer(e.index(offsetB), rhs.getElementType(), bAt),
                           rhs.getElementType(), rhs.getElementType()),
            acc, op.getUnsignedOperands());
        Value current = e.extract(partial, j);
        updated.push_back(llvm::isa<FloatType>(acc)
                              ? Value(math::FmaOp::create(e.b, e.loc, a, b, current))
                              : Value(arith::AddIOp::create(e.b, e.loc, current,
                                                            arith::MulIOp::create(e.b, e.loc, a, b))));
      }
      scf::YieldOp::create(e.b, e.loc, e.fromElements(accumulators, updated));
    }
    sum = loop.getResult(0);
  }
  SmallVector<Value> out;
  for (int64_t j = 0; j < registers; ++j)
    out.push_back(convertElement(e, e.extract(sum, j), result.getElementType()));
  e.values.map(op.getResult(), e.fromElements(e.vectorType(result), out));
  return success();
}

} // namespace pk::gpu
