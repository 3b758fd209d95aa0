//===- LayoutTest.cpp - Layouts and tensor core descriptors ---------------===//
#include "backends/cuda/Layout.h"
#include "backends/cuda/Wgmma.h"

#include <gtest/gtest.h>

#include <map>

using pk::gpu::Basis;
using pk::gpu::kTcgen05DescriptorVersion;
using pk::gpu::Layout;
using pk::gpu::Swizzle;
using pk::gpu::tcgen05InstructionDescriptor;
using pk::gpu::WgmmaOperandTile;

namespace {

/// How many (register, lane, warp) triples hold each padded coordinate.
std::map<std::vector<int64_t>, int> holders(const Layout &l) {
  std::map<std::vector<int64_t>, int> count;
  for (int64_t k = 0; k < l.numRegisters(); ++k)
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned warp = 0; warp < l.numWarps(); ++warp)
        ++count[l.coordinate(k, lane, warp)];
  return count;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Every padded element is held the same number of times (the
/// replication), and nothing outside the padded shape is.
void expectCovers(const Layout &l) {
  std::string why;
  ASSERT_TRUE(l.isValid(&why)) << l.str() << ": " << why;
  auto count = holders(l);
  EXPECT_EQ(static_cast<int64_t>(count.size()), product(l.shape)) << l.str();
  int64_t threads = 32 * l.numWarps() * l.numRegisters();
  for (const auto &[c, n] : count) {
    for (size_t d = 0; d < c.size(); ++d)
      EXPECT_LT(c[d], l.shape[d]) << l.str();
    EXPECT_EQ(n, threads / product(l.shape)) << l.str();
  }
}

TEST(Layout, BlockedCoversEveryShape) {
  for (unsigned warps : {1u, 2u, 4u, 8u})
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{1}, {3}, {128}, {1024}, {8, 256}, {6, 5}, {128, 128}, {2, 3, 64}, {1, 1},
          {16, 8}, {256, 1}})
      expectCovers(Layout::blocked(shape, warps));
}

TEST(Layout, BlockedKeepsFourContiguousElementsAndWarpRows) {
  Layout l = Layout::blocked({8, 128}, 4);
  EXPECT_EQ(l.shape, (std::vector<int64_t>{8, 128}));
  ASSERT_GE(l.regs.size(), 2u);
  EXPECT_EQ(l.regs[0], (Basis{1, 0}));
  EXPECT_EQ(l.regs[1], (Basis{1, 1}));
  EXPECT_EQ(l.lanes[0], (Basis{1, 2}));
  EXPECT_EQ(l.warps[0], (Basis{0, 0})); // warps split the rows
  // Lane 1 of warp 0 holds columns 4..7 of row 0 in registers 0..3.
  EXPECT_EQ(l.coordinate(0, 1, 0), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(l.coordinate(3, 1, 0), (std::vector<int64_t>{0, 7}));
}

TEST(Layout, NonPowerOfTwoShapesArePadded) {
  Layout l = Layout::blocked({6, 5}, 4);
  EXPECT_EQ(l.shape, (std::vector<int64_t>{8, 8}));
}

TEST(Layout, ReducedDropsTheAxis) {
  Layout l = Layout::blocked({8, 256}, 4);
  Layout r = l.reduced({1});
  expectCovers(r);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{8}));
  for (const Basis &b : r.lanes)
    EXPECT_TRUE(b.isNone()); // the row was spread over the lanes
  // Each thread keeps the rows it had.
  for (unsigned warp = 0; warp < 4; ++warp)
    for (int64_t k = 0; k < l.numRegisters(); ++k) {
      int64_t row = l.coordinate(k, 5, warp)[0];
      bool found = false;
      for (int64_t j = 0; j < r.numRegisters(); ++j)
        found |= r.coordinate(j, 5, warp)[0] == row;
      EXPECT_TRUE(found);
    }
}

TEST(Layout, TransposeRenamesDimensions) {
  Layout l = Layout::blocked({16, 64}, 4);
  Layout t = l.transposed({1, 0});
  expectCovers(t);
  for (int64_t k = 0; k < l.numRegisters(); ++k)
    for (unsigned lane : {0u, 7u, 31u}) {
      std::vector<int64_t> a = l.coordinate(k, lane, 2), b = t.coordinate(k, lane, 2);
      EXPECT_EQ(a[0], b[1]);
      EXPECT_EQ(a[1], b[0]);
    }
}

