//===- ParserTest.cpp - Indentation, the AST and syntax errors ------------===//
#include "frontend/parse/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

namespace {

struct Parsed {
  std::string dump, errors;
  bool ok = false;
};

Parsed parse(const std::string &source) {
  pk::SourceManager sources;
  Parsed p;
  llvm::raw_string_ostream errors(p.errors);
  pk::DiagnosticEngine diagnostics(sources, errors);
  uint32_t file = sources.addBuffer("t.pk", source);
  std::unique_ptr<pk::ast::Module> module = pk::parseModule(file, diagnostics);
  p.ok = static_cast<bool>(module);
  if (module) {
    llvm::raw_string_ostream out(p.dump);
    pk::ast::dump(*module, sources, out);
  }
  return p;
}

TEST(Parser, IndentationMakesBlocks) {
  Parsed p = parse("def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n");
  ASSERT_TRUE(p.ok) << p.errors;
  EXPECT_NE(p.dump.find("FunctionDef f @1:1"), std::string::npos);
  EXPECT_NE(p.dump.find("If @2:5"), std::string::npos);
  EXPECT_NE(p.dump.find("Return @6:5"), std::string::npos);
}

TEST(Parser, BlankLinesCommentsAndBracketsDoNotBreakBlocks) {
  Parsed p = parse("def f(a,\n      b):\n\n    # comment\n\n    return (a +\n        b)\n\nx = [1,\n  2]\n");
  ASSERT_TRUE(p.ok) << p.errors;
  EXPECT_NE(p.dump.find("Return @6:5"), std::string::npos);
  EXPECT_NE(p.dump.find("Assign @9:1"), std::string::npos);
}

TEST(Parser, Precedence) {
  Parsed p = parse("x = -a ** 2 + b * c @ d\n");
  ASSERT_TRUE(p.ok) << p.errors;
  // (-(a ** 2)) + ((b * c) @ d)
  size_t plus = p.dump.find("Binary +"), neg = p.dump.find("Unary -"), pow = p.dump.find("Binary **"),
         matmul = p.dump.find("Binary @"), mul = p.dump.find("Binary *\n");
  ASSERT_NE(plus, std::string::npos);
  EXPECT_LT(plus, neg);
  EXPECT_LT(neg, pow);
  EXPECT_LT(plus, matmul);
  EXPECT_LT(matmul, mul);
}

TEST(Parser, PythonForms) {
  Parsed p = parse("from functools import partial\n"
                   "f = lambda x, *, k=2: x[..., None] if k else x[1:2, ::3]\n"
                   "@partial(jax.jit, static_argnames=['a'])\n"
                   "def g(a, /, b, *args, c=1, **kw) -> f32[N]:\n"
                   "    return [i for i in range(3) if i], {'a': 1, **kw}\n");
  ASSERT_TRUE(p.ok) << p.errors;
  EXPECT_NE(p.dump.find("Lambda"), std::string::npos);
  EXPECT_NE(p.dump.find("Parameter a (positional-only)"), std::string::npos);
  EXPECT_NE(p.dump.find("Parameter *args"), std::string::npos);
  EXPECT_NE(p.dump.find("Parameter c (keyword-only)"), std::string::npos);
  EXPECT_NE(p.dump.find("ListComprehension"), std::string::npos);
}

TEST(Parser, IsNotAndNotInAreDifferentOperators) {
  Parsed p = parse("x = a is not None\ny = a not in b\nz = a is b\n");
  ASSERT_TRUE(p.ok) << p.errors;
  EXPECT_NE(p.dump.find("Compare is not @1:5"), std::string::npos) << p.dump;
  EXPECT_NE(p.dump.find("Compare not in @2:5"), std::string::npos) << p.dump;
  EXPECT_NE(p.dump.find("Compare is @3:5"), std::string::npos) << p.dump;
}

TEST(Parser, ReportsTheFirstErrorWithPosition) {
  Parsed p = parse("def f(x)\n    return x\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.errors, "t.pk:1:9: error: expected ':'\ndef f(x)\n        ^\n");
  p = parse("x = 1\n  y = 2\n");
  EXPECT_NE(p.errors.find("t.pk:2:3: error: unexpected indent"), std::string::npos);
  p = parse("if x:\n        a\n    b\n");
  EXPECT_NE(p.errors.find("t.pk:3:5: error: unindent does not match any outer indentation level"),
            std::string::npos);
  p = parse("x = (1,\n");
  EXPECT_NE(p.errors.find("t.pk:1:5: error: '(' was never closed"), std::string::npos);
  p = parse("class A:\n  pass\n");
  EXPECT_NE(p.errors.find("'class' is not supported"), std::string::npos);
  p = parse("f(a=1, b)\n");
  EXPECT_NE(p.errors.find("positional argument follows keyword argument"), std::string::npos);
}

TEST(Parser, OnlyOneErrorIsReported) {
  Parsed p = parse("x = = 1\ny = = 2\n");
  EXPECT_FALSE(p.ok);
  size_t first = p.errors.find("error:");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(p.errors.find("error:", first + 1), std::string::npos) << p.errors;
}

} // namespace
