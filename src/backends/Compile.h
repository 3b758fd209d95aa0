//===- Compile.h - Lowering pk IR for a target ------------------*- C++ -*-===//
#ifndef PK_BACKENDS_COMPILE_H
#define PK_BACKENDS_COMPILE_H

#include "backends/Backend.h"

namespace pk::backends {

/// Lowers `module` (verified pk IR) for `options.target`. Errors are
/// emitted as MLIR diagnostics; returns nullopt after an error.
std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &options);

} // namespace pk::backends

#endif // PK_BACKENDS_COMPILE_H
