//===- EvalMosaicGpu.cpp - The Mosaic GPU ops in the interpreter ----------===//
//
// Semantics of JAX's Mosaic GPU interpret mode (see MeshRuntime.h): views
// alias their buffer; scoped allocations are shared by the threads of a
// CTA when the scope is collective over the thread axis; async copies,
// wgmma and tcgen05 MMAs complete at issue (an MMA's barrier gets its
// arrival then), TMEM loads and stores at once; barriers and semaphores make threads wait, and
// misuse of a barrier is an error at the op.
//
//===----------------------------------------------------------------------===//
#include "interpreter/MeshRuntime.h"
#include "interpreter/UnionMemory.h"

#include "ir/DTypeMapping.h"
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"
#include "support/ShapeText.h"

#include <cmath>

namespace pk::interp {

using namespace mlir;

TensorPtr readAll(const RefBuffer &ref) {
  TensorPtr t = makeTensor(ref.data->element, ref.viewShape());
  forEachElement(ref, [&](int64_t k, int64_t at) {
    // Past the array, a TMA load reads zeros.
    bool inside = ref.holdsElement(k);
    if (t->element.isFloat)
      t->f[k] = inside ? ref.data->f[at] : 0.0;
    else
      t->i[k] = inside ? ref.data->i[at] : 0;
  });
  return t;
}

void writeAll(RefBuffer &ref, const Tensor &value) {
  Tensor &data = *ref.data;
  forEachElement(ref, [&](int64_t k, int64_t at) {
    if (!ref.holdsElement(k))
      return; // past the array, a TMA store writes nothing
    if (data.element.isFloat)
      data.f[at] = roundFloat(value.f[k], data.element);
    else
      data.i[at] = wrapInt(value.i[k], data.element.width);
  });
  ref.written = true;
}

namespace {

std::unique_ptr<RefBuffer> newBuffer(pk::RefType type) {
  auto buffer = std::make_unique<RefBuffer>();
  buffer->dtype = *dtypeOf(type.getElementType());
  buffer->data = makeTensor(elementKindOf(buffer->dtype), std::vector<int64_t>(type.getShape()));
  // Accumulators start at zero (plgpu.ACC), the rest uninitialized.
  if (type.getSpace() == MemorySpace::GPUAccumulator) {
    std::fill(buffer->data->f.begin(), buffer->data->f.end(), 0.0);
    std::fill(buffer->data->i.begin(), buffer->data->i.end(), 0);
  } else {
    fillUninitialized(*buffer->data, buffer->dtype);
  }
  return buffer;
}

std::unique_ptr<Allocation> allocate(Block &block) {
  auto alloc = std::make_unique<Allocation>();
  for (BlockArgument arg : block.getArguments()) {
    Allocation::Slot slot;
    if (auto ref = llvm::dyn_cast<pk::RefType>(arg.getType())) {
      slot.ref = newBuffer(ref);
    } else if (auto barrier = llvm::dyn_cast<pk::BarrierType>(arg.getType())) {
      slot.barriers = std::make_unique<BarrierArray>();
      slot.barriers->type = barrier;
      slot.barriers->barriers.resize(static_cast<size_t>(barrier.getNumBarriers()));
      int64_t arrivals = barrier.getNumArrivals();
      if (barrier.isClusterBarrier()) {
        // Each CTA along the cluster axes arrives num_arrivals times.
        auto mesh = block.getParentOp()->getParentOfType<pk::MeshKernelOp>();
        int64_t sum = 0, count = 0;
        for (Attribute a : barrier.getClusterAxes()) {
          auto axis = mesh.findAxis(llvm::cast<StringAttr>(a).getValue());
          sum += mesh.getCluster()[axis->second];
          ++count;
        }
        arrivals *= sum - count + 1;
      }
      for (Barrier &b : slot.barriers->barriers)
        b.arrivalsNeeded = arrivals;
    } else {
      auto sem = llvm::cast<pk::SemaphoreType>(arg.getType());
      slot.semaphores = std::make_unique<SemaphoreArray>();
      slot.semaphores->counts.assign(static_cast<size_t>(sem.getNumElements()), 0);
    }
    alloc->slots.push_back(std::move(slot));
  }
  return alloc;
}

/// Whether the elements of a Ref or value of type `t` are unsigned
/// integers (held sign-extended, read zero-extended).
bool unsignedElements(mlir::Type t) {
  mlir::Type element = llvm::isa<pk::RefType>(t) ? llvm::cast<pk::RefType>(t).getElementType()
                                                : mlir::getElementTypeOrSelf(t);
  auto integer = llvm::dyn_cast<mlir::IntegerType>(element);
  return integer && integer.isUnsigned();
}

/// acc = (accumulate ? acc : 0) + a @ b for an (m, k) @ (k, n) product;
/// integer operands zero-extend where `aUnsigned` / `bUnsigned`.
void multiplyAccumulate(RefBuffer &acc, const Tensor &a, const Tensor &b, bool accumulate,
                        bool aUnsigned = false, bool bUnsigned = false) {
  TensorPtr c = readAll(acc);
  int64_t m = c->shape[0], n = c->shape[1], k = a.shape[1];
  const ElementKind &out = c->element;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (out.isFloat) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += a.f[i * k + p] * b.f[p * n + j];
        double before = accumulate ? c->f[i * n + j] : 0.0;
        c->f[i * n + j] = roundFloat(before + roundFloat(sum, out), out);
      } else {
        auto read = [](const Tensor &t, int64_t at, bool isUnsigned) {
          return isUnsigned ? static_cast<int64_t>(asUnsigned(t.i[at], t.element.width)) : t.i[at];
        };
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += read(a, i * k + p, aUnsigned) * read(b, p * n + j, bUnsigned);
        int64_t before = accumulate ? c->i[i * n + j] : 0;
        c->i[i * n + j] = wrapInt(before + sum, out.width);
      }
    }
  writeAll(acc, *c);
}

