//===- Layout.h - Distributed layouts of block values -----------*- C++ -*-===//
//
// A block value of a kernel is spread over the CTA's threads: each thread
// holds some of its elements in registers. A Layout says which, as a map
// from the bits of (register index, lane, warp) to the bits of an element's
// coordinate over the padded shape (every dimension rounded up to a power
// of two). Each hardware bit sets one coordinate bit or none (a broadcast:
// threads differing in that bit hold the same elements), and each
// coordinate bit is set by exactly one hardware bit. Triton calls these
// linear layouts; ours are the permutation subset, which covers blocked,
// sliced (after a reduction), transposed and mma layouts.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_LAYOUT_H
#define PK_BACKENDS_CUDA_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pk::gpu {

constexpr unsigned kWarpSize = 32;
constexpr unsigned kLaneBits = 5;

/// The coordinate bit a hardware bit sets, or none.
struct Basis {
  int dim = -1;
  int bit = 0;
  bool isNone() const { return dim < 0; }
  static Basis none() { return {}; }
  bool operator==(const Basis &o) const { return dim == o.dim && (dim < 0 || bit == o.bit); }
  bool operator!=(const Basis &o) const { return !(*this == o); }
  /// The attribute encoding: dim * 32 + bit, or -1.
  int64_t encode() const { return dim < 0 ? -1 : dim * 32 + bit; }
  static Basis decode(int64_t v) { return v < 0 ? Basis{} : Basis{int(v / 32), int(v % 32)}; }
};

/// The next power of two >= n (n >= 1).
int64_t paddedExtent(int64_t n);
unsigned log2Exact(int64_t n);

class Layout {
public:
  std::vector<int64_t> shape; ///< padded: powers of two
  std::vector<Basis> regs, lanes, warps;

  unsigned rank() const { return static_cast<unsigned>(shape.size()); }
  int64_t numRegisters() const { return int64_t(1) << regs.size(); }
  unsigned numWarps() const { return 1u << warps.size(); }

  /// The part of the coordinate that register index `k` sets.
  std::vector<int64_t> registerCoordinate(int64_t k) const;
  /// The coordinate of register k held by lane `lane` of warp `warp`.
  std::vector<int64_t> coordinate(int64_t k, unsigned lane, unsigned warp) const;
  /// Whether the mapping covers each coordinate bit exactly once.
  bool isValid(std::string *why = nullptr) const;

  /// The default layout for a value of `shape` (logical) on `numWarps`
  /// warps: 4 contiguous elements per register group along the last
  /// dimension, lanes along the fastest dimensions, warps along the
  /// slowest; what is left goes to registers, and bits beyond the value's
  /// size are broadcasts.
  static Layout blocked(llvm::ArrayRef<int64_t> shape, unsigned numWarps);

  /// The layout of a reduction's result over `axes` of this one: those
  /// dimensions removed; their register bits disappear and their lane and
  /// warp bits become broadcasts.
  Layout reduced(llvm::ArrayRef<int64_t> axes) const;
  /// The layout of a transpose: result dimension i is source dimension
  /// permutation[i]. No data moves.
  Layout transposed(llvm::ArrayRef<int64_t> permutation) const;
  /// The layout that, broadcast along the result dimensions not in `dims`
  /// (and along size-1 source dimensions), gives this one: the source
  /// layout a broadcast_in_dim needs for a register-local broadcast.
  Layout broadcastSource(llvm::ArrayRef<int64_t> sourceShape, llvm::ArrayRef<int64_t> dims) const;
  /// The same bits over a reshaped value, when the reshape only regroups
  /// the row-major bits (no padding involved); nullopt otherwise.
  std::optional<Layout> reshaped(llvm::ArrayRef<int64_t> fromLogical,
                                 llvm::ArrayRef<int64_t> toLogical) const;

  /// The layouts of mma.sync m16n8k16 (f16/bf16 -> f32) on `numWarps`
  /// warps for an (m x k) @ (k x n) product of padded sizes m >= 16,
  /// n >= 8, k >= 16: the PTX fragment layouts of A, B and the accumulator
  /// C within a warp, warps spread over the M and N tiles (alternating),
  /// and the remaining tiles in registers.
  struct Mma;
  static Mma mma(int64_t m, int64_t n, int64_t k, unsigned numWarps);
  /// The position of `basis` among the register bits, or -1.
  int registerBit(const Basis &basis) const;

  bool operator==(const Layout &o) const {
    return shape == o.shape && regs == o.regs && lanes == o.lanes && warps == o.warps;
  }
  bool operator!=(const Layout &o) const { return !(*this == o); }
  std::string str() const;
};

struct Layout::Mma {
  Layout a, b, c;
};

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_LAYOUT_H
