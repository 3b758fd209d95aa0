//===- StateRefs.cpp - Refs of whole arrays made outside kernels ----------===//
//
// The bookkeeping of StateRefs.h. The export's Refs live in a deque (their
// addresses stay put as more are made); each open pl.run_state keeps its
// Refs on the C++ stack and registers them while `f` runs. The kernels that
// run on them are pallas_calls made again with the operands the Refs take
// (keepCoreMapRefs, finishStateOperands): an op's results cannot change.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/StateRefs.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

#include <deque>

namespace pk::elab {

struct StateRefScopes {
  std::deque<StateRef> exportRefs;
  std::vector<std::vector<StateRef> *> runStates;
  /// For each pallas_call whose kernel is being elaborated: the Refs of
  /// whole arrays its kernel took, in the order it first used them, and
  /// the export's scalars it captured, each with its SMEM Ref.
  struct CallOperands {
    std::vector<StateRef *> refs;
    std::vector<std::pair<std::shared_ptr<GlobalArrayObj>, mlir::Value>> scalars;
    std::vector<SourceRange> scalarRanges; ///< where each was first used
  };
  llvm::DenseMap<mlir::Operation *, CallOperands> callOperands;
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

namespace {

mlir::Attribute wholeArraySpec(pk::PallasCallOp call, llvm::ArrayRef<int64_t> shape,
                               MemorySpace space) {
  mlir::MLIRContext *ctx = call.getContext();
  size_t rank = shape.size();
  std::vector<int64_t> zeros(rank, 0);
  std::vector<pk::BlockDimKind> kinds(rank, pk::BlockDimKind::Blocked);
  std::vector<mlir::AffineExpr> origin(rank, mlir::getAffineConstantExpr(0, ctx));
  auto map = mlir::AffineMap::get(call.getGridRank(), call.getNumExportSymbols(), origin, ctx);
  return pk::BlockSpecAttr::get(ctx, shape, kinds, zeros, zeros, map,
                                pk::MemorySpaceAttr::get(ctx, space));
}

/// `call` made again with these operands, results and their attributes
/// (the kernel and index_map regions moved over, the rest kept); `call`
/// is erased.
pk::PallasCallOp recreate(pk::PallasCallOp call, llvm::ArrayRef<mlir::Value> inputs,
                          llvm::ArrayRef<mlir::Type> results,
                          llvm::ArrayRef<mlir::Attribute> inSpecs,
                          llvm::ArrayRef<mlir::Attribute> outSpecs,
                          llvm::ArrayRef<mlir::Attribute> outShapes,
                          llvm::ArrayRef<int64_t> aliases, mlir::ArrayAttr names) {
  mlir::OpBuilder b(call);
  auto rebuilt = pk::PallasCallOp::create(
      b, call.getLoc(), results, inputs, call.getGridBounds(), call.getNameAttr(),
      call.getGridAttr(), b.getArrayAttr(inSpecs), b.getArrayAttr(outSpecs),
      b.getArrayAttr(outShapes), call.getScratchTypesAttr(), b.getDenseI64ArrayAttr(aliases),
      call.getCompilerParamsAttr(), names, call.getNumScalarPrefetchAttr());
  for (mlir::NamedAttribute attr : call->getDiscardableAttrs())
    rebuilt->setAttr(attr.getName(), attr.getValue());
  rebuilt.getKernel().takeBody(call.getKernel());
  rebuilt.getIndexMap().takeBody(call.getIndexMap());
  call.erase();
  return rebuilt;
}

/// Whether every use of the kernel's Ref `ref` only reads it: loads,
/// gathers, async copies from it and pipelines taking it as an input.
bool onlyRead(mlir::Value ref) {
  for (mlir::OpOperand &use : ref.getUses()) {
    mlir::Operation *op = use.getOwner();
    if (llvm::isa<pk::LoadOp, pk::GatherOp>(op))
      continue;
    // An async copy's start and wait name its source first.
    if (llvm::isa<pk::DmaStartOp, pk::DmaWaitOp>(op) && use.getOperandNumber() == 0 &&
        op->getOperand(1) != ref)
      continue;
    if (auto pipeline = llvm::dyn_cast<pk::PipelineOp>(op);
        pipeline && use.getOperandNumber() < pipeline.getInSpecs().size())
      continue; // its refs come first, inputs before outputs
    return false;
  }
  return true;
}

/// `list` with `values` inserted at `at`.
llvm::SmallVector<mlir::Attribute> inserted(llvm::ArrayRef<mlir::Attribute> list, size_t at,
                                            llvm::ArrayRef<mlir::Attribute> values) {
  llvm::SmallVector<mlir::Attribute> result(list.begin(), list.end());
  result.insert(result.begin() + static_cast<std::ptrdiff_t>(at), values.begin(), values.end());
  return result;
}

} // namespace

bool takeStateMemory(Elaborator &el, const RefObj &ref, SourceRange r) {
  StateRef *s = findStateRef(el, ref);
  pk::PallasCallOp call = s ? el.kernelSite().pallasCallBody() : nullptr;
  if (!call)
    return false;
  if (!el.activeVmaps().empty())
    el.fail(r, "a pallas_call under jax.vmap whose kernel uses a Ref made outside kernels is not "
               "supported; pass the array to the pallas_call");
  StateRefScopes::CallOperands &operands = scopesOf(el).callOperands[call];
  std::vector<StateRef *> &taken = operands.refs;
  mlir::MLIRContext *ctx = call.getContext();
  unsigned prefetch = static_cast<unsigned>(call.getNumScalarPrefetch()) +
                      static_cast<unsigned>(operands.scalars.size());
  unsigned inputs = static_cast<unsigned>(call.getInputs().size()) -
                    static_cast<unsigned>(call.getNumScalarPrefetch());
  unsigned k = static_cast<unsigned>(taken.size());
  auto type = pk::RefType::get(s->ref->shape, storageType(ctx, s->array->dtype),
                               pk::MemorySpaceAttr::get(ctx, s->space));
  mlir::Block &kernel = call.getKernelBlock();
  kernel.insertArgument(prefetch + k, type, el.loc(r));
  // Written through the output, as core_map's Refs are (the CUDA launch
  // copies an aliased input into its output first).
  mlir::Value out = kernel.insertArgument(prefetch + (k + 1) + inputs + k, type, el.loc(r));
  taken.push_back(s);
  s->ref->value = out;
  return true;
}

Obj capturedScalar(Elaborator &el, const Obj &value, SourceRange r) {
  auto array = std::dynamic_pointer_cast<GlobalArrayObj>(value);
  if (!array || !array->shape.empty() || !array->batch.empty() || !el.tpuCoreAxis)
    return nullptr;
  pk::PallasCallOp call = el.kernelSite().pallasCallBody();
  if (!call)
    return nullptr;
  StateRefScopes::CallOperands &operands = scopesOf(el).callOperands[call];
  mlir::Value ref;
  for (const auto &[scalar, arg] : operands.scalars)
    if (scalar->value == array->value)
      ref = arg;
  mlir::MLIRContext *ctx = call.getContext();
  if (!ref) {
    // As Pallas passes a core_map's captured scalars: a 1-element SMEM
    // Ref each, ahead of the other inputs.
    auto type = pk::RefType::get({1}, storageType(ctx, array->dtype),
                                 pk::MemorySpaceAttr::get(ctx, MemorySpace::SMEM));
    unsigned at = static_cast<unsigned>(call.getNumScalarPrefetch() + operands.scalars.size());
    ref = call.getKernelBlock().insertArgument(at, type, el.loc(r));
    operands.scalars.emplace_back(array, ref);
    operands.scalarRanges.push_back(r);
  }
  RefObj scalarRef(ref, {1}, array->dtype);
  return loadRef(el, scalarRef, makeTuple({makeInt(0)}), nullptr, nullptr, r);
}

pk::PallasCallOp keepCoreMapRefs(pk::PallasCallOp call, size_t n, std::vector<bool> &written) {
  // The call's inputs: the scalars the body captured, then the n Refs;
  // its outputs: the n Refs.
  mlir::Block &kernel = call.getKernelBlock();
  size_t m = call.getInputs().size() - n;
  auto in = [&](size_t i) { return static_cast<unsigned>(m + i); };
  auto out = [&](size_t i) { return static_cast<unsigned>(m + n + i); };
  std::vector<bool> used(n);
  written.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    mlir::Value ref = kernel.getArgument(out(i));
    used[i] = !ref.use_empty();
    written[i] = used[i] && !onlyRead(ref);
    if (used[i] && !written[i])
      ref.replaceAllUsesWith(kernel.getArgument(in(i)));
  }
  mlir::OpBuilder b(call);
  if (std::find(written.begin(), written.end(), true) == written.end()) {
    call.erase();
    return nullptr;
  }
  llvm::SmallVector<mlir::Value> inputs(call.getInputs().take_front(m));
  llvm::SmallVector<mlir::Type> results;
  llvm::SmallVector<mlir::Attribute> inSpecs(call.getInSpecs().getValue().take_front(m));
  llvm::SmallVector<mlir::Attribute> outSpecs, outShapes, names;
  llvm::SmallVector<int64_t> aliases;
  llvm::BitVector erased(kernel.getNumArguments());
  mlir::ArrayAttr oldNames = call.getKernelArgNamesAttr();
  for (size_t i = 0; i < n; ++i) {
    if (!used[i]) {
      erased.set(in(i));
      continue;
    }
    inputs.push_back(call.getInputs()[in(i)]);
    inSpecs.push_back(call.getInSpecs()[in(i)]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!written[i]) {
      erased.set(out(i));
      continue;
    }
    aliases.push_back(static_cast<int64_t>(m + std::count(used.begin(), used.begin() + i, true)));
    aliases.push_back(static_cast<int64_t>(results.size()));
    results.push_back(call.getResult(static_cast<unsigned>(i)).getType());
    outSpecs.push_back(call.getOutSpecs()[i]);
    outShapes.push_back(call.getOutShapes()[i]);
  }
  if (oldNames)
    for (unsigned a = 0; a < kernel.getNumArguments(); ++a)
      if (!erased.test(a))
        names.push_back(oldNames[a]);
  auto rebuilt = recreate(call, inputs, results, inSpecs, outSpecs, outShapes, aliases,
                          oldNames ? b.getArrayAttr(names) : nullptr);
  rebuilt.getKernelBlock().eraseArguments(erased);
  return rebuilt;
}

pk::PallasCallOp finishStateOperands(Elaborator &el, pk::PallasCallOp call) {
  StateRefScopes &scopes = scopesOf(el);
  auto found = scopes.callOperands.find(call);
  if (found == scopes.callOperands.end())
    return call;
  std::vector<StateRef *> taken = std::move(found->second.refs);
  auto scalars = std::move(found->second.scalars);
  std::vector<SourceRange> scalarRanges = std::move(found->second.scalarRanges);
  scopes.callOperands.erase(found);
  for (StateRef *s : taken)
    s->ref->value = mlir::Value();
  // The captured scalars as 1-element arrays, made before the call.
  std::vector<mlir::Value> scalarArrays;
  for (size_t j = 0; j < scalars.size(); ++j) {
    Elaborator::ModeGuard mode(el, EmitMode::Export);
    el.builder().setInsertionPoint(call);
    CallArgs reshape;
    reshape.range = scalarRanges[j];
    reshape.addPositional(scalars[j].first, reshape.range);
    reshape.addPositional(makeTuple({makeInt(1)}), reshape.range);
    Obj jnp = el.importModule("jax.numpy", reshape.range);
    Obj one = el.call(getAttribute(el, jnp, "reshape", reshape.range), reshape);
    scalarArrays.push_back(llvm::cast<GlobalArrayObj>(*one).value);
  }

  mlir::OpBuilder b(call);
  mlir::MLIRContext *ctx = call.getContext();
  size_t n = taken.size(), m = scalars.size(), prefetch = call.getNumScalarPrefetch();
  size_t inputs = call.getInputs().size() - prefetch;
  llvm::SmallVector<mlir::Value> operands(call.getInputs().begin(), call.getInputs().end());
  operands.insert(operands.begin() + static_cast<std::ptrdiff_t>(prefetch), scalarArrays.begin(),
                  scalarArrays.end());
  llvm::SmallVector<mlir::Type> results;
  llvm::SmallVector<mlir::Attribute> scalarSpecs, specs, shapes, noNames, noModes;
  for (size_t j = 0; j < m; ++j) {
    scalarSpecs.push_back(wholeArraySpec(call, {1}, MemorySpace::SMEM));
    noNames.push_back(b.getStringAttr(""));
    noModes.push_back(b.getDictionaryAttr({}));
  }
  for (size_t k = 0; k < n; ++k) {
    const StateRef &s = *taken[k];
    operands.insert(operands.begin() + static_cast<std::ptrdiff_t>(prefetch + m + k),
                    s.array->value);
    results.push_back(s.array->value.getType());
    specs.push_back(wholeArraySpec(call, s.ref->shape, s.space));
    llvm::SmallVector<mlir::AffineExpr> dims;
    for (int64_t d : s.ref->shape)
      dims.push_back(mlir::getAffineConstantExpr(d, ctx));
    shapes.push_back(
        mlir::AffineMapAttr::get(mlir::AffineMap::get(0, call.getNumExportSymbols(), dims, ctx)));
    noNames.push_back(b.getStringAttr(""));
    noModes.push_back(b.getDictionaryAttr({}));
  }
  for (mlir::Type t : call.getResultTypes())
    results.push_back(t);
  // Pallas's aliases count inputs with the scalar-prefetch ones.
  llvm::SmallVector<int64_t> aliases;
  for (size_t k = 0; k < n; ++k) {
    aliases.push_back(static_cast<int64_t>(prefetch + m + k));
    aliases.push_back(static_cast<int64_t>(k));
  }
  llvm::ArrayRef<int64_t> old = call.getInputOutputAliases();
  for (size_t i = 0; i + 1 < old.size(); i += 2) {
    aliases.push_back(old[i] + (old[i] >= static_cast<int64_t>(prefetch) ? int64_t(m + n) : 0));
    aliases.push_back(old[i + 1] + static_cast<int64_t>(n));
  }
  // Names and pipeline modes: the scalars' and Refs' inputs, then the
  // Refs' outputs.
  llvm::ArrayRef<mlir::Attribute> inputNames(noNames),
      outputNames = llvm::ArrayRef(noNames).take_back(n);
  llvm::ArrayRef<mlir::Attribute> inputModes(noModes),
      outputModes = llvm::ArrayRef(noModes).take_back(n);
  mlir::ArrayAttr names = call.getKernelArgNamesAttr();
  if (names) // the kernel's Refs: prefetch, inputs, outputs, scratch
    names = b.getArrayAttr(inserted(inserted(names.getValue(), prefetch, inputNames),
                                    prefetch + m + n + inputs, outputNames));
  mlir::ArrayAttr modes = call->getAttrOfType<mlir::ArrayAttr>("pk.pipeline_modes");
  if (modes) // per spec: inputs, then outputs
    modes = b.getArrayAttr(
        inserted(inserted(modes.getValue(), 0, inputModes), m + n + inputs, outputModes));
  llvm::SmallVector<mlir::Attribute> inSpecs(scalarSpecs);
  inSpecs.append(specs.begin(), specs.end());
  auto rebuilt =
      recreate(call, operands, results, inserted(call.getInSpecs().getValue(), 0, inSpecs),
               inserted(call.getOutSpecs().getValue(), 0, specs),
               inserted(call.getOutShapes().getValue(), 0, shapes), aliases, names);
  if (modes)
    rebuilt->setAttr("pk.pipeline_modes", modes);
  for (size_t k = 0; k < n; ++k) {
    const GlobalArrayObj &array = *taken[k]->array;
    taken[k]->array = std::make_shared<GlobalArrayObj>(rebuilt.getResult(static_cast<unsigned>(k)),
                                                       array.shape, array.dtype, array.name);
  }
  return rebuilt;
}

void resetStateRefs(Elaborator &el) { el.stateRefs.reset(); }

} // namespace pk::elab
