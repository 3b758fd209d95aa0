//===- Vmap.cpp - jax.vmap around pallas_calls ----------------------------===//
//
// Pallas's batching rule for pallas_call, done while elaborating: under
// jax.vmap each pallas_call gets one more leading grid axis, and each mapped
// operand one more squeezed block dimension indexed by it. The kernel and
// the user's index maps never see the new axis, so one kernel serves every
// batch element.
//
// An array under vmap keeps its IR value with the mapped axes in place and
// records them as BatchAxis entries; the program sees the shape without
// them. Since a squeezed block dimension can sit at any position, in_axes
// and out_axes need no transposes: pallas_call outputs put the axis where
// out_axes asks for it.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/StaticArray.h"

namespace pk::elab {

namespace {

std::optional<int64_t> axisOf(Elaborator &el, const Obj &spec, SourceRange r, const char *what) {
  if (isNone(spec))
    return std::nullopt;
  if (!llvm::isa<IntObj>(spec.get()))
    el.fail(r, std::string("jax.vmap ") + what + " must be ints, None, or tuples of them, got " +
                   repr(*spec));
  return llvm::cast<IntObj>(*spec).value;
}

/// Normalizes a possibly negative axis into [0, rank).
int64_t normalizeAxis(Elaborator &el, int64_t axis, size_t rank, SourceRange r,
                      const std::string &what) {
  int64_t n = static_cast<int64_t>(rank);
  if (axis < -n || axis >= n)
    el.fail(r, what + " maps axis " + std::to_string(axis) + ", which is out of range for rank " +
                   std::to_string(rank));
  return axis < 0 ? axis + n : axis;
}

struct Batcher {
  Elaborator &el;
  SourceRange range; ///< the jax.vmap(...) call
  unsigned level;
  std::optional<Dim> size;
  SourceRange sizeRange;
  std::string sizeFrom; ///< which argument fixed the size, for messages

  void agreeOnSize(const Dim &d, SourceRange r, const std::string &what) {
    if (!size) {
      size = d;
      sizeRange = r;
      sizeFrom = what;
      return;
    }
    if (!(*size == d))
      el.fail(r, "jax.vmap maps axes of different sizes: " + what + " has size " +
                     el.describeDims({d}) + " but " + sizeFrom + " has size " +
                     el.describeDims({*size}));
  }

  /// The argument `arg` with its axis `spec` mapped, recursing into tuples
  /// and lists as JAX does with pytrees.
  Obj mapArgument(const Obj &arg, const Obj &spec, SourceRange r, const std::string &what) {
    if (isNone(spec) || isNone(arg)) // None is an empty pytree: nothing to map
      return arg;
    if (auto *specs = llvm::dyn_cast<SequenceObj>(spec.get())) {
      auto *items = llvm::dyn_cast<SequenceObj>(arg.get());
      if (!items || items->items.size() != specs->items.size())
        el.fail(r, "jax.vmap in_axes gives " + repr(*spec) + " for " + what + ", which is " +
                       repr(*arg) + "; the structures must match");
      auto mapped = std::make_shared<SequenceObj>(items->kind(), std::vector<Obj>());
      mapped->namedTuple = items->namedTuple;
      for (size_t i = 0; i < items->items.size(); ++i)
        mapped->items.push_back(mapArgument(items->items[i], specs->items[i], r,
                                            what + "[" + std::to_string(i) + "]"));
      return mapped;
    }
    int64_t axis = *axisOf(el, spec, r, "in_axes");
    if (auto *items = llvm::dyn_cast<SequenceObj>(arg.get())) {
      auto mapped = std::make_shared<SequenceObj>(items->kind(), std::vector<Obj>());
      mapped->namedTuple = items->namedTuple;
      for (size_t i = 0; i < items->items.size(); ++i)
        mapped->items.push_back(
            mapArgument(items->items[i], spec, r, what + "[" + std::to_string(i) + "]"));
      return mapped;
    }
    auto *array = llvm::dyn_cast<GlobalArrayObj>(arg.get());
    if (!array)
      el.fail(r, "jax.vmap maps " + what + " along axis " + std::to_string(axis) + ", but it is " +
                     repr(*arg) + ", not an array; give None in in_axes for it");
    if (array->shape.empty())
      el.fail(r, "jax.vmap maps " + what + " along axis " + std::to_string(axis) +
                     ", but it is a scalar (rank 0)");
    size_t logical = static_cast<size_t>(
        normalizeAxis(el, axis, array->shape.size(), r, "jax.vmap in_axes for " + what));
    agreeOnSize(array->shape[logical], r, what);

    // The IR position of the logical axis: count past the axes already
    // mapped by enclosing vmaps.
    size_t physical = logical;
    for (const BatchAxis &b : array->batch)
      if (b.axis <= physical)
        ++physical;
    auto mapped = std::make_shared<GlobalArrayObj>(*array);
    mapped->shape.erase(mapped->shape.begin() + static_cast<std::ptrdiff_t>(logical));
    mapped->batch.push_back({level, physical, array->shape[logical]});
    std::sort(mapped->batch.begin(), mapped->batch.end(),
              [](const BatchAxis &a, const BatchAxis &b) { return a.axis < b.axis; });
    return mapped;
  }

