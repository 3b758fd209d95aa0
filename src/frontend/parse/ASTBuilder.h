//===- ASTBuilder.h - ANTLR parse tree to pk::ast ---------------*- C++ -*-===//
//
// The only code that reads ANTLR's generated contexts. It checks what the
// grammar leaves to later (valid assignment targets, literal ranges, the
// order of parameters) and throws SyntaxError for what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_PARSE_ASTBUILDER_H
#define PK_FRONTEND_PARSE_ASTBUILDER_H

#include "frontend/ast/AST.h"

#include "PkParser.h"

#include <functional>
#include <stdexcept>

namespace pk {

/// A problem found while building the AST, with the range to blame.
struct SyntaxError {
  SourceRange range;
  std::string message;
};

class ASTBuilder {
public:
  /// Parses the expression of an f-string field: its text, and where its
  /// first character is in the file (for ranges and errors).
  using EmbeddedParser =
      std::function<ast::ExprPtr(const std::string &text, SourceLocation at)>;

  explicit ASTBuilder(uint32_t file, EmbeddedParser embedded = nullptr)
      : file(file), embeddedParser(std::move(embedded)) {}

  std::unique_ptr<ast::Module> buildModule(grammar::PkParser::FileContext *ctx);
  ast::ExprPtr buildExpression(grammar::PkParser::ExpressionContext *ctx);

private:
  using P = grammar::PkParser;

  SourceRange rangeOf(antlr4::ParserRuleContext *ctx) const;
  SourceRange rangeOf(antlr4::Token *token) const;
  SourceRange rangeOf(antlr4::tree::TerminalNode *node) const {
    return rangeOf(node->getSymbol());
  }
  [[noreturn]] void fail(SourceRange range, std::string message) const;

  // Statements.
  void addStatement(P::StatementContext *ctx, ast::StmtList &out);
  void addSimpleStatements(P::SimpleStatementsContext *ctx, ast::StmtList &out);
  ast::StmtPtr buildSimpleStatement(P::SimpleStatementContext *ctx);
  ast::StmtPtr buildCompoundStatement(P::CompoundStatementContext *ctx);
  ast::StmtPtr buildIf(P::IfStatementContext *ctx, size_t clause);
  ast::StmtPtr buildMatch(P::MatchStatementContext *ctx);
  ast::Pattern buildCasePattern(P::CasePatternContext *ctx);
  ast::Pattern patternOf(ast::ExprPtr e);
  void checkPatternBindings(const ast::Pattern &p);
  void bindingsOf(const ast::Pattern &p, std::vector<std::string> &names);
  static bool isIrrefutable(const ast::Pattern &p);
  /// A definition and the decorators the enclosing `decorated` rule holds.
  ast::StmtPtr buildFunction(P::FunctionDefinitionContext *ctx,
                             std::vector<ast::ExprPtr> decorators);
  ast::StmtPtr buildClass(P::ClassDefinitionContext *ctx, std::vector<ast::ExprPtr> decorators);
  ast::StmtList buildBlock(P::BlockContext *ctx);
  std::vector<ast::Parameter> buildParameters(P::ParametersContext *ctx);
  std::vector<ast::Parameter> buildLambdaParameters(P::LambdaParametersContext *ctx);
  void checkParameterOrder(std::vector<ast::Parameter> &params);

  // Expressions.
  ast::ExprPtr buildExpressionList(P::ExpressionListContext *ctx);
  ast::ExprPtr buildListItem(P::ListItemContext *ctx);
  /// The element of `[e for ...]` / `(e for ...)`: the grammar allows an
  /// expression list there (to decide with one token of lookahead), Python
  /// a single expression.
  ast::ExprPtr comprehensionElement(P::ExpressionListContext *ctx);
  ast::ExprPtr buildTargets(P::TargetsContext *ctx);
  ast::ExprPtr buildNoConditional(P::ExpressionNoConditionalContext *ctx);
  ast::ExprPtr buildOrTest(P::OrTestContext *ctx);
  ast::ExprPtr buildAndTest(P::AndTestContext *ctx);
  ast::ExprPtr buildNotTest(P::NotTestContext *ctx);
  ast::ExprPtr buildComparison(P::ComparisonContext *ctx);
  ast::ExprPtr buildBitOr(P::BitOrExpressionContext *ctx);
  ast::ExprPtr buildBitXor(P::BitXorExpressionContext *ctx);
  ast::ExprPtr buildBitAnd(P::BitAndExpressionContext *ctx);
  ast::ExprPtr buildShift(P::ShiftExpressionContext *ctx);
  ast::ExprPtr buildArith(P::ArithExpressionContext *ctx);
  ast::ExprPtr buildTerm(P::TermContext *ctx);
  ast::ExprPtr buildFactor(P::FactorContext *ctx);
  ast::ExprPtr buildPower(P::PowerContext *ctx);
  ast::ExprPtr buildPrimary(P::PrimaryContext *ctx);
  ast::ExprPtr buildAtom(P::AtomContext *ctx);
  /// `{...}`: a dict, a set or one of their comprehensions.
  ast::ExprPtr buildBraces(SourceRange range, P::BraceItemsContext *ctx);
  ast::ExprPtr buildSubscript(P::SubscriptContext *ctx);
  std::vector<ast::Argument> buildArguments(P::ArgumentsContext *ctx);
  std::vector<ast::ComprehensionClause> buildComprehension(P::ComprehensionForContext *ctx);
  ast::ExprPtr buildNumber(antlr4::tree::TerminalNode *node);
  ast::ExprPtr buildStrings(P::StringAtomContext *ctx);
  /// Splits an f-string's body (after the quotes, starting at `at`) into
  /// literal text and replacement fields, appending to `parts`; stops at
  /// an unmatched `}` when `inSpec` (the end of a field's format spec).
  size_t parseFormatted(const std::string &body, size_t i, SourceLocation &at, bool raw,
                        bool inSpec, std::vector<ast::FormatPart> &parts);

  /// Checks that `e` can be assigned to; `augmented` forbids tuples.
  void checkTarget(const ast::Expr &e, bool augmented) const;

  uint32_t file;
  EmbeddedParser embeddedParser;
  size_t depth = 0; ///< nesting of buildExpression calls
  /// The innermost function or lambda being built: where the names that
  /// `:=` assigns are recorded (none at module level).
  std::vector<std::string> *namedTargets = nullptr;
};

} // namespace pk

#endif // PK_FRONTEND_PARSE_ASTBUILDER_H
