//===- MatrixDescriptor.h - Tensor core operands in SMEM --------*- C++ -*-===//
//
// The shared memory matrix descriptors of wgmma (PTX ISA, "Matrix Descriptor
// Format") and tcgen05 ("Shared Memory Descriptor"), as the simulator
// reads them: a start address, leading and stride byte offsets and a
// swizzle, over the canonical layouts of "Shared Memory Matrix Layout".
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_MATRIXDESCRIPTOR_H
#define PK_BACKENDS_CUDA_SIM_MATRIXDESCRIPTOR_H

#include <cstdint>

namespace pk::sim {

struct MatrixDescriptor {
  uint64_t start = 0, leading = 0, stride = 0;
  unsigned span = 0; ///< the swizzle's span in bytes; 0 for none
};

/// A wgmma descriptor: the swizzle mode in bits 62-63.
MatrixDescriptor decodeWgmmaDescriptor(uint64_t d);

/// The shared memory address of element (mn, k) of an operand: K-major
/// (rows of MN, each one span holding K), or MN-major (rows of K, each
/// span holding MN; further MN in strips `leading` bytes apart); groups
/// of 8 rows are `stride` bytes apart.
uint64_t operandElementAddress(const MatrixDescriptor &d, bool mnMajor, unsigned mn, unsigned k,
                               unsigned bytes);

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_MATRIXDESCRIPTOR_H
