//===- Elaborator.cpp - Driver, errors, locations, symbols ----------------===//
#include "frontend/elab/Elaborator.h"

#include "frontend/elab/Builtins.h"
#include "frontend/parse/Parser.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace pk::elab {

namespace {
constexpr size_t kMaxCallDepth = 200;
constexpr size_t kMaxNotes = 8;
} // namespace

SourceRange CallArgs::rangeOfKeyword(const std::string &name) const {
  for (size_t i = 0; i < keywords.size(); ++i)
    if (keywords[i].first == name && i < keywordRanges.size())
      return keywordRanges[i];
  return range;
}

Obj CallArgs::takeKeyword(const std::string &name) {
  for (size_t i = 0; i < keywords.size(); ++i) {
    if (keywords[i].first != name)
      continue;
    Obj value = keywords[i].second;
    keywords.erase(keywords.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < keywordRanges.size())
      keywordRanges.erase(keywordRanges.begin() + static_cast<std::ptrdiff_t>(i));
    return value;
  }
  return nullptr;
}

Elaborator::Elaborator(const ast::Module &module, const ElaborationOptions &options,
                       DiagnosticEngine &diagnostics, MLIRContext &context)
    : module(module), options(options), diagnostics(diagnostics), ctx(&context), b(&context) {
  arrayOps = std::make_unique<ArrayOps>(*this);
  globals = std::make_shared<Frame>();
  frame = globals;
  defineBuiltins();
  // pkc reads a file as Python imports a module: `__name__` is its name,
  // never "__main__", so an `if __name__ == "__main__":` block (a ported
  // kernel's benchmark driver) does not run.
  globals->vars["__name__"] = makeStr(llvm::sys::path::stem(sources().name(module.file)).str());
  globals->vars["__file__"] = makeStr(sources().name(module.file));
  setSymbolNames(&symbolNames); // messages say N, not s0
  setStaticItemBudget(options.staticItemLimit);
}

Elaborator::~Elaborator() {
  setSymbolNames(nullptr);
  setStaticItemBudget(UINT64_MAX);
  // Break the frame <-> function cycles (closureFrame()): with the frames'
  // variables gone, the functions, classes and values they held are freed.
  for (const std::weak_ptr<Frame> &weak : closureFrames)
    if (std::shared_ptr<Frame> captured = weak.lock()) {
      captured->vars.clear();
      captured->returnValue = nullptr;
    }
  for (const std::weak_ptr<ClassObj> &weak : definedClasses)
    if (std::shared_ptr<ClassObj> cls = weak.lock()) {
      cls->attributes.clear();
      cls->annotated.clear();
      cls->bases.clear();
    }
}

