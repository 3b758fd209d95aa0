// The reordering of long blocks (backends/cuda/ShortLiveRanges.h): each
// pure instruction moves to just before its first user, so chains run
// through one at a time; what touches memory keeps its order.
#include "backends/cuda/ShortLiveRanges.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

struct Parsed {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
};

std::unique_ptr<Parsed> parse(const char *ir) {
  auto parsed = std::make_unique<Parsed>();
  llvm::SMDiagnostic error;
  parsed->module = llvm::parseAssemblyString(ir, error, parsed->context);
  if (!parsed->module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    error.print("test", os);
    ADD_FAILURE() << text;
  }
  return parsed;
}

/// The instructions of the function's first block, by name ("store" for
/// unnamed stores, "ret"), in order.
std::string order(llvm::Module &module) {
  std::string names;
  for (llvm::Instruction &inst : module.getFunctionList().front().front()) {
    if (!names.empty())
      names += " ";
    names += inst.hasName() ? inst.getName().str() : inst.getOpcodeName();
  }
  return names;
}

TEST(ShortLiveRanges, EachChainRunsThroughBeforeTheNext) {
  auto parsed = parse(R"(
define void @f(ptr %p, ptr %q, i32 %x, i32 %y) {
  %a1 = add i32 %x, 1
  %a2 = add i32 %y, 1
  %b1 = mul i32 %a1, 3
  %b2 = mul i32 %a2, 3
  %r1 = call i32 @llvm.fshl.i32(i32 %b1, i32 %b1, i32 7)
  %r2 = call i32 @llvm.fshl.i32(i32 %b2, i32 %b2, i32 7)
  store i32 %r1, ptr %p
  store i32 %r2, ptr %q
  ret void
}
declare i32 @llvm.fshl.i32(i32, i32, i32)
)");
  ASSERT_TRUE(parsed->module);
  llvm::BasicBlock &block = parsed->module->getFunctionList().front().front();
  EXPECT_TRUE(pk::gpu::shortenLiveRanges(block));
  EXPECT_EQ(order(*parsed->module), "a1 b1 r1 store a2 b2 r2 store ret");
  // Run again, nothing moves.
  EXPECT_FALSE(pk::gpu::shortenLiveRanges(block));
}

TEST(ShortLiveRanges, MemoryAccessesAndConvergentCallsKeepTheirOrder) {
  auto parsed = parse(R"(
define void @f(ptr %p, ptr %q, i32 %x) {
  %l1 = load i32, ptr %p
  %s = add i32 %x, 5
  %l2 = load i32, ptr %q
  %t = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %x, i32 1, i32 31)
  %u = add i32 %l1, %l2
  store i32 %s, ptr %q
  store i32 %u, ptr %p
  store i32 %t, ptr %p
  ret void
}
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32) convergent
)");
  ASSERT_TRUE(parsed->module);
  pk::gpu::shortenLiveRanges(parsed->module->getFunctionList().front().front());
  // The loads, the shuffle and the stores in their order; the adds sink
  // to their stores.
  EXPECT_EQ(order(*parsed->module), "l1 l2 t s store u store store ret");
}

TEST(ShortLiveRanges, ValuesUsedElsewhereAndPhisStay) {
  auto parsed = parse(R"(
define i32 @f(i32 %x, i1 %c) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %out = add i32 %x, 2
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, 10
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %out
}
)");
  ASSERT_TRUE(parsed->module);
  llvm::Function &f = parsed->module->getFunctionList().front();
  llvm::BasicBlock &loop = *std::next(f.begin());
  pk::gpu::shortenLiveRanges(loop);
  std::string names;
  for (llvm::Instruction &inst : loop)
    names += (names.empty() ? "" : " ") +
             (inst.hasName() ? inst.getName().str() : std::string(inst.getOpcodeName()));
  // %out is used in another block and %next by the phi: both stay where
  // they were; %done sinks to the branch (it already is there).
  EXPECT_EQ(names, "i out next done br");
}

TEST(ShortLiveRanges, OnlyLongBlocksAreReordered) {
  auto parsed = parse(R"(
define void @f(ptr %p, ptr %q, <4 x i32> %x, <4 x i32> %y) {
  %a1 = add <4 x i32> %x, splat (i32 1)
  %a2 = add <4 x i32> %y, splat (i32 1)
  store <4 x i32> %a1, ptr %p
  store <4 x i32> %a2, ptr %q
  ret void
}
)");
  ASSERT_TRUE(parsed->module);
  pk::gpu::shortenLiveRangesInLongBlocks(*parsed->module);
  EXPECT_EQ(order(*parsed->module), "a1 a2 store store ret");
}

} // namespace
