//===- AST.h - The .pk abstract syntax tree ---------------------*- C++ -*-===//
//
// pkc's own syntax tree, built from the ANTLR parse tree by ASTBuilder. It
// mirrors Python's `ast` module for the supported subset, and every node
// carries the source range it came from so that any later error - in the
// elaborator or in a backend - can point at the user's line.
//
// Nodes are owned by their parent through std::unique_ptr; the Module owns
// the whole tree and must outlive every elaboration that reads it (closures
// keep raw pointers to function bodies).
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_AST_AST_H
#define PK_FRONTEND_AST_AST_H

#include "support/SourceManager.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Casting.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace pk::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Name,
    Int,
    Float,
    String,
    Bool,
    None,
    Ellipsis,
    Imaginary,
    Tuple,
    List,
    Dict,
    Set,
    Attribute,
    Subscript,
    Slice,
    Call,
    Unary,
    Binary,
    Compare,
    BoolOp,
    Conditional,
    Lambda,
    Comprehension,
    Starred,
    Named,
  };

  virtual ~Expr() = default;
  Kind kind() const { return exprKind; }
  SourceRange range() const { return sourceRange; }

protected:
  Expr(Kind kind, SourceRange range) : exprKind(kind), sourceRange(range) {}

private:
  Kind exprKind;
  SourceRange sourceRange;
};

using ExprPtr = std::unique_ptr<Expr>;

#define PK_AST_EXPR_CLASSOF(K)                                                   \
  static bool classof(const Expr *e) { return e->kind() == Kind::K; }

class NameExpr : public Expr {
public:
  NameExpr(SourceRange r, std::string name) : Expr(Kind::Name, r), name(std::move(name)) {}
  PK_AST_EXPR_CLASSOF(Name)
  std::string name;
};

class IntExpr : public Expr {
public:
  IntExpr(SourceRange r, int64_t value) : Expr(Kind::Int, r), value(value) {}
  PK_AST_EXPR_CLASSOF(Int)
  int64_t value;
};

class FloatExpr : public Expr {
public:
  FloatExpr(SourceRange r, double value) : Expr(Kind::Float, r), value(value) {}
  PK_AST_EXPR_CLASSOF(Float)
  double value;
};

/// One piece of an f-string: literal text, or a replacement field
/// `{value!conversion:spec}` (`{value=}` also prints its own text).
struct FormatPart {
  std::string literal;           ///< the text, when `value` is null
  std::unique_ptr<Expr> value;   ///< the field's expression
  char conversion = 0;           ///< 'r', 's', 'a' or 0
  std::vector<FormatPart> spec;  ///< the format spec, itself an f-string
  std::string debugText;         ///< `x=` of `{x=}`: printed before the value
};

class StringExpr : public Expr {
public:
  StringExpr(SourceRange r, std::string value, bool formatted)
      : Expr(Kind::String, r), value(std::move(value)), formatted(formatted) {}
  PK_AST_EXPR_CLASSOF(String)
  std::string value;  ///< a plain string's text
  bool formatted;     ///< an f-string: `parts` holds it, `value` is unused
  std::vector<FormatPart> parts;
};

class BoolExpr : public Expr {
public:
  BoolExpr(SourceRange r, bool value) : Expr(Kind::Bool, r), value(value) {}
  PK_AST_EXPR_CLASSOF(Bool)
  bool value;
};

class NoneExpr : public Expr {
public:
  explicit NoneExpr(SourceRange r) : Expr(Kind::None, r) {}
  PK_AST_EXPR_CLASSOF(None)
};

class EllipsisExpr : public Expr {
public:
  explicit EllipsisExpr(SourceRange r) : Expr(Kind::Ellipsis, r) {}
  PK_AST_EXPR_CLASSOF(Ellipsis)
};

/// An imaginary literal (`1j`): pkc has no complex numbers, so evaluating
/// one is an error; a module may still hold one in code it never runs.
class ImaginaryExpr : public Expr {
public:
  ImaginaryExpr(SourceRange r, std::string text)
      : Expr(Kind::Imaginary, r), text(std::move(text)) {}
  PK_AST_EXPR_CLASSOF(Imaginary)
  std::string text;
};

