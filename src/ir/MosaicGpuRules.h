//===- MosaicGpuRules.h - What Mosaic GPU accepts, in one place -*- C++ -*-===//
//
// The hardware rules of the Mosaic GPU ops (wgmma shapes and dtypes, what
// memory async copies move between), as functions that return why an
// operand combination is invalid (or ""). The op verifiers and the
// elaborator's diagnostics share them, so IR and messages agree.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_MOSAICGPURULES_H
#define PK_IR_MOSAICGPURULES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace pk {

class RefType;

/// A type as the kernel's author knows it: "a float32 Ref of shape
/// (64, 128) in plgpu.GMEM", "a bfloat16 value of shape (64, 64)".
std::string typeText(mlir::Type t);
/// An element type by its NumPy name ("bfloat16", "int32").
std::string elementName(mlir::Type t);

/// The bytes one element of `element` occupies in shared or tensor memory
/// (a bool, like any type under 8 bits, a byte).
int64_t elementBytes(mlir::Type element);

/// Why a named barrier (bar.sync / bar.arrive) of this id and thread
/// count is invalid, or "": ids 0-15, counts positive multiples of 32 up to
/// 1024. The verifier checks constants, the interpreter the values run.
std::string namedBarrierProblem(int64_t id, int64_t threads);

/// Why `wgmma(acc, a, b)` is invalid, or "". `a` is a RefType or a
/// ranked tensor type (A in registers).
std::string wgmmaProblem(RefType acc, mlir::Type a, RefType b);

/// Why an async copy from `src` to `dst` is invalid, or "";
/// `toShared` is the direction (GMEM -> SMEM when set).
std::string asyncCopyProblem(RefType src, RefType dst, bool toShared);

/// Why a tensor memory (plgpu.TMEM) allocation of `shape` and `element`
/// is invalid, or "": 128 rows (the TMEM lanes) of 32-bit elements, at
/// most 512 columns.
std::string tmemAllocationProblem(llvm::ArrayRef<int64_t> shape, mlir::Type element);

/// Why `tcgen05_mma(acc, a, b)` is invalid, or "".
std::string tcgen05MmaProblem(RefType acc, RefType a, RefType b);

/// The TMEM columns a buffer of `shape` takes (32-bit elements: its
/// columns), and what tcgen05.alloc is asked for: a power of two from
/// 32 to 512.
int64_t tmemColumns(llvm::ArrayRef<int64_t> shape);
int64_t tmemAllocatedColumns(int64_t columns);

/// Why `result` cannot hold the answer of plgpu.try_cluster_cancel (16
/// bytes of shared memory), or "".
std::string clusterCancelResultProblem(RefType result);

} // namespace pk

#endif // PK_IR_MOSAICGPURULES_H
