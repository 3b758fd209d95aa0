//===- RuntimeInternalsTest.cpp - SHA-256, size expressions, targets ------===//
//
// The runtime's building blocks against independent references: FIPS
// 180-4 test vectors (and sha256sum), Python's integer division, and the
// CUDA compatibility rules as NVIDIA documents them.
//
//===----------------------------------------------------------------------===//
#include "runtime/Manifest.h"
#include "runtime/Module.h"
#include "runtime/Sha256.h"
#include "runtime/SizeExpr.h"
#include "runtime/Target.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>

using namespace pk::rt;
using nlohmann::json;

namespace {

std::string sha(const std::string &s) { return sha256Hex(s.data(), s.size()); }

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes straddle the one-or-two final blocks boundary
  // (sha256sum).
  EXPECT_EQ(sha(std::string(55, 'x')),
            "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  EXPECT_EQ(sha(std::string(56, 'x')),
            "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  EXPECT_EQ(sha(std::string(64, 'x')),
            "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
}

SizeExpr parse(const json &j, const std::vector<std::string> &symbols = {"N", "M"}) {
  SizeExpr e;
  std::string error;
  EXPECT_TRUE(SizeExpr::parse(j, symbols, e, error)) << j.dump() << ": " << error;
  return e;
}

int64_t eval(const json &j, std::vector<int64_t> values = {0, 0}) {
  int64_t out = 0;
  std::string error;
  EXPECT_TRUE(parse(j).evaluate(values.data(), out, error)) << j.dump() << ": " << error;
  return out;
}

TEST(SizeExpr, PythonDivisionAndModulo) {
  // Expected values are Python's a // b, -((-a) // b) and a % b.
  struct Case {
    int64_t a, b, floordiv, ceildiv, mod;
  } cases[] = {{7, 2, 3, 4, 1},    {-7, 2, -4, -3, 1}, {7, -2, -4, -3, -1},
               {-7, -2, 3, 4, -1}, {8, 2, 4, 4, 0},    {-8, 2, -4, -4, 0},
               {0, 5, 0, 0, 0},    {1, 1024, 0, 1, 1}, {1025, 1024, 1, 2, 1}};
  for (const Case &c : cases) {
    EXPECT_EQ(eval({"floordiv", c.a, c.b}), c.floordiv) << c.a << " // " << c.b;
    EXPECT_EQ(eval({"ceildiv", c.a, c.b}), c.ceildiv) << c.a << " ceildiv " << c.b;
    EXPECT_EQ(eval({"mod", c.a, c.b}), c.mod) << c.a << " % " << c.b;
  }
  int64_t min = std::numeric_limits<int64_t>::min(), r = 0;
  EXPECT_TRUE(pyMod(min, -1, r));
  EXPECT_EQ(r, 0);
}

TEST(SizeExpr, SymbolsAndNesting) {
  EXPECT_EQ(eval("N", {4096, 3}), 4096);
  EXPECT_EQ(eval({"ceildiv", "N", 1024}, {4097, 0}), 5);
  EXPECT_EQ(eval({"add", {"mul", 2, "N"}, {"sub", "M", 1}}, {10, 7}), 26);
  EXPECT_EQ(eval({"max", "N", {"min", "M", 5}}, {3, 9}), 5);
  EXPECT_EQ(eval(-12), -12);
  EXPECT_TRUE(parse(17).isConstant());
  unsigned index = 9;
  EXPECT_TRUE(parse("M").isSymbol(index));
  EXPECT_EQ(index, 1u);
  EXPECT_FALSE(parse({"add", "M", 0}).isSymbol(index));
}

TEST(SizeExpr, OverflowAndDivisionByZeroAreErrors) {
  int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  struct Case {
    json expr;
    const char *error;
  } cases[] = {
      {{"add", max, 1}, "64-bit overflow"},      {{"sub", min, 1}, "64-bit overflow"},
      {{"mul", max, 2}, "64-bit overflow"},      {{"floordiv", min, -1}, "64-bit overflow"},
      {{"ceildiv", min, -1}, "64-bit overflow"}, {{"floordiv", 1, 0}, "division by zero"},
      {{"ceildiv", "N", 0}, "division by zero"}, {{"mod", 5, "M"}, "division by zero"}};
  for (const Case &c : cases) {
    int64_t out = 0, values[2] = {0, 0};
    std::string error;
    EXPECT_FALSE(parse(c.expr).evaluate(values, out, error)) << c.expr.dump();
    EXPECT_EQ(error, c.error) << c.expr.dump();
  }
}

TEST(SizeExpr, MalformedExpressionsAreRefused) {
  struct Case {
    json expr;
    const char *error;
  } cases[] = {
      {"K", "unknown symbol \"K\" (the export's symbols: N M)"},
      {{"pow", "N", 2},
       "unknown operation \"pow\"; expected add, sub, mul, floordiv, ceildiv, mod, max or min"},
      {{"add", 1}, "an operation is [op, a, b], got 2 element(s)"},
      {{1, 2, 3}, "an operation is [op, a, b], got 3 element(s) starting with a non-string"},
      {1.5, "a size expression is an integer, a symbol name or [op, a, b], got number"},
      {json::object(), "a size expression is an integer, a symbol name or [op, a, b], got object"},
      {nullptr, "a size expression is an integer, a symbol name or [op, a, b], got null"},
      {json(std::numeric_limits<uint64_t>::max()),
       "size 18446744073709551615 does not fit in 64-bit signed integer"},
  };
  for (const Case &c : cases) {
    SizeExpr e;
    std::string error;
    EXPECT_FALSE(SizeExpr::parse(c.expr, {"N", "M"}, e, error)) << c.expr.dump();
    EXPECT_EQ(error, c.error) << c.expr.dump();
  }
  json deep = "N";
  for (int i = 0; i < 40; ++i)
    deep = json::array({"add", deep, 1});
  SizeExpr e;
  std::string error;
  EXPECT_FALSE(SizeExpr::parse(deep, {"N"}, e, error));
  EXPECT_EQ(error, "size expression nested deeper than 32");
  // The deepest accepted expression evaluates (its stack is sized for it).
  json ok = "N";
  for (unsigned i = 0; i < SizeExpr::kMaxDepth; ++i)
    ok = json::array({"add", 1, ok});
  int64_t out = 0, n = 5;
  ASSERT_TRUE(SizeExpr::parse(ok, {"N"}, e, error)) << error;
  ASSERT_TRUE(e.evaluate(&n, out, error));
  EXPECT_EQ(out, 5 + int64_t(SizeExpr::kMaxDepth));
}

TEST(SizeExpr, PrintsInfixWithFewParentheses) {
  std::vector<std::string> symbols = {"N", "M"};
  EXPECT_EQ(parse({"add", {"mul", 2, "N"}, 1}).str(symbols), "2*N + 1");
  EXPECT_EQ(parse({"mul", {"add", "N", 1}, 2}).str(symbols), "(N + 1)*2");
  EXPECT_EQ(parse({"sub", "N", {"sub", "M", 1}}).str(symbols), "N - (M - 1)");
  EXPECT_EQ(parse({"ceildiv", "N", 1024}).str(symbols), "ceildiv(N, 1024)");
  EXPECT_EQ(parse({"max", {"mod", "N", 3}, "M"}).str(symbols), "max(mod(N, 3), M)");
}

TEST(Target, Parses) {
  auto t = parseCudaTarget("cuda:sm_90a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->major, 9u);
  EXPECT_EQ(t->minor, 0u);
  EXPECT_EQ(t->suffix, 'a');
  t = parseCudaTarget("cuda:sm_86");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->capability(), 86u);
  EXPECT_EQ(t->suffix, 0);
  t = parseCudaTarget("cuda:sm_100a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->major, 10u);
  EXPECT_EQ(t->minor, 0u);
  t = parseCudaTarget("cuda:sm_120f");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->major, 12u);
  EXPECT_EQ(t->suffix, 'f');
  for (const char *bad : {"tpu", "cuda", "cuda:sm_", "cuda:sm_9", "cuda:sm_90b", "cuda:sm_0x",
                          "cuda:sm_1000", "cuda:sm_05", "cuda:compute_90"})
    EXPECT_FALSE(parseCudaTarget(bad)) << bad;
}

TEST(Target, CompatibilityFollowsCudaRules) {
  auto cc = [](const char *target, const char *format, unsigned major, unsigned minor) {
    return compatibility(*parseCudaTarget(target), format, major, minor) > 0;
  };
  // sm_90a: architecture-specific, 9.0 only.
  EXPECT_TRUE(cc("cuda:sm_90a", "cubin", 9, 0));
  EXPECT_FALSE(cc("cuda:sm_90a", "cubin", 10, 0));
  EXPECT_FALSE(cc("cuda:sm_90a", "cubin", 8, 9));
  // A cubin runs on its major version's later minors only.
  EXPECT_TRUE(cc("cuda:sm_80", "cubin", 8, 0));
  EXPECT_TRUE(cc("cuda:sm_80", "cubin", 8, 6));
  EXPECT_TRUE(cc("cuda:sm_80", "cubin", 8, 9));
  EXPECT_FALSE(cc("cuda:sm_80", "cubin", 9, 0));
  EXPECT_FALSE(cc("cuda:sm_80", "cubin", 7, 5));
  EXPECT_FALSE(cc("cuda:sm_86", "cubin", 8, 0));
  // PTX is compiled by the driver for the same or a newer device.
  EXPECT_TRUE(cc("cuda:sm_80", "ptx", 9, 0));
  EXPECT_TRUE(cc("cuda:sm_80", "ptx", 12, 0));
  EXPECT_FALSE(cc("cuda:sm_80", "ptx", 7, 5));
  EXPECT_TRUE(cc("cuda:sm_90a", "ptx", 9, 0));
  EXPECT_FALSE(cc("cuda:sm_90a", "ptx", 10, 0));
  // Formats the runtime does not load run nowhere.
  EXPECT_FALSE(cc("cuda:sm_90", "fatbin", 9, 0));
}

TEST(Target, SelectionPrefersTheClosestArtifact) {
  Manifest m;
  for (auto [target, format] : {std::pair{"cuda:sm_80", "cubin"},
                                {"cuda:sm_90a", "cubin"},
                                {"cuda:sm_86", "cubin"},
                                {"cuda:sm_80", "ptx"},
                                {"cuda:sm_90", "cubin"}}) {
    Artifact a;
    a.target = target;
    a.format = format;
    a.cuda = parseCudaTarget(target);
    m.artifacts.push_back(a);
  }
  EXPECT_EQ(selectArtifact(m, 9, 0), 1);  // sm_90a before sm_90
  EXPECT_EQ(selectArtifact(m, 8, 6), 2);  // exact
  EXPECT_EQ(selectArtifact(m, 8, 9), 2);  // the newest older minor
  EXPECT_EQ(selectArtifact(m, 8, 0), 0);  // the cubin before the PTX
  EXPECT_EQ(selectArtifact(m, 10, 0), 3); // only the PTX runs
  EXPECT_EQ(selectArtifact(m, 7, 5), -1);
  EXPECT_EQ(runsOn(*parseCudaTarget("cuda:sm_86"), "cubin"), "compute capability 8.x, x >= 6");
  EXPECT_EQ(runsOn(*parseCudaTarget("cuda:sm_90a"), "cubin"), "compute capability 9.0 only");
  EXPECT_EQ(runsOn(*parseCudaTarget("cuda:sm_80"), "ptx"), "compute capability 8.0 and newer");
}

} // namespace
