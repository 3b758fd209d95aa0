//===- ShortLiveRanges.cpp - Long blocks computed value by value ----------===//
#include "backends/cuda/ShortLiveRanges.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"

namespace pk::gpu {

using namespace llvm;

namespace {

/// Whether `inst` may move within its block: it computes a value from its
/// operands alone (an intrinsic such as the funnel shift -O3 makes of a
/// rotation counts; a convergent one, a shuffle, stays), and only
/// (non-phi) instructions of its block use it.
bool movable(Instruction &inst) {
  if (inst.isTerminator() || isa<PHINode, AllocaInst>(inst) || inst.isEHPad() ||
      inst.mayReadOrWriteMemory() || inst.mayHaveSideEffects())
    return false;
  if (auto *call = dyn_cast<CallBase>(&inst))
    if (!isa<IntrinsicInst>(call) || call->isConvergent())
      return false;
  for (User *user : inst.users()) {
    auto *userInst = dyn_cast<Instruction>(user);
    if (!userInst || userInst->getParent() != inst.getParent() || isa<PHINode>(userInst))
      return false;
  }
  return true;
}

/// How many scalar instructions `block` is once its vectors are split.
uint64_t scalarLength(BasicBlock &block) {
  uint64_t length = 0;
  for (Instruction &inst : block) {
    auto *vector = dyn_cast<FixedVectorType>(inst.getType());
    length += vector ? vector->getNumElements() : 1;
  }
  return length;
}

/// Splits the vector instructions of `function` into 64-bit pieces (pairs
/// of 32-bit elements, fours of 16-bit ones), which the NVPTX back end
/// would split anyway while selecting instructions, so that the pieces'
/// chains can be reordered. Not into scalars: then -O3's code generation
/// passes spend tens of seconds in ScalarEvolution over the elements'
/// chains (the threefry kernel: 37 s), and ptxas has too little to
/// interleave.
void scalarize(Function &function) {
  FunctionAnalysisManager analyses;
  PassBuilder passes;
  passes.registerFunctionAnalyses(analyses);
  ScalarizerPassOptions options;
  options.ScalarizeMinBits = 64;
  FunctionPassManager pipeline;
  pipeline.addPass(ScalarizerPass(options));
  pipeline.run(function, analyses);
}

} // namespace

bool shortenLiveRanges(BasicBlock &block) {
  SmallVector<Instruction *> original;
  DenseSet<Instruction *> canMove;
  for (Instruction &inst : block) {
    original.push_back(&inst);
    if (movable(inst))
      canMove.insert(&inst);
  }
  if (canMove.empty())
    return false;

  // The new order: each instruction that stays (in their order), right
  // after the movable instructions it needs that no earlier one needed,
  // in post-order. The walk keeps its own stack: chains run thousands of
  // instructions deep.
  SmallVector<Instruction *> order;
  order.reserve(original.size());
  DenseSet<Instruction *> placed;
  SmallVector<std::pair<Instruction *, unsigned>> stack;
  auto place = [&](Instruction *root) {
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Instruction *inst = stack.back().first;
      unsigned &next = stack.back().second;
      // A phi's operands come from the ends of other blocks (or of this
      // one, around a loop): nothing of them is placed before it.
      if (!isa<PHINode>(inst) && next < inst->getNumOperands()) {
        auto *operand = dyn_cast<Instruction>(inst->getOperand(next++));
        if (operand && canMove.contains(operand) && placed.insert(operand).second)
          stack.push_back({operand, 0});
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  };
  Instruction *terminator = block.getTerminator();
  for (Instruction *inst : original)
    if (!canMove.contains(inst) && inst != terminator)
      place(inst);
  // Movable instructions nothing needs (dead code -O3 left) go last.
  for (Instruction *inst : original)
    if (canMove.contains(inst) && placed.insert(inst).second)
      place(inst);
  if (terminator)
    place(terminator);

  if (order == original)
    return false;
  for (Instruction *inst : order)
    inst->moveBefore(block, block.end());
  return true;
}

void shortenLiveRangesInLongBlocks(Module &module) {
  for (Function &function : module) {
    auto isLong = [](BasicBlock &block) { return scalarLength(block) >= kLongBlockInstructions; };
    if (function.isDeclaration() || llvm::none_of(function, isLong))
      continue;
    scalarize(function);
    for (BasicBlock &block : function)
      if (isLong(block))
        shortenLiveRanges(block);
  }
}

} // namespace pk::gpu
