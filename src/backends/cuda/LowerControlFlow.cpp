//===- LowerControlFlow.cpp - SCF to branches in time linear in the code --===//
//
// MLIR's SCFToControlFlow pass applies its patterns through the dialect
// conversion driver, which records every op a block split moves so that
// it could roll the split back. Lowering an `scf.if` splits its block
// after it, so the ops below it move; lowering the ifs of a block top to
// bottom moves the rest of the block once per if. Per-thread code guards
// its loads at the array's edges with thousands of ifs in one block: 1.9 s
// of a flash-attention kernel's compile went there.
//
// This pass applies the same patterns (populateSCFToControlFlowConversion-
// Patterns) with a plain rewriter, each op once, in one order: parents
// before the ops inside them (a loop's body is inlined before the ifs in
// it are lowered: an `scf.for` body must stay one block) and, within a
// block, the last op first, so that a split moves only the ops up to the
// next op already lowered. Each op moves a bounded number of times.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPULOWERCONTROLFLOW
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

bool isStructured(Operation *op) {
  return llvm::isa<scf::SCFDialect>(op->getDialect()) && !op->hasTrait<OpTrait::IsTerminator>();
}

struct LowerControlFlowPass : impl::PkGpuLowerControlFlowBase<LowerControlFlowPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owned(context);
    populateSCFToControlFlowConversionPatterns(owned);
    patterns = FrozenRewritePatternSet(std::move(owned));
    return success();
  }

  void runOnOperation() override {
    PatternApplicator applicator(patterns);
    applicator.applyDefaultCostModel();
    // A plain rewriter changes the IR directly: no rollback, nothing recorded.
    PatternRewriter rewriter(&getContext());
    // A pattern may make structured ops of its own (scf.parallel becomes
    // scf.for): rounds until none is left.
    for (int round = 0; round < kMaxRounds; ++round) {
      SmallVector<Operation *> ops;
      getOperation()->walk<WalkOrder::PreOrder, ReverseIterator>([&](Operation *op) {
        if (!isStructured(op))
          return WalkResult::advance();
        ops.push_back(op);
        // Their lowering rebuilds the body as new loops: what is inside
        // waits for the next round.
        if (llvm::isa<scf::ParallelOp, scf::ForallOp>(op))
          return WalkResult::skip();
        return WalkResult::advance();
      });
      if (ops.empty())
        return;
      for (Operation *op : ops) {
        rewriter.setInsertionPoint(op);
        if (failed(applicator.matchAndRewrite(op, rewriter))) {
          op->emitOpError("internal error: no lowering to branches for this op");
          return signalPassFailure();
        }
      }
    }
    getOperation()->emitError("internal error: structured control flow left after ")
        << kMaxRounds << " rounds of lowering";
    signalPassFailure();
  }

  static constexpr int kMaxRounds = 4;
  FrozenRewritePatternSet patterns;
};

} // namespace

} // namespace pk::gpu
