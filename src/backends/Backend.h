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
  /// When set, the IR after every stage (and tool logs) is written here.
  std::string dumpDir;
};

struct BackendOutput {
  std::string artifact;  ///< the bytes of the file a runtime loads
  std::string format;    ///< "cubin", "ptx", "mosaic"
  std::string extension; ///< ".cubin", ".ptx", ".mlir"
  std::string emitted;   ///< the stage asked for with `emit`
  std::vector<CudaProgram> cudaPrograms;
  std::vector<nlohmann::json> otherPrograms;
  /// ptxas's "Potential Performance Loss" remarks on a cubin.
  std::vector<std::string> ptxasNotes;
};

} // namespace pk::backends

#endif // PK_BACKENDS_BACKEND_H
