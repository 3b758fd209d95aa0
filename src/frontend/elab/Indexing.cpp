//===- Indexing.cpp - `x[...]` on Refs, values and static objects ---------===//
#include "frontend/elab/Indexing.h"
#include "frontend/elab/StateRefs.h"
#include "frontend/elab/StaticArray.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/RefBitcast.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

namespace pk::elab {

namespace {

/// A normalized basic index: one window per axis, plus inserted axes.
struct Window {
  std::vector<int64_t> staticOffsets;
  std::vector<mlir::Value> dynamicOffsets;
  std::vector<int64_t> sizes, strides, squeeze;
  /// `index` values of the sizes that are kDynamic (pl.ds with a traced
  /// size, in a Ref view only), in order.
  std::vector<mlir::Value> dynamicSizes;
  std::vector<int64_t> newAxes; ///< result positions of `None` entries
  std::vector<int64_t> loadShape; ///< shape after squeezing, before new axes
  bool isWhole = true; ///< selects everything, unchanged
  bool pastEnd = false; ///< a static window runs past the end (see RefView)
  /// Axes of the window (before squeezing) that a negative slice step
  /// reverses: the window itself is taken with the positive step.
  std::vector<int64_t> reversed;
};

/// Python's slice.indices(): resolves None and negatives, clamps.
void resolveSlice(Elaborator &el, const SliceObj &s, int64_t size, SourceRange r, int64_t &start,
                  int64_t &count, int64_t &step) {
  auto bound = [&](const Obj &o, const char *what) -> std::optional<int64_t> {
    if (isNone(o))
      return std::nullopt;
    if (std::optional<int64_t> v = el.staticInt(o))
      return v;
    el.fail(r, std::string("slice ") + what +
                   " must be a static integer; for a window with a dynamic start use "
                   "pl.ds(start, size)");
  };
  std::optional<int64_t> stepValue = bound(s.step, "step");
  step = stepValue.value_or(1);
  if (step == 0)
    el.fail(r, "slice step cannot be zero");
  std::optional<int64_t> lo = bound(s.start, "start"), hi = bound(s.stop, "stop");
  auto clamp = [&](int64_t v, int64_t low, int64_t high) {
    if (v < 0)
      v += size;
    return std::max(low, std::min(v, high));
  };
  int64_t first, last;
  if (step > 0) {
    first = lo ? clamp(*lo, 0, size) : 0;
    last = hi ? clamp(*hi, 0, size) : size;
    count = last > first ? (last - first + step - 1) / step : 0;
  } else {
    first = lo ? clamp(*lo, -1, size - 1) : size - 1;
    last = hi ? clamp(*hi, -1, size - 1) : -1;
    count = first > last ? (first - last - step - 1) / -step : 0;
  }
  start = first;
}

mlir::Value toIndex(Elaborator &el, const Obj &o, SourceRange r) {
  ArrayPtr a = el.arrays().toArray(o, r);
  if (a->rank() != 0)
    el.fail(r, "indexing with an array of shape " + shapeText(a->shape) +
                   " (gather) is not supported; use a scalar index, a slice or pl.ds");
  if (isFloat(a->dtype) || a->dtype == DType::Bool)
    el.fail(r, std::string("indices must be integers, got ") + numpyName(a->dtype));
  mlir::OpBuilder &b = el.builder();
  if (isUnsigned(a->dtype))
    return mlir::arith::IndexCastUIOp::create(b, el.loc(r), b.getIndexType(), a->value);
  return mlir::arith::IndexCastOp::create(b, el.loc(r), b.getIndexType(), a->value);
}

/// The entries of an index with the ellipsis expanded and missing trailing
/// axes filled with full slices: one entry per axis, plus `None`s.
std::vector<Obj> expandIndex(Elaborator &el, size_t rankSize, const Obj &index, SourceRange r,
                             const char *what) {
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);

