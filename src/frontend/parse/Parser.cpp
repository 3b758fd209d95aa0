//===- Parser.cpp - Drives ANTLR and turns its errors into diagnostics ----===//
#include "frontend/parse/Parser.h"

#include "ASTBuilder.h"
#include "IndentingTokenSource.h"
#include "PkLexer.h"
#include "PkParser.h"
#include "support/Utf8.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace pk {
namespace {

using grammar::PkLexer;
using grammar::PkParser;

std::string tokenDisplayName(const antlr4::dfa::Vocabulary &vocabulary, size_t type) {
  switch (type) {
  case antlr4::Token::EOF:
    return "end of file";
  case PkLexer::NEWLINE:
    return "end of line";
  case PkLexer::INDENT:
    return "an indented block";
  case PkLexer::DEDENT:
    return "end of block";
  case PkLexer::NAME:
    return "a name";
  case PkLexer::CASE:
    return "'case'";
  case PkLexer::MATCH:
    return "'match'";
  case PkLexer::NUMBER:
    return "a number";
  case PkLexer::STRING:
    return "a string";
  default:
    return vocabulary.getLiteralName(type);
  }
}

/// Keeps the first syntax error and words it the way Python users expect.
class FirstErrorListener : public antlr4::BaseErrorListener {
public:
  FirstErrorListener(uint32_t file) : file(file) {}

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offending, size_t line,
                   size_t column, const std::string &antlrMessage,
                   std::exception_ptr) override {
    if (error)
      return;
    SourceLocation begin{file, static_cast<uint32_t>(line), static_cast<uint32_t>(column + 1)};
    SourceLocation end = begin;
    std::string message = "invalid syntax";
    if (offending) {
      size_t type = offending->getType();
      std::string text = offending->getText();
      if (type != antlr4::Token::EOF && type != PkLexer::INDENT && type != PkLexer::DEDENT &&
          type != PkLexer::NEWLINE)
        end.column += static_cast<uint32_t>(text.size());
      auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
      antlr4::misc::IntervalSet expected;
      if (parser)
        expected = parser->getExpectedTokens();
      const antlr4::dfa::Vocabulary &vocabulary = recognizer->getVocabulary();
      // Whether the offending token starts a line (after a NEWLINE, INDENT
      // or DEDENT).
      auto isLineStart = [](antlr4::Token *t) {
        return !t || t->getType() == PkLexer::NEWLINE || t->getType() == PkLexer::INDENT ||
               t->getType() == PkLexer::DEDENT;
      };
      bool startsLine = false;
      // `type Alias = ...` (PEP 695): `type` reads as a name, then the
      // alias's name is unexpected.
      bool typeStatement = false;
      if (auto *stream = parser ? dynamic_cast<antlr4::BufferedTokenStream *>(
                                      parser->getTokenStream())
                                : nullptr) {
        size_t index = offending->getTokenIndex();
        antlr4::Token *previous =
            index != INVALID_INDEX && index > 0 ? stream->get(index - 1) : nullptr;
        startsLine = isLineStart(previous);
        typeStatement = previous && type == PkLexer::NAME && previous->getType() == PkLexer::NAME &&
                        previous->getText() == "type" &&
                        isLineStart(index > 1 ? stream->get(index - 2) : nullptr);
      }
      bool expectsExpression = expected.contains(static_cast<size_t>(PkLexer::NAME)) &&
                               expected.contains(static_cast<size_t>(PkLexer::NUMBER)) &&
                               !expected.contains(static_cast<size_t>(PkLexer::DEF));
      if (typeStatement) {
        message = "the 'type' statement (a type alias, PEP 695) is not supported in .pk files; "
                  "assign the alias instead: " +
                  text + " = ...";
      } else if (type == PkLexer::INDENT) {
        message = "unexpected indent";
      } else if ((type == PkLexer::ELSE || type == PkLexer::ELIF) && startsLine) {
        message = type == PkLexer::ELIF
                      ? "'elif' must follow an 'if' block at the same indentation"
                      : "'else' must follow an 'if', 'for' or 'while' block at the same "
                        "indentation";
      } else if (expected.contains(static_cast<size_t>(PkLexer::INDENT)) && expected.size() == 1) {
        message = "expected an indented block";
      } else if (expected.contains(static_cast<size_t>(PkLexer::COLON)) &&
                 type == PkLexer::NEWLINE) {
        message = "expected ':'";
      } else if (type == PkLexer::UNSUPPORTED_KEYWORD) {
        message = "'" + text + "' is not supported in .pk files";
      } else if (type == PkLexer::YIELD) {
        message = "'yield' is supported as a statement ('yield' or 'yield value') in a "
                  "@contextlib.contextmanager function, not in an expression";
      } else if (type == PkLexer::WALRUS) {
        message = "':=' (an assignment expression) is not allowed here";
      } else if (expected.size() == 1) {
        message = "expected " + tokenDisplayName(vocabulary, expected.getSingleElement());
        if (type == antlr4::Token::EOF || type == PkLexer::NEWLINE)
          message += " before " + tokenDisplayName(vocabulary, type);
        else
          message += ", found '" + text + "'";
      } else if (expectsExpression) {
        message = "expected an expression";
        if (type == antlr4::Token::EOF || type == PkLexer::NEWLINE || type == PkLexer::DEDENT)
          message += " before " + tokenDisplayName(vocabulary, type);
        else
          message += ", found '" + text + "'";
      } else if (type == antlr4::Token::EOF) {
        message = "unexpected end of file";
      } else if (type == PkLexer::NEWLINE) {
        message = "invalid syntax: unexpected end of line";
      } else if (type == PkLexer::DEDENT) {
        message = "invalid syntax: unexpected end of block";
      } else {
        message = "invalid syntax: unexpected '" + text + "'";
      }
    } else {
      message = antlrMessage;
    }
    error = SyntaxError{{begin, end}, message};
  }

