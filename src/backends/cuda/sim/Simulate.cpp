//===- Simulate.cpp - Compile to stage 03, then simulate ------------------===//
#include "backends/cuda/sim/Simulate.h"

#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/sim/ProgramRunner.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <chrono>

namespace pk::sim {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The first file location in `loc` (inside call sites, names, fusions).
std::optional<mlir::FileLineColLoc> fileLocation(mlir::Location loc) {
  std::optional<mlir::FileLineColLoc> found;
  loc->walk([&](mlir::Location inner) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(inner)) {
      found = file;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

/// Gives each op of `stage03` (located in its own text) the source line
/// it came from as well: the same stage printed with locations, parsed,
/// has the same ops in the same order. Errors then name both.
void addSourceLocations(mlir::ModuleOp stage03, llvm::StringRef withLocations) {
  // Locations only improve messages: a copy that does not parse leaves
  // them as they are, and says nothing.
  mlir::ScopedDiagnosticHandler quiet(stage03.getContext(),
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::ParserConfig config(stage03.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> located =
      mlir::parseSourceString<mlir::ModuleOp>(withLocations, config, "03-gpu.mlir");
  if (!located)
    return;
  std::vector<mlir::Operation *> ops, sources;
  stage03->walk([&](mlir::Operation *op) { ops.push_back(op); });
  located->walk([&](mlir::Operation *op) { sources.push_back(op); });
  if (ops.size() != sources.size())
    return;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->getName() != sources[i]->getName())
      return;
    std::optional<mlir::FileLineColLoc> source = fileLocation(sources[i]->getLoc());
    if (source && source->getFilename() != "03-gpu.mlir")
      ops[i]->setLoc(mlir::FusedLoc::get(stage03.getContext(), {ops[i]->getLoc(), *source}));
  }
}

} // namespace

std::vector<HostArray> simulateStage(mlir::ModuleOp stage03, const backends::CudaProgram &program,
                                     const ExportSignature &signature, const std::vector<HostArray> &inputs,
                                     const DeviceOptions &options, SimulateResult &stats) {
  std::string error;
  std::unique_ptr<Device> device = Device::create(stage03, options, error);
  if (!device)
    throw SimError(error);
  for (const auto &step : program.steps)
    if (const auto *launch = std::get_if<backends::CudaLaunch>(&step))
      if (!device->hasKernel(launch->kernel))
        throw SimError("the host program launches kernel '" + launch->kernel +
                       "', which stage 03 does not define");
  std::vector<HostArray> outputs;
  try {
    outputs = runProgram(*device, program, signature, inputs);
  } catch (...) {
    stats.counters = device->counters();
    throw;
  }
  stats.counters = device->counters();
  const Counters &c = stats.counters;
  const UninitializedReads &u = device->memory().uninitializedReads();
  if (u.count)
    stats.warnings.push_back(std::to_string(u.count) + " byte(s) of memory read before anything wrote "
                                                       "them (they hold garbage); the first:\n  " +
                             c.firstUninitialized);
  if (c.poison)
    stats.warnings.push_back(std::to_string(c.poison) +
                             " poison value(s) computed (LLVM may make them anything); the first:\n  " +
                             c.firstPoison);
  return outputs;
}

SimulateResult simulateExport(mlir::ModuleOp module, llvm::StringRef entry, const std::vector<HostArray> &inputs,
                              const SimulateOptions &options) {
  SimulateResult result;
  std::optional<ExportSignature> signature = exportSignature(module, entry);
  if (!signature) {
    result.error = "no export named '" + entry.str() + "'";
    return result;
  }
  auto start = std::chrono::steady_clock::now();
  backends::BackendOptions backend;
  backend.target = options.target;
  backend.emit = "gpu";
  backend.emitLocations = true;
  std::optional<backends::BackendOutput> compiled = backends::cuda::compile(module, backend);
  if (!compiled) {
    result.error = "the CUDA backend failed to compile the module for " + options.target.str();
    return result;
  }
  const backends::CudaProgram *program = nullptr;
  for (const backends::CudaProgram &p : compiled->cudaPrograms)
    if (p.exportName == entry)
      program = &p;
  if (!program) {
    result.error = "the CUDA backend made no host program for export '" + entry.str() + "'";
    return result;
  }
  // Stage 03 as `pkc compile --emit=gpu` prints it: what the simulator
  // runs is what the next stages read, and errors can name its lines.
  mlir::ParserConfig config(module.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> stage03 =
      mlir::parseSourceString<mlir::ModuleOp>(compiled->emitted, config, "03-gpu.mlir");
  if (!stage03) {
    result.error = "internal error: stage 03 (--emit=gpu) does not parse back";
    return result;
  }
  addSourceLocations(*stage03, compiled->emittedWithLocations);
  result.compileSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  stage03->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "gpu.func")
      ++result.kernels;
  });
  try {
    result.outputs = simulateStage(*stage03, *program, *signature, inputs, options.device, result);
  } catch (const SimError &e) {
    result.error = std::string("cuda-sim: ") + e.what();
  }
  result.runSeconds = secondsSince(start);
  return result;
}

} // namespace pk::sim
