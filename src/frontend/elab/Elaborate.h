//===- Elaborate.h - AST to pk IR -------------------------------*- C++ -*-===//
//
// The public entry of the elaborator: runs the static part of a .pk module
// (module constants, `def`s, lambdas, partial, static loops and branches)
// and emits a pk IR module with one pk.export per `@export` function.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_ELABORATE_H
#define PK_FRONTEND_ELAB_ELABORATE_H

#include "frontend/ast/AST.h"
#include "support/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace pk {

struct ElaborationOptions {
  /// `-D NAME=VALUE`: VALUE is a .pk expression, registered as a source
  /// buffer so that errors in it can be reported.
  struct Define {
    std::string name;
    uint32_t valueFile = 0;
  };
  std::vector<Define> defines;
};

/// Elaborates `module`. Reports errors through `diagnostics` and returns
/// null if there were any. The IR is verified before it is returned.
mlir::OwningOpRef<mlir::ModuleOp> elaborate(const ast::Module &module,
                                            const ElaborationOptions &options,
                                            DiagnosticEngine &diagnostics,
                                            mlir::MLIRContext &context);

} // namespace pk

#endif // PK_FRONTEND_ELAB_ELABORATE_H
