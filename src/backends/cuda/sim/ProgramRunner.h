//===- ProgramRunner.h - An export's host program on the simulator -*- C++ -*-===//
//
// Does what a runtime does with a manifest's CUDA program: binds the
// export's symbolic sizes from the inputs' shapes (checking every other
// appearance), allocates the outputs and temporaries (filled with 0xff
// bytes: NaN for floats, as the reference interpreter leaves unwritten
// outputs), runs the copy and launch steps in order with their size
// expressions evaluated, and reads the outputs back.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_PROGRAMRUNNER_H
#define PK_BACKENDS_CUDA_SIM_PROGRAMRUNNER_H

#include "backends/Manifest.h"
#include "backends/cuda/sim/Device.h"
#include "interpreter/HostArray.h"
#include "ir/ExportSignature.h"

#include <vector>

namespace pk::sim {

/// What fresh outputs and temporaries hold.
constexpr uint8_t kOutputFill = 0xff;

/// A size expression's value for `symbols` (Python's rounding for
/// floordiv, ceildiv and mod). Throws SimError on a negative divisor or
/// overflow.
int64_t evaluateSize(mlir::AffineExpr expr, const std::vector<int64_t> &symbols);

/// Runs `program` for `signature` on `inputs` (in the export's argument
/// order) and returns the outputs. Throws SimError.
std::vector<HostArray> runProgram(Device &device, const backends::CudaProgram &program,
                                  const ExportSignature &signature, const std::vector<HostArray> &inputs);

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_PROGRAMRUNNER_H