std::shared_ptr<Frame> Elaborator::closureFrame() {
  std::shared_ptr<Frame> f = frame;
  while (f->classBody)
    f = f->parent;
  if (closureFrames.empty() || closureFrames.back().lock() != f) {
    // Calls make frames by the thousand; forget those already freed
    // whenever the list doubles, so it stays proportional to the live ones.
    if (closureFrames.size() == closureFrames.capacity() && !closureFrames.empty())
      llvm::erase_if(closureFrames, [](const std::weak_ptr<Frame> &w) { return w.expired(); });
    closureFrames.push_back(f);
  }
  return f;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

void Elaborator::fail(SourceRange range, const std::string &message) {
  Diagnostic d(Severity::Error, range, message);
  auto sameSite = [](const CallSite &a, const CallSite &b) {
    auto same = [](SourceLocation x, SourceLocation y) {
      return x.file == y.file && x.line == y.line && x.column == y.column;
    };
    return a.callee == b.callee && same(a.range.begin, b.range.begin) &&
           same(a.range.end, b.range.end);
  };
  size_t notes = 0, left = callStack.size();
  while (left > 0 && notes < kMaxNotes) {
    // A run of calls from the same site (recursion) becomes one note.
    const CallSite &site = callStack[left - 1];
    size_t run = 1;
    while (run < left && sameSite(callStack[left - 1 - run], site))
      ++run;
    left -= run;
    if (site.callee.empty())
      continue; // an export's own body: nothing called it
    d.addNote(site.range, "in call to '" + site.callee + "'" +
                              (run > 1 ? " (" + std::to_string(run) + " nested calls from here)"
                                       : ""));
    ++notes;
  }
  if (left > 0 && !(left == 1 && callStack.front().callee.empty()))
    d.addNote(callStack.front().range, "... " + std::to_string(left) + " more calls");
  throw ElabError{std::move(d)};
}

void Elaborator::raise(SourceRange range, const std::string &type, const std::string &message,
                       bool named) {
  try {
    fail(range, !named ? message : message.empty() ? type : type + ": " + message);
  } catch (ElabError &e) {
    e.exception = type;
    throw;
  }
}

void Elaborator::failOpaque(const NamespaceObj &opaque, SourceRange range) {
  try {
    fail(range, "'" + opaque.name + "' cannot be used: " + opaque.why);
  } catch (ElabError &e) {
    if (opaque.importedAt.isValid())
      e.diagnostic.addNote(opaque.importedAt, "imported here");
    // A program may catch it, as Python would let it catch a missing
    // optional module (imports here fail where the module is first used)
    // or a device query a backend does not answer: the fallback runs.
    e.exception = opaque.importedAt.isValid() ? "ModuleNotFoundError" : "RuntimeError";
    throw;
  }
}

void Elaborator::failNotAffine(SourceRange range, const std::string &message) {
  if (emitMode == EmitMode::IndexMapAffine)
    throw NotAffine{range};
  fail(range, message);
}

void Elaborator::warn(SourceRange range, const std::string &message) {
  diagnostics.warning(range, message);
}

void Elaborator::note(const Diagnostic &diagnostic) { diagnostics.report(diagnostic); }

void Elaborator::defineBuiltins() {
  installPythonBuiltins(*this, builtins);
  installClassBuiltins(*this, builtins);
  modules = makeModules(*this);
}

void Elaborator::spendFuel(SourceRange range) {
  if (++fuel > options.stepLimit)
    fail(range, "elaboration did not finish within " + std::to_string(options.stepLimit) +
                    " steps; is there an endless static loop or recursion?");
}

void Elaborator::failStaticBudget(SourceRange range) {
  fail(range, "static values built so far would take more than " +
                  std::to_string(options.staticItemLimit) +
                  " list items (or that much memory in strings); is a list or string growing "
                  "without end?");
}

//===----------------------------------------------------------------------===//
// Locations and modes
//===----------------------------------------------------------------------===//

Location Elaborator::loc(SourceRange range) {
  auto plain = [&](SourceRange r) -> Location {
    if (!r.isValid())
      return UnknownLoc::get(ctx);
    StringAttr file = StringAttr::get(ctx, sources().name(r.begin.file));
    SourceLocation end = r.end.isValid() ? r.end : r.begin;
    return FileLineColRange::get(file, r.begin.line, r.begin.column, end.line, end.column);
  };
  Location here = plain(range);
  if (callStack.empty())
    return here;
  Location caller = plain(callStack.front().range);
  for (size_t i = 1; i < callStack.size(); ++i)
    caller = CallSiteLoc::get(plain(callStack[i].range), caller);
  return CallSiteLoc::get(here, caller);
}

void Elaborator::requireKernel(SourceRange range, const std::string &what) {
  switch (emitMode) {
  case EmitMode::Kernel:
  case EmitMode::IndexMapRegion:
    return;
  case EmitMode::IndexMapAffine:
    throw NotAffine{range};
  case EmitMode::Export:
    fail(range, what + " can only be used inside a kernel; an export may only call "
                       "pallas_call and compute static values");
  case EmitMode::Module:
    fail(range, what + " can only be used inside a kernel");
  }
}

Elaborator::KernelSite Elaborator::kernelSite() {
  mlir::Block *block = b.getInsertionBlock();
  mlir::Region *region = block ? block->getParent() : nullptr;
  for (mlir::Operation *op = region ? region->getParentOp() : nullptr; op;
       region = op->getParentRegion(), op = region ? region->getParentOp() : nullptr) {
    if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op))
      return {op, region == &call.getKernel()};
    if (llvm::isa<pk::MeshKernelOp>(op))
      return {op, true};
  }
  return {};
}