TEST(Layout, BroadcastSourceIsTheReducedLayout) {
  Layout l = Layout::blocked({8, 256}, 4);
  // (8,) -> (8, 256) along dims [0] and (8, 1) -> (8, 256) along [0, 1].
  EXPECT_EQ(l.broadcastSource({8}, {0}), l.reduced({1}));
  Layout keepdims = l.broadcastSource({8, 1}, {0, 1});
  EXPECT_EQ(keepdims.shape, (std::vector<int64_t>{8, 1}));
  expectCovers(keepdims);
}

TEST(Layout, ReshapeRegroupsRowMajorBits) {
  Layout l = Layout::blocked({4, 64}, 4);
  std::optional<Layout> r = l.reshaped({4, 64}, {256});
  ASSERT_TRUE(r.has_value());
  expectCovers(*r);
  for (int64_t k = 0; k < l.numRegisters(); ++k)
    for (unsigned lane : {0u, 9u, 30u})
      for (unsigned warp = 0; warp < 4; ++warp) {
        std::vector<int64_t> a = l.coordinate(k, lane, warp);
        EXPECT_EQ(r->coordinate(k, lane, warp)[0], a[0] * 64 + a[1]);
      }
  EXPECT_FALSE(Layout::blocked({3, 64}, 4).reshaped({3, 64}, {192}).has_value());
}

TEST(Layout, InvalidLayoutsAreRejected) {
  Layout l = Layout::blocked({8, 8}, 1);
  l.regs.push_back(l.regs.front()); // a bit set twice
  EXPECT_FALSE(l.isValid());
  Layout missing = Layout::blocked({8, 8}, 1);
  missing.regs.pop_back();
  EXPECT_FALSE(missing.isValid());
}

} // namespace

namespace {

TEST(Layout, MmaLayoutsCoverTheirOperands) {
  for (unsigned warps : {1u, 2u, 4u, 8u})
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{16, 8, 16}, {64, 64, 32},
                           {128, 128, 64}, {16, 256, 16}, {256, 8, 128}}) {
      Layout::Mma mma = Layout::mma(m, n, k, warps);
      expectCovers(mma.a);
      expectCovers(mma.b);
      expectCovers(mma.c);
    }
}

TEST(Layout, MmaFragmentsFollowThePtxIsa) {
  // mma.m16n8k16: lane 5 is group 1, thread 1 of its group.
  Layout::Mma mma = Layout::mma(16, 8, 16, 1);
  EXPECT_EQ(mma.c.coordinate(0, 5, 0), (std::vector<int64_t>{1, 2}));  // c0: (group, 2 t)
  EXPECT_EQ(mma.c.coordinate(3, 5, 0), (std::vector<int64_t>{9, 3}));  // c3: (group + 8, 2 t + 1)
  EXPECT_EQ(mma.a.coordinate(6, 5, 0), (std::vector<int64_t>{9, 10})); // a6: (group + 8, 2 t + 8)
  EXPECT_EQ(mma.b.coordinate(3, 5, 0), (std::vector<int64_t>{11, 1})); // b3: (2 t + 9, group)
}

} // namespace