  std::optional<SyntaxError> error;

private:
  uint32_t file;
};

/// Stops at the first syntax error instead of recovering: pkc reports one
/// clear error, and recovery only produces follow-on noise.
class FirstErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  void recover(antlr4::Parser *, std::exception_ptr) override {
    throw antlr4::ParseCancellationException();
  }
  antlr4::Token *recoverInline(antlr4::Parser *parser) override {
    antlr4::InputMismatchException e(parser);
    reportError(parser, e);
    throw antlr4::ParseCancellationException();
  }
  void sync(antlr4::Parser *) override {}
};

/// Reports the first byte that is not UTF-8 at its line; true if the text
/// is UTF-8. ANTLR's input stream would throw on it.
bool checkUtf8(uint32_t file, DiagnosticEngine &diagnostics) {
  const std::string &text = diagnostics.sourceManager().contents(file);
  std::optional<size_t> bad = firstInvalidUtf8(text);
  if (!bad)
    return true;
  SourceLocation begin = diagnostics.sourceManager().locationOf(file, *bad);
  SourceLocation end = begin;
  ++end.column;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[*bad]));
  diagnostics.error({begin, end}, std::string("invalid UTF-8: byte ") + hex +
                                      " does not start or continue a character; .pk files "
                                      "are UTF-8 text");
  return false;
}

/// Refuses nesting deeper than the parser's recursion can safely take: each
/// rule the parser enters is a C++ call, and a long enough `not not ...`
/// or `2**2**...` chain would otherwise end the process with a stack
/// overflow instead of a diagnostic. 200 nested brackets (the token
/// source's limit) take about 3,000 rules, so the limit sits above that.
class NestingLimit : public antlr4::tree::ParseTreeListener {
public:
  static constexpr size_t kMaxRuleDepth = 4000;

  NestingLimit(antlr4::Parser &parser, uint32_t file) : parser(parser), file(file) {}

  void enterEveryRule(antlr4::ParserRuleContext *) override {
    if (++depth <= kMaxRuleDepth)
      return;
    antlr4::Token *at = parser.getCurrentToken();
    SourceLocation begin{file, static_cast<uint32_t>(at->getLine()),
                         static_cast<uint32_t>(at->getCharPositionInLine() + 1)};
    SourceLocation end = begin;
    ++end.column;
    error = SyntaxError{{begin, end},
                        "this expression nests too deeply for pkc's parser; split it into "
                        "several statements"};
    throw antlr4::ParseCancellationException();
  }
  void exitEveryRule(antlr4::ParserRuleContext *) override { --depth; }
  void visitTerminal(antlr4::tree::TerminalNode *) override {}
  void visitErrorNode(antlr4::tree::ErrorNode *) override {}