/// `(a, b)`, `a, b` and `[a, b]`.
class SequenceExpr : public Expr {
public:
  SequenceExpr(Kind kind, SourceRange r, std::vector<ExprPtr> elements)
      : Expr(kind, r), elements(std::move(elements)) {}
  static bool classof(const Expr *e) {
    return e->kind() == Kind::Tuple || e->kind() == Kind::List;
  }
  bool isList() const { return kind() == Kind::List; }
  std::vector<ExprPtr> elements;
};

class DictExpr : public Expr {
public:
  DictExpr(SourceRange r) : Expr(Kind::Dict, r) {}
  PK_AST_EXPR_CLASSOF(Dict)
  /// A null key marks a `**mapping` entry.
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
};

/// `{a, b, *c}`: a set display (never empty: `{}` is a dict).
class SetExpr : public Expr {
public:
  SetExpr(SourceRange r, std::vector<ExprPtr> elements)
      : Expr(Kind::Set, r), elements(std::move(elements)) {}
  PK_AST_EXPR_CLASSOF(Set)
  std::vector<ExprPtr> elements;
};

class AttributeExpr : public Expr {
public:
  AttributeExpr(SourceRange r, ExprPtr value, std::string attribute, SourceRange attributeRange)
      : Expr(Kind::Attribute, r), value(std::move(value)), attribute(std::move(attribute)),
        attributeRange(attributeRange) {}
  PK_AST_EXPR_CLASSOF(Attribute)
  ExprPtr value;
  std::string attribute;
  SourceRange attributeRange;
};

/// `lower:upper:step`, only inside a subscript.
class SliceExpr : public Expr {
public:
  SliceExpr(SourceRange r, ExprPtr lower, ExprPtr upper, ExprPtr step)
      : Expr(Kind::Slice, r), lower(std::move(lower)), upper(std::move(upper)),
        step(std::move(step)) {}
  PK_AST_EXPR_CLASSOF(Slice)
  ExprPtr lower, upper, step; // each may be null
};

/// `value[i]` or `value[i, j:k, ...]`. Several indices (or a trailing comma)
/// form a tuple index, as in Python.
class SubscriptExpr : public Expr {
public:
  SubscriptExpr(SourceRange r, ExprPtr value, std::vector<ExprPtr> indices, bool isTuple)
      : Expr(Kind::Subscript, r), value(std::move(value)), indices(std::move(indices)),
        isTuple(isTuple) {}
  PK_AST_EXPR_CLASSOF(Subscript)
  ExprPtr value;
  std::vector<ExprPtr> indices;
  bool isTuple;
};

struct Argument {
  enum class Kind { Positional, Keyword, Star, DoubleStar };
  Kind kind = Kind::Positional;
  std::string name; ///< keyword arguments only
  ExprPtr value;
  SourceRange range;
};

class CallExpr : public Expr {
public:
  CallExpr(SourceRange r, ExprPtr callee, std::vector<Argument> arguments)
      : Expr(Kind::Call, r), callee(std::move(callee)), arguments(std::move(arguments)) {}
  PK_AST_EXPR_CLASSOF(Call)
  ExprPtr callee;
  std::vector<Argument> arguments;
};

enum class UnaryOp { Negate, Plus, Invert, Not };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  LShift,
  RShift,
  BitOr,
  BitXor,
  BitAnd,
};
enum class CompareOp { Lt, Gt, Le, Ge, Eq, Ne, In, NotIn, Is, IsNot };
enum class BoolOp { And, Or };

const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);
const char *spelling(CompareOp op);
const char *spelling(BoolOp op);

class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceRange r, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, r), op(op), operand(std::move(operand)) {}
  PK_AST_EXPR_CLASSOF(Unary)
  UnaryOp op;
  ExprPtr operand;
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(SourceRange r, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, r), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  PK_AST_EXPR_CLASSOF(Binary)
  BinaryOp op;
  ExprPtr lhs, rhs;
};