pk::PallasCallOp Elaborator::KernelSite::pallasCallBody() const {
  return inBody ? llvm::dyn_cast_or_null<pk::PallasCallOp>(kernel) : nullptr;
}

Elaborator::ModeGuard::ModeGuard(Elaborator &el, EmitMode mode)
    : el(el), saved(el.emitMode), insertion(el.b) {
  el.emitMode = mode;
}

Elaborator::ModeGuard::~ModeGuard() { el.emitMode = saved; }

CallScope::CallScope(Elaborator &el, SourceRange site, const std::string &callee) : el(el) {
  if (el.callStack.size() >= kMaxCallDepth)
    el.fail(site, "maximum recursion depth (" + std::to_string(kMaxCallDepth) +
                      ") exceeded while calling '" + callee + "'");
  el.callStack.push_back({site, callee});
}

CallScope::~CallScope() { el.callStack.pop_back(); }

//===----------------------------------------------------------------------===//
// Symbolic sizes
//===----------------------------------------------------------------------===//

AffineExpr Elaborator::symbolFor(const std::string &name) {
  for (size_t i = 0; i < symbolNames.size(); ++i)
    if (symbolNames[i] == name)
      return getAffineSymbolExpr(static_cast<unsigned>(i), ctx);
  symbolNames.push_back(name);
  return getAffineSymbolExpr(static_cast<unsigned>(symbolNames.size() - 1), ctx);
}

std::optional<AffineExpr> Elaborator::affineBinary(ast::BinaryOp op, AffineExpr a, AffineExpr b) {
  switch (op) {
  case ast::BinaryOp::Add:
    return a + b;
  case ast::BinaryOp::Sub:
    return a - b;
  case ast::BinaryOp::Mul:
    if (a.isSymbolicOrConstant() || b.isSymbolicOrConstant())
      return a * b;
    return std::nullopt;
  case ast::BinaryOp::FloorDiv:
  case ast::BinaryOp::Mod:
    if (auto c = llvm::dyn_cast<AffineConstantExpr>(b)) {
      if (c.getValue() <= 0)
        return std::nullopt; // affine division needs a positive divisor
    } else if (!b.isSymbolicOrConstant()) {
      return std::nullopt;
    }
    return op == ast::BinaryOp::FloorDiv ? a.floorDiv(b) : a % b;
  default:
    return std::nullopt;
  }
}

Value Elaborator::materializeSymbolic(AffineExpr expr, SourceRange r) {
  requireKernel(r, "symbolic sizes as values");
  AffineMap map = AffineMap::get(0, static_cast<unsigned>(symbolNames.size()), expr);
  return pk::SymbolicSizeOp::create(b, loc(r), b.getI32Type(), AffineMapAttr::get(map));
}

