//===- MeshKernel.cpp - pk.mesh_kernel: CTAs, threads, the scheduler ------===//
#include "interpreter/MeshRuntime.h"

#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <thread>

namespace pk::interp {

namespace {

thread_local size_t currentWorker = 0;

std::string indexText(const std::vector<int64_t> &index) {
  std::string s = "(";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + (index.size() == 1 ? ",)" : ")");
}

/// Does the kernel synchronize CTAs of its grid (then they all run
/// together)?
bool usesGridSync(pk::MeshKernelOp op) {
  bool found = false;
  op.walk([&](mlir::Operation *inner) {
    if (llvm::isa<pk::GetGlobalOp, pk::SemaphoreWaitOp>(inner))
      found = true;
  });
  return found;
}

} // namespace

std::string lineOf(mlir::Location loc) {
  if (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(loc))
    return lineOf(call.getCallee());
  if (auto range = llvm::dyn_cast<mlir::FileLineColRange>(loc))
    return "line " + std::to_string(range.getStartLine());
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return lineOf(fused.getLocations().front());
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc))
    return lineOf(named.getChildLoc());
  return "an unknown line";
}

//===----------------------------------------------------------------------===//
// Scheduler
//===----------------------------------------------------------------------===//

bool Scheduler::switchFrom(size_t from) {
  size_t n = workers.size();
  for (size_t k = 1; k <= n; ++k) {
    size_t j = (from + k) % n;
    Worker &w = workers[j];
    if (w.state == Worker::State::Ready && j != from) {
      current = j;
      return true;
    }
    if (w.state == Worker::State::Blocked && w.ready()) {
      w.state = Worker::State::Ready;
      current = j;
      return true;
    }
  }
  return false;
}

RunError Scheduler::deadlock() {
  std::string message = "deadlock: every Pallas thread that has not finished is waiting";
  mlir::Operation *first = nullptr;
  for (size_t i = 0; i < workers.size(); ++i) {
    const Worker &w = workers[i];
    if (w.state != Worker::State::Blocked)
      continue;
    if (!first)
      first = w.op;
    message += "; " + (describe ? describe(i) : "thread " + std::to_string(i)) + " waits for " +
               w.what + " at " + lineOf(w.op->getLoc());
  }
  return RunError{message, first ? first->getLoc() : mlir::Location(mlir::UnknownLoc())};
}

void Scheduler::wait(mlir::Operation *op, const std::string &what,
                     const std::function<bool()> &ready) {
  if (ready())
    return;
  if (single) {
    workers[0].state = Worker::State::Blocked;
    workers[0].op = op;
    workers[0].what = what;
    throw deadlock();
  }
  std::unique_lock<std::mutex> lock(mutex);
  size_t self = currentWorker;
  Worker &me = workers[self];
  me.state = Worker::State::Blocked;
  me.ready = ready;
  me.op = op;
  me.what = what;
  if (!switchFrom(self)) {
    if (!error)
      error = deadlock();
    aborting = true;
    changed.notify_all();
    throw Aborted{};
  }
  changed.notify_all();
  changed.wait(lock, [&] { return current == self || aborting; });
  if (aborting)
    throw Aborted{};
}

void Scheduler::finish(size_t i) {
  std::unique_lock<std::mutex> lock(mutex);
  workers[i].state = Worker::State::Done;
  if (!aborting && !switchFrom(i)) {
    bool blocked = false;
    for (const Worker &w : workers)
      blocked |= w.state == Worker::State::Blocked;
    if (blocked) {
      if (!error)
        error = deadlock();
      aborting = true;
    }
  }
  changed.notify_all();
}

void Scheduler::run(size_t n, const std::function<void(size_t)> &work) {
  workers.assign(n, Worker());
  error.reset();
  aborting = false;
  current = 0;
  single = n == 1;
  if (single) {
    currentWorker = 0;
    work(0);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([this, i, &work] {
      currentWorker = i;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return current == i || aborting; });
        if (aborting) {
          workers[i].state = Worker::State::Done;
          return;
        }
      }
      try {
        work(i);
      } catch (const RunError &e) {
        std::unique_lock<std::mutex> lock(mutex);
        if (!error)
          error = e;
        aborting = true;
      } catch (const Aborted &) {
      }
      finish(i);
    });
  for (std::thread &t : threads)
    t.join();
  if (error)
    throw *error;
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

