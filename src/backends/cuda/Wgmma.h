//===- Wgmma.h - Where wgmma reads its shared memory operands ---*- C++ -*-===//
//
// A wgmma operand in shared memory is described to the tensor cores by a
// 64-bit matrix descriptor (PTX ISA, "Matrix Descriptor Format"): a start
// address, a leading and a stride byte offset, and a swizzle mode, read
// against the canonical layouts of the PTX ISA ("Canonical Layouts",
// table of CuTe layouts per major-ness and swizzle). pkc keeps operand
// tiles as SharedLayout::strips of their stored shape; this says which
// descriptor fields that layout has and where each instruction's sub-tile
// starts. Pure arithmetic: the lowering (Wgmma.cpp) and the tests use it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_WGMMA_H
#define PK_BACKENDS_CUDA_WGMMA_H

#include "backends/cuda/Layout.h"

#include "mlir/IR/Builders.h"

#include <cstdint>

namespace pk::gpu {

/// One operand tile of a wgmma in shared memory, stored as
/// SharedLayout::strips(rows, columns): K-major, (mn, k) with K innermost;
/// MN-major, (k, mn) with M or N innermost.
struct WgmmaOperandTile {
  int64_t mn = 0, k = 0;
  unsigned elementBytes = 2;
  Swizzle swizzle = Swizzle::B128;
  bool mnMajor = false;

  int64_t rows() const { return mnMajor ? k : mn; }
  int64_t columns() const { return mnMajor ? mn : k; }
  /// The strips' width in bytes (16 without a swizzle) and size.
  uint64_t span() const { return swizzleSpan(swizzle); }
  uint64_t stripBytes() const { return static_cast<uint64_t>(rows()) * span(); }
  SharedLayout layout() const {
    return SharedLayout::strips(rows(), columns(), elementBytes, swizzle);
  }

  /// The descriptor's leading dimension byte offset: K-major, the next
  /// 16-byte column of core matrices (unswizzled; swizzled layouts do not
  /// use it and the PTX ISA says to encode 1); MN-major, the next strip
  /// (swizzled) or the next 8 rows of K (unswizzled).
  uint64_t leadingByteOffset() const;
  /// The stride dimension byte offset: K-major, the next 8 rows of M or N;
  /// MN-major, the next 8 rows of K (swizzled) or the next 16-byte strip
  /// (unswizzled).
  uint64_t strideByteOffset() const;
  /// The descriptor bits other than the start address: the encoded
  /// offsets and the swizzle mode (base offset 0: tiles start at a
  /// multiple of the swizzle period).
  uint64_t descriptorBits() const;
  /// The byte offset, from the tile's start, of the instruction operand
  /// whose first element is (mn, k): mn a multiple of 64 (or 0), k of the
  /// instruction's K.
  uint64_t instructionOffset(int64_t mn, int64_t k) const;
};

/// matrix-descriptor-encode (PTX ISA): (x & 0x3FFFF) >> 4.
uint64_t encodeDescriptorField(uint64_t bytes);
/// The descriptor's swizzle mode field (bits 62-63): 0 none, 1 128B, 2 64B,
/// 3 32B.
uint64_t descriptorSwizzleMode(Swizzle s);

/// Where a wgmma operand buffer (or a ring of them) starts in shared
/// memory, whatever its swizzle: the period of the widest, 128-byte one.
constexpr int64_t kWgmmaOperandAlignment = 1024;

/// The K of one wgmma instruction: 32 bytes of elements.
inline int64_t wgmmaInstructionK(unsigned elementBytes) { return 32 / elementBytes; }

// Blackwell's tcgen05.mma reads the same tiles, described the same way
// (PTX ISA, "Shared Memory Descriptor" of tcgen05: the fields above, the
// swizzle's 3-bit field at bit 61 holding twice the 2-bit one's value),
// plus a version bit; the K of one instruction is 32 bytes too.

/// The fixed bits 46-48 of a tcgen05 shared memory descriptor (0b001).
constexpr uint64_t kTcgen05DescriptorVersion = uint64_t(1) << 46;

/// The instruction descriptor of tcgen05.mma.kind::f16 with an f32
/// accumulator (PTX ISA, "Instruction descriptor"): D type (bits 4-5),
/// A and B types (7-9, 10-12: 0 f16, 1 bf16), A and B transposed
/// (MN-major, bits 15, 16), N / 8 (bits 17-22) and M / 16 (bits 24-28).
uint32_t tcgen05InstructionDescriptor(int64_t m, int64_t n, bool bf16, bool aMnMajor,
                                      bool bMnMajor);

namespace async {
/// A shared memory matrix descriptor (i64) of the tile at `pointer`
/// (!llvm.ptr<3>): its encoded start address with `bits` or'ed in.
mlir::Value matrixDescriptor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value pointer,
                             uint64_t bits);
/// `descriptor` moved `bytes` (a multiple of 16) further.
mlir::Value advanceDescriptor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value descriptor,
                              uint64_t bytes);
} // namespace async

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_WGMMA_H
