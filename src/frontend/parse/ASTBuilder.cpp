//===- ASTBuilder.cpp -----------------------------------------------------===//
#include "ASTBuilder.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace pk {

using namespace ast;

namespace {
/// How deeply expressions may nest (parentheses, calls, operator chains,
/// trailers). CPython refuses much less; the limit keeps the recursive AST
/// walks far from the end of the stack.
constexpr size_t kMaxExpressionDepth = 1000;
} // namespace
using P = grammar::PkParser;
using antlr4::tree::TerminalNode;

//===----------------------------------------------------------------------===//
// Ranges and errors
//===----------------------------------------------------------------------===//

SourceRange ASTBuilder::rangeOf(antlr4::Token *token) const {
  SourceLocation begin{file, static_cast<uint32_t>(token->getLine()),
                       static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
  std::string text = token->getType() == antlr4::Token::EOF ? "" : token->getText();
  SourceLocation end = begin;
  size_t lastNewline = text.rfind('\n');
  if (lastNewline == std::string::npos) {
    end.column += static_cast<uint32_t>(text.size());
  } else {
    end.line += static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
    end.column = static_cast<uint32_t>(text.size() - lastNewline);
  }
  return {begin, end};
}

SourceRange ASTBuilder::rangeOf(antlr4::ParserRuleContext *ctx) const {
  SourceRange first = rangeOf(ctx->getStart());
  antlr4::Token *stop = ctx->getStop();
  if (!stop || stop->getTokenIndex() < ctx->getStart()->getTokenIndex())
    return first;
  return {first.begin, rangeOf(stop).end};
}

void ASTBuilder::fail(SourceRange range, std::string message) const {
  throw SyntaxError{range, std::move(message)};
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

std::unique_ptr<Module> ASTBuilder::buildModule(P::FileContext *ctx) {
  auto module = std::make_unique<Module>();
  module->file = file;
  for (P::StatementContext *s : ctx->statement())
    addStatement(s, module->body);
  return module;
}

void ASTBuilder::addStatement(P::StatementContext *ctx, StmtList &out) {
  if (ctx->simpleStatements())
    addSimpleStatements(ctx->simpleStatements(), out);
  else
    out.push_back(buildCompoundStatement(ctx->compoundStatement()));
}

void ASTBuilder::addSimpleStatements(P::SimpleStatementsContext *ctx, StmtList &out) {
  for (P::SimpleStatementContext *s : ctx->simpleStatement())
    out.push_back(buildSimpleStatement(s));
}

namespace {

BinaryOp augmentedOperator(size_t tokenType) {
  switch (tokenType) {
  case P::PLUS_ASSIGN:
    return BinaryOp::Add;
  case P::MINUS_ASSIGN:
    return BinaryOp::Sub;
  case P::STAR_ASSIGN:
    return BinaryOp::Mul;
  case P::SLASH_ASSIGN:
    return BinaryOp::Div;
  case P::DSLASH_ASSIGN:
    return BinaryOp::FloorDiv;
  case P::PERCENT_ASSIGN:
    return BinaryOp::Mod;
  case P::POWER_ASSIGN:
    return BinaryOp::Pow;
  case P::AT_ASSIGN:
    return BinaryOp::MatMul;
  case P::AMP_ASSIGN:
    return BinaryOp::BitAnd;
  case P::PIPE_ASSIGN:
    return BinaryOp::BitOr;
  case P::CARET_ASSIGN:
    return BinaryOp::BitXor;
  case P::LSHIFT_ASSIGN:
    return BinaryOp::LShift;
  default:
    return BinaryOp::RShift;
  }
}

std::string dottedText(P::DottedNameContext *ctx) {
  std::string text;
  for (TerminalNode *n : ctx->NAME()) {
    if (!text.empty())
      text += '.';
    text += n->getText();
  }
  return text;
}

} // namespace

StmtPtr ASTBuilder::buildSimpleStatement(P::SimpleStatementContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *s = dynamic_cast<P::ExpressionStatementContext *>(ctx)) {
    P::AssignmentTailContext *tail = s->assignmentTail();
    if (!tail)
      return std::make_unique<ExprStmt>(range, buildExpressionList(s->expressionList()));

    if (auto *t = dynamic_cast<P::AssignTailContext *>(tail)) {
      std::vector<P::ExpressionListContext *> lists = t->expressionList();
      lists.insert(lists.begin(), s->expressionList());
      std::vector<ExprPtr> targets;
      for (size_t i = 0; i + 1 < lists.size(); ++i) {
        targets.push_back(buildExpressionList(lists[i]));
        checkTarget(*targets.back(), /*augmented=*/false);
      }
      return std::make_unique<AssignStmt>(range, std::move(targets),
                                          buildExpressionList(lists.back()));
    }

    if (auto *t = dynamic_cast<P::AugmentedAssignTailContext *>(tail)) {
      ExprPtr target = buildExpressionList(s->expressionList());
      checkTarget(*target, /*augmented=*/true);
      auto *opToken = dynamic_cast<TerminalNode *>(t->augmentedOperator()->children[0]);
      return std::make_unique<AugAssignStmt>(range, std::move(target),
                                             augmentedOperator(opToken->getSymbol()->getType()),
                                             buildExpressionList(t->expressionList()));
    }

    auto *t = dynamic_cast<P::AnnotatedAssignTailContext *>(tail);
    P::ExpressionListContext *targets = s->expressionList();
    if (targets->listItem().size() != 1 || targets->trailingComma)
      fail(rangeOf(targets), "only single target (not tuple) can be annotated");
    if (!targets->listItem(0)->expression())
      fail(rangeOf(targets), "a starred target cannot be annotated");
    ExprPtr target = buildExpression(targets->listItem(0)->expression());
    checkTarget(*target, /*augmented=*/true);
    return std::make_unique<AnnAssignStmt>(range, std::move(target), buildExpression(t->annotation),
                                           t->value ? buildExpressionList(t->value) : nullptr);
  }

  if (auto *s = dynamic_cast<P::ReturnStatementContext *>(ctx))
    return std::make_unique<ReturnStmt>(
        range, s->expressionList() ? buildExpressionList(s->expressionList()) : nullptr);
  if (auto *s = dynamic_cast<P::TypeAliasStatementContext *>(ctx))
    return std::make_unique<TypeAliasStmt>(range, s->aliasName->getText(),
                                           buildExpression(s->expression()));
  if (auto *s = dynamic_cast<P::YieldStatementContext *>(ctx))
    return std::make_unique<YieldStmt>(
        range, s->expressionList() ? buildExpressionList(s->expressionList()) : nullptr);
  if (dynamic_cast<P::PassStatementContext *>(ctx))
    return std::make_unique<PassStmt>(range);
  if (auto *s = dynamic_cast<P::DelStatementContext *>(ctx)) {
    ExprPtr targets = buildExpressionList(s->expressionList());
    std::vector<const Expr *> items{targets.get()};
    if (auto *tuple = llvm::dyn_cast<SequenceExpr>(targets.get()); tuple && !tuple->isList()) {
      items.clear();
      for (const ExprPtr &e : tuple->elements)
        items.push_back(e.get());
    }
    std::vector<std::string> names;
    for (const Expr *e : items) {
      if (auto *name = llvm::dyn_cast<NameExpr>(e))
        names.push_back(name->name);
      else if (!llvm::isa<SubscriptExpr>(e))
        fail(e->range(), "'del' can only remove names and items (x[i]) in .pk files");
    }
    return std::make_unique<DelStmt>(range, std::move(targets), std::move(items), std::move(names));
  }
  if (dynamic_cast<P::BreakStatementContext *>(ctx))
    return std::make_unique<BreakStmt>(range);
  if (dynamic_cast<P::ContinueStatementContext *>(ctx))
    return std::make_unique<ContinueStmt>(range);

  if (auto *s = dynamic_cast<P::ImportStatementContext *>(ctx)) {
    auto stmt = std::make_unique<ImportStmt>(range);
    for (P::ImportedModuleContext *m : s->importedModule())
      stmt->modules.push_back(
          {dottedText(m->dottedName()), m->NAME() ? m->NAME()->getText() : "", rangeOf(m)});
    return stmt;
  }

  if (auto *s = dynamic_cast<P::FromImportStatementContext *>(ctx)) {
    auto stmt = std::make_unique<ImportFromStmt>(range);
    P::FromModuleContext *from = s->fromModule();
    stmt->level = static_cast<unsigned>(from->DOT().size());
    if (from->dottedName())
      stmt->module = dottedText(from->dottedName());
    stmt->moduleRange = rangeOf(from);
    stmt->importsAll = s->STAR() != nullptr;
    if (s->importedNames())
      for (P::ImportedNameContext *n : s->importedNames()->importedName())
        stmt->names.push_back({n->NAME(0)->getText(), n->NAME(1) ? n->NAME(1)->getText() : "",
                               rangeOf(n)});
    return stmt;
  }

  if (auto *s = dynamic_cast<P::AssertStatementContext *>(ctx))
    return std::make_unique<AssertStmt>(range, buildExpression(s->expression(0)),
                                        s->expression(1) ? buildExpression(s->expression(1))
                                                         : nullptr);
  if (auto *s = dynamic_cast<P::RaiseStatementContext *>(ctx)) {
    auto raise = std::make_unique<RaiseStmt>(
        range, s->expression(0) ? buildExpression(s->expression(0)) : nullptr);
    if (s->cause)
      raise->cause = buildExpression(s->cause);
    return raise;
  }

  auto texts = [](const std::vector<TerminalNode *> &nodes) {
    std::vector<std::string> out;
    for (TerminalNode *n : nodes)
      out.push_back(n->getText());
    return out;
  };
  if (auto *s = dynamic_cast<P::NonlocalStatementContext *>(ctx))
    return std::make_unique<NonlocalStmt>(range, texts(s->NAME()));
  if (auto *s = dynamic_cast<P::GlobalStatementContext *>(ctx))
    return std::make_unique<NonlocalStmt>(range, texts(s->NAME()), /*isGlobal=*/true);

  fail(range, "unsupported statement");
}

StmtPtr ASTBuilder::buildCompoundStatement(P::CompoundStatementContext *ctx) {
  if (ctx->ifStatement())
    return buildIf(ctx->ifStatement(), 0);
  if (P::DecoratedContext *d = ctx->decorated()) {
    std::vector<ExprPtr> decorators;
    for (P::DecoratorContext *decorator : d->decorator())
      decorators.push_back(buildExpression(decorator->expression()));
    if (d->functionDefinition())
      return buildFunction(d->functionDefinition(), std::move(decorators));
    return buildClass(d->classDefinition(), std::move(decorators));
  }
  if (auto *with = ctx->withStatement()) {
    auto stmt = std::make_unique<WithStmt>(rangeOf(with));
    for (P::WithItemContext *item : with->withItem()) {
      WithStmt::Item built;
      built.context = buildExpression(item->expression());
      if (item->bitOrExpression()) {
        built.target = buildBitOr(item->bitOrExpression());
        checkTarget(*built.target, /*augmented=*/false);
      }
      // `with (a, b):` is Python 3.10's parenthesized form of `with a, b:`
      // (a tuple is no context manager); taking it apart here keeps the
      // grammar's decisions short.
      auto *tuple = llvm::dyn_cast<SequenceExpr>(built.context.get());
      if (tuple && !tuple->isList() && !built.target && !tuple->elements.empty()) {
        for (ExprPtr &element : tuple->elements) {
          WithStmt::Item part;
          part.context = std::move(element);
          stmt->items.push_back(std::move(part));
        }
        continue;
      }
      stmt->items.push_back(std::move(built));
    }
    stmt->body = buildBlock(with->block());
    return stmt;
  }
  if (auto *t = ctx->tryStatement()) {
    auto stmt = std::make_unique<TryStmt>(rangeOf(t));
    stmt->body = buildBlock(t->body);
    for (P::ExceptClauseContext *clause : t->exceptClause()) {
      TryStmt::Handler handler;
      handler.range = rangeOf(clause->EXCEPT());
      if (clause->expression())
        handler.type = buildExpression(clause->expression());
      if (clause->NAME())
        handler.name = clause->NAME()->getText();
      handler.body = buildBlock(clause->block());
      stmt->handlers.push_back(std::move(handler));
    }
    if (t->orelse)
      stmt->orelse = buildBlock(t->orelse);
    if (t->final)
      stmt->finalBody = buildBlock(t->final);
    if (stmt->handlers.empty() && !t->final)
      fail(rangeOf(t->TRY()), "'try' needs an 'except' or 'finally' clause");
    return stmt;
  }
  if (auto *m = ctx->matchStatement())
    return buildMatch(m);
  if (auto *f = ctx->forStatement()) {
    ExprPtr target = buildTargets(f->targets());
    checkTarget(*target, /*augmented=*/false);
    StmtList body = buildBlock(f->block(0));
    StmtList orelse = f->block(1) ? buildBlock(f->block(1)) : StmtList();
    return std::make_unique<ForStmt>(rangeOf(f), std::move(target),
                                     buildExpressionList(f->expressionList()), std::move(body),
                                     std::move(orelse));
  }
  P::WhileStatementContext *w = ctx->whileStatement();
  StmtList body = buildBlock(w->block(0));
  StmtList orelse = w->block(1) ? buildBlock(w->block(1)) : StmtList();
  return std::make_unique<WhileStmt>(rangeOf(w), buildExpression(w->expression()),
                                     std::move(body), std::move(orelse));
}

StmtPtr ASTBuilder::buildMatch(P::MatchStatementContext *ctx) {
  auto stmt = std::make_unique<MatchStmt>(rangeOf(ctx));
  stmt->subject = buildExpressionList(ctx->subject);
  for (P::CaseBlockContext *block : ctx->caseBlock()) {
    MatchStmt::Case c;
    std::vector<P::CasePatternContext *> items = block->casePattern();
    // `case a, b:` is a sequence pattern, like the tuple `a, b`.
    if (items.size() == 1 && !block->trailingComma && items[0]->STAR())
      fail(rangeOf(items[0]), "a star pattern belongs in a sequence pattern ('case *" +
                                  items[0]->NAME(0)->getText() + ",:' or 'case [*" +
                                  items[0]->NAME(0)->getText() + "]:')");
    if (items.size() == 1 && !block->trailingComma) {
      c.pattern = buildCasePattern(items[0]);
    } else {
      c.pattern.kind = Pattern::Kind::Sequence;
      c.pattern.range = SourceRange::cover(rangeOf(items.front()), rangeOf(items.back()));
      for (P::CasePatternContext *item : items)
        c.pattern.elements.push_back(buildCasePattern(item));
    }
    checkPatternBindings(c.pattern);
    if (block->guard)
      c.guard = buildExpression(block->guard);
    c.body = buildBlock(block->block());
    stmt->cases.push_back(std::move(c));
  }
  // As in Python: a pattern that matches anything makes the cases after
  // it unreachable.
  for (size_t i = 0; i + 1 < stmt->cases.size(); ++i) {
    const MatchStmt::Case &c = stmt->cases[i];
    if (!c.guard && isIrrefutable(c.pattern))
      fail(c.pattern.range, c.pattern.kind == Pattern::Kind::Capture
                                ? "name capture '" + c.pattern.name +
                                      "' makes remaining patterns unreachable"
                                : "wildcard makes remaining patterns unreachable");
  }
  return stmt;
}

/// A top-level `pattern [as name]` or `*name` of a case block.
Pattern ASTBuilder::buildCasePattern(P::CasePatternContext *ctx) {
  Pattern p;
  if (ctx->STAR()) {
    if (ctx->AS())
      fail(rangeOf(ctx->AS()), "cannot use 'as' with a star pattern");
    p.kind = Pattern::Kind::Star;
    p.range = rangeOf(ctx);
    std::string name = ctx->NAME(0)->getText();
    p.name = name == "_" ? "" : name;
    return p;
  }
  p = patternOf(buildBitOr(ctx->bitOrExpression()));
  if (ctx->AS()) {
    std::string name = ctx->NAME(0)->getText();
    if (name == "_")
      fail(rangeOf(ctx->NAME(0)), "cannot use '_' as a target");
    Pattern as;
    as.kind = Pattern::Kind::As;
    as.range = rangeOf(ctx);
    as.name = name;
    as.elements.push_back(std::move(p));
    return as;
  }
  return p;
}

namespace {

/// `a.b.c`: a value pattern's dotted name.
bool isDottedName(const Expr &e) {
  if (llvm::isa<NameExpr>(e))
    return true;
  auto *attribute = llvm::dyn_cast<AttributeExpr>(&e);
  return attribute && isDottedName(*attribute->value);
}

/// A literal pattern: a number, a string, `-1`, `1 + 2`, `-1 - 2`.
bool isLiteral(const Expr &e) {
  if (llvm::isa<IntExpr, FloatExpr>(e))
    return true;
  if (auto *string = llvm::dyn_cast<StringExpr>(&e))
    return !string->formatted;
  if (auto *unary = llvm::dyn_cast<UnaryExpr>(&e))
    return unary->op == UnaryOp::Negate && llvm::isa<IntExpr, FloatExpr>(*unary->operand);
  if (auto *binary = llvm::dyn_cast<BinaryExpr>(&e))
    return (binary->op == BinaryOp::Add || binary->op == BinaryOp::Sub) &&
           isLiteral(*binary->lhs) && !llvm::isa<BinaryExpr>(*binary->rhs) &&
           isLiteral(*binary->rhs);
  return false;
}

} // namespace

/// The pattern an expression spells (PEP 634's pattern syntax is a subset
/// of expressions); anything else is "invalid pattern" at its place.
Pattern ASTBuilder::patternOf(ExprPtr e) {
  Pattern p;
  p.range = e->range();
  if (auto *name = llvm::dyn_cast<NameExpr>(e.get())) {
    p.kind = name->name == "_" ? Pattern::Kind::Wildcard : Pattern::Kind::Capture;
    if (p.kind == Pattern::Kind::Capture)
      p.name = name->name;
    return p;
  }
  if (llvm::isa<NoneExpr, BoolExpr>(e.get())) {
    p.kind = Pattern::Kind::Singleton;
    p.value = std::move(e);
    return p;
  }
  if (isLiteral(*e) || (llvm::isa<AttributeExpr>(e.get()) && isDottedName(*e))) {
    p.kind = Pattern::Kind::Value;
    p.value = std::move(e);
    return p;
  }
  if (auto *sequence = llvm::dyn_cast<SequenceExpr>(e.get())) {
    p.kind = Pattern::Kind::Sequence;
    for (ExprPtr &element : sequence->elements) {
      if (auto *star = llvm::dyn_cast<StarredExpr>(element.get())) {
        auto *name = llvm::dyn_cast<NameExpr>(star->value.get());
        if (!name)
          fail(star->range(), "invalid pattern: a star pattern is '*name'");
        Pattern rest;
        rest.kind = Pattern::Kind::Star;
        rest.range = star->range();
        rest.name = name->name == "_" ? "" : name->name;
        p.elements.push_back(std::move(rest));
        continue;
      }
      p.elements.push_back(patternOf(std::move(element)));
    }
    return p;
  }
  if (auto *binary = llvm::dyn_cast<BinaryExpr>(e.get()); binary && binary->op == BinaryOp::BitOr) {
    p.kind = Pattern::Kind::Or;
    for (ExprPtr *side : {&binary->lhs, &binary->rhs}) {
      Pattern alternative = patternOf(std::move(*side));
      if (alternative.kind == Pattern::Kind::Or)
        for (Pattern &a : alternative.elements)
          p.elements.push_back(std::move(a));
      else
        p.elements.push_back(std::move(alternative));
    }
    return p;
  }
  if (auto *call = llvm::dyn_cast<CallExpr>(e.get())) {
    if (!isDottedName(*call->callee))
      fail(call->callee->range(), "invalid pattern: a class pattern names its class");
    p.kind = Pattern::Kind::Class;
    for (Argument &argument : call->arguments) {
      // The call's own checks ran: no repeated keyword, no positional
      // argument after a keyword one.
      if (argument.kind == Argument::Kind::Positional) {
        p.elements.push_back(patternOf(std::move(argument.value)));
      } else if (argument.kind == Argument::Kind::Keyword) {
        p.keywords.push_back(argument.name);
        p.keywordPatterns.push_back(patternOf(std::move(argument.value)));
      } else {
        fail(argument.range, "invalid pattern: '*' and '**' are not patterns");
      }
    }
    p.value = std::move(call->callee);
    return p;
  }
  if (auto *dict = llvm::dyn_cast<DictExpr>(e.get())) {
    p.kind = Pattern::Kind::Mapping;
    for (size_t i = 0; i < dict->keys.size(); ++i) {
      if (!dict->keys[i]) {
        auto *rest = llvm::dyn_cast<NameExpr>(dict->values[i].get());
        if (!rest || rest->name == "_")
          fail(dict->values[i]->range(), "invalid pattern: '**' takes a name other than '_'");
        if (i + 1 != dict->keys.size())
          fail(dict->values[i]->range(), "'**" + rest->name + "' must be the last entry of a mapping pattern");
        p.name = rest->name;
        continue;
      }
      const Expr &key = *dict->keys[i];
      if (!isLiteral(key) && !llvm::isa<NoneExpr, BoolExpr>(key) &&
          !(llvm::isa<AttributeExpr>(key) && isDottedName(key)))
        fail(key.range(), "invalid pattern: a mapping pattern's keys are literals or dotted names");
      p.keys.push_back(std::move(dict->keys[i]));
      p.elements.push_back(patternOf(std::move(dict->values[i])));
    }
    return p;
  }
  fail(p.range, "invalid pattern: patterns are names, literals, dotted names, sequences, "
                "'|' alternatives, class patterns 'C(...)' and mappings");
}

/// Python's rules for the names a pattern binds: each at most once, and the
/// same set in every alternative of an or-pattern.
void ASTBuilder::checkPatternBindings(const Pattern &p) {
  std::vector<std::string> names;
  bindingsOf(p, names);
}

void ASTBuilder::bindingsOf(const Pattern &p, std::vector<std::string> &names) {
  auto bind = [&](const std::string &name) {
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(p.range, "multiple assignments to name '" + name + "' in pattern");
    names.push_back(name);
  };
  switch (p.kind) {
  case Pattern::Kind::Capture:
  case Pattern::Kind::Star:
    if (!p.name.empty())
      bind(p.name);
    return;
  case Pattern::Kind::As:
    bindingsOf(p.elements[0], names);
    bind(p.name);
    return;
  case Pattern::Kind::Or: {
    std::vector<std::string> first;
    for (size_t i = 0; i < p.elements.size(); ++i) {
      std::vector<std::string> alternative;
      bindingsOf(p.elements[i], alternative);
      std::sort(alternative.begin(), alternative.end());
      if (i == 0)
        first = alternative;
      else if (alternative != first)
        fail(p.elements[i].range, "alternative patterns bind different names");
      if (i + 1 < p.elements.size() && isIrrefutable(p.elements[i]))
        fail(p.elements[i].range, "alternative patterns after an irrefutable one are unreachable");
    }
    for (const std::string &name : first)
      bind(name);
    return;
  }
  case Pattern::Kind::Sequence: {
    bool starred = false;
    for (const Pattern &e : p.elements) {
      if (e.kind == Pattern::Kind::Star) {
        if (starred)
          fail(e.range, "multiple starred names in sequence pattern");
        starred = true;
      }
      bindingsOf(e, names);
    }
    return;
  }
  case Pattern::Kind::Class:
    for (const Pattern &e : p.elements)
      bindingsOf(e, names);
    for (const Pattern &e : p.keywordPatterns)
      bindingsOf(e, names);
    return;
  case Pattern::Kind::Mapping:
    for (const Pattern &e : p.elements)
      bindingsOf(e, names);
    if (!p.name.empty())
      bind(p.name);
    return;
  default:
    return;
  }
}

bool ASTBuilder::isIrrefutable(const Pattern &p) {
  if (p.kind == Pattern::Kind::Wildcard || p.kind == Pattern::Kind::Capture)
    return true;
  if (p.kind == Pattern::Kind::As)
    return isIrrefutable(p.elements[0]);
  if (p.kind == Pattern::Kind::Or)
    return std::any_of(p.elements.begin(), p.elements.end(),
                       [](const Pattern &a) { return isIrrefutable(a); });
  return false;
}

/// `if` clauses are indexed 0 (the `if`), 1.. (the `elif`s); the `else`
/// block, if any, follows them.
StmtPtr ASTBuilder::buildIf(P::IfStatementContext *ctx, size_t clause) {
  std::vector<P::ExpressionContext *> conditions = ctx->expression();
  std::vector<P::BlockContext *> blocks = ctx->block();
  StmtList body = buildBlock(blocks[clause]);
  StmtList orelse;
  if (clause + 1 < conditions.size())
    orelse.push_back(buildIf(ctx, clause + 1));
  else if (blocks.size() > conditions.size())
    orelse = buildBlock(blocks.back());
  SourceRange range = clause == 0 ? rangeOf(ctx) : rangeOf(conditions[clause]);
  return std::make_unique<IfStmt>(range, buildExpression(conditions[clause]), std::move(body),
                                  std::move(orelse));
}

StmtList ASTBuilder::buildBlock(P::BlockContext *ctx) {
  StmtList out;
  if (ctx->simpleStatements()) {
    addSimpleStatements(ctx->simpleStatements(), out);
    return out;
  }
  for (P::StatementContext *s : ctx->statement())
    addStatement(s, out);
  return out;
}

StmtPtr ASTBuilder::buildFunction(P::FunctionDefinitionContext *ctx,
                                  std::vector<ExprPtr> decorators) {
  // Like Python's ast, a function starts at `def`, after its decorators.
  auto def = std::make_unique<FunctionDefStmt>(rangeOf(ctx));
  def->name = ctx->NAME()->getText();
  def->nameRange = rangeOf(ctx->NAME());
  def->decorators = std::move(decorators);
  if (ctx->parameters())
    def->parameters = buildParameters(ctx->parameters());
  if (ctx->returnType)
    def->returnAnnotation = buildExpression(ctx->returnType);
  std::vector<std::string> *enclosing = namedTargets;
  namedTargets = &def->namedTargets;
  def->body = buildBlock(ctx->block());
  namedTargets = enclosing;
  return def;
}

StmtPtr ASTBuilder::buildClass(P::ClassDefinitionContext *ctx, std::vector<ExprPtr> decorators) {
  auto def = std::make_unique<ClassDefStmt>(rangeOf(ctx));
  def->name = ctx->NAME()->getText();
  def->nameRange = rangeOf(ctx->NAME());
  def->decorators = std::move(decorators);
  if (ctx->arguments())
    def->bases = buildArguments(ctx->arguments());
  def->body = buildBlock(ctx->block());
  return def;
}

/// Applies `/` and `*` markers and checks the order Python requires:
/// defaults do not precede non-defaults (before `*`), at most one `*args`
/// and `**kwargs`, `**kwargs` last, no repeated names.
void ASTBuilder::checkParameterOrder(std::vector<Parameter> &params) {
  bool seenDefault = false, seenStar = false, seenVarKeyword = false;
  std::vector<std::string> names;
  for (Parameter &p : params) {
    if (seenVarKeyword)
      fail(p.range, "parameter after '**" + names.back() + "'");
    if (!p.name.empty()) {
      if (std::find(names.begin(), names.end(), p.name) != names.end())
        fail(p.range, "duplicate parameter '" + p.name + "'");
      names.push_back(p.name);
    }
    switch (p.kind) {
    case Parameter::Kind::VarPositional:
    case Parameter::Kind::KeywordOnly:
      if (seenStar && p.kind == Parameter::Kind::VarPositional)
        fail(p.range, "only one '*' parameter is allowed");
      if (p.kind == Parameter::Kind::VarPositional)
        seenStar = true;
      break;
    case Parameter::Kind::VarKeyword:
      seenVarKeyword = true;
      break;
    case Parameter::Kind::Positional:
    case Parameter::Kind::PositionalOnly:
      if (seenStar) {
        p.kind = Parameter::Kind::KeywordOnly;
        break;
      }
      if (p.defaultValue)
        seenDefault = true;
      else if (seenDefault)
        fail(p.range, "parameter without a default follows parameter with a default");
      break;
    }
  }
}

std::vector<Parameter> ASTBuilder::buildParameters(P::ParametersContext *ctx) {
  std::vector<Parameter> params;
  bool bareStar = false;
  for (P::ParameterContext *pc : ctx->parameter()) {
    Parameter p;
    p.range = rangeOf(pc);
    if (auto *n = dynamic_cast<P::NamedParameterContext *>(pc)) {
      p.name = n->NAME()->getText();
      if (n->annotation)
        p.annotation = buildExpression(n->annotation);
      if (n->defaultValue)
        p.defaultValue = buildExpression(n->defaultValue);
    } else if (auto *s = dynamic_cast<P::StarParameterContext *>(pc)) {
      if (!s->NAME()) {
        bareStar = true;
        // A bare `*` only switches the following parameters to keyword-only.
        for (Parameter &q : params)
          if (q.kind == Parameter::Kind::VarPositional)
            fail(p.range, "only one '*' parameter is allowed");
        p.kind = Parameter::Kind::VarPositional;
        p.name = "";
      } else {
        p.kind = Parameter::Kind::VarPositional;
        p.name = s->NAME()->getText();
        if (s->annotation)
          p.annotation = buildExpression(s->annotation);
      }
    } else if (auto *d = dynamic_cast<P::DoubleStarParameterContext *>(pc)) {
      p.kind = Parameter::Kind::VarKeyword;
      p.name = d->NAME()->getText();
      if (d->annotation)
        p.annotation = buildExpression(d->annotation);
    } else {
      // `/`: everything before it is positional-only.
      for (Parameter &q : params) {
        if (q.kind != Parameter::Kind::Positional)
          fail(p.range, "'/' must come before '*' and keyword-only parameters");
        q.kind = Parameter::Kind::PositionalOnly;
      }
      continue;
    }
    params.push_back(std::move(p));
  }
  checkParameterOrder(params);
  if (bareStar) {
    // Drop the nameless marker now that it has done its job.
    auto it = std::find_if(params.begin(), params.end(), [](const Parameter &p) {
      return p.kind == Parameter::Kind::VarPositional && p.name.empty();
    });
    SourceRange markerRange = it->range;
    params.erase(it);
    bool anyKeywordOnly = std::any_of(params.begin(), params.end(), [](const Parameter &p) {
      return p.kind == Parameter::Kind::KeywordOnly;
    });
    if (!anyKeywordOnly)
      fail(markerRange, "named arguments must follow bare '*'");
  }
  return params;
}

std::vector<Parameter> ASTBuilder::buildLambdaParameters(P::LambdaParametersContext *ctx) {
  std::vector<Parameter> params;
  bool bareStar = false;
  for (P::LambdaParameterContext *pc : ctx->lambdaParameter()) {
    Parameter p;
    p.range = rangeOf(pc);
    if (auto *n = dynamic_cast<P::NamedLambdaParameterContext *>(pc)) {
      p.name = n->NAME()->getText();
      if (n->defaultValue)
        p.defaultValue = buildExpression(n->defaultValue);
    } else if (auto *s = dynamic_cast<P::StarLambdaParameterContext *>(pc)) {
      p.kind = Parameter::Kind::VarPositional;
      if (s->NAME())
        p.name = s->NAME()->getText();
      else
        bareStar = true;
    } else if (auto *d = dynamic_cast<P::DoubleStarLambdaParameterContext *>(pc)) {
      p.kind = Parameter::Kind::VarKeyword;
      p.name = d->NAME()->getText();
    } else {
      for (Parameter &q : params)
        q.kind = Parameter::Kind::PositionalOnly;
      continue;
    }
    params.push_back(std::move(p));
  }
  checkParameterOrder(params);
  if (bareStar) {
    auto it = std::find_if(params.begin(), params.end(), [](const Parameter &p) {
      return p.kind == Parameter::Kind::VarPositional && p.name.empty();
    });
    SourceRange markerRange = it->range;
    params.erase(it);
    // As for a def: `lambda *: 0` is a syntax error in Python.
    if (std::none_of(params.begin(), params.end(),
                     [](const Parameter &p) { return p.kind == Parameter::Kind::KeywordOnly; }))
      fail(markerRange, "named arguments must follow bare '*'");
  }
  return params;
}

void ASTBuilder::checkTarget(const Expr &e, bool augmented) const {
  switch (e.kind()) {
  case Expr::Kind::Name:
  case Expr::Kind::Attribute:
  case Expr::Kind::Subscript:
    return;
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
    if (augmented)
      fail(e.range(), "illegal target for augmented or annotated assignment");
    for (const ExprPtr &x : llvm::cast<SequenceExpr>(e).elements)
      checkTarget(*x, false);
    return;
  case Expr::Kind::Starred:
    if (augmented)
      fail(e.range(), "illegal target for augmented or annotated assignment");
    checkTarget(*llvm::cast<StarredExpr>(e).value, false);
    return;
  case Expr::Kind::Call:
    fail(e.range(), "cannot assign to function call");
  case Expr::Kind::Int:
  case Expr::Kind::Float:
  case Expr::Kind::String:
  case Expr::Kind::Bool:
  case Expr::Kind::None:
  case Expr::Kind::Ellipsis:
  case Expr::Kind::Imaginary:
    fail(e.range(), "cannot assign to literal");
  default:
    fail(e.range(), "cannot assign to expression");
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr ASTBuilder::buildExpressionList(P::ExpressionListContext *ctx) {
  std::vector<P::ListItemContext *> items = ctx->listItem();
  if (items.size() == 1 && !ctx->trailingComma) {
    ExprPtr only = buildListItem(items[0]);
    if (only->kind() == Expr::Kind::Starred)
      fail(only->range(), "can't use starred expression here");
    return only;
  }
  std::vector<ExprPtr> elements;
  for (P::ListItemContext *item : items)
    elements.push_back(buildListItem(item));
  return std::make_unique<SequenceExpr>(Expr::Kind::Tuple, rangeOf(ctx), std::move(elements));
}

ExprPtr ASTBuilder::buildListItem(P::ListItemContext *ctx) {
  if (ctx->expression())
    return buildExpression(ctx->expression());
  return std::make_unique<StarredExpr>(rangeOf(ctx), buildBitOr(ctx->bitOrExpression()));
}

ExprPtr ASTBuilder::buildTargets(P::TargetsContext *ctx) {
  std::vector<P::TargetItemContext *> items = ctx->targetItem();
  auto buildItem = [&](P::TargetItemContext *item) -> ExprPtr {
    ExprPtr value = buildBitOr(item->bitOrExpression());
    if (item->STAR())
      return std::make_unique<StarredExpr>(rangeOf(item), std::move(value));
    return value;
  };
  bool trailingComma = ctx->COMMA().size() >= items.size();
  if (items.size() == 1 && !trailingComma)
    return buildItem(items[0]);
  std::vector<ExprPtr> elements;
  for (P::TargetItemContext *item : items)
    elements.push_back(buildItem(item));
  return std::make_unique<SequenceExpr>(Expr::Kind::Tuple, rangeOf(ctx), std::move(elements));
}

ExprPtr ASTBuilder::buildExpression(P::ExpressionContext *ctx) {
  struct DepthGuard {
    size_t &depth;
    explicit DepthGuard(size_t &depth) : depth(depth) { ++depth; }
    ~DepthGuard() { --depth; }
  } guard(depth);
  if (depth > kMaxExpressionDepth)
    fail(rangeOf(ctx), "expression is nested too deeply (more than " +
                           std::to_string(kMaxExpressionDepth) + " levels)");
  if (auto *l = dynamic_cast<P::LambdaExpressionContext *>(ctx)) {
    std::vector<Parameter> params;
    if (l->lambdaParameters())
      params = buildLambdaParameters(l->lambdaParameters());
    std::vector<std::string> targets, *enclosing = namedTargets;
    namedTargets = &targets;
    ExprPtr body = buildExpression(l->expression());
    namedTargets = enclosing;
    auto lambda = std::make_unique<LambdaExpr>(rangeOf(ctx), std::move(params), std::move(body));
    lambda->namedTargets = std::move(targets);
    return lambda;
  }
  if (auto *n = dynamic_cast<P::NamedExpressionContext *>(ctx)) {
    std::string name = n->NAME()->getText();
    if (namedTargets)
      namedTargets->push_back(name);
    return std::make_unique<NamedExpr>(rangeOf(ctx),
                                       std::make_unique<NameExpr>(rangeOf(n->NAME()), name),
                                       buildExpression(n->expression()));
  }
  auto *c = dynamic_cast<P::ConditionalExpressionContext *>(ctx);
  ExprPtr body = buildOrTest(c->body);
  if (!c->condition)
    return body;
  return std::make_unique<ConditionalExpr>(rangeOf(ctx), std::move(body),
                                           buildOrTest(c->condition), buildExpression(c->orelse));
}

ExprPtr ASTBuilder::buildNoConditional(P::ExpressionNoConditionalContext *ctx) {
  if (auto *plain = dynamic_cast<P::PlainNoConditionalContext *>(ctx))
    return buildOrTest(plain->orTest());
  auto *l = dynamic_cast<P::LambdaNoConditionalContext *>(ctx);
  std::vector<Parameter> params;
  if (l->lambdaParameters())
    params = buildLambdaParameters(l->lambdaParameters());
  return std::make_unique<LambdaExpr>(rangeOf(ctx), std::move(params),
                                      buildNoConditional(l->expressionNoConditional()));
}

ExprPtr ASTBuilder::buildOrTest(P::OrTestContext *ctx) {
  std::vector<P::AndTestContext *> parts = ctx->andTest();
  if (parts.size() == 1)
    return buildAndTest(parts[0]);
  std::vector<ExprPtr> operands;
  for (P::AndTestContext *p : parts)
    operands.push_back(buildAndTest(p));
  return std::make_unique<BoolOpExpr>(rangeOf(ctx), BoolOp::Or, std::move(operands));
}

ExprPtr ASTBuilder::buildAndTest(P::AndTestContext *ctx) {
  std::vector<P::NotTestContext *> parts = ctx->notTest();
  if (parts.size() == 1)
    return buildNotTest(parts[0]);
  std::vector<ExprPtr> operands;
  for (P::NotTestContext *p : parts)
    operands.push_back(buildNotTest(p));
  return std::make_unique<BoolOpExpr>(rangeOf(ctx), BoolOp::And, std::move(operands));
}

ExprPtr ASTBuilder::buildNotTest(P::NotTestContext *ctx) {
  if (ctx->NOT())
    return std::make_unique<UnaryExpr>(rangeOf(ctx), UnaryOp::Not, buildNotTest(ctx->notTest()));
  return buildComparison(ctx->comparison());
}

ExprPtr ASTBuilder::buildComparison(P::ComparisonContext *ctx) {
  std::vector<P::BitOrExpressionContext *> parts = ctx->bitOrExpression();
  if (parts.size() == 1)
    return buildBitOr(parts[0]);
  auto cmp = std::make_unique<CompareExpr>(rangeOf(ctx));
  for (P::BitOrExpressionContext *p : parts)
    cmp->operands.push_back(buildBitOr(p));
  for (P::ComparisonOperatorContext *op : ctx->comparisonOperator()) {
    // `is not` has a NOT too: test IS first, or it would read as `not in`.
    if (op->IS())
      cmp->ops.push_back(op->NOT() ? CompareOp::IsNot : CompareOp::Is);
    else if (op->NOT())
      cmp->ops.push_back(CompareOp::NotIn);
    else if (op->IN())
      cmp->ops.push_back(CompareOp::In);
    else if (op->LT())
      cmp->ops.push_back(CompareOp::Lt);
    else if (op->GT())
      cmp->ops.push_back(CompareOp::Gt);
    else if (op->LE())
      cmp->ops.push_back(CompareOp::Le);
    else if (op->GE())
      cmp->ops.push_back(CompareOp::Ge);
    else if (op->EQ())
      cmp->ops.push_back(CompareOp::Eq);
    else
      cmp->ops.push_back(CompareOp::Ne);
  }
  return cmp;
}

namespace {

/// Folds `a op b op c` left to right, reading each operator token between
/// the operand contexts.
template <typename OperandCtx, typename BuildFn>
ExprPtr foldLeft(antlr4::ParserRuleContext *ctx, SourceRange whole, BuildFn build,
                 BinaryOp (*opFor)(size_t tokenType)) {
  ExprPtr result;
  BinaryOp pending{};
  // Each operator nests the tree one level deeper; the elaborator walks it
  // recursively, so very long chains are refused like deep nesting.
  if (ctx->children.size() > 2 * kMaxExpressionDepth)
    throw SyntaxError{whole, "expression has more than " + std::to_string(kMaxExpressionDepth) +
                              " operators in a row; split it into several statements"};
  for (antlr4::tree::ParseTree *child : ctx->children) {
    if (auto *operand = dynamic_cast<OperandCtx *>(child)) {
      ExprPtr next = build(operand);
      if (!result) {
        result = std::move(next);
      } else {
        SourceRange r = SourceRange::cover(result->range(), next->range());
        result = std::make_unique<BinaryExpr>(r, pending, std::move(result), std::move(next));
      }
    } else if (auto *token = dynamic_cast<TerminalNode *>(child)) {
      pending = opFor(token->getSymbol()->getType());
    }
  }
  return result;
}

BinaryOp binaryOperator(size_t tokenType) {
  switch (tokenType) {
  case P::PIPE:
    return BinaryOp::BitOr;
  case P::CARET:
    return BinaryOp::BitXor;
  case P::AMP:
    return BinaryOp::BitAnd;
  case P::LSHIFT:
    return BinaryOp::LShift;
  case P::RSHIFT:
    return BinaryOp::RShift;
  case P::PLUS:
    return BinaryOp::Add;
  case P::MINUS:
    return BinaryOp::Sub;
  case P::STAR:
    return BinaryOp::Mul;
  case P::SLASH:
    return BinaryOp::Div;
  case P::DSLASH:
    return BinaryOp::FloorDiv;
  case P::PERCENT:
    return BinaryOp::Mod;
  case P::AT:
    return BinaryOp::MatMul;
  default:
    return BinaryOp::Pow;
  }
}

} // namespace

ExprPtr ASTBuilder::buildBitOr(P::BitOrExpressionContext *ctx) {
  return foldLeft<P::BitXorExpressionContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildBitXor(c); }, binaryOperator);
}
ExprPtr ASTBuilder::buildBitXor(P::BitXorExpressionContext *ctx) {
  return foldLeft<P::BitAndExpressionContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildBitAnd(c); }, binaryOperator);
}
ExprPtr ASTBuilder::buildBitAnd(P::BitAndExpressionContext *ctx) {
  return foldLeft<P::ShiftExpressionContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildShift(c); }, binaryOperator);
}
ExprPtr ASTBuilder::buildShift(P::ShiftExpressionContext *ctx) {
  return foldLeft<P::ArithExpressionContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildArith(c); }, binaryOperator);
}
ExprPtr ASTBuilder::buildArith(P::ArithExpressionContext *ctx) {
  return foldLeft<P::TermContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildTerm(c); }, binaryOperator);
}
ExprPtr ASTBuilder::buildTerm(P::TermContext *ctx) {
  return foldLeft<P::FactorContext>(
      ctx, rangeOf(ctx), [&](auto *c) { return buildFactor(c); }, binaryOperator);
}