  int64_t rank = static_cast<int64_t>(rankSize);
  int64_t used = 0, ellipses = 0;
  for (const Obj &e : entries) {
    if (llvm::isa<EllipsisObj>(e.get()))
      ++ellipses;
    else if (!isNone(e))
      ++used;
  }
  if (ellipses > 1)
    el.fail(r, "an index can only have a single ellipsis ('...')");
  if (used > rank)
    el.fail(r, std::string("too many indices for ") + what + ": it is " + std::to_string(rank) +
                   "-dimensional, but " + std::to_string(used) + " were indexed");
  std::vector<Obj> expanded;
  for (const Obj &e : entries) {
    if (llvm::isa<EllipsisObj>(e.get())) {
      for (int64_t i = 0; i < rank - used; ++i)
        expanded.push_back(std::make_shared<SliceObj>(none(), none(), none()));
      continue;
    }
    expanded.push_back(e);
  }
  if (!ellipses)
    for (int64_t i = 0; i < rank - used; ++i)
      expanded.push_back(std::make_shared<SliceObj>(none(), none(), none()));
  return expanded;
}

mlir::Value indexConstant(Elaborator &el, int64_t v, SourceRange r);

/// `allowPastEnd`: a static pl.ds starting inside the axis may run past its
/// end (pl.load / pl.store and Ref views, which read and write the Ref as
/// if padded there); its offset then becomes a constant `index` value, for
/// a padded access. `allowRagged`: a pl.ds may have a traced size (a Ref
/// view for an async copy); its size is then kDynamic.
Window computeWindow(Elaborator &el, const std::vector<int64_t> &shape, const Obj &index,
                     SourceRange r, bool allowDynamic, const char *what, bool allowPastEnd = false,
                     bool allowRagged = false) {
  std::vector<Obj> expanded = expandIndex(el, shape.size(), index, r, what);
  int64_t rank = static_cast<int64_t>(shape.size());
  Window w;
  int64_t axis = 0, outputs = 0;
  for (const Obj &e : expanded) {
    if (isNone(e)) {
      w.newAxes.push_back(outputs++);
      w.isWhole = false;
      continue;
    }
    int64_t size = shape[axis];
    if (auto *s = llvm::dyn_cast<SliceObj>(e.get())) {
      int64_t start, count, step;
      resolveSlice(el, *s, size, r, start, count, step);
      if (count == 0)
        el.fail(r, "slice selects no elements on axis " + std::to_string(axis) + " of size " +
                       std::to_string(size) + " (zero-size arrays are not supported)");
      if (step < 0) {
        // x[a:b:-s]: the same elements taken forwards, then reversed
        // (values only: a Ref window has no negative strides).
        if (allowDynamic)
          el.fail(r, "negative slice steps are not supported on a Ref; read the window with "
                     "a positive step and reverse it (jnp.flip)");
        start += (count - 1) * step;
        step = -step;
        w.reversed.push_back(static_cast<int64_t>(w.sizes.size()));
      }
      w.staticOffsets.push_back(start);
      w.sizes.push_back(count);
      w.strides.push_back(step);
      w.isWhole &= start == 0 && count == size && step == 1;
      ++outputs;
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get());
               ds && ds->dynamicSize && allowRagged) {
      // Bounds are the copy's to keep at run time (the interpreter checks).
      if (std::optional<int64_t> start = el.staticInt(ds->start);
          start && (*start < 0 || *start > size))
        el.fail(r, "pl.ds starts at " + std::to_string(*start) + ", outside axis " +
                       std::to_string(axis) + " of size " + std::to_string(size));
      if (std::optional<int64_t> start = el.staticInt(ds->start)) {
        w.staticOffsets.push_back(*start);
      } else {
        w.staticOffsets.push_back(mlir::ShapedType::kDynamic);
        w.dynamicOffsets.push_back(toIndex(el, ds->start, r));
      }
      w.sizes.push_back(mlir::ShapedType::kDynamic);
      w.dynamicSizes.push_back(toIndex(el, ds->dynamicSize, r));
      w.strides.push_back(1);
      w.isWhole = false;
      ++outputs;
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      staticDsSize(el, *ds, r);
      if (ds->size <= 0)
        el.fail(r, "pl.ds size must be positive");
      if (std::optional<int64_t> start = el.staticInt(ds->start)) {
        bool past = *start + (ds->size - 1) * ds->stride >= size;
        if (*start < 0 || (past && (!allowPastEnd || *start >= size)))
          el.fail(r, "pl.ds(" + std::to_string(*start) + ", " + std::to_string(ds->size) +
                         ") is out of bounds for axis " + std::to_string(axis) + " of size " +
                         std::to_string(size));
        if (past) {
          w.staticOffsets.push_back(mlir::ShapedType::kDynamic);
          w.dynamicOffsets.push_back(indexConstant(el, *start, r));
          w.pastEnd = true;
        } else {
          w.staticOffsets.push_back(*start);
        }
      } else {
        if (!allowDynamic)
          el.fail(r, "indexing a value with a dynamic start is not supported; index the Ref "
                     "instead (x_ref[pl.ds(i, n)])");
        if (ds->size > size && !allowPastEnd)
          el.fail(r, "pl.ds size " + std::to_string(ds->size) + " exceeds axis " +
                         std::to_string(axis) + " of size " + std::to_string(size));
        w.staticOffsets.push_back(mlir::ShapedType::kDynamic);
        w.dynamicOffsets.push_back(toIndex(el, ds->start, r));
      }
      w.sizes.push_back(ds->size);
      w.strides.push_back(ds->stride);
      w.isWhole = false;
      ++outputs;
    } else if (std::optional<int64_t> i = el.staticInt(e); i && !llvm::isa<BoolObj>(e.get())) {
      int64_t idx = *i < 0 ? *i + size : *i;
      if (idx < 0 || idx >= size)
        el.fail(r, "index " + std::to_string(*i) + " is out of bounds for axis " +
                       std::to_string(axis) + " with size " + std::to_string(size));
      w.staticOffsets.push_back(idx);
      w.sizes.push_back(1);
      w.strides.push_back(1);
      w.squeeze.push_back(axis);
      w.isWhole = false;
    } else if (llvm::isa<ArrayObj, SymIntObj>(e.get())) {
      if (!allowDynamic)
        el.fail(r, "indexing a value with a dynamic index is not supported; index the Ref "
                   "instead (x_ref[i])");
      w.staticOffsets.push_back(mlir::ShapedType::kDynamic);
      w.dynamicOffsets.push_back(toIndex(el, e, r));
      w.sizes.push_back(1);
      w.strides.push_back(1);
      w.squeeze.push_back(axis);
      w.isWhole = false;
    } else if (llvm::isa<FloatObj>(e.get())) {
      el.fail(r, "indices must be integers, got float " + repr(*e));
    } else {
      el.fail(r, "invalid index of type '" + typeName(*e) +
                     "': use integers, slices, pl.ds, '...' or None");
    }
    ++axis;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(w.squeeze.begin(), w.squeeze.end(), d) == w.squeeze.end())
      w.loadShape.push_back(w.sizes[d]);
  return w;
}

mlir::Value indexConstant(Elaborator &el, int64_t v, SourceRange r) {
  return mlir::arith::ConstantIndexOp::create(el.builder(), el.loc(r), v);
}

/// `offset + index * stride` on offsets that are static or `index` values.
std::pair<int64_t, mlir::Value> affineOffset(Elaborator &el, int64_t baseStatic,
                                             mlir::Value baseDynamic, int64_t stride,
                                             int64_t indexStatic, mlir::Value indexDynamic,
                                             SourceRange r) {
  bool baseIsStatic = !mlir::ShapedType::isDynamic(baseStatic);
  bool indexIsStatic = !mlir::ShapedType::isDynamic(indexStatic);
  if (baseIsStatic && indexIsStatic)
    return {baseStatic + indexStatic * stride, nullptr};
  mlir::OpBuilder &b = el.builder();
  mlir::Location loc = el.loc(r);
  mlir::Value base = baseIsStatic ? indexConstant(el, baseStatic, r) : baseDynamic;
  mlir::Value index = indexIsStatic ? indexConstant(el, indexStatic, r) : indexDynamic;
  if (stride != 1)
    index = mlir::arith::MulIOp::create(b, loc, index, indexConstant(el, stride, r));
  return {mlir::ShapedType::kDynamic, mlir::arith::AddIOp::create(b, loc, base, index)};
}

