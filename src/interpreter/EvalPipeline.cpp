//===- EvalPipeline.cpp - pk.pipeline in the interpreter ------------------===//
//
// What emit_pipeline does, step by step, as JAX's implementation does it:
// each pipelined operand has max_concurrent_steps shared-memory slots and
// step s uses slot s % max_concurrent_steps. Input blocks are copied in
// before the body needs them (JAX copies them earlier; valid programs
// cannot tell). After the body, an output block is copied out when its
// block index differs from the previous step's, and at the last step; an
// output whose index map ignores the grid is copied out once, after the
// last step, from the last slot.
//
// A TPU pipeline (pltpu.emit_pipeline) has one buffer per operand: its
// inputs are copied in before every step and its outputs out after every
// step, which gives what Pallas's schedule gives (a block revisited on
// consecutive steps accumulates in the buffer; the last step to write a
// block wins). Along a pl.BoundedSlice axis only the step's `size`
// elements move, into and out of the front of the buffer, and so do the
// elements of an edge block that a blocked axis's array ends in; the rest
// of the buffer keeps what it held.
//
// A warp-specialized pipeline is run by every compute thread on the same
// slots: a step's inputs are copied in once, after every compute thread
// finished the step that used the slot before, and its outputs are copied
// out when the last compute thread finished it. With
// manual_consumed_barriers the body releases each input's slot itself, by
// arriving at the barrier it is given for that input: the step's inputs
// are copied in once every compute thread has arrived at each input's
// barrier for the step that used the slot before. A step releases the
// slot of the step `delay_release` before it (its barrier is the one the
// body gets), as in JAX.
//
//===----------------------------------------------------------------------===//
#include "interpreter/MeshRuntime.h"

#include "ir/DTypeMapping.h"
#include "support/ShapeText.h"

#include <algorithm>

namespace pk::interp {

using namespace mlir;

struct PipelineState {
  /// Per operand, per slot: the shared-memory buffer (none for operands
  /// that stay in global memory).
  std::vector<std::vector<std::unique_ptr<RefBuffer>>> slots;
  std::vector<int64_t> done;                     ///< compute threads done with each step
  std::vector<bool> fetched;                     ///< inputs of each step copied in
  std::vector<std::vector<int64_t>> lastStore;   ///< per output: last block stored
  std::vector<std::vector<int64_t>> lastIndices; ///< block indices of the last step
  /// manual_consumed_barriers: per input, per slot, the barrier the body
  /// arrives at when it is done with the input's block.
  std::vector<std::vector<std::unique_ptr<BarrierArray>>> consumed;
  int64_t releases = 0;
};

namespace {

/// Where one step's block of an operand lies: per axis, its first element
/// and how many elements it spans.
struct Window {
  std::vector<int64_t> starts, sizes;
  bool partial = false; ///< some axis spans less than its block
};

/// The window of `spec` over an array of `shape` from the index_map's
/// values for it (`values`: one per axis, start and size for a bounded
/// axis). In a TPU pipeline (`tpu`) a blocked axis's last block ends with
/// the array, as Pallas cuts it; a Mosaic GPU pipeline's blocks must fit.
Window windowOf(Operation *op, pk::BlockSpecAttr spec, const std::vector<int64_t> &shape,
                const std::vector<int64_t> &values, bool tpu, const std::string &what) {
  Window w;
  size_t at = 0;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    int64_t block = spec.getBlockShape()[d];
    int64_t index = values[at++];
    switch (spec.getDimKinds()[d]) {
    case pk::BlockDimKind::Blocked: {
      int64_t start = index * block;
      int64_t size = tpu && start < shape[d] ? std::min(block, shape[d] - start) : block;
      w.starts.push_back(start);
      w.sizes.push_back(size);
      w.partial |= size != block;
      break;
    }
    case pk::BlockDimKind::Squeezed:
    case pk::BlockDimKind::Element:
      w.starts.push_back(index);
      w.sizes.push_back(block);
      break;
    case pk::BlockDimKind::Bounded: {
      int64_t size = values[at++];
      if (size < 0 || size > block)
        throw RunError{"the index_map gives " + what + " a slice of " + std::to_string(size) +
                           " elements along axis " + std::to_string(d) +
                           ", outside its pl.BoundedSlice(" + std::to_string(block) + ")",
                       op->getLoc()};
      w.starts.push_back(index);
      w.sizes.push_back(size);
      w.partial |= size != block;
      break;
    }
    }
  }
  return w;
}

/// `window` of the global Ref `array`, as a view (squeezed axes dropped).
/// A Mosaic GPU pipeline's blocks (`tmaBounds`) may reach past the Ref, as
/// TMA's boxes may: that part reads as zeros and is not written. A TPU
/// pipeline's must lie in it.
RefBuffer blockView(Operation *op, const RefBuffer &array, pk::BlockSpecAttr spec,
                    const Window &window, const std::string &what, bool tmaBounds) {
  const std::vector<int64_t> &shape = array.viewShape();
  std::vector<int64_t> strides = array.elementStrides();
  RefBuffer view = array.emptyView();
  std::vector<int64_t> inBounds;
  bool partial = false, outside = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t start = window.starts[d], size = window.sizes[d];
    if (start < 0 || (start + size > shape[d] && !tmaBounds))
      throw RunError{"the pipeline's block at " + shapeText(window.starts) + " (sizes " +
                         shapeText(window.sizes) + ") of " + what +
                         " is out of bounds of its Ref of shape " + shapeText(shape),
                     op->getLoc()};
    // Of a global Ref that reaches past its array, the block's part past
    // it is read as zeros and not written (TMA's bounds; copy()).
    int64_t inside =
        std::clamp<int64_t>(std::min(array.extentInBounds(d), shape[d]) - start, 0, size);
    view.offset += start * strides[d];
    if (!spec.isSqueezed(static_cast<unsigned>(d))) {
      view.shape.push_back(size);
      view.strides.push_back(strides[d]);
      inBounds.push_back(inside);
    } else if (inside == 0) {
      outside = true;
    }
    partial |= inside < size;
  }
  if (partial) {
    if (outside)
      std::fill(inBounds.begin(), inBounds.end(), 0);
    view.inBounds = std::move(inBounds);
  }
  return view;
}