ExprPtr ASTBuilder::buildFactor(P::FactorContext *ctx) {
  if (ctx->power())
    return buildPower(ctx->power());
  UnaryOp op = ctx->PLUS() ? UnaryOp::Plus : ctx->MINUS() ? UnaryOp::Negate : UnaryOp::Invert;
  ExprPtr operand = buildFactor(ctx->factor());
  // Fold `-<int literal>` so that -9223372036854775808 is representable.
  return std::make_unique<UnaryExpr>(rangeOf(ctx), op, std::move(operand));
}

ExprPtr ASTBuilder::buildPower(P::PowerContext *ctx) {
  ExprPtr base = buildPrimary(ctx->primary());
  if (!ctx->factor())
    return base;
  return std::make_unique<BinaryExpr>(rangeOf(ctx), BinaryOp::Pow, std::move(base),
                                      buildFactor(ctx->factor()));
}

ExprPtr ASTBuilder::buildPrimary(P::PrimaryContext *ctx) {
  ExprPtr result = buildAtom(ctx->atom());
  SourceRange begin = result->range();
  if (ctx->trailer().size() > kMaxExpressionDepth)
    fail(rangeOf(ctx), "expression has more than " + std::to_string(kMaxExpressionDepth) +
                           " calls, subscripts or attributes in a row");
  for (P::TrailerContext *t : ctx->trailer()) {
    SourceRange range = SourceRange::cover(begin, rangeOf(t));
    if (auto *call = dynamic_cast<P::CallTrailerContext *>(t)) {
      std::vector<Argument> args;
      if (call->arguments())
        args = buildArguments(call->arguments());
      result = std::make_unique<CallExpr>(range, std::move(result), std::move(args));
    } else if (auto *sub = dynamic_cast<P::SubscriptTrailerContext *>(t)) {
      std::vector<ExprPtr> indices;
      std::vector<P::SubscriptContext *> parts = sub->subscripts()->subscript();
      for (P::SubscriptContext *s : parts)
        indices.push_back(buildSubscript(s));
      bool isTuple = parts.size() > 1 || sub->subscripts()->trailingComma;
      result = std::make_unique<SubscriptExpr>(range, std::move(result), std::move(indices),
                                               isTuple);
    } else {
      auto *attr = dynamic_cast<P::AttributeTrailerContext *>(t);
      result = std::make_unique<AttributeExpr>(range, std::move(result), attr->NAME()->getText(),
                                               rangeOf(attr->NAME()));
    }
  }
  return result;
}

