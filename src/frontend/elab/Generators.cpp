//===- Generators.cpp - @contextlib.contextmanager generator functions ----===//
//
// A function with a `yield` is a generator. pkc runs generators the one
// way production code around kernels uses them: as context managers
// (`@contextlib.contextmanager`, entered by a `with` statement). Python
// suspends the generator at its `yield`, runs the `with` body, then resumes
// it; pkc runs the body *at* the yield, in the caller's frame, and goes on
// with the generator. What the body does to the caller (a `return`, a
// `break`) takes effect once the generator has finished, and an exception
// the body raises goes through the generator's `try` / `finally` at the
// yield, as Python throws it there.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"

namespace pk::elab {

using namespace ast;

namespace {

/// Whether `body` yields (not counting the functions and classes it
/// defines, which are scopes of their own).
bool yieldsIn(const StmtList &body) {
  for (const StmtPtr &s : body) {
    if (llvm::isa<YieldStmt>(*s))
      return true;
    bool nested = false;
    forEachNestedBody(*s, [&](const StmtList &inner) { nested = nested || yieldsIn(inner); });
    if (nested)
      return true;
  }
  return false;
}

} // namespace

bool Elaborator::isGenerator(const FunctionObj &f) {
  if (!f.body)
    return false; // a lambda
  auto [it, inserted] = generatorCache.try_emplace(f.body, false);
  if (inserted)
    it->second = yieldsIn(*f.body);
  return it->second;
}

Flow Elaborator::runContextGenerator(const FunctionObj &f, CallArgs &args,
                                     const std::function<Flow(const Obj &)> &body) {
  auto activation = std::make_shared<Frame>();
  activation->parent = f.closure;
  activation->locals = &localsOf(f);
  activation->function = &f;
  bindParameters(f, args, *activation);
  std::shared_ptr<Frame> caller = frame;
  unsigned yielded = 0;
  Flow bodyFlow = Flow::Normal;
  std::function<void(const Obj &, SourceRange)> atYield = [&](const Obj &value, SourceRange at) {
    if (yielded++)
      fail(at, "the @contextlib.contextmanager function '" + f.name +
                   "' yields a second time; it must yield once (Python raises RuntimeError: "
                   "generator didn't stop)");
    FrameSwitch back(*this, caller);
    bodyFlow = body(value);
  };
  activation->onYield = &atYield;
  {
    CallScope scope(*this, args.range, f.name);
    FrameSwitch enter(*this, activation);
    exec(*f.body); // what it returns, contextmanager ignores
  }
  if (!yielded)
    fail(args.range, "the @contextlib.contextmanager function '" + f.name +
                         "' returned without yielding (Python raises RuntimeError: generator "
                         "didn't yield)");
  return bodyFlow;
}

Flow Elaborator::execYield(const YieldStmt &s) {
  Obj value = s.value ? eval(*s.value) : none();
  if (!frame->onYield)
    fail(s.range(), "'yield' makes a generator, which pkc runs only as a "
                    "@contextlib.contextmanager function entered by a with statement");
  (*frame->onYield)(value, s.range());
  return Flow::Normal;
}

} // namespace pk::elab