/// `a < b <= c`: operands.size() == ops.size() + 1.
class CompareExpr : public Expr {
public:
  CompareExpr(SourceRange r) : Expr(Kind::Compare, r) {}
  PK_AST_EXPR_CLASSOF(Compare)
  std::vector<ExprPtr> operands;
  std::vector<CompareOp> ops;
};

class BoolOpExpr : public Expr {
public:
  BoolOpExpr(SourceRange r, BoolOp op, std::vector<ExprPtr> operands)
      : Expr(Kind::BoolOp, r), op(op), operands(std::move(operands)) {}
  PK_AST_EXPR_CLASSOF(BoolOp)
  BoolOp op;
  std::vector<ExprPtr> operands;
};

/// `body if condition else orelse`
class ConditionalExpr : public Expr {
public:
  ConditionalExpr(SourceRange r, ExprPtr body, ExprPtr condition, ExprPtr orelse)
      : Expr(Kind::Conditional, r), body(std::move(body)), condition(std::move(condition)),
        orelse(std::move(orelse)) {}
  PK_AST_EXPR_CLASSOF(Conditional)
  ExprPtr body, condition, orelse;
};

struct Parameter {
  enum class Kind {
    Positional,     ///< may be passed by position or keyword
    PositionalOnly, ///< before a `/`
    KeywordOnly,    ///< after `*` or `*args`
    VarPositional,  ///< `*args`
    VarKeyword,     ///< `**kwargs`
  };
  Kind kind = Kind::Positional;
  std::string name;
  ExprPtr annotation;   // may be null
  ExprPtr defaultValue; // may be null
  SourceRange range;
};

class LambdaExpr : public Expr {
public:
  LambdaExpr(SourceRange r, std::vector<Parameter> parameters, ExprPtr body)
      : Expr(Kind::Lambda, r), parameters(std::move(parameters)), body(std::move(body)) {}
  PK_AST_EXPR_CLASSOF(Lambda)
  std::vector<Parameter> parameters;
  ExprPtr body;
  /// Names its body assigns with `:=` (locals of the lambda).
  std::vector<std::string> namedTargets;
};

/// `name := value`: assigns the name in the enclosing function's scope
/// (also from a comprehension) and is the value.
class NamedExpr : public Expr {
public:
  NamedExpr(SourceRange r, ExprPtr target, ExprPtr value)
      : Expr(Kind::Named, r), target(std::move(target)), value(std::move(value)) {}
  PK_AST_EXPR_CLASSOF(Named)
  ExprPtr target; ///< a NameExpr
  ExprPtr value;
};

struct ComprehensionClause {
  ExprPtr target;
  ExprPtr iterable;
  std::vector<ExprPtr> conditions;
};

/// `[element for target in iterable if condition ...]`, the set and dict
/// forms `{element for ...}` and `{key: element for ...}`, and the
/// generator form `f(x for x in xs)`, which .pk evaluates eagerly into a
/// tuple.
class ComprehensionExpr : public Expr {
public:
  enum class Form { Generator, List, Set, Dict };
  ComprehensionExpr(SourceRange r, Form form, ExprPtr element,
                    std::vector<ComprehensionClause> clauses, ExprPtr key = nullptr)
      : Expr(Kind::Comprehension, r), form(form), key(std::move(key)), element(std::move(element)),
        clauses(std::move(clauses)) {}
  PK_AST_EXPR_CLASSOF(Comprehension)
  Form form;
  ExprPtr key; ///< a dict comprehension's key; null otherwise
  ExprPtr element;
  std::vector<ComprehensionClause> clauses;
};

/// `*value` in a call, a display or an assignment target.
class StarredExpr : public Expr {
public:
  StarredExpr(SourceRange r, ExprPtr value) : Expr(Kind::Starred, r), value(std::move(value)) {}
  PK_AST_EXPR_CLASSOF(Starred)
  ExprPtr value;
};

