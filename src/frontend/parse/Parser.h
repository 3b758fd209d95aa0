//===- Parser.h - .pk source to AST -----------------------------*- C++ -*-===//
//
// The public face of the parser. ANTLR stays behind this header: callers get
// a pk::ast::Module or a diagnostic, never a parse tree.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_PARSE_PARSER_H
#define PK_FRONTEND_PARSE_PARSER_H

#include "frontend/ast/AST.h"
#include "support/Diagnostics.h"

#include <memory>

namespace pk {

/// Parses a whole file registered with the diagnostics' SourceManager.
/// Reports the first syntax error and returns null on failure.
std::unique_ptr<ast::Module> parseModule(uint32_t file, DiagnosticEngine &diagnostics);

/// How much prediction work ANTLR did on a file: the most tokens any
/// decision looked ahead, and how often SLL prediction fell back to full
/// context. Parsing is linear when both stay small on any input.
struct ParsePredictionStats {
  size_t maxLookahead = 0;
  size_t fullContextFallbacks = 0;
  bool parsed = false; ///< no syntax error
};
ParsePredictionStats profileParse(uint32_t file, DiagnosticEngine &diagnostics);

/// Parses one expression (the VALUE of `-D NAME=VALUE`). The returned
/// expression's ranges point into `file`.
std::unique_ptr<ast::Expr> parseExpression(uint32_t file, DiagnosticEngine &diagnostics);

} // namespace pk

#endif // PK_FRONTEND_PARSE_PARSER_H
