//===- IndentingTokenSource.h - Python indentation for ANTLR ----*- C++ -*-===//
//
// Sits between PkLexer and the parser and does what CPython's tokenizer does
// with layout: newlines inside brackets are dropped, blank and comment-only
// lines vanish, and a change of indentation becomes INDENT / DEDENT tokens.
// It also decides where the soft keywords `match` and `case` are keywords.
// Lexical errors (a stray character, an unterminated string, a dedent to no
// enclosing level) are recorded and end the token stream.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_PARSE_INDENTINGTOKENSOURCE_H
#define PK_FRONTEND_PARSE_INDENTINGTOKENSOURCE_H

#include "PkLexer.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace pk {

struct LexicalError {
  size_t line;   ///< 1-based
  size_t column; ///< 0-based, as ANTLR counts
  size_t length;
  std::string message;
  bool unclosedBracket = false; ///< "'(' was never closed"
};

class IndentingTokenSource : public antlr4::TokenSource {
public:
  explicit IndentingTokenSource(grammar::PkLexer &lexer) : lexer(lexer) {}

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return lexer.getLine(); }
  size_t getCharPositionInLine() override { return lexer.getCharPositionInLine(); }
  antlr4::CharStream *getInputStream() override { return lexer.getInputStream(); }
  std::string getSourceName() override { return lexer.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override {
    return lexer.getTokenFactory();
  }

  const std::optional<LexicalError> &error() const { return firstError; }

  /// Reads the rest of the file after the parser gave up, and returns the
  /// "'(' was never closed" error if that is how the file ends.
  std::optional<LexicalError> unclosedBracketAtEnd();

private:
  void fill();
  void handleNewline(std::unique_ptr<antlr4::Token> newline);
  void finish(const antlr4::Token &eof);
  std::unique_ptr<antlr4::CommonToken> synthesize(size_t type, const antlr4::Token &at,
                                            const std::string &text);
  void fail(const antlr4::Token &at, std::string message);
  void emit(std::unique_ptr<antlr4::Token> token);
  void retypeSoftKeyword(antlr4::Token &token, size_t previousType);

  grammar::PkLexer &lexer;
  std::deque<std::unique_ptr<antlr4::Token>> pending;
  std::unique_ptr<antlr4::Token> lookahead;
  std::vector<size_t> indents{0};
  struct OpenBracket {
    char character;
    size_t line, column;
  };
  std::vector<OpenBracket> openBrackets;
  size_t lastEmittedType = 0; // 0: nothing emitted yet
  size_t lastTokenEndLine = 1, lastTokenEndColumn = 0;
  bool finished = false;
  /// Where in `pending` a line-starting `match` waits for its line's end.
  std::optional<size_t> heldMatch;
  /// A match statement's line ended: the INDENT that follows opens its body.
  bool expectMatchBody = false;
  /// The indentation depth (size of `indents`) of each open match body.
  std::vector<size_t> matchBodies;
  std::optional<LexicalError> firstError;
};

} // namespace pk

#endif // PK_FRONTEND_PARSE_INDENTINGTOKENSOURCE_H
