//===- LowerPipeline.cpp - pltpu.emit_pipeline as a loop of DMAs ----------===//
//
// A TPU pk.pipeline becomes what pltpu.emit_pipeline builds: a tpu.region
// allocating VMEM (or SMEM) buffers and DMA semaphores, and an scf.for over
// the grid's steps (row-major; extents computed in the kernel, such as a
// core's share of the grid under core_axis, bound it at run time). Inputs
// are double-buffered as in Pallas: before the loop the first step's
// blocks start arriving in slot 0; at step s the body waits for slot
// s % 2, starts the next step's blocks arriving in the other slot (the
// index_map region is lowered for both steps), and runs on its slot while
// they travel. Outputs have one buffer and are copied out after the body
// (enqueue, then wait), so a block that stays put across steps keeps what
// the body left in it. Operands whose spec stays in pl.ANY / HBM reach the
// body as they are.
//
// Unlike Pallas, a block that does not move is still copied at every
// step, and output copies are not overlapped with the next step; the
// results are the same. A copy moves the whole block, except
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
    else if (blocked && shape[d] % block != 0) {
      // The edge block ends with the array. (One op a statement: a call's
      // arguments are evaluated in the compiler's order.)
      Value blockSize = l.i32Constant(block, loc);
      Value left = arith::SubIOp::create(b, loc, l.i32Constant(shape[d], loc), start);
      size = arith::MinSIOp::create(b, loc, blockSize, left);
    }
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

/// The slot'th (i32) of the two buffers (or DMA semaphores) stacked in
/// `pair`, its leading axis squeezed.
Value slotOf(OpBuilder &b, Location loc, BodyLowering &l, Value pair, Value slot) {
  auto type = llvm::cast<MemRefType>(pair.getType());
  SmallVector<Value> starts{slot};
  SmallVector<int64_t> shape{1};
  for (int64_t d : type.getShape().drop_front()) {
    starts.push_back(l.i32Constant(0, loc));
    shape.push_back(d);
  }
  return sliceMemref(b, loc, pair, starts, shape, type.getShape().drop_front(), ValueRange{});
}

