//===- ElabCall.cpp - Calls, argument binding and name lookup -------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/StaticArray.h"

#include "llvm/ADT/StringExtras.h"

namespace pk::elab {

using namespace ast;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

namespace {

/// Names assigned in a statement list, not looking into nested functions.
void collectAssigned(const StmtList &body, std::set<std::string> &out);

void collectTargets(const Expr &target, std::set<std::string> &out) {
  if (auto *name = llvm::dyn_cast<NameExpr>(&target)) {
    out.insert(name->name);
  } else if (auto *seq = llvm::dyn_cast<SequenceExpr>(&target)) {
    for (const ExprPtr &e : seq->elements)
      collectTargets(*e, out);
  } else if (auto *star = llvm::dyn_cast<StarredExpr>(&target)) {
    collectTargets(*star->value, out);
  }
}

/// The names a `case` pattern binds.
void collectPatternNames(const Pattern &p, std::set<std::string> &out) {
  if (!p.name.empty())
    out.insert(p.name);
  for (const Pattern &e : p.elements)
    collectPatternNames(e, out);
  for (const Pattern &e : p.keywordPatterns)
    collectPatternNames(e, out);
}

void collectAssigned(const StmtList &body, std::set<std::string> &out) {
  for (const StmtPtr &s : body) {
    switch (s->kind()) {
    case Stmt::Kind::Assign:
      for (const ExprPtr &t : llvm::cast<AssignStmt>(*s).targets)
        collectTargets(*t, out);
      break;
    case Stmt::Kind::AugAssign:
      collectTargets(*llvm::cast<AugAssignStmt>(*s).target, out);
      break;
    case Stmt::Kind::AnnAssign:
      collectTargets(*llvm::cast<AnnAssignStmt>(*s).target, out);
      break;
    case Stmt::Kind::For:
      collectTargets(*llvm::cast<ForStmt>(*s).target, out);
      break;
    case Stmt::Kind::FunctionDef:
      out.insert(llvm::cast<FunctionDefStmt>(*s).name);
      break;
    case Stmt::Kind::Import:
      for (const ImportedName &m : llvm::cast<ImportStmt>(*s).modules)
        out.insert(m.alias.empty() ? m.name.substr(0, m.name.find('.')) : m.alias);
      break;
    case Stmt::Kind::ImportFrom:
      for (const ImportedName &n : llvm::cast<ImportFromStmt>(*s).names)
        out.insert(n.alias.empty() ? n.name : n.alias);
      break;
    case Stmt::Kind::With:
      for (const WithStmt::Item &item : llvm::cast<WithStmt>(*s).items)
        if (item.target)
          collectTargets(*item.target, out);
      break;
    case Stmt::Kind::Try:
      for (const TryStmt::Handler &h : llvm::cast<TryStmt>(*s).handlers)
        if (!h.name.empty())
          out.insert(h.name);
      break;
    case Stmt::Kind::Match:
      for (const MatchStmt::Case &c : llvm::cast<MatchStmt>(*s).cases)
        collectPatternNames(c.pattern, out);
      break;
    case Stmt::Kind::TypeAlias:
      out.insert(llvm::cast<TypeAliasStmt>(*s).name);
      break;
    case Stmt::Kind::Del: // `del x` makes x local, as an assignment does
      for (const std::string &name : llvm::cast<DelStmt>(*s).names)
        out.insert(name);
      break;
    default:
      break;
    }
    forEachNestedBody(*s, [&](const StmtList &nested) { collectAssigned(nested, out); });
  }
}

/// The names `nonlocal` and `global` statements in `body` declare, in its
/// compound statements too (Python's rule), not in nested definitions.
void collectDeclaredNonlocal(const StmtList &body, std::set<std::string> &out) {
  for (const StmtPtr &s : body) {
    if (auto *declaration = llvm::dyn_cast<NonlocalStmt>(s.get()))
      out.insert(declaration->names.begin(), declaration->names.end());
    forEachNestedBody(*s, [&](const StmtList &nested) { collectDeclaredNonlocal(nested, out); });
  }
}

/// Levenshtein distance, for "did you mean" suggestions.
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

} // namespace

void collectAssignedNames(const StmtList &body, std::set<std::string> &out) {
  collectAssigned(body, out);
}

} // namespace pk::elab

std::set<std::string> pk::moduleConstants(const pk::ast::Module &module) {
  std::set<std::string> names;
  pk::elab::collectAssignedNames(module.body, names);
  return names;
}

