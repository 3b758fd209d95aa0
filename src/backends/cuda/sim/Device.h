//===- Device.h - A simulated GPU running stage-03 kernels ------*- C++ -*-===//
//
// Holds the decoded kernels of a stage-03 module and the device memory,
// and launches kernels: CTAs run one after another (in row-major order,
// reversed, or shuffled, so that a dependence on the order shows up),
// each with its own dynamic shared memory of exactly the launch's size,
// filled with 0xcd bytes. Launch checks are CUDA's: the block must be the
// kernel's known_block_size, grid and shared memory within the device's
// limits, and each argument of the kind the parameter expects.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_DEVICE_H
#define PK_BACKENDS_CUDA_SIM_DEVICE_H

#include "backends/cuda/sim/Executor.h"
#include "backends/cuda/sim/Kernel.h"
#include "backends/cuda/sim/Memory.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace pk::sim {

enum class CtaOrder { Linear, Reverse, Shuffled };

struct DeviceOptions {
  CtaOrder order = CtaOrder::Linear;
  uint64_t seed = 0;                     ///< for CtaOrder::Shuffled
  uint64_t sharedMemoryLimit = 227 * 1024; ///< bytes per CTA (sm_90)
  uint64_t maxInstructions = 4'000'000'000ull;
};

/// What uninitialized shared memory holds (and what a CTA starts with).
constexpr uint8_t kSharedFill = 0xcd;
/// The most CTAs the simulator runs together, for a kernel whose CTAs wait
/// for one another (each has its own registers and shared memory).
constexpr uint64_t kMaxCtasTogether = 1024;

/// A kernel argument: a pointer word, an integer or a tensor map (whose
/// `address` is a pointer word of global memory).
struct LaunchArg {
  bool isPointer = false;
  uint64_t word = 0;
  std::optional<rt::TensorMapDesc> tensorMap;
  static LaunchArg pointer(uint32_t allocation, int64_t offset = 0) {
    return {true, makePointer(allocation, offset), {}};
  }
  static LaunchArg integer(int64_t v) { return {false, static_cast<uint64_t>(v), {}}; }
  static LaunchArg map(const rt::TensorMapDesc &d) { return {true, 0, d}; }
};

class Device {
public:
  /// Decodes the gpu.funcs of `module` (stage 03). On failure returns null
  /// and sets `error`.
  static std::unique_ptr<Device> create(mlir::ModuleOp module, const DeviceOptions &options,
                                        std::string &error);

  Memory &memory() { return mem; }
  const Counters &counters() const { return count; }
  bool hasKernel(const std::string &name) const { return kernels.count(name) > 0; }

  /// Runs `kernel` on `grid` CTAs of `block` threads, in clusters of
  /// `cluster` CTAs (each cluster's CTAs run together, so that they can
  /// wait for each other). Throws SimError.
  void launch(const std::string &kernel, const uint64_t grid[3], const unsigned block[3],
              const unsigned cluster[3], uint64_t dynamicSharedMemory,
              const std::vector<LaunchArg> &args);

private:
  explicit Device(const DeviceOptions &options);

  DeviceOptions options;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
  Memory mem;
  Counters count;
  uint32_t nextInterval = 1;
  uint32_t nextLaunch = 1;
};

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_DEVICE_H
