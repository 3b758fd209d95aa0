//===- ElabStmt.cpp - Executing statements --------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StaticArray.h"

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
    // A `-D` value replaces the right-hand side too: it is not evaluated
    // (it may be what cannot run ahead of time) unless another target
    // still takes it.
    std::vector<const Expr *> targets;
    for (const ExprPtr &target : a.targets)
      if (!skipsDefinedAssignment(*target))
        targets.push_back(target.get());
    if (targets.empty())
      return Flow::Normal;
    Obj value = eval(*a.value);
    for (const Expr *target : targets)
      assign(*target, value);
    return Flow::Normal;
  }
  case Stmt::Kind::AugAssign:
    execAugAssign(llvm::cast<AugAssignStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::AnnAssign: {
    // Annotations are not evaluated (as with `from __future__ import
    // annotations`); in a class body they declare fields.
    const auto &a = llvm::cast<AnnAssignStmt>(s);
    Obj value;
    if (a.value && !skipsDefinedAssignment(*a.target)) {
      value = eval(*a.value);
      assign(*a.target, value);
    }
    if (frame->classBody)
      recordClassAnnotation(a, value);
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
  case Stmt::Kind::Yield:
    return execYield(llvm::cast<YieldStmt>(s));
  case Stmt::Kind::TypeAlias: {
    // Python evaluates the value when the alias is used, and code around
    // kernels uses aliases in annotations, which pkc does not evaluate:
    // a value that cannot be evaluated here makes an alias that says why
    // where it is used.
    const auto &alias = llvm::cast<TypeAliasStmt>(s);
    Obj value;
    try {
      value = eval(*alias.value);
    } catch (ElabError &e) {
      value = opaqueNamespace(alias.name, "the type alias " + alias.name +
                                              " has no value here: " + e.diagnostic.message);
    }
    setVariable(alias.name, value);
    return Flow::Normal;
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
    for (const Expr *target : d.targets) {
      if (auto *sub = llvm::dyn_cast<SubscriptExpr>(target)) {
        Obj container = eval(*sub->value);
        deleteSubscript(*this, container, evalSubscriptIndex(*sub), sub->range());
        continue;
      }
      const std::string &name = llvm::cast<NameExpr>(target)->name;
      Frame *owner = frame.get();
      if (frame->globalNames.count(name))
        owner = &moduleFrameOf(*frame);
      else if (frame->nonlocals.count(name))
        for (owner = frame->parent.get(); owner && !owner->vars.count(name);)
          owner = owner->parent.get();
      auto it = owner ? owner->vars.find(name) : frame->vars.end();
      if (!owner || it == owner->vars.end() || llvm::isa<UndefinedObj>(it->second.get()))
        fail(target->range(), "name '" + name + "' is not defined");
      owner->vars.erase(it);
    }
    return Flow::Normal;
  }
  case Stmt::Kind::ClassDef:
    execClassDef(llvm::cast<ClassDefStmt>(s));
    return Flow::Normal;
  case Stmt::Kind::With:
    return execWith(llvm::cast<WithStmt>(s));
  case Stmt::Kind::Try:
    return execTry(llvm::cast<TryStmt>(s));
  case Stmt::Kind::Match:
    return execMatch(llvm::cast<MatchStmt>(s));
  case Stmt::Kind::Nonlocal:
    if (llvm::cast<NonlocalStmt>(s).isGlobal) {
      // At module level the names are global already.
      if (frame->parent)
        for (const std::string &name : llvm::cast<NonlocalStmt>(s).names)
          frame->globalNames.insert(name);
      return Flow::Normal;
    }
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
  // An iterator gives one item a step: what a `break` leaves stays in it.
  auto *iterator = llvm::dyn_cast<IteratorObj>(iterable.get());
  std::vector<Obj> items = iterator ? std::vector<Obj>() : iterate(iterable, s.iterable->range());
  for (size_t i = 0;; ++i) {
    Obj item;
    if (iterator && iterator->position < iterator->items.size())
      item = iterator->items[iterator->position++];
    else if (!iterator && i < items.size())
      item = items[i];
    else
      break;
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
  f->namedTargets = &s.namedTargets;
  f->range = s.range();
  f->closure = closureFrame();
  for (const Parameter &p : s.parameters)
    f->defaults.push_back(p.defaultValue ? eval(*p.defaultValue) : nullptr);
  setVariable(s.name, applyDecorators(s.decorators, f, s.nameRange));
}

Obj Elaborator::applyDecorators(const std::vector<ExprPtr> &decorators, Obj defined,
                                SourceRange nameRange) {
  // Bottom-up, each receiving what the one below returned.
  for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
    Obj decorator = eval(**it);
    CallArgs args;
    args.range = (*it)->range();
    args.callee = "decorator";
    args.addPositional(defined, nameRange);
    defined = call(decorator, args);
  }
  return defined;
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
  if (!s.exception) {
    // Inside an `except` clause: the exception it handles, as it was.
    if (handledExceptions.empty())
      raise(s.range(), "RuntimeError", "No active exception to reraise");
    throw ElabError(handledExceptions.back());
  }
  Obj e = eval(*s.exception);
  if (s.cause) // `raise X from cause`: the cause is evaluated, X raised
    eval(*s.cause);
  if (auto c = std::dynamic_pointer_cast<ClassObj>(e)) { // `raise MyError`
    CallArgs none;
    none.range = s.range();
    e = call(c, none);
  }
  if (auto *exception = llvm::dyn_cast<ExceptionTypeObj>(e.get()))
    raise(s.range(), exception->name, exception->message);
  fail(s.range(), "exceptions must be ValueError, TypeError, ... , got " + typeName(*e));
}

void Elaborator::execAugAssign(const AugAssignStmt &s) {
  if (auto *sub = llvm::dyn_cast<SubscriptExpr>(s.target.get())) {
    // `o_ref[...] += x` reads, adds and writes the same window; the
    // container and the index are evaluated once, as in Python.
    Obj container = eval(*sub->value);
    Obj index = evalSubscriptIndex(*sub);
    Obj current = subscript(*this, container, index, sub->range());
    Obj value = eval(*s.value);
    Obj result = binaryOperator(*this, s.op, current, value, s.range());
    // `t[i] += v` of a NumPy array adds in place into the window t[i].
    if (auto *window = llvm::dyn_cast<StaticArrayObj>(current.get()); window && window->numpy)
      static_array::assignInPlace(*this, *window, result, s.range());
    storeSubscript(*this, container, index, result, sub->range());
    return;
  }
  if (auto *attr = llvm::dyn_cast<AttributeExpr>(s.target.get())) {
    Obj object = eval(*attr->value);
    Obj current = getAttribute(*this, object, attr->attribute, attr->range());
    Obj value = eval(*s.value);
    setAttribute(*this, object, attr->attribute,
                 binaryOperator(*this, s.op, current, value, s.range()), s.range());
    return;
  }
  const auto &name = llvm::cast<NameExpr>(*s.target);
  Obj current = lookup(name.name, name.range());
  Obj value = eval(*s.value);
  // `t += v` of a NumPy array changes it in place (other names for it see
  // the change), as NumPy's in-place operators do.
  if (auto *array = llvm::dyn_cast<StaticArrayObj>(current.get()); array && array->numpy) {
    static_array::assignInPlace(*this, *array,
                                binaryOperator(*this, s.op, current, value, s.range()), s.range());
    return;
  }
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
  case Expr::Kind::Attribute: {
    const auto &attr = llvm::cast<AttributeExpr>(target);
    setAttribute(*this, eval(*attr.value), attr.attribute, value, target.range());
    return;
  }
  default:
    fail(target.range(), "cannot assign to this expression");
  }
}

