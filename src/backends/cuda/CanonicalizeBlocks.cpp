//===- CanonicalizeBlocks.cpp - Canonicalization that scales with the code ===//
//
// After distribution a kernel is per-thread code: a flash attention step
// of 128 x 128 f32 tiles is some 90,000 ops in one loop body. MLIR's
// canonicalizer re-queues every ancestor of an op it changes, and checks
// each ancestor it takes off its worklist for being trivially dead,
// which walks the ancestor's body up to its first write: tens of
// thousands of changes times thousands of ops (41 s of a 49 s compile).
//
// This pass applies the same patterns (every loaded dialect's and
// registered op's canonicalizations) and folds one block at a time, each
// with its block's region as the driver's scope: a change queues nothing
// above its own block, so a sweep checks each region op once. Sweeps go
// outer blocks first and repeat until one changes nothing. Region
// simplification (dead blocks and arguments) runs once after.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUCANONICALIZEBLOCKS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

struct CanonicalizeBlocksPass : impl::PkGpuCanonicalizeBlocksBase<CanonicalizeBlocksPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owned(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(owned);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(owned, context);
    patterns = FrozenRewritePatternSet(std::move(owned));
    return success();
  }

  void runOnOperation() override {
    // Sweeps over every block, outer blocks first (their constants fold
    // before the blocks inside read them), until one changes nothing (an
    // inner block's change, such as a loop result that became constant,
    // may let its parent fold more).
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep)
      if (!canonicalizeEachBlock())
        break;
    IRRewriter rewriter(&getContext());
    (void)simplifyRegions(rewriter, getOperation()->getRegions());
  }

  /// One sweep; whether it changed anything.
  bool canonicalizeEachBlock() {
    SmallVector<Block *> blocks;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          blocks.push_back(&block);
    });
    // Blocks an earlier block's changes erase (a dead `scf.if` with its
    // body, one inlined into its parent) are skipped.
    llvm::DenseSet<Block *> erased;
    ErasureListener listener(erased);
    bool anyChange = false;
    for (Block *block : blocks) {
      if (erased.contains(block))
        continue;
      SmallVector<Operation *> ops;
      for (Operation &op : *block)
        ops.push_back(&op);
      GreedyRewriteConfig config;
      config.setScope(block->getParent());
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      config.setListener(&listener);
      bool changed = false;
      (void)applyOpPatternsGreedily(ops, patterns, config, &changed);
      anyChange |= changed;
    }
    return anyChange;
  }

  /// Enough for the kernels pkc makes: each sweep reaches a fixed point
  /// within every block.
  static constexpr int kMaxSweeps = 4;

  /// Notes the blocks the driver erases: on their own (a block inlined
  /// into its parent's) or with the op that holds them.
  struct ErasureListener : RewriterBase::Listener {
    explicit ErasureListener(llvm::DenseSet<Block *> &erased) : erased(erased) {}
    void notifyBlockErased(Block *block) override { erased.insert(block); }
    void notifyOperationErased(Operation *op) override {
      op->walk([&](Block *block) { erased.insert(block); });
    }
    llvm::DenseSet<Block *> &erased;
  };

  FrozenRewritePatternSet patterns;
};

} // namespace

} // namespace pk::gpu
