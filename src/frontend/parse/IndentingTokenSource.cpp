//===- IndentingTokenSource.cpp -------------------------------------------===//
#include "IndentingTokenSource.h"

namespace pk {

using grammar::PkLexer;

namespace {

constexpr size_t kMaxBracketDepth = 200;

/// Width of the indentation a NEWLINE token carries after its line break;
/// tabs advance to the next multiple of 8, as in CPython.
size_t indentationWidth(const std::string &newlineText) {
  size_t i = 0;
  while (i < newlineText.size() && (newlineText[i] == '\r' || newlineText[i] == '\n'))
    ++i;
  size_t width = 0;
  for (; i < newlineText.size(); ++i) {
    if (newlineText[i] == '\t')
      width = (width / 8 + 1) * 8;
    else if (newlineText[i] == ' ')
      ++width;
    else if (newlineText[i] == '\f')
      width = 0;
  }
  return width;
}

} // namespace

std::unique_ptr<antlr4::CommonToken> IndentingTokenSource::synthesize(size_t type,
                                                                const antlr4::Token &at,
                                                                const std::string &text) {
  // Tokens need a source: ANTLR's error reporting asks them for one.
  auto token = std::make_unique<antlr4::CommonToken>(
      std::make_pair(static_cast<antlr4::TokenSource *>(this), lexer.getInputStream()), type,
      antlr4::Token::DEFAULT_CHANNEL, at.getStartIndex(), at.getStartIndex());
  token->setText(text);
  token->setLine(at.getLine());
  token->setCharPositionInLine(at.getCharPositionInLine());
  token->setStartIndex(at.getStartIndex());
  token->setStopIndex(at.getStartIndex() == INVALID_INDEX ? INVALID_INDEX
                                                          : at.getStartIndex() - 1);
  return token;
}

void IndentingTokenSource::fail(const antlr4::Token &at, std::string message) {
  if (!firstError) {
    std::string text = at.getText();
    firstError = LexicalError{at.getLine(), at.getCharPositionInLine(),
                              std::max<size_t>(1, text.find('\n') == std::string::npos
                                                      ? text.size()
                                                      : text.find('\n')),
                              std::move(message)};
  }
  // End the stream: the parser sees EOF and its complaint is ignored in
  // favour of the lexical error.
  pending.clear();
  heldMatch.reset();
  pending.push_back(synthesize(antlr4::Token::EOF, at, "<EOF>"));
  finished = true;
}

/// `match` and `case` are keywords only where they start a match
/// statement or a case block, as in CPython; elsewhere they are names
/// (`re.match(...)`, `case = 1`). A line that starts with `match` is a
/// match statement when it ends with a colon: no other statement that
/// starts with a name does. Its tokens are held until the line ends. A
/// line that starts with `case` at the indentation of a match statement's
/// body is a case block.
void IndentingTokenSource::retypeSoftKeyword(antlr4::Token &token, size_t previousType) {
  bool startsLine = previousType == 0 || previousType == PkLexer::NEWLINE ||
                    previousType == PkLexer::INDENT || previousType == PkLexer::DEDENT;
  size_t type = token.getType();
  if (type == PkLexer::NEWLINE) {
    if (heldMatch && *heldMatch < pending.size() && previousType == PkLexer::COLON) {
      if (auto *match = dynamic_cast<antlr4::WritableToken *>(pending[*heldMatch].get()))
        match->setType(PkLexer::MATCH);
      expectMatchBody = true;
    }
    heldMatch.reset();
    return;
  }
  if (type == PkLexer::INDENT && expectMatchBody)
    matchBodies.push_back(indents.size());
  expectMatchBody = false;
  if (type == PkLexer::DEDENT)
    while (!matchBodies.empty() && matchBodies.back() > indents.size())
      matchBodies.pop_back();
  if (type != PkLexer::NAME || !startsLine)
    return;
  if (token.getText() == "match")
    heldMatch = pending.size();
  else if (token.getText() == "case" && !matchBodies.empty() &&
           matchBodies.back() == indents.size())
    if (auto *keyword = dynamic_cast<antlr4::WritableToken *>(&token))
      keyword->setType(PkLexer::CASE);
}

void IndentingTokenSource::emit(std::unique_ptr<antlr4::Token> token) {
  size_t previousType = lastEmittedType;
  retypeSoftKeyword(*token, previousType);
  lastEmittedType = token->getType();
  if (lastEmittedType != PkLexer::INDENT && lastEmittedType != PkLexer::DEDENT) {
    lastTokenEndLine = token->getLine();
    lastTokenEndColumn = token->getCharPositionInLine() + token->getText().size();
  }
  pending.push_back(std::move(token));
}

std::optional<LexicalError> IndentingTokenSource::unclosedBracketAtEnd() {
  while (!finished) {
    pending.clear();
    heldMatch.reset(); // its token is gone with the rest
    fill();
  }
  if (firstError && firstError->unclosedBracket)
    return firstError;
  return std::nullopt;
}

std::unique_ptr<antlr4::Token> IndentingTokenSource::nextToken() {
  // A held `match` is released with the rest of its line.
  while (pending.empty() || (heldMatch && !finished))
    fill();
  std::unique_ptr<antlr4::Token> token = std::move(pending.front());
  pending.pop_front();
  return token;
}

void IndentingTokenSource::finish(const antlr4::Token &eof) {
  if (lastEmittedType != 0 && lastEmittedType != PkLexer::NEWLINE) {
    auto newline = synthesize(PkLexer::NEWLINE, eof, "\n");
    newline->setLine(lastTokenEndLine);
    newline->setCharPositionInLine(lastTokenEndColumn);
    emit(std::move(newline));
  }
  while (indents.size() > 1) {
    indents.pop_back();
    emit(synthesize(PkLexer::DEDENT, eof, "<dedent>"));
  }
  pending.push_back(synthesize(antlr4::Token::EOF, eof, "<EOF>"));
  finished = true;
}

void IndentingTokenSource::handleNewline(std::unique_ptr<antlr4::Token> newline) {
  // Blank and comment-only lines produce runs of NEWLINE tokens; only the
  // last one tells the indentation of the next real line.
  std::unique_ptr<antlr4::Token> next = lexer.nextToken();
  while (next->getType() == PkLexer::NEWLINE) {
    newline = std::move(next);
    next = lexer.nextToken();
  }
  if (next->getType() == antlr4::Token::EOF) {
    finish(*next);
    return;
  }
  size_t width = indentationWidth(newline->getText());
  if (lastEmittedType != 0 && lastEmittedType != PkLexer::NEWLINE)
    emit(std::move(newline));

  if (width > indents.back()) {
    indents.push_back(width);
    emit(synthesize(PkLexer::INDENT, *next, "<indent>"));
  } else if (width < indents.back()) {
    while (width < indents.back()) {
      indents.pop_back();
      emit(synthesize(PkLexer::DEDENT, *next, "<dedent>"));
    }
    if (width != indents.back()) {
      fail(*next, "unindent does not match any outer indentation level");
      return;
    }
  }
  // The first token of the line goes through the normal path, which tracks
  // brackets and catches bad characters.
  lookahead = std::move(next);
}

void IndentingTokenSource::fill() {
  if (finished)
    return;
  std::unique_ptr<antlr4::Token> token =
      lookahead ? std::move(lookahead) : lexer.nextToken();
  switch (token->getType()) {
  case PkLexer::LPAREN:
  case PkLexer::LBRACK:
  case PkLexer::LBRACE:
    // CPython's limit; deeper nesting would also overflow the parser's stack.
    if (openBrackets.size() >= kMaxBracketDepth) {
      fail(*token, "too many nested brackets (the limit is 200)");
      return;
    }
    openBrackets.push_back(
        {token->getText()[0], token->getLine(), token->getCharPositionInLine()});
    break;
  case PkLexer::RPAREN:
  case PkLexer::RBRACK:
  case PkLexer::RBRACE: {
    char close = token->getText()[0];
    if (openBrackets.empty()) {
      fail(*token, std::string("unmatched '") + close + "'");
      return;
    }
    char open = openBrackets.back().character;
    if ((open == '(' && close != ')') || (open == '[' && close != ']') ||
        (open == '{' && close != '}')) {
      fail(*token, std::string("closing parenthesis '") + close +
                       "' does not match opening parenthesis '" + open + "'");
      return;
    }
    openBrackets.pop_back();
    break;
  }
  case PkLexer::NEWLINE:
    if (openBrackets.empty())
      handleNewline(std::move(token));
    return;
  case PkLexer::ERROR_CHAR: {
    std::string text = token->getText();
    fail(*token, "invalid character '" + text + "' in program");
    return;
  }
  case PkLexer::UNTERMINATED_STRING:
    fail(*token, "unterminated string literal");
    return;
  case antlr4::Token::EOF:
    if (!openBrackets.empty()) {
      const OpenBracket &open = openBrackets.back();
      auto at = std::make_unique<antlr4::CommonToken>(PkLexer::LPAREN, std::string(1, open.character));
      at->setLine(open.line);
      at->setCharPositionInLine(open.column);
      fail(*at, std::string("'") + open.character + "' was never closed");
      firstError->unclosedBracket = true;
      return;
    }
    finish(*token);
    return;
  default:
    break;
  }
  // The first token of the file must not be indented.
  if (lastEmittedType == 0 && token->getCharPositionInLine() > 0) {
    fail(*token, "unexpected indent");
    return;
  }
  emit(std::move(token));
}

} // namespace pk