  std::optional<SyntaxError> error;

private:
  antlr4::Parser &parser;
  uint32_t file;
  size_t depth = 0;
};

/// Everything one parse needs, wired together.
struct ParseSession {
  ParseSession(uint32_t file, DiagnosticEngine &diagnostics)
      : ParseSession(file, std::string(diagnostics.sourceManager().contents(file)),
                     diagnostics.sourceManager().name(file)) {}
  ParseSession(uint32_t file, const std::string &text, const std::string &name)
      : input(text), lexer(&input), source(lexer), tokens(&source), parser(&tokens),
        listener(file), nesting(parser, file) {
    input.name = name;
    lexer.removeErrorListeners();
    parser.removeErrorListeners();
    parser.addErrorListener(&listener);
    parser.addParseListener(&nesting);
    parser.setErrorHandler(std::make_shared<FirstErrorStrategy>());
  }

  /// Runs the `file` rule; null after a syntax error.
  PkParser::FileContext *parseFile() {
    try {
      return parser.file();
    } catch (const antlr4::ParseCancellationException &) {
      return nullptr;
    }
  }

  /// Reports the first error, preferring a lexical one; true if any.
  bool reportErrors(uint32_t file, DiagnosticEngine &diagnostics) {
    auto reportLexical = [&](const LexicalError &lexical) {
      SourceLocation begin{file, static_cast<uint32_t>(lexical.line),
                           static_cast<uint32_t>(lexical.column + 1)};
      SourceLocation end = begin;
      end.column += static_cast<uint32_t>(lexical.length);
      diagnostics.error({begin, end}, lexical.message);
    };
    if (const std::optional<LexicalError> &lexical = source.error()) {
      reportLexical(*lexical);
      return true;
    }
    if (nesting.error) {
      diagnostics.error(nesting.error->range, nesting.error->message);
      return true;
    }
    if (listener.error) {
      // As in CPython: when the parser stumbles inside a bracket that the
      // rest of the file never closes, the bracket is the mistake.
      const SourceLocation &at = listener.error->range.begin;
      if (std::optional<LexicalError> unclosed = source.unclosedBracketAtEnd();
          unclosed && (unclosed->line < at.line ||
                       (unclosed->line == at.line && unclosed->column + 1 < at.column))) {
        reportLexical(*unclosed);
        return true;
      }
      diagnostics.error(listener.error->range, listener.error->message);
      return true;
    }
    return false;
  }

  antlr4::ANTLRInputStream input;
  PkLexer lexer;
  IndentingTokenSource source;
  antlr4::CommonTokenStream tokens;
  PkParser parser;
  FirstErrorListener listener;
  NestingLimit nesting;
};

/// Parses the expression of an f-string field where it sits in `file`.
/// The text is parenthesized and placed at its own line and column (the
/// newlines and spaces before it are inside the brackets, so the lexer
/// drops them), which gives its nodes their ranges in the file.
ast::ExprPtr parseEmbedded(uint32_t file, const std::string &fileName, const std::string &text,
                           SourceLocation at) {
  std::string placed = "(";
  if (at.line > 1)
    placed += std::string(at.line - 1, '\n') + std::string(at.column - 1, ' ');
  else
    placed += std::string(at.column > 2 ? at.column - 2 : 0, ' ');
  placed += text + "\n)";
  ParseSession session(file, placed, fileName);
  PkParser::FileContext *tree = session.parseFile();
  SourceRange here(at, at);
  if (const std::optional<LexicalError> &lexical = session.source.error())
    throw SyntaxError{{{file, static_cast<uint32_t>(lexical->line),
                        static_cast<uint32_t>(lexical->column + 1)},
                       {file, static_cast<uint32_t>(lexical->line),
                        static_cast<uint32_t>(lexical->column + 1)}},
                      "f-string: " + lexical->message};
  if (session.listener.error)
    throw SyntaxError{session.listener.error->range, "f-string: " + session.listener.error->message};
  std::vector<PkParser::StatementContext *> statements = tree ? tree->statement()
                                                              : std::vector<PkParser::StatementContext *>();
  PkParser::SimpleStatementsContext *simple =
      statements.size() == 1 ? statements[0]->simpleStatements() : nullptr;
  auto *exprStatement =
      simple && simple->simpleStatement().size() == 1
          ? dynamic_cast<PkParser::ExpressionStatementContext *>(simple->simpleStatement(0))
          : nullptr;
  if (!exprStatement || exprStatement->expressionList()->listItem().size() != 1 ||
      !exprStatement->expressionList()->listItem(0)->expression())
    throw SyntaxError{here, "f-string: invalid expression"};
  ASTBuilder builder(file, [file, fileName](const std::string &inner, SourceLocation innerAt) {
    return parseEmbedded(file, fileName, inner, innerAt);
  });
  return builder.buildExpression(exprStatement->expressionList()->listItem(0)->expression());
}