CtaState *MeshRun::ctaAt(const std::vector<int64_t> &grid, const std::vector<int64_t> &cluster) {
  for (auto &c : ctas)
    if (c->gridIndex == grid && c->clusterIndex == cluster)
      return c.get();
  return nullptr;
}

std::vector<TensorPtr> runMeshKernel(pk::MeshKernelOp op, const std::vector<TensorPtr> &inputs,
                                     const std::vector<int64_t> &symbols, uint64_t maxSteps) {
  // Global memory: one buffer per input, then per output (outputs start
  // uninitialized, or with the input they alias).
  size_t numIn = inputs.size(), numOut = op.getOutputs().size();
  std::vector<RefBuffer> gmem(numIn + numOut);
  mlir::Block &body = op.getBodyBlock();
  for (size_t i = 0; i < numIn + numOut; ++i) {
    auto type = llvm::cast<pk::RefType>(body.getArgument(i).getType());
    DType dtype = *dtypeOf(type.getElementType());
    gmem[i].dtype = dtype;
    gmem[i].data = makeTensor(elementKindOf(dtype), std::vector<int64_t>(type.getShape()));
    if (i < numIn)
      *gmem[i].data = *inputs[i];
    else
      fillUninitialized(*gmem[i].data, dtype);
  }
  llvm::ArrayRef<int64_t> aliases = op.getInputOutputAliases();
  for (size_t a = 0; a + 1 < aliases.size(); a += 2)
    *gmem[numIn + aliases[a + 1]].data = *inputs[aliases[a]];

  Scheduler scheduler;
  MeshRun run;
  run.op = op;
  run.scheduler = &scheduler;
  std::vector<int64_t> grid(op.getGrid().begin(), op.getGrid().end());
  std::vector<int64_t> cluster(op.getCluster().begin(), op.getCluster().end());
  int64_t numThreads = static_cast<int64_t>(op.getNumThreads());
  auto points = [](const std::vector<int64_t> &shape) {
    std::vector<std::vector<int64_t>> all;
    std::vector<int64_t> index(shape.size(), 0);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    for (int64_t k = 0; k < n; ++k) {
      all.push_back(index);
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
    return all;
  };
  std::vector<std::vector<int64_t>> gridPoints = points(grid), clusterPoints = points(cluster);
  for (const auto &g : gridPoints)
    for (const auto &c : clusterPoints) {
      auto cta = std::make_unique<CtaState>();
      cta->gridIndex = g;
      cta->clusterIndex = c;
      run.ctas.push_back(std::move(cta));
    }

  // Which CTAs run together: one cluster at a time, or the whole grid
  // when CTAs synchronize through semaphores.
  size_t perGroup = clusterPoints.size();
  if (usesGridSync(op))
    perGroup = run.ctas.size();
  int64_t nextId = 0;
  for (size_t first = 0; first < run.ctas.size(); first += perGroup) {
    size_t n = perGroup * static_cast<size_t>(numThreads);
    std::vector<ThreadContext> threads(n);
    std::vector<std::unique_ptr<Evaluator>> evaluators;
    for (size_t w = 0; w < n; ++w) {
      ThreadContext &t = threads[w];
      t.run = &run;
      t.cta = run.ctas[first + w / numThreads].get();
      t.threadIndex = static_cast<int64_t>(w % numThreads);
      t.id = nextId++;
      evaluators.push_back(std::make_unique<Evaluator>(maxSteps));
    }
    scheduler.describe = [&](size_t w) {
      const ThreadContext &t = threads[w];
      std::string s =
          "thread " + std::to_string(t.threadIndex) + " of block " + indexText(t.cta->gridIndex);
      if (!t.cta->clusterIndex.empty())
        s += " (cluster position " + indexText(t.cta->clusterIndex) + ")";
      return s;
    };
    scheduler.run(n, [&](size_t w) {
      Evaluator &ev = *evaluators[w];
      ev.setThread(&threads[w]);
      ev.setContext(ProgramContext{{}, {}, &symbols});
      for (size_t i = 0; i < gmem.size(); ++i)
        ev.bindRef(body.getArgument(i), &gmem[i]);
      ev.runRegion(op.getBody(), {});
    });
  }

  std::vector<TensorPtr> outputs;
  for (size_t i = 0; i < numOut; ++i)
    outputs.push_back(std::make_shared<Tensor>(*gmem[numIn + i].data));
  return outputs;
}

} // namespace pk::interp
