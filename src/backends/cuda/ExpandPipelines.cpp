//===- ExpandPipelines.cpp - plgpu.emit_pipeline as copies and a loop -----===//
//
// A `pk.pipeline` (plgpu.emit_pipeline) of a Mosaic GPU kernel becomes the
// program a Mosaic GPU author would write by hand, in pk ops the rest of
// the CUDA backend already lowers: a scope allocating, per pipelined
// input, `max_concurrent_steps` shared-memory slots of its block and one
// barrier per slot; copies of the first steps' blocks; and a loop over the
// grid's steps that waits for its slot, runs the body on the slots' views,
// then refills the slot step - delay used with step - delay + slots (the
// body's asynchronous readers of that slot, wgmma, have been waited for by
// then). Copies are TMA loads where TMA applies (MeshTma), so the loads of
// the next steps run while the body computes.
//
// Outputs (out_specs) get slots too. As in JAX's emit_pipeline, a step
// first waits until the store that read its slot `slots` steps ago has
// read it; after the body, the step's block is stored (TMA, one commit
// group a step) when its index differs from the previous step's, and at
// the last step; an output whose index map ignores the grid is stored
// once, from the last step's slot, after the loop, which then waits for
// every store.
//
// A warp-specialized pipeline (emit_pipeline_warp_specialized) gives the
// copies to its memory thread: a loop of its own right before the branch
// in which the compute threads run the pipeline (the front end marks it),
// waiting for the compute threads to release each slot: step `step`
// releases the slot of step `step - delay_release` (none before it, as in
// JAX), after the body or, with manual_consumed_barriers, where the body
// arrives at the input's consumed barrier it is given for that slot.
// Inputs whose BlockSpecs have collective_axes are copied collectively
// (TMA multicast: each CTA along the axes loads a slice into all of them),
// so their consumed barriers are cluster barriers over those axes: a slot
// is refilled only when every CTA that shares it is done with it.
//
// A warp-specialized pipeline's outputs are stored by its one compute
// thread, as emit_pipeline stores them (JAX does not support outputs with
// several compute threads either).
//
// Block dimensions are blocked, squeezed or pl.Element (the index map
// gives the element offset), as in JAX's Mosaic GPU pipelines.
//
// Not expanded yet, and rejected by name: outputs of warp-specialized
// pipelines of several compute threads or of other kernels with several
// Pallas threads, pl.Element with padding (JAX refuses it too) and
// pl.BoundedSlice.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/OutlineMesh.h"

#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// A slot view's static offsets: the slot (dynamic), then zeros.
SmallVector<int64_t> slotOffsets(size_t rank) {
  SmallVector<int64_t> offsets(rank, 0);
  offsets[0] = ShapedType::kDynamic;
  return offsets;
}

class PipelineExpander {
public:
  PipelineExpander(pk::PipelineOp op) : op(op), b(op), loc(op.getLoc()) {}

