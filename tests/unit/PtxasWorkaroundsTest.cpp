//===- PtxasWorkaroundsTest.cpp - PTX rewritten around ptxas faults -------===//
//
// The expected texts are written out by hand: each packed 16-bit add
// becomes two 16-bit adds of its unpacked halves in a scope of its own,
// a guard stays on the write of the destination, and every other line is
// left as it was, byte for byte.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/PtxasWorkarounds.h"

#include <gtest/gtest.h>

using pk::gpu::splitPackedIntegerAdds;

namespace {

TEST(PtxasWorkarounds, SplitsAPackedAdd) {
  std::string ptx = "\tmov.b32 \t%r17, -12255420;\n"
                    "\tadd.s16x2 \t%r18, %r4, %r17;\n"
                    "\tret;\n";
  EXPECT_EQ(splitPackedIntegerAdds(ptx), "\tmov.b32 \t%r17, -12255420;\n"
                                         "\t{\n"
                                         "\t.reg .b16 %pk_half<4>;\n"
                                         "\tmov.b32 {%pk_half0, %pk_half1}, %r4;\n"
                                         "\tmov.b32 {%pk_half2, %pk_half3}, %r17;\n"
                                         "\tadd.s16 %pk_half0, %pk_half0, %pk_half2;\n"
                                         "\tadd.s16 %pk_half1, %pk_half1, %pk_half3;\n"
                                         "\tmov.b32 %r18, {%pk_half0, %pk_half1};\n"
                                         "\t}\n"
                                         "\tret;\n");
}

TEST(PtxasWorkarounds, TheDestinationMayBeASource) {
  // The halves are unpacked before %r5 is written.
  EXPECT_EQ(splitPackedIntegerAdds("  add.u16x2 %r5, %r5, %r5;"),
            "  {\n"
            "  .reg .b16 %pk_half<4>;\n"
            "  mov.b32 {%pk_half0, %pk_half1}, %r5;\n"
            "  mov.b32 {%pk_half2, %pk_half3}, %r5;\n"
            "  add.s16 %pk_half0, %pk_half0, %pk_half2;\n"
            "  add.s16 %pk_half1, %pk_half1, %pk_half3;\n"
            "  mov.b32 %r5, {%pk_half0, %pk_half1};\n"
            "  }");
}

TEST(PtxasWorkarounds, AGuardStaysOnTheWrite) {
  EXPECT_EQ(splitPackedIntegerAdds("@!%p3 add.s16x2 %r1, %r2, %r3;\n"),
            "{\n"
            ".reg .b16 %pk_half<4>;\n"
            "mov.b32 {%pk_half0, %pk_half1}, %r2;\n"
            "mov.b32 {%pk_half2, %pk_half3}, %r3;\n"
            "add.s16 %pk_half0, %pk_half0, %pk_half2;\n"
            "add.s16 %pk_half1, %pk_half1, %pk_half3;\n"
            "@!%p3 mov.b32 %r1, {%pk_half0, %pk_half1};\n"
            "}\n");
}

TEST(PtxasWorkarounds, OtherPackedOpsAndTextAreUntouched) {
  // min/max and the float adds compile right (their SASS keeps each
  // half's constant); comments and scalar adds are not instructions to
  // split. No trailing newline stays none.
  std::string ptx = "\tmin.u16x2 \t%r31, %r29, %r30;\n"
                    "\tadd.rn.bf16x2 \t%r3, %r1, %r2;\n"
                    "\tadd.s16 \t%rs3, %rs1, %rs2;\n"
                    "// add.s16x2 %r1, %r2, %r3;\n"
                    "\n"
                    "\tret;";
  EXPECT_EQ(splitPackedIntegerAdds(ptx), ptx);
  EXPECT_EQ(splitPackedIntegerAdds(""), "");
}

} // namespace