namespace pk::elab {

const std::set<std::string> &Elaborator::localsOf(const FunctionObj &f) {
  const void *key = f.body ? static_cast<const void *>(f.body)
                           : static_cast<const void *>(f.lambdaBody);
  auto it = localsCache.find(key);
  if (it != localsCache.end())
    return it->second;
  std::set<std::string> &locals = localsCache[key];
  for (const Parameter &p : *f.parameters)
    locals.insert(p.name);
  if (f.namedTargets)
    locals.insert(f.namedTargets->begin(), f.namedTargets->end());
  if (f.body) {
    collectAssigned(*f.body, locals);
    // `nonlocal x` and `global x`, anywhere in the body outside nested
    // functions and classes, make x another scope's variable.
    std::set<std::string> declared;
    collectDeclaredNonlocal(*f.body, declared);
    for (const std::string &name : declared)
      locals.erase(name);
  }
  return locals;
}

bool Elaborator::isDefined(const std::string &name) {
  for (Frame *f = frame.get(); f; f = f->parent.get())
    if (f->vars.count(name))
      return true;
  return builtins.count(name) > 0;
}

Obj Elaborator::lookup(const std::string &name, SourceRange range) {
  Frame *f = frame.get();
  if (f->globalNames.count(name))
    f = &moduleFrameOf(*f);
  else if (f->locals && f->locals->count(name) && !f->nonlocals.count(name)) {
    auto it = f->vars.find(name);
    if (it != f->vars.end()) {
      if (auto *undefined = llvm::dyn_cast<UndefinedObj>(it->second.get()))
        fail(range, undefined->why);
      return it->second;
    }
    fail(range, "local variable '" + name + "' is referenced before assignment");
  }
  for (; f; f = f->parent.get()) {
    auto it = f->vars.find(name);
    if (it != f->vars.end()) {
      if (auto *undefined = llvm::dyn_cast<UndefinedObj>(it->second.get()))
        fail(range, undefined->why);
      if (f == globals.get() && definedNames.count(name))
        usedDefines.insert(name);
      return it->second;
    }
  }
  // An export's symbolic sizes read like module constants while it is
  // being elaborated (the Pallas program would see concrete ints there).
  for (size_t i = 0; i < symbolNames.size() && !creatingSymbols; ++i)
    if (symbolNames[i] == name)
      return makeSymbolic(mlir::getAffineSymbolExpr(static_cast<unsigned>(i), ctx));
  auto builtin = builtins.find(name);
  if (builtin != builtins.end())
    return builtin->second;

  std::string message = "name '" + name + "' is not defined";
  // The usual aliases of the modules a kernel imports: name the import
  // rather than a look-alike name (`jnp` is not a typo of `jax`).
  static const std::map<std::string, std::string> usualImports = {
      {"jax", "import jax"},
      {"jnp", "import jax.numpy as jnp"},
      {"np", "import numpy as np"},
      {"pl", "from jax.experimental import pallas as pl"},
      {"pltpu", "from jax.experimental.pallas import tpu as pltpu"},
      {"plgpu", "from jax.experimental.pallas import triton as plgpu"},
      {"lax", "from jax import lax"},
      {"functools", "import functools"},
      {"partial", "from functools import partial"},
      {"math", "import math"},
  };
  if (auto usual = usualImports.find(name); usual != usualImports.end())
    fail(range, message + "; did you forget '" + usual->second + "'?");
  std::string best;
  size_t bestDistance = 3;
  auto consider = [&](const std::string &candidate) {
    size_t d = editDistance(name, candidate);
    if (d < bestDistance && d < name.size()) {
      bestDistance = d;
      best = candidate;
    }
  };
  for (Frame *g = frame.get(); g; g = g->parent.get())
    for (const auto &entry : g->vars)
      consider(entry.first);
  for (const auto &entry : builtins)
    consider(entry.first);
  if (!best.empty())
    message += "; did you mean '" + best + "'?";
  fail(range, message);
}

Frame &Elaborator::moduleFrameOf(Frame &f) {
  Frame *module = &f;
  while (module->parent)
    module = module->parent.get();
  return *module;
}

void Elaborator::setVariable(const std::string &name, Obj value) {
  if (frame->globalNames.count(name)) {
    moduleFrameOf(*frame).vars[name] = std::move(value);
    return;
  }
  if (frame->nonlocals.count(name)) {
    // Module frames (the only ones without a parent) hold globals, never
    // nonlocals; imported modules have their own.
    for (Frame *f = frame->parent.get(); f && f->parent; f = f->parent.get()) {
      auto it = f->vars.find(name);
      if (it != f->vars.end()) {
        it->second = std::move(value);
        return;
      }
    }
  }
  if (frame->classBody) // a class body's names are the class's attributes
    frame->classBody->set(name, value);
  frame->vars[name] = std::move(value);
}

Elaborator::FrameSwitch::FrameSwitch(Elaborator &el, std::shared_ptr<Frame> next)
    : el(el), saved(el.frame) {
  el.frame = std::move(next);
}

Elaborator::FrameSwitch::~FrameSwitch() { el.frame = std::move(saved); }

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Obj Elaborator::callUncounted(const Obj &callee, CallArgs &args) {
  mlir::Block *block = b.getInsertionBlock();
  mlir::Operation *last = block && !block->empty() ? &block->back() : nullptr;
  llvm::DenseSet<mlir::Operation *> *ops = uncountedOps;
  uncountedOps = nullptr; // everything inside is uncounted already
  Obj result;
  try {
    result = call(callee, args);
  } catch (...) {
    uncountedOps = ops;
    throw;
  }
  uncountedOps = ops;
  if (block)
    for (auto it = last ? std::next(last->getIterator()) : block->begin(); it != block->end(); ++it)
      ops->insert(&*it);
  return result;
}

Obj Elaborator::call(const Obj &callee, CallArgs &args) {
  spendFuel(args.range);
  switch (callee->kind()) {
  case Object::Kind::Function:
    return callFunction(llvm::cast<FunctionObj>(*callee), args);
  case Object::Kind::Builtin: {
    const auto &builtin = llvm::cast<BuiltinObj>(*callee);
    if (args.callee.empty())
      args.callee = builtin.name;
    if (std::optional<Obj> computed = static_numpy::call(*this, builtin.name, args))
      return *computed;
    materializeStaticArguments(builtin.name, args);
    if (tracesAtExport(builtin.name, args))
      return callAtExport(builtin.name, builtin.fn, args);
    // JAX defines these with custom_jvp, whose calls Pallas's cost rules
    // skip.
    static const std::set<std::string> kJaxCustomJvp = {
        "jax.nn.relu", "jax.nn.relu6", "jax.nn.log1mexp"};
    if (uncountedOps && kJaxCustomJvp.count(builtin.name))
      return callUncounted(callee, args);
    return builtin.fn(*this, args);
  }
  case Object::Kind::BoundMethod: {
    const auto &method = llvm::cast<BoundMethodObj>(*callee);
    args.positional.insert(args.positional.begin(), method.self);
    args.positionalRanges.insert(args.positionalRanges.begin(), args.range);
    return method.fn(*this, args);
  }
  case Object::Kind::Partial: {
    const auto &p = llvm::cast<PartialObj>(*callee);
    CallArgs merged;
    merged.range = args.range;
    merged.callee = args.callee;
    for (const Obj &a : p.args)
      merged.addPositional(a, args.range);
    for (size_t i = 0; i < args.positional.size(); ++i)
      merged.addPositional(args.positional[i], args.rangeOf(i));
    merged.keywords = p.kwargs;
    merged.keywordRanges.assign(p.kwargs.size(), args.range);
    for (size_t i = 0; i < args.keywords.size(); ++i) {
      bool replaced = false;
      for (auto &existing : merged.keywords)
        if (existing.first == args.keywords[i].first) {
          existing.second = args.keywords[i].second;
          replaced = true;
        }
      if (!replaced) {
        merged.keywords.push_back(args.keywords[i]);
        merged.keywordRanges.push_back(i < args.keywordRanges.size() ? args.keywordRanges[i]
                                                                     : args.range);
      }
    }
    return call(p.function, merged);
  }
  case Object::Kind::PallasCallable:
    return applyPallasCall(llvm::cast<PallasCallableObj>(*callee), args);
  case Object::Kind::DType:
    return castToDType(*this, llvm::cast<DTypeObj>(*callee).dtype, args);
  case Object::Kind::MemorySpace: {
    MemorySpace space = llvm::cast<MemorySpaceObj>(*callee).space;
    if (space == MemorySpace::GPUShared || space == MemorySpace::GPUGlobal ||
        space == MemorySpace::GPUTensorMemory)
      return allocateGpuMemory(*this, space, args); // plgpu.SMEM(shape, dtype, transforms=)
    // `pltpu.VMEM((8, 128), jnp.float32)`: a scratch buffer.
    BoundArgs a = bind(args, {{"shape"}, {"dtype"}});
    std::vector<int64_t> shape = toShape(a[0], a.range(0), "scratch shape");
    for (int64_t d : shape)
      if (d <= 0)
        fail(a.range(0), "scratch buffer dimensions must be positive");
    return std::make_shared<ScratchShapeObj>(shape, toDType(a[1], a.range(1), "dtype"),
                                             llvm::cast<MemorySpaceObj>(*callee).space);
  }
  case Object::Kind::MosaicGpu:
    return callMosaicGpu(*this, callee, args);
  case Object::Kind::Class:
    return instantiate(*this, std::static_pointer_cast<ClassObj>(callee), args);
  case Object::Kind::Instance: {
    Obj method = llvm::cast<InstanceObj>(*callee).cls->lookup("__call__");
    if (!method)
      fail(args.range, "'" + typeName(*callee) + "' object is not callable");
    CallArgs withSelf = args;
    withSelf.positional.insert(withSelf.positional.begin(), callee);
    withSelf.positionalRanges.insert(withSelf.positionalRanges.begin(), args.range);
    return call(method, withSelf);
  }
  case Object::Kind::CustomDerivative: {
    // The primal: what running the function computes (derivatives are
    // JAX's business; their rules can be called as functions of their own).
    const auto &custom = llvm::cast<CustomDerivativeObj>(*callee);
    if (uncountedOps && custom.name == "custom_jvp")
      return callUncounted(custom.function, args);
    return call(custom.function, args);
  }
  case Object::Kind::Descriptor:
    return call(llvm::cast<DescriptorObj>(*callee).function, args);
  case Object::Kind::ContextManager:
    if (llvm::cast<ContextManagerObj>(*callee).run)
      fail(args.range, "a @contextlib.contextmanager context used as a decorator is not "
                       "supported; enter it with a with statement");
    // Used as a decorator (`@jax.named_scope("x")`): the function unchanged.
    if (args.positional.size() != 1 || !args.keywords.empty())
      fail(args.range, "'" + llvm::cast<ContextManagerObj>(*callee).name +
                           "' used as a decorator takes the function only");
    return args.positional[0];
  case Object::Kind::ExtendedDType:
    fail(args.range, "jnp." + llvm::cast<ExtendedDTypeObj>(*callee).name +
                         " values are not supported: pkc's backends do not compute with " +
                         llvm::cast<ExtendedDTypeObj>(*callee).name);
  case Object::Kind::ExceptionType: {
    auto exception = std::make_shared<ExceptionTypeObj>(llvm::cast<ExceptionTypeObj>(*callee).name);
    if (!args.positional.empty()) {
      const Obj &message = args.positional[0];
      exception->message =
          llvm::isa<StrObj>(message.get()) ? llvm::cast<StrObj>(*message).value : repr(*message);
    }
    return exception;
  }
  default:
    checkNotOpaque(callee, args.range);
    fail(args.range, "'" + typeName(*callee) + "' object is not callable");
  }
}

void Elaborator::bindParameters(const FunctionObj &f, CallArgs &args, Frame &target) {
  const std::vector<Parameter> &params = *f.parameters;
  std::string fname = f.name + "()";
  std::vector<bool> bound(params.size(), false);
  size_t positionalSlots = 0;
  std::optional<size_t> varPositional, varKeyword;
  for (size_t i = 0; i < params.size(); ++i) {
    switch (params[i].kind) {
    case Parameter::Kind::Positional:
    case Parameter::Kind::PositionalOnly:
      ++positionalSlots;
      break;
    case Parameter::Kind::VarPositional:
      varPositional = i;
      break;
    case Parameter::Kind::VarKeyword:
      varKeyword = i;
      break;
    default:
      break;
    }
  }
  if (args.positional.size() > positionalSlots && !varPositional)
    fail(args.range, fname + " takes " + std::to_string(positionalSlots) +
                         " positional argument" + (positionalSlots == 1 ? "" : "s") + " but " +
                         std::to_string(args.positional.size()) +
                         (args.positional.size() == 1 ? " was" : " were") + " given");
  size_t next = 0;
  for (size_t i = 0; i < params.size() && next < args.positional.size(); ++i) {
    if (params[i].kind != Parameter::Kind::Positional &&
        params[i].kind != Parameter::Kind::PositionalOnly)
      break;
    target.vars[params[i].name] = args.positional[next++];
    bound[i] = true;
  }
  if (varPositional) {
    std::vector<Obj> rest(args.positional.begin() + next, args.positional.end());
    target.vars[params[*varPositional].name] = makeTuple(rest);
    bound[*varPositional] = true;
  }
  auto extra = std::make_shared<DictObj>();
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    const auto &[name, value] = args.keywords[k];
    bool matched = false;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].name != name || params[i].kind == Parameter::Kind::VarPositional ||
          params[i].kind == Parameter::Kind::VarKeyword ||
          params[i].kind == Parameter::Kind::PositionalOnly)
        continue;
      if (bound[i])
        fail(args.rangeOfKeyword(name), fname + " got multiple values for argument '" + name + "'");
      target.vars[name] = value;
      bound[i] = true;
      matched = true;
    }
    if (!matched) {
      if (!varKeyword)
        fail(args.rangeOfKeyword(name), fname + " got an unexpected keyword argument '" + name + "'");
      extra->entries.emplace_back(makeStr(name), value);
    }
  }
  if (varKeyword) {
    target.vars[params[*varKeyword].name] = extra;
    bound[*varKeyword] = true;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < params.size(); ++i) {
    if (bound[i])
      continue;
    if (f.defaults[i]) {
      target.vars[params[i].name] = f.defaults[i];
      continue;
    }
    missing.push_back("'" + params[i].name + "'");
  }
  if (!missing.empty())
    fail(args.range, fname + " missing " + std::to_string(missing.size()) + " required argument" +
                         (missing.size() == 1 ? "" : "s") + ": " + llvm::join(missing, ", "));
}

