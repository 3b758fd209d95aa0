//===- LaunchPlan.h - How a pallas_call's grid runs on a GPU ----*- C++ -*-===//
//
// Pallas runs a grid's programs in row-major order; a GPU runs CTAs in
// parallel. Axes on which programs are independent go to the CUDA grid;
// axes whose programs may share an output block (an accumulation over k),
// across which scratch buffers carry state (docs/cuda.md, "Grid
// semantics"), that dimension_semantics marks "arbitrary", or whose
// size is computed from data (a grid bound, read by the CTA), run in order
// in a loop inside each CTA, which keeps Pallas's semantics for them.
// dimension_semantics, when given, is trusted as Pallas trusts it. The outline
// stage builds kernels from this plan and the manifest launches them with
// it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_LAUNCHPLAN_H
#define PK_BACKENDS_CUDA_LAUNCHPLAN_H

#include "ir/PkDialect.h"

#include "mlir/IR/AffineExpr.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pk::gpu {

struct LaunchPlan {
  std::string kernelName;
  unsigned numWarps = 4;
  /// compiler_params' num_stages: how deep pk-gpu-prefetch-operands may
  /// pipeline a K loop (its default when not given).
  std::optional<unsigned> numStages;
  /// Grid axes run in a loop inside each CTA, in grid (row-major) order.
  std::vector<unsigned> sequentialAxes;
  /// Grid axes on CUDA's x, y and z: each a group of axes whose programs
  /// are enumerated row-major by that block index.
  std::vector<unsigned> cudaAxes[3];
  /// The CUDA grid size per dimension, over the export's symbols.
  mlir::AffineExpr cudaSize[3];
  /// CTAs per cluster (on CUDA's x).
  unsigned clusterSize = 1;
  /// Pallas threads (warpgroups) per CTA of a Mosaic GPU kernel; 0 for a
  /// pallas_call, whose warps all work on every block value.
  unsigned warpgroups = 0;

  unsigned threadsPerBlock() const { return 32 * numWarps; }
};

/// Plans every pallas_call and Mosaic GPU kernel (pk.mesh_kernel) of
/// `module`, naming kernels uniquely ("<export>_<kernel>"). A mesh
/// kernel's CTAs are numbered row-major over its grid axes, then its
/// cluster axes, on CUDA's x: consecutive CTAs form a cluster.
std::map<mlir::Operation *, LaunchPlan> planLaunches(mlir::ModuleOp module, unsigned defaultNumWarps);

/// The symbolic shape of an array at export level: an export argument, a
/// pallas_call result or a (static) mesh kernel result.
mlir::AffineMap symbolicShapeOf(mlir::Value array);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_LAUNCHPLAN_H
