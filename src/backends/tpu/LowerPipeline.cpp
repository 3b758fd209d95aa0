//===- LowerPipeline.cpp - pltpu.emit_pipeline as a loop of DMAs ----------===//
//
// A TPU pk.pipeline becomes what pltpu.emit_pipeline builds, in its
// simplest schedule: a tpu.region allocating one VMEM (or SMEM) buffer and
// one DMA semaphore per copied operand, and an scf.for over the grid's
// steps (row-major; extents computed in the kernel, such as a core's share
// of the grid under core_axis, bound it at run time) that, at each step, computes the block indices
// (the index_map region), copies the input blocks in (tpu.enqueue_dma, then tpu.wait_dma2), runs
// the body on the buffers, and copies the output blocks out. Operands whose spec stays in pl.ANY /
// HBM reach the body as they are.
//
// The copies are not overlapped with the body yet (Pallas keeps two
// buffers per operand and fetches the next step's blocks during this
// one); the results are the same. A copy moves the whole block, except
// along two kinds of axes, where it moves `size` elements between the
// array and the front of the buffer (both ends tpu.memref_slice with a
// dynamic size, as Pallas slices them): a pl.BoundedSlice axis, whose
// index map gives the start and the size, and a blocked axis the block
// does not divide, where the last block is cut at the array's end.
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

/// One step's block of an operand: where it starts along each axis (i32)
/// and, along an axis where it spans fewer elements than its block, how
/// many (null elsewhere).
struct BlockPlace {
  SmallVector<Value> starts, sizes;

  bool whole() const { return llvm::none_of(sizes, [](Value s) { return static_cast<bool>(s); }); }
  /// The non-null sizes, in axis order: a memref_slice's dynamic sizes.
  SmallVector<Value> dynamicSizes() const {
    SmallVector<Value> dynamic;
    llvm::copy_if(sizes, std::back_inserter(dynamic), [](Value s) { return static_cast<bool>(s); });
    return dynamic;
  }
  /// The extent of axis `d` of a block of `spec` at this place.
  int64_t extent(pk::BlockSpecAttr spec, unsigned d) const {
    return sizes[d] ? ShapedType::kDynamic : spec.getBlockShape()[d];
  }
};

/// The place of `spec`'s block of an operand of `shape` from the index
/// map's `values` for it (one per axis; start and size for a bounded axis).
BlockPlace placeOf(BodyLowering &l, pk::BlockSpecAttr spec, ArrayRef<int64_t> shape,
                   ArrayRef<Value> values, Location loc) {
  OpBuilder &b = l.builder();
  BlockPlace place;
  size_t at = 0;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    int64_t block = spec.getBlockShape()[d];
    Value start = values[at++];
    bool blocked = spec.getDimKinds()[d] == pk::BlockDimKind::Blocked;
    if (blocked)
      start = arith::MulIOp::create(b, loc, start, l.i32Constant(block, loc));
    place.starts.push_back(start);
    Value size;
    if (spec.isBounded(d))
      size = values[at++];
    else if (blocked && shape[d] % block != 0) // the edge block ends with the array
      size = arith::MinSIOp::create(
          b, loc, l.i32Constant(block, loc),
          arith::SubIOp::create(b, loc, l.i32Constant(shape[d], loc), start));
    place.sizes.push_back(size);
  }
  return place;
}

/// The window of `base` (a memref over the whole operand) that `place`
/// covers, squeezed to the buffer's shape (dynamic where the block is cut).
Value blockWindow(BodyLowering &l, Value base, pk::BlockSpecAttr spec, const BlockPlace &place,
                  Location loc) {
  SmallVector<int64_t> shape, kept;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    shape.push_back(place.extent(spec, d));
    if (!spec.isSqueezed(d))
      kept.push_back(shape.back());
  }
  return sliceMemref(l.builder(), loc, base, place.starts, shape, kept, place.dynamicSizes());
}

