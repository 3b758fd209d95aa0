//===- Interpreter.h - The reference interpreter for pk IR ------*- C++ -*-===//
//
// Executes an export on the CPU with Pallas interpret-mode semantics; it is
// the reference every backend is tested against:
//
//  - the grid runs sequentially in row-major order (last axis fastest);
//  - each operand is padded, as Pallas pads it, with its Element padding
//    and up to a whole number of blocks; the padding reads as NaN (floats),
//    the minimum value (integers) or False;
//  - a block whose index map points past the padded array is shifted back
//    inside it, as lax.dynamic_slice does; out-of-bounds output writes land
//    in the padding and are dropped with it;
//  - outputs start uninitialized (or as the aliased input); scratch buffers
//    start uninitialized and persist across the grid.
//
// Blocks are computed whole, op by op, so it runs at native loop speed.
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_INTERPRETER_H
#define PK_INTERPRETER_INTERPRETER_H

#include "interpreter/HostArray.h"
#include "ir/ExportSignature.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include <optional>
#include <string>
#include <vector>

namespace pk {

/// The shape of an argument or result once the symbols have values.
std::vector<int64_t> concreteShape(const ExportSignature::Array &array,
                                   const std::vector<int64_t> &symbols);

/// The input `pkc run` makes up for argument `argument` when none is given:
/// element k (row-major) is v = (37 k + 101 argument) mod 257, then
/// v / 64 - 2 for floats (exact in every float type), v mod 256 - 128 for
/// signed integers, v mod 256 for unsigned ones and v mod 2 for bool.
HostArray deterministicInput(DType dtype, const std::vector<int64_t> &shape, unsigned argument);

struct RunOptions {
  /// Ops the interpreter may execute before it gives up on a kernel that
  /// does not terminate.
  uint64_t maxSteps = 20'000'000'000ull;
};

struct RunResult {
  std::vector<HostArray> outputs;
  std::string error; ///< empty on success
  std::optional<mlir::Location> errorLocation;
  bool ok() const { return error.empty(); }
};

/// Runs export `name` of `module` (verified pk IR) on `inputs`.
RunResult runExport(mlir::ModuleOp module, llvm::StringRef name,
                    const std::vector<HostArray> &inputs, const RunOptions &options = {});

} // namespace pk

#endif // PK_INTERPRETER_INTERPRETER_H
