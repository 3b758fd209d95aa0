//===- Types.h - Scalar kinds and value words of the SIMT simulator -*- C++ -*-===//
//
// Every element a simulated thread holds is one 64-bit word:
//
//  - integers (i1 ... i64, index) zero-extended from their width: the
//    bits above the width are always 0, so two equal values are equal
//    words; signed ops sign-extend on the way in;
//  - floats as their IEEE bit pattern in the low bits (f16 and bf16 in 16
//    bits, f32 in 32, f64 in 64);
//  - pointers as (allocation, byte offset): the allocation's id in the
//    top 24 bits and a signed 40-bit byte offset below. Pointer
//    arithmetic moves the offset only, so every access knows which
//    allocation it is meant for and can be checked against it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_TYPES_H
#define PK_BACKENDS_CUDA_SIM_TYPES_H

#include <cstdint>
#include <optional>

namespace mlir {
class Type;
}

namespace pk::sim {

/// The element kind of an SSA value (or of a vector's elements).
enum class Kind : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64, Ptr };

inline bool isFloatKind(Kind k) { return k >= Kind::F16 && k <= Kind::F64; }
inline bool isIntKind(Kind k) { return k <= Kind::I64; }

/// The width in bits of an element (pointers: 64).
inline unsigned bitsOf(Kind k) {
  switch (k) {
  case Kind::I1:
    return 1;
  case Kind::I8:
    return 8;
  case Kind::I16:
  case Kind::F16:
  case Kind::BF16:
    return 16;
  case Kind::I32:
  case Kind::F32:
    return 32;
  default:
    return 64;
  }
}

/// Bytes an element takes in memory, as LLVM's data layout stores it
/// (i1: one byte).
inline unsigned storeBytesOf(Kind k) { return k == Kind::I1 ? 1 : bitsOf(k) / 8; }

/// The mask of the bits an integer of `bits` keeps.
inline uint64_t widthMask(unsigned bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

/// A word of an integer of `bits`, sign-extended to 64 bits.
inline int64_t signExtend(uint64_t word, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(word);
  uint64_t sign = uint64_t(1) << (bits - 1);
  return static_cast<int64_t>((word ^ sign) - sign);
}

/// Element kind and lane count of an MLIR type the simulator handles:
/// a scalar, `index` (as i64), a pointer, or a 1-D vector of scalars.
struct ValueType {
  Kind kind = Kind::I64;
  uint32_t width = 1; ///< vector lanes; 1 for a scalar
  bool isVector = false;
  unsigned addressSpace = 0; ///< pointers only
};

/// Classifies `type`; nullopt for types the simulator does not model.
std::optional<ValueType> classify(mlir::Type type);

// Pointer words.
constexpr unsigned kOffsetBits = 40;
constexpr int64_t kMaxOffset = (int64_t(1) << (kOffsetBits - 1)) - 1;
constexpr int64_t kMinOffset = -(int64_t(1) << (kOffsetBits - 1));

inline uint64_t makePointer(uint32_t allocation, int64_t offset) {
  return (uint64_t(allocation) << kOffsetBits) | (static_cast<uint64_t>(offset) & widthMask(kOffsetBits));
}
inline uint32_t pointerAllocation(uint64_t word) { return static_cast<uint32_t>(word >> kOffsetBits); }
inline int64_t pointerOffset(uint64_t word) { return signExtend(word & widthMask(kOffsetBits), kOffsetBits); }

/// A shared memory byte address as TMA writes and wgmma reads it under a
/// swizzle of `span` bytes (0: none): 16-byte chunks permuted within each
/// span, address bits [4, 4 + b) ^= bits [7, 7 + b), b = log2(span / 16)
/// (PTX ISA, "Tensor swizzling modes"). The address counts from shared
/// memory's start.
inline int64_t swizzledAddress(int64_t address, unsigned span) {
  if (span == 0)
    return address;
  int64_t mask = span / 16 - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_TYPES_H