int64_t flatIndex(llvm::ArrayRef<int64_t> shape, const std::vector<int64_t> &index) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat = flat * shape[d] + index[d];
  return flat;
}

} // namespace

RefBuffer &Evaluator::bindView(Value v, RefBuffer view) {
  auto &slot = views[v];
  slot = std::make_unique<RefBuffer>(std::move(view));
  refs[v] = slot.get();
  return *slot;
}

bool Evaluator::evalMosaicGpu(Operation *op) {
  // Views.
  if (auto view = llvm::dyn_cast<pk::RefViewOp>(op)) {
    RefBuffer &base = getRef(view.getRef());
    const std::vector<int64_t> &shape = base.viewShape();
    std::vector<int64_t> strides = base.elementStrides();
    RefBuffer result = base.emptyView();
    // A view of global memory may reach past its array (Mosaic GPU does
    // not check views; its copies are TMA's, bounded by the array): the
    // part inside is recorded, and only pipeline blocks inside it are read.
    bool global =
        llvm::cast<pk::RefType>(view.getRef().getType()).getSpace() == pk::MemorySpace::GPUGlobal;
    std::vector<int64_t> inBounds;
    bool partial = false;
    unsigned dynamic = 0, dynamicSize = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t start = view.getStaticOffsets()[d];
      if (ShapedType::isDynamic(start))
        start = get(view.getOffsets()[dynamic++])->i[0];
      int64_t size = view.getSizes()[d], stride = view.getStrides()[d];
      if (ShapedType::isDynamic(size)) {
        // A ragged copy's window (pl.ds(s, n) with n traced): n may be 0.
        size = get(view.getDynamicSizes()[dynamicSize++])->i[0];
        if (size < 0)
          fail(op, "the view's size on axis " + std::to_string(d) + " is " + std::to_string(size) +
                       " at run time; a pl.ds size cannot be negative");
      }
      int64_t bound = base.extentInBounds(d);
      bool squeezed = llvm::is_contained(view.getSqueeze(), static_cast<int64_t>(d));
      bool leaves = start < 0 || (size > 0 && start + (size - 1) * stride >= bound) ||
                    (size == 0 && start > bound);
      if (leaves && (!global || start < 0 || squeezed))
        fail(op, "the view starts at " + std::to_string(start) + " on axis " + std::to_string(d) +
                     " and takes " + std::to_string(size) + " elements, which leaves the Ref of " +
                     "shape " + shapeText(shape));
      result.offset += start * strides[d];
      if (!squeezed) {
        result.shape.push_back(size);
        result.strides.push_back(strides[d] * stride);
        int64_t inside = start >= bound ? 0 : std::min(size, (bound - start + stride - 1) / stride);
        inBounds.push_back(inside);
        partial |= inside < size;
      }
    }
    if (partial) {
      result.inBounds = std::move(inBounds);
      partialViews = true;
    }
    bindView(view.getResult(), std::move(result));
    return true;
  }
  if (auto reshape = llvm::dyn_cast<pk::RefReshapeOp>(op)) {
    // The same elements in row-major order: a view only of a Ref whose
    // elements are contiguous (not of a strided or partial window).
    RefBuffer &base = getRef(reshape.getRef());
    const std::vector<int64_t> &shape = base.viewShape();
    std::vector<int64_t> strides = base.elementStrides(), dense = stridesOf(shape);
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != 1 && strides[d] != dense[d])
        fail(op, "Ref.reshape of a window whose elements are not contiguous (shape " +
                     shapeText(shape) + ")");
    if (!base.inBounds.empty())
      fail(op, "Ref.reshape of a view that reaches past its array");
    RefBuffer result = base.emptyView();
    auto to = llvm::cast<pk::RefType>(reshape.getType()).getShape();
    result.shape.assign(to.begin(), to.end());
    result.strides = stridesOf(result.shape);
    bindView(reshape.getResult(), std::move(result));
    return true;
  }
  if (auto member = llvm::dyn_cast<pk::RefReinterpretOp>(op)) {
    // A Ref of a plgpu.RefUnion: one Tensor per place in the union, shared
    // by every thread that evaluates the op (the scope may be collective).
    RefBuffer &buffer = getRef(member.getBuffer());
    if (!buffer.data->unionRefs)
      buffer.data->unionRefs =
          std::make_shared<UnionMemory>(llvm::cast<pk::RefType>(member.getBuffer().getType()));
    auto type = llvm::cast<pk::RefType>(member.getType());
    RefBuffer result;
    result.dtype = *dtypeOf(type.getElementType());
    result.data = buffer.data->unionRefs->member(static_cast<int64_t>(member.getOffset()), type);
    bindView(member.getResult(), std::move(result));
    return true;
  }
  if (auto transpose = llvm::dyn_cast<pk::RefTransposeOp>(op)) {
    RefBuffer &base = getRef(transpose.getRef());
    RefBuffer result = base.emptyView();
    std::vector<int64_t> strides = base.elementStrides();
    for (int64_t d : transpose.getPermutation()) {
      result.shape.push_back(base.viewShape()[d]);
      result.strides.push_back(strides[d]);
      if (!base.inBounds.empty())
        result.inBounds.push_back(base.inBounds[d]);
    }
    bindView(transpose.getResult(), std::move(result));
    return true;
  }
  if (auto axis = llvm::dyn_cast<pk::AxisIndexOp>(op)) {
    if (!thread)
      fail(op, "lax.axis_index runs only inside a Mosaic GPU kernel");
    TensorPtr t = makeTensor(elementKindOf(axis.getType()), {});
    if (!thread->warpAxis.empty() && axis.getAxis() == thread->warpAxis) {
      t->i[0] = thread->warpIndex;
      set(axis.getResult(), t);
      return true;
    }
    auto mesh = op->getParentOfType<pk::MeshKernelOp>();
    auto where = *mesh.findAxis(axis.getAxis());
    t->i[0] = where.first == 0   ? thread->cta->gridIndex[where.second]
              : where.first == 1 ? thread->cta->clusterIndex[where.second]
                                 : thread->threadIndex;
    set(axis.getResult(), t);
    return true;
  }
  if (llvm::isa<pk::RunScopedOp>(op)) {
    evalRunScoped(op);
    return true;
  }
  if (auto warps = llvm::dyn_cast<pk::WarpMapOp>(op)) {
    evalWarpMap(warps);
    return true;
  }
  if (llvm::isa<pk::PipelineOp>(op)) {
    evalPipeline(op);
    return true;
  }

  // Barriers.
  auto barrierAt = [&](Value barrier,
                       OperandRange indices) -> std::pair<BarrierArray *, Barrier *> {
    auto *array = static_cast<BarrierArray *>(syncObjects.lookup(barrier));
    if (!array)
      fail(op, "internal error: a barrier is not allocated");
    std::vector<int64_t> index;
    for (Value v : indices)
      index.push_back(get(v)->i[0]);
    int64_t flat = flatIndex(array->type.getShape(), index);
    if (flat < 0 || flat >= static_cast<int64_t>(array->barriers.size()))
      fail(op, "barrier index " + shapeText(index) + " is out of range for " +
                   std::to_string(array->barriers.size()) + " barriers");
    return {array, &array->barriers[flat]};
  };
  auto arrive = [&](Barrier &b) {
    if (++b.arrivals < b.arrivalsNeeded)
      return;
    if (!b.observed)
      fail(op, "the barrier completed a phase again before any thread waited for its previous "
               "completion (a producer needs back-pressure from its consumer, e.g. a second "
               "barrier it waits on before reusing a slot)");
    ++b.phase;
    b.arrivals = 0;
    b.observed = false;
  };
  if (auto arriveOp = llvm::dyn_cast<pk::BarrierArriveOp>(op)) {
    BarrierArray *array;
    Barrier *b;
    std::tie(array, b) = barrierAt(arriveOp.getBarrier(), arriveOp.getIndices());
    if (!array->type.isClusterBarrier() || !thread) {
      arrive(*b);
      return true;
    }
    // A cluster barrier: arrive at the same barrier of every CTA whose
    // cluster position differs from ours along at most one of its axes.
    auto mesh = op->getParentOfType<pk::MeshKernelOp>();
    std::vector<unsigned> axes;
    for (Attribute a : array->type.getClusterAxes())
      axes.push_back(mesh.findAxis(llvm::cast<StringAttr>(a).getValue())->second);
    size_t index = static_cast<size_t>(b - array->barriers.data());
    auto key = std::find_if(thread->cta->collective.begin(), thread->cta->collective.end(),
                            [&](const auto &entry) {
                              for (auto &slot : entry.second->slots)
                                if (slot.barriers.get() == array)
                                  return true;
                              return false;
                            });
    if (key == thread->cta->collective.end())
      fail(op, "a cluster barrier must be allocated collectively (in scratch_shapes or a "
               "collective pl.run_scoped)");
    std::vector<std::vector<int64_t>> targets{thread->cta->clusterIndex};
    for (unsigned axis : axes)
      for (int64_t c = 0; c < mesh.getCluster()[axis]; ++c) {
        std::vector<int64_t> pos = thread->cta->clusterIndex;
        if (pos[axis] == c)
          continue;
        pos[axis] = c;
        targets.push_back(pos);
      }
    size_t slotIndex = 0;
    for (; slotIndex < key->second->slots.size(); ++slotIndex)
      if (key->second->slots[slotIndex].barriers.get() == array)
        break;
    for (const auto &pos : targets) {
      CtaState *cta = thread->run->ctaAt(thread->cta->gridIndex, pos);
      auto &other = cta->collective[key->first];
      if (!other) // that CTA has not reached the allocation yet
        other = allocate(key->first.first->getRegion(0).front());
      arrive(other->slots[slotIndex].barriers->barriers[index]);
    }
    return true;
  }
  if (auto waitOp = llvm::dyn_cast<pk::BarrierWaitOp>(op)) {
    BarrierArray *array;
    Barrier *b;
    std::tie(array, b) = barrierAt(waitOp.getBarrier(), waitOp.getIndices());
    int64_t id = thread ? thread->id : 0;
    int64_t next = b->waited[id] + 1;
    auto check = [&] {
      if (b->phase > next)
        fail(op, "this thread waits for phase " + std::to_string(next) +
                     " of the barrier, but it has completed " + std::to_string(b->phase) +
                     ": a thread that waits on a barrier must wait for every one of its phases");
    };
    check();
    if (b->phase < next) {
      if (!thread)
        fail(op, "deadlock: the barrier can never complete (nothing else runs)");
      thread->run->scheduler->wait(op, "a barrier phase", [b, next] { return b->phase >= next; });
      check();
    }
    b->observed = true;
    b->waited[id] = next;
    return true;
  }

  if (auto test = llvm::dyn_cast<pk::BarrierTestOp>(op)) {
    // As a wait that does not block: a completed phase counts as waited
    // for. (Whether it has completed depends on how the threads ran, as
    // on the GPU.)
    auto [array, b] = barrierAt(test.getBarrier(), test.getIndices());
    int64_t id = thread ? thread->id : 0;
    int64_t next = b->waited[id] + 1;
    if (b->phase > next)
      fail(op, "this thread tests for phase " + std::to_string(next) +
                   " of the barrier, but it has completed " + std::to_string(b->phase) +
                   ": a thread that waits on a barrier must wait for every one of its phases");
    bool done = b->phase >= next;
    if (done) {
      b->observed = true;
      b->waited[id] = next;
    } else if (thread) {
      thread->run->scheduler->yield(); // a poll in a loop lets the arriving threads run
    }
    TensorPtr t = makeTensor(elementKindOf(test.getType()), {});
    t->i[0] = done ? 1 : 0;
    set(test.getResult(), t);
    return true;
  }

  if (auto named = llvm::dyn_cast<pk::NamedBarrierOp>(op)) {
    evalNamedBarrier(named);
    return true;
  }
  // Async copies: they complete at issue.
  if (auto copy = llvm::dyn_cast<pk::CopyGmemToSmemOp>(op)) {
    RefBuffer &src = getRef(copy.getSrc());
    RefBuffer &dst = getRef(copy.getDst());
    writeAll(dst, *readAll(src));
    auto [array, b] = barrierAt(copy.getBarrier(), copy.getBarrierIndices());
    arrive(*b);
    return true;
  }
  if (auto copy = llvm::dyn_cast<pk::CopySmemToGmemOp>(op)) {
    if (copy.getPredicate() && get(copy.getPredicate())->i[0] == 0)
      return true;
    writeAll(getRef(copy.getDst()), *readAll(getRef(copy.getSrc())));
    return true;
  }
  // One grid at a time: its predecessors are done, its dependents wait.
  if (llvm::isa<pk::WaitSmemToGmemOp, pk::CommitGroupOp, pk::CommitSmemOp, pk::FenceAsyncSharedOp,
                pk::WgmmaWaitOp, pk::SetMaxRegistersOp, pk::GridDependencyOp>(op))
    return true;
  if (auto cast = llvm::dyn_cast<pk::LayoutCastOp>(op)) {
    set(cast.getResult(), get(cast.getValue()));
    return true;
  }

  // acc += a @ b (wgmma, tcgen05_mma), as JAX's interpreter computes it:
  // the product in the accumulator's type, then the sum.
  if (auto mma = llvm::dyn_cast<pk::WgmmaOp>(op)) {
    TensorPtr a = llvm::isa<pk::RefType>(mma.getA().getType()) ? readAll(getRef(mma.getA()))
                                                               : get(mma.getA());
    multiplyAccumulate(getRef(mma.getAcc()), *a, *readAll(getRef(mma.getB())), true,
                       unsignedElements(mma.getA().getType()), unsignedElements(mma.getB().getType()));
    return true;
  }
  if (auto mma = llvm::dyn_cast<pk::Tcgen05MmaOp>(op)) {
    bool accumulate = !mma.getAccumulate() || get(mma.getAccumulate())->i[0] != 0;
    multiplyAccumulate(getRef(mma.getAcc()), *readAll(getRef(mma.getA())),
                       *readAll(getRef(mma.getB())), accumulate, unsignedElements(mma.getA().getType()),
                       unsignedElements(mma.getB().getType()));
    if (mma.getBarrier())
      arrive(*barrierAt(mma.getBarrier(), mma.getBarrierIndices()).second);
    return true;
  }
  // The MMAs completed at issue: their commit arrives at once.
  if (auto commit = llvm::dyn_cast<pk::Tcgen05CommitArriveOp>(op)) {
    arrive(*barrierAt(commit.getBarrier(), commit.getIndices()).second);
    return true;
  }
  if (auto load = llvm::dyn_cast<pk::AsyncLoadTmemOp>(op)) {
    set(load.getResult(), readAll(getRef(load.getRef())));
    return true;
  }
  if (auto store = llvm::dyn_cast<pk::AsyncStoreTmemOp>(op)) {
    writeAll(getRef(store.getRef()), *get(store.getValue()));
    return true;
  }
  if (llvm::isa<pk::WaitLoadTmemOp, pk::CommitTmemOp>(op))
    return true;

  // Cluster launch control (MeshRun::cancelled): thread 0 of each CTA
  // makes the request and writes the answer, byte 0 whether it cancelled
  // a group and bytes 4-11 which; every thread arrives at the barrier.
  if (auto request = llvm::dyn_cast<pk::TryClusterCancelOp>(op)) {
    if (!thread)
      fail(op, "plgpu.try_cluster_cancel runs only inside a Mosaic GPU kernel");
    MeshRun &run = *thread->run;
    if (thread->threadIndex == 0) {
      int64_t k = thread->cta->cancelRequests++;
      auto [answer, fresh] = run.cancelAnswers.try_emplace(k, -1);
      if (fresh && !run.groupsRunTogether && run.nextGroup < run.cancelled.size()) {
        answer->second = static_cast<int64_t>(run.nextGroup);
        run.cancelled[run.nextGroup++] = true;
      }
      RefBuffer &result = getRef(request.getResult());
      TensorPtr bytes = readAll(result);
      std::fill(bytes->i.begin(), bytes->i.end(), 0);
      if (answer->second >= 0) {
        bytes->i[0] = 1;
        for (int b = 0; b < 8; ++b)
          bytes->i[4 + b] = wrapInt((answer->second >> (8 * b)) & 0xff, 8);
      }
      writeAll(result, *bytes);
    }
    arrive(*barrierAt(request.getBarrier(), request.getIndices()).second);
    return true;
  }
  if (auto query = llvm::dyn_cast<pk::QueryClusterCancelOp>(op)) {
    if (!thread)
      fail(op, "plgpu.query_cluster_cancel runs only inside a Mosaic GPU kernel");
    TensorPtr bytes = readAll(getRef(query.getResult()));
    bool cancelled = bytes->i[0] != 0;
    int64_t group = 0;
    for (int b = 0; b < 8; ++b)
      group |= (bytes->i[4 + b] & 0xff) << (8 * b);
    // The group's grid point, row-major (the groups are the clusters).
    llvm::ArrayRef<int64_t> grid = thread->run->op.getGrid();
    std::vector<int64_t> point(grid.size(), 0);
    for (size_t d = grid.size(); cancelled && d-- > 0;) {
      point[d] = group % grid[d];
      group /= grid[d];
    }
    for (auto [result, axis] : llvm::zip(query.getIndices(), query.getGridAxes())) {
      TensorPtr v = makeTensor(elementKindOf(DType::I32), {});
      v->i[0] = point[static_cast<size_t>(axis)];
      set(result, v);
    }
    TensorPtr flag = makeTensor(elementKindOf(DType::Bool), {});
    flag->i[0] = cancelled;
    set(query.getCanceled(), flag);
    return true;
  }

  // pl.get_global: one semaphore array per op for the whole kernel.
  if (auto global = llvm::dyn_cast<pk::GetGlobalOp>(op)) {
    if (!thread)
      fail(op, "pl.get_global runs only inside a Mosaic GPU kernel");
    auto &array = thread->run->globals[op];
    if (!array) {
      array = std::make_unique<SemaphoreArray>();
      array->counts.assign(static_cast<size_t>(global.getType().getNumElements()), 0);
    }
    syncObjects[global.getResult()] = array.get();
    return true;
  }
  return false;
}

