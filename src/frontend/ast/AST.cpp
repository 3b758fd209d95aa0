//===- AST.cpp - Operator spellings and the AST dump ----------------------===//
#include "frontend/ast/AST.h"

#include "llvm/Support/raw_ostream.h"

namespace pk::ast {

const char *spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Negate:
    return "-";
  case UnaryOp::Plus:
    return "+";
  case UnaryOp::Invert:
    return "~";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::LShift:
    return "<<";
  case BinaryOp::RShift:
    return ">>";
  case BinaryOp::BitOr:
    return "|";
  case BinaryOp::BitXor:
    return "^";
  case BinaryOp::BitAnd:
    return "&";
  }
  return "?";
}

const char *spelling(CompareOp op) {
  switch (op) {
  case CompareOp::Lt:
    return "<";
  case CompareOp::Gt:
    return ">";
  case CompareOp::Le:
    return "<=";
  case CompareOp::Ge:
    return ">=";
  case CompareOp::Eq:
    return "==";
  case CompareOp::Ne:
    return "!=";
  case CompareOp::In:
    return "in";
  case CompareOp::NotIn:
    return "not in";
  case CompareOp::Is:
    return "is";
  case CompareOp::IsNot:
    return "is not";
  }
  return "?";
}

const char *spelling(BoolOp op) { return op == BoolOp::And ? "and" : "or"; }

namespace {

class Dumper {
public:
  explicit Dumper(llvm::raw_ostream &os) : os(os) {}

  void module(const Module &m, const SourceManager &sources) {
    os << "Module \"" << sources.name(m.file) << "\"\n";
    statements(m.body, 1);
  }

private:
  llvm::raw_ostream &os;

  void line(unsigned depth, llvm::StringRef text, SourceRange r) {
    os.indent(depth * 2) << text;
    if (r.isValid())
      os << " @" << r.begin.line << ':' << r.begin.column;
    os << '\n';
  }

  void statements(const StmtList &body, unsigned depth) {
    for (const StmtPtr &s : body)
      statement(*s, depth);
  }

  void block(llvm::StringRef label, const StmtList &body, unsigned depth) {
    if (body.empty())
      return;
    os.indent(depth * 2) << label << ":\n";
    statements(body, depth + 1);
  }

  void parameters(const std::vector<Parameter> &params, unsigned depth) {
    for (const Parameter &p : params) {
      std::string text = "Parameter ";
      switch (p.kind) {
      case Parameter::Kind::VarPositional:
        text += "*";
        break;
      case Parameter::Kind::VarKeyword:
        text += "**";
        break;
      default:
        break;
      }
      text += p.name;
      if (p.kind == Parameter::Kind::PositionalOnly)
        text += " (positional-only)";
      if (p.kind == Parameter::Kind::KeywordOnly)
        text += " (keyword-only)";
      line(depth, text, p.range);
      if (p.annotation) {
        os.indent((depth + 1) * 2) << "annotation:\n";
        expression(*p.annotation, depth + 2);
      }
      if (p.defaultValue) {
        os.indent((depth + 1) * 2) << "default:\n";
        expression(*p.defaultValue, depth + 2);
      }
    }
  }

