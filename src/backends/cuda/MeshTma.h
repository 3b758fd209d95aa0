//===- MeshTma.h - Which Mosaic GPU copies TMA carries -----------*- C++ -*-===//
//
// A `plgpu.copy_gmem_to_smem` / `copy_smem_to_gmem` moves a window of a
// kernel operand (a chain of `x_ref.at[...]` views of it) to or from a
// contiguous region of shared memory. When the window is a box TMA can
// copy (cuda.h's rules for cuTensorMapEncodeTiled, plus shared memory
// aligned to 128 bytes), the kernel gets a tensor map parameter for it,
// which the runtime encodes at launch from the manifest; otherwise the
// warpgroup copies element by element and arrives itself. Both the host
// program (manifest arguments) and the outline stage (kernel parameters)
// ask this plan, so they agree on the parameters' order.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_MESHTMA_H
#define PK_BACKENDS_CUDA_MESHTMA_H

#include "ir/PkDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <vector>

namespace pk::gpu {

/// Shared memory allocations of Mosaic GPU kernels start at multiples of
/// this: what TMA needs of a box's destination.
constexpr int64_t kMeshSmemAlignment = 128;
/// TMA's limit on a box's extent in every dimension.
constexpr int64_t kTmaMaxBox = 256;

/// One tensor map parameter: a box over a whole kernel operand.
struct MeshTensorMap {
  unsigned operand = 0;        ///< the kernel's inputs, then its outputs
  std::vector<int64_t> shape;  ///< the operand's, outermost first
  std::vector<int64_t> box;    ///< one TMA box; the outermost dimension may be split
  mlir::Type element;
};

/// A copy carried by TMA: its tensor map and how it is cut into boxes.
struct MeshTmaCopy {
  unsigned tensorMap = 0;
  /// The window's extent per array dimension (1 where squeezed).
  std::vector<int64_t> window;
  /// The array dimension cut into boxes (window larger than the box there).
  unsigned splitDim = 0;
  int64_t boxes = 1;
  uint64_t bytes = 0; ///< of the whole window
};

struct MeshTmaPlan {
  std::vector<MeshTensorMap> tensorMaps; ///< in kernel parameter order
  llvm::DenseMap<mlir::Operation *, MeshTmaCopy> copies;
};

/// Plans the copies of `kernel`; copies it leaves out are SIMT copies.
MeshTmaPlan planMeshTma(pk::MeshKernelOp kernel);

/// The views from `ref` down to the Ref they look into, innermost first
/// (empty when `ref` is not a view).
llvm::SmallVector<pk::RefViewOp> viewChain(mlir::Value ref);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_MESHTMA_H