/// Rewrites a window over a Ref view (`x_ref.at[...]`) into a window over
/// the underlying Ref.
Window throughView(Elaborator &el, const RefView &view, const Window &w, SourceRange r) {
  Window out = w;
  out.staticOffsets.clear();
  out.dynamicOffsets.clear();
  out.sizes.clear();
  out.strides.clear();
  out.squeeze.clear();
  out.dynamicSizes.clear();
  size_t viewDynamic = 0, windowDynamic = 0, windowDynamicSize = 0, viewAxis = 0;
  for (size_t axis = 0; axis < view.sizes.size(); ++axis) {
    int64_t baseStatic = view.staticOffsets[axis];
    mlir::Value baseDynamic =
        mlir::ShapedType::isDynamic(baseStatic) ? view.dynamicOffsets[viewDynamic++] : nullptr;
    if (view.squeezed[axis]) {
      out.staticOffsets.push_back(baseStatic);
      if (baseDynamic)
        out.dynamicOffsets.push_back(baseDynamic);
      out.sizes.push_back(1);
      out.strides.push_back(1);
      out.squeeze.push_back(static_cast<int64_t>(axis));
      continue;
    }
    int64_t indexStatic = w.staticOffsets[viewAxis];
    mlir::Value indexDynamic =
        mlir::ShapedType::isDynamic(indexStatic) ? w.dynamicOffsets[windowDynamic++] : nullptr;
    auto [offset, dynamicOffset] = affineOffset(el, baseStatic, baseDynamic, view.strides[axis],
                                                indexStatic, indexDynamic, r);
    out.staticOffsets.push_back(offset);
    if (dynamicOffset)
      out.dynamicOffsets.push_back(dynamicOffset);
    if (mlir::ShapedType::isDynamic(w.sizes[viewAxis])) {
      if (view.strides[axis] != 1)
        el.fail(r, "a pl.ds with a traced size cannot be taken of a strided Ref view");
      out.dynamicSizes.push_back(w.dynamicSizes[windowDynamicSize++]);
    }
    out.sizes.push_back(w.sizes[viewAxis]);
    out.strides.push_back(view.strides[axis] * w.strides[viewAxis]);
    if (llvm::is_contained(w.squeeze, static_cast<int64_t>(viewAxis)))
      out.squeeze.push_back(static_cast<int64_t>(axis));
    ++viewAxis;
  }
  return out;
}

/// The window `index` selects in `ref`, over the underlying Ref.
Window refWindow(Elaborator &el, const RefObj &ref, const Obj &index, SourceRange r,
                 bool allowPastEnd = false, bool allowRagged = false) {
  requirePlainRef(el, ref, r);
  Window w = computeWindow(el, ref.shape, index, r, /*allowDynamic=*/true, "Ref", allowPastEnd,
                           allowRagged);
  if (!ref.view)
    return w;
  Window out = throughView(el, *ref.view, w, r);
  out.pastEnd = w.pastEnd || ref.view->pastEnd;
  return out;
}

/// True when `index` selects all of a Ref view (`...`, `:`, or nothing).
bool selectsAll(const Obj &index, size_t rank) {
  if (!index || isNone(index) || llvm::isa<EllipsisObj>(index.get()))
    return true;
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);
  if (entries.size() > rank)
    return false;
  for (const Obj &e : entries) {
    if (llvm::isa<EllipsisObj>(e.get()))
      continue;
    auto *s = llvm::dyn_cast<SliceObj>(e.get());
    if (!s || !isNone(s->start) || !isNone(s->stop) || !isNone(s->step))
      return false;
  }
  return true;
}

/// A gather view (`x_ref.at[idx]` with integer arrays) can only be read or
/// written whole.
void checkGatherViewAccess(Elaborator &el, const RefObj &ref, const Obj &index, SourceRange r) {
  if (!selectsAll(index, ref.shape.size()))
    el.fail(r, "a Ref view made with integer-array indices (x_ref.at[idx]) can only be read or "
               "written whole ([...]); index the Ref itself with the combined indices instead");
}

/// True when indexing a value needs kernel code: a dynamic int or pl.ds
/// start, or an integer array.
bool hasDynamicPart(Elaborator &el, const Obj &index) {
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);
  for (const Obj &e : entries) {
    if (llvm::isa<ArrayObj, SymIntObj>(e.get()))
      return true;
    if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get()); ds && !el.staticInt(ds->start))
      return true;
  }
  return false;
}

/// True when an index holds an integer array: NumPy's advanced indexing,
/// which reads and writes with pk.gather / pk.scatter.
bool isGatherIndex(const Obj &index) {
  std::vector<Obj> entries;
  if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
    entries = t->items;
  else
    entries.push_back(index);
  for (const Obj &e : entries)
    if (auto *a = llvm::dyn_cast<ArrayObj>(e.get()); a && a->rank() > 0)
      return true;
  return false;
}

/// Coordinates for a gather or scatter: one i32 tensor of the values'
/// shape per axis of the underlying Ref. The axes are NumPy's (and JAX
/// interpret mode's): the broadcast shape of the integer indices (integer
/// arrays and scalars) takes their place when they are adjacent
/// (`x_ref[:, idx]` is (rows, len(idx))), else it comes first
/// (`x_ref[idx, ::2, idx]`); one axis per slice around it.
struct Coordinates {
  std::vector<mlir::Value> indices;
  std::vector<int64_t> shape;
};

