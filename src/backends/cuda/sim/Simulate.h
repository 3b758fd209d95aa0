//===- Simulate.h - A pk export through the CUDA pipeline, simulated -*- C++ -*-===//
//
// The CUDA backend's correctness check without a GPU: compiles a pk module
// with the CUDA backend up to stage 03 (per-thread GPU IR), reads that
// stage back as the text `pkc compile --emit=gpu` prints, and runs the
// export's host program (the launch manifest's CUDA program) on the SIMT
// simulator. Any undefined behaviour the kernels show (races,
// out-of-bounds accesses, divergent barriers, ...) is an error.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_SIMULATE_H
#define PK_BACKENDS_CUDA_SIM_SIMULATE_H

#include "backends/Manifest.h"
#include "backends/Target.h"
#include "backends/cuda/sim/Device.h"
#include "interpreter/HostArray.h"
#include "ir/ExportSignature.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace pk::sim {

struct SimulateOptions {
  backends::Target target{backends::Target::Kind::Cuda, "sm_90a"};
  DeviceOptions device;
};

struct SimulateResult {
  std::vector<HostArray> outputs;
  /// Empty on success. Backend errors are reported as MLIR diagnostics on
  /// the module (and this says the compilation failed).
  std::string error;
  bool ok() const { return error.empty(); }
  /// Things that are not errors but deserve a look: uninitialized reads,
  /// poison values.
  std::vector<std::string> warnings;
  Counters counters;
  unsigned kernels = 0;
  double compileSeconds = 0, runSeconds = 0;
};

/// Compiles `module` (verified pk IR) for `options.target` up to stage 03
/// and runs export `entry` on `inputs`.
SimulateResult simulateExport(mlir::ModuleOp module, llvm::StringRef entry,
                              const std::vector<HostArray> &inputs, const SimulateOptions &options = {});

/// Runs export `entry` of an already compiled stage-03 module with its
/// host program. Throws SimError.
std::vector<HostArray> simulateStage(mlir::ModuleOp stage03, const backends::CudaProgram &program,
                                     const ExportSignature &signature, const std::vector<HostArray> &inputs,
                                     const DeviceOptions &options, SimulateResult &stats);

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_SIMULATE_H
