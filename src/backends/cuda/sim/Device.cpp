//===- Device.cpp - Launches: checks, CTA order, shared memory ------------===//
#include "backends/cuda/sim/Device.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace pk::sim {

Device::Device(const DeviceOptions &options) : options(options) {
  count.maxInstructions = options.maxInstructions;
}

std::unique_ptr<Device> Device::create(mlir::ModuleOp module, const DeviceOptions &options,
                                       std::string &error) {
  std::unique_ptr<Device> device(new Device(options));
  bool ok = true;
  module.walk([&](mlir::gpu::GPUFuncOp func) {
    if (!ok || !func.isKernel())
      return;
    auto kernel = std::make_unique<Kernel>();
    if (!decodeKernel(func, *kernel, error)) {
      ok = false;
      return;
    }
    device->kernels[kernel->name] = std::move(kernel);
  });
  if (!ok)
    return nullptr;
  return device;
}

void Device::launch(const std::string &name, const uint64_t grid[3], const unsigned block[3],
                    const unsigned cluster[3], uint64_t dynamicSharedMemory,
                    const std::vector<LaunchArg> &args) {
  auto it = kernels.find(name);
  if (it == kernels.end())
    throw SimError("launch of kernel '" + name + "', which the module does not define");
  const Kernel &k = *it->second;
  auto launchError = [&](const std::string &message) {
    throw SimError("launch of kernel '" + name + "': " + message);
  };
  for (unsigned i = 0; i < 3; ++i)
    if (block[i] != k.blockSize[i])
      launchError("block (" + std::to_string(block[0]) + ", " + std::to_string(block[1]) + ", " +
                  std::to_string(block[2]) + ") differs from the kernel's known_block_size (" +
                  std::to_string(k.blockSize[0]) + ", " + std::to_string(k.blockSize[1]) + ", " +
                  std::to_string(k.blockSize[2]) + ")");
  if (k.threads() > 1024 || k.threads() == 0)
    launchError("a CTA of " + std::to_string(k.threads()) + " threads (CUDA allows 1 to 1024)");
  const uint64_t maxGrid[3] = {(uint64_t(1) << 31) - 1, 65535, 65535};
  for (unsigned i = 0; i < 3; ++i)
    if (grid[i] > maxGrid[i])
      launchError("grid dimension " + std::to_string(i) + " is " + std::to_string(grid[i]) +
                  " (at most " + std::to_string(maxGrid[i]) + ")");
  if (dynamicSharedMemory > options.sharedMemoryLimit)
    launchError(std::to_string(dynamicSharedMemory) + " bytes of dynamic shared memory (at most " +
                std::to_string(options.sharedMemoryLimit) + ")");
  if (args.size() != k.params.size())
    launchError(std::to_string(args.size()) + " arguments for " + std::to_string(k.params.size()) +
                " parameters");
  LaunchState state;
  for (unsigned i = 0; i < 3; ++i) {
    state.grid[i] = grid[i];
    state.block[i] = block[i];
  }
  for (size_t p = 0; p < args.size(); ++p) {
    const ValueType &type = k.paramTypes[p];
    if (args[p].isPointer != (type.kind == Kind::Ptr))
      launchError("argument " + std::to_string(p) + " is " + (args[p].isPointer ? "a pointer" : "an integer") +
                  " but the parameter is " + (type.kind == Kind::Ptr ? "a pointer" : "an integer"));
    if (args[p].tensorMap) {
      // Passed by value (__grid_constant__): the kernel sees its address,
      // a generic pointer; here, its index in the launch's tensor maps.
      if (type.addressSpace != 0)
        launchError("argument " + std::to_string(p) + " is a tensor map but the parameter is not a "
                                                        "generic pointer");
      // An optional map the runtime could not encode is zeros (rank 0);
      // using it is an error of the TMA copy that does.
      uint32_t id = pointerAllocation(args[p].tensorMap->address);
      if (args[p].tensorMap->rank != 0 && (id == 0 || mem.get(id).space != Space::Global))
        launchError("tensor map argument " + std::to_string(p) + " does not point to global memory");
      state.params.push_back(state.tensorMaps.size());
      state.tensorMaps.push_back(*args[p].tensorMap);
      continue;
    }
    if (args[p].isPointer) {
      uint32_t id = pointerAllocation(args[p].word);
      if (id == 0 || mem.get(id).space != Space::Global || type.addressSpace != 1)
        launchError("argument " + std::to_string(p) + " must point to global memory (address space 1)");
    }
    state.params.push_back(args[p].word);
  }
  uint64_t total = grid[0] * grid[1] * grid[2];
  if (total == 0)
    return; // an empty grid: nothing to run (the runtime skips it too)
  if (total > (uint64_t(1) << 26))
    launchError(std::to_string(total) + " CTAs: more than the simulator runs (2^26); use smaller sizes");
  unsigned clusterSize = 1;
  for (unsigned i = 0; i < 3; ++i) {
    if (cluster[i] == 0 || grid[i] % cluster[i] != 0)
      launchError("grid dimension " + std::to_string(i) + " (" + std::to_string(grid[i]) +
                  ") is not a multiple of the cluster's (" + std::to_string(cluster[i]) + ")");
    clusterSize *= cluster[i];
  }
  if (clusterSize > 16)
    launchError("a cluster of " + std::to_string(clusterSize) + " CTAs (at most 16)");
  state.launch = nextLaunch++;
  state.launchCounter = &nextLaunch;
  // Clusters run one group at a time, a group's CTAs together: a cluster,
  // or the whole grid when CTAs wait for one another through global
  // memory (pl.get_global's semaphores), as they may on a GPU only when
  // all of them are resident.
  uint64_t clusterCount = (grid[0] / cluster[0]) * (grid[1] / cluster[1]) * (grid[2] / cluster[2]);
  uint64_t groupClusters = k.ctasWaitForEachOther ? clusterCount : 1;
  if (groupClusters * clusterSize > kMaxCtasTogether)
    launchError(
        std::to_string(groupClusters * clusterSize) +
        " CTAs that wait for one another (pl.get_global's semaphores): the simulator runs at "
        "most " +
        std::to_string(kMaxCtasTogether) + " CTAs together; use smaller sizes");
  size_t groupCtas = static_cast<size_t>(groupClusters) * clusterSize;
  // One shared memory allocation per CTA of a group, refilled for each.
  std::vector<uint32_t> shared(groupCtas, 0);
  if (dynamicSharedMemory > 0)
    for (uint32_t &id : shared)
      id = mem.allocate(Space::Shared, dynamicSharedMemory, "dynamic shared memory", kSharedFill,
                        false);
  // The kernel's constant tables, in global memory for the launch.
  for (const Kernel::ConstantTable &table : k.constantTables) {
    uint32_t id =
        mem.allocate(Space::Global, table.bytes.size(), "constant table " + table.name, 0, true);
    std::copy(table.bytes.begin(), table.bytes.end(), mem.get(id).bytes.begin());
    state.constantTables.push_back(id);
  }
  auto freeShared = [&] {
    for (uint32_t id : shared)
      if (id)
        mem.free(id);
    for (uint32_t id : state.constantTables)
      mem.free(id);
  };

  // Clusters in the chosen order; a cluster's CTAs by rank (x fastest).
  uint64_t clusters[3] = {grid[0] / cluster[0], grid[1] / cluster[1], grid[2] / cluster[2]};
  std::vector<uint64_t> order(clusterCount);
  std::iota(order.begin(), order.end(), 0);
  if (options.order == CtaOrder::Reverse) {
    std::reverse(order.begin(), order.end());
  } else if (options.order == CtaOrder::Shuffled) {
    std::mt19937_64 random(options.seed + state.launch);
    std::shuffle(order.begin(), order.end(), random);
  }
  std::vector<std::unique_ptr<Executor>> executors;
  for (size_t r = 0; r < groupCtas; ++r)
    executors.push_back(std::make_unique<Executor>(k, mem, count, nextInterval));
  try {
    for (size_t first = 0; first < order.size(); first += groupClusters) {
      for (uint32_t id : shared)
        if (id)
          mem.reset(id, kSharedFill);
      // The group's CTAs run together: every warpgroup of each is a
      // cooperative worker, so that one may wait for another. A lone CTA
      // of one warpgroup runs in lockstep by itself.
      std::vector<ClusterRun> runs(groupClusters);
      pk::Cooperative scheduler;
      unsigned perCta = executors[0]->workerCount();
      bool cooperative = groupCtas * perCta > 1;
      bool several = groupCtas > 1;
      scheduler.deadlockError = [&](const std::vector<pk::Cooperative::Waiting> &blocked) {
        std::string message =
            executors[0]->where(-1) + ": deadlock: every warpgroup" +
            (several ? std::string(k.ctasWaitForEachOther ? " of the grid" : " of its cluster")
                     : std::string()) +
            " that has not finished waits";
        for (const pk::Cooperative::Waiting &w : blocked)
          message += "\n  " + (several ? executors[w.worker / perCta]->where(-1) + ", " : "") +
                     "warpgroup " + std::to_string(w.worker % perCta) + " waits " + w.what;
        return std::make_exception_ptr(SimError(message));
      };
      for (uint64_t g = 0; g < groupClusters; ++g) {
        uint64_t c = order[first + g];
        uint64_t at[3] = {c % clusters[0], (c / clusters[0]) % clusters[1],
                          c / (clusters[0] * clusters[1])};
        for (unsigned r = 0; r < clusterSize; ++r) {
          unsigned local[3] = {r % cluster[0], (r / cluster[0]) % cluster[1],
                               r / (cluster[0] * cluster[1])};
          uint64_t cta[3];
          for (unsigned i = 0; i < 3; ++i)
            cta[i] = at[i] * cluster[i] + local[i];
          uint64_t linear = cta[0] + grid[0] * (cta[1] + grid[1] * cta[2]);
          size_t e = static_cast<size_t>(g) * clusterSize + r;
          runs[g].ctas.push_back(executors[e].get());
          executors[e]->beginCta(state, cta, static_cast<uint32_t>(linear), shared[e], runs[g],
                                 cooperative ? &scheduler : nullptr);
        }
      }
      if (cooperative)
        scheduler.run(groupCtas * perCta, [&](size_t worker) {
          executors[worker / perCta]->runWorker(static_cast<unsigned>(worker % perCta));
        });
      else
        executors[0]->runWorker(0);
      for (auto &executor : executors)
        executor->endCta();
    }
  } catch (...) {
    freeShared();
    throw;
  }
  freeShared();
}

} // namespace pk::sim