Coordinates gatherCoordinates(Elaborator &el, const RefObj &ref, const Obj &index,
                              SourceRange r) {
  requirePlainRef(el, ref, r);
  ArrayOps &ops = el.arrays();
  std::vector<Obj> entries = expandIndex(el, ref.shape.size(), index, r, "Ref");
  struct SliceInfo {
    Obj start; // IntObj or a scalar value
    int64_t count, step;
  };
  std::vector<int64_t> advancedShape;
  std::vector<SliceInfo> slices;
  std::vector<int> slot(entries.size(), -1); // slice number of each slice entry
  for (size_t i = 0; i < entries.size(); ++i) {
    const Obj &e = entries[i];
    if (isNone(e))
      el.fail(r, "None (a new axis) cannot be combined with integer-array indexing");
    int64_t size = ref.shape[i];
    if (auto *s = llvm::dyn_cast<SliceObj>(e.get())) {
      int64_t start, count, step;
      resolveSlice(el, *s, size, r, start, count, step);
      if (count == 0 || step < 0)
        el.fail(r, "slices combined with integer-array indexing must select elements forward");
      slot[i] = static_cast<int>(slices.size());
      slices.push_back({makeInt(start), count, step});
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      staticDsSize(el, *ds, r);
      slot[i] = static_cast<int>(slices.size());
      slices.push_back({ds->start, ds->size, ds->stride});
    } else if (ArrayOps::isNumeric(e)) {
      if (llvm::isa<FloatObj>(e.get()))
        el.fail(r, "indices must be integers, got float " + repr(*e));
      if (auto *a = llvm::dyn_cast<ArrayObj>(e.get())) {
        if (isFloat(a->dtype) || a->dtype == DType::Bool)
          el.fail(r, std::string("index arrays must be integers, got ") + numpyName(a->dtype) +
                         (a->dtype == DType::Bool ? " (boolean masks select a data-dependent "
                                                    "number of elements; use jnp.where)"
                                                  : ""));
        advancedShape = ops.broadcastShapes(advancedShape, a->shape, r);
      }
    } else {
      el.fail(r, "invalid index of type '" + typeName(*e) +
                     "': use integers, integer arrays, slices or pl.ds");
    }
  }
  // Where the integer indices' axes go: at the first of them when they
  // are adjacent, counted in slices before it; else in front.
  size_t firstAdvanced = entries.size(), lastAdvanced = 0;
  for (size_t i = 0; i < entries.size(); ++i)
    if (slot[i] < 0) {
      firstAdvanced = std::min(firstAdvanced, i);
      lastAdvanced = i;
    }
  size_t insertAt = 0;
  if (firstAdvanced < entries.size() &&
      std::all_of(slot.begin() + firstAdvanced, slot.begin() + lastAdvanced + 1,
                  [](int s) { return s < 0; }))
    insertAt = static_cast<size_t>(
        std::count_if(slot.begin(), slot.begin() + firstAdvanced, [](int s) { return s >= 0; }));
  size_t advancedRank = advancedShape.size();
  Coordinates c;
  for (const SliceInfo &s : slices)
    c.shape.push_back(s.count);
  c.shape.insert(c.shape.begin() + insertAt, advancedShape.begin(), advancedShape.end());

  // One i32 coordinate tensor per axis of the view.
  std::vector<ArrayPtr> viewCoordinates;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Obj &e = entries[i];
    ArrayPtr coordinate;
    if (slot[i] >= 0) {
      const SliceInfo &s = slices[slot[i]];
      size_t axis = static_cast<size_t>(slot[i]) < insertAt ? slot[i] : advancedRank + slot[i];
      coordinate = ops.iota(c.shape, static_cast<int64_t>(axis), DType::I32, r);
      if (s.step != 1)
        coordinate = std::static_pointer_cast<ArrayObj>(
            ops.binary(ast::BinaryOp::Mul, coordinate, makeInt(s.step), r));
      coordinate = std::static_pointer_cast<ArrayObj>(
          ops.binary(ast::BinaryOp::Add, coordinate, ops.cast(ops.toArray(s.start, r), DType::I32, r), r));
    } else {
      ArrayPtr a = ops.cast(ops.toArray(e, r), DType::I32, r);
      // Negative indices count from the end, as in jnp indexing.
      a = std::static_pointer_cast<ArrayObj>(ops.wrapNegativeIndex(a, ref.shape[i], r));
      std::vector<int64_t> expanded(insertAt + advancedRank - a->shape.size(), 1);
      expanded.insert(expanded.end(), a->shape.begin(), a->shape.end());
      expanded.resize(c.shape.size(), 1);
      coordinate = ops.broadcastTo(ops.reshape(a, expanded, r), c.shape, r);
    }
    viewCoordinates.push_back(ops.cast(coordinate, DType::I32, r));
  }
  if (!ref.view) {
    for (const ArrayPtr &v : viewCoordinates)
      c.indices.push_back(v->value);
    return c;
  }
  // Through a view: base = offset + coordinate * stride.
  const RefView &view = *ref.view;
  size_t dynamic = 0, viewAxis = 0;
  mlir::OpBuilder &b = el.builder();
  for (size_t axis = 0; axis < view.sizes.size(); ++axis) {
    Obj offset;
    if (mlir::ShapedType::isDynamic(view.staticOffsets[axis]))
      offset = ops.wrap(mlir::arith::IndexCastOp::create(b, el.loc(r), b.getI32Type(),
                                                         view.dynamicOffsets[dynamic++]),
                        {}, DType::I32);
    else
      offset = makeInt(view.staticOffsets[axis]);
    if (view.squeezed[axis]) {
      c.indices.push_back(ops.broadcastTo(ops.cast(ops.toArray(offset, r), DType::I32, r), c.shape, r)->value);
      continue;
    }
    Obj scaled = viewCoordinates[viewAxis++];
    if (view.strides[axis] != 1)
      scaled = ops.binary(ast::BinaryOp::Mul, scaled, makeInt(view.strides[axis]), r);
    ArrayPtr base = std::static_pointer_cast<ArrayObj>(ops.binary(ast::BinaryOp::Add, scaled, offset, r));
    c.indices.push_back(ops.cast(base, DType::I32, r)->value);
  }
  return c;
}

ArrayPtr broadcastMask(Elaborator &el, const Obj &mask, const std::vector<int64_t> &shape,
                       SourceRange r) {
  ArrayPtr m = el.arrays().toArray(mask, r);
  if (m->dtype != DType::Bool)
    el.fail(r, std::string("mask must be boolean, got ") + numpyName(m->dtype));
  if (m->shape != shape && m->rank() > static_cast<int64_t>(shape.size()))
    el.fail(r, "mask of shape " + shapeText(m->shape) + " does not match the window " +
                   shapeText(shape));
  return el.arrays().broadcastTo(m, shape, r);
}

Obj staticSequenceIndex(Elaborator &el, const std::vector<Obj> &items, bool isList,
                        const Obj &index, SourceRange r, const char *what) {
  int64_t size = static_cast<int64_t>(items.size());
  if (auto *s = llvm::dyn_cast<SliceObj>(index.get())) {
    int64_t start, count, step;
    resolveSlice(el, *s, size, r, start, count, step);
    std::vector<Obj> out;
    for (int64_t i = 0; i < count; ++i)
      out.push_back(items[start + i * step]);
    return isList ? makeList(out) : makeTuple(out);
  }
  int64_t i = el.toInt(index, r, std::string(what) + " index");
  int64_t idx = i < 0 ? i + size : i;
  if (idx < 0 || idx >= size)
    el.fail(r, std::string(what) + " index " + std::to_string(i) + " out of range (length " +
                   std::to_string(size) + ")");
  return items[idx];
}

