//===- SmemTransforms.h - Mosaic GPU shared-memory transforms ---*- C++ -*-===//
//
// The rules Mosaic GPU applies to `plgpu.TilingTransform`,
// `plgpu.SwizzleTransform` and `plgpu.TransposeTransform` on shared-memory
// Refs (jax/_src/pallas/mosaic_gpu/core.py), in one place: the Ref type's
// verifier, the ops' verifiers and the elaborator's diagnostics all ask
// these functions, so the IR and the user-facing messages never disagree.
//
// A transform list maps the logical array to the physical one, in order.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_SMEMTRANSFORMS_H
#define PK_IR_SMEMTRANSFORMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pk {

/// Why `transforms` cannot lay out an array of `shape` and `elementType`,
/// or "" when they can. Messages read as "... : <message>".
std::string checkSmemTransforms(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                                mlir::ArrayAttr transforms);

/// The swizzle in bytes of a transform list, or 0 when it has none.
int64_t swizzleOf(mlir::ArrayAttr transforms);
/// The tiling of a transform list, or empty.
std::vector<int64_t> tilingOf(mlir::ArrayAttr transforms);
/// The leading transpose's permutation, or empty when there is none.
std::vector<int64_t> transposeOf(mlir::ArrayAttr transforms);

/// The transforms of `transpose_ref(ref, permutation)`: the view's dim i
/// is the Ref's dim permutation[i]. Null when the result has none.
mlir::ArrayAttr transposeTransforms(mlir::MLIRContext *context, mlir::ArrayAttr transforms,
                                    llvm::ArrayRef<int64_t> permutation);

/// Why a window of a transformed Ref (`ref.at[...]`) cannot be taken, or
/// "": a swizzled minor dimension cannot be sliced, and slices of tiled
/// dimensions must be whole tiles. `staticOffsets` holds
/// ShapedType::kDynamic for dynamic starts.
std::string checkSmemWindow(llvm::ArrayRef<int64_t> shape, mlir::ArrayAttr transforms,
                            llvm::ArrayRef<int64_t> staticOffsets, llvm::ArrayRef<int64_t> sizes,
                            llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> squeezed);

/// The transforms a window of a transformed Ref keeps: the same list, with
/// a transpose restricted to the dims the window keeps. Null when the
/// window drops a dim the transforms need (then checkSmemWindow failed).
mlir::ArrayAttr windowTransforms(mlir::MLIRContext *context, mlir::ArrayAttr transforms,
                                 llvm::ArrayRef<int64_t> squeezed, size_t rank);

} // namespace pk

#endif // PK_IR_SMEMTRANSFORMS_H
