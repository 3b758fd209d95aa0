// knownTrailingZeros: what a lane's address arithmetic says about its low
// bits, checked against values worked out by hand.
#include "backends/cuda/KnownBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

// Each `%name` the test asks about is returned by name (test.* attrs).
const char *kAddresses = R"mlir(
func.func @f(%n: index, %k: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %tid = gpu.thread_id x
  %lane = arith.remui %tid, %c32 : index
  %bit0 = arith.andi %lane, %c1 : index
  %bit1 = arith.andi %lane, %c2 : index
  %s0 = arith.shli %bit0, %c2 : index
  %s1 = arith.shli %bit1, %c2 : index
  %column = arith.ori %s0, %s1 : index
  %block = gpu.block_id x
  %offset = arith.muli %block, %c128 : index
  %clamped = arith.maxsi %offset, %c0 : index
  %at = arith.addi %clamped, %column : index
  %next = arith.addi %at, %c1 : index
  %row = arith.muli %n, %k : index
  %pitch = arith.muli %row, %c16 : index
  %half = arith.shrui %pitch, %c1 : index
  %quarter = arith.divui %pitch, %c4 : index
  %low = arith.remui %at, %c4 : index
  %odd = arith.addi %lane, %c3 : index
  %negative = arith.cmpi slt, %n, %c0 : index
  %pick = arith.select %negative, %at, %pitch : index
  "test.probe"(%column, %at, %next, %pitch, %half, %quarter, %low, %odd, %pick, %c8, %c0, %n)
      : (index, index, index, index, index, index, index, index, index, index, index, index) -> ()
  return
}
)mlir";

unsigned tz(mlir::Operation *probe, unsigned i, unsigned enough = 16) {
  return pk::gpu::knownTrailingZeros(probe->getOperand(i), enough);
}

} // namespace

TEST(KnownBits, LaneAddressArithmetic) {
  mlir::MLIRContext context;
  context.allowUnregisteredDialects();
  context.loadDialect<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::gpu::GPUDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kAddresses, &context);
  ASSERT_TRUE(module);
  mlir::Operation *probe = nullptr;
  module->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "test.probe")
      probe = op;
  });
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(tz(probe, 0), 2u);   // (lane & 1) << 2 | (lane & 2) << 2
  EXPECT_EQ(tz(probe, 1), 2u);   // max(block * 128, 0) + that
  EXPECT_EQ(tz(probe, 2), 0u);   // ... + 1
  EXPECT_EQ(tz(probe, 3), 4u);   // n * k * 16
  EXPECT_EQ(tz(probe, 4), 3u);   // >> 1
  EXPECT_EQ(tz(probe, 5), 2u);   // / 4
  EXPECT_EQ(tz(probe, 6), 16u);  // at % 4: at is a multiple of 4, so 0
  EXPECT_EQ(tz(probe, 7), 0u);   // lane + 3
  EXPECT_EQ(tz(probe, 8), 2u);   // select(_, at, pitch)
  EXPECT_EQ(tz(probe, 9), 3u);   // 8
  EXPECT_EQ(tz(probe, 10), 16u); // 0: every bit, up to what was asked
  EXPECT_EQ(tz(probe, 11), 0u);  // an argument: nothing known
  // Asking for less answers no more than was asked.
  EXPECT_EQ(tz(probe, 3, 2), 2u);
  EXPECT_TRUE(pk::gpu::knownMultipleOf(probe->getOperand(1), 4));
  EXPECT_FALSE(pk::gpu::knownMultipleOf(probe->getOperand(1), 8));
  EXPECT_TRUE(pk::gpu::knownMultipleOf(probe->getOperand(11), 1));
}