/// Tensor memory is read and written asynchronously, by its own ops.
void rejectTensorMemory(Elaborator &el, const RefObj &ref, SourceRange r, bool load) {
  auto type = llvm::dyn_cast<pk::RefType>(ref.value.getType());
  if (!type || type.getSpace() != MemorySpace::GPUTensorMemory)
    return;
  el.fail(r, load ? "loads from TMEM are asynchronous and cannot use the usual syntax; use "
                    "plgpu.async_load_tmem"
                  : "stores to TMEM are asynchronous and cannot use the usual syntax; use "
                    "plgpu.async_store_tmem (then plgpu.commit_tmem)");
}

} // namespace

std::vector<AxisWindow> axisWindows(Elaborator &el, const std::vector<int64_t> &shape,
                                    const Obj &index, SourceRange r, const char *what) {
  std::vector<AxisWindow> windows;
  size_t axis = 0;
  for (const Obj &e : expandIndex(el, shape.size(), index, r, what)) {
    if (isNone(e))
      el.fail(r, std::string("None (a new axis) is not supported in an index of ") + what);
    int64_t size = shape[axis++];
    AxisWindow w;
    if (auto *s = llvm::dyn_cast<SliceObj>(e.get())) {
      int64_t start;
      resolveSlice(el, *s, size, r, start, w.count, w.step);
      if (w.count == 0 || w.step < 0)
        el.fail(r, std::string("a slice of ") + what + " must select elements forward");
      w.start = makeInt(start);
    } else if (auto *ds = llvm::dyn_cast<DynamicSliceObj>(e.get())) {
      w.start = ds->start;
      w.count = staticDsSize(el, *ds, r);
      w.step = ds->stride;
    } else if (std::optional<int64_t> i = el.staticInt(e); i && !llvm::isa<BoolObj>(e.get())) {
      int64_t at = *i < 0 ? *i + size : *i;
      if (at < 0 || at >= size)
        el.fail(r, "index " + std::to_string(*i) + " is out of bounds for axis " +
                       std::to_string(axis - 1) + " with size " + std::to_string(size));
      w.start = makeInt(at);
      w.squeezed = true;
    } else if (llvm::isa<ArrayObj, SymIntObj>(e.get()) && !isGatherIndex(e)) {
      w.start = e;
      w.squeezed = true;
    } else {
      el.fail(r, std::string("invalid index of ") + what + " of type '" + typeName(*e) +
                     "': use integers, slices or pl.ds");
    }
    if (std::optional<int64_t> start = el.staticInt(w.start);
        start && (*start < 0 || *start + (w.count - 1) * w.step >= size))
      el.fail(r, "the window starting at " + std::to_string(*start) + " with " +
                     std::to_string(w.count) + " elements is out of bounds for axis " +
                     std::to_string(axis - 1) + " of size " + std::to_string(size));
    windows.push_back(w);
  }
  return windows;
}

void rejectBitcastView(Elaborator &el, const RefObj &ref, SourceRange r) {
  if (ref.isBitcast())
    el.fail(r, "a Ref.bitcast view can be read and written (view[...]) and viewed again with "
               ".at[...]; it cannot be passed on as a Ref (to an async copy or another op that "
               "takes Refs)");
}

void requireRefMemory(Elaborator &el, const RefObj &ref, SourceRange r) {
  if (!ref.value && !takeStateMemory(el, ref, r))
    el.fail(r, "this Ref of a whole array (pl.run_state, jax.new_ref, jax.empty_ref) has memory "
               "only in the kernels that run on it: a pl.core_map, or a pallas_call or pl.kernel "
               "whose kernel uses it; it cannot be used here (pass the array to the kernel, or "
               "read it with jax.freeze)");
}

void requirePlainRef(Elaborator &el, const RefObj &ref, SourceRange r) {
  requireRefMemory(el, ref, r);
  rejectRaggedView(el, ref, r);
  rejectBitcastView(el, ref, r);
}

void rejectRaggedView(Elaborator &el, const RefObj &ref, SourceRange r) {
  if (ref.isRagged())
    el.fail(r, "this Ref view has a size known only at run time (pl.ds(start, n) with a traced "
               "n); such a view can only be an async copy's source or destination "
               "(pltpu.make_async_copy, async_copy, sync_copy), not read, written or viewed "
               "again");
}

namespace {

/// The Ref of a whole array `ref` is, when it is read or written in the
/// export (outside the kernels that give it memory).
StateRef *exportStateRef(Elaborator &el, const RefObj &ref, const Obj &mask, SourceRange r) {
  if (ref.value || el.mode() != EmitMode::Export)
    return nullptr;
  StateRef *state = findStateRef(el, ref);
  if (state && mask && !isNone(mask))
    el.fail(r, "a masked read or write of a Ref outside kernels is not supported");
  return state;
}

} // namespace

Obj loadRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &mask,
            const Obj &other, SourceRange r, bool padded) {
  if (StateRef *state = exportStateRef(el, ref, mask, r))
    return readStateRef(el, *state, index, r);
  el.requireKernel(r, "reading a Ref");
  requireRefMemory(el, ref, r);
  rejectTensorMemory(el, ref, r, true);
  if (ref.isBitcast()) {
    if ((mask && !isNone(mask)) || (other && !isNone(other)))
      el.fail(r, "masked reads of a Ref.bitcast view are not supported; read the Ref and "
                 "bitcast the value");
    return loadBitcastView(el, ref, index, r);
  }
  bool gather = isGatherIndex(index) || (ref.view && !ref.view->gather.empty());
  Window w;
  Coordinates c;
  if (ref.view && !ref.view->gather.empty()) {
    checkGatherViewAccess(el, ref, index, r);
    c.indices = ref.view->gather;
    c.shape = ref.shape;
  } else if (gather) {
    c = gatherCoordinates(el, ref, index, r);
  } else {
    w = refWindow(el, ref, index, r, /*allowPastEnd=*/padded);
    padded |= w.pastEnd;
  }
  const std::vector<int64_t> &shape = gather ? c.shape : w.loadShape;
  mlir::Value maskValue, otherValue;
  if (mask && !isNone(mask))
    maskValue = broadcastMask(el, mask, shape, r)->value;
  if (other && !isNone(other)) {
    if (!maskValue)
      el.fail(r, "'other' needs a mask");
    JaxType t{ref.dtype, false};
    ArrayPtr o = el.arrays().toArray(other, r, t);
    if (o->rank() != 0)
      o = el.arrays().broadcastTo(o, shape, r);
    otherValue = o->value;
  }
  mlir::Type type = el.arrays().valueType(shape, ref.dtype);
  if (gather) {
    mlir::Value v = pk::GatherOp::create(el.builder(), el.loc(r), type, ref.value, c.indices,
                                         maskValue, otherValue);
    return el.arrays().wrap(v, shape, ref.dtype);
  }
  auto load = pk::LoadOp::create(el.builder(), el.loc(r), type, ref.value, w.dynamicOffsets,
                                 w.staticOffsets, w.sizes, w.strides, w.squeeze, maskValue,
                                 otherValue);
  if (padded)
    load.setPadded(true);
  mlir::Value v = load;
  ArrayPtr result = el.arrays().wrap(v, w.loadShape, ref.dtype);
  if (!w.newAxes.empty())
    result = el.arrays().expandDims(result, w.newAxes, r);
  return result;
}

