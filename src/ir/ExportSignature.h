//===- ExportSignature.h - What a caller of an export sees ------*- C++ -*-===//
//
// An export's full-array signature read from its pk.export op: names,
// dtypes and symbolic shapes of its arguments and results, and where each
// symbolic size is bound. The interpreter, the backends and the manifests
// all describe exports through it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_EXPORTSIGNATURE_H
#define PK_IR_EXPORTSIGNATURE_H

#include "support/DType.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace pk {

class ExportOp;

/// Module constants as `-D` gives them: NAME and a .pk expression.
using ConstantOverrides = std::vector<std::pair<std::string, std::string>>;

/// On a pk.export: the configurations `@autotune(configs=[...])` lists,
/// an array of dictionaries from module constants to .pk expressions
/// (what `pkc tune` tries).
inline constexpr llvm::StringLiteral kAutotuneAttr = "pk.autotune";
/// On a pk.export: the configuration `pkc tune` chose and `pkc compile
/// --tuned` compiled it with (a dictionary as above).
inline constexpr llvm::StringLiteral kTunedAttr = "pk.tuned";

struct ExportSignature {
  struct Array {
    std::string name;
    DType dtype;
    mlir::AffineMap shape; ///< ()[symbols] -> (dims)
  };
  /// A symbolic size is read from dimension `dim` of argument `argument`,
  /// the first place where it stands alone.
  struct Binding {
    unsigned argument;
    unsigned dim;
  };
  std::string name;
  std::vector<std::string> symbols;
  std::vector<Binding> bindings; ///< one per symbol
  std::vector<Array> arguments;
  std::vector<Array> results;
  /// The constants a tuning record set for this export; empty when none.
  ConstantOverrides tuned;
};

std::vector<std::string> exportNames(mlir::ModuleOp module);
ExportSignature exportSignature(ExportOp op);
std::optional<ExportSignature> exportSignature(mlir::ModuleOp module, llvm::StringRef name);
/// The configurations an export's `@autotune` lists (none without one).
std::vector<ConstantOverrides> autotuneConfigs(ExportOp op);
/// A dictionary attribute of constants as ConstantOverrides, and back.
ConstantOverrides overridesOf(mlir::DictionaryAttr dict);
mlir::DictionaryAttr overridesAttr(mlir::MLIRContext *context, const ConstantOverrides &overrides);

} // namespace pk

#endif // PK_IR_EXPORTSIGNATURE_H