  LogicalResult expand();

private:
  /// The scope's slots and barriers, as block arguments of `scope`.
  void allocate(pk::RunScopedOp scope, bool warpSpecialized);
  /// The cluster axes whose CTAs load input `input`'s blocks together.
  ArrayAttr collectiveAxes(unsigned input);
  /// The loop of the compute threads at `b`: wait for the step's slot, run
  /// the body, and either refill (`refill`) or tell the memory thread.
  scf::ForOp consumerLoop(bool refill);
  /// At `b`, before a slot the body read is released: waits until the
  /// tensor cores read it too. A wgmma of the released step is retired
  /// once at most the `delay` steps' after it are in flight (one commit
  /// group a wgmma: a body with more waits longer than it must, never
  /// shorter). Bodies that wait themselves (`wgmma_wait(delay_release)`,
  /// as JAX's kernels do) lose nothing.
  void waitForAsyncReads(int64_t delay);
  LogicalResult expandWarpSpecialized();
  /// `v` as the memory thread of a warp-specialized pipeline can use it,
  /// before `anchor`: itself, or a copy of the pure computation (Ref views,
  /// arithmetic) that makes it inside the anchor; failure for anything else.
  FailureOr<Value> hoist(Value v, Operation *anchor);
  /// What the memory thread uses for `v` (hoisted), or `v`.
  Value remap(Value v) { return inMemoryThread ? hoisted.lookupOrDefault(v) : v; }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  /// Grid axis d's extent (i32) at `b`: a constant, or the computed one.
  Value extent(unsigned d);
  /// The number of steps (i32) at `b`.
  Value stepCount();
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// The grid indices (i32) of linear step `step` (i32), row-major.
  SmallVector<Value> indicesOf(Value step);
  /// The index_map's block indices (i32, every operand's in order) at step
  /// `step`.
  SmallVector<Value> blockIndicesAt(Value step);
  /// Where operand i's block indices start among the index_map's
  /// results: after those of the operands before it.
  unsigned firstIndexOf(unsigned i);
  /// Operand i's block at `blockIndices`: a view of its global Ref.
  Value gmemWindow(unsigned i, ArrayRef<Value> blockIndices);
  /// Slot `slotIndex` (index) of `buffer`, typed as the body's Ref of
  /// operand i.
  Value slotView(unsigned i, Value buffer, Value slotIndex);
  /// Copies step `step`'s blocks of the pipelined inputs into `slot`;
  /// `before(p)`, when given, runs before the copy of pipelined input p.
  void issue(Value step, Value slot, llvm::function_ref<void(size_t)> before = {});
  /// After step `step`'s body: stores the outputs' blocks that are due
  /// from slot `slotIndex`, as one commit group.
  void storeOutputs(Value step, Value slotIndex);
  /// After the loop: stores the grid-invariant outputs from the last
  /// step's slot and waits for every store.
  void finishOutputs();

  pk::PipelineOp op;
  OpBuilder b;
  Location loc;
  SmallVector<unsigned> pipelined;  ///< operand numbers of the pipelined inputs
  SmallVector<Value> buffers;       ///< per pipelined input
  SmallVector<unsigned> outputs;    ///< operand numbers of the pipelined outputs
  SmallVector<Value> outputBuffers; ///< per pipelined output
  Value barriers;                   ///< per slot: its copies completed
  Value consumed;                   ///< warp-specialized: per slot, the compute threads are done
  /// manual_consumed_barriers: per pipelined input, per slot, the body's
  /// compute threads are done with its block.
  SmallVector<Value> consumedPerInput;
  int64_t slots = 0, delay = 0;
  std::optional<int64_t> staticSteps; ///< when the grid is static
  /// Values the memory thread uses, made again before the anchor.
  IRMapping hoisted;
  bool inMemoryThread = false;
};

FailureOr<Value> PipelineExpander::hoist(Value v, Operation *anchor) {
  Operation *where = v.getDefiningOp() ? v.getDefiningOp() : v.getParentRegion()->getParentOp();
  if (!anchor->isAncestor(where))
    return v;
  if (Value done = hoisted.lookupOrNull(v))
    return done;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() != 0 ||
      !(isMemoryEffectFree(def) || llvm::isa<pk::RefViewOp, pk::RefTransposeOp>(def)))
    return failure();
  for (Value operand : def->getOperands())
    if (failed(hoist(operand, anchor)))
      return failure();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(anchor);
  Operation *copy = b.clone(*def, hoisted);
  for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
    hoisted.map(from, to);
  return hoisted.lookup(v);
}

Value PipelineExpander::extent(unsigned d) {
  OpFoldResult e = op.getGridExtent(d);
  if (auto attr = llvm::dyn_cast<Attribute>(e))
    return i32(llvm::cast<IntegerAttr>(attr).getInt());
  // A computed extent below 0 runs no steps, as 0 does.
  Value v = arith::IndexCastOp::create(b, loc, b.getI32Type(), remap(llvm::cast<Value>(e)));
  return arith::MaxSIOp::create(b, loc, v, i32(0));
}

Value PipelineExpander::stepCount() {
  if (std::optional<int64_t> steps = op.getStaticSteps())
    return i32(*steps);
  Value steps = i32(1);
  for (unsigned d = 0; d < op.getGrid().size(); ++d)
    steps = arith::MulIOp::create(b, loc, steps, extent(d));
  return steps;
}

