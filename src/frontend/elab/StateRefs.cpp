//===- StateRefs.cpp - Refs of whole arrays made outside kernels ----------===//
//
// The bookkeeping of StateRefs.h. The export's Refs live in a deque (their
// addresses stay put as more are made); each open pl.run_state keeps its
// Refs on the C++ stack and registers them while `f` runs.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/StateRefs.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Tree.h"

#include <deque>

namespace pk::elab {

struct StateRefScopes {
  std::deque<StateRef> exportRefs;
  std::vector<std::vector<StateRef> *> runStates;
};

namespace {

StateRefScopes &scopesOf(Elaborator &el) {
  if (!el.stateRefs)
    el.stateRefs = std::make_shared<StateRefScopes>();
  return *el.stateRefs;
}

std::vector<int64_t> staticShape(Elaborator &el, const GlobalArrayObj &array, SourceRange r) {
  std::vector<int64_t> shape;
  for (const Dim &d : array.shape) {
    if (!d.isStatic())
      el.fail(r, "a Ref of a whole array made outside kernels needs a static shape, and this "
                 "array's is (" +
                     el.describeDims(array.shape) + "); fix the size with -D (e.g. -D " +
                     el.describeDims({d}) + "=1024)");
    shape.push_back(d.value);
  }
  return shape;
}

std::shared_ptr<RefObj> refHolding(Elaborator &el, const GlobalArrayObj &array, SourceRange r) {
  if (!array.batch.empty())
    el.fail(r, "a Ref of an array mapped by jax.vmap is not supported");
  // No IR value until a kernel running on it gives it memory.
  return std::make_shared<RefObj>(mlir::Value(), staticShape(el, array, r), array.dtype);
}

/// Whether mapLeaves walks into `o` rather than handing it over.
bool isNode(const Obj &o) {
  return isNone(o) || llvm::isa<SequenceObj, DictObj>(o.get()) || pytreeDataFields(o);
}

} // namespace

std::vector<StateRef *> liveStateRefs(Elaborator &el) {
  std::vector<StateRef *> live;
  StateRefScopes &scopes = scopesOf(el);
  for (StateRef &s : scopes.exportRefs)
    live.push_back(&s);
  for (std::vector<StateRef> *scope : scopes.runStates)
    for (StateRef &s : *scope)
      live.push_back(&s);
  return live;
}

StateRef *findStateRef(Elaborator &el, const RefObj &ref) {
  for (StateRef *s : liveStateRefs(el))
    if (s->ref.get() == &ref)
      return s;
  return nullptr;
}

std::shared_ptr<RefObj> newExportRef(Elaborator &el, std::shared_ptr<GlobalArrayObj> array,
                                     MemorySpace space, SourceRange r) {
  std::shared_ptr<RefObj> ref = refHolding(el, *array, r);
  scopesOf(el).exportRefs.push_back({ref, std::move(array), space});
  return ref;
}

Obj readStateRef(Elaborator &el, const StateRef &ref, const Obj &index, SourceRange r) {
  return subscript(el, ref.array, index, r);
}

void writeStateRef(Elaborator &el, StateRef &ref, const Obj &index, const Obj &value,
                   SourceRange r) {
  Obj at = subscript(el, getAttribute(el, ref.array, "at", r), index, r);
  CallArgs args;
  args.range = r;
  args.addPositional(value, r);
  auto updated =
      std::dynamic_pointer_cast<GlobalArrayObj>(el.call(getAttribute(el, at, "set", r), args));
  if (!updated || updated->dtype != ref.array->dtype || !(updated->shape == ref.array->shape))
    el.fail(r, "internal error: an update of a Ref's array changed it");
  ref.array = updated;
}

Obj runStateAtExport(Elaborator &el, const Obj &f, const Obj &initial, SourceRange r) {
  std::vector<StateRef> scope;
  Obj refs = mapLeaves(initial, [&](const Obj &leaf) -> Obj {
    if (isNode(leaf))
      return nullptr;
    auto array = std::dynamic_pointer_cast<GlobalArrayObj>(leaf);
    if (!array)
      el.fail(r, "pl.run_state takes arrays (a tuple of them for several), got " + repr(*leaf));
    scope.push_back({refHolding(el, *array, r), array, MemorySpace::Any});
    return scope.back().ref;
  });
  StateRefScopes &scopes = scopesOf(el);
  scopes.runStates.push_back(&scope);
  struct Pop {
    StateRefScopes &scopes;
    ~Pop() { scopes.runStates.pop_back(); }
  } pop{scopes};
  CallArgs args;
  args.range = r;
  args.callee = "run_state body";
  args.addPositional(refs, r);
  el.call(f, args);
  // The arrays the Refs hold now, in the tree of `initial`.
  size_t next = 0;
  return mapLeaves(initial, [&](const Obj &leaf) -> Obj {
    return isNode(leaf) ? nullptr : Obj(scope[next++].array);
  });
}

void withStateMemory(const std::vector<StateRef *> &refs, const std::vector<mlir::Value> &memory,
                     const std::function<void()> &body) {
  struct Release {
    const std::vector<StateRef *> &refs;
    ~Release() {
      for (StateRef *s : refs)
        s->ref->value = mlir::Value();
    }
  } release{refs};
  for (size_t i = 0; i < refs.size(); ++i)
    refs[i]->ref->value = memory[i];
  body();
}

void resetStateRefs(Elaborator &el) { el.stateRefs.reset(); }

} // namespace pk::elab
