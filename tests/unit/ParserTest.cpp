//===- ParserTest.cpp - Indentation, the AST and syntax errors ------------===//
#include "frontend/parse/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST(Parser, BracesMakeDictsSetsAndTheirComprehensions) {
  Parsed p = parse("a = {}\nb = {1: 2, **c}\nd = {**c, 1: 2}\ne = {1, *c}\nf = {*c, 1}\n"
                   "g = {k: v for k, v in c}\nh = {k for k in c if k}\ni = {1}\n");
  ASSERT_TRUE(p.ok) << p.errors;
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = p.dump.find(what); at != std::string::npos; at = p.dump.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("Dict @"), 3u) << p.dump;
  EXPECT_EQ(count("Set @"), 3u) << p.dump;
  EXPECT_EQ(count("DictComprehension"), 1u) << p.dump;
  EXPECT_EQ(count("SetComprehension"), 1u) << p.dump;
  EXPECT_EQ(count("Starred"), 2u) << p.dump;
  EXPECT_FALSE(parse("x = {1: 2, 3}\n").ok);
  EXPECT_FALSE(parse("x = {1, 2: 3}\n").ok);
  EXPECT_FALSE(parse("x = {1: 2, 3: 4 for k in c}\n").ok);
  EXPECT_FALSE(parse("x = {*a for a in c}\n").ok);
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
  p = parse("def g():\n  x = yield 1\n");
  EXPECT_NE(p.errors.find("'yield' is supported as a statement"), std::string::npos);
  p = parse("def g():\n  yield 1\n  yield\n");
  EXPECT_TRUE(p.ok) << p.errors;
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

TEST(Parser, BytesThatAreNotUtf8AreALocatedError) {
  struct Case {
    std::string source, where;
  };
  for (const Case &c : std::vector<Case>{
           {"x = 1\n\xff\xfe\n", "t.pk:2:1: error: invalid UTF-8: byte 0xff"},
           {"s = 'a\xc0\x80'\n", "t.pk:1:7: error: invalid UTF-8: byte 0xc0"},     // overlong
           {"s = '\xed\xa0\x80'\n", "t.pk:1:6: error: invalid UTF-8: byte 0xed"},  // surrogate
           {"s = '\xf4\x90\x80\x80'\n", "t.pk:1:6: error: invalid UTF-8: byte 0xf4"}, // > U+10FFFF
           {"x = 1 # \xe2\x82", "t.pk:1:9: error: invalid UTF-8: byte 0xe2"},        // cut short
       }) {
    Parsed p = parse(c.source);
    EXPECT_FALSE(p.ok);
    EXPECT_EQ(p.errors.rfind(c.where, 0), 0u) << p.errors;
    // The quoted line shows the bad bytes as '?', so the output stays text.
    EXPECT_EQ(p.errors.find_first_of("\x80\xc0\xed\xf4\xff\xe2"), std::string::npos) << p.errors;
  }
  Parsed p = parse("s = 'h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80'\n"); // é, €, an emoji
  EXPECT_TRUE(p.ok) << p.errors;
}

TEST(Parser, DeepNestingIsADiagnosticNotAStackOverflow) {
  for (const std::string &op : {"-", "not ", "2**", "lambda: ", "1 if 1 else "}) {
    std::string chain;
    for (int i = 0; i < 100000; ++i)
      chain += op;
    Parsed p = parse("x = " + chain + "1\n");
    EXPECT_FALSE(p.ok) << op;
    EXPECT_NE(p.errors.find("error: this expression nests too deeply"), std::string::npos)
        << op << ": " << p.errors.substr(0, 200);
  }
}