/// bar.sync / bar.arrive id, count: the running Pallas thread's threads
/// arrive (a warpgroup's 128, a warp's 32 in warp-level code); the round
/// completes when `count` have, and bar.sync waits for that. More arrivals
/// than the count, or two counts in one round, are errors (undefined on
/// the hardware).
void Evaluator::evalNamedBarrier(Operation *operation) {
  auto op = llvm::cast<pk::NamedBarrierOp>(operation);
  int64_t id = get(op.getId())->i[0], count = get(op.getThreads())->i[0];
  if (std::string why = pk::namedBarrierProblem(id, count); !why.empty())
    fail(op, why);
  int64_t mine = thread && !thread->warpAxis.empty() ? 32 : 128;
  std::string name = "named barrier " + std::to_string(id);
  if (!thread) {
    if (mine != count)
      fail(op, "deadlock: " + name + " waits for " + std::to_string(count) +
                   " threads and only this Pallas thread's " + std::to_string(mine) + " run");
    return;
  }
  NamedBarrier &b = thread->cta->namedBarriers[id];
  if (b.arrived == 0)
    b.count = count;
  else if (b.count != count)
    fail(op, name + " is used with thread counts " + std::to_string(b.count) + " and " +
                 std::to_string(count) + " in one round");
  b.arrived += mine;
  if (b.arrived > count)
    fail(op, std::to_string(b.arrived) + " threads arrived at " + name + ", more than its count " +
                 std::to_string(count) + " (each Pallas thread arrives with " +
                 "its 128 threads, each warp of warp-level code with 32)");
  if (b.arrived == count) {
    b.arrived = 0;
    ++b.completed;
    return;
  }
  if (op.getArrive())
    return;
  int64_t round = b.completed;
  thread->run->scheduler->wait(op.getOperation(), name + " (" + std::to_string(count) + " threads)",
                               [&b, round] { return b.completed != round; });
}