ExprPtr ASTBuilder::buildSubscript(P::SubscriptContext *ctx) {
  if (auto *star = dynamic_cast<P::StarSubscriptContext *>(ctx))
    return std::make_unique<StarredExpr>(rangeOf(ctx), buildBitOr(star->bitOrExpression()));
  P::ExpressionContext *lower = nullptr;
  P::SliceTailContext *tail = nullptr;
  if (auto *index = dynamic_cast<P::IndexSubscriptContext *>(ctx)) {
    if (!index->sliceTail())
      return buildExpression(index->expression());
    lower = index->expression();
    tail = index->sliceTail();
  } else {
    tail = dynamic_cast<P::SliceSubscriptContext *>(ctx)->sliceTail();
  }
  return std::make_unique<SliceExpr>(rangeOf(ctx), lower ? buildExpression(lower) : nullptr,
                                     tail->upper ? buildExpression(tail->upper) : nullptr,
                                     tail->step ? buildExpression(tail->step) : nullptr);
}

ExprPtr ASTBuilder::comprehensionElement(P::ExpressionListContext *ctx) {
  std::vector<P::ListItemContext *> items = ctx->listItem();
  if (!items[0]->expression())
    fail(rangeOf(items[0]), "iterable unpacking cannot be used in comprehension");
  if (items.size() != 1 || ctx->trailingComma)
    fail(rangeOf(ctx), "did you forget parentheses around the comprehension target?");
  return buildExpression(items[0]->expression());
}