  void statement(const Stmt &s, unsigned depth) {
    switch (s.kind()) {
    case Stmt::Kind::Expr:
      line(depth, "ExprStmt", s.range());
      expression(*llvm::cast<ExprStmt>(s).value, depth + 1);
      return;
    case Stmt::Kind::Assign: {
      const auto &a = llvm::cast<AssignStmt>(s);
      line(depth, "Assign", s.range());
      for (const ExprPtr &t : a.targets)
        expression(*t, depth + 1);
      expression(*a.value, depth + 1);
      return;
    }
    case Stmt::Kind::AugAssign: {
      const auto &a = llvm::cast<AugAssignStmt>(s);
      line(depth, std::string("AugAssign ") + spelling(a.op) + "=", s.range());
      expression(*a.target, depth + 1);
      expression(*a.value, depth + 1);
      return;
    }
    case Stmt::Kind::AnnAssign: {
      const auto &a = llvm::cast<AnnAssignStmt>(s);
      line(depth, "AnnAssign", s.range());
      expression(*a.target, depth + 1);
      expression(*a.annotation, depth + 1);
      if (a.value)
        expression(*a.value, depth + 1);
      return;
    }
    case Stmt::Kind::Return: {
      const auto &r = llvm::cast<ReturnStmt>(s);
      line(depth, "Return", s.range());
      if (r.value)
        expression(*r.value, depth + 1);
      return;
    }
    case Stmt::Kind::Yield: {
      const auto &y = llvm::cast<YieldStmt>(s);
      line(depth, "Yield", s.range());
      if (y.value)
        expression(*y.value, depth + 1);
      return;
    }
    case Stmt::Kind::TypeAlias: {
      const auto &t = llvm::cast<TypeAliasStmt>(s);
      line(depth, "TypeAlias " + t.name, s.range());
      expression(*t.value, depth + 1);
      return;
    }
    case Stmt::Kind::Pass:
      line(depth, "Pass", s.range());
      return;
    case Stmt::Kind::Break:
      line(depth, "Break", s.range());
      return;
    case Stmt::Kind::Continue:
      line(depth, "Continue", s.range());
      return;
    case Stmt::Kind::If: {
      const auto &i = llvm::cast<IfStmt>(s);
      line(depth, "If", s.range());
      expression(*i.condition, depth + 1);
      block("then", i.body, depth + 1);
      block("else", i.orelse, depth + 1);
      return;
    }
    case Stmt::Kind::For: {
      const auto &f = llvm::cast<ForStmt>(s);
      line(depth, "For", s.range());
      expression(*f.target, depth + 1);
      expression(*f.iterable, depth + 1);
      block("body", f.body, depth + 1);
      block("else", f.orelse, depth + 1);
      return;
    }
    case Stmt::Kind::While: {
      const auto &w = llvm::cast<WhileStmt>(s);
      line(depth, "While", s.range());
      expression(*w.condition, depth + 1);
      block("body", w.body, depth + 1);
      block("else", w.orelse, depth + 1);
      return;
    }
    case Stmt::Kind::FunctionDef: {
      const auto &f = llvm::cast<FunctionDefStmt>(s);
      line(depth, "FunctionDef " + f.name, s.range());
      for (const ExprPtr &d : f.decorators) {
        os.indent((depth + 1) * 2) << "decorator:\n";
        expression(*d, depth + 2);
      }
      parameters(f.parameters, depth + 1);
      if (f.returnAnnotation) {
        os.indent((depth + 1) * 2) << "returns:\n";
        expression(*f.returnAnnotation, depth + 2);
      }
      block("body", f.body, depth + 1);
      return;
    }
    case Stmt::Kind::Import: {
      const auto &i = llvm::cast<ImportStmt>(s);
      line(depth, "Import", s.range());
      for (const ImportedName &n : i.modules)
        line(depth + 1, n.alias.empty() ? n.name : n.name + " as " + n.alias, n.range);
      return;
    }
    case Stmt::Kind::ImportFrom: {
      const auto &i = llvm::cast<ImportFromStmt>(s);
      line(depth, "ImportFrom " + std::string(i.level, '.') + i.module, s.range());
      if (i.importsAll)
        line(depth + 1, "*", SourceRange());
      for (const ImportedName &n : i.names)
        line(depth + 1, n.alias.empty() ? n.name : n.name + " as " + n.alias, n.range);
      return;
    }
    case Stmt::Kind::Assert: {
      const auto &a = llvm::cast<AssertStmt>(s);
      line(depth, "Assert", s.range());
      expression(*a.condition, depth + 1);
      if (a.message)
        expression(*a.message, depth + 1);
      return;
    }
    case Stmt::Kind::Raise: {
      const auto &r = llvm::cast<RaiseStmt>(s);
      line(depth, "Raise", s.range());
      if (r.exception)
        expression(*r.exception, depth + 1);
      return;
    }
    case Stmt::Kind::Del: {
      const auto &d = llvm::cast<DelStmt>(s);
      std::string text = "Del";
      for (const std::string &n : d.names)
        text += " " + n;
      line(depth, text, s.range());
      for (const Expr *target : d.targets)
        if (!llvm::isa<NameExpr>(target))
          expression(*target, depth + 1);
      return;
    }
    case Stmt::Kind::Nonlocal: {
      std::string text = llvm::cast<NonlocalStmt>(s).isGlobal ? "Global" : "Nonlocal";
      for (const std::string &n : llvm::cast<NonlocalStmt>(s).names)
        text += " " + n;
      line(depth, text, s.range());
      return;
    }
    case Stmt::Kind::ClassDef: {
      const auto &c = llvm::cast<ClassDefStmt>(s);
      line(depth, "ClassDef " + c.name, s.range());
      for (const ExprPtr &d : c.decorators) {
        os.indent((depth + 1) * 2) << "decorator:\n";
        expression(*d, depth + 2);
      }
      for (const Argument &base : c.bases) {
        os.indent((depth + 1) * 2) << (base.name.empty() ? "base:" : "keyword " + base.name + ":")
                                   << "\n";
        expression(*base.value, depth + 2);
      }
      block("body", c.body, depth + 1);
      return;
    }
    case Stmt::Kind::With: {
      const auto &w = llvm::cast<WithStmt>(s);
      line(depth, "With", s.range());
      for (const WithStmt::Item &item : w.items) {
        expression(*item.context, depth + 1);
        if (item.target) {
          os.indent((depth + 1) * 2) << "as:\n";
          expression(*item.target, depth + 2);
        }
      }
      block("body", w.body, depth + 1);
      return;
    }
    case Stmt::Kind::Try: {
      const auto &t = llvm::cast<TryStmt>(s);
      line(depth, "Try", s.range());
      block("body", t.body, depth + 1);
      for (const TryStmt::Handler &h : t.handlers) {
        line(depth + 1, "Except" + (h.name.empty() ? "" : " as " + h.name), h.range);
        if (h.type)
          expression(*h.type, depth + 2);
        block("body", h.body, depth + 2);
      }
      block("else", t.orelse, depth + 1);
      block("finally", t.finalBody, depth + 1);
      return;
    }
    case Stmt::Kind::Match: {
      const auto &m = llvm::cast<MatchStmt>(s);
      line(depth, "Match", s.range());
      expression(*m.subject, depth + 1);
      for (const MatchStmt::Case &c : m.cases) {
        line(depth + 1, "Case", c.pattern.range);
        pattern(c.pattern, depth + 2);
        if (c.guard) {
          os.indent((depth + 2) * 2) << "if:\n";
          expression(*c.guard, depth + 3);
        }
        block("body", c.body, depth + 2);
      }
      return;
    }
    }
  }

