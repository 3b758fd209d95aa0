//===- ExportArrays.cpp - Array code in an export, as generated kernels ---===//
//
// JAX code around pallas_call (reshape, astype, slicing, element-wise math,
// reductions, small dots on whole arrays) runs as kernels of its own. Each
// jnp / lax call, operator, method or subscript applied to whole arrays at
// export level is traced the way a kernel body is: on block values standing
// for the whole arrays, inside a generated pallas_call with whole-array
// blocks and one program (one per jax.vmap batch element, which the code
// does not see, as in a vmapped kernel). The code therefore has exactly
// its in-kernel semantics, which are JAX's, and every backend and the
// interpreter run it as they run any pallas_call. The calls carry
// `pk.generated`; pk-fuse-array-code merges chains of them into one kernel,
// as XLA fuses element-wise producers into their consumer.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Object.h"
#include "frontend/elab/ParallelAxes.h"
#include "ir/DTypeMapping.h"
#include "ir/PkDialect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace pk::elab {

namespace {

/// Rebuilds `o` with every leaf `replace` maps to something (non-null)
/// replaced; sequences and dicts are walked, everything else is kept.
Obj mapLeaves(const Obj &o, const std::function<Obj(const Obj &)> &replace) {
  if (Obj r = replace(o))
    return r;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    auto copy = std::make_shared<SequenceObj>(seq->kind(), std::vector<Obj>());
    copy->namedTuple = seq->namedTuple;
    bool changed = false;
    for (const Obj &item : seq->items) {
      copy->items.push_back(mapLeaves(item, replace));
      changed |= copy->items.back() != item;
    }
    return changed ? copy : o;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
    auto copy = std::make_shared<DictObj>();
    bool changed = false;
    for (const auto &[k, v] : dict->entries) {
      copy->entries.emplace_back(k, mapLeaves(v, replace));
      changed |= copy->entries.back().second != v;
    }
    return changed ? copy : o;
  }
  return o;
}

void visitLeaves(const Obj &o, const std::function<void(const Obj &)> &visit) {
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    for (const Obj &item : seq->items)
      visitLeaves(item, visit);
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
    for (const auto &[k, v] : dict->entries)
      visitLeaves(v, visit);
    return;
  }
  visit(o);
}