LogicalResult lowerPipeline(Operation *operation, BodyLowering &l) {
  auto op = llvm::cast<pk::PipelineOp>(operation);
  if (!op.isTpu() || !op.getInits().empty())
    return op.emitError("the TPU backend lowers pltpu.emit_pipeline, not Mosaic GPU pipelines");
  OpBuilder &b = l.builder();
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  size_t numRefs = op.getRefs().size();
  size_t numIns = op.getNumIns();

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

  // Buffers and DMA semaphores: two of each per copied input (the next
  // step's block arrives in one while the body reads the other), one per
  // copied output.
  Block &body = op.getBody().front();
  unsigned gridRank = op.getGrid().size();
  SmallVector<Value> buffers(numRefs), semaphores(numRefs);
  for (size_t i = 0; i < numRefs; ++i) {
    if (!op.isPipelined(i))
      continue;
    auto ref = llvm::cast<pk::RefType>(body.getArgument(gridRank + i).getType());
    bool input = i < numIns;
    SmallVector<int64_t> shape;
    if (input)
      shape.push_back(2);
    shape.append(ref.getShape().begin(), ref.getShape().end());
    buffers[i] = memref::AllocaOp::create(
        b, loc,
        memrefTypeFor(shape, ref.getElementType(), mosaicMemorySpace(ref.getMemorySpace())));
    SmallVector<int64_t> count;
    if (input)
      count.push_back(2);
    semaphores[i] = mosaic::SemaphoreAllocOp::create(
        b, loc, semaphoreMemRefType(pk::SemaphoreType::get(ctx, count, pk::SemaphoreKind::DMA)));
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

  // Step `step`'s grid indices (i32) and every operand's block there (the
  // index_map region, lowered where this is called).
  Block &map = op.getIndexMap().front();
  auto placesAt = [&](Value step, SmallVector<Value> &gridIndices,
                      SmallVector<BlockPlace> &places) -> LogicalResult {
    gridIndices.assign(gridRank, Value());
    Value rest = step;
    for (unsigned g = gridRank; g-- > 0;) {
      Value index = g == 0 ? rest : arith::RemUIOp::create(b, loc, rest, extents[g]).getResult();
      gridIndices[g] = arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
      if (g > 0)
        rest = arith::DivUIOp::create(b, loc, rest, extents[g]);
    }
    for (unsigned g = 0; g < gridRank; ++g)
      l.map(map.getArgument(g), gridIndices[g]);
    if (failed(lowerBlockOps(l, map)))
      return failure();
    places.clear();
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
    return success();
  };
  // Starts (or waits for) the copy of each input's block at `places` into
  // buffer slot `slot` (i32).
  auto copyInputs = [&](ArrayRef<BlockPlace> places, Value slot, bool wait) {
    for (size_t i = 0; i < numIns; ++i) {
      if (!op.isPipelined(i))
        continue;
      Value window = blockWindow(l, operands[i], op.getSpec(i), places[i], loc);
      Value buffer =
          bufferPart(l, slotOf(b, loc, l, buffers[i], slot), op.getSpec(i), places[i], loc);
      Value sem = slotOf(b, loc, l, semaphores[i], slot);
      if (wait)
        mosaic::WaitDMA2Op::create(b, loc, sem, window, buffer, Value(), Value());
      else
        mosaic::EnqueueDMAOp::create(b, loc, window, Value(), buffer, sem, Value(), Value(),
                                     Value());
    }
  };
  auto whenSteps = [&](Value condition, llvm::function_ref<LogicalResult()> then) {
    auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    return then();
  };
  bool anyInput =
      llvm::any_of(llvm::seq<size_t>(0, numIns), [&](size_t i) { return op.isPipelined(i); });

  // Before the loop: the first step's inputs start arriving (when there is
  // a first step).
  SmallVector<Value> gridIndices;
  SmallVector<BlockPlace> places;
  if (anyInput &&
      failed(whenSteps(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, steps, l.indexConstant(0, loc)),
          [&]() -> LogicalResult {
            if (failed(placesAt(l.indexConstant(0, loc), gridIndices, places)))
              return failure();
            copyInputs(places, l.i32Constant(0, loc), /*wait=*/false);
            return success();
          })))
    return failure();

  Value firstStep = l.indexConstant(0, loc), unit = l.indexConstant(1, loc);
  auto loop = scf::ForOp::create(b, loc, firstStep, steps, unit);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value step = loop.getInductionVar();
  if (failed(placesAt(step, gridIndices, places)))
    return failure();
  // This step's inputs are in slot step % 2; the next step's start
  // arriving in the other while the body runs.
  Value slot = arith::IndexCastOp::create(
      b, loc, b.getI32Type(), arith::RemUIOp::create(b, loc, step, l.indexConstant(2, loc)));
  if (anyInput) {
    copyInputs(places, slot, /*wait=*/true);
    Value next = arith::AddIOp::create(b, loc, step, l.indexConstant(1, loc));
    Value other = arith::SubIOp::create(b, loc, l.i32Constant(1, loc), slot);
    SmallVector<Value> nextIndices;
    SmallVector<BlockPlace> nextPlaces;
    if (failed(whenSteps(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, steps),
                         [&]() -> LogicalResult {
                           if (failed(placesAt(next, nextIndices, nextPlaces)))
                             return failure();
                           copyInputs(nextPlaces, other, /*wait=*/false);
                           return success();
                         })))
      return failure();
  }

  // The body, on this step's buffers; then the output blocks go out.
  for (unsigned g = 0; g < gridRank; ++g)
    l.map(body.getArgument(g), gridIndices[g]);
  for (size_t i = 0; i < numRefs; ++i) {
    BlockArgument arg = body.getArgument(gridRank + i);
    Value memref = operands[i];
    if (op.isPipelined(i))
      memref = i < numIns ? slotOf(b, loc, l, buffers[i], slot) : buffers[i];
    l.bindRef(arg, wholeRefBinding(memref, llvm::cast<pk::RefType>(arg.getType())));
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
