//===- LayoutTest.cpp - Distributed layouts of the CUDA backend -----------===//
#include "backends/cuda/Layout.h"

#include <gtest/gtest.h>

#include <map>

using pk::gpu::Basis;
using pk::gpu::Layout;

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