SmallVector<Value> PipelineExpander::indicesOf(Value step) {
  size_t rank = op.getGrid().size();
  SmallVector<Value> indices(rank);
  Value rest = step;
  for (size_t d = rank; d-- > 0;) {
    if (d == 0) {
      indices[d] = rest;
      break;
    }
    Value size = extent(d);
    indices[d] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return indices;
}

SmallVector<Value> PipelineExpander::blockIndicesAt(Value step) {
  Block &map = op.getIndexMap().front();
  IRMapping mapping = inMemoryThread ? hoisted : IRMapping();
  for (auto [arg, v] : llvm::zip(map.getArguments(), indicesOf(step)))
    mapping.map(arg, v);
  for (Operation &inner : map.without_terminator())
    b.clone(inner, mapping);
  SmallVector<Value> blockIndices;
  for (Value v : map.getTerminator()->getOperands())
    blockIndices.push_back(mapping.lookupOrDefault(v));
  return blockIndices;
}

unsigned PipelineExpander::firstIndexOf(unsigned i) {
  unsigned first = 0;
  for (unsigned j = 0; j < i; ++j)
    first += op.getSpec(j).getRank();
  return first;
}

Value PipelineExpander::gmemWindow(unsigned i, ArrayRef<Value> blockIndices) {
  unsigned first = firstIndexOf(i);
  pk::BlockSpecAttr spec = op.getSpec(i);
  Value ref = remap(op.getRefs()[i]);
  auto refType = llvm::cast<pk::RefType>(ref.getType());
  SmallVector<Value> offsets;
  SmallVector<int64_t> staticOffsets, squeeze;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    Value blockIndex =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), blockIndices[first + d]);
    // A pl.Element axis's index is already the element offset.
    offsets.push_back(spec.isElement(d) ? blockIndex
                                        : arith::MulIOp::create(b, loc, blockIndex,
                                                                index(spec.getBlockShape()[d]))
                                              .getResult());
    staticOffsets.push_back(ShapedType::kDynamic);
    if (spec.getDimKinds()[d] == pk::BlockDimKind::Squeezed)
      squeeze.push_back(d);
  }
  SmallVector<int64_t> sizes(spec.getBlockShape().begin(), spec.getBlockShape().end());
  SmallVector<int64_t> strides(sizes.size(), 1);
  auto windowType = pk::RefType::get(spec.getKernelShape(), refType.getElementType(),
                                     refType.getMemorySpace(), refType.getTransforms());
  return pk::RefViewOp::create(b, loc, windowType, ref, offsets,
                               b.getDenseI64ArrayAttr(staticOffsets), b.getDenseI64ArrayAttr(sizes),
                               b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(squeeze));
}

Value PipelineExpander::slotView(unsigned i, Value buffer, Value slotIndex) {
  auto slotType =
      llvm::cast<pk::RefType>(op.getBody().front().getArgument(op.getGrid().size() + i).getType());
  SmallVector<int64_t> sizes{1};
  sizes.append(slotType.getShape().begin(), slotType.getShape().end());
  return pk::RefViewOp::create(
      b, loc, slotType, buffer, ValueRange{slotIndex},
      b.getDenseI64ArrayAttr(slotOffsets(sizes.size())), b.getDenseI64ArrayAttr(sizes),
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(sizes.size(), 1)), b.getDenseI64ArrayAttr({0}));
}

void PipelineExpander::issue(Value step, Value slot, llvm::function_ref<void(size_t)> before) {
  SmallVector<Value> blockIndices = blockIndicesAt(step);
  Value slotIndex = arith::IndexCastOp::create(b, loc, b.getIndexType(), slot);
  for (auto [p, i] : llvm::enumerate(pipelined)) {
    if (before)
      before(p);
    Value window = gmemWindow(i, blockIndices), slot = slotView(i, buffers[p], slotIndex);
    pk::CopyGmemToSmemOp::create(b, loc, window, slot, barriers, ValueRange{slotIndex},
                                 collectiveAxes(i));
  }
}