Obj Elaborator::withPipelineGrid(const PipelineGrid *grid, llvm::function_ref<Obj()> trace) {
  const PipelineGrid *outer = activePipelineGrid;
  activePipelineGrid = grid;
  try {
    Obj result = trace();
    activePipelineGrid = outer;
    return result;
  } catch (...) {
    activePipelineGrid = outer;
    throw;
  }
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

Obj Elaborator::defineValue(const ElaborationOptions::Define &define) {
  std::unique_ptr<ast::Expr> expr = parseExpression(define.valueFile, diagnostics);
  if (!expr)
    throw ElabError{Diagnostic(Severity::Note, SourceRange(), "")};
  // -D values are plain literals, but evaluating them with the full
  // evaluator keeps `-D SHAPE=(128,64)` and `-D DTYPE=jnp.bfloat16` working.
  // The usual module aliases resolve even where the module has not
  // imported them yet (a -D the module never assigns is read first thing).
  auto scope = std::make_shared<Frame>();
  scope->parent = globals;
  static const std::pair<const char *, const char *> aliases[] = {
      {"jax", "jax"},
      {"jnp", "jax.numpy"},
      {"np", "numpy"},
      {"pl", "jax.experimental.pallas"},
      {"pltpu", "jax.experimental.pallas.tpu"},
      {"plgpu", "jax.experimental.pallas.triton"},
      {"lax", "jax.lax"},
      {"math", "math"},
      {"functools", "functools"},
  };
  for (const auto &[alias, dotted] : aliases)
    if (!globals->vars.count(alias) && modules.count(dotted))
      scope->vars[alias] = modules.at(dotted);
  FrameSwitch enter(*this, scope);
  definedExprs.push_back(std::move(expr));
  return eval(*definedExprs.back());
}

void Elaborator::applyDefines() {
  // A -D for a name the module assigns takes effect at that assignment, so
  // that its value can use the module's imports and earlier constants.
  moduleAssignments = moduleConstants(module);
  for (const ElaborationOptions::Define &define : options.defines) {
    definedNames.insert(define.name);
    if (moduleAssignments.count(define.name))
      deferredDefines[define.name] = &define;
    else
      globals->vars[define.name] = defineValue(define);
  }
}

mlir::OwningOpRef<ModuleOp> Elaborator::run() {
  StringAttr file = StringAttr::get(ctx, sources().name(module.file));
  irModule = ModuleOp::create(FileLineColLoc::get(file, 1, 1));
  (*irModule)->setAttr("pk.source", file);
  b.setInsertionPointToEnd(irModule->getBody());
  try {
    applyDefines();
    importStack.push_back(&module);
    importFrames.push_back(nullptr);
    exec(module.body);
    // A selection naming an export the file lacks elaborates them all, so
    // that the caller can say which there are.
    bool selects = llvm::all_of(options.onlyExports, [&](const std::string &wanted) {
      return llvm::any_of(pendingExports, [&](const auto &e) { return e.first->name == wanted; });
    });
    for (const auto &[function, range] : pendingExports)
      if (!selects || options.onlyExports.empty() ||
          llvm::is_contained(options.onlyExports, function->name))
        elaborateExport(*function, range);
    for (const Autotuned &entry : autotuned)
      if (llvm::none_of(pendingExports, [&](const auto &e) { return e.first == entry.function; }))
        warn(entry.range, "@autotune on '" + entry.function->name +
                              "', which is not an export: pkc tune tries configurations of "
                              "exports only");
    if (pendingExports.empty())
      warn(SourceRange({module.file, 1, 1}, {module.file, 1, 1}),
           "no function is marked @export, so nothing is compiled");
  } catch (ElabError &e) {
    if (!e.diagnostic.message.empty())
      diagnostics.report(e.diagnostic);
    return nullptr;
  } catch (const StaticBudgetExceeded &) {
    // Every expression reports this itself; a value built outside any
    // expression still gets a diagnostic rather than an escaped exception.
    diagnostics.error(SourceRange({module.file, 1, 1}, {module.file, 1, 1}),
                      "static values take more than " + std::to_string(options.staticItemLimit) +
                          " list items");
    return nullptr;
  }
  for (const std::string &name : definedNames)
    if (!usedDefines.count(name))
      diagnostics.warning(SourceRange(), "-D " + name + " is never used by the program");

  // The elaborator's own checks should leave nothing for the verifier; if
  // it does complain, report it at the op's source line as an internal
  // error rather than crashing or printing invalid IR.
  std::string verifierMessage;
  SourceRange verifierRange;
  {
    ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
      if (verifierMessage.empty()) {
        llvm::raw_string_ostream os(verifierMessage);
        os << d;
        if (auto range = llvm::dyn_cast<FileLineColRange>(d.getLocation()))
          if (uint32_t id = sources().findFile(range.getFilename().getValue()))
            verifierRange = SourceRange({id, range.getStartLine(), range.getStartColumn()},
                                        {id, range.getEndLine(), range.getEndColumn()});
      }
      return success();
    });
    if (failed(mlir::verify(*irModule))) {
      diagnostics.error(verifierRange,
                        "internal compiler error: the generated IR is invalid: " + verifierMessage);
      return nullptr;
    }
  }
  return std::move(irModule);
}

} // namespace pk::elab

namespace pk {

mlir::OwningOpRef<mlir::ModuleOp> elaborate(const ast::Module &module,
                                            const ElaborationOptions &options,
                                            DiagnosticEngine &diagnostics,
                                            mlir::MLIRContext &context) {
  context.loadDialect<PkDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect>();
  elab::Elaborator elaborator(module, options, diagnostics, context);
  return elaborator.run();
}

} // namespace pk