  void pattern(const Pattern &p, unsigned depth) {
    static const char *const kinds[] = {"Wildcard", "Capture", "Value", "Singleton", "Sequence",
                                        "Star",     "Or",      "As",    "Class",     "Mapping"};
    std::string text = std::string("Pattern ") + kinds[static_cast<int>(p.kind)];
    if (!p.name.empty())
      text += " " + p.name;
    line(depth, text, p.range);
    if (p.value)
      expression(*p.value, depth + 1);
    for (size_t i = 0; i < p.keys.size(); ++i)
      expression(*p.keys[i], depth + 1);
    for (const Pattern &e : p.elements)
      pattern(e, depth + 1);
    for (size_t i = 0; i < p.keywords.size(); ++i) {
      os.indent((depth + 1) * 2) << "keyword " << p.keywords[i] << ":\n";
      pattern(p.keywordPatterns[i], depth + 2);
    }
  }

  void formatParts(const std::vector<FormatPart> &parts, unsigned depth) {
    for (const FormatPart &part : parts) {
      if (!part.value) {
        std::string text;
        llvm::raw_string_ostream out(text);
        out << "text \"";
        out.write_escaped(part.literal);
        out << "\"";
        os.indent(depth * 2) << text << "\n";
        continue;
      }
      std::string field = "field";
      if (!part.debugText.empty())
        field += " " + part.debugText;
      if (part.conversion)
        field += std::string(" !") + part.conversion;
      os.indent(depth * 2) << field << ":\n";
      expression(*part.value, depth + 1);
      if (!part.spec.empty()) {
        os.indent((depth + 1) * 2) << "spec:\n";
        formatParts(part.spec, depth + 2);
      }
    }
  }