#undef PK_AST_EXPR_CLASSOF

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind {
    Expr,
    Assign,
    AugAssign,
    AnnAssign,
    Return,
    Yield,
    TypeAlias,
    Pass,
    Break,
    Continue,
    If,
    For,
    While,
    FunctionDef,
    Import,
    ImportFrom,
    Assert,
    Raise,
    Nonlocal,
    Del,
    ClassDef,
    With,
    Try,
    Match,
  };

  virtual ~Stmt() = default;
  Kind kind() const { return stmtKind; }
  SourceRange range() const { return sourceRange; }

protected:
  Stmt(Kind kind, SourceRange range) : stmtKind(kind), sourceRange(range) {}

private:
  Kind stmtKind;
  SourceRange sourceRange;
};

using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

#define PK_AST_STMT_CLASSOF(K)                                                   \
  static bool classof(const Stmt *s) { return s->kind() == Kind::K; }

class ExprStmt : public Stmt {
public:
  ExprStmt(SourceRange r, ExprPtr value) : Stmt(Kind::Expr, r), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(Expr)
  ExprPtr value;
};

/// `t1 = t2 = value`
class AssignStmt : public Stmt {
public:
  AssignStmt(SourceRange r, std::vector<ExprPtr> targets, ExprPtr value)
      : Stmt(Kind::Assign, r), targets(std::move(targets)), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(Assign)
  std::vector<ExprPtr> targets;
  ExprPtr value;
};

class AugAssignStmt : public Stmt {
public:
  AugAssignStmt(SourceRange r, ExprPtr target, BinaryOp op, ExprPtr value)
      : Stmt(Kind::AugAssign, r), target(std::move(target)), op(op), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(AugAssign)
  ExprPtr target;
  BinaryOp op;
  ExprPtr value;
};

class AnnAssignStmt : public Stmt {
public:
  AnnAssignStmt(SourceRange r, ExprPtr target, ExprPtr annotation, ExprPtr value)
      : Stmt(Kind::AnnAssign, r), target(std::move(target)), annotation(std::move(annotation)),
        value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(AnnAssign)
  ExprPtr target, annotation, value; // value may be null
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(SourceRange r, ExprPtr value) : Stmt(Kind::Return, r), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(Return)
  ExprPtr value; // may be null
};

/// `yield` / `yield value` as a statement: the one place a generator
/// function (run by @contextlib.contextmanager) hands its caller a value.
class YieldStmt : public Stmt {
public:
  YieldStmt(SourceRange r, ExprPtr value) : Stmt(Kind::Yield, r), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(Yield)
  ExprPtr value; // may be null
};

/// `type Name[T] = value` (PEP 695): Python evaluates `value` when the
/// alias is used; its type parameters name nothing.
class TypeAliasStmt : public Stmt {
public:
  TypeAliasStmt(SourceRange r, std::string name, ExprPtr value)
      : Stmt(Kind::TypeAlias, r), name(std::move(name)), value(std::move(value)) {}
  PK_AST_STMT_CLASSOF(TypeAlias)
  std::string name;
  ExprPtr value;
};

class PassStmt : public Stmt {
public:
  explicit PassStmt(SourceRange r) : Stmt(Kind::Pass, r) {}
  PK_AST_STMT_CLASSOF(Pass)
};

class BreakStmt : public Stmt {
public:
  explicit BreakStmt(SourceRange r) : Stmt(Kind::Break, r) {}
  PK_AST_STMT_CLASSOF(Break)
};

class ContinueStmt : public Stmt {
public:
  explicit ContinueStmt(SourceRange r) : Stmt(Kind::Continue, r) {}
  PK_AST_STMT_CLASSOF(Continue)
};

/// `if`; an `elif` chain is nested ifs in `orelse`.
class IfStmt : public Stmt {
public:
  IfStmt(SourceRange r, ExprPtr condition, StmtList body, StmtList orelse)
      : Stmt(Kind::If, r), condition(std::move(condition)), body(std::move(body)),
        orelse(std::move(orelse)) {}
  PK_AST_STMT_CLASSOF(If)
  ExprPtr condition;
  StmtList body, orelse;
};