Obj Elaborator::callFunction(const FunctionObj &f, CallArgs &args, bool noteCallSite) {
  if (isGenerator(f))
    fail(args.range, "'" + f.name +
                         "' is a generator function (it has a yield), which pkc runs "
                         "only as a @contextlib.contextmanager context in a with statement");
  auto activation = std::make_shared<Frame>();
  activation->parent = f.closure;
  activation->locals = &localsOf(f);
  activation->function = &f;
  // Binding errors are the caller's: report them before entering the call,
  // so that no "in call to" note repeats the call site.
  bindParameters(f, args, *activation);
  CallScope scope(*this, args.range, noteCallSite ? f.name : "");
  FrameSwitch enter(*this, activation);
  if (f.lambdaBody)
    return eval(*f.lambdaBody);
  Flow flow = exec(*f.body);
  if (flow == Flow::Return && activation->returnValue)
    return activation->returnValue;
  return none();
}

BoundArgs Elaborator::bind(CallArgs &args, llvm::ArrayRef<Param> params) {
  std::vector<Param> list(params.begin(), params.end());
  BoundArgs out;
  out.values.assign(list.size(), nullptr);
  out.ranges.assign(list.size(), args.range);
  std::string fname = args.callee.empty() ? "function" : args.callee + "()";
  size_t positionalSlots = 0;
  for (const Param &p : list)
    if (!p.keywordOnly)
      ++positionalSlots;
  if (args.positional.size() > positionalSlots)
    fail(args.range, fname + " takes at most " + std::to_string(positionalSlots) +
                         " positional argument" + (positionalSlots == 1 ? "" : "s") + " but " +
                         std::to_string(args.positional.size()) + " were given");
  for (size_t i = 0; i < args.positional.size(); ++i) {
    out.values[i] = args.positional[i];
    out.ranges[i] = args.rangeOf(i);
  }
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    const std::string &name = args.keywords[k].first;
    const Obj &value = args.keywords[k].second;
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Param &p) { return name == p.name; });
    if (it == list.end())
      fail(args.rangeOfKeyword(name), fname + " got an unexpected keyword argument '" + name + "'");
    size_t i = static_cast<size_t>(it - list.begin());
    if (out.values[i])
      fail(args.rangeOfKeyword(name), fname + " got multiple values for argument '" + name + "'");
    out.values[i] = value;
    out.ranges[i] = args.rangeOfKeyword(name);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (out.values[i])
      continue;
    if (!list[i].defaultValue && !list[i].optional)
      fail(args.range, fname + " missing required argument '" + list[i].name + "'");
    out.values[i] = list[i].defaultValue;
  }
  return out;
}

Obj callAt(Elaborator &el, const Obj &f, const std::vector<Obj> &positional,
           const std::vector<std::pair<std::string, Obj>> &keywords, SourceRange r,
           const std::string &callee) {
  CallArgs args;
  args.range = r;
  args.callee = callee;
  for (const Obj &p : positional)
    args.addPositional(p, r);
  for (const auto &[name, value] : keywords) {
    args.keywords.emplace_back(name, value);
    args.keywordRanges.push_back(r);
  }
  return el.call(f, args);
}

} // namespace pk::elab