/// "jax.numpy.exp" -> "exp", "x.reshape" -> "reshape": the kernel's name.
std::string kernelNameFor(const std::string &what) {
  std::string tail = what.substr(what.find_last_of('.') == std::string::npos
                                     ? 0
                                     : what.find_last_of('.') + 1);
  std::string name;
  for (char c : tail)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  bool named = std::any_of(name.begin(), name.end(),
                           [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  return named ? name : "elementwise"; // an operator: '+' -> elementwise
}

} // namespace

bool Elaborator::holdsGlobalArray(const Obj &o) {
  bool found = false;
  visitLeaves(o, [&](const Obj &leaf) { found |= llvm::isa<GlobalArrayObj>(leaf.get()); });
  return found;
}

Obj Elaborator::arrayCodeAtExport(const std::string &what, SourceRange r, std::vector<Obj> inputs,
                                  const std::function<Obj(std::vector<Obj> &)> &compute,
                                  bool sizesAtTopLevel) {
  // The whole arrays among the inputs, each once.
  std::vector<const GlobalArrayObj *> arrays;
  std::map<const GlobalArrayObj *, size_t> indexOf;
  std::map<void *, size_t> indexOfValue;
  for (const Obj &input : inputs)
    visitLeaves(input, [&](const Obj &leaf) {
      auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
      if (!g || indexOf.count(g))
        return;
      auto [it, inserted] = indexOfValue.try_emplace(g->value.getAsOpaquePointer(), arrays.size());
      if (inserted)
        arrays.push_back(g);
      indexOf[g] = it->second;
    });

  // Symbolic dimensions: one program per index, the code traced with the
  // dimension at size 1 (ParallelAxes checks it computes element-wise
  // along it). Sizes equal to one of them in shape arguments
  // (`x.reshape(B, 8, 64)`) read 1 in the trace, too.
  std::vector<mlir::AffineExpr> symbolicAxes; // one tag per distinct size
  std::vector<std::string> symbolicOwner;     // the array it comes from, for messages
  std::vector<ParallelAxes::Tags> arrayTags;
  for (const GlobalArrayObj *g : arrays) {
    ParallelAxes::Tags t(g->shape.size(), ParallelAxes::kNone);
    for (size_t d = 0; d < g->shape.size(); ++d) {
      if (g->shape[d].isStatic())
        continue;
      auto it = std::find(symbolicAxes.begin(), symbolicAxes.end(), g->shape[d].expr);
      t[d] = static_cast<int>(it - symbolicAxes.begin());
      if (it == symbolicAxes.end()) {
        symbolicAxes.push_back(g->shape[d].expr);
        symbolicOwner.push_back("'" + g->name + "' (" + shortName(g->dtype) + "[" +
                                describeDims(g->shape) + "])");
      }
    }
    arrayTags.push_back(std::move(t));
  }
  auto symbolName = [&](int tag) { return describeDims({Dim{0, symbolicAxes[tag]}}); };
  auto standIn = [&](const Obj &leaf) -> Obj {
    auto *sym = llvm::dyn_cast<SymIntObj>(leaf.get());
    if (sym && llvm::is_contained(symbolicAxes, sym->expr))
      return std::make_shared<IntObj>(1);
    return nullptr;
  };
  for (Obj &input : inputs) {
    if (llvm::isa<SequenceObj>(input.get()))
      input = mapLeaves(input, standIn);
    else if (Obj one = standIn(input); one && sizesAtTopLevel)
      input = one;
  }

  // Under jax.vmap, one program per batch element: the leading grid axes
  // are the active vmaps', as for a pallas_call made there; then one per
  // symbolic dimension.
  const std::vector<VmapLevel> &levels = activeVmaps();
  bool batched = false;
  for (const GlobalArrayObj *g : arrays)
    batched |= !g->batch.empty();
  std::vector<Dim> gridDims;
  if (batched)
    for (const VmapLevel &level : levels)
      gridDims.push_back(level.size);
  size_t firstSymbolicGridAxis = gridDims.size();
  for (mlir::AffineExpr e : symbolicAxes)
    gridDims.push_back(Dim{0, e});

  // Trace the code on a kernel block of its own: one Ref per whole array,
  // read whole.
  auto blockShapeOf = [](const std::vector<Dim> &dims) {
    std::vector<int64_t> shape;
    for (const Dim &d : dims)
      shape.push_back(d.isStatic() ? d.value : 1);
    return shape;
  };
  std::vector<mlir::Type> refTypes;
  for (const GlobalArrayObj *g : arrays)
    refTypes.push_back(pk::RefType::get(blockShapeOf(g->shape), storageType(ctx, g->dtype), nullptr));
  auto kernel = std::make_unique<mlir::Block>();
  for (mlir::Type t : refTypes)
    kernel->addArgument(t, loc(r));
  std::vector<Obj> results;
  Obj traced;
  ParallelAxes axes;
  std::vector<Dim> savedGrid = grid;
  size_t savedHidden = hiddenGrid;
  grid.clear();
  hiddenGrid = gridDims.size();
  auto discard = [&] {
    grid = savedGrid;
    hiddenGrid = savedHidden;
    kernel->dropAllDefinedValueUses();
    kernel->dropAllReferences();
  };
  try {
    ModeGuard mode(*this, EmitMode::Kernel);
    b.setInsertionPointToEnd(kernel.get());
    std::vector<Obj> blocks;
    for (size_t i = 0; i < arrays.size(); ++i) {
      auto ref = std::make_shared<RefObj>(kernel->getArgument(i),
                                          llvm::cast<pk::RefType>(refTypes[i]).getShape().vec(),
                                          arrays[i]->dtype);
      blocks.push_back(loadRef(*this, *ref, std::make_shared<EllipsisObj>(), nullptr, nullptr, r));
      if (auto *a = llvm::dyn_cast<ArrayObj>(blocks.back().get()); a && a->rank() > 0)
        axes.set(a->value, arrayTags[i]);
    }
    std::vector<Obj> substituted;
    for (const Obj &input : inputs)
      substituted.push_back(mapLeaves(input, [&](const Obj &leaf) -> Obj {
        auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
        return g ? blocks[indexOf.at(g)] : nullptr;
      }));
    traced = compute(substituted);
    visitLeaves(traced, [&](const Obj &leaf) {
      if (llvm::isa<ArrayObj>(leaf.get()))
        results.push_back(leaf);
      else if (llvm::isa<RefObj, RefAtObj>(leaf.get()))
        fail(r, what + " at export level gave a Ref; Refs exist only inside kernels");
    });
  } catch (...) {
    discard();
    throw;
  }
  grid = savedGrid;
  hiddenGrid = savedHidden;

  // Along symbolic dimensions the code must compute element-wise, and
  // every result must follow each of them.
  auto acrossSymbolic = [&](int tag, const std::string &how) {
    discard();
    fail(r, what + " on the whole array " + symbolicOwner[tag] + " outside a kernel " + how +
                " its symbolic dimension " + symbolName(tag) +
                "; array code at export level runs once per index of a symbolic dimension, so "
                "along it only element-wise work, reshapes and transposes that keep it, and "
                "reductions over other axes are supported (compute it in a kernel, or fix the "
                "size with -D)");
  };
  if (!symbolicAxes.empty()) {
    if (std::optional<ParallelAxes::Conflict> c = axes.propagate(*kernel)) {
      if (c->otherTag != ParallelAxes::kNone) {
        discard();
        fail(r, what + " outside a kernel combines arrays along the different symbolic sizes " +
                    symbolName(c->tag) + " and " + symbolName(c->otherTag) +
                    "; give them one size, or compute it in a kernel");
      }
      acrossSymbolic(c->tag, "reads across");
    }
  }
  std::vector<ParallelAxes::Tags> resultTags;
  for (const Obj &result : results) {
    const auto &a = llvm::cast<ArrayObj>(*result);
    ParallelAxes::Tags t = a.rank() > 0 ? axes.of(a.value) : ParallelAxes::Tags();
    for (size_t tag = 0; tag < symbolicAxes.size(); ++tag) {
      auto n = llvm::count(t, static_cast<int>(tag));
      if (n != 1)
        acrossSymbolic(static_cast<int>(tag), n ? "repeats" : "gives a result without");
    }
    resultTags.push_back(std::move(t));
  }
  if (results.empty()) {
    // Static results only (a shape, a dtype): nothing to compute.
    discard();
    return traced;
  }

  // The generated pallas_call: inputs, then one output per block value
  // the code returned.
  std::vector<mlir::Value> operands;
  for (const GlobalArrayObj *g : arrays)
    operands.push_back(g->value);
  std::vector<mlir::Type> resultTypes;
  std::vector<mlir::Attribute> outShapeAttrs;
  std::vector<std::vector<Dim>> outDims;
  std::vector<std::vector<BatchAxis>> outBatch;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto &a = llvm::cast<ArrayObj>(*results[i]);
    std::vector<Dim> dims;
    for (size_t d = 0; d < a.shape.size(); ++d)
      dims.push_back(resultTags[i][d] == ParallelAxes::kNone
                         ? Dim{a.shape[d], {}}
                         : Dim{0, symbolicAxes[resultTags[i][d]]});
    std::vector<BatchAxis> batch;
    if (batched)
      batch = outputBatchAxes(dims.size(), what + " result");
    GlobalArrayObj shaped(nullptr, dims, a.dtype, "");
    shaped.batch = batch;
    std::vector<Dim> physical = shaped.physicalShape();
    resultTypes.push_back(globalType(physical, a.dtype));
    outShapeAttrs.push_back(mlir::AffineMapAttr::get(symbolicShape(physical)));
    outDims.push_back(std::move(dims));
    outBatch.push_back(std::move(batch));
  }
  auto op = pk::PallasCallOp::create(
      b, loc(r), resultTypes, operands, b.getStringAttr(kernelNameFor(what)),
      mlir::AffineMapAttr::get(symbolicShape(gridDims)), b.getArrayAttr({}), b.getArrayAttr({}),
      b.getArrayAttr(outShapeAttrs), b.getArrayAttr({}), b.getDenseI64ArrayAttr({}), nullptr,
      nullptr, b.getI64IntegerAttr(0));
  op->setAttr("pk.generated", b.getUnitAttr());
  if (batched)
    op->setAttr("pk.vmap_axes", b.getI64IntegerAttr(static_cast<int64_t>(levels.size())));

  // Blocks: whole along static axes, one index along symbolic ones (block
  // 1 at the program's index) and along jax.vmap's (squeezed).
  auto specFor = [&](const std::vector<Dim> &dims, const ParallelAxes::Tags &tags,
                     const std::vector<BatchAxis> &batch) -> mlir::Attribute {
    std::vector<int64_t> shape, zeros;
    std::vector<pk::BlockDimKind> kinds;
    std::vector<mlir::AffineExpr> index;
    for (size_t d = 0; d < dims.size(); ++d) {
      shape.push_back(dims[d].isStatic() ? dims[d].value : 1);
      kinds.push_back(pk::BlockDimKind::Blocked);
      index.push_back(tags.empty() || tags[d] == ParallelAxes::kNone
                          ? mlir::getAffineConstantExpr(0, ctx)
                          : mlir::getAffineDimExpr(
                                static_cast<unsigned>(firstSymbolicGridAxis + tags[d]), ctx));
    }
    for (const BatchAxis &axis : batch) {
      auto level = std::find_if(levels.begin(), levels.end(),
                                [&](const VmapLevel &l) { return l.id == axis.level; });
      if (level == levels.end())
        fail(r, what + " uses an array mapped by a jax.vmap that has returned; pass arrays "
                       "into vmapped functions as arguments");
      auto at = static_cast<std::ptrdiff_t>(axis.axis);
      shape.insert(shape.begin() + at, 1);
      kinds.insert(kinds.begin() + at, pk::BlockDimKind::Squeezed);
      index.insert(index.begin() + at,
                   mlir::getAffineDimExpr(static_cast<unsigned>(level - levels.begin()), ctx));
    }
    zeros.assign(shape.size(), 0);
    auto map = mlir::AffineMap::get(static_cast<unsigned>(gridDims.size()),
                                    static_cast<unsigned>(symbols().size()), index, ctx);
    return pk::BlockSpecAttr::get(ctx, shape, kinds, zeros, zeros, map, nullptr);
  };
  std::vector<mlir::Attribute> inSpecs, outSpecs;
  for (size_t i = 0; i < arrays.size(); ++i)
    inSpecs.push_back(specFor(arrays[i]->shape, arrayTags[i], arrays[i]->batch));
  for (size_t i = 0; i < results.size(); ++i)
    outSpecs.push_back(specFor(outDims[i], resultTags[i], outBatch[i]));
  op.setInSpecsAttr(b.getArrayAttr(inSpecs));
  op.setOutSpecsAttr(b.getArrayAttr(outSpecs));

  // Finish the kernel: store each result whole into its output Ref.
  op.getKernel().push_back(kernel.release());
  mlir::Block &body = op.getKernelBlock();
  {
    ModeGuard mode(*this, EmitMode::Kernel);
    b.setInsertionPointToEnd(&body);
    for (size_t i = 0; i < results.size(); ++i) {
      const auto &a = llvm::cast<ArrayObj>(*results[i]);
      mlir::Value out =
          body.addArgument(pk::RefType::get(a.shape, storageType(ctx, a.dtype), nullptr), loc(r));
      RefObj ref(out, a.shape, a.dtype);
      storeRef(*this, ref, std::make_shared<EllipsisObj>(), results[i], nullptr, r);
    }
    pk::YieldOp::create(b, loc(r));
  }

  // The block values become whole arrays, in the structure the code
  // returned.
  size_t next = 0;
  return mapLeaves(traced, [&](const Obj &leaf) -> Obj {
    auto *a = llvm::dyn_cast<ArrayObj>(leaf.get());
    if (!a)
      return nullptr;
    size_t i = next++;
    auto g = std::make_shared<GlobalArrayObj>(op.getResult(i), outDims[i], a->dtype,
                                              what + " result");
    g->batch = outBatch[i];
    return g;
  });
}

