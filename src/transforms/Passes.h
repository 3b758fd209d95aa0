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

} // namespace pk

#endif // PK_TRANSFORMS_PASSES_H
