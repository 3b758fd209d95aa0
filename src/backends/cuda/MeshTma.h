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
#include <optional>
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
  std::vector<int64_t> box;    ///< one TMA box
  int64_t swizzle = 0;         ///< bytes: 0, 32, 64, 128
  mlir::Type element;
};

/// A copy carried by TMA: its tensor map and the boxes it is cut into.
struct MeshTmaCopy {
  struct Box {
    std::vector<int64_t> start; ///< per array dimension, from the window's start
    int64_t sharedByte = 0;     ///< from the shared window's first byte
  };
  /// A collective copy (collective_axes) multicast over its CTAs: each of
  /// the `members` CTAs along the axes loads one slice of every box, cut
  /// along `dimension`, and TMA writes it into all of their shared
  /// memories (and completes its bytes on all of their barriers), so the
  /// data crosses L2 once. The tensor map's box is one slice; member g's
  /// slice of a box starts `g * rows` further along `dimension` and
  /// `g * bytes` further in shared memory.
  struct Multicast {
    unsigned dimension = 0;
    int64_t rows = 0, bytes = 0;
    int64_t members = 1;
    std::vector<unsigned> axes; ///< positions of the collective axes in the cluster
  };
  unsigned tensorMap = 0;
  std::vector<Box> boxes;
  uint64_t bytes = 0; ///< of the whole window
  std::optional<Multicast> multicast;
};

struct MeshTmaPlan {
  std::vector<MeshTensorMap> tensorMaps; ///< in kernel parameter order
  llvm::DenseMap<mlir::Operation *, MeshTmaCopy> copies;
};

/// The TMA boxes that fill one 2-D tile of a buffer stored as wgmma
/// strips (SharedLayout::strips of `swizzle` bytes, 0 for 16-byte strips)
/// from a `rows` x `columns` window of an array of rank `rank` whose rows
/// run along dimension `rowDim` and columns along the innermost: one box
/// per strip (and per 256 rows), as wide as the swizzle's span; `box` is
/// the tensor map's box. None when the tile cannot be cut so.
std::optional<std::vector<MeshTmaCopy::Box>> wgmmaStripBoxes(size_t rank, size_t rowDim,
                                                             int64_t rows, int64_t columns,
                                                             int64_t elementBytes, int64_t swizzle,
                                                             std::vector<int64_t> &box);

/// Plans the copies of `kernel`; copies it leaves out are SIMT copies.
MeshTmaPlan planMeshTma(pk::MeshKernelOp kernel);

/// The views from `ref` down to the Ref they look into, innermost first
/// (empty when `ref` is not a view).
llvm::SmallVector<pk::RefViewOp> viewChain(mlir::Value ref);

/// Whether the shared memory Ref `ref` (or a view of it) is an operand of
/// a wgmma or a tcgen05_mma: such buffers are stored as the tensor cores
/// read them (strips).
bool feedsWgmma(mlir::Value ref);
/// The swizzle (bytes) a wgmma operand buffer of `ref`'s type is stored
/// with: the one its SwizzleTransform names, else the widest whose span
/// divides a tile row; 0 for 16-byte strips.
int64_t wgmmaOperandSwizzle(pk::RefType ref);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_MESHTMA_H
