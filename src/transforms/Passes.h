//===- Passes.h - Target-independent pk passes ------------------*- C++ -*-===//
#ifndef PK_TRANSFORMS_PASSES_H
#define PK_TRANSFORMS_PASSES_H

#include "ir/PkDialect.h"

#include "mlir/Pass/Pass.h"

namespace pk {

#define GEN_PASS_DECL
#include "transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "transforms/Passes.h.inc"

/// The pattern of pk-expand-bitcasts, for pipelines that run it among
/// others.
void populateExpandBitcastPatterns(mlir::RewritePatternSet &patterns);

/// Whether pk-fold-ref-reshapes folds `op` away: it adds or removes unit
/// axes only (composed with the reshapes it views), and only loads,
/// stores and such reshapes use it.
bool foldsIntoAccesses(RefReshapeOp op);

} // namespace pk

#endif // PK_TRANSFORMS_PASSES_H
