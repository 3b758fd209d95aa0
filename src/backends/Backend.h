//===- Backend.h - What every backend takes and gives -----------*- C++ -*-===//
//
// A backend lowers a verified pk module for one target. It reports errors
// as MLIR diagnostics on the ops they concern (whose locations point at
// the user's lines) and returns the artifact, the stage the user asked to
// see, and its part of the launch manifest.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_BACKEND_H
#define PK_BACKENDS_BACKEND_H

#include "backends/Manifest.h"
#include "backends/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace pk::backends {

struct BackendOptions {
  Target target;
  /// A stage to return as text ("ptx", "llvm", "gpu", "mlir", ...), or
  /// empty for just the artifact.
  std::string emit;
  /// With emit == "gpu": also print the stage with its ops' source
  /// locations (BackendOutput::emittedWithLocations), for the simulator.
  bool emitLocations = false;
  /// When set, the IR after every stage (and tool logs) is written here.
  std::string dumpDir;
  /// When set (pkc compile --time-report), each stage's wall time, and
  /// each MLIR pass's within it, is recorded under this scope.
  mlir::TimingScope *timing = nullptr;
};

/// A timer for one stage of a backend, nested under `options.timing`; it
/// records nothing when no report was asked for.
inline mlir::TimingScope timeStage(const BackendOptions &options, llvm::StringRef name) {
  return options.timing ? options.timing->nest(name) : mlir::TimingScope();
}

struct BackendOutput {
  std::string artifact;  ///< the bytes of the file a runtime loads
  std::string format;    ///< "cubin", "ptx", "mosaic"
  std::string extension; ///< ".cubin", ".ptx", ".mlir"
  std::string emitted;   ///< the stage asked for with `emit`
  /// With emit == "gpu" and emitLocations: the same stage printed with
  /// its ops' source locations (the simulator names the user's lines with
  /// them).
  std::string emittedWithLocations;
  std::vector<CudaProgram> cudaPrograms;
  std::vector<nlohmann::json> otherPrograms;
  /// ptxas's "Potential Performance Loss" remarks on a cubin.
  std::vector<std::string> ptxasNotes;
};

} // namespace pk::backends

#endif // PK_BACKENDS_BACKEND_H