/// The part of a block's buffer that `window` fills: all of it, or its
/// front along the axes that span less than their block.
RefBuffer bufferPart(RefBuffer &buffer, pk::BlockSpecAttr spec, const Window &window) {
  if (!window.partial)
    return buffer;
  RefBuffer view = buffer.emptyView();
  std::vector<int64_t> strides = buffer.elementStrides();
  size_t axis = 0;
  for (unsigned d = 0; d < spec.getRank(); ++d) {
    if (spec.isSqueezed(d))
      continue;
    view.shape.push_back(window.sizes[d]);
    view.strides.push_back(strides[axis++]);
  }
  return view;
}

void copy(const RefBuffer &from, RefBuffer &to) {
  const std::vector<int64_t> &shape = from.viewShape();
  std::vector<int64_t> fs = from.elementStrides(), ts = to.elementStrides();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t a = from.base(), b = to.base();
    for (size_t d = 0; d < shape.size(); ++d) {
      a += index[d] * fs[d];
      b += index[d] * ts[d];
    }
    // Past the array a global block views (RefBuffer::inBounds), a load
    // reads zeros and a store writes nothing, as TMA's do.
    if (to.holdsElement(k)) {
      bool read = from.holdsElement(k);
      if (from.data->element.isFloat)
        to.data->f[b] = read ? from.data->f[a] : 0.0;
      else
        to.data->i[b] = read ? from.data->i[a] : 0;
    }
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  to.written = true;
}

} // namespace

