//===- ExpandButterflies.cpp - pk.butterfly as slices and a join -----------===//
//
// pk.butterfly gives element i along an axis the element i ^ d. Split the
// axis into runs of 2d as (runs, 2, d): the exchange swaps the two halves
// of every run, which a reshape, two slices, a concatenation in the other
// order and a reshape back express with ops every backend has.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace pk {

#define GEN_PASS_DEF_PKEXPANDBUTTERFLIES
#include "transforms/Passes.h.inc"

namespace {

using namespace mlir;

struct ExpandButterfly : OpRewritePattern<ButterflyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ButterflyOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    int64_t axis = static_cast<int64_t>(op.getDimension()), distance = op.getDistance();
    // (..., n, ...) as (..., n / 2d, 2, d, ...): the halves are index 0 and 1
    // of the new axis `axis + 1`.
    SmallVector<int64_t> split(type.getShape().take_front(axis));
    split.append({type.getDimSize(axis) / (2 * distance), 2, distance});
    llvm::append_range(split, type.getShape().drop_front(axis + 1));
    Value runs = ReshapeOp::create(rewriter, loc, type.clone(split), op.getOperand());
    SmallVector<int64_t> halfShape(split);
    halfShape[axis + 1] = 1;
    auto half = [&](int64_t which) -> Value {
      SmallVector<int64_t> start(split.size(), 0), limit(split), stride(split.size(), 1);
      start[axis + 1] = which;
      limit[axis + 1] = which + 1;
      return SliceOp::create(
          rewriter, loc, type.clone(halfShape), runs, rewriter.getDenseI64ArrayAttr(start),
          rewriter.getDenseI64ArrayAttr(limit), rewriter.getDenseI64ArrayAttr(stride));
    };
    Value swapped =
        ConcatenateOp::create(rewriter, loc, type.clone(split), ValueRange{half(1), half(0)},
                              rewriter.getI64IntegerAttr(axis + 1));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, swapped);
    return success();
  }
};

struct PkExpandButterflies : impl::PkExpandButterfliesBase<PkExpandButterflies> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandButterfly>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

} // namespace pk