std::shared_ptr<RefObj> refView(Elaborator &el, const RefObj &ref, const Obj &index,
                                SourceRange r) {
  el.requireKernel(r, "x_ref.at[...]");
  requireRefMemory(el, ref, r);
  if (ref.isBitcast())
    return viewOfBitcastView(el, ref, index, r);
  if (ref.view && !ref.view->gather.empty())
    el.fail(r, "a Ref view made with integer-array indices cannot be viewed again with .at[...]");
  if (isGatherIndex(index)) {
    // `x_ref.at[rows, cols]`: keep the coordinates; reads gather, writes
    // scatter (Triton-style kernels load through such views).
    Coordinates c = gatherCoordinates(el, ref, index, r);
    auto view = std::make_shared<RefView>();
    view->gather = c.indices;
    return std::make_shared<RefObj>(ref.value, c.shape, ref.dtype, view);
  }
  Window w = refWindow(el, ref, index, r, /*allowPastEnd=*/true, /*allowRagged=*/true);
  if (!w.newAxes.empty())
    el.fail(r, "None (new axis) is not allowed in a Ref view");
  auto view = std::make_shared<RefView>();
  view->staticOffsets = w.staticOffsets;
  view->dynamicOffsets = w.dynamicOffsets;
  view->dynamicSizes = w.dynamicSizes;
  view->sizes = w.sizes;
  view->strides = w.strides;
  for (size_t axis = 0; axis < w.sizes.size(); ++axis)
    view->squeezed.push_back(llvm::is_contained(w.squeeze, static_cast<int64_t>(axis)));
  view->pastEnd = w.pastEnd;
  return std::make_shared<RefObj>(ref.value, w.loadShape, ref.dtype, view);
}

void storeRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &value,
              const Obj &mask, SourceRange r, bool padded) {
  if (StateRef *state = exportStateRef(el, ref, mask, r))
    return writeStateRef(el, *state, index, value, r);
  el.requireKernel(r, "writing a Ref");
  requireRefMemory(el, ref, r);
  rejectTensorMemory(el, ref, r, false);
  if (ref.isBitcast()) {
    if (mask && !isNone(mask))
      el.fail(r, "masked writes through a Ref.bitcast view are not supported");
    storeBitcastView(el, ref, index, value, r);
    return;
  }
  bool scatter = isGatherIndex(index) || (ref.view && !ref.view->gather.empty());
  Window w;
  Coordinates c;
  if (ref.view && !ref.view->gather.empty()) {
    checkGatherViewAccess(el, ref, index, r);
    c.indices = ref.view->gather;
    c.shape = ref.shape;
    w.loadShape = c.shape;
  } else if (scatter) {
    c = gatherCoordinates(el, ref, index, r);
    w.loadShape = c.shape;
  } else {
    w = refWindow(el, ref, index, r, /*allowPastEnd=*/padded);
    padded |= w.pastEnd;
  }
  if (!w.newAxes.empty())
    el.fail(r, "None (new axis) is not allowed when storing into a Ref");
  ArrayPtr v = storedValue(el, ref, value, w.loadShape, r);
  mlir::Value maskValue;
  if (mask && !isNone(mask))
    maskValue = broadcastMask(el, mask, w.loadShape, r)->value;
  if (scatter) {
    if (v->rank() == 0)
      el.fail(r, "scattering needs a value of the indices' shape " + shapeText(c.shape));
    pk::ScatterOp::create(el.builder(), el.loc(r), v->value, ref.value, c.indices, maskValue);
    return;
  }
  auto store = pk::StoreOp::create(el.builder(), el.loc(r), v->value, ref.value, w.dynamicOffsets,
                                   w.staticOffsets, w.sizes, w.strides, w.squeeze, maskValue);
  if (padded)
    store.setPadded(true);
}

ArrayPtr storedValue(Elaborator &el, const RefObj &ref, const Obj &value,
                     const std::vector<int64_t> &shape, SourceRange r) {
  JaxType refType{ref.dtype, false};
  ArrayPtr v;
  if (ArrayOps::isStaticNumber(value) || llvm::isa<SymIntObj>(value.get())) {
    v = el.arrays().toArray(value, r, refType);
  } else if (auto array = std::dynamic_pointer_cast<ArrayObj>(value)) {
    if (array->dtype != ref.dtype) {
      // JAX's implicit casts on a Ref store (state/primitives.py,
      // _maybe_implicit_cast): any integer value into an integer Ref
      // (wrapping), and a weakly typed float into a float Ref. Everything
      // else must match.
      bool intoInt = isInteger(array->dtype) && isInteger(ref.dtype);
      bool weakFloat = array->weak && isFloat(array->dtype) && isFloat(ref.dtype);
      if (!intoInt && !weakFloat) {
        auto article = [](const char *dtype) { return *dtype == 'i' || *dtype == 'u' ? "an " : "a "; };
        el.fail(r, std::string("cannot store ") + article(numpyName(array->dtype)) +
                       numpyName(array->dtype) + " value into " + article(numpyName(ref.dtype)) +
                       numpyName(ref.dtype) + " Ref; convert it first with .astype(" + "jnp." +
                       numpyName(ref.dtype) + ")");
      }
      array = el.arrays().cast(array, ref.dtype, r);
    }
    v = array;
  } else {
    el.fail(r, "cannot store a value of type '" + typeName(*value) + "' into a Ref");
  }
  if (v->shape != shape) {
    if (v->rank() != 0)
      el.fail(r, "cannot store a value of shape " + shapeText(v->shape) +
                     " into a window of shape " + shapeText(shape));
    v = el.arrays().broadcastTo(v, shape, r);
  }
  return v;
}