  /// A result of the vmapped function with the mapped axis back in its
  /// shape at `spec`.
  Obj unmapResult(const Obj &result, const Obj &spec, const std::string &what) {
    if (auto *specs = llvm::dyn_cast<SequenceObj>(spec.get())) {
      auto *items = llvm::dyn_cast<SequenceObj>(result.get());
      if (!items || items->items.size() != specs->items.size())
        el.fail(range, "jax.vmap out_axes gives " + repr(*spec) + " for " + what + ", which is " +
                           repr(*result) + "; the structures must match");
      std::vector<Obj> unmapped;
      for (size_t i = 0; i < items->items.size(); ++i)
        unmapped.push_back(
            unmapResult(items->items[i], specs->items[i], what + "[" + std::to_string(i) + "]"));
      return items->isList() ? makeList(unmapped) : makeTuple(unmapped);
    }
    if (auto *items = llvm::dyn_cast<SequenceObj>(result.get())) {
      std::vector<Obj> unmapped;
      for (size_t i = 0; i < items->items.size(); ++i)
        unmapped.push_back(unmapResult(items->items[i], spec, what + "[" + std::to_string(i) + "]"));
      return items->isList() ? makeList(unmapped) : makeTuple(unmapped);
    }
    std::optional<int64_t> axis = axisOf(el, spec, range, "out_axes");
    auto *array = llvm::dyn_cast<GlobalArrayObj>(result.get());
    if (!array) {
      if (!axis)
        return result;
      el.fail(range, "the function under jax.vmap returns " + repr(*result) + " as " + what +
                         "; with out_axes=" + std::to_string(*axis) + " it must be an array");
    }
    auto mine = std::find_if(array->batch.begin(), array->batch.end(),
                             [&](const BatchAxis &b) { return b.level == level; });
    if (!axis) {
      if (mine != array->batch.end())
        el.fail(range, what + " of the function under jax.vmap depends on the mapped axis, so "
                           "out_axes cannot be None for it");
      return result;
    }
    if (mine == array->batch.end())
      el.fail(range, what + " of the function under jax.vmap does not depend on the mapped axis; "
                         "pkc cannot broadcast it along the axis (give out_axes=None for it)");
    size_t wanted = static_cast<size_t>(normalizeAxis(
        el, *axis, array->shape.size() + 1, range, "jax.vmap out_axes for " + what));
    size_t position = mine->axis;
    for (const BatchAxis &b : array->batch)
      if (b.axis < mine->axis)
        --position; // enclosing vmaps' axes are not in the shape outside
    if (position != wanted)
      el.fail(range, what + " of the function under jax.vmap has the mapped axis at position " +
                         std::to_string(position) + ", not at out_axes=" + std::to_string(*axis) +
                         "; pkc places it only where pallas_call outputs put it, and does not "
                         "transpose arrays outside kernels");
    auto unmapped = std::make_shared<GlobalArrayObj>(*array);
    unmapped->shape.insert(unmapped->shape.begin() + static_cast<std::ptrdiff_t>(wanted),
                           mine->size);
    unmapped->batch.erase(unmapped->batch.begin() + (mine - array->batch.begin()));
    return unmapped;
  }
};

} // namespace

Obj Elaborator::applyVmap(const Obj &fun, const Obj &inAxes, const Obj &outAxes,
                          const Obj &axisSize, SourceRange vmapRange, CallArgs &args) {
  if (emitMode != EmitMode::Export)
    fail(args.range, "jax.vmap is supported around pallas_calls in an @export function, not " +
                         std::string(inKernel() ? "inside a kernel" : "here"));
  // NumPy arrays, positional or by keyword, are mapped as the arrays JAX
  // makes of them.
  static_numpy::materializeArguments(*this, args);
  Batcher batcher{*this, vmapRange, nextVmapLevel++, std::nullopt, {}, {}};
  if (!isNone(axisSize))
    batcher.agreeOnSize(toDim(axisSize, vmapRange, "jax.vmap axis_size"), vmapRange, "axis_size");

  CallArgs mapped;
  mapped.range = args.range;
  mapped.callee = args.callee;
  auto *specs = llvm::dyn_cast<SequenceObj>(inAxes.get());
  if (specs && specs->items.size() != args.positional.size())
    fail(args.range, "jax.vmap in_axes has " + std::to_string(specs->items.size()) +
                         " entries but the function is called with " +
                         std::to_string(args.positional.size()) + " positional arguments");
  for (size_t i = 0; i < args.positional.size(); ++i)
    mapped.addPositional(batcher.mapArgument(args.positional[i], specs ? specs->items[i] : inAxes,
                                             args.rangeOf(i), "argument " + std::to_string(i)),
                         args.rangeOf(i));
  // JAX maps keyword arguments along axis 0; functions and numbers passed
  // by keyword are left alone.
  for (size_t i = 0; i < args.keywords.size(); ++i) {
    const auto &[name, value] = args.keywords[i];
    Obj v = llvm::isa<GlobalArrayObj>(value.get())
                ? batcher.mapArgument(value, makeInt(0), args.keywordRanges[i], "argument '" + name + "'")
                : value;
    mapped.keywords.emplace_back(name, v);
    mapped.keywordRanges.push_back(args.keywordRanges[i]);
  }
  if (!batcher.size)
    fail(vmapRange, "jax.vmap needs at least one argument mapped by in_axes, or axis_size=");
  if (batcher.size->isStatic() && batcher.size->value <= 0)
    fail(batcher.sizeRange, "jax.vmap maps an axis of size " + std::to_string(batcher.size->value));

  std::optional<int64_t> outAxis;
  if (auto *i = llvm::dyn_cast<IntObj>(outAxes.get()))
    outAxis = i->value;
  vmapLevels.push_back({batcher.level, *batcher.size, outAxis, vmapRange});
  Obj result;
  try {
    result = call(fun, mapped);
  } catch (...) {
    vmapLevels.pop_back();
    throw;
  }
  vmapLevels.pop_back();
  return batcher.unmapResult(result, outAxes, "result");
}

} // namespace pk::elab
