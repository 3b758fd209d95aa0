//===- ElabStmt.cpp - Executing statements --------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"

namespace pk::elab {

using namespace ast;

Flow Elaborator::exec(const StmtList &body) {
  for (const StmtPtr &s : body) {
    Flow flow = exec(*s);
    if (flow != Flow::Normal)
      return flow;
  }
  return Flow::Normal;
}

bool Elaborator::skipsDefinedAssignment(const Expr &target) {
  // `-D NAME=VALUE` replaces the module's own `NAME = ...`.
  auto *name = llvm::dyn_cast<NameExpr>(&target);
  if (!name || frame != globals || importing() || !definedNames.count(name->name))
    return false;
  usedDefines.insert(name->name);
  if (auto it = deferredDefines.find(name->name); it != deferredDefines.end()) {
    const ElaborationOptions::Define *define = it->second;
    deferredDefines.erase(it);
    globals->vars[name->name] = defineValue(*define);
  }
  return true;
}

Flow Elaborator::exec(const Stmt &s) {
  spendFuel(s.range());
  switch (s.kind()) {
  case Stmt::Kind::Expr:
    eval(*llvm::cast<ExprStmt>(s).value);
    return Flow::Normal;
  case Stmt::Kind::Assign: {
    const auto &a = llvm::cast<AssignStmt>(s);
    Obj value = eval(*a.value);
    for (const ExprPtr &target : a.targets)
      if (!skipsDefinedAssignment(*target))
        assign(*target, value);
    return Flow::Normal;
  }
  case Stmt::Kind::AugAssign:
    execAugAssign(llvm::cast<AugAssignStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::AnnAssign: {
    const auto &a = llvm::cast<AnnAssignStmt>(s);
    if (a.value && !skipsDefinedAssignment(*a.target))
      assign(*a.target, eval(*a.value));
    return Flow::Normal;
  }
  case Stmt::Kind::Return: {
    const auto &r = llvm::cast<ReturnStmt>(s);
    if (frame == globals)
      fail(s.range(), "'return' outside function");
    frame->returnValue = r.value ? eval(*r.value) : none();
    lastJump = s.range();
    return Flow::Return;
  }
  case Stmt::Kind::Pass:
    return Flow::Normal;
  case Stmt::Kind::Break:
    if (frame->loopDepth == 0)
      fail(s.range(), "'break' outside loop");
    lastJump = s.range();
    return Flow::Break;
  case Stmt::Kind::Continue:
    if (frame->loopDepth == 0)
      fail(s.range(), "'continue' not properly in loop");
    lastJump = s.range();
    return Flow::Continue;
  case Stmt::Kind::If:
    return execIf(llvm::cast<IfStmt>(s));
  case Stmt::Kind::For:
    return execFor(llvm::cast<ForStmt>(s));
  case Stmt::Kind::While:
    return execWhile(llvm::cast<WhileStmt>(s));
  case Stmt::Kind::FunctionDef:
    execFunctionDef(llvm::cast<FunctionDefStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::Import:
    execImport(llvm::cast<ImportStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::ImportFrom:
    execImportFrom(llvm::cast<ImportFromStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::Assert:
    execAssert(llvm::cast<AssertStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::Raise:
    execRaise(llvm::cast<RaiseStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::Del: {
    const auto &d = llvm::cast<DelStmt>(s);
    for (size_t i = 0; i < d.names.size(); ++i) {
      const std::string &name = d.names[i];
      Frame *owner = frame.get();
      if (frame->nonlocals.count(name))
        for (owner = frame->parent.get(); owner && !owner->vars.count(name);)
          owner = owner->parent.get();
      auto it = owner ? owner->vars.find(name) : frame->vars.end();
      if (!owner || it == owner->vars.end() || llvm::isa<UndefinedObj>(it->second.get()))
        fail(d.ranges[i], "name '" + name + "' is not defined");
      owner->vars.erase(it);
    }
    return Flow::Normal;
  }
  case Stmt::Kind::Nonlocal:
    if (frame == globals)
      fail(s.range(), "nonlocal declaration not allowed at module level");
    for (const std::string &name : llvm::cast<NonlocalStmt>(s).names) {
      // As in Python: the name must belong to an enclosing function.
      bool bound = false;
      for (Frame *f = frame->parent.get(); f && f->parent && !bound; f = f->parent.get())
        bound = (f->locals && f->locals->count(name)) || f->vars.count(name);
      if (!bound)
        fail(s.range(), "no binding for nonlocal '" + name + "' found");
      frame->nonlocals.insert(name);
    }
    return Flow::Normal;
  }
  return Flow::Normal;
}

Flow Elaborator::execIf(const IfStmt &s) {
  Obj condition = eval(*s.condition);
  if (llvm::isa<ArrayObj>(condition.get()))
    return execDynamicIf(s, condition);
  if (llvm::isa<SymIntObj>(condition.get()))
    requireKernel(s.condition->range(), "a condition on a symbolic size");
  return truthy(condition, s.condition->range()) ? exec(s.body) : exec(s.orelse);
}

Flow Elaborator::execFor(const ForStmt &s) {
  Obj iterable = eval(*s.iterable);
  if (auto *range = llvm::dyn_cast<RangeObj>(iterable.get())) {
    bool dynamic = !staticInt(range->start) || !staticInt(range->stop) || !staticInt(range->step);
    if (dynamic) {
      if (!s.orelse.empty())
        fail(s.range(), "'for ... else' is not supported on a loop with dynamic bounds");
      return execDynamicFor(s, range->start, range->stop, range->step);
    }
  }
  LoopScope loop(*this);
  for (Obj &item : iterate(iterable, s.iterable->range())) {
    spendFuel(s.range());
    assign(*s.target, item);
    Flow flow = exec(s.body);
    if (flow == Flow::Break)
      return Flow::Normal;
    if (flow == Flow::Return)
      return flow;
  }
  return exec(s.orelse);
}

Flow Elaborator::execWhile(const WhileStmt &s) {
  LoopScope loop(*this);
  for (;;) {
    spendFuel(s.range());
    Obj condition = eval(*s.condition);
    if (llvm::isa<ArrayObj>(condition.get())) {
      if (!s.orelse.empty())
        fail(s.range(), "'while ... else' is not supported on a loop with a dynamic condition");
      return execDynamicWhile(s);
    }
    if (!truthy(condition, s.condition->range()))
      break;
    Flow flow = exec(s.body);
    if (flow == Flow::Break)
      return Flow::Normal;
    if (flow == Flow::Return)
      return flow;
  }
  return exec(s.orelse);
}

void Elaborator::execFunctionDef(const FunctionDefStmt &s) {
  auto f = std::make_shared<FunctionObj>();
  f->name = s.name;
  f->parameters = &s.parameters;
  f->body = &s.body;
  f->def = &s;
  f->range = s.range();
  f->closure = frame;
  for (const Parameter &p : s.parameters)
    f->defaults.push_back(p.defaultValue ? eval(*p.defaultValue) : nullptr);
  Obj result = f;
  // Decorators apply bottom-up, each receiving what the one below returned.
  for (auto it = s.decorators.rbegin(); it != s.decorators.rend(); ++it) {
    Obj decorator = eval(**it);
    CallArgs args;
    args.range = (*it)->range();
    args.callee = "decorator";
    args.addPositional(result, s.nameRange);
    result = call(decorator, args);
  }
  setVariable(s.name, result);
}

void Elaborator::execAssert(const AssertStmt &s) {
  Obj condition = eval(*s.condition);
  if (llvm::isa<ArrayObj>(condition.get()))
    fail(s.condition->range(), "assert needs a condition known at compile time");
  if (truthy(condition, s.condition->range()))
    return;
  std::string message = "assertion failed";
  if (s.message) {
    Obj m = eval(*s.message);
    message += ": " + (llvm::isa<StrObj>(m.get()) ? llvm::cast<StrObj>(*m).value : repr(*m));
  }
  fail(s.range(), message);
}

void Elaborator::execRaise(const RaiseStmt &s) {
  if (!s.exception)
    fail(s.range(), "bare 'raise' is not supported");
  Obj e = eval(*s.exception);
  if (auto *exception = llvm::dyn_cast<ExceptionTypeObj>(e.get()))
    fail(s.range(), exception->message.empty() ? exception->name
                                               : exception->name + ": " + exception->message);
  fail(s.range(), "exceptions must be ValueError, TypeError, ... , got " + typeName(*e));
}

void Elaborator::execAugAssign(const AugAssignStmt &s) {
  if (auto *sub = llvm::dyn_cast<SubscriptExpr>(s.target.get())) {
    // `o_ref[...] += x` reads, adds and writes the same window.
    Obj current = evalSubscript(*sub);
    Obj value = eval(*s.value);
    assignSubscript(*sub, binaryOperator(*this, s.op, current, value, s.range()));
    return;
  }
  if (llvm::isa<AttributeExpr>(s.target.get()))
    fail(s.target->range(), "cannot assign to attributes");
  const auto &name = llvm::cast<NameExpr>(*s.target);
  Obj current = lookup(name.name, name.range());
  Obj value = eval(*s.value);
  // `lst += [...]` extends the list in place, as in Python.
  if (auto *list = llvm::dyn_cast<SequenceObj>(current.get());
      list && list->isList() && s.op == BinaryOp::Add) {
    std::vector<Obj> items = iterate(value, s.value->range());
    try {
      countStaticItems(items.size());
    } catch (const StaticBudgetExceeded &) {
      failStaticBudget(s.range());
    }
    list->items.insert(list->items.end(), items.begin(), items.end());
    return;
  }
  setVariable(name.name, binaryOperator(*this, s.op, current, value, s.range()));
}

void Elaborator::assign(const Expr &target, const Obj &value) {
  switch (target.kind()) {
  case Expr::Kind::Name:
    setVariable(llvm::cast<NameExpr>(target).name, value);
    return;
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto &targets = llvm::cast<SequenceExpr>(target).elements;
    std::vector<Obj> items = iterate(value, target.range());
    size_t star = targets.size();
    for (size_t i = 0; i < targets.size(); ++i)
      if (llvm::isa<StarredExpr>(targets[i].get()))
        star = i;
    if (star == targets.size()) {
      if (items.size() != targets.size())
        fail(target.range(), items.size() < targets.size()
                                 ? "not enough values to unpack (expected " +
                                       std::to_string(targets.size()) + ", got " +
                                       std::to_string(items.size()) + ")"
                                 : "too many values to unpack (expected " +
                                       std::to_string(targets.size()) + ", got " +
                                       std::to_string(items.size()) + ")");
      for (size_t i = 0; i < targets.size(); ++i)
        assign(*targets[i], items[i]);
      return;
    }
    size_t after = targets.size() - star - 1;
    if (items.size() < targets.size() - 1)
      fail(target.range(), "not enough values to unpack");
    for (size_t i = 0; i < star; ++i)
      assign(*targets[i], items[i]);
    std::vector<Obj> rest(items.begin() + star, items.end() - after);
    assign(*llvm::cast<StarredExpr>(*targets[star]).value, makeList(rest));
    for (size_t i = 0; i < after; ++i)
      assign(*targets[star + 1 + i], items[items.size() - after + i]);
    return;
  }
  case Expr::Kind::Subscript:
    assignSubscript(llvm::cast<SubscriptExpr>(target), value);
    return;
  case Expr::Kind::Attribute:
    fail(target.range(), "cannot assign to attributes");
  default:
    fail(target.range(), "cannot assign to this expression");
  }
}

void Elaborator::assignSubscript(const SubscriptExpr &target, const Obj &value) {
  Obj container = eval(*target.value);
  std::vector<Obj> indices;
  for (const ExprPtr &index : target.indices)
    indices.push_back(evalIndex(*index));
  Obj index = target.isTuple || indices.size() != 1 ? makeTuple(indices) : indices[0];
  storeSubscript(*this, container, index, value, target.range());
}

} // namespace pk::elab
