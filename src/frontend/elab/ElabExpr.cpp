//===- ElabExpr.cpp - Evaluating expressions ------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Sets.h"
#include "frontend/elab/StateRefs.h"

namespace pk::elab {

using namespace ast;

Obj Elaborator::eval(const Expr &expr) {
  try {
    return evalExpression(expr);
  } catch (const StaticBudgetExceeded &) {
    // The innermost expression that was building too much.
    failStaticBudget(expr.range());
  }
}

Obj Elaborator::evalExpression(const Expr &expr) {
  switch (expr.kind()) {
  case Expr::Kind::Name:
    return evalName(llvm::cast<NameExpr>(expr));
  case Expr::Kind::Int:
    return makeInt(llvm::cast<IntExpr>(expr).value);
  case Expr::Kind::Float:
    return makeFloat(llvm::cast<FloatExpr>(expr).value);
  case Expr::Kind::String: {
    const auto &s = llvm::cast<StringExpr>(expr);
    if (s.formatted)
      return evalFormattedString(*this, s);
    return makeStr(s.value);
  }
  case Expr::Kind::Bool:
    return makeBool(llvm::cast<BoolExpr>(expr).value);
  case Expr::Kind::None:
    return none();
  case Expr::Kind::Ellipsis:
    return std::make_shared<EllipsisObj>();
  case Expr::Kind::Imaginary:
    fail(expr.range(), "complex numbers are not supported (" +
                           llvm::cast<ImaginaryExpr>(expr).text +
                           "): pkc's arrays and numbers are real");
  case Expr::Kind::Tuple:
  case Expr::Kind::List:
    return evalSequence(llvm::cast<SequenceExpr>(expr));
  case Expr::Kind::Dict:
    return evalDict(llvm::cast<DictExpr>(expr));
  case Expr::Kind::Set: {
    auto set = std::make_shared<SetObj>(/*frozen=*/false);
    for (const ExprPtr &element : llvm::cast<SetExpr>(expr).elements) {
      if (auto *star = llvm::dyn_cast<StarredExpr>(element.get())) {
        for (Obj &item : iterate(eval(*star->value), star->range()))
          setAdd(*this, *set, item, star->range());
        continue;
      }
      setAdd(*this, *set, eval(*element), element->range());
    }
    return set;
  }
  case Expr::Kind::Attribute:
    return evalAttribute(llvm::cast<AttributeExpr>(expr));
  case Expr::Kind::Subscript:
    return evalSubscript(llvm::cast<SubscriptExpr>(expr));
  case Expr::Kind::Slice:
    fail(expr.range(), "a slice is only allowed inside [...]");
  case Expr::Kind::Call:
    return evalCall(llvm::cast<CallExpr>(expr));
  case Expr::Kind::Unary: {
    const auto &u = llvm::cast<UnaryExpr>(expr);
    return unaryOperator(*this, u.op, eval(*u.operand), expr.range());
  }
  case Expr::Kind::Binary: {
    const auto &bin = llvm::cast<BinaryExpr>(expr);
    Obj lhs = eval(*bin.lhs);
    Obj rhs = eval(*bin.rhs);
    return binaryOperator(*this, bin.op, lhs, rhs, expr.range());
  }
  case Expr::Kind::Compare:
    return evalCompare(llvm::cast<CompareExpr>(expr));
  case Expr::Kind::BoolOp:
    return evalBoolOp(llvm::cast<BoolOpExpr>(expr));
  case Expr::Kind::Conditional:
    return evalConditional(llvm::cast<ConditionalExpr>(expr));
  case Expr::Kind::Lambda:
    return evalLambda(llvm::cast<LambdaExpr>(expr));
  case Expr::Kind::Comprehension:
    return evalComprehension(llvm::cast<ComprehensionExpr>(expr));
  case Expr::Kind::Starred:
    fail(expr.range(), "a starred expression is only allowed in a call, a tuple or a list");
  case Expr::Kind::Named: {
    const auto &n = llvm::cast<NamedExpr>(expr);
    Obj value = eval(*n.value);
    // In a comprehension, the name is the enclosing function's.
    std::shared_ptr<Frame> scope = frame;
    while (scope->comprehension && scope->parent)
      scope = scope->parent;
    FrameSwitch into(*this, scope);
    assign(*n.target, value);
    return value;
  }
  }
  fail(expr.range(), "unsupported expression");
}

Obj Elaborator::evalName(const NameExpr &e) {
  if (creatingSymbols) {
    // In an export's signature an unknown name is a symbolic size.
    if (!isDefined(e.name)) {
      size_t known = symbolNames.size();
      Obj symbol = makeSymbolic(symbolFor(e.name));
      if (symbolNames.size() > known)
        symbolRanges.push_back(e.range()); // its first use, for messages
      return symbol;
    }
  }
  Obj value = lookup(e.name, e.range());
  if (tpuCoreAxis && llvm::isa<GlobalArrayObj>(value.get()))
    if (Obj scalar = capturedScalar(*this, value, e.range()))
      return scalar;
  return value;
}

Obj Elaborator::evalSequence(const SequenceExpr &e) {
  std::vector<Obj> items;
  for (const ExprPtr &element : e.elements) {
    if (auto *star = llvm::dyn_cast<StarredExpr>(element.get())) {
      for (Obj &item : iterate(eval(*star->value), star->range()))
        items.push_back(item);
      continue;
    }
    items.push_back(eval(*element));
  }
  return e.isList() ? makeList(std::move(items)) : makeTuple(std::move(items));
}

Obj Elaborator::evalDict(const DictExpr &e) {
  auto dict = std::make_shared<DictObj>();
  for (size_t i = 0; i < e.values.size(); ++i) {
    if (!e.keys[i]) {
      Obj other = eval(*e.values[i]);
      auto *source = llvm::dyn_cast<DictObj>(other.get());
      if (!source)
        fail(e.values[i]->range(), "'**' needs a dict, got " + typeName(*other));
      for (const auto &[k, v] : source->entries)
        dictSet(*this, *dict, k, v, e.range());
      continue;
    }
    Obj key = eval(*e.keys[i]);
    dictSet(*this, *dict, key, eval(*e.values[i]), e.keys[i]->range());
  }
  return dict;
}

Obj Elaborator::evalAttribute(const AttributeExpr &e) {
  Obj value = eval(*e.value);
  return getAttribute(*this, value, e.attribute, e.range());
}

Obj Elaborator::evalIndex(const Expr &e) {
  if (auto *slice = llvm::dyn_cast<SliceExpr>(&e)) {
    Obj lower = slice->lower ? eval(*slice->lower) : none();
    Obj upper = slice->upper ? eval(*slice->upper) : none();
    Obj step = slice->step ? eval(*slice->step) : none();
    return std::make_shared<SliceObj>(lower, upper, step);
  }
  return eval(e);
}

Obj Elaborator::evalSubscript(const SubscriptExpr &e) {
  Obj value = eval(*e.value);
  return subscript(*this, value, evalSubscriptIndex(e), e.range());
}

Obj Elaborator::evalSubscriptIndex(const SubscriptExpr &e) {
  std::vector<Obj> indices;
  bool starred = false;
  for (const ExprPtr &index : e.indices) {
    if (auto *star = llvm::dyn_cast<StarredExpr>(index.get())) {
      for (Obj &item : iterate(eval(*star->value), star->range()))
        indices.push_back(item);
      starred = true;
      continue;
    }
    indices.push_back(evalIndex(*index));
  }
  return e.isTuple || starred || indices.size() != 1 ? makeTuple(indices) : indices[0];
}

Obj Elaborator::evalCall(const CallExpr &e) {
  Obj callee = eval(*e.callee);
  CallArgs args;
  args.range = e.range();
  if (auto *name = llvm::dyn_cast<NameExpr>(e.callee.get()))
    args.callee = name->name;
  else if (auto *attr = llvm::dyn_cast<AttributeExpr>(e.callee.get()))
    args.callee = attr->attribute;
  for (const Argument &a : e.arguments) {
    switch (a.kind) {
    case Argument::Kind::Positional:
      args.addPositional(eval(*a.value), a.range);
      break;
    case Argument::Kind::Keyword:
      args.keywords.emplace_back(a.name, eval(*a.value));
      args.keywordRanges.push_back(a.range);
      break;
    case Argument::Kind::Star:
      for (Obj &item : iterate(eval(*a.value), a.range))
        args.addPositional(item, a.range);
      break;
    case Argument::Kind::DoubleStar: {
      Obj mapping = eval(*a.value);
      auto *dict = llvm::dyn_cast<DictObj>(mapping.get());
      if (!dict)
        fail(a.range, "'**' needs a dict, got " + typeName(*mapping));
      for (const auto &[k, v] : dict->entries) {
        auto *key = llvm::dyn_cast<StrObj>(k.get());
        if (!key)
          fail(a.range, "keywords must be strings");
        for (const auto &existing : args.keywords)
          if (existing.first == key->value)
            fail(a.range, "got multiple values for keyword argument '" + key->value + "'");
        args.keywords.emplace_back(key->value, v);
        args.keywordRanges.push_back(a.range);
      }
      break;
    }
    }
  }
  return call(callee, args);
}

Obj Elaborator::evalLambda(const LambdaExpr &e) {
  auto f = std::make_shared<FunctionObj>();
  f->name = "<lambda>";
  f->parameters = &e.parameters;
  f->lambdaBody = e.body.get();
  f->namedTargets = &e.namedTargets;
  f->range = e.range();
  f->closure = closureFrame();
  for (const Parameter &p : e.parameters)
    f->defaults.push_back(p.defaultValue ? eval(*p.defaultValue) : nullptr);
  return f;
}

Obj Elaborator::evalComprehension(const ComprehensionExpr &e) {
  // A comprehension has its own scope, as in Python 3.
  auto scope = std::make_shared<Frame>();
  scope->parent = frame;
  scope->comprehension = true;
  FrameSwitch enter(*this, scope);
  std::vector<Obj> items;
  auto set = std::make_shared<SetObj>(/*frozen=*/false);
  auto dict = std::make_shared<DictObj>();
  std::function<void(size_t)> run = [&](size_t clause) {
    if (clause == e.clauses.size()) {
      switch (e.form) {
      case ComprehensionExpr::Form::Set:
        setAdd(*this, *set, eval(*e.element), e.element->range());
        break;
      case ComprehensionExpr::Form::Dict: {
        // Python evaluates the key first.
        Obj key = eval(*e.key);
        dictSet(*this, *dict, key, eval(*e.element), e.key->range());
        break;
      }
      default:
        items.push_back(eval(*e.element));
      }
      return;
    }
    const ComprehensionClause &c = e.clauses[clause];
    for (Obj &item : iterate(eval(*c.iterable), c.iterable->range())) {
      spendFuel(e.range());
      assign(*c.target, item);
      bool keep = true;
      for (const ExprPtr &condition : c.conditions)
        keep = keep && truthy(eval(*condition), condition->range());
      if (keep)
        run(clause + 1);
    }
  };
  run(0);
  switch (e.form) {
  case ComprehensionExpr::Form::Set:
    return set;
  case ComprehensionExpr::Form::Dict:
    return dict;
  case ComprehensionExpr::Form::List:
    return makeList(std::move(items));
  case ComprehensionExpr::Form::Generator:
    break;
  }
  return makeTuple(std::move(items));
}

Obj Elaborator::evalBoolOp(const BoolOpExpr &e) {
  Obj value;
  for (const ExprPtr &operand : e.operands) {
    value = eval(*operand);
    if (llvm::isa<ArrayObj>(value.get()))
      fail(operand->range(),
           std::string("'") + spelling(e.op) +
               "' needs a static condition; for arrays use " +
               (e.op == BoolOp::And ? "'&' or jnp.logical_and" : "'|' or jnp.logical_or"));
    bool t = truthy(value, operand->range());
    if ((e.op == BoolOp::And && !t) || (e.op == BoolOp::Or && t))
      return value;
  }
  return value;
}

Obj Elaborator::evalCompare(const CompareExpr &e) {
  Obj lhs = eval(*e.operands[0]);
  Obj result;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Obj rhs = eval(*e.operands[i + 1]);
    SourceRange r = SourceRange::cover(e.operands[i]->range(), e.operands[i + 1]->range());
    result = compareOperator(*this, e.ops[i], lhs, rhs, r);
    if (i + 1 == e.ops.size())
      break;
    if (llvm::isa<ArrayObj>(result.get()))
      fail(e.range(), "chained comparisons of arrays are not supported; combine them with '&'");
    if (!truthy(result, r))
      return result;
    lhs = rhs;
  }
  return result;
}

Obj Elaborator::evalConditional(const ConditionalExpr &e) {
  Obj condition = eval(*e.condition);
  if (llvm::isa<ArrayObj>(condition.get()))
    fail(e.condition->range(),
         "'x if cond else y' needs a static condition; for arrays use jnp.where(cond, x, y)");
  return truthy(condition, e.condition->range()) ? eval(*e.body) : eval(*e.orelse);
}

} // namespace pk::elab