bool Elaborator::tracesAtExport(const std::string &builtinName, const CallArgs &args) const {
  if (emitMode != EmitMode::Export)
    return false;
  static const char *const kArrayNamespaces[] = {"jax.numpy.", "numpy.", "jax.lax.", "jax.nn.",
                                                 "jax.scipy."};
  bool arrayFunction = builtinName == "abs" || builtinName == "pow";
  for (const char *prefix : kArrayNamespaces)
    arrayFunction |= llvm::StringRef(builtinName).starts_with(prefix);
  if (!arrayFunction)
    return false;
  std::string tail = builtinName.substr(builtinName.rfind('.') + 1);
  // What only reads shapes and dtypes stays static (and works with
  // symbolic sizes).
  static const std::set<std::string> kMetadata = {
      "shape", "ndim", "size", "result_type", "dtype", "issubdtype", "isscalar", "finfo",
      "iinfo", "promote_types", "can_cast", "iscomplexobj", "isrealobj"};
  if (kMetadata.count(tail))
    return false;
  for (const Obj &a : args.positional)
    if (holdsGlobalArray(a))
      return true;
  for (const auto &[name, value] : args.keywords)
    if (holdsGlobalArray(value))
      return true;
  // Arrays made from nothing: jnp.zeros((1,), jnp.int32) as an operand.
  static const std::set<std::string> kCreation = {
      "zeros", "ones", "full", "empty", "array", "asarray", "arange", "eye", "identity",
      "linspace", "iota", "broadcasted_iota", "tri"};
  return kCreation.count(tail) > 0;
}

