//===- Evaluator.cpp - Op dispatch, grid queries and scf ------------------===//
#include "interpreter/Evaluator.h"

#include "interpreter/AffineEval.h"
#include "interpreter/UnionMemory.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/raw_ostream.h"

namespace pk::interp {

void Evaluator::fail(mlir::Operation *op, const std::string &message) {
  throw RunError{message, op ? op->getLoc() : mlir::Location(mlir::UnknownLoc())};
}

TensorPtr Evaluator::get(mlir::Value v) {
  auto it = values.find(v);
  if (it == values.end())
    fail(v.getDefiningOp(), "internal error: a value is used before it is computed");
  return it->second;
}

RefBuffer &Evaluator::getRef(mlir::Value v) {
  auto it = refs.find(v);
  if (it == refs.end())
    fail(v.getDefiningOp(), "internal error: a Ref is not bound");
  RefBuffer &ref = *it->second;
  // A Ref of a plgpu.RefUnion sees what the union's other Refs wrote.
  if (ref.data && ref.data->unionMember >= 0)
    if (std::shared_ptr<UnionMemory> memory = ref.data->unionMemory.lock())
      memory->touch(*ref.data);
  return ref;
}

std::vector<TensorPtr> Evaluator::runRegion(mlir::Region &region,
                                            const std::vector<TensorPtr> &args) {
  mlir::Block &block = region.front();
  for (size_t i = 0; i < args.size() && i < block.getNumArguments(); ++i)
    if (args[i])
      set(block.getArgument(i), args[i]);
  runBlock(block);
  std::vector<TensorPtr> results;
  for (mlir::Value v : block.getTerminator()->getOperands())
    results.push_back(get(v));
  return results;
}

void Evaluator::runBlock(mlir::Block &block) {
  for (mlir::Operation &op : block.without_terminator())
    eval(&op);
}

void Evaluator::eval(mlir::Operation *op) {
  if (stepsLeft-- == 0)
    fail(op, "the kernel did not finish within the interpreter's step budget; is there an "
             "endless loop? (raise the budget with --max-steps)");
  // TMA copies are bounded by the array: a load reads zeros past it, a
  // store drops what lies past it (readAll, writeAll).
  if (partialViews && !llvm::isa<pk::RefViewOp, pk::RefTransposeOp, pk::RefReshapeOp,
                                 pk::PipelineOp, pk::CopyGmemToSmemOp, pk::CopySmemToGmemOp>(op))
    for (mlir::Value v : op->getOperands())
      if (llvm::isa<pk::RefType>(v.getType()))
        if (auto it = refs.find(v); it != refs.end() && !it->second->inBounds.empty())
          fail(op, "this Ref is a view that reaches past the end of the array it was taken from; "
                   "pkc's interpreter reads and writes such a view only through TMA copies "
                   "(plgpu.copy_gmem_to_smem, copy_smem_to_gmem) and the blocks of a pipeline");
  if (evalArith(op) || evalMath(op) || evalStructure(op) || evalControlFlow(op) ||
      evalMosaicGpu(op) || evalDma(op))
    return;
  if (llvm::isa<pk::LoadOp>(op))
    return evalLoad(op);
  if (llvm::isa<pk::StoreOp>(op))
    return evalStore(op);
  if (llvm::isa<pk::GatherOp>(op))
    return evalGather(op);
  if (llvm::isa<pk::ScatterOp>(op))
    return evalScatter(op);
  if (llvm::isa<pk::AtomicRmwOp>(op))
    return evalAtomicRmw(op);
  if (llvm::isa<pk::AtomicCasOp>(op))
    return evalAtomicCas(op);
  if (llvm::isa<pk::DebugPrintOp>(op))
    return evalDebugPrint(op);
  if (auto pid = llvm::dyn_cast<pk::ProgramIdOp>(op)) {
    TensorPtr t = makeTensor(elementKindOf(pid.getType()), {});
    t->i[0] = context.programIds.at(pid.getAxis());
    return set(pid.getResult(), t);
  }
  if (auto num = llvm::dyn_cast<pk::NumProgramsOp>(op)) {
    TensorPtr t = makeTensor(elementKindOf(num.getType()), {});
    t->i[0] = wrapInt(context.gridSizes.at(num.getAxis()), 32);
    return set(num.getResult(), t);
  }
  if (auto size = llvm::dyn_cast<pk::SymbolicSizeOp>(op)) {
    TensorPtr t = makeTensor(elementKindOf(size.getType()), {});
    t->i[0] = wrapInt(evalAffine(size.getExpr().getResult(0), {}, *context.symbols), 32);
    return set(size.getResult(), t);
  }
  std::string name;
  llvm::raw_string_ostream(name) << op->getName();
  fail(op, "the reference interpreter does not support '" + name + "'");
}

bool Evaluator::evalControlFlow(mlir::Operation *op) {
  if (auto forOp = llvm::dyn_cast<mlir::scf::ForOp>(op)) {
    int64_t lb = get(forOp.getLowerBound())->i[0], ub = get(forOp.getUpperBound())->i[0],
            step = get(forOp.getStep())->i[0];
    if (step <= 0)
      fail(op, "a loop's step must be positive, got " + std::to_string(step));
    std::vector<TensorPtr> carried;
    for (mlir::Value v : forOp.getInitArgs())
      carried.push_back(get(v));
    ElementKind ivKind = elementKindOf(forOp.getInductionVar().getType());
    for (int64_t iv = lb; iv < ub; iv += step) {
      TensorPtr index = makeTensor(ivKind, {});
      index->i[0] = iv;
      std::vector<TensorPtr> args{index};
      args.insert(args.end(), carried.begin(), carried.end());
      carried = runRegion(forOp.getRegion(), args);
    }
    for (size_t k = 0; k < carried.size(); ++k)
      set(forOp.getResult(k), carried[k]);
    return true;
  }
  if (auto ifOp = llvm::dyn_cast<mlir::scf::IfOp>(op)) {
    bool taken = get(ifOp.getCondition())->i[0] != 0;
    mlir::Region &region = taken ? ifOp.getThenRegion() : ifOp.getElseRegion();
    if (region.empty())
      return true;
    std::vector<TensorPtr> results = runRegion(region, {});
    for (size_t k = 0; k < results.size(); ++k)
      set(ifOp.getResult(k), results[k]);
    return true;
  }
  if (auto whileOp = llvm::dyn_cast<mlir::scf::WhileOp>(op)) {
    std::vector<TensorPtr> carried;
    for (mlir::Value v : whileOp.getInits())
      carried.push_back(get(v));
    for (;;) {
      mlir::Block &before = whileOp.getBefore().front();
      for (size_t k = 0; k < carried.size(); ++k)
        set(before.getArgument(k), carried[k]);
      runBlock(before);
      auto condition = llvm::cast<mlir::scf::ConditionOp>(before.getTerminator());
      std::vector<TensorPtr> forwarded;
      for (mlir::Value v : condition.getArgs())
        forwarded.push_back(get(v));
      if (get(condition.getCondition())->i[0] == 0) {
        for (size_t k = 0; k < forwarded.size(); ++k)
          set(whileOp.getResult(k), forwarded[k]);
        return true;
      }
      if (stepsLeft-- == 0)
        fail(op, "the kernel did not finish within the interpreter's step budget; is there an "
                 "endless loop? (raise the budget with --max-steps)");
      carried = runRegion(whileOp.getAfter(), forwarded);
    }
  }
  return false;
}

} // namespace pk::interp
