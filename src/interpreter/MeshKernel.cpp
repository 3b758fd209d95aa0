//===- MeshKernel.cpp - pk.mesh_kernel: CTAs, threads, the scheduler ------===//
#include "interpreter/MeshRuntime.h"

#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace pk::interp {

namespace {

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

  pk::Cooperative scheduler;
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
  if (usesGridSync(op)) {
    perGroup = run.ctas.size();
    run.groupsRunTogether = true;
  }
  run.cancelled.assign(run.ctas.size() / perGroup, false);
  for (size_t first = 0; first < run.ctas.size(); first += perGroup) {
    // A group whose launch a running one cancelled does not run.
    size_t group = first / perGroup;
    if (run.cancelled[group])
      continue;
    run.nextGroup = group + 1;
    run.cancelAnswers.clear();
    size_t n = perGroup * static_cast<size_t>(numThreads);
    std::vector<ThreadContext> threads(n);
    std::vector<std::unique_ptr<Evaluator>> evaluators;
    for (size_t w = 0; w < n; ++w) {
      ThreadContext &t = threads[w];
      t.run = &run;
      t.cta = run.ctas[first + w / numThreads].get();
      t.threadIndex = static_cast<int64_t>(w % numThreads);
      t.id = run.nextThreadId++;
      evaluators.push_back(std::make_unique<Evaluator>(maxSteps));
    }
    auto describe = [&](size_t w) {
      if (w >= threads.size())
        return std::string("a warp of a Pallas thread (plgpu.WarpMesh)");
      const ThreadContext &t = threads[w];
      std::string s =
          "thread " + std::to_string(t.threadIndex) + " of block " + indexText(t.cta->gridIndex);
      if (!t.cta->clusterIndex.empty())
        s += " (cluster position " + indexText(t.cta->clusterIndex) + ")";
      return s;
    };
    // At the first waiting op, naming every wait (the tags are the ops).
    scheduler.deadlockError = [&](const std::vector<pk::Cooperative::Waiting> &blocked) {
      std::string message = "deadlock: every Pallas thread that has not finished is waiting";
      mlir::Operation *first = nullptr;
      for (const pk::Cooperative::Waiting &w : blocked) {
        // A thread waiting for its warps (plgpu.WarpMesh) has no op: the
        // warps' own waits say what is stuck.
        auto *op = static_cast<mlir::Operation *>(w.tag);
        if (!op)
          continue;
        first = first ? first : op;
        message +=
            "; " + describe(w.worker) + " waits for " + w.what + " at " + lineOf(op->getLoc());
      }
      return std::make_exception_ptr(RunError{message, first ? first->getLoc() : op.getLoc()});
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