Obj Elaborator::callAtExport(const std::string &builtinName, const BuiltinObj::Fn &fn,
                             CallArgs &args) {
  // As the program spells it: jax.numpy.exp -> jnp.exp.
  std::string what = builtinName;
  for (auto [from, to] : {std::pair{"jax.numpy.", "jnp."}, {"jax.lax.", "lax."}, {"numpy.", "np."}})
    if (llvm::StringRef(what).starts_with(from)) {
      what = to + what.substr(std::strlen(from));
      break;
    }
  std::vector<Obj> inputs = args.positional;
  for (const auto &[name, value] : args.keywords)
    inputs.push_back(value);
  static const std::set<std::string> kTakesSizes = {"reshape", "broadcast_to", "zeros", "ones",
                                                    "empty", "full"};
  bool sizes = kTakesSizes.count(what.substr(what.rfind('.') + 1)) > 0;
  return arrayCodeAtExport(
      what, args.range, inputs,
      [&](std::vector<Obj> &blocks) {
        CallArgs traced = args;
        size_t n = traced.positional.size();
        for (size_t i = 0; i < n; ++i)
          traced.positional[i] = blocks[i];
        for (size_t i = 0; i < traced.keywords.size(); ++i)
          traced.keywords[i].second = blocks[n + i];
        return fn(*this, traced);
      },
      sizes);
}