std::vector<Argument> ASTBuilder::buildArguments(P::ArgumentsContext *ctx) {
  std::vector<Argument> args;
  bool seenKeyword = false;
  std::vector<P::ArgumentContext *> parts = ctx->argument();
  for (P::ArgumentContext *a : parts) {
    Argument arg;
    arg.range = rangeOf(a);
    auto *positional = dynamic_cast<P::PositionalArgumentContext *>(a);
    if (positional && positional->comprehensionFor()) {
      if (parts.size() != 1)
        fail(arg.range, "generator expression must be parenthesized");
      arg.value = std::make_unique<ComprehensionExpr>(
          arg.range, ComprehensionExpr::Form::Generator, buildExpression(positional->expression()),
          buildComprehension(positional->comprehensionFor()));
    } else if (auto *kw = dynamic_cast<P::KeywordArgumentContext *>(a)) {
      arg.kind = Argument::Kind::Keyword;
      arg.name = kw->NAME()->getText();
      arg.value = buildExpression(kw->expression());
      for (const Argument &prev : args)
        if (prev.kind == Argument::Kind::Keyword && prev.name == arg.name)
          fail(arg.range, "keyword argument repeated: " + arg.name);
      seenKeyword = true;
    } else if (auto *pos = dynamic_cast<P::PositionalArgumentContext *>(a)) {
      if (seenKeyword)
        fail(arg.range, "positional argument follows keyword argument");
      arg.value = buildExpression(pos->expression());
    } else if (auto *star = dynamic_cast<P::StarArgumentContext *>(a)) {
      arg.kind = Argument::Kind::Star;
      arg.value = buildExpression(star->expression());
    } else {
      auto *dstar = dynamic_cast<P::DoubleStarArgumentContext *>(a);
      arg.kind = Argument::Kind::DoubleStar;
      arg.value = buildExpression(dstar->expression());
      seenKeyword = true;
    }
    args.push_back(std::move(arg));
  }
  return args;
}