class ForStmt : public Stmt {
public:
  ForStmt(SourceRange r, ExprPtr target, ExprPtr iterable, StmtList body, StmtList orelse)
      : Stmt(Kind::For, r), target(std::move(target)), iterable(std::move(iterable)),
        body(std::move(body)), orelse(std::move(orelse)) {}
  PK_AST_STMT_CLASSOF(For)
  ExprPtr target, iterable;
  StmtList body, orelse;
};

class WhileStmt : public Stmt {
public:
  WhileStmt(SourceRange r, ExprPtr condition, StmtList body, StmtList orelse)
      : Stmt(Kind::While, r), condition(std::move(condition)), body(std::move(body)),
        orelse(std::move(orelse)) {}
  PK_AST_STMT_CLASSOF(While)
  ExprPtr condition;
  StmtList body, orelse;
};

class FunctionDefStmt : public Stmt {
public:
  FunctionDefStmt(SourceRange r) : Stmt(Kind::FunctionDef, r) {}
  PK_AST_STMT_CLASSOF(FunctionDef)
  std::string name;
  SourceRange nameRange;
  std::vector<ExprPtr> decorators;
  std::vector<Parameter> parameters;
  ExprPtr returnAnnotation; // may be null
  StmtList body;
  /// Names the body assigns with `:=`, in any expression (locals too).
  std::vector<std::string> namedTargets;
};

struct ImportedName {
  std::string name; ///< a dotted module path for `import`, a plain name for `from`
  std::string alias; ///< empty when there is no `as`
  SourceRange range;
};

class ImportStmt : public Stmt {
public:
  ImportStmt(SourceRange r) : Stmt(Kind::Import, r) {}
  PK_AST_STMT_CLASSOF(Import)
  std::vector<ImportedName> modules;
};

class ImportFromStmt : public Stmt {
public:
  ImportFromStmt(SourceRange r) : Stmt(Kind::ImportFrom, r) {}
  PK_AST_STMT_CLASSOF(ImportFrom)
  std::string module; ///< dotted, without the leading dots
  unsigned level = 0; ///< leading dots of a relative import
  SourceRange moduleRange;
  bool importsAll = false; ///< `from m import *`
  std::vector<ImportedName> names;
};

class AssertStmt : public Stmt {
public:
  AssertStmt(SourceRange r, ExprPtr condition, ExprPtr message)
      : Stmt(Kind::Assert, r), condition(std::move(condition)), message(std::move(message)) {}
  PK_AST_STMT_CLASSOF(Assert)
  ExprPtr condition, message; // message may be null
};

class RaiseStmt : public Stmt {
public:
  RaiseStmt(SourceRange r, ExprPtr exception) : Stmt(Kind::Raise, r), exception(std::move(exception)) {}
  PK_AST_STMT_CLASSOF(Raise)
  ExprPtr exception; // may be null
  ExprPtr cause;     ///< `raise exception from cause`; may be null
};

/// `nonlocal a, b`, or `global a, b` (isGlobal): names a function assigns
/// that are not its own.
class NonlocalStmt : public Stmt {
public:
  NonlocalStmt(SourceRange r, std::vector<std::string> names, bool isGlobal = false)
      : Stmt(Kind::Nonlocal, r), names(std::move(names)), isGlobal(isGlobal) {}
  PK_AST_STMT_CLASSOF(Nonlocal)
  std::vector<std::string> names;
  bool isGlobal;
};

/// `del a, b[i]`: unbinds names and removes items (not attributes), in
/// order.
class DelStmt : public Stmt {
public:
  DelStmt(SourceRange r, ExprPtr targetList, std::vector<const Expr *> targets,
          std::vector<std::string> names)
      : Stmt(Kind::Del, r), targetList(std::move(targetList)), targets(std::move(targets)),
        names(std::move(names)) {}
  PK_AST_STMT_CLASSOF(Del)
  ExprPtr targetList;                ///< owns the targets
  std::vector<const Expr *> targets; ///< NameExprs and SubscriptExprs
  std::vector<std::string> names;    ///< the names among them (locals of a function)
};

