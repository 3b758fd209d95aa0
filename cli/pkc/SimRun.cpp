//===- SimRun.cpp - pkc run --device=cuda-sim: the CUDA pipeline, simulated ===//
//
// Compiles the module with the CUDA backend up to stage 03 and runs the
// export's host program on the SIMT simulator (src/backends/cuda/sim):
// the CUDA backend's correctness check on machines without a GPU. Inputs
// and outputs are host arrays, as for the interpreter; undefined behaviour
// in the generated kernels (races, out-of-bounds accesses, divergent
// barriers, ...) is an error, and suspicious reads are warnings.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "backends/cuda/sim/Simulate.h"
#include "driver/Session.h"
#include "interpreter/Interpreter.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

RunResult runOnCudaSim(Session &session, mlir::ModuleOp module, const std::string &entry,
                       const std::vector<HostArray> &inputs, const RunOptions &options) {
  RunResult result;
  DiagnosticEngine &diag = session.diagnostics();
  sim::SimulateOptions sim;
  std::string error;
  std::optional<backends::Target> target = backends::parseTarget(options.target, error);
  if (!target || target->kind != backends::Target::Kind::Cuda) {
    result.error = "--device=cuda-sim: " + (target ? "'" + options.target + "' is not a CUDA target" : error);
    return result;
  }
  sim.target = *target;
  llvm::StringRef order = options.ctaOrder;
  if (order == "linear") {
    sim.device.order = sim::CtaOrder::Linear;
  } else if (order == "reverse") {
    sim.device.order = sim::CtaOrder::Reverse;
  } else if (order.consume_front("shuffled")) {
    sim.device.order = sim::CtaOrder::Shuffled;
    if (order.consume_front(":") && order.getAsInteger(10, sim.device.seed)) {
      result.error = "--cta-order=shuffled:SEED needs an integer seed";
      return result;
    }
  } else {
    result.error = "--cta-order must be linear, reverse or shuffled[:SEED], got '" + options.ctaOrder + "'";
    return result;
  }

  sim::SimulateResult run;
  {
    // The backend's diagnostics point at the user's lines.
    mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
      Severity severity = d.getSeverity() == mlir::DiagnosticSeverity::Warning ? Severity::Warning
                          : d.getSeverity() == mlir::DiagnosticSeverity::Error ? Severity::Error
                                                                               : Severity::Note;
      diag.report(session.diagnosticAt(d.getLocation(), severity, d.str()));
      return mlir::success();
    });
    run = sim::simulateExport(module, entry, inputs, sim);
  }
  for (const std::string &warning : run.warnings)
    diag.warning(SourceRange(), "cuda-sim: " + warning);
  if (options.simStats)
    llvm::errs() << "cuda-sim: " << run.kernels << " kernel(s), " << run.counters.ctas << " CTAs, "
                 << run.counters.instructions << " instructions (" << run.counters.threadInstructions
                 << " thread-instructions); compile " << llvm::format("%.3f", run.compileSeconds)
                 << " s, simulate " << llvm::format("%.3f", run.runSeconds) << " s\n";
  if (!run.ok()) {
    result.error = run.error;
    return result;
  }
  result.outputs = std::move(run.outputs);
  return result;
}

} // namespace pk::cli