std::vector<ComprehensionClause> ASTBuilder::buildComprehension(P::ComprehensionForContext *ctx) {
  std::vector<ComprehensionClause> clauses;
  while (ctx) {
    ComprehensionClause clause;
    clause.target = buildTargets(ctx->targets());
    checkTarget(*clause.target, /*augmented=*/false);
    clause.iterable = buildOrTest(ctx->orTest());
    for (P::ComprehensionIfContext *cond : ctx->comprehensionIf())
      clause.conditions.push_back(buildNoConditional(cond->expressionNoConditional()));
    clauses.push_back(std::move(clause));
    ctx = ctx->comprehensionFor();
  }
  return clauses;
}

ExprPtr ASTBuilder::buildAtom(P::AtomContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *paren = dynamic_cast<P::ParenAtomContext *>(ctx)) {
    if (paren->comprehensionFor())
      return std::make_unique<ComprehensionExpr>(range, ComprehensionExpr::Form::Generator,
                                                 comprehensionElement(paren->expressionList()),
                                                 buildComprehension(paren->comprehensionFor()));
    if (!paren->expressionList())
      return std::make_unique<SequenceExpr>(Expr::Kind::Tuple, range, std::vector<ExprPtr>());
    ExprPtr inner = buildExpressionList(paren->expressionList());
    // `(a, b)` keeps the parentheses in its range; `(a)` is just `a`.
    if (auto *tuple = llvm::dyn_cast<SequenceExpr>(inner.get());
        tuple && !tuple->isList() && paren->expressionList()->listItem().size() > 1)
      return std::make_unique<SequenceExpr>(Expr::Kind::Tuple, range, std::move(tuple->elements));
    if (paren->expressionList()->trailingComma)
      return std::make_unique<SequenceExpr>(Expr::Kind::Tuple, range,
                                            std::move(llvm::cast<SequenceExpr>(*inner).elements));
    return inner;
  }
  if (auto *list = dynamic_cast<P::ListAtomContext *>(ctx)) {
    if (list->comprehensionFor())
      return std::make_unique<ComprehensionExpr>(range, ComprehensionExpr::Form::List,
                                                 comprehensionElement(list->expressionList()),
                                                 buildComprehension(list->comprehensionFor()));
    std::vector<ExprPtr> elements;
    if (list->expressionList())
      for (P::ListItemContext *item : list->expressionList()->listItem())
        elements.push_back(buildListItem(item));
    return std::make_unique<SequenceExpr>(Expr::Kind::List, range, std::move(elements));
  }
  if (auto *brace = dynamic_cast<P::BraceAtomContext *>(ctx))
    return buildBraces(range, brace->braceItems());
  if (auto *name = dynamic_cast<P::NameAtomContext *>(ctx))
    return std::make_unique<NameExpr>(range, name->NAME()->getText());
  if (auto *number = dynamic_cast<P::NumberAtomContext *>(ctx))
    return buildNumber(number->NUMBER());
  if (auto *imaginary = dynamic_cast<P::ImaginaryAtomContext *>(ctx))
    return std::make_unique<ImaginaryExpr>(range, imaginary->getText());
  if (auto *strings = dynamic_cast<P::StringAtomContext *>(ctx))
    return buildStrings(strings);
  if (dynamic_cast<P::EllipsisAtomContext *>(ctx))
    return std::make_unique<EllipsisExpr>(range);
  if (dynamic_cast<P::NoneAtomContext *>(ctx))
    return std::make_unique<NoneExpr>(range);
  if (dynamic_cast<P::TrueAtomContext *>(ctx))
    return std::make_unique<BoolExpr>(range, true);
  return std::make_unique<BoolExpr>(range, false);
}

