//===- MosaicGpuSupport.h - Which backends take Mosaic GPU ops --*- C++ -*-===//
//
// The Mosaic GPU ops (plgpu: pk.mesh_kernel, pk.wgmma, ...) run on the
// reference interpreter; no backend lowers them yet. Until the CUDA
// lowering lands, each backend rejects them by name at the user's line
// instead of failing somewhere inside its pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_MOSAICGPUSUPPORT_H
#define PK_BACKENDS_MOSAICGPUSUPPORT_H

#include "backends/Target.h"

#include "mlir/IR/BuiltinOps.h"

namespace pk::backends {

/// The plgpu spelling of a Mosaic GPU op ("plgpu.wgmma"), or "" for ops
/// that are not Mosaic GPU ops.
llvm::StringRef mosaicGpuName(mlir::Operation *op);

/// Emits one error per kind of Mosaic GPU op in `module` (at its first
/// use) that `target` cannot compile; fails if there was any.
mlir::LogicalResult rejectMosaicGpuOps(mlir::ModuleOp module, const Target &target);

} // namespace pk::backends

#endif // PK_BACKENDS_MOSAICGPUSUPPORT_H
