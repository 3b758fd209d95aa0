//===- LowerGrid.cpp - Program ids, grid sizes and symbolic sizes ---------===//
//
// pl.program_id is the kernel function's grid argument; pl.num_programs a
// constant, or tpu.iteration_bound for an axis sized at launch (as
// Pallas lowers it); a symbolic size inside a kernel reads the symbol
// table that planKernel added as the first scalar-prefetch operand.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

LogicalResult lowerProgramId(Operation *op, BodyLowering &l) {
  auto programId = llvm::cast<pk::ProgramIdOp>(op);
  l.map(programId, l.gridIndex(programId.getAxis()));
  return success();
}

LogicalResult lowerNumPrograms(Operation *op, BodyLowering &l) {
  auto numPrograms = llvm::cast<pk::NumProgramsOp>(op);
  unsigned axis = numPrograms.getAxis();
  int64_t bound = l.plan().iterationBounds[axis];
  Value size = ShapedType::isDynamic(bound)
                   ? mosaic::IterationBoundOp::create(l.builder(), op->getLoc(),
                                                      l.builder().getI32Type(), axis)
                         .getResult()
                   : l.i32Constant(bound, op->getLoc());
  l.map(numPrograms, size);
  return success();
}

LogicalResult lowerSymbolicSize(Operation *op, BodyLowering &l) {
  auto size = llvm::cast<pk::SymbolicSizeOp>(op);
  l.map(size, l.affineValue(size.getExpr().getResult(0), {}, op->getLoc()));
  return success();
}

} // namespace

void addGridRules(RuleTable &rules) {
  rules[TypeID::get<pk::ProgramIdOp>()] = lowerProgramId;
  rules[TypeID::get<pk::NumProgramsOp>()] = lowerNumPrograms;
  rules[TypeID::get<pk::SymbolicSizeOp>()] = lowerSymbolicSize;
}

} // namespace pk::backends::tpu