ExprPtr ASTBuilder::buildBraces(SourceRange range, P::BraceItemsContext *ctx) {
  auto dict = std::make_unique<DictExpr>(range);
  auto addDictItems = [&](P::DictTailContext *tail) {
    for (P::DictItemContext *item : tail->dictItem()) {
      if (item->POWER()) {
        dict->keys.push_back(nullptr);
        dict->values.push_back(buildBitOr(item->bitOrExpression()));
      } else {
        dict->keys.push_back(buildExpression(item->key));
        dict->values.push_back(buildExpression(item->value));
      }
    }
  };
  auto setOf = [&](ExprPtr first, P::SetTailContext *tail) -> ExprPtr {
    std::vector<ExprPtr> elements;
    elements.push_back(std::move(first));
    for (P::ListItemContext *item : tail->listItem())
      elements.push_back(buildListItem(item));
    return std::make_unique<SetExpr>(range, std::move(elements));
  };
  if (!ctx) // `{}` is an empty dict
    return dict;
  if (auto *doubleStar = dynamic_cast<P::DoubleStarFirstContext *>(ctx)) {
    dict->keys.push_back(nullptr);
    dict->values.push_back(buildBitOr(doubleStar->bitOrExpression()));
    addDictItems(doubleStar->dictTail());
    return dict;
  }
  if (auto *star = dynamic_cast<P::StarFirstContext *>(ctx))
    return setOf(std::make_unique<StarredExpr>(
                     SourceRange::cover(rangeOf(star->STAR()), rangeOf(star->bitOrExpression())),
                     buildBitOr(star->bitOrExpression())),
                 star->setTail());
  auto *items = dynamic_cast<P::ExpressionFirstContext *>(ctx);
  ExprPtr first = buildExpression(items->first);
  if (items->value) {
    if (items->comprehensionFor())
      return std::make_unique<ComprehensionExpr>(
          range, ComprehensionExpr::Form::Dict, buildExpression(items->value),
          buildComprehension(items->comprehensionFor()), std::move(first));
    dict->keys.push_back(std::move(first));
    dict->values.push_back(buildExpression(items->value));
    addDictItems(items->dictTail());
    return dict;
  }
  if (items->comprehensionFor())
    return std::make_unique<ComprehensionExpr>(range, ComprehensionExpr::Form::Set,
                                               std::move(first),
                                               buildComprehension(items->comprehensionFor()));
  return setOf(std::move(first), items->setTail());
}