namespace {

using pk::gpu::SharedLayout;
using pk::gpu::Swizzle;

// Hand-computed from the PTX ISA's swizzle modes: 16-byte chunk c of a
// 128-byte row r lands at chunk c ^ (r % 8) (128B); with 64-byte rows the
// chunk index XORs (r / 2) % 4 (64B); with 32-byte rows, (r / 4) % 2 (32B).
TEST(SharedLayout, SwizzledAddressesFollowThePtxIsa) {
  // 128B: bf16 rows of 64 elements.
  SharedLayout l128 = SharedLayout::tma({64, 64}, 2, Swizzle::B128);
  EXPECT_EQ(l128.offset({0, 0}), 0u);
  EXPECT_EQ(l128.offset({1, 0}), 144u);   // row 1: chunk 0 -> 1
  EXPECT_EQ(l128.offset({5, 19}), 758u);  // chunk 2 ^ 5 = 7: 640 + 112 + 6
  EXPECT_EQ(l128.offset({9, 63}), 1262u); // chunk 7 ^ 1 = 6: 1152 + 96 + 14
  EXPECT_EQ(l128.offset({8, 8}), 1040u);  // the pattern restarts every 8 rows
  // 64B: f32 rows of 16 elements.
  SharedLayout l64 = SharedLayout::tma({16, 16}, 4, Swizzle::B64);
  EXPECT_EQ(l64.offset({1, 0}), 64u);   // rows 0 and 1 keep their chunks
  EXPECT_EQ(l64.offset({2, 0}), 144u);  // row 2: chunk 0 -> 1
  EXPECT_EQ(l64.offset({3, 5}), 196u);  // chunk 1 ^ 1 = 0: 192 + 4
  EXPECT_EQ(l64.offset({6, 15}), 396u); // chunk 3 ^ 3 = 0: 384 + 12
  // 32B: 8-bit rows of 32 elements.
  SharedLayout l32 = SharedLayout::tma({16, 32}, 1, Swizzle::B32);
  EXPECT_EQ(l32.offset({3, 17}), 113u); // rows 0..3 keep their chunks
  EXPECT_EQ(l32.offset({4, 1}), 145u);  // row 4: chunk 0 -> 1
  EXPECT_EQ(l32.offset({5, 20}), 164u); // chunk 1 ^ 1 = 0: 160 + 4
  // No swizzle: row-major.
  EXPECT_EQ(SharedLayout::tma({4, 8}, 4, Swizzle::None).offset({3, 5}), 116u);
}

TEST(SharedLayout, SwizzleAddressIsAnXorOfChunkAndLineBits) {
  EXPECT_EQ(pk::gpu::swizzleAddress(0x80, Swizzle::B128), 0x90u);
  EXPECT_EQ(pk::gpu::swizzleAddress(0x3f0, Swizzle::B128), 0x380u); // chunk 7 ^ 7
  EXPECT_EQ(pk::gpu::swizzleAddress(0x400 + 0x80, Swizzle::B128), 0x490u);
  EXPECT_EQ(pk::gpu::swizzleAddress(0x080, Swizzle::B64), 0x090u); // bit 7 -> bit 4
  EXPECT_EQ(pk::gpu::swizzleAddress(0x100, Swizzle::B64), 0x120u); // bit 8 -> bit 5
  EXPECT_EQ(pk::gpu::swizzleAddress(0x200, Swizzle::B64), 0x200u); // bit 9 is past 64B's lines
  EXPECT_EQ(pk::gpu::swizzleAddress(0x280, Swizzle::B32), 0x290u); // bit 7 -> bit 4 only
  EXPECT_EQ(pk::gpu::swizzleAddress(0x280, Swizzle::None), 0x280u);
  EXPECT_EQ(pk::gpu::swizzlePeriod(Swizzle::B128), 1024u);
  EXPECT_EQ(pk::gpu::swizzlePeriod(Swizzle::B32), 256u);
}

TEST(SharedLayout, TilesAreOneToOne) {
  for (Swizzle s : {Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128})
    for (unsigned bytes : {1u, 2u, 4u})
      for (auto [rows, columns] :
           {std::pair<int64_t, int64_t>{8, 128}, {64, 64}, {128, 32}, {16, 256}}) {
        SharedLayout l = SharedLayout::strips(rows, columns, bytes, s);
        std::string why;
        ASSERT_TRUE(l.isValid(&why)) << l.str() << ": " << why;
        std::vector<int> seen(static_cast<size_t>(l.bytes()), 0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < columns; ++c) {
            uint64_t o = l.offset({r, c});
            ASSERT_LT(o, seen.size());
            ASSERT_EQ(o % bytes, 0u);
            ++seen[o];
          }
        for (size_t o = 0; o < seen.size(); o += bytes)
          ASSERT_EQ(seen[o], 1) << l.str() << " at byte " << o;
      }
}

TEST(SharedLayout, StripsStackSpanWideTiles) {
  // bf16 64 x 128 under 128B: two 64 x 64 strips of 8 KiB; element (r, c)
  // of the second strip sits where (r, c - 64) of the first does, 8192
  // bytes on.
  SharedLayout l = SharedLayout::strips(64, 128, 2, Swizzle::B128);
  SharedLayout strip = SharedLayout::tma({64, 64}, 2, Swizzle::B128);
  EXPECT_EQ(l.offset({3, 70}), 8192 + strip.offset({3, 6}));
  EXPECT_EQ(l.offset({63, 127}), 8192 + strip.offset({63, 63}));
  EXPECT_EQ(l.offset({10, 20}), strip.offset({10, 20}));
  // Without a swizzle the strips are 16 bytes: 8 x 16-byte core matrices.
  SharedLayout plain = SharedLayout::strips(16, 32, 2, Swizzle::None);
  EXPECT_EQ(plain.offset({0, 8}), 16u * 16);    // the second strip
  EXPECT_EQ(plain.offset({9, 3}), 9u * 16 + 6); // rows 16 bytes apart
  EXPECT_EQ(plain.offset({15, 31}), 3u * 256 + 15 * 16 + 14);
}

TEST(SharedLayout, InvalidLayoutsAreRejected) {
  SharedLayout l = SharedLayout::tma({8, 64}, 2, Swizzle::B128);
  l.bases[0][1] = l.bases[0][0]; // two rows on one offset
  EXPECT_FALSE(l.isValid());
  SharedLayout misaligned = SharedLayout::rowMajor({8, 8}, 4);
  misaligned.bases[1][0] = 2; // half an element
  EXPECT_FALSE(misaligned.isValid());
}

// The wgmma fragments, from the PTX ISA's figures for .m64nNk16: lane
// 4 g + q of warp w holds D rows 16 w + g (+ 8), columns 8 j + 2 q (+ 1),
// register 4 j + 2 h + e being (row + 8 h, column + e).
TEST(Layout, WgmmaAccumulatorFollowsThePtxIsa) {
  Layout d = Layout::wgmmaAccumulator(64, 64, 4);
  expectCovers(d);
  EXPECT_EQ(d.numRegisters(), 32); // n / 2 f32 registers per thread
  // Lane 13 = 4 * 3 + 1 of warp 2, register 4 * 5 + 2 + 1 = 23.
  EXPECT_EQ(d.coordinate(23, 13, 2), (std::vector<int64_t>{32 + 3 + 8, 40 + 2 + 1}));
  EXPECT_EQ(d.coordinate(0, 0, 0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(d.coordinate(1, 1, 3), (std::vector<int64_t>{48, 3}));
  // Two warpgroups: the second holds rows 64..127.
  Layout two = Layout::wgmmaAccumulator(128, 128, 8);
  expectCovers(two);
  EXPECT_EQ(two.coordinate(0, 0, 5), (std::vector<int64_t>{80, 0}));
  // One warpgroup, 128 rows: the second row tile follows the first's
  // n / 2 registers.
  Layout tall = Layout::wgmmaAccumulator(128, 32, 4);
  expectCovers(tall);
  EXPECT_EQ(tall.coordinate(16, 0, 0), (std::vector<int64_t>{64, 0}));
  EXPECT_EQ(tall.coordinate(16 + 7, 5, 1), (std::vector<int64_t>{64 + 16 + 1 + 8, 8 + 2 + 1}));
}

// tcgen05.ld / st .32x32b on a warpgroup: warp w reaches TMEM lanes 32 w
// to 32 w + 31, lane l of it lane 32 w + l, and its registers are the
// columns in order (PTX ISA, "Matrix fragments for .32x32b").
TEST(Layout, TensorMemoryRowsFollowThePtxIsa) {
  Layout rows = Layout::tensorMemoryRows(64);
  expectCovers(rows);
  EXPECT_EQ(rows.numRegisters(), 64);
  EXPECT_EQ(rows.coordinate(0, 0, 0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(rows.coordinate(37, 5, 2), (std::vector<int64_t>{64 + 5, 37}));
  EXPECT_EQ(rows.coordinate(63, 31, 3), (std::vector<int64_t>{127, 63}));
}

// The instruction descriptor of tcgen05.mma.kind::f16 (PTX ISA,
// "Instruction descriptor format for .kind::f16"; CUTLASS's
// UMMA::InstrDescriptor): f32 D at bits 4-5 = 1, bf16 A and B at 7-9 and
// 10-12 = 1, MN-major B at bit 16, N >> 3 at 17-22, M >> 4 at 24-28.
TEST(Tcgen05, InstructionDescriptorFields) {
  uint32_t d = tcgen05InstructionDescriptor(128, 256, /*bf16=*/true, /*aMnMajor=*/false,
                                            /*bMnMajor=*/true);
  EXPECT_EQ(d, (1u << 4) | (1u << 7) | (1u << 10) | (1u << 16) | (32u << 17) | (8u << 24));
  // f16, both K-major, N = 8: 0x08020010.
  EXPECT_EQ(tcgen05InstructionDescriptor(128, 8, false, false, false), 0x08020010u);
}

// A tcgen05 shared memory descriptor is wgmma's with bits 46-48 = 0b001:
// a 128 x 64 bf16 tile, K-major, 128-byte swizzle: LBO 16 (encoded 1),
// SBO 1024 (encoded 64), swizzle 128B (2 in bits 61-63).
TEST(Tcgen05, SharedMemoryDescriptorBits) {
  WgmmaOperandTile a{128, 64, 2, Swizzle::B128, /*mnMajor=*/false};
  uint64_t bits = a.descriptorBits() | kTcgen05DescriptorVersion;
  EXPECT_EQ(bits,
            (uint64_t(1) << 16) | (uint64_t(64) << 32) | (uint64_t(1) << 46) | (uint64_t(2) << 61));
  // The K steps of 16 elements (32 bytes) move along the swizzled row.
  EXPECT_EQ(a.instructionOffset(0, 16), 32u);
  EXPECT_EQ(a.instructionOffset(0, 48), 96u);
}

TEST(Layout, WgmmaRegisterOperandAFollowsThePtxIsa) {
  // A of .m64nNk16 in registers: a_i of lane 4 g + q in warp w is row
  // 16 w + g + 8 ((i >> 1) & 1), column 2 q + (i & 1) + 8 (i >> 2).
  Layout a = Layout::wgmmaOperandA(64, 32, 4);
  expectCovers(a);
  EXPECT_EQ(a.coordinate(6, 5, 1), (std::vector<int64_t>{16 + 1 + 8, 2 + 8}));
  EXPECT_EQ(a.coordinate(8, 0, 0), (std::vector<int64_t>{0, 16})); // the second K step
}

} // namespace

namespace {

// A 64 x 64 tile of a 128 x 128 wgmma accumulator on one warpgroup: each
// thread's registers of the tile are a subset of its registers of the
// whole, at the same (lane, warp) and the same place within the tile. The
// rows beyond 64 and the columns beyond 64 are register bits (the second
// 64-row slice, the n8 blocks 8 to 15), so the slice moves nothing; the
// hand-worked picks follow "Register Fragments: wgmma D".
TEST(Layout, RegisterSliceKeepsAThreadsRegisters) {
  Layout whole = Layout::wgmmaAccumulator(128, 128, 4);
  std::optional<Layout> tile = whole.registerSlice({64, 64}, {64, 64}, {128, 128});
  ASSERT_TRUE(tile.has_value());
  EXPECT_TRUE(tile->isValid());
  EXPECT_EQ(tile->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(tile->numRegisters(), whole.numRegisters() / 4);
  // Every element of the tile is held by the same thread as in the whole.
  std::map<std::vector<int64_t>, std::pair<unsigned, unsigned>> owner;
  for (int64_t k = 0; k < whole.numRegisters(); ++k)
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned warp = 0; warp < 4; ++warp)
        owner[whole.coordinate(k, lane, warp)] = {lane, warp};
  for (int64_t k = 0; k < tile->numRegisters(); ++k)
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned warp = 0; warp < 4; ++warp) {
        std::vector<int64_t> c = tile->coordinate(k, lane, warp);
        std::vector<int64_t> in{c[0] + 64, c[1] + 64};
        EXPECT_EQ(owner[in], std::make_pair(lane, warp)) << "register " << k;
      }
  // Lane 5 (group 1, quad 1) of warp 2 holds tile element (32 + 1, 2 + 0)
  // in its register 0: row 16 * 2 + 5 / 4, column 2 * (5 % 4).
  EXPECT_EQ(tile->coordinate(0, 5, 2), (std::vector<int64_t>{33, 2}));
}

TEST(Layout, RegisterSliceRefusesWhatMoves) {
  Layout whole = Layout::wgmmaAccumulator(128, 128, 4);
  // A start that is not a multiple of the size, or a size that is not a
  // power of two, does not pick whole registers.
  EXPECT_FALSE(whole.registerSlice({32, 0}, {64, 128}, {128, 128}).has_value());
  EXPECT_FALSE(whole.registerSlice({0, 0}, {96, 128}, {128, 128}).has_value());
  // Columns 0-3 of every row: column bit 2 is a lane bit.
  EXPECT_FALSE(whole.registerSlice({0, 0}, {128, 4}, {128, 128}).has_value());
  // Rows 0-31: row bit 5 is a warp bit.
  EXPECT_FALSE(whole.registerSlice({0, 0}, {32, 128}, {128, 128}).has_value());
  // An unsliced value is itself.
  EXPECT_EQ(*whole.registerSlice({0, 0}, {128, 128}, {128, 128}), whole);
}

} // namespace
