//===- ExpandBitcasts.cpp - pk.bitcast as slices, shifts and joins ---------===//
//
// pk.bitcast packs rows of the second-minor axis between element widths:
// packing `p` narrow rows into one wide row puts row `p*i + k` of the
// operand into bits `k*w ..` of row `i` (w the narrow width); unpacking is
// the reverse. Everything here is ordinary pk and arith ops on integers of
// the two widths, so any backend that has them runs the bitcast.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace pk {

#define GEN_PASS_DEF_PKEXPANDBITCASTS
#include "transforms/Passes.h.inc"

namespace {

using namespace mlir;

struct ExpandBitcast : OpRewritePattern<BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BitcastOp op, PatternRewriter &rewriter) const override {
    auto in = llvm::cast<RankedTensorType>(op.getOperand().getType());
    auto out = llvm::cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    unsigned from = in.getElementType().getIntOrFloatBitWidth();
    unsigned to = out.getElementType().getIntOrFloatBitWidth();
    auto integers = [&](RankedTensorType t, unsigned width) {
      return t.clone(rewriter.getIntegerType(width));
    };
    // Bits as integers of a width, and back.
    auto asIntegers = [&](Value v, unsigned width) -> Value {
      auto t = llvm::cast<RankedTensorType>(v.getType());
      if (t.getElementType().isInteger(width))
        return v;
      return arith::BitcastOp::create(rewriter, loc, integers(t, width), v);
    };
    auto shiftAmount = [&](RankedTensorType t, int64_t bits) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(t, rewriter.getIntegerAttr(t.getElementType(), bits)));
    };
    int64_t rank = in.getRank(), rowAxis = rank - 2;
    Value bits = asIntegers(op.getOperand(), from);
    Value result;
    if (from < to) {
      unsigned packing = to / from;
      RankedTensorType wide = integers(out, to);
      SmallVector<int64_t> start(rank, 0), limit(in.getShape()), stride(rank, 1);
      stride[rowAxis] = packing;
      for (unsigned k = 0; k < packing; ++k) {
        start[rowAxis] = k;
        Value rows = SliceOp::create(
            rewriter, loc, integers(out, from), bits, rewriter.getDenseI64ArrayAttr(start),
            rewriter.getDenseI64ArrayAttr(limit), rewriter.getDenseI64ArrayAttr(stride));
        Value part = arith::ExtUIOp::create(rewriter, loc, wide, rows);
        if (k)
          part = arith::ShLIOp::create(rewriter, loc, part, shiftAmount(wide, k * from));
        result = k ? arith::OrIOp::create(rewriter, loc, result, part).getResult() : part;
      }
    } else {
      unsigned packing = from / to;
      RankedTensorType wide = integers(in, from);
      SmallVector<int64_t> split(in.getShape());
      split.insert(split.begin() + rowAxis + 1, 1);
      SmallVector<Value> parts;
      for (unsigned k = 0; k < packing; ++k) {
        Value shifted =
            k ? arith::ShRUIOp::create(rewriter, loc, bits, shiftAmount(wide, k * to)).getResult()
              : bits;
        Value part = arith::TruncIOp::create(rewriter, loc, integers(in, to), shifted);
        parts.push_back(ReshapeOp::create(
            rewriter, loc, RankedTensorType::get(split, rewriter.getIntegerType(to)), part));
      }
      SmallVector<int64_t> joined(split);
      joined[rowAxis + 1] = packing;
      Value interleaved = ConcatenateOp::create(
          rewriter, loc, RankedTensorType::get(joined, rewriter.getIntegerType(to)), parts,
          rewriter.getI64IntegerAttr(rowAxis + 1));
      result = ReshapeOp::create(rewriter, loc, integers(out, to), interleaved);
    }
    if (!out.getElementType().isInteger(to))
      result = arith::BitcastOp::create(rewriter, loc, out, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct PkExpandBitcasts : impl::PkExpandBitcastsBase<PkExpandBitcasts> {
  void runOnOperation() override {
    // A single walk: the expansion makes no new bitcasts, and the IR
    // around them is left as it is (no folding, no dead-code removal).
    RewritePatternSet patterns(&getContext());
    populateExpandBitcastPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void populateExpandBitcastPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandBitcast>(patterns.getContext());
}

} // namespace pk
