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
// block wins).
//
// A warp-specialized pipeline is run by every compute thread on the same
// slots: a step's inputs are copied in once, after every compute thread
// finished the step that used the slot before, and its outputs are copied
// out when the last compute thread finished it.
//
//===----------------------------------------------------------------------===//
#include "interpreter/MeshRuntime.h"

#include "ir/DTypeMapping.h"
#include "support/ShapeText.h"

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
  int64_t releases = 0;
};

namespace {

/// Whether a value computed in the index_map region depends on the grid
/// indices (its block arguments).
bool dependsOnGrid(Value v, Block &block, llvm::DenseMap<Value, bool> &memo) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &block;
  Operation *def = v.getDefiningOp();
  if (!def || !block.getParent()->isAncestor(def->getParentRegion()))
    return false; // defined outside the pipeline: a kernel value
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  bool depends = def->getNumRegions() > 0;
  for (Value operand : def->getOperands())
    depends = depends || dependsOnGrid(operand, block, memo);
  memo[v] = depends;
  return depends;
}

/// The block of global Ref `array` at `indices` (one per axis, squeezed
/// axes included), as a view.
RefBuffer blockView(Operation *op, const RefBuffer &array, pk::BlockSpecAttr spec,
                    const std::vector<int64_t> &indices, const std::string &what) {
  const std::vector<int64_t> &shape = array.viewShape();
  std::vector<int64_t> strides = array.elementStrides();
  RefBuffer view;
  view.data = array.data;
  view.dtype = array.dtype;
  view.isView = true;
  view.offset = array.base();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t size = spec.getBlockShape()[d];
    int64_t start =
        spec.getDimKinds()[d] == pk::BlockDimKind::Blocked ? indices[d] * size : indices[d];
    if (start < 0 || start + size > shape[d])
      throw RunError{"the pipeline's block " + shapeText(indices) + " of " + what +
                         " is out of bounds of its Ref of shape " + shapeText(shape),
                     op->getLoc()};
    view.offset += start * strides[d];
    if (!spec.isSqueezed(static_cast<unsigned>(d))) {
      view.shape.push_back(size);
      view.strides.push_back(strides[d]);
    }
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
    if (from.data->element.isFloat)
      to.data->f[b] = from.data->f[a];
    else
      to.data->i[b] = from.data->i[a];
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
  std::vector<int64_t> grid(op.getGrid().begin(), op.getGrid().end());
  int64_t steps = 1;
  for (int64_t g : grid)
    steps *= g;
  int64_t slotsPerOperand = static_cast<int64_t>(op.getMaxConcurrentSteps());
  size_t numOperands = op.getRefs().size(), numIns = op.getNumIns();
  bool shared = op.getWarpSpecialized() && thread;
  bool tpu = op.isTpu();
  int64_t computeThreads = shared ? static_cast<int64_t>(*op.getNumComputeWgs()) : 1;
  Block &mapBlock = op.getIndexMap().front();
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
    state->done.assign(static_cast<size_t>(steps), 0);
    state->fetched.assign(static_cast<size_t>(steps), false);
    state->lastStore.assign(numOperands, {});
  }

  // Which outputs' blocks move with the grid.
  std::vector<bool> invariant(numOperands, false);
  {
    llvm::DenseMap<Value, bool> memo;
    Operation *yield = mapBlock.getTerminator();
    size_t at = 0;
    for (size_t i = 0; i < numOperands; ++i) {
      bool depends = false;
      size_t rank = op.getSpec(static_cast<unsigned>(i)).getRank();
      for (size_t d = 0; d < rank; ++d)
        depends = depends || dependsOnGrid(yield->getOperand(at + d), mapBlock, memo);
      at += rank;
      invariant[i] = !depends;
    }
  }
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
    size_t at = 0;
    for (size_t i = 0; i < numOperands; ++i) {
      std::vector<int64_t> b;
      for (size_t d = 0; d < op.getSpec(static_cast<unsigned>(i)).getRank(); ++d)
        b.push_back(flat[at++]->i[0]);
      blocks.push_back(b);
    }
    int64_t slot = s % slotsPerOperand;
    if (shared && s >= slotsPerOperand) {
      int64_t *done = &state->done[s - slotsPerOperand];
      thread->run->scheduler->wait(operation,
                                   "the other compute threads to release a pipeline slot",
                                   [done, computeThreads] { return *done >= computeThreads; });
    }
    if (!state->fetched[s]) {
      for (size_t i = 0; i < numIns; ++i)
        if (op.isPipelined(static_cast<unsigned>(i)))
          copy(blockView(operation, *arrays[i], op.getSpec(static_cast<unsigned>(i)), blocks[i],
                         what(i)),
               *state->slots[i][slot]);
      state->fetched[s] = true;
    }
    std::vector<TensorPtr> args = indexValues;
    for (size_t i = 0; i < numOperands; ++i) {
      Value arg = body.getArgument(grid.size() + i);
      bindRef(arg,
              op.isPipelined(static_cast<unsigned>(i)) ? state->slots[i][slot].get() : arrays[i]);
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
          RefBuffer target = blockView(operation, *arrays[i], op.getSpec(static_cast<unsigned>(i)),
                                       blocks[i], what(i));
          copy(*state->slots[i][slot], target);
          state->lastStore[i] = blocks[i];
        }
      }
      if (s == steps - 1 && !tpu)
        for (size_t i = numIns; i < numOperands; ++i)
          if (op.isPipelined(static_cast<unsigned>(i)) && invariant[i]) {
            RefBuffer target = blockView(operation, *arrays[i],
                                         op.getSpec(static_cast<unsigned>(i)), blocks[i], what(i));
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