Obj globalArrayMember(Elaborator &el, const Obj &array, const std::string &name, SourceRange r) {
  const auto &g = llvm::cast<GlobalArrayObj>(*array);
  std::string what = g.name + "." + name;
  // A property (x.T) is computed now; a method (x.reshape) when called.
  bool isMethod = false;
  Obj property = el.arrayCodeAtExport(what, r, {array}, [&](std::vector<Obj> &v) -> Obj {
    Obj member = getAttribute(el, v[0], name, r);
    if (llvm::isa<BoundMethodObj, BuiltinObj>(member.get())) {
      isMethod = true;
      return none();
    }
    return member;
  });
  if (!isMethod)
    return property;
  return std::make_shared<BoundMethodObj>(array, name, [what, name](Elaborator &el, CallArgs &args) {
    std::vector<Obj> inputs = args.positional;
    for (const auto &[key, value] : args.keywords)
      inputs.push_back(value);
    return el.arrayCodeAtExport(what, args.range, inputs, [&](std::vector<Obj> &v) {
      CallArgs traced = args;
      size_t n = traced.positional.size();
      traced.positional.erase(traced.positional.begin());
      traced.positionalRanges.erase(traced.positionalRanges.begin());
      for (size_t i = 1; i < n; ++i)
        traced.positional[i - 1] = v[i];
      for (size_t i = 0; i < traced.keywords.size(); ++i)
        traced.keywords[i].second = v[n + i];
      return el.call(getAttribute(el, v[0], name, args.range), traced);
    }, /*sizesAtTopLevel=*/name == "reshape");
  });
}

} // namespace pk::elab