void Evaluator::evalPipeline(Operation *operation) {
  auto op = llvm::cast<pk::PipelineOp>(operation);
  // A computed extent (dynamic_grid) of 0 or less runs no steps.
  std::vector<int64_t> grid(op.getGrid().begin(), op.getGrid().end());
  for (size_t d = 0, k = 0; d < grid.size(); ++d)
    if (ShapedType::isDynamic(grid[d]))
      grid[d] = std::max<int64_t>(0, get(op.getDynamicGrid()[k++])->i[0]);
  int64_t steps = 1;
  for (int64_t g : grid)
    steps *= g;
  int64_t slotsPerOperand = static_cast<int64_t>(op.getMaxConcurrentSteps());
  size_t numOperands = op.getRefs().size(), numIns = op.getNumIns();
  bool shared = op.getWarpSpecialized() && thread;
  // A warp-specialized step releases the slot of the step `delay` before
  // it (delay_release), as JAX's pipelines do.
  int64_t delay = 0;
  for (int64_t d : op.getDelayRelease())
    delay = std::max(delay, d);
  bool tpu = op.isTpu();
  int64_t computeThreads = shared ? static_cast<int64_t>(*op.getNumComputeWgs()) : 1;
  bool manual = op.getManualConsumedBarriers();
  Block &body = op.getBody().front();

  std::vector<RefBuffer *> arrays;
  for (Value v : op.getRefs())
    arrays.push_back(&getRef(v));

  // The state: this thread's, or that of every compute thread of the CTA.
  std::shared_ptr<PipelineState> state;
  std::pair<Operation *, int64_t> key{operation, 0};
  if (shared) {
    key.second = thread->occurrences[operation]++;
    state = thread->cta->pipelines[key];
    if (!state)
      state = thread->cta->pipelines[key] = std::make_shared<PipelineState>();
  } else {
    state = std::make_shared<PipelineState>();
  }
  if (state->slots.empty()) {
    state->slots.resize(numOperands);
    for (size_t i = 0; i < numOperands; ++i) {
      if (!op.isPipelined(static_cast<unsigned>(i)))
        continue;
      auto type = llvm::cast<pk::RefType>(body.getArgument(grid.size() + i).getType());
      for (int64_t s = 0; s < slotsPerOperand; ++s) {
        auto buffer = std::make_unique<RefBuffer>();
        buffer->dtype = *dtypeOf(type.getElementType());
        buffer->data =
            makeTensor(elementKindOf(buffer->dtype), std::vector<int64_t>(type.getShape()));
        fillUninitialized(*buffer->data, buffer->dtype);
        state->slots[i].push_back(std::move(buffer));
      }
    }
    if (manual) {
      state->consumed.resize(numIns);
      for (auto &perSlot : state->consumed)
        for (int64_t s = 0; s < slotsPerOperand; ++s) {
          auto barriers = std::make_unique<BarrierArray>();
          barriers->type = op.consumedBarrierType();
          barriers->barriers.resize(1);
          barriers->barriers[0].arrivalsNeeded = computeThreads;
          perSlot.push_back(std::move(barriers));
        }
    }
    state->done.assign(static_cast<size_t>(steps), 0);
    state->fetched.assign(static_cast<size_t>(steps), false);
    state->lastStore.assign(numOperands, {});
  }

  // Which outputs' blocks move with the grid.
  std::vector<bool> invariant(numOperands, false);
  for (size_t i = 0; i < numOperands; ++i)
    invariant[i] = op.isIndexInvariant(static_cast<unsigned>(i));
  auto what = [&](size_t i) {
    return i < numIns ? "input " + std::to_string(i) : "output " + std::to_string(i - numIns);
  };

  std::vector<TensorPtr> carry;
  for (Value v : op.getInits())
    carry.push_back(get(v));
  std::vector<int64_t> index(grid.size(), 0);
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<TensorPtr> indexValues;
    for (int64_t g : index) {
      TensorPtr t = makeTensor(elementKindOf(DType::I32), {});
      t->i[0] = g;
      indexValues.push_back(t);
    }
    std::vector<TensorPtr> flat = runRegion(op.getIndexMap(), indexValues);
    std::vector<std::vector<int64_t>> blocks;
    std::vector<Window> windows;
    size_t at = 0;
    for (size_t i = 0; i < numOperands; ++i) {
      pk::BlockSpecAttr spec = op.getSpec(static_cast<unsigned>(i));
      std::vector<int64_t> b;
      for (int64_t d = 0; d < spec.getNumIndexValues(); ++d)
        b.push_back(flat[at++]->i[0]);
      windows.push_back(windowOf(operation, spec, arrays[i]->viewShape(), b, tpu, what(i)));
      blocks.push_back(b);
    }
    int64_t slot = s % slotsPerOperand;
    if (manual && s >= slotsPerOperand && !state->fetched[s]) {
      // Every input's slot released (phase s / slots of its barrier).
      int64_t phase = s / slotsPerOperand;
      for (auto &perSlot : state->consumed) {
        Barrier *released = &perSlot[slot]->barriers[0];
        if (released->phase < phase) {
          if (!thread)
            fail(operation, "deadlock: the pipeline's consumed barrier can never complete");
          thread->run->scheduler->wait(
              operation, "the compute threads to arrive at a pipeline input's consumed barrier",
              [released, phase] { return released->phase >= phase; });
        }
        released->observed = true;
      }
    } else if (!manual && shared && s >= slotsPerOperand) {
      int64_t *done = &state->done[s - slotsPerOperand + delay];
      thread->run->scheduler->wait(operation,
                                   "the other compute threads to release a pipeline slot",
                                   [done, computeThreads] { return *done >= computeThreads; });
    }
    if (!state->fetched[s]) {
      for (size_t i = 0; i < numIns; ++i)
        if (op.isPipelined(static_cast<unsigned>(i))) {
          pk::BlockSpecAttr spec = op.getSpec(static_cast<unsigned>(i));
          RefBuffer to = bufferPart(*state->slots[i][slot], spec, windows[i]);
          copy(blockView(operation, *arrays[i], spec, windows[i], what(i), !tpu), to);
        }
      state->fetched[s] = true;
    }
    std::vector<TensorPtr> args = indexValues;
    for (size_t i = 0; i < numOperands; ++i) {
      Value arg = body.getArgument(grid.size() + i);
      bindRef(arg,
              op.isPipelined(static_cast<unsigned>(i)) ? state->slots[i][slot].get() : arrays[i]);
      args.push_back(nullptr);
    }
    for (size_t i = 0; i < op.getNumConsumedBarriers(); ++i) {
      syncObjects[body.getArgument(grid.size() + numOperands + i)] =
          state->consumed[i][(s + slotsPerOperand - delay) % slotsPerOperand].get();
      args.push_back(nullptr);
    }
    args.insert(args.end(), carry.begin(), carry.end());
    carry = runRegion(op.getBody(), args);
    if (++state->done[s] == computeThreads) {
      for (size_t i = numIns; i < numOperands; ++i) {
        if (!op.isPipelined(static_cast<unsigned>(i)) || (invariant[i] && !tpu))
          continue;
        // A TPU pipeline keeps one buffer per operand, so writing it out
        // after every step leaves each block as Pallas leaves it (the last
        // step that wrote it wins).
        if (tpu || blocks[i] != state->lastStore[i] || s == steps - 1) {
          pk::BlockSpecAttr spec = op.getSpec(static_cast<unsigned>(i));
          RefBuffer target = blockView(operation, *arrays[i], spec, windows[i], what(i), !tpu);
          copy(bufferPart(*state->slots[i][slot], spec, windows[i]), target);
          state->lastStore[i] = blocks[i];
        }
      }
      if (s == steps - 1 && !tpu)
        for (size_t i = numIns; i < numOperands; ++i)
          if (op.isPipelined(static_cast<unsigned>(i)) && invariant[i]) {
            RefBuffer target =
                blockView(operation, *arrays[i], op.getSpec(static_cast<unsigned>(i)), windows[i],
                          what(i), /*tmaBounds=*/true);
            copy(*state->slots[i][slot], target);
          }
    }
    for (size_t d = grid.size(); d-- > 0;) {
      if (++index[d] < grid[d])
        break;
      index[d] = 0;
    }
  }
  for (size_t k = 0; k < carry.size(); ++k)
    set(op.getResult(k), carry[k]);
  if (shared && ++state->releases == computeThreads)
    thread->cta->pipelines.erase(key);
}

} // namespace pk::interp
