//===- TpuBackend.h - pk IR to Mosaic TPU MLIR ------------------*- C++ -*-===//
#ifndef PK_BACKENDS_TPU_TPUBACKEND_H
#define PK_BACKENDS_TPU_TPUBACKEND_H

#include "backends/Backend.h"

namespace pk::backends::tpu {

/// `options.emit`: "" (the artifact) or "mlir" (the Mosaic module as text).
std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &options);

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_TPUBACKEND_H