void PipelineExpander::storeOutputs(Value step, Value slotIndex) {
  // The body's writes reach the TMA unit first.
  pk::CommitSmemOp::create(b, loc);
  SmallVector<Value> current = blockIndicesAt(step);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, step, i32(0));
  Value previousStep =
      arith::SelectOp::create(b, loc, first, i32(0), arith::SubIOp::create(b, loc, step, i32(1)));
  SmallVector<Value> previous = blockIndicesAt(previousStep);
  Value last = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, step,
      staticSteps ? i32(*staticSteps - 1) : arith::SubIOp::create(b, loc, stepCount(), i32(1)));
  Value firstOrLast = arith::OrIOp::create(b, loc, first, last);
  for (auto [p, i] : llvm::enumerate(outputs)) {
    if (op.isIndexInvariant(i))
      continue;
    Value due = firstOrLast;
    unsigned at = firstIndexOf(i);
    for (unsigned d = 0; d < op.getSpec(i).getRank(); ++d)
      due = arith::OrIOp::create(b, loc, due,
                                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                                       current[at + d], previous[at + d]));
    Value slot = slotView(i, outputBuffers[p], slotIndex), window = gmemWindow(i, current);
    pk::CopySmemToGmemOp::create(b, loc, slot, window, due, /*no_commit=*/true);
  }
  pk::CommitGroupOp::create(b, loc);
}

void PipelineExpander::finishOutputs() {
  pk::CommitSmemOp::create(b, loc);
  // The grid-invariant outputs, from the last step's slot: of a computed
  // grid, only when it ran a step.
  bool invariant = llvm::any_of(outputs, [&](unsigned i) { return op.isIndexInvariant(i); });
  if (invariant) {
    OpBuilder::InsertionGuard guard(b);
    Value lastStep;
    if (staticSteps) {
      lastStep = i32(*staticSteps - 1);
    } else {
      Value steps = stepCount();
      auto ran = scf::IfOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, steps, i32(0)),
          /*withElse=*/false);
      b.setInsertionPointToStart(ran.thenBlock());
      lastStep = arith::SubIOp::create(b, loc, steps, i32(1));
    }
    SmallVector<Value> lastIndices = blockIndicesAt(lastStep);
    Value lastSlot = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                arith::RemUIOp::create(b, loc, lastStep, i32(slots)));
    for (auto [p, i] : llvm::enumerate(outputs))
      if (op.isIndexInvariant(i)) {
        Value slot = slotView(i, outputBuffers[p], lastSlot), window = gmemWindow(i, lastIndices);
        pk::CopySmemToGmemOp::create(b, loc, slot, window, Value(), /*no_commit=*/true);
      }
  }
  pk::CommitGroupOp::create(b, loc);
  pk::WaitSmemToGmemOp::create(b, loc, /*allow_groups=*/0, /*read_only=*/false);
}

void PipelineExpander::allocate(pk::RunScopedOp scope, bool warpSpecialized) {
  Block &body = op.getBody().front();
  unsigned gridRank = op.getGrid().size();
  Block *scopeBody = new Block();
  scope.getBody().push_back(scopeBody);
  // Operand i's slots: one buffer of `slots` blocks, laid out as the
  // body's Ref of it.
  auto addSlots = [&](unsigned i) {
    auto slotType = llvm::cast<pk::RefType>(body.getArgument(gridRank + i).getType());
    SmallVector<int64_t> shape{slots};
    shape.append(slotType.getShape().begin(), slotType.getShape().end());
    return scopeBody->addArgument(pk::RefType::get(shape, slotType.getElementType(),
                                                   slotType.getMemorySpace(),
                                                   slotType.getTransforms()),
                                  loc);
  };
  for (unsigned i : pipelined)
    buffers.push_back(addSlots(i));
  for (unsigned i : outputs)
    outputBuffers.push_back(addSlots(i));
  auto barrierType = [&](int64_t arrivals, ArrayRef<Attribute> clusterAxes = {}) {
    return pk::BarrierType::get(b.getContext(), {slots}, std::max<int64_t>(1, arrivals),
                                b.getArrayAttr(clusterAxes), false);
  };
  barriers = scopeBody->addArgument(barrierType(pipelined.size()), loc);
  // A slot that CTAs fill together (collective_axes: each multicasts its
  // slice into all of them) is free when the compute threads of all of
  // them are done with it: its consumed barrier is a cluster barrier.
  if (warpSpecialized && op.getManualConsumedBarriers()) {
    for (unsigned i : pipelined)
      consumedPerInput.push_back(scopeBody->addArgument(
          barrierType(*op.getNumComputeWgs(), collectiveAxes(i).getValue()), loc));
  } else if (warpSpecialized) {
    SmallVector<Attribute> all;
    for (unsigned i : pipelined)
      for (Attribute axis : collectiveAxes(i))
        if (!llvm::is_contained(all, axis))
          all.push_back(axis);
    consumed = scopeBody->addArgument(barrierType(*op.getNumComputeWgs(), all), loc);
  }
}