TEST(Parser, FactoredRulesStillRejectWhatPythonRejects) {
  struct Case {
    const char *source, *error;
  };
  for (const Case &c : std::vector<Case>{
           {"x = [a, b for a in c]\n",
            "t.pk:1:6: error: did you forget parentheses around the comprehension target?"},
           {"x = (a, for a in c)\n",
            "t.pk:1:6: error: did you forget parentheses around the comprehension target?"},
           {"x = [*a for a in c]\n",
            "t.pk:1:6: error: iterable unpacking cannot be used in comprehension"},
           {"a, b: int = 1\n", "t.pk:1:1: error: only single target (not tuple) can be annotated"},
           {"f(a, b for b in c)\n", "error: generator expression must be parenthesized"},
       }) {
    Parsed p = parse(c.source);
    EXPECT_FALSE(p.ok) << c.source;
    EXPECT_NE(p.errors.find(c.error), std::string::npos) << c.source << p.errors;
  }
  Parsed p = parse("x = [a for a in c]\ny = (a for a in c)\nf(a for a in c)\nz = x[1:2, :, ::2, 3:]\n"
                   "a: int = 1\nb += 2\nc = d = (1,)\n");
  EXPECT_TRUE(p.ok) << p.errors;
}

TEST(Parser, MatchAndCaseAreKeywordsOnlyWhereTheyStartAMatchStatement) {
  // Elsewhere they are names, as in Python.
  Parsed names = parse("match = 1\ncase = 2\nmatch(x)\nre.match(a, b)\nmatch.x = 3\n"
                       "match: int = 4\nmatch [a]\nif case:\n    case = match\n");
  EXPECT_TRUE(names.ok) << names.errors;
  EXPECT_EQ(names.dump.find("Match"), std::string::npos) << names.dump;

  Parsed p = parse("match (a, b):\n"
                   "    case (x.y, 1) | [2, *_] if a:\n"
                   "        case = 3\n"
                   "        match case:\n"
                   "            case C(1, k=v) as w: pass\n"
                   "    case {'k': _, **rest}:\n"
                   "        pass\n"
                   "    case _, _:\n"
                   "        pass\n");
  ASSERT_TRUE(p.ok) << p.errors;
  for (const char *expected :
       {"Match", "Pattern Or", "Pattern Value", "Pattern Star", "if:", "Pattern As w",
        "Pattern Class", "keyword k:", "Pattern Capture v", "Pattern Mapping rest",
        "Pattern Sequence", "Pattern Wildcard"})
    EXPECT_NE(p.dump.find(expected), std::string::npos) << expected << "\n" << p.dump;
}

TEST(Parser, InvalidPatternsAreLocatedErrors) {
  struct Case {
    const char *pattern, *error;
  };
  for (const Case &c : std::vector<Case>{
           {"a + b", "t.pk:2:10: error: invalid pattern"},
           {"f(x)[0]", "t.pk:2:10: error: invalid pattern"},
           {"x, x", "t.pk:2:13: error: multiple assignments to name 'x' in pattern"},
           {"1 | y", "t.pk:2:14: error: alternative patterns bind different names"},
           {"*a, *b", "t.pk:2:14: error: multiple starred names in sequence pattern"},
           {"{x: 1}", "t.pk:2:11: error: invalid pattern: a mapping pattern's keys"},
           {"C(k=1, k=2)", "t.pk:2:17: error: keyword argument repeated: k"},
           {"C(k=1, 2)", "t.pk:2:17: error: positional argument follows keyword argument"},
           {"_ | 1", "error: alternative patterns after an irrefutable one are unreachable"},
           {"1 as _", "error: cannot use '_' as a target"},
           {"*rest", "t.pk:2:10: error: a star pattern belongs in a sequence pattern"},
       }) {
    Parsed p = parse(std::string("match v:\n    case ") + c.pattern + ":\n        pass\n");
    EXPECT_FALSE(p.ok) << c.pattern;
    EXPECT_NE(p.errors.find(c.error), std::string::npos) << c.pattern << "\n" << p.errors;
  }
  Parsed unreachable = parse("match v:\n    case x:\n        pass\n    case 1:\n        pass\n");
  EXPECT_NE(unreachable.errors.find("t.pk:2:10: error: name capture 'x' makes remaining "
                                    "patterns unreachable"),
            std::string::npos)
      << unreachable.errors;
  Parsed noCase = parse("match v:\n    pass\n");
  EXPECT_NE(noCase.errors.find("t.pk:2:5: error: expected 'case', found 'pass'"), std::string::npos)
      << noCase.errors;
}