ExprPtr ASTBuilder::buildNumber(TerminalNode *node) {
  SourceRange range = rangeOf(node);
  std::string text;
  for (char c : node->getText())
    if (c != '_')
      text += c;
  bool isFloat = text.find_first_of(".eE") != std::string::npos &&
                 !(text.size() > 1 && (text[1] == 'x' || text[1] == 'X'));
  if (isFloat) {
    errno = 0;
    double value = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE && std::abs(value) > 1.0)
      fail(range, "float literal out of range");
    return std::make_unique<FloatExpr>(range, value);
  }
  int base = 10;
  std::string digits = text;
  if (text.size() > 2 && text[0] == '0') {
    char prefix = static_cast<char>(std::tolower(text[1]));
    if (prefix == 'x' || prefix == 'o' || prefix == 'b') {
      base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
      digits = text.substr(2);
    }
  }
  errno = 0;
  unsigned long long value = std::strtoull(digits.c_str(), nullptr, base);
  if (errno == ERANGE || value > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()))
    fail(range, "integer literal '" + node->getText() + "' does not fit in 64 bits");
  return std::make_unique<IntExpr>(range, static_cast<int64_t>(value));
}

namespace {

/// Decodes the escapes of a non-raw string body.
std::string unescape(const std::string &body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case 'r':
      out += '\r';
      break;
    case '0':
      out += '\0';
      break;
    case '\\':
    case '\'':
    case '"':
      out += e;
      break;
    case '\n':
      break; // line continuation inside a string
    case 'x':
      if (i + 2 < body.size() && std::isxdigit(static_cast<unsigned char>(body[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(body[i + 2]))) {
        out += static_cast<char>(std::stoi(body.substr(i + 1, 2), nullptr, 16));
        i += 2;
        break;
      }
      [[fallthrough]];
    default:
      out += '\\';
      out += e;
    }
  }
  return out;
}

} // namespace

