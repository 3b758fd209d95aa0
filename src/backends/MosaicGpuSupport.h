//===- MosaicGpuSupport.h - Which backends take Mosaic GPU ops --*- C++ -*-===//
//
// The Mosaic GPU ops (plgpu: pk.mesh_kernel, pk.wgmma, ...) all run on
// the reference interpreter. The CUDA backend lowers kernels, mesh axes,
// scoped scratch, views, barriers and async copies for sm_90 and newer
// (docs/mosaic-gpu.md); what it does not lower yet, and everything on the
// TPU backend, is rejected by name at the user's line instead of failing
// somewhere inside a pipeline. The ops TPU kernels share with the model
// (pl.run_scoped of VMEM/SMEM/semaphores, Ref views, semaphores) and the
// TPU async copies go the other way: the TPU backend lowers them outside
// Mosaic GPU kernels, the CUDA backend rejects them by name.
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

/// Emits one error per kind of Mosaic GPU construct in `module` (at its
/// first use) that `target` cannot compile; fails if there was any.
mlir::LogicalResult rejectMosaicGpuOps(mlir::ModuleOp module, const Target &target);

} // namespace pk::backends

#endif // PK_BACKENDS_MOSAICGPUSUPPORT_H
