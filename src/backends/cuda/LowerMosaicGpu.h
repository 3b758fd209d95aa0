//===- LowerMosaicGpu.h - Helpers of the Mosaic GPU lowerings ---*- C++ -*-===//
//
// What the thread-level lowerings of Mosaic GPU ops share
// (LowerMosaicGpu.cpp, LowerTensorMemory.cpp): Refs and their addresses,
// the Pallas thread's first thread, mbarriers by index.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_LOWERMOSAICGPU_H
#define PK_BACKENDS_CUDA_LOWERMOSAICGPU_H

#include "backends/cuda/Distribute.h"

namespace pk::gpu {

RefInfo &refOf(Emitter &e, mlir::Value ref);
/// An index value as i32.
mlir::Value i32Of(Emitter &e, mlir::Value index);
/// Whether the executing thread is its Pallas thread's (warpgroup's) first.
mlir::Value isFirstThread(Emitter &e);
/// Whether the executing thread is the CTA's first: the one that sets up
/// what all of its Pallas threads share (barriers, semaphores).
mlir::Value isFirstCtaThread(Emitter &e);
/// Whether the executing thread is lane 0 of its warp.
mlir::Value isFirstLane(Emitter &e);
/// The index of `indices` in a row-major array of `shape`.
mlir::Value linearOf(Emitter &e, mlir::ValueRange indices, llvm::ArrayRef<int64_t> shape);
/// The address of the element at a Ref coordinate.
mlir::Value pointerAt(Emitter &e, const RefInfo &ref, llvm::ArrayRef<mlir::Value> refCoordinate);
/// The executing warp's index in the CTA.
mlir::Value ctaWarp(Emitter &e);
/// Whether the index `v` is provably a multiple of `m`: a constant, or
/// sums and products built from one.
bool isMultipleOf(mlir::Value v, int64_t m);

/// One mbarrier of a pkgpu.barrier_alloc, and the executing warp's parity
/// bit for it.
struct BarrierAt {
  mlir::Value barrier; ///< !llvm.ptr<3> to the mbarrier
  mlir::Value parity;  ///< !llvm.ptr<3> to the warp's parity word for it
  mlir::Value bit;     ///< i32: the barrier's bit in that word
};
BarrierAt barrierAt(Emitter &e, mlir::Value barrier, mlir::ValueRange indices);

/// The TMA boxes of a copy between a window of a global Ref (`global`,
/// its offsets the window's first element) and a shared one: the kernel
/// parameter `tensorMapParam` (a tensor map), and per box of `boxes`
/// (array<i64: start per array dimension..., shared byte>) its
/// coordinates (i32, outermost first) and shared memory address.
struct TmaBoxes {
  mlir::Value tensorMap;
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> coordinates;
  llvm::SmallVector<mlir::Value> shared;
};
TmaBoxes tmaBoxes(Emitter &e, int64_t tensorMapParam, mlir::ArrayAttr boxes, const RefInfo &global,
                  const RefInfo &shared);

/// The tensor memory ops (LowerTensorMemory.cpp): nullopt for other ops.
std::optional<mlir::LogicalResult> lowerTensorMemoryOp(Emitter &e, mlir::Operation *op);
/// The cluster launch control ops (LowerClusterLaunch.cpp): nullopt for
/// other ops.
std::optional<mlir::LogicalResult> lowerClusterLaunchOp(Emitter &e, mlir::Operation *op);
/// On a barrier that orders_tensor_core, in a kernel with tensor memory:
/// the tcgen05.fence that orders the tensor core's work before a thread
/// synchronization (`beforeSync`: before an arrival) or after it (after a
/// wait).
void tensorCoreFence(Emitter &e, mlir::Value barrier, bool beforeSync);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_LOWERMOSAICGPU_H
