//===- BuiltinsCheckify.cpp - jax.experimental.checkify --------------------===//
//
// checkify turns assertions into values: `err, out = checkify.checkify(f)
// (*args)`, with `checkify.check(pred, msg)` inside f, and `err.throw()`
// raising what failed. pkc has no run-time error channel, so a check is
// decided when the program is compiled: a predicate known then (Python
// values, shapes, static arguments) that is false is an error at the
// check's line; one that depends on arrays (known only at run time) is
// refused by name rather than dropped. checkify's automatic checks (NaNs,
// out-of-bounds indexing, division by zero) are refused too. A checkified
// function whose checks all hold returns an error value that holds no
// error: `throw()` and `get()` do nothing.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"

namespace pk::elab {

namespace {

/// The Error value of a checkified function whose checks held.
Obj noError() {
  auto error = std::make_shared<NamespaceObj>("checkify.Error");
  auto nothing = [](Elaborator &, CallArgs &) -> Obj { return none(); };
  define(*error, "throw", nothing);
  define(*error, "get", nothing);
  define(*error, "get_exception", nothing);
  return error;
}

bool knownOnlyAtRunTime(const Obj &o) {
  return llvm::isa<ArrayObj, GlobalArrayObj, RefObj>(o.get());
}

Obj check(Elaborator &el, CallArgs &args) {
  if (args.positional.size() < 2)
    el.fail(args.range, "checkify.check(pred, msg, *fmt_args) needs a predicate and a message");
  const Obj &pred = args.positional[0];
  SourceRange where = args.rangeOf(0);
  if (knownOnlyAtRunTime(pred))
    el.fail(where, "checkify.check of a value known only at run time is not supported: pkc has "
                   "no run-time error channel (a check of values known when compiling, such "
                   "as Python numbers, shapes and static arguments, is decided then)");
  if (el.truthy(pred, where))
    return none();
  // msg.format(*fmt_args, **fmt_kwargs), as checkify formats it.
  CallArgs format = args;
  format.positional.erase(format.positional.begin());
  if (!format.positionalRanges.empty())
    format.positionalRanges.erase(format.positionalRanges.begin());
  el.fail(args.range, "checkify.check failed: " + strOf(formatMethod(el, format)));
}

} // namespace

std::shared_ptr<NamespaceObj> makeCheckifyNamespace() {
  auto ns = std::make_shared<NamespaceObj>("jax.experimental.checkify");
  NamespaceObj &n = *ns;
  // Error sets: only user checks (checkify.check) are supported.
  n.members["user_checks"] = makeStr("user_checks");
  for (const char *automatic : {"nan_checks", "index_checks", "div_checks", "float_checks",
                                "automatic_checks", "all_checks"})
    n.members[automatic] = makeStr(automatic);
  define(n, "check", check);
  define(n, "checkify", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"f"}, {"errors", makeStr("user_checks"), true}});
    if (auto *errors = llvm::dyn_cast<StrObj>(a[1].get()); !errors || errors->value != "user_checks")
      el.fail(a.range(1), "checkify's automatic checks (" + repr(*a[1]) +
                              ") are not supported; pkc decides checkify.check when compiling "
                              "(errors=checkify.user_checks)");
    Obj fun = a[0];
    return std::make_shared<BuiltinObj>("checkified", [fun](Elaborator &el, CallArgs &call) -> Obj {
      Obj out = el.call(fun, call);
      return makeTuple({noError(), out});
    });
  });
  return ns;
}

} // namespace pk::elab