ExprPtr ASTBuilder::buildStrings(P::StringAtomContext *ctx) {
  std::string value;
  bool formatted = false;
  std::vector<FormatPart> parts;
  for (TerminalNode *node : ctx->STRING()) {
    std::string text = node->getText();
    size_t quote = text.find_first_of("'\"");
    std::string prefix = text.substr(0, quote);
    bool raw = prefix.find_first_of("rR") != std::string::npos;
    if (prefix.find_first_of("bB") != std::string::npos)
      fail(rangeOf(node), "bytes literals are not supported");
    std::string body = text.substr(quote);
    size_t delimiter = (body.size() >= 6 && body[0] == body[1] && body[1] == body[2]) ? 3 : 1;
    body = body.substr(delimiter, body.size() - 2 * delimiter);
    if (prefix.find_first_of("fF") != std::string::npos) {
      formatted = true;
      SourceLocation at = rangeOf(node).begin;
      at.column += static_cast<uint32_t>(quote + delimiter);
      parseFormatted(body, 0, at, raw, /*inSpec=*/false, parts);
      continue;
    }
    FormatPart literal;
    literal.literal = raw ? body : unescape(body);
    parts.push_back(std::move(literal));
  }
  auto result = std::make_unique<StringExpr>(rangeOf(ctx), std::string(), formatted);
  if (!formatted) {
    for (const FormatPart &p : parts)
      result->value += p.literal;
    return result;
  }
  // Adjacent literal pieces merge, as Python's JoinedStr does.
  for (FormatPart &p : parts) {
    if (!p.value && !result->parts.empty() && !result->parts.back().value)
      result->parts.back().literal += p.literal;
    else
      result->parts.push_back(std::move(p));
  }
  return result;
}

namespace {

/// Advances `at` past `c`, as the file's line and column count it.
void advance(SourceLocation &at, char c) {
  if (c == '\n') {
    ++at.line;
    at.column = 1;
  } else {
    ++at.column;
  }
}

} // namespace

size_t ASTBuilder::parseFormatted(const std::string &body, size_t i, SourceLocation &at, bool raw,
                                  bool inSpec, std::vector<FormatPart> &parts) {
  std::string literal;
  auto flushLiteral = [&] {
    if (literal.empty())
      return;
    FormatPart part;
    part.literal = raw ? literal : unescape(literal);
    parts.push_back(std::move(part));
    literal.clear();
  };
  while (i < body.size()) {
    char c = body[i];
    if (c == '{' && i + 1 < body.size() && body[i + 1] == '{' && !inSpec) {
      literal += '{';
      advance(at, c);
      advance(at, c);
      i += 2;
      continue;
    }
    if (c == '}') {
      if (inSpec)
        break; // the end of the enclosing field
      if (i + 1 < body.size() && body[i + 1] == '}') {
        literal += '}';
        advance(at, c);
        advance(at, c);
        i += 2;
        continue;
      }
      fail(SourceRange(at, at), "f-string: single '}' is not allowed");
    }
    if (c != '{') {
      literal += c;
      if (c == '\\' && i + 1 < body.size()) { // keep an escape's second character
        literal += body[i + 1];
        advance(at, c);
        c = body[++i];
      }
      advance(at, c);
      ++i;
      continue;
    }
    flushLiteral();
    SourceLocation fieldStart = at;
    advance(at, c);
    ++i;
    // The expression runs to the first '}', '!' (not '!='), ':' or a
    // debugging '=' outside brackets and strings.
    size_t start = i;
    SourceLocation exprStart = at;
    int depth = 0;
    char quote = 0;
    size_t end = std::string::npos;
    for (; i < body.size(); advance(at, body[i]), ++i) {
      char d = body[i];
      if (quote) {
        if (d == quote)
          quote = 0;
        continue;
      }
      if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(' || d == '[' || d == '{') {
        ++depth;
      } else if ((d == ')' || d == ']' || d == '}') && depth > 0) {
        --depth;
      } else if (depth == 0 && (d == '}' || d == ':' ||
                                (d == '!' && (i + 1 >= body.size() || body[i + 1] != '=')))) {
        end = i;
        break;
      }
    }
    if (end == std::string::npos)
      fail(SourceRange(fieldStart, fieldStart), "f-string: expecting '}'");
    std::string expression = body.substr(start, end - start);
    FormatPart part;
    // `{x=}`: the text up to and including '=' is printed before the value.
    size_t last = expression.find_last_not_of(" \t\n");
    if (last != std::string::npos && expression[last] == '=' &&
        (last == 0 || std::string("=!<>").find(expression[last - 1]) == std::string::npos)) {
      part.debugText = expression;
      expression = expression.substr(0, last);
      part.conversion = 'r'; // as Python: repr unless a conversion or spec says otherwise
    }
    if (expression.find_first_not_of(" \t\n") == std::string::npos)
      fail(SourceRange(fieldStart, fieldStart), "f-string: empty expression not allowed");
    if (!embeddedParser)
      fail(SourceRange(fieldStart, fieldStart), "f-string fields cannot be parsed here");
    part.value = embeddedParser(expression, exprStart);
    if (i < body.size() && body[i] == '!') {
      advance(at, body[i]);
      ++i;
      if (i >= body.size() || std::string("rsa").find(body[i]) == std::string::npos)
        fail(SourceRange(at, at), "f-string: invalid conversion character: expected 's', 'r', "
                                  "or 'a'");
      part.conversion = body[i];
      advance(at, body[i]);
      ++i;
    }
    if (i < body.size() && body[i] == ':') {
      advance(at, body[i]);
      ++i;
      if (!part.debugText.empty() && part.conversion == 'r')
        part.conversion = 0; // `{x=:.2f}` formats the value, not its repr
      i = parseFormatted(body, i, at, raw, /*inSpec=*/true, part.spec);
    }
    if (i >= body.size() || body[i] != '}')
      fail(SourceRange(fieldStart, fieldStart), "f-string: expecting '}'");
    advance(at, body[i]);
    ++i;
    parts.push_back(std::move(part));
  }
  flushLiteral();
  return i;
}

} // namespace pk