  void expression(const Expr &e, unsigned depth) {
    switch (e.kind()) {
    case Expr::Kind::Name:
      line(depth, "Name " + llvm::cast<NameExpr>(e).name, e.range());
      return;
    case Expr::Kind::Int:
      line(depth, "Int " + std::to_string(llvm::cast<IntExpr>(e).value), e.range());
      return;
    case Expr::Kind::Float: {
      std::string text;
      llvm::raw_string_ostream(text) << "Float " << llvm::cast<FloatExpr>(e).value;
      line(depth, text, e.range());
      return;
    }
    case Expr::Kind::String: {
      const auto &str = llvm::cast<StringExpr>(e);
      if (str.formatted) {
        line(depth, "FormattedString", e.range());
        formatParts(str.parts, depth + 1);
        return;
      }
      std::string text;
      llvm::raw_string_ostream out(text);
      out << "String \"";
      out.write_escaped(str.value);
      out << "\"";
      line(depth, text, e.range());
      return;
    }
    case Expr::Kind::Bool:
      line(depth, llvm::cast<BoolExpr>(e).value ? "True" : "False", e.range());
      return;
    case Expr::Kind::None:
      line(depth, "None", e.range());
      return;
    case Expr::Kind::Ellipsis:
      line(depth, "Ellipsis", e.range());
      return;
    case Expr::Kind::Imaginary:
      line(depth, "Imaginary " + llvm::cast<ImaginaryExpr>(e).text, e.range());
      return;
    case Expr::Kind::Tuple:
    case Expr::Kind::List: {
      const auto &s = llvm::cast<SequenceExpr>(e);
      line(depth, s.isList() ? "List" : "Tuple", e.range());
      for (const ExprPtr &x : s.elements)
        expression(*x, depth + 1);
      return;
    }
    case Expr::Kind::Dict: {
      const auto &d = llvm::cast<DictExpr>(e);
      line(depth, "Dict", e.range());
      for (size_t i = 0; i < d.values.size(); ++i) {
        if (d.keys[i])
          expression(*d.keys[i], depth + 1);
        else
          line(depth + 1, "**", SourceRange());
        expression(*d.values[i], depth + 2);
      }
      return;
    }
    case Expr::Kind::Set:
      line(depth, "Set", e.range());
      for (const ExprPtr &x : llvm::cast<SetExpr>(e).elements)
        expression(*x, depth + 1);
      return;
    case Expr::Kind::Attribute: {
      const auto &a = llvm::cast<AttributeExpr>(e);
      line(depth, "Attribute ." + a.attribute, e.range());
      expression(*a.value, depth + 1);
      return;
    }
    case Expr::Kind::Subscript: {
      const auto &s = llvm::cast<SubscriptExpr>(e);
      line(depth, s.isTuple ? "Subscript (tuple)" : "Subscript", e.range());
      expression(*s.value, depth + 1);
      for (const ExprPtr &i : s.indices)
        expression(*i, depth + 1);
      return;
    }
    case Expr::Kind::Slice: {
      const auto &s = llvm::cast<SliceExpr>(e);
      line(depth, "Slice", e.range());
      for (const ExprPtr *part : {&s.lower, &s.upper, &s.step}) {
        if (*part)
          expression(**part, depth + 1);
        else
          line(depth + 1, "-", SourceRange());
      }
      return;
    }
    case Expr::Kind::Call: {
      const auto &c = llvm::cast<CallExpr>(e);
      line(depth, "Call", e.range());
      expression(*c.callee, depth + 1);
      for (const Argument &a : c.arguments) {
        switch (a.kind) {
        case Argument::Kind::Positional:
          expression(*a.value, depth + 1);
          break;
        case Argument::Kind::Keyword:
          os.indent((depth + 1) * 2) << a.name << "=\n";
          expression(*a.value, depth + 2);
          break;
        case Argument::Kind::Star:
          os.indent((depth + 1) * 2) << "*\n";
          expression(*a.value, depth + 2);
          break;
        case Argument::Kind::DoubleStar:
          os.indent((depth + 1) * 2) << "**\n";
          expression(*a.value, depth + 2);
          break;
        }
      }
      return;
    }
    case Expr::Kind::Unary: {
      const auto &u = llvm::cast<UnaryExpr>(e);
      line(depth, std::string("Unary ") + spelling(u.op), e.range());
      expression(*u.operand, depth + 1);
      return;
    }
    case Expr::Kind::Binary: {
      const auto &b = llvm::cast<BinaryExpr>(e);
      line(depth, std::string("Binary ") + spelling(b.op), e.range());
      expression(*b.lhs, depth + 1);
      expression(*b.rhs, depth + 1);
      return;
    }
    case Expr::Kind::Compare: {
      const auto &c = llvm::cast<CompareExpr>(e);
      std::string text = "Compare";
      for (CompareOp op : c.ops)
        text += std::string(" ") + spelling(op);
      line(depth, text, e.range());
      for (const ExprPtr &x : c.operands)
        expression(*x, depth + 1);
      return;
    }
    case Expr::Kind::BoolOp: {
      const auto &b = llvm::cast<BoolOpExpr>(e);
      line(depth, std::string("BoolOp ") + spelling(b.op), e.range());
      for (const ExprPtr &x : b.operands)
        expression(*x, depth + 1);
      return;
    }
    case Expr::Kind::Named: {
      const auto &n = llvm::cast<NamedExpr>(e);
      line(depth, "Named " + llvm::cast<NameExpr>(*n.target).name, e.range());
      expression(*n.value, depth + 1);
      return;
    }
    case Expr::Kind::Conditional: {
      const auto &c = llvm::cast<ConditionalExpr>(e);
      line(depth, "Conditional", e.range());
      expression(*c.condition, depth + 1);
      expression(*c.body, depth + 1);
      expression(*c.orelse, depth + 1);
      return;
    }
    case Expr::Kind::Lambda: {
      const auto &l = llvm::cast<LambdaExpr>(e);
      line(depth, "Lambda", e.range());
      parameters(l.parameters, depth + 1);
      expression(*l.body, depth + 1);
      return;
    }
    case Expr::Kind::Comprehension: {
      const auto &c = llvm::cast<ComprehensionExpr>(e);
      static const char *const names[] = {"Generator", "ListComprehension", "SetComprehension",
                                          "DictComprehension"};
      line(depth, names[static_cast<int>(c.form)], e.range());
      if (c.key)
        expression(*c.key, depth + 1);
      expression(*c.element, depth + 1);
      for (const ComprehensionClause &clause : c.clauses) {
        os.indent((depth + 1) * 2) << "for:\n";
        expression(*clause.target, depth + 2);
        expression(*clause.iterable, depth + 2);
        for (const ExprPtr &cond : clause.conditions) {
          os.indent((depth + 2) * 2) << "if:\n";
          expression(*cond, depth + 3);
        }
      }
      return;
    }
    case Expr::Kind::Starred:
      line(depth, "Starred", e.range());
      expression(*llvm::cast<StarredExpr>(e).value, depth + 1);
      return;
    }
  }
};

} // namespace