ArrayAttr PipelineExpander::collectiveAxes(unsigned input) {
  std::optional<ArrayAttr> axes = op.getCollectiveAxes();
  return axes ? llvm::cast<ArrayAttr>((*axes)[input]) : b.getArrayAttr({});
}

scf::ForOp PipelineExpander::consumerLoop(bool refill) {
  Block &body = op.getBody().front();
  unsigned gridRank = op.getGrid().size();
  auto loop = scf::ForOp::create(b, loc, i32(0), stepCount(), i32(1), op.getInits());
  OpBuilder::InsertionGuard guard(b);
  Block *loopBody = loop.getBody();
  if (!loopBody->empty())
    loopBody->getTerminator()->erase();
  b.setInsertionPointToEnd(loopBody);
  Value step = loop.getInductionVar();
  Value slot = arith::RemUIOp::create(b, loc, step, i32(slots));
  Value slotIndex = arith::IndexCastOp::create(b, loc, b.getIndexType(), slot);
  if (!pipelined.empty())
    pk::BarrierWaitOp::create(b, loc, barriers, ValueRange{slotIndex});
  // The output slot this step writes was stored `slots` steps ago: that
  // store must have read it (one commit group a step).
  if (!outputs.empty())
    pk::WaitSmemToGmemOp::create(b, loc, /*allow_groups=*/slots - 1, /*read_only=*/true);
  // The body, on this step's indices, slots and carry.
  IRMapping mapping;
  for (auto [arg, v] : llvm::zip(body.getArguments().take_front(gridRank), indicesOf(step)))
    mapping.map(arg, v);
  for (unsigned i = 0; i < op.getRefs().size(); ++i) {
    BlockArgument arg = body.getArgument(gridRank + i);
    if (auto *at = llvm::find(pipelined, i); at != pipelined.end())
      mapping.map(arg, slotView(i, buffers[at - pipelined.begin()], slotIndex));
    else if (auto *out = llvm::find(outputs, i); out != outputs.end())
      mapping.map(arg, slotView(i, outputBuffers[out - outputs.begin()], slotIndex));
    else
      mapping.map(arg, op.getRefs()[i]);
  }
  // A warp-specialized step releases the slot step - delay used (the
  // steps before `delay` release none), as JAX's pipelines do: the body
  // may still read the blocks of the `delay` steps before its own. The
  // slot of a step before `delay` is only named (the body must not arrive
  // there, as in JAX), so it is kept in range.
  Value releasedSlotIndex = slotIndex;
  if (delay > 0 && (consumed || !consumedPerInput.empty())) {
    Value released = arith::AddIOp::create(b, loc, step, i32(slots - delay));
    releasedSlotIndex = arith::IndexCastOp::create(
        b, loc, b.getIndexType(), arith::RemUIOp::create(b, loc, released, i32(slots)));
  }
  // The consumed barriers (manual_consumed_barriers) are the released
  // slot of each input's: the body's arrivals there get it as index.
  unsigned consumedArgs = gridRank + op.getRefs().size();
  for (size_t p = 0; p < op.getNumConsumedBarriers(); ++p)
    mapping.map(body.getArgument(consumedArgs + p), consumedPerInput[p]);
  for (auto [arg, v] :
       llvm::zip(body.getArguments().drop_front(consumedArgs + op.getNumConsumedBarriers()),
                 loop.getRegionIterArgs()))
    mapping.map(arg, v);
  Operation *beforeBody = b.getInsertionBlock()->empty() ? nullptr : &b.getInsertionBlock()->back();
  for (Operation &inner : body.without_terminator())
    b.clone(inner, mapping);
  if (!consumedPerInput.empty())
    for (Operation *cloned = beforeBody ? beforeBody->getNextNode() : &loopBody->front(); cloned;
         cloned = cloned->getNextNode())
      cloned->walk([&](pk::BarrierArriveOp arrive) {
        if (llvm::is_contained(consumedPerInput, arrive.getBarrier()))
          arrive.getIndicesMutable().assign(releasedSlotIndex);
      });
  SmallVector<Value> carry;
  for (Value v : body.getTerminator()->getOperands())
    carry.push_back(mapping.lookupOrDefault(v));
  if (!outputs.empty())
    storeOutputs(step, slotIndex);
  if (!consumedPerInput.empty()) {
    // The body released each input's slot itself.
  } else if (consumed && !pipelined.empty()) {
    // This compute thread is done with the slot step - delay used, once
    // the tensor cores are (below).
    OpBuilder::InsertionGuard inner(b);
    if (delay > 0) {
      Value started = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, step, i32(delay));
      auto branch = scf::IfOp::create(b, loc, started, /*withElse=*/false);
      b.setInsertionPointToStart(branch.thenBlock());
    }
    waitForAsyncReads(delay);
    pk::BarrierArriveOp::create(b, loc, consumed, ValueRange{releasedSlotIndex});
  } else if (refill && !pipelined.empty() && (!staticSteps || *staticSteps > slots)) {
    // The slot step - delay used is free: fill it with step - delay + slots.
    Value released = arith::SubIOp::create(b, loc, step, i32(delay));
    Value next = arith::AddIOp::create(b, loc, released, i32(slots));
    Value started = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, step, i32(delay));
    Value left = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, stepCount());
    Value due = arith::AndIOp::create(b, loc, started, left);
    auto branch = scf::IfOp::create(b, loc, due, /*withElse=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(branch.thenBlock());
    waitForAsyncReads(delay);
    issue(next, arith::RemUIOp::create(b, loc, released, i32(slots)));
  }
  scf::YieldOp::create(b, loc, carry);
  return loop;
}

void PipelineExpander::waitForAsyncReads(int64_t delay) {
  bool readsSlotsAsync = false;
  op.getBody().walk([&](pk::WgmmaOp) { readsSlotsAsync = true; });
  if (readsSlotsAsync)
    pk::WgmmaWaitOp::create(b, loc, b.getI64IntegerAttr(delay));
}

LogicalResult PipelineExpander::expand() {
  // Outputs of kernels with several Pallas threads, unless one compute
  // thread of a warp-specialized pipeline stores them: every thread would
  // store the same slots. (pkc rejects them by name before, in
  // MosaicGpuSupport.cpp; this is for IR that reaches the pass otherwise,
  // as pk-opt's.)
  auto mesh = op->getParentOfType<pk::MeshKernelOp>();
  bool oneStorer = op.getWarpSpecialized() ? op.getNumComputeWgs().value_or(1) == 1
                                           : !(mesh && mesh.getNumThreads() > 1);
  if (!op.getOutSpecs().empty() && !oneStorer)
    return op.emitError("the CUDA backend pipelines outputs (out_specs) only in kernels of one "
                        "Pallas thread or warp-specialized pipelines of one compute thread");
  for (unsigned i = 0; i < op.getRefs().size(); ++i) {
    pk::BlockSpecAttr spec = op.getSpec(i);
    for (unsigned d = 0; d < spec.getRank(); ++d) {
      if (spec.isBounded(d))
        return op.emitError("the CUDA backend does not pipeline pl.BoundedSlice block dimensions");
      // As in JAX's Mosaic GPU pipelines, which refuse it too.
      if (spec.isElement(d) && (spec.getPaddingLow()[d] != 0 || spec.getPaddingHigh()[d] != 0))
        return op.emitError("pl.Element with padding is not supported in plgpu.emit_pipeline");
    }
    if (op.isPipelined(i))
      (i < op.getNumIns() ? pipelined : outputs).push_back(i);
  }
  slots = op.getMaxConcurrentSteps();
  staticSteps = op.getStaticSteps();
  for (int64_t d : op.getDelayRelease())
    delay = std::max(delay, d);
  if (op.getWarpSpecialized())
    return expandWarpSpecialized();

  // The scope: slots of every pipelined operand, a barrier per slot.
  SmallVector<StringRef> collective;
  if (mesh && mesh.getThreadName())
    collective.push_back(*mesh.getThreadName());
  auto scope = pk::RunScopedOp::create(b, loc, op.getResultTypes(), b.getStrArrayAttr(collective),
                                       ArrayAttr());
  allocate(scope, /*warpSpecialized=*/false);
  b.setInsertionPointToStart(&scope.getBodyBlock());
  // The first steps' blocks (those of the steps there are, when the grid
  // is computed).
  if (!pipelined.empty()) {
    Value steps = staticSteps ? Value() : stepCount();
    for (int64_t s = 0; s < (staticSteps ? std::min(slots, *staticSteps) : slots); ++s) {
      if (staticSteps) {
        issue(i32(s), i32(s));
        continue;
      }
      auto exists = scf::IfOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i32(s), steps),
          /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(exists.thenBlock());
      issue(i32(s), i32(s));
    }
  }
  scf::ForOp loop = consumerLoop(/*refill=*/true);
  if (!outputs.empty())
    finishOutputs();
  pk::ScopeYieldOp::create(b, loc, loop.getResults());
  op->replaceAllUsesWith(scope.getResults());
  op->erase();
  return success();
}