void Evaluator::evalWarpMap(Operation *operation) {
  auto op = llvm::cast<pk::WarpMapOp>(operation);
  if (!thread)
    fail(op, "plgpu.WarpMesh runs only inside a Mosaic GPU kernel");
  // Each warp is a thread of its own, concurrent with the others (they
  // wait on each other's barriers): it starts from this thread's values
  // and Refs, with the id it has in every warp_map of this thread.
  constexpr size_t kWarps = 4;
  if (thread->warpIds.empty())
    for (size_t w = 0; w < kWarps; ++w)
      thread->warpIds.push_back(thread->run->nextThreadId++);
  std::vector<ThreadContext> contexts(kWarps, *thread);
  std::vector<std::unique_ptr<Evaluator>> warps;
  for (size_t w = 0; w < kWarps; ++w) {
    contexts[w].warpAxis = op.getAxisName().str();
    contexts[w].warpIndex = static_cast<int64_t>(w);
    contexts[w].id = thread->warpIds[w];
    auto warp = std::make_unique<Evaluator>(stepsLeft);
    warp->values = values;
    warp->refs = refs;
    warp->syncObjects = syncObjects;
    warp->context = context;
    warp->setThread(&contexts[w]);
    warps.push_back(std::move(warp));
  }
  thread->run->scheduler->fork(kWarps, [&](size_t w) { warps[w]->runBlock(op.getBody().front()); });
}