/// `class Name(bases): body`. `bases` holds the positional and keyword
/// arguments of the parenthesized list (`metaclass=...` among them).
class ClassDefStmt : public Stmt {
public:
  ClassDefStmt(SourceRange r) : Stmt(Kind::ClassDef, r) {}
  PK_AST_STMT_CLASSOF(ClassDef)
  std::string name;
  SourceRange nameRange;
  std::vector<ExprPtr> decorators;
  std::vector<Argument> bases;
  StmtList body;
};

/// `with context as target, ...: body`.
class WithStmt : public Stmt {
public:
  struct Item {
    ExprPtr context;
    ExprPtr target; ///< may be null
  };
  WithStmt(SourceRange r) : Stmt(Kind::With, r) {}
  PK_AST_STMT_CLASSOF(With)
  std::vector<Item> items;
  StmtList body;
};

/// `try: body except Type as name: handler ... else: orelse finally: final`.
class TryStmt : public Stmt {
public:
  struct Handler {
    ExprPtr type;     ///< null for a bare `except:`
    std::string name; ///< empty without `as`
    SourceRange range;
    StmtList body;
  };
  TryStmt(SourceRange r) : Stmt(Kind::Try, r) {}
  PK_AST_STMT_CLASSOF(Try)
  StmtList body;
  std::vector<Handler> handlers;
  StmtList orelse, finalBody;
};

/// A `case` pattern (PEP 634), built from the expression it was parsed as.
struct Pattern {
  enum class Kind {
    Wildcard, ///< `_`
    Capture,  ///< `name`: binds the subject
    Value,    ///< `a.b`, a literal: `subject == value`
    Singleton, ///< `None`, `True`, `False`: `subject is value`
    Sequence, ///< `[p, *rest]`, `(p, q)`, `p, q`
    Star,     ///< `*rest` in a sequence (`name` empty for `*_`)
    Or,       ///< `p | q`
    As,       ///< `p as name`
    Class,    ///< `Cls(p, key=q)`
    Mapping,  ///< `{key: p, **rest}`
  };
  Kind kind = Kind::Wildcard;
  SourceRange range;
  std::string name;              ///< Capture, Star, As; Mapping: the `**rest` name
  ExprPtr value;                 ///< Value, Singleton; Class: the class
  std::vector<Pattern> elements; ///< Sequence, Or, Class positional; As: the pattern
  std::vector<std::string> keywords; ///< Class: the keyword names
  std::vector<Pattern> keywordPatterns;
  std::vector<ExprPtr> keys;     ///< Mapping, with `elements` as their patterns
};

/// `match subject: case pattern if guard: body ...`.
class MatchStmt : public Stmt {
public:
  struct Case {
    Pattern pattern;
    ExprPtr guard; ///< may be null
    StmtList body;
  };
  MatchStmt(SourceRange r) : Stmt(Kind::Match, r) {}
  PK_AST_STMT_CLASSOF(Match)
  ExprPtr subject;
  std::vector<Case> cases;
};

#undef PK_AST_STMT_CLASSOF

/// Calls `visit` on each statement list nested directly in `s` (the
/// bodies of for, while, if, with, try and match; not of definitions,
/// which are scopes of their own).
void forEachNestedBody(const Stmt &s, llvm::function_ref<void(const StmtList &)> visit);

/// One parsed .pk file.
struct Module {
  uint32_t file = 0;
  StmtList body;
};

/// Writes the tree as an indented outline with source positions; this is
/// what `pkc compile --emit=ast` prints.
void dump(const Module &module, const SourceManager &sources, llvm::raw_ostream &os);

} // namespace pk::ast

#endif // PK_FRONTEND_AST_AST_H