ASTBuilder::EmbeddedParser embeddedParserFor(uint32_t file, const std::string &fileName) {
  return [file, fileName](const std::string &text, SourceLocation at) {
    return parseEmbedded(file, fileName, text, at);
  };
}

} // namespace

std::unique_ptr<ast::Module> parseModule(uint32_t file, DiagnosticEngine &diagnostics) {
  if (!checkUtf8(file, diagnostics))
    return nullptr;
  ParseSession session(file, diagnostics);
  PkParser::FileContext *tree = session.parseFile();
  if (session.reportErrors(file, diagnostics) || !tree)
    return nullptr;
  try {
    return ASTBuilder(file, embeddedParserFor(file, diagnostics.sourceManager().name(file)))
        .buildModule(tree);
  } catch (const SyntaxError &e) {
    diagnostics.error(e.range, e.message);
    return nullptr;
  }
}

ParsePredictionStats profileParse(uint32_t file, DiagnosticEngine &diagnostics) {
  ParsePredictionStats stats;
  if (!checkUtf8(file, diagnostics))
    return stats;
  ParseSession session(file, diagnostics);
  session.parser.setProfile(true);
  PkParser::FileContext *tree = session.parseFile();
  stats.parsed = !session.reportErrors(file, diagnostics) && tree;
  for (const antlr4::atn::DecisionInfo &decision :
       session.parser.getParseInfo().getDecisionInfo()) {
    stats.maxLookahead = std::max<size_t>(
        stats.maxLookahead, std::max<size_t>(decision.SLL_MaxLook, decision.LL_MaxLook));
    stats.fullContextFallbacks += decision.LL_Fallback;
  }
  return stats;
}

std::unique_ptr<ast::Expr> parseExpression(uint32_t file, DiagnosticEngine &diagnostics) {
  if (!checkUtf8(file, diagnostics))
    return nullptr;
  ParseSession session(file, diagnostics);
  // An expression is parsed as a one-line file holding one expression
  // statement, which keeps the indentation machinery out of the way.
  PkParser::FileContext *tree = session.parseFile();
  if (session.reportErrors(file, diagnostics) || !tree)
    return nullptr;
  SourceRange whole{{file, 1, 1}, {file, 1, 1}};
  std::vector<PkParser::StatementContext *> statements = tree->statement();
  PkParser::SimpleStatementsContext *simple =
      statements.size() == 1 ? statements[0]->simpleStatements() : nullptr;
  auto *exprStatement =
      simple && simple->simpleStatement().size() == 1
          ? dynamic_cast<PkParser::ExpressionStatementContext *>(simple->simpleStatement(0))
          : nullptr;
  if (!exprStatement) {
    diagnostics.error(whole, "expected a single expression");
    return nullptr;
  }
  try {
    ASTBuilder builder(file, embeddedParserFor(file, diagnostics.sourceManager().name(file)));
    std::vector<PkParser::ListItemContext *> items = exprStatement->expressionList()->listItem();
    if (items.size() == 1 && items[0]->expression() &&
        !exprStatement->expressionList()->trailingComma)
      return builder.buildExpression(items[0]->expression());
    // A bare tuple such as `-D SHAPE=128,64`.
    auto module = builder.buildModule(tree);
    auto &stmt = static_cast<ast::ExprStmt &>(*module->body.front());
    return std::move(stmt.value);
  } catch (const SyntaxError &e) {
    diagnostics.error(e.range, e.message);
    return nullptr;
  }
}

} // namespace pk
