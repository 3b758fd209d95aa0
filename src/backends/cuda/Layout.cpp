//===- Layout.cpp ---------------------------------------------------------===//
#include "backends/cuda/Layout.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <set>

namespace pk::gpu {

int64_t paddedExtent(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

unsigned log2Exact(int64_t n) {
  unsigned bits = 0;
  while ((int64_t(1) << bits) < n)
    ++bits;
  return bits;
}

namespace {

void setBit(std::vector<int64_t> &coordinate, const Basis &b) {
  if (!b.isNone())
    coordinate[b.dim] |= int64_t(1) << b.bit;
}

std::string basisText(const Basis &b) {
  return b.isNone() ? "*" : "d" + std::to_string(b.dim) + "b" + std::to_string(b.bit);
}

std::string listText(const std::vector<Basis> &bases) {
  std::string s = "[";
  for (size_t i = 0; i < bases.size(); ++i)
    s += (i ? ", " : "") + basisText(bases[i]);
  return s + "]";
}

} // namespace

std::vector<int64_t> Layout::registerCoordinate(int64_t k) const {
  std::vector<int64_t> c(rank(), 0);
  for (size_t i = 0; i < regs.size(); ++i)
    if ((k >> i) & 1)
      setBit(c, regs[i]);
  return c;
}

std::vector<int64_t> Layout::coordinate(int64_t k, unsigned lane, unsigned warp) const {
  std::vector<int64_t> c = registerCoordinate(k);
  for (size_t i = 0; i < lanes.size(); ++i)
    if ((lane >> i) & 1)
      setBit(c, lanes[i]);
  for (size_t i = 0; i < warps.size(); ++i)
    if ((warp >> i) & 1)
      setBit(c, warps[i]);
  return c;
}

bool Layout::isValid(std::string *why) const {
  auto fail = [&](const std::string &message) {
    if (why)
      *why = message;
    return false;
  };
  std::set<std::pair<int, int>> seen;
  for (const std::vector<Basis> *list : {&regs, &lanes, &warps})
    for (const Basis &b : *list) {
      if (b.isNone())
        continue;
      if (b.dim >= static_cast<int>(rank()))
        return fail("basis " + basisText(b) + " names a dimension past the rank");
      if ((int64_t(1) << b.bit) >= shape[b.dim])
        return fail("basis " + basisText(b) + " is past the padded size " +
                    std::to_string(shape[b.dim]));
      if (!seen.insert({b.dim, b.bit}).second)
        return fail("coordinate bit " + basisText(b) + " is set twice");
    }
  for (unsigned d = 0; d < rank(); ++d) {
    if (shape[d] < 1 || paddedExtent(shape[d]) != shape[d])
      return fail("padded size " + std::to_string(shape[d]) + " is not a power of two");
    for (unsigned b = 0; b < log2Exact(shape[d]); ++b)
      if (!seen.count({static_cast<int>(d), static_cast<int>(b)}))
        return fail("coordinate bit d" + std::to_string(d) + "b" + std::to_string(b) + " is not set");
  }
  if (lanes.size() != kLaneBits)
    return fail("a layout has 5 lane bits");
  return true;
}

Layout Layout::blocked(llvm::ArrayRef<int64_t> logical, unsigned numWarps, unsigned contiguous) {
  Layout l;
  unsigned r = static_cast<unsigned>(logical.size());
  std::vector<unsigned> bits(r), used(r, 0);
  for (unsigned d = 0; d < r; ++d) {
    l.shape.push_back(paddedExtent(logical[d]));
    bits[d] = log2Exact(l.shape[d]);
  }
  auto take = [&](unsigned d) { return Basis{static_cast<int>(d), static_cast<int>(used[d]++)}; };
  // Up to `contiguous` elements of the last dimension per register group:
  // one 16-byte access when it is 16 bytes' worth.
  if (r > 0)
    for (unsigned i = 0; i < log2Exact(contiguous) && used[r - 1] < bits[r - 1]; ++i)
      l.regs.push_back(take(r - 1));
  // Lanes along the fastest dimensions: a warp reads contiguous memory.
  for (unsigned i = 0; i < kLaneBits; ++i) {
    Basis b;
    for (unsigned d = r; d-- > 0;)
      if (used[d] < bits[d]) {
        b = take(d);
        break;
      }
    l.lanes.push_back(b);
  }
  // Warps along the slowest dimensions: rows stay within a warp, so row
  // reductions need no shared memory.
  for (unsigned w = 1; w < numWarps; w <<= 1) {
    Basis b;
    for (unsigned d = 0; d < r; ++d)
      if (used[d] < bits[d]) {
        b = take(d);
        break;
      }
    l.warps.push_back(b);
  }
  for (unsigned d = r; d-- > 0;)
    while (used[d] < bits[d])
      l.regs.push_back(take(d));
  return l;
}

Layout Layout::reduced(llvm::ArrayRef<int64_t> axes) const {
  std::vector<int> newDim(rank(), -1);
  Layout out;
  for (unsigned d = 0, n = 0; d < rank(); ++d)
    if (!llvm::is_contained(axes, static_cast<int64_t>(d))) {
      newDim[d] = static_cast<int>(n++);
      out.shape.push_back(shape[d]);
    }
  auto renumber = [&](const Basis &b) {
    return b.isNone() || newDim[b.dim] < 0 ? Basis::none() : Basis{newDim[b.dim], b.bit};
  };
  for (const Basis &b : regs)
    if (b.isNone() || newDim[b.dim] >= 0)
      out.regs.push_back(renumber(b));
  for (const Basis &b : lanes)
    out.lanes.push_back(renumber(b));
  for (const Basis &b : warps)
    out.warps.push_back(renumber(b));
  return out;
}

std::optional<Layout> Layout::registerSlice(llvm::ArrayRef<int64_t> starts,
                                            llvm::ArrayRef<int64_t> sizes,
                                            llvm::ArrayRef<int64_t> logicalShape) const {
  Layout out = *this;
  for (unsigned d = 0; d < rank(); ++d) {
    if (sizes[d] == logicalShape[d])
      continue;
    int64_t size = sizes[d];
    if (size <= 0 || (size & (size - 1)) || starts[d] % size || logicalShape[d] != shape[d])
      return std::nullopt;
    int first = static_cast<int>(log2Exact(size));
    for (int b = first; b < static_cast<int>(log2Exact(shape[d])); ++b)
      if (registerBit({static_cast<int>(d), b}) < 0)
        return std::nullopt;
    out.shape[d] = size;
    llvm::erase_if(out.regs,
                   [&](const Basis &r) { return r.dim == static_cast<int>(d) && r.bit >= first; });
  }
  return out;
}

Layout Layout::transposed(llvm::ArrayRef<int64_t> permutation) const {
  std::vector<int> inverse(rank());
  Layout out;
  for (unsigned i = 0; i < permutation.size(); ++i) {
    inverse[permutation[i]] = static_cast<int>(i);
    out.shape.push_back(shape[permutation[i]]);
  }
  auto renumber = [&](const Basis &b) {
    return b.isNone() ? b : Basis{inverse[b.dim], b.bit};
  };
  for (const Basis &b : regs)
    out.regs.push_back(renumber(b));
  for (const Basis &b : lanes)
    out.lanes.push_back(renumber(b));
  for (const Basis &b : warps)
    out.warps.push_back(renumber(b));
  return out;
}

Layout Layout::broadcastSource(llvm::ArrayRef<int64_t> sourceShape,
                               llvm::ArrayRef<int64_t> dims) const {
  // Result dimension -> source dimension, or -1 where the value is
  // broadcast (a new dimension, or a size-1 source dimension).
  std::vector<int> sourceDim(rank(), -1);
  Layout out;
  for (unsigned i = 0; i < dims.size(); ++i) {
    out.shape.push_back(paddedExtent(sourceShape[i]));
    if (sourceShape[i] != 1)
      sourceDim[dims[i]] = static_cast<int>(i);
  }
  auto renumber = [&](const Basis &b) {
    return b.isNone() || sourceDim[b.dim] < 0 ? Basis::none() : Basis{sourceDim[b.dim], b.bit};
  };
  for (const Basis &b : regs)
    if (!b.isNone() && sourceDim[b.dim] >= 0)
      out.regs.push_back(renumber(b));
  for (const Basis &b : lanes)
    out.lanes.push_back(renumber(b));
  for (const Basis &b : warps)
    out.warps.push_back(renumber(b));
  return out;
}

std::optional<Layout> Layout::reshaped(llvm::ArrayRef<int64_t> fromLogical,
                                       llvm::ArrayRef<int64_t> toLogical) const {
  for (llvm::ArrayRef<int64_t> s : {fromLogical, toLogical})
    for (int64_t d : s)
      if (paddedExtent(d) != d)
        return std::nullopt;
  // Bit b of dimension d is bit (b + bits of the faster dimensions) of the
  // row-major linear index, in both shapes.
  auto linearBit = [&](llvm::ArrayRef<int64_t> s, const Basis &b) {
    unsigned offset = 0;
    for (unsigned e = b.dim + 1; e < s.size(); ++e)
      offset += log2Exact(s[e]);
    return offset + b.bit;
  };
  auto fromLinear = [&](unsigned bit) {
    for (unsigned d = static_cast<unsigned>(toLogical.size()); d-- > 0;) {
      unsigned n = log2Exact(toLogical[d]);
      if (bit < n)
        return Basis{static_cast<int>(d), static_cast<int>(bit)};
      bit -= n;
    }
    return Basis::none();
  };
  Layout out;
  out.shape.assign(toLogical.begin(), toLogical.end());
  auto convert = [&](const Basis &b) { return b.isNone() ? b : fromLinear(linearBit(fromLogical, b)); };
  for (const Basis &b : regs)
    out.regs.push_back(convert(b));
  for (const Basis &b : lanes)
    out.lanes.push_back(convert(b));
  for (const Basis &b : warps)
    out.warps.push_back(convert(b));
  return out;
}

Layout::Mma Layout::mma(int64_t m, int64_t n, int64_t k, unsigned numWarps) {
  auto bits = [](int64_t v) { return static_cast<int>(log2Exact(v)); };
  int mTiles = bits(m) - 4, nTiles = bits(n) - 3, kTiles = bits(k) - 4;
  Mma out;
  out.a.shape = {m, k};
  out.b.shape = {k, n};
  out.c.shape = {m, n};
  // Within a warp (PTX ISA, mma.m16n8k16): lane = 4 * group + thread in
  // group. C: row = group (+8), col = 2 * thread (+1). A: row = group (+8),
  // col = 2 * thread (+1) (+8). B: k = 2 * thread (+1) (+8), n = group.
  out.c.regs = {{1, 0}, {0, 3}};
  out.c.lanes = {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}};
  out.a.regs = {{1, 0}, {0, 3}, {1, 3}};
  out.a.lanes = {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}};
  out.b.regs = {{0, 0}, {0, 3}};
  out.b.lanes = {{0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
  // Warps over the tiles, alternating M and N.
  int nextM = 0, nextN = 0;
  for (unsigned w = 1; w < numWarps; w <<= 1) {
    bool takeM = nextM < mTiles && (nextM <= nextN || nextN >= nTiles);
    if (takeM) {
      Basis row{0, 4 + nextM++};
      out.c.warps.push_back(row);
      out.a.warps.push_back(row);
      out.b.warps.push_back(Basis::none());
    } else if (nextN < nTiles) {
      Basis column{1, 3 + nextN++};
      out.c.warps.push_back(column);
      out.b.warps.push_back(column);
      out.a.warps.push_back(Basis::none());
    } else {
      out.c.warps.push_back(Basis::none());
      out.a.warps.push_back(Basis::none());
      out.b.warps.push_back(Basis::none());
    }
  }
  // The warp's remaining tiles, then the K steps, in registers.
  for (int t = nextM; t < mTiles; ++t) {
    out.c.regs.push_back({0, 4 + t});
    out.a.regs.push_back({0, 4 + t});
  }
  for (int t = nextN; t < nTiles; ++t) {
    out.c.regs.push_back({1, 3 + t});
    out.b.regs.push_back({1, 3 + t});
  }
  for (int t = 0; t < kTiles; ++t) {
    out.a.regs.push_back({1, 4 + t});
    out.b.regs.push_back({0, 4 + t});
  }
  return out;
}

namespace {

/// The register, lane and warp bits shared by the wgmma fragments of A
/// and D: lane 4 g + q, warp w % 4 of a warpgroup owns rows 16 (w % 4) +
/// [0, 16), and warpgroups take the next 64-row tiles.
Layout wgmmaFragment(int64_t m, int64_t columns, unsigned numWarps) {
  assert(numWarps % 4 == 0 && m % 64 == 0 && "wgmma needs whole warpgroups and 64-row tiles");
  Layout l;
  l.shape = {m, columns};
  l.lanes = {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}};
  l.warps = {{0, 4}, {0, 5}};
  int rowBits = static_cast<int>(log2Exact(m));
  int nextRow = 6;
  for (unsigned w = 4; w < numWarps; w <<= 1)
    l.warps.push_back(nextRow < rowBits ? Basis{0, nextRow++} : Basis::none());
  l.regs = {{1, 0}, {0, 3}};
  return l;
}

void appendRowTiles(Layout &l, int64_t m, int firstRowBit) {
  for (int b = firstRowBit; b < static_cast<int>(log2Exact(m)); ++b)
    l.regs.push_back({0, b});
}

} // namespace

Layout Layout::wgmmaAccumulator(int64_t m, int64_t n, unsigned numWarps) {
  Layout l = wgmmaFragment(m, n, numWarps);
  for (int b = 3; b < static_cast<int>(log2Exact(n)); ++b)
    l.regs.push_back({1, b});
  appendRowTiles(l, m, 6 + static_cast<int>(log2Exact(numWarps / 4)));
  return l;
}

Layout Layout::wgmmaOperandA(int64_t m, int64_t k, unsigned numWarps) {
  Layout l = wgmmaFragment(m, k, numWarps);
  for (int b = 3; b < static_cast<int>(log2Exact(k)); ++b)
    l.regs.push_back({1, b});
  appendRowTiles(l, m, 6 + static_cast<int>(log2Exact(numWarps / 4)));
  return l;
}

Layout Layout::tensorMemoryRows(int64_t n) {
  Layout l;
  l.shape = {128, n};
  for (int b = 0; b < static_cast<int>(log2Exact(n)); ++b)
    l.regs.push_back({1, b});
  for (int b = 0; b < 5; ++b)
    l.lanes.push_back({0, b});
  l.warps = {{0, 5}, {0, 6}};
  return l;
}

int Layout::registerBit(const Basis &basis) const {
  for (size_t r = 0; r < regs.size(); ++r)
    if (regs[r] == basis)
      return static_cast<int>(r);
  return -1;
}

std::string Layout::str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "], regs = " + listText(regs) + ", lanes = " + listText(lanes) +
         ", warps = " + listText(warps);
}

