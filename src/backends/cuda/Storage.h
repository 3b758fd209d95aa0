//===- Storage.h - How elements are stored in GPU memory ---------*- C++ -*-===//
//
// Shared by the stages that place buffers (outline, TMA planning, rings)
// and the ones that address them (distribute).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_STORAGE_H
#define PK_BACKENDS_CUDA_STORAGE_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace pk::gpu {

/// Bytes of one element of a storage type in memory (bool: 1).
int64_t elementBytes(mlir::Type type);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_STORAGE_H
