//===- TpuManifest.h - The TPU part of the launch manifest ------*- C++ -*-===//
//
// One program per export (docs/tpu.md is the schema): the buffers it
// needs and, in order, the tpu_custom_calls that run its kernels, each
// described from its KernelPlan - everything a launcher needs to call the
// Mosaic module from JAX without reading the .pk file.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TPU_TPUMANIFEST_H
#define PK_BACKENDS_TPU_TPUMANIFEST_H

#include "backends/tpu/KernelPlan.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace pk::backends::tpu {

/// The programs of `module`'s exports, from the plans of its pallas_calls.
std::vector<nlohmann::json> manifestPrograms(mlir::ModuleOp module,
                                             const std::vector<KernelPlan> &plans);

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_TPUMANIFEST_H