void Elaborator::assignSubscript(const SubscriptExpr &target, const Obj &value) {
  Obj container = eval(*target.value);
  storeSubscript(*this, container, evalSubscriptIndex(target), value, target.range());
}

} // namespace pk::elab

namespace pk::elab {

using namespace ast;

Flow Elaborator::execWith(const WithStmt &s) { return execWithItems(s, 0); }

Flow Elaborator::execWithItems(const WithStmt &s, size_t index) {
  // Each context wraps the rest of the items and the body. The contexts
  // pkc knows change nothing it computes (jax.named_scope, ...); a class
  // with __enter__ / __exit__ runs them; a @contextlib.contextmanager
  // generator runs the rest at its yield.
  if (index == s.items.size())
    return exec(s.body);
  const WithStmt::Item &item = s.items[index];
  Obj context = eval(*item.context);
  auto *cm = llvm::dyn_cast<ContextManagerObj>(context.get());
  if (cm && cm->run)
    return cm->run(*this, [&](const Obj &value) {
      if (item.target)
        assign(*item.target, value);
      return execWithItems(s, index + 1);
    });
  Obj value;
  if (cm) {
    value = cm->value ? cm->value : none();
  } else if (std::optional<Obj> v =
                 callDunder(*this, context, "__enter__", {}, item.context->range())) {
    value = *v;
  } else {
    fail(item.context->range(),
         "'" + typeName(*context) + "' object does not support the context manager protocol");
  }
  // Contexts with hooks (jax.default_matmul_precision) are left even when
  // the body raises: an enclosing `try` may go on.
  struct LeaveHooked {
    Elaborator &el;
    ContextManagerObj *context;
    ~LeaveHooked() {
      if (context)
        context->exit(el);
    }
  } leave{*this, nullptr};
  if (cm && cm->enter) {
    cm->enter(*this);
    leave.context = cm;
  }
  if (item.target)
    assign(*item.target, value);
  Flow flow = execWithItems(s, index + 1);
  if (!cm)
    callDunder(*this, context, "__exit__", {none(), none(), none()}, s.range());
  return flow;
}

namespace {

/// Whether `except handler:` catches the Python exception `raised`.
bool exceptionMatches(const std::string &raised, const std::string &handler) {
  if (raised == handler || handler == "Exception" || handler == "BaseException")
    return true;
  static const std::multimap<std::string, std::string> parents = {
      {"KeyError", "LookupError"},        {"IndexError", "LookupError"},
      {"ModuleNotFoundError", "ImportError"}, {"ZeroDivisionError", "ArithmeticError"},
      {"OverflowError", "ArithmeticError"}, {"dataclasses.FrozenInstanceError", "AttributeError"},
      {"NotImplementedError", "RuntimeError"}, {"RecursionError", "RuntimeError"},
  };
  auto [first, last] = parents.equal_range(raised);
  for (auto it = first; it != last; ++it)
    if (exceptionMatches(it->second, handler))
      return true;
  return false;
}

/// The names an `except` clause's type stands for.
void handlerTypes(Elaborator &el, const Obj &type, SourceRange r, std::vector<std::string> &out) {
  if (auto *e = llvm::dyn_cast<ExceptionTypeObj>(type.get())) {
    out.push_back(e->name);
  } else if (auto *c = llvm::dyn_cast<ClassObj>(type.get())) {
    out.push_back(c->name);
  } else if (auto *seq = llvm::dyn_cast<SequenceObj>(type.get())) {
    for (const Obj &item : seq->items)
      handlerTypes(el, item, r, out);
  } else {
    el.fail(r, "catching classes that do not inherit from BaseException is not allowed (got " +
                   repr(*type) + ")");
  }
}

} // namespace

Flow Elaborator::execTry(const TryStmt &s) {
  Flow flow = Flow::Normal;
  try {
    flow = execTryClauses(s);
  } catch (ElabError &e) {
    if (e.exception.empty())
      throw;
    // A Python exception leaving the statement runs `finally` first; a
    // jump out of the `finally` drops it, as in Python.
    Flow finalFlow = exec(s.finalBody);
    if (finalFlow != Flow::Normal)
      return finalFlow;
    throw;
  }
  Flow finalFlow = exec(s.finalBody);
  return finalFlow != Flow::Normal ? finalFlow : flow;
}

Flow Elaborator::execTryClauses(const TryStmt &s) {
  Flow flow = Flow::Normal;
  bool raised = false;
  try {
    flow = exec(s.body);
  } catch (ElabError &e) {
    // Only Python exceptions are caught; other errors are the compiler's
    // verdict on the program and end the compilation.
    if (e.exception.empty())
      throw;
    const TryStmt::Handler *matched = nullptr;
    for (const TryStmt::Handler &h : s.handlers) {
      if (!h.type) {
        matched = &h;
        break;
      }
      std::vector<std::string> types;
      handlerTypes(*this, eval(*h.type), h.type->range(), types);
      for (const std::string &t : types)
        if (exceptionMatches(e.exception, t))
          matched = &h;
      if (matched)
        break;
    }
    if (!matched)
      throw;
    raised = true;
    if (!matched->name.empty()) {
      auto exception = std::make_shared<ExceptionTypeObj>(e.exception);
      std::string prefix = e.exception + ": ";
      exception->message = e.diagnostic.message.rfind(prefix, 0) == 0
                               ? e.diagnostic.message.substr(prefix.size())
                               : e.diagnostic.message;
      setVariable(matched->name, exception);
    }
    handledExceptions.push_back(e);
    struct Handled {
      std::vector<ElabError> &stack;
      ~Handled() { stack.pop_back(); }
    } handled{handledExceptions};
    flow = exec(matched->body);
  }
  if (!raised && flow == Flow::Normal)
    flow = exec(s.orelse);
  return flow;
}

} // namespace pk::elab