void Evaluator::evalRunScoped(Operation *operation) {
  auto op = llvm::cast<pk::RunScopedOp>(operation);
  Block &body = op.getBodyBlock();
  // Shared by the CTA's threads when the scope is collective over them.
  bool collective = false;
  if (thread) {
    auto mesh = op->getParentOfType<pk::MeshKernelOp>();
    std::optional<StringRef> threadName = mesh.getThreadName();
    for (Attribute a : op.getCollectiveAxes())
      collective |= threadName && llvm::cast<StringAttr>(a).getValue() == *threadName;
    // With one thread per CTA, its scopes are the CTA's (other CTAs of the
    // cluster find its cluster barriers there).
    collective |= mesh.getNumThreads() == 1;
  }
  std::shared_ptr<Allocation> alloc;
  std::pair<Operation *, int64_t> key{operation, 0};
  if (collective) {
    key.second = thread->occurrences[operation]++;
    auto &shared = thread->cta->collective[key];
    if (!shared)
      shared = allocate(body);
    alloc = shared;
  } else {
    alloc = allocate(body);
  }
  for (size_t i = 0; i < body.getNumArguments(); ++i) {
    Allocation::Slot &slot = alloc->slots[i];
    if (slot.ref)
      bindRef(body.getArgument(i), slot.ref.get());
    else if (slot.barriers)
      syncObjects[body.getArgument(i)] = slot.barriers.get();
    else
      syncObjects[body.getArgument(i)] = slot.semaphores.get();
  }
  std::vector<TensorPtr> results = runRegion(op.getBody(), {});
  for (size_t k = 0; k < results.size(); ++k)
    set(op.getResult(k), results[k]);
  // The scope ends when the last thread leaves. Phases of its barriers
  // that a thread never waited for are left alone, as on the hardware: the
  // producer of a pipeline waits for its consumers' releases of the steps
  // it still refills, not for the last ones (JAX's attention_mgpu.py;
  // JAX's interpret mode raises "did not observe all phases" there). A
  // thread that waits for a phase its barrier has passed fails at the wait.
  int64_t users = collective ? op->getParentOfType<pk::MeshKernelOp>().getNumThreads() : 1;
  if (++alloc->releases < users)
    return;
  // Scoped semaphores go away with the scope: copies on them must have
  // been waited for (TPU kernels; GPU semaphores are checked by the waits).
  if (!thread)
    for (size_t i = 0; i < alloc->slots.size(); ++i)
      if (alloc->slots[i].semaphores)
        checkSemaphoresSettled(operation, *alloc->slots[i].semaphores,
                               body.getArgument(i).getType(), "the scope ends");
  if (collective)
    thread->cta->collective.erase(key);
}

} // namespace pk::interp