/// The part of `buffer` a block at `place` fills: all of it, or its front
/// along the axes where the block is cut.
Value bufferPart(BodyLowering &l, Value buffer, pk::BlockSpecAttr spec, const BlockPlace &place,
                 Location loc) {
  if (place.whole())
    return buffer;
  SmallVector<int64_t> shape;
  SmallVector<Value> zeros;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    if (spec.isSqueezed(d))
      continue;
    shape.push_back(place.extent(spec, d));
    zeros.push_back(l.i32Constant(0, loc));
  }
  return sliceMemref(l.builder(), loc, buffer, zeros, shape, shape, place.dynamicSizes());
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

  // The steps, row-major over the grid. An extent computed in the kernel
  // (a ragged group's block count, a core's share of the grid) is the
  // index value the kernel computed.
  SmallVector<Value> extents;
  for (unsigned g = 0; g < gridRank; ++g) {
    OpFoldResult extent = op.getGridExtent(g);
    if (auto attr = llvm::dyn_cast<Attribute>(extent))
      extents.push_back(l.indexConstant(llvm::cast<IntegerAttr>(attr).getInt(), loc));
    else if (Value computed = l.lookup(llvm::cast<Value>(extent)))
      extents.push_back(computed);
    else
      return op.emitError("the TPU backend does not know the extent of this pipeline's grid "
                          "axis " +
                          std::to_string(g));
  }
  // (Static extents fold to one constant.)
  Value steps = l.indexConstant(1, loc);
  for (Value extent : extents)
    steps = b.createOrFold<arith::MulIOp>(loc, steps, extent);
  auto loop = scf::ForOp::create(b, loc, l.indexConstant(0, loc), steps, l.indexConstant(1, loc));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  SmallVector<Value> gridIndices(gridRank);
  Value rest = loop.getInductionVar();
  for (unsigned g = gridRank; g-- > 0;) {
    Value size = extents[g];
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
  SmallVector<BlockPlace> places;
  auto yielded = map.getTerminator()->getOperands();
  size_t next = 0;
  for (size_t i = 0; i < numRefs; ++i) {
    SmallVector<Value> values;
    for (int64_t v = 0; v < op.getSpec(i).getNumIndexValues(); ++v)
      values.push_back(l.lookup(yielded[next++]));
    auto shape = llvm::cast<MemRefType>(operands[i].getType()).getShape();
    places.push_back(op.isPipelined(i) ? placeOf(l, op.getSpec(i), shape, values, loc)
                                       : BlockPlace{});
  }

  // Copy in, run the body, copy out.
  size_t numIns = op.getNumIns();
  // Each copy's ends are built in order, the array's window first.
  for (size_t i = 0; i < numIns; ++i) {
    if (!op.isPipelined(i))
      continue;
    Value window = blockWindow(l, operands[i], op.getSpec(i), places[i], loc);
    copyAndWait(b, loc, window, bufferPart(l, buffers[i], op.getSpec(i), places[i], loc),
                semaphores[i]);
  }
  for (unsigned g = 0; g < gridRank; ++g)
    l.map(body.getArgument(g), gridIndices[g]);
  for (size_t i = 0; i < numRefs; ++i) {
    BlockArgument arg = body.getArgument(gridRank + i);
    l.bindRef(arg, wholeRefBinding(op.isPipelined(i) ? buffers[i] : operands[i],
                                   llvm::cast<pk::RefType>(arg.getType())));
  }
  if (failed(lowerBlockOps(l, body)))
    return failure();
  for (size_t i = numIns; i < numRefs; ++i) {
    if (!op.isPipelined(i))
      continue;
    Value window = blockWindow(l, operands[i], op.getSpec(i), places[i], loc);
    copyAndWait(b, loc, bufferPart(l, buffers[i], op.getSpec(i), places[i], loc), window,
                semaphores[i]);
  }

  b.setInsertionPointToEnd(scope);
  mosaic::YieldOp::create(b, loc, ValueRange{});
  return success();
}

} // namespace

void addPipelineRules(RuleTable &rules) {
  rules[TypeID::get<pk::PipelineOp>()] = lowerPipeline;
}

} // namespace pk::backends::tpu
