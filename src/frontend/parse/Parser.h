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

/// Parses one expression (the VALUE of `-D NAME=VALUE`). The returned
/// expression's ranges point into `file`.
std::unique_ptr<ast::Expr> parseExpression(uint32_t file, DiagnosticEngine &diagnostics);

} // namespace pk

#endif // PK_FRONTEND_PARSE_PARSER_H