Obj atomicRef(Elaborator &el, const RefObj &ref, const Obj &index, const Obj &value,
              const Obj &mask, pk::AtomicKind kind, SourceRange r) {
  el.requireKernel(r, "an atomic update of a Ref");
  requireRefMemory(el, ref, r);
  rejectTensorMemory(el, ref, r, false);
  if (ref.view && !ref.view->gather.empty())
    el.fail(r, "atomic updates through a Ref view made with integer-array indices are not supported");
  if (isGatherIndex(index))
    el.fail(r, "atomic updates take ints, slices and pl.ds, not integer-array indices");
  Window w = refWindow(el, ref, index, r);
  if (!w.newAxes.empty())
    el.fail(r, "None (new axis) is not allowed in an atomic update");
  ArrayPtr v = storedValue(el, ref, value, w.loadShape, r);
  mlir::Value maskValue;
  if (mask && !isNone(mask))
    maskValue = broadcastMask(el, mask, w.loadShape, r)->value;
  mlir::OpBuilder &b = el.builder();
  auto op = pk::AtomicRmwOp::create(
      b, el.loc(r), v->value.getType(), pk::AtomicKindAttr::get(&el.context(), kind), v->value,
      ref.value, w.dynamicOffsets, b.getDenseI64ArrayAttr(w.staticOffsets),
      b.getDenseI64ArrayAttr(w.sizes), b.getDenseI64ArrayAttr(w.strides),
      b.getDenseI64ArrayAttr(w.squeeze), maskValue);
  return el.arrays().wrap(op.getResult(), v->shape, ref.dtype);
}

Obj atomicCompareSwap(Elaborator &el, const RefObj &ref, const Obj &compare, const Obj &value,
                      SourceRange r) {
  el.requireKernel(r, "an atomic compare-and-swap");
  requireRefMemory(el, ref, r);
  if (!ref.shape.empty())
    el.fail(r, "atomic_cas needs a Ref of one element (shape ()), got shape " + shapeText(ref.shape) +
                   "; select the element with x_ref.at[i]");
  Window w = refWindow(el, ref, std::make_shared<EllipsisObj>(), r);
  std::vector<mlir::Value> offsets;
  size_t dynamic = 0;
  for (int64_t o : w.staticOffsets)
    offsets.push_back(mlir::ShapedType::isDynamic(o)
                          ? w.dynamicOffsets[dynamic++]
                          : mlir::arith::ConstantIndexOp::create(el.builder(), el.loc(r), o).getResult());
  ArrayPtr c = storedValue(el, ref, compare, {}, r), v = storedValue(el, ref, value, {}, r);
  auto op = pk::AtomicCasOp::create(el.builder(), el.loc(r), c->value.getType(), ref.value, offsets,
                                    c->value, v->value);
  return el.arrays().wrap(op.getResult(), {}, ref.dtype);
}

Obj subscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r) {
  el.checkNotOpaque(container, r);
  switch (container->kind()) {
  case Object::Kind::Ref:
    return loadRef(el, llvm::cast<RefObj>(*container), index, nullptr, nullptr, r);
  case Object::Kind::RefAt:
    return refView(el, *llvm::cast<RefAtObj>(*container).ref, index, r);
  case Object::Kind::MosaicGpu:
    return mosaicGpuSubscript(el, container, index, r);
  case Object::Kind::StaticArray:
    return static_array::getItem(el, llvm::cast<StaticArrayObj>(*container), index, r);
  case Object::Kind::Array: {
    auto a = std::static_pointer_cast<ArrayObj>(container);
    if (hasDynamicPart(el, index))
      return indexValueDynamic(el, a, index, r);
    Window w = computeWindow(el, a->shape, index, r, /*allowDynamic=*/false, "array");
    if (w.isWhole && w.reversed.empty())
      return a;
    std::vector<int64_t> limit;
    for (size_t d = 0; d < w.sizes.size(); ++d)
      limit.push_back(w.staticOffsets[d] + (w.sizes[d] - 1) * w.strides[d] + 1);
    ArrayPtr sliced = el.arrays().slice(a, w.staticOffsets, limit, w.strides, r);
    for (int64_t axis : w.reversed)
      sliced = reverseAxis(el, sliced, axis, r);
    // Integer indices drop their axes, then `None`s add theirs: two
    // reshapes that say which axis goes where (ArrayOps::unitAxisReshapes).
    if (!w.squeeze.empty())
      sliced = el.arrays().squeeze(sliced, w.squeeze, r);
    if (!w.newAxes.empty())
      sliced = el.arrays().expandDims(sliced, w.newAxes, r);
    return sliced;
  }
  case Object::Kind::Tuple:
  case Object::Kind::List: {
    const auto &seq = llvm::cast<SequenceObj>(*container);
    return staticSequenceIndex(el, seq.items, seq.isList(), index, r, seq.isList() ? "list" : "tuple");
  }
  case Object::Kind::Str: {
    const std::string &text = llvm::cast<StrObj>(*container).value;
    std::vector<Obj> chars;
    for (char c : text)
      chars.push_back(makeStr(std::string(1, c)));
    Obj picked = staticSequenceIndex(el, chars, false, index, r, "string");
    if (auto *t = llvm::dyn_cast<SequenceObj>(picked.get())) {
      std::string joined;
      for (const Obj &c : t->items)
        joined += llvm::cast<StrObj>(*c).value;
      return makeStr(joined);
    }
    return picked;
  }
  case Object::Kind::Range:
    return staticSequenceIndex(el, el.iterate(container, r), false, index, r, "range");
  case Object::Kind::Dict: {
    auto &dict = llvm::cast<DictObj>(*container);
    if (Obj v = dictGet(dict, index))
      return v;
    if (dict.defaultFactory) {
      CallArgs none;
      none.range = r;
      Obj made = el.call(dict.defaultFactory, none);
      dictSet(el, dict, index, made, r);
      return made;
    }
    el.raise(r, "KeyError", repr(*index));
  }
  case Object::Kind::DType: {
    // `f32[N, 128]`: an array type in an export signature.
    std::vector<Obj> dims;
    if (auto *t = llvm::dyn_cast<SequenceObj>(index.get()); t && !t->isList())
      dims = t->items;
    else
      dims.push_back(index);
    std::vector<Dim> shape;
    for (const Obj &d : dims)
      shape.push_back(el.toDim(d, r, "array dimension"));
    return std::make_shared<ArrayAnnotationObj>(llvm::cast<DTypeObj>(*container).dtype, shape);
  }
  case Object::Kind::Builtin: {
    const std::string &name = llvm::cast<BuiltinObj>(*container).name;
    if (name == "bool")
      return subscript(el, std::make_shared<DTypeObj>(DType::Bool), index, r);
    // `tuple[int, ...]`, `dict[str, int]`: a generic alias in an annotation.
    if (name == "tuple" || name == "list" || name == "dict" || name == "type" || name == "set" ||
        name == "frozenset")
      return container;
    el.fail(r, "'" + typeName(*container) + "' object is not subscriptable");
  }
  case Object::Kind::Class: {
    const auto &cls = llvm::cast<ClassObj>(*container);
    if (cls.isEnum) { // Color["RED"]
      if (auto *key = llvm::dyn_cast<StrObj>(index.get()))
        for (const auto &[name, member] : cls.attributes)
          if (name == key->value && llvm::isa<InstanceObj>(member.get()))
            return member;
      el.raise(r, "KeyError", repr(*index));
    }
    return container; // `Generic[T]`, `Callable[[int], int]`: a generic alias
  }
  case Object::Kind::ArrayAt: {
    const auto &at = llvm::cast<ArrayAtObj>(*container);
    if (at.index)
      el.fail(r, "'_IndexUpdateRef' object is not subscriptable; call .set(...), .add(...), ...");
    return std::make_shared<ArrayAtObj>(at.array, index);
  }
  case Object::Kind::Instance:
    if (std::optional<Obj> v = callDunder(el, container, "__getitem__", {index}, r))
      return *v;
    el.fail(r, "'" + typeName(*container) + "' object is not subscriptable");
  case Object::Kind::Namespace:
    // A builtin object with items (re.Match: `match[2]`).
    if (auto it = llvm::cast<NamespaceObj>(*container).members.find("__getitem__");
        it != llvm::cast<NamespaceObj>(*container).members.end()) {
      CallArgs call;
      call.range = r;
      call.addPositional(index, r);
      return el.call(it->second, call);
    }
    el.fail(r, "'" + typeName(*container) + "' object is not subscriptable");
  case Object::Kind::GlobalArray:
    return el.arrayCodeAtExport("indexing", r, {container, index}, [&](std::vector<Obj> &v) {
      return subscript(el, v[0], v[1], r);
    });
  default:
    el.fail(r, "'" + typeName(*container) + "' object is not subscriptable");
  }
}

void deleteSubscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r) {
  switch (container->kind()) {
  case Object::Kind::List: {
    auto &items = llvm::cast<SequenceObj>(*container).items;
    int64_t size = static_cast<int64_t>(items.size());
    if (auto *s = llvm::dyn_cast<SliceObj>(index.get())) {
      int64_t start, count, step;
      resolveSlice(el, *s, size, r, start, count, step);
      std::vector<bool> removed(items.size(), false);
      for (int64_t k = 0; k < count; ++k)
        removed[start + k * step] = true;
      std::vector<Obj> kept;
      for (size_t i = 0; i < items.size(); ++i)
        if (!removed[i])
          kept.push_back(items[i]);
      items = std::move(kept);
      return;
    }
    int64_t i = el.toInt(index, r, "list index");
    int64_t idx = i < 0 ? i + size : i;
    if (idx < 0 || idx >= size)
      el.raise(r, "IndexError", "list assignment index out of range");
    items.erase(items.begin() + idx);
    return;
  }
  case Object::Kind::Dict:
    if (dictErase(llvm::cast<DictObj>(*container), index))
      return;
    el.raise(r, "KeyError", repr(*index));
  case Object::Kind::Instance:
    if (callDunder(el, container, "__delitem__", {index}, r))
      return;
    break;
  default:
    break;
  }
  el.raise(r, "TypeError", "'" + typeName(*container) + "' object doesn't support item deletion");
}

void storeSubscript(Elaborator &el, const Obj &container, const Obj &index, const Obj &value,
                    SourceRange r) {
  switch (container->kind()) {
  case Object::Kind::Ref:
    storeRef(el, llvm::cast<RefObj>(*container), index, value, nullptr, r);
    return;
  case Object::Kind::List: {
    auto &items = llvm::cast<SequenceObj>(*container).items;
    if (auto *slice = llvm::dyn_cast<SliceObj>(index.get())) {
      // l[a:b] = iterable replaces the window (any length); with a step
      // other than 1, as many values as the window has places.
      int64_t start, count, step;
      resolveSlice(el, *slice, static_cast<int64_t>(items.size()), r, start, count, step);
      std::vector<Obj> values = el.iterate(value, r);
      if (step == 1) {
        items.erase(items.begin() + start, items.begin() + start + count);
        items.insert(items.begin() + start, values.begin(), values.end());
        return;
      }
      if (static_cast<int64_t>(values.size()) != count)
        el.raise(r, "ValueError",
                 "attempt to assign sequence of size " + std::to_string(values.size()) +
                     " to extended slice of size " + std::to_string(count));
      for (int64_t k = 0; k < count; ++k)
        items[start + k * step] = values[k];
      return;
    }
    int64_t i = el.toInt(index, r, "list index");
    int64_t idx = i < 0 ? i + static_cast<int64_t>(items.size()) : i;
    if (idx < 0 || idx >= static_cast<int64_t>(items.size()))
      el.fail(r, "list assignment index out of range");
    items[idx] = value;
    return;
  }
  case Object::Kind::Dict:
    dictSet(el, llvm::cast<DictObj>(*container), index, value, r);
    return;
  case Object::Kind::StaticArray: {
    auto &array = llvm::cast<StaticArrayObj>(*container);
    if (!array.numpy)
      el.fail(r, "JAX arrays are immutable; use x.at[index].set(value), or build it with NumPy");
    static_array::setItem(el, array, index, value, r);
    return;
  }
  case Object::Kind::Array:
    el.fail(r, "arrays are immutable; write to a Ref, or use jnp.where to build a new value");
  case Object::Kind::Instance:
    if (callDunder(el, container, "__setitem__", {index, value}, r))
      return;
    el.fail(r, "'" + typeName(*container) + "' object does not support item assignment");
  default:
    el.fail(r, "'" + typeName(*container) + "' object does not support item assignment");
  }
}

} // namespace pk::elab