LogicalResult PipelineExpander::expandWarpSpecialized() {
  // The memory thread never reaches the op (the program runs it in the
  // compute threads): its loop goes right before the branch the front end
  // made for the compute threads at the pipeline's call, which every
  // thread reaches (inside a persistent kernel's loop over tiles, too);
  // without one, before the outermost op holding the pipeline that every
  // thread runs. The slots go around both.
  Operation *anchor = op;
  while (anchor && !anchor->hasAttr(pk::PipelineOp::getWarpSpecializedBranchAttrName()))
    anchor = anchor->getParentOp();
  if (!anchor) {
    anchor = op;
    while (anchor->getParentOp() &&
           !llvm::isa<pk::RunScopedOp, pk::MeshKernelOp>(anchor->getParentOp()))
      anchor = anchor->getParentOp();
  }
  auto mesh = op->getParentOfType<pk::MeshKernelOp>();
  if (!anchor->getParentOp() || !mesh || !mesh.getThreadName() || anchor->getNumResults() != 0)
    return op.emitError("plgpu.emit_pipeline_warp_specialized needs a kernel with a thread axis");
  // The memory thread's copies use the operands and what the index maps
  // capture: computed inside the anchor, they are computed again before it
  // (views like `k_ref.at[b, :, h]` and their index arithmetic).
  bool local = false;
  for (unsigned i : pipelined)
    local |= failed(hoist(op.getRefs()[i], anchor));
  for (Value extent : op.getDynamicGrid())
    local |= failed(hoist(extent, anchor));
  op.getIndexMap().walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()))
        local |= failed(hoist(v, anchor));
  });
  // A consumed barrier is one slot of an array here: arrivals are all the
  // body may do with it; and every input has slots to release.
  Block &body = op.getBody().front();
  if (op.getNumConsumedBarriers() && op.getNumConsumedBarriers() != pipelined.size())
    return op.emitError("with manual_consumed_barriers every input of the pipeline must be "
                        "pipelined (an input left in GMEM has no slot to release)");
  for (size_t p = 0; p < op.getNumConsumedBarriers(); ++p)
    for (Operation *user :
         body.getArgument(op.getGrid().size() + op.getRefs().size() + p).getUsers())
      if (!llvm::isa<pk::BarrierArriveOp>(user))
        return user->emitError("the CUDA backend lets a pipeline body only arrive at its consumed "
                               "barriers (plgpu.barrier_arrive)");
  if (local)
    return op.emitError("the CUDA backend runs a warp-specialized pipeline's copies in its memory "
                        "thread, so its operands and index maps may use only values the whole "
                        "kernel computes before the pipeline's branch, or arithmetic and Ref views "
                        "of them");
  // The compute threads take the registers the memory thread gives up, as
  // JAX's emit_pipeline_warp_specialized does: (512 - memory) / compute
  // warpgroups, at most 256, a multiple of 8.
  auto branch = llvm::dyn_cast<scf::IfOp>(anchor);
  if (std::optional<int64_t> registers = op.getMemoryRegisters();
      registers && branch && anchor->hasAttr(pk::PipelineOp::getWarpSpecializedBranchAttrName())) {
    int64_t compute = std::min<int64_t>(256, (512 - *registers) / *op.getNumComputeWgs()) / 8 * 8;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    pk::SetMaxRegistersOp::create(b, loc, b.getI64IntegerAttr(compute), b.getUnitAttr());
  }
  b.setInsertionPoint(anchor);
  auto scope = pk::RunScopedOp::create(b, loc, TypeRange{}, b.getStrArrayAttr({*mesh.getThreadName()}),
                                       ArrayAttr());
  allocate(scope, /*warpSpecialized=*/true);
  Block &scopeBody = scope.getBodyBlock();
  b.setInsertionPointToStart(&scopeBody);
  // The memory thread: each step's copies once the compute threads are
  // done with the slot's previous step.
  Value wg = pk::AxisIndexOp::create(b, loc, b.getI32Type(), *op.getWgAxis());
  Value isMemory = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wg, i32(*op.getMemoryThread()));
  auto memory = scf::IfOp::create(b, loc, isMemory, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(memory.thenBlock());
    if (std::optional<int64_t> registers = op.getMemoryRegisters())
      pk::SetMaxRegistersOp::create(b, loc, b.getI64IntegerAttr(*registers), UnitAttr());
    inMemoryThread = true;
    auto loop = scf::ForOp::create(b, loc, i32(0), stepCount(), i32(1));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value step = loop.getInductionVar();
    Value slot = arith::RemUIOp::create(b, loc, step, i32(slots));
    Value reused = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, step, i32(slots));
    // Wait until the compute threads released `barrier`'s slot (from the
    // second round of slots on).
    auto waitReleased = [&](Value barrier) {
      auto wait = scf::IfOp::create(b, loc, reused, /*withElse=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(wait.thenBlock());
      pk::BarrierWaitOp::create(
          b, loc, barrier, ValueRange{arith::IndexCastOp::create(b, loc, b.getIndexType(), slot)});
    };
    if (consumedPerInput.empty()) {
      waitReleased(consumed);
      issue(step, slot);
    } else {
      // Each input is refilled as soon as the body released its slot.
      issue(step, slot, [&](size_t p) { waitReleased(consumedPerInput[p]); });
    }
    inMemoryThread = false;
  }
  pk::ScopeYieldOp::create(b, loc, ValueRange{});
  // The anchor runs inside the scope, after the memory thread's branch.
  anchor->moveBefore(scopeBody.getTerminator());
  // The compute threads: the loop in place of the op.
  b.setInsertionPoint(op);
  scf::ForOp loop = consumerLoop(/*refill=*/false);
  // The compute thread stores the outputs, as emit_pipeline does.
  if (!outputs.empty())
    finishOutputs();
  op->replaceAllUsesWith(loop.getResults());
  op->erase();
  return success();
}

} // namespace

LogicalResult expandPipelines(ModuleOp module) {
  SmallVector<pk::PipelineOp> pipelines;
  module.walk([&](pk::PipelineOp op) {
    if (op->getParentOfType<pk::MeshKernelOp>())
      pipelines.push_back(op);
  });
  bool failed = false;
  for (pk::PipelineOp op : pipelines)
    failed |= mlir::failed(PipelineExpander(op).expand());
  return failure(failed);
}

} // namespace pk::gpu
