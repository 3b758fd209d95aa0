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
// sliced (after a reduction), transposed, mma.sync and wgmma layouts.
//
// Shared memory tiles take the general form (SharedLayout below): a map
// over GF(2) from the bits of an element's coordinate to the bits of its
// byte offset, where a coordinate bit may set several offset bits (XOR).
// That is what the swizzles TMA and wgmma share are.
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
  /// warps: `contiguous` (a power of two) elements per register group
  /// along the last dimension, lanes along the fastest dimensions, warps
  /// along the slowest; what is left goes to registers, and bits beyond
  /// the value's size are broadcasts.
  static Layout blocked(llvm::ArrayRef<int64_t> shape, unsigned numWarps, unsigned contiguous = 4);

  /// The layout of a reduction's result over `axes` of this one: those
  /// dimensions removed; their register bits disappear and their lane and
  /// warp bits become broadcasts.
  Layout reduced(llvm::ArrayRef<int64_t> axes) const;
  /// The layout of the slice [starts, starts + sizes) of a value of
  /// `logicalShape` in this layout when the slice is a choice of each
  /// thread's registers: along every cut dimension the size is a power of
  /// two, the start a multiple of it, the dimension unpadded, and the
  /// coordinate bits from log2(size) up are register bits (a wgmma
  /// accumulator's 64-row tiles and 8-column blocks). Those register bits
  /// go; nothing moves. nullopt otherwise.
  std::optional<Layout> registerSlice(llvm::ArrayRef<int64_t> starts, llvm::ArrayRef<int64_t> sizes,
                                      llvm::ArrayRef<int64_t> logicalShape) const;
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
  /// The wgmma accumulator (PTX ISA, "Register fragments for wgmma", D of
  /// .m64nNk*) for an m x n tile on `numWarps` warps: each warpgroup of 4
  /// warps holds 64 rows, warp w % 4 rows 16 (w % 4) + [0, 16); within a
  /// warp, lane 4 g + q holds rows g and g + 8 and columns 8 j + 2 q (+1).
  /// Register bits: column 0, row 3, the columns' n8 blocks, then the
  /// row tiles beyond the warpgroups (one wgmma instruction each); so the
  /// registers of row tile t are [t * n / 2, (t + 1) * n / 2), in PTX's
  /// order. m is a multiple of 64 (and of 64 per warpgroup), n a power
  /// of two >= 8, numWarps a multiple of 4.
  static Layout wgmmaAccumulator(int64_t m, int64_t n, unsigned numWarps);
  /// A of wgmma from registers (16-bit elements, an m x k tile): per warp
  /// the mma.m16n8k16 A fragment, warps as for the accumulator; register
  /// bits: column 0, row 3, column 3, then K steps of 16, then row tiles.
  /// k a power of two >= 16.
  static Layout wgmmaOperandA(int64_t m, int64_t k, unsigned numWarps);
  /// A (128, n) value moved to or from Blackwell's tensor memory by
  /// tcgen05.ld/st .32x32b on a warpgroup: thread t holds row t (lanes
  /// row bits 0-4, warps 5-6), its registers the n columns in order. n a
  /// power of two.
  static Layout tensorMemoryRows(int64_t n);
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

/// The shared memory swizzles of TMA (CUtensorMapSwizzle) and wgmma
/// (matrix descriptor bits 62-63): 16-byte chunks permuted within spans of
/// 32, 64 or 128 bytes. The value is the span in bytes (0: no swizzle).
enum class Swizzle : uint8_t { None = 0, B32 = 32, B64 = 64, B128 = 128 };

/// The bytes over which a swizzle permutes chunks (16 for none: a chunk).
unsigned swizzleSpan(Swizzle s);
/// Shared memory byte address `address` as TMA writes to and wgmma reads
/// from it under swizzle `s` (PTX ISA, "Tensor swizzling modes"; CuTe's
/// Swizzle<b, 4, 3>): address bits [4, 4 + b) are XORed with bits
/// [7, 7 + b), b = log2(span / 16). The address is the CTA's shared
/// window address, so the pattern depends on where a buffer starts.
uint64_t swizzleAddress(uint64_t address, Swizzle s);
/// The period of a swizzle's pattern, 8 spans (256, 512, 1024 bytes; 16
/// without one): a swizzled buffer starting at a multiple of it sees the
/// pattern from row 0.
uint64_t swizzlePeriod(Swizzle s);
/// "none", "32B", "64B", "128B".
const char *swizzleName(Swizzle s);

/// Where each element of a tile lives in shared memory: a linear layout
/// over GF(2) from coordinate bits to byte offset bits (Triton's general
/// linear layouts with one output dimension). Bit b of coordinate d sets
/// the offset bits of `bases[d][b]`; the offset of an element is the XOR
/// of the bases of its set coordinate bits. Every dimension is a power of
/// two. Offsets are relative to a buffer aligned to swizzlePeriod().
class SharedLayout {
public:
  std::vector<int64_t> shape;
  unsigned elementBytes = 1;
  Swizzle swizzle = Swizzle::None;
  std::vector<std::vector<uint64_t>> bases;

  unsigned rank() const { return static_cast<unsigned>(shape.size()); }
  /// Bytes the tile occupies.
  int64_t bytes() const;
  /// The byte offset of the element at `coordinate` (in range).
  uint64_t offset(llvm::ArrayRef<int64_t> coordinate) const;
  /// Whether the map sends the elements one-to-one onto the element slots
  /// of [0, bytes()), each element's bytes contiguous.
  bool isValid(std::string *why = nullptr) const;

  /// Row-major and dense, no swizzle.
  static SharedLayout rowMajor(llvm::ArrayRef<int64_t> shape, unsigned elementBytes);
  /// Where TMA puts a box of `shape` (the last dimension innermost) under
  /// `swizzle`: dense row-major offsets, then swizzleAddress. wgmma's
  /// swizzled canonical layouts are this with the innermost dimension
  /// exactly one span (a K-major operand's K, an MN-major one's M or N).
  static SharedLayout tma(llvm::ArrayRef<int64_t> shape, unsigned elementBytes, Swizzle swizzle);
  /// A 2-D tile stored as column strips one swizzle span wide (16 bytes
  /// without a swizzle), one after another, each as TMA writes a box of
  /// (rows, span / elementBytes): Mosaic GPU's tiling (8, span / bytes)
  /// with the row tiles of a strip contiguous. These are the layouts wgmma
  /// reads its SMEM operands in (Wgmma.h). With a span at least the tile's
  /// width, this is tma().
  static SharedLayout strips(int64_t rows, int64_t columns, unsigned elementBytes, Swizzle swizzle);

  bool operator==(const SharedLayout &o) const {
    return shape == o.shape && elementBytes == o.elementBytes && swizzle == o.swizzle &&
           bases == o.bases;
  }
  std::string str() const;
};

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_LAYOUT_H