// After a syntax error the token source reads the rest of the file for an
// unclosed bracket, dropping tokens as it goes; a `match` line held there
// once read a dropped token (found by the fuzzer; ASan sees it every time).
TEST(Parser, MatchLinesAfterASyntaxErrorAreReadSafely) {
  for (const char *source : {"x = = 1\nmatch y:\n    case 1:\n        pass\n",
                             "x = = 1\nmatch (y,\n",
                             "def f(:\n    match y:\n        case _: pass\nmatch z:\n"}) {
    Parsed p = parse(source);
    EXPECT_FALSE(p.ok) << source;
    EXPECT_NE(p.errors.find("t.pk:"), std::string::npos) << source << p.errors;
  }
}

/// What profileParse says about one source text.
pk::ParsePredictionStats predictionStats(const std::string &source, std::string *errors = nullptr) {
  pk::SourceManager sources;
  std::string text;
  llvm::raw_string_ostream out(text);
  pk::DiagnosticEngine diagnostics(sources, out);
  pk::ParsePredictionStats stats =
      pk::profileParse(sources.addBuffer("t.pk", source), diagnostics);
  if (errors)
    *errors = text;
  return stats;
}

// Parsing is linear in the input when no decision looks far ahead: each
// token is then examined a bounded number of times. ANTLR counts the
// tokens each decision looked at, so this checks the bound itself rather
// than a time. A rule whose alternatives share an expression as a prefix
// would look through the whole expression at every nesting level.
constexpr size_t kMaxLookahead = 2;

TEST(Parser, NoDecisionLooksFarAheadOnLongChains) {
  std::string chains[] = {"2**", "1 if True else ", "not ", "-", "lambda: ", "a + ", "f(a)(", "x["};
  const char *contexts[][2] = {
      {"X = ", ""},
      {"X = (", ")"},
      {"X = [", "]"},
      {"X = f(", ")"},
      {"X = f(k=", ")"},
      {"X = y[", "]"},
      {"X = y[1:", "]"},
      {"X = {1: ", "}"},
      {"X = {", "}"},
      {"X = {", ": 1}"},
      {"X = {", " for i in y}"},
      {"X = {1: ", " for i in y}"},
      {"X = {1, ", "}"},
      {"X = {**a, 1: ", "}"},
      {"X = [(", ") for i in y]"},
      {"def f():\n    X = ", ""},
      {"", " = 1"},
      {"", ": int = 1"},
      {"X += (", ")"},
      {"assert (", ")"},
      {"for i in (", "):\n    pass"},
      {"match ", ":\n    case _:\n        pass"},
      {"match x:\n    case [", "]:\n        pass"},
  };
  for (const std::string &chain : chains) {
    for (const auto &context : contexts) {
      std::string repeated;
      for (int i = 0; i < 150; ++i)
        repeated += chain;
      std::string closers;
      if (chain == "f(a)(")
        closers = std::string(150, ')');
      else if (chain == "x[")
        closers = std::string(150, ']');
      std::string source = std::string(context[0]) + repeated + "1" + closers + context[1] + "\n";
      std::string errors;
      pk::ParsePredictionStats stats = predictionStats(source, &errors);
      EXPECT_LE(stats.maxLookahead, kMaxLookahead) << source.substr(0, 80);
      EXPECT_EQ(stats.fullContextFallbacks, 0u) << source.substr(0, 80);
    }
  }
}

TEST(Parser, NoDecisionLooksFarAheadOnTheSamplesAndTests) {
  namespace fs = std::filesystem;
  size_t files = 0;
  for (const char *dir : {"samples", "tests/pallas/corpus", "tests/tpu/kernels", "tests/lit/diagnostics"}) {
    for (const fs::directory_entry &entry : fs::directory_iterator(fs::path(PK_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".pk")
        continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      pk::ParsePredictionStats stats = predictionStats(text.str());
      EXPECT_LE(stats.maxLookahead, kMaxLookahead) << entry.path();
      EXPECT_EQ(stats.fullContextFallbacks, 0u) << entry.path();
      ++files;
    }
  }
  EXPECT_GT(files, 100u);
}

} // namespace