void dump(const Module &module, const SourceManager &sources, llvm::raw_ostream &os) {
  Dumper(os).module(module, sources);
}

void forEachNestedBody(const Stmt &s, llvm::function_ref<void(const StmtList &)> visit) {
  switch (s.kind()) {
  case Stmt::Kind::For:
    visit(llvm::cast<ForStmt>(s).body);
    visit(llvm::cast<ForStmt>(s).orelse);
    break;
  case Stmt::Kind::While:
    visit(llvm::cast<WhileStmt>(s).body);
    visit(llvm::cast<WhileStmt>(s).orelse);
    break;
  case Stmt::Kind::If:
    visit(llvm::cast<IfStmt>(s).body);
    visit(llvm::cast<IfStmt>(s).orelse);
    break;
  case Stmt::Kind::With:
    visit(llvm::cast<WithStmt>(s).body);
    break;
  case Stmt::Kind::Try: {
    const auto &t = llvm::cast<TryStmt>(s);
    visit(t.body);
    for (const TryStmt::Handler &h : t.handlers)
      visit(h.body);
    visit(t.orelse);
    visit(t.finalBody);
    break;
  }
  case Stmt::Kind::Match:
    for (const MatchStmt::Case &c : llvm::cast<MatchStmt>(s).cases)
      visit(c.body);
    break;
  default:
    break;
  }
}

} // namespace pk::ast
