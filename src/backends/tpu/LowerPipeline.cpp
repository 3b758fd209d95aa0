//===- LowerPipeline.cpp - pltpu.emit_pipeline as a loop of DMAs ----------===//
//
// A TPU pk.pipeline becomes what pltpu.emit_pipeline builds, in its
// simplest schedule: a tpu.region allocating one VMEM (or SMEM) buffer and
// one DMA semaphore per copied operand, and an scf.for over the grid's
// steps (row-major) that, at each step, computes the block indices (the
// index_map region), copies the input blocks in (tpu.enqueue_dma, then
// tpu.wait_dma2), runs the body on the buffers, and copies the output
// blocks out. Operands whose spec stays in pl.ANY / HBM reach the body as
// they are.
//
// The copies are not overlapped with the body yet (Pallas keeps two
// buffers per operand and fetches the next step's blocks during this
// one); the results are the same. Blocks divide their arrays (the front
// end checks), so every copy is whole.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

LogicalResult lowerBlockOps(BodyLowering &l, Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(l.lowerOp(&op)))
      return failure();
  return success();
}

/// The window of `base` (a memref over the whole operand) that block
/// `indices` of `spec` covers, squeezed to the buffer's shape.
Value blockWindow(BodyLowering &l, Value base, pk::BlockSpecAttr spec, ArrayRef<Value> indices,
                  Location loc) {
  OpBuilder &b = l.builder();
  SmallVector<Value> starts;
  SmallVector<int64_t> shape, kept;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    int64_t block = spec.getBlockShape()[d];
    Value start = indices[d];
    if (spec.getDimKinds()[d] == pk::BlockDimKind::Blocked)
      start = arith::MulIOp::create(b, loc, start, l.i32Constant(block, loc));
    starts.push_back(start);
    shape.push_back(block);
    if (!spec.isSqueezed(d))
      kept.push_back(block);
  }
  return sliceMemref(b, loc, base, starts, shape, kept);
}

void copyAndWait(OpBuilder &b, Location loc, Value from, Value to, Value sem) {
  mosaic::EnqueueDMAOp::create(b, loc, from, Value(), to, sem, Value(), Value(), Value());
  mosaic::WaitDMA2Op::create(b, loc, sem, from, to, Value(), Value());
}

LogicalResult lowerPipeline(Operation *operation, BodyLowering &l) {
  auto op = llvm::cast<pk::PipelineOp>(operation);
  if (!op.isTpu() || !op.getInits().empty())
    return op.emitError("the TPU backend lowers pltpu.emit_pipeline, not Mosaic GPU pipelines");
  OpBuilder &b = l.builder();
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  size_t numRefs = op.getRefs().size();

  // The operands' memrefs, before the region (views are taken here).
  SmallVector<Value> operands;
  for (Value ref : op.getRefs()) {
    const RefBinding *binding = l.ref(ref);
    if (!binding)
      return op.emitError("the TPU backend does not know an operand of this pipeline");
    operands.push_back(binding->memref);
  }

  auto region = mosaic::RegionOp::create(b, loc, TypeRange{});
  Block *scope = new Block();
  region.getRegion().push_back(scope);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(scope);

  // One buffer and one DMA semaphore per copied operand.
  Block &body = op.getBody().front();
  unsigned gridRank = op.getGrid().size();
  SmallVector<Value> buffers(numRefs), semaphores(numRefs);
  MemRefType dmaSemaphore =
      semaphoreMemRefType(pk::SemaphoreType::get(ctx, {}, pk::SemaphoreKind::DMA));
  for (size_t i = 0; i < numRefs; ++i) {
    if (!op.isPipelined(i))
      continue;
    auto ref = llvm::cast<pk::RefType>(body.getArgument(gridRank + i).getType());
    buffers[i] = memref::AllocaOp::create(b, loc, memrefTypeOf(ref));
    semaphores[i] = mosaic::SemaphoreAllocOp::create(b, loc, dmaSemaphore);
  }

  // The steps, row-major over the grid.
  int64_t steps = 1;
  for (int64_t g : op.getGrid())
    steps *= g;
  auto loop = scf::ForOp::create(b, loc, l.indexConstant(0, loc), l.indexConstant(steps, loc),
                                 l.indexConstant(1, loc));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  SmallVector<Value> gridIndices(gridRank);
  Value rest = loop.getInductionVar();
  for (unsigned g = gridRank; g-- > 0;) {
    Value size = l.indexConstant(op.getGrid()[g], loc);
    Value index = g == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size).getResult();
    gridIndices[g] = arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
    if (g > 0)
      rest = arith::DivUIOp::create(b, loc, rest, size);
  }

  // Block indices of every operand at this step.
  Block &map = op.getIndexMap().front();
  for (unsigned g = 0; g < gridRank; ++g)
    l.map(map.getArgument(g), gridIndices[g]);
  if (failed(lowerBlockOps(l, map)))
    return failure();
  SmallVector<SmallVector<Value>> blockIndices;
  auto yielded = map.getTerminator()->getOperands();
  size_t next = 0;
  for (size_t i = 0; i < numRefs; ++i) {
    SmallVector<Value> indices;
    for (unsigned d = 0; d < op.getSpec(i).getRank(); ++d)
      indices.push_back(l.lookup(yielded[next++]));
    blockIndices.push_back(indices);
  }

  // Copy in, run the body, copy out.
  size_t numIns = op.getNumIns();
  for (size_t i = 0; i < numIns; ++i)
    if (op.isPipelined(i))
      copyAndWait(b, loc, blockWindow(l, operands[i], op.getSpec(i), blockIndices[i], loc),
                  buffers[i], semaphores[i]);
  for (unsigned g = 0; g < gridRank; ++g)
    l.map(body.getArgument(g), gridIndices[g]);
  for (size_t i = 0; i < numRefs; ++i) {
    BlockArgument arg = body.getArgument(gridRank + i);
    l.bindRef(arg, wholeRefBinding(op.isPipelined(i) ? buffers[i] : operands[i],
                                   llvm::cast<pk::RefType>(arg.getType())));
  }
  if (failed(lowerBlockOps(l, body)))
    return failure();
  for (size_t i = numIns; i < numRefs; ++i)
    if (op.isPipelined(i))
      copyAndWait(b, loc, buffers[i],
                  blockWindow(l, operands[i], op.getSpec(i), blockIndices[i], loc),
                  semaphores[i]);

  b.setInsertionPointToEnd(scope);
  mosaic::YieldOp::create(b, loc, ValueRange{});
  return success();
}

} // namespace

void addPipelineRules(RuleTable &rules) {
  rules[TypeID::get<pk::PipelineOp>()] = lowerPipeline;
}

} // namespace pk::backends::tpu