unsigned swizzleSpan(Swizzle s) { return s == Swizzle::None ? 16 : static_cast<unsigned>(s); }

uint64_t swizzleAddress(uint64_t address, Swizzle s) {
  unsigned b = log2Exact(swizzleSpan(s) / 16);
  uint64_t mask = (uint64_t(1) << b) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

uint64_t swizzlePeriod(Swizzle s) { return s == Swizzle::None ? 16 : 8 * swizzleSpan(s); }

const char *swizzleName(Swizzle s) {
  switch (s) {
  case Swizzle::None:
    return "none";
  case Swizzle::B32:
    return "32B";
  case Swizzle::B64:
    return "64B";
  case Swizzle::B128:
    return "128B";
  }
  return "?";
}

int64_t SharedLayout::bytes() const {
  int64_t n = elementBytes;
  for (int64_t d : shape)
    n *= d;
  return n;
}

uint64_t SharedLayout::offset(llvm::ArrayRef<int64_t> coordinate) const {
  uint64_t out = 0;
  for (unsigned d = 0; d < rank(); ++d)
    for (size_t b = 0; b < bases[d].size(); ++b)
      if ((coordinate[d] >> b) & 1)
        out ^= bases[d][b];
  return out;
}

bool SharedLayout::isValid(std::string *why) const {
  auto fail = [&](const std::string &message) {
    if (why)
      *why = message;
    return false;
  };
  if (elementBytes == 0 || paddedExtent(elementBytes) != elementBytes)
    return fail("element size " + std::to_string(elementBytes) + " is not a power of two");
  if (bases.size() != shape.size())
    return fail("one list of bases per dimension");
  unsigned low = log2Exact(elementBytes), high = log2Exact(bytes());
  // The bases must be independent and span exactly the offset bits
  // [low, high): then the map is one-to-one onto the element slots.
  std::vector<uint64_t> reduced;
  for (unsigned d = 0; d < rank(); ++d) {
    if (shape[d] < 1 || paddedExtent(shape[d]) != shape[d])
      return fail("dimension " + std::to_string(d) + " is not a power of two");
    if (bases[d].size() != log2Exact(shape[d]))
      return fail("dimension " + std::to_string(d) + " needs one basis per bit");
    for (uint64_t basis : bases[d]) {
      if (basis & ((uint64_t(1) << low) - 1))
        return fail("a basis moves an element by less than its size");
      if (basis >> high)
        return fail("a basis reaches past the tile's bytes");
      uint64_t v = basis;
      for (uint64_t r : reduced)
        v = std::min(v, v ^ r);
      if (!v)
        return fail("the bases are not independent: two elements share an offset");
      reduced.push_back(v);
      std::sort(reduced.rbegin(), reduced.rend());
    }
  }
  return true;
}

SharedLayout SharedLayout::rowMajor(llvm::ArrayRef<int64_t> shape, unsigned elementBytes) {
  return tma(shape, elementBytes, Swizzle::None);
}

SharedLayout SharedLayout::tma(llvm::ArrayRef<int64_t> shape, unsigned elementBytes,
                               Swizzle swizzle) {
  SharedLayout l;
  l.shape.assign(shape.begin(), shape.end());
  l.elementBytes = elementBytes;
  l.swizzle = swizzle;
  l.bases.resize(shape.size());
  // Dense row-major: bit b of dimension d is bit b of its stride. The
  // swizzle is linear over GF(2), so it maps each basis on its own.
  uint64_t stride = elementBytes;
  for (unsigned d = static_cast<unsigned>(shape.size()); d-- > 0;) {
    for (unsigned b = 0; b < log2Exact(shape[d]); ++b)
      l.bases[d].push_back(swizzleAddress(stride << b, swizzle));
    stride *= static_cast<uint64_t>(shape[d]);
  }
  return l;
}

SharedLayout SharedLayout::strips(int64_t rows, int64_t columns, unsigned elementBytes,
                                  Swizzle swizzle) {
  // Without a swizzle the strips are 16 bytes wide: wgmma's unswizzled
  // canonical layouts are made of 8 x 16-byte core matrices.
  int64_t stripColumns = std::min<int64_t>(columns, swizzleSpan(swizzle) / elementBytes);
  SharedLayout l = tma({rows, stripColumns}, elementBytes, swizzle);
  l.shape[1] = columns;
  // Column bits beyond a strip select the strip: whole strips, in order.
  uint64_t stripBytes = static_cast<uint64_t>(rows * stripColumns) * elementBytes;
  for (int64_t s = 1; s < columns / stripColumns; s <<= 1)
    l.bases[1].push_back(stripBytes * static_cast<uint64_t>(s));
  return l;
}

std::string SharedLayout::str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  s +=
      "] x " + std::to_string(elementBytes) + " B, swizzle " + swizzleName(swizzle) + ", bases = [";
  for (size_t d = 0; d < bases.size(); ++d) {
    s += d ? ", [" : "[";
    for (size_t b = 0; b < bases[d].size(); ++b)
      s += (b ? ", " : "") + std::to_string(bases[d][b]);
    s += "]";
  }
  return s + "]";
}

} // namespace pk::gpu
