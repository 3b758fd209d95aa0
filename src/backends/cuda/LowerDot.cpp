//===- LowerDot.cpp - Matrix products -------------------------------------===//
//
// x @ y: the operands go to shared memory one K-chunk at a time (small
// enough to fit next to the kernel's scratch), and each thread accumulates
// the elements of the result its layout gives it, in f32 (i32 for
// integers; f64 when the operands are f64), rounding once at the end.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace pk::gpu {

using namespace mlir;

namespace {

constexpr int64_t kChunkBytes = 32 * 1024;

Type accumulatorType(Emitter &e, Type in, Type out) {
  if (llvm::isa<FloatType>(in))
    return in.isF64() || out.isF64() ? Type(e.b.getF64Type()) : Type(e.b.getF32Type());
  return in.getIntOrFloatBitWidth() == 64 || out.getIntOrFloatBitWidth() == 64
             ? Type(e.b.getI64Type())
             : Type(e.b.getI32Type());
}

Value convertElement(Emitter &e, Value v, Type to) {
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
  return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
             ? Value(arith::ExtSIOp::create(e.b, e.loc, to, v))
             : Value(arith::TruncIOp::create(e.b, e.loc, to, v));
}

/// Writes the elements of an operand whose K coordinate falls in
/// [chunkStart, chunkStart + chunk) to shared memory at `offset`: as the
/// logical matrix (A is [M][K], B is [K][N]; `swapped` when the operand
/// holds its transpose), with K relative to the chunk, row-major with
/// `rowStride`.
void writeChunk(Emitter &e, Value operand, RankedTensorType type, bool swapped, unsigned kDim,
                int64_t chunkStart, int64_t chunk, int64_t rowStride, int64_t offset) {
  Layout layout = *layoutOf(type);
  Value vector = e.values.lookup(operand);
  Type element = type.getElementType();
  Value owner = e.isOwner(layout);
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    SmallVector<Value> c = e.coordinates(layout, k);
    Value logical[2] = {swapped ? c[1] : c[0], swapped ? c[0] : c[1]};
    Value kc = logical[kDim];
    Value inChunk;
    if (auto fixed = getConstantIntValue(kc)) {
      if (*fixed < chunkStart || *fixed >= chunkStart + chunk)
        continue;
    } else {
      Value above = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::sge, kc, e.index(chunkStart));
      Value below = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::slt, kc,
                                          e.index(chunkStart + chunk));
      inChunk = arith::AndIOp::create(e.b, e.loc, above, below);
    }
    Value valid = e.andOf(e.andOf(owner, e.inShape(layout, type.getShape(), k)), inChunk);
    e.guarded(valid, [&] {
      Value at[2] = {logical[0], logical[1]};
      at[kDim] = arith::SubIOp::create(e.b, e.loc, kc, e.index(chunkStart));
      Value linear = arith::AddIOp::create(
          e.b, e.loc, arith::MulIOp::create(e.b, e.loc, at[0], e.index(rowStride)), at[1]);
      e.storeValue(e.extract(vector, k), e.sharedPointer(e.index(offset), element, linear), element);
    });
  }
}

} // namespace

LogicalResult lowerDot(Emitter &e, pk::DotOp op) {
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
  while (chunk > 1 && (mp + np) * chunk * bytes > kChunkBytes)
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
  for (int64_t start = 0; start < k; start += chunk) {
    int64_t offset = e.beginSharedTemporary((mp + np) * chunk * bytes);
    int64_t offsetB = offset + mp * chunk * bytes;
    // The chunk of A as [m][chunk], of B as [chunk][n].
    writeChunk(e, op.getLhs(), lhs, tl, /*kDim=*/1, start, chunk, chunk, offset);
    writeChunk(e, op.getRhs(), rhs, tr, /*kDim=*/0, start, chunk, np, offsetB);
    e.barrier();
    int64_t aRowStride = chunk, aKStride = 1, bKStride = np, bColStride = 1;
    int64_t steps = std::min(chunk, k - start);
    auto loop = scf::ForOp::create(e.b, e.loc, e.index(0), e.index(steps), e.index(1), ValueRange{sum});
    {
      OpBuilder::InsertionGuard guard(e.b);
      e.b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      Value partial = loop.getRegionIterArgs()[0];
      SmallVector<Value> updated;
      for (int64_t j = 0; j < registers; ++j) {
        Value aAt = arith::AddIOp::create(
            e.b, e.loc, arith::MulIOp::create(e.b, e.loc, rows[j], e.index(aRowStride)),
            arith::MulIOp::create(e.b, e.loc, kk, e.index(aKStride)));
        Value bAt = arith::AddIOp::create(
            e.b, e.loc, arith::MulIOp::create(e.b, e.loc, kk, e.index(bKStride)),
            arith::MulIOp::create(e.b, e.loc, columns[j], e.index(bColStride)));
        Value a = convertElement(
            e, e.loadValue(e.sharedPointer(e.index(offset), lhs.getElementType(), aAt),
                           lhs.getElementType(), lhs.getElementType()),
            acc);
        Value b = convertElement(
            e, e.loadValue(e.sharedPointer(e.index(offsetB), rhs.getElementType(), bAt),
                           rhs.getElementType(), rhs.getElementType()),
            acc);
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
