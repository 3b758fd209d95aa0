//===- FoldRefReshapes.cpp - Ref.reshape of unit axes into the accesses ----===//
//
// `x_ref.reshape(32, 128)` of a (1, 1, 32, 128) block (sdh1014's GLA
// kernels squeeze their blocks this way) adds or removes axes of size 1
// only. Such a view reads and writes the same elements at the same indices
// of the other axes, so each pk.load / pk.store through it becomes one on
// the Ref it views: the view's axes of size > 1 map in order onto the
// Ref's, the Ref's own unit axes are read at 0 and squeezed, and a unit
// axis only the view has becomes a reshape of the value. A backend that
// has no Ref views of its own (CUDA) runs this first; reshapes that merge
// or split axes stay, and are refused where the backend meets them.
//
//===----------------------------------------------------------------------===//
#include "transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace pk {

#define GEN_PASS_DEF_PKFOLDREFRESHAPES
#include "transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// The Ref a chain of reshapes starts from.
Value reshapeRoot(RefReshapeOp op) {
  Value ref = op.getRef();
  while (auto inner = ref.getDefiningOp<RefReshapeOp>())
    ref = inner.getRef();
  return ref;
}

/// For each axis of `view`, the axis of `base` it is (or -1 for a unit
/// axis `base` does not have), if `view` only adds or removes unit axes.
std::optional<SmallVector<int64_t>> unitAxisMap(ArrayRef<int64_t> base, ArrayRef<int64_t> view) {
  SmallVector<int64_t> map(view.size(), -1);
  size_t j = 0;
  for (size_t i = 0; i < view.size(); ++i) {
    if (view[i] == 1)
      continue;
    while (j < base.size() && base[j] == 1)
      ++j;
    if (j == base.size() || base[j] != view[i])
      return std::nullopt;
    map[i] = static_cast<int64_t>(j++);
  }
  while (j < base.size() && base[j] == 1)
    ++j;
  if (j != base.size())
    return std::nullopt;
  return map;
}

std::optional<SmallVector<int64_t>> axisMapOf(RefReshapeOp op) {
  auto base = llvm::cast<RefType>(reshapeRoot(op).getType());
  auto view = llvm::cast<RefType>(op.getType());
  if (base.hasDynamicShape() || view.hasDynamicShape())
    return std::nullopt;
  return unitAxisMap(base.getShape(), view.getShape());
}

/// Whether an access reads or writes only inside the view's unit axes
/// that the Ref does not have: a padded or masked access may reach past
/// them (offset 1 reads padding), which the Ref cannot express.
template <typename Access> bool staysInside(Access access, ArrayRef<int64_t> map) {
  if (!access.getPadded() && !access.getMask())
    return true;
  ArrayRef<int64_t> offsets = access.getStaticOffsets();
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] < 0 && offsets[i] != 0)
      return false;
  return true;
}

/// The access's window on the Ref: offsets, sizes, strides and squeezed
/// axes in the Ref's axes, and `valueShape`, the shape of the value read
/// or written there (the access's value without the view's own unit
/// axes).
struct Window {
  SmallVector<Value> offsets;
  SmallVector<int64_t> staticOffsets, sizes, strides, squeeze;
  SmallVector<int64_t> valueShape;
};

template <typename Access>
Window windowOnBase(Access access, ArrayRef<int64_t> map, int64_t baseRank) {
  Window w;
  w.staticOffsets.assign(baseRank, 0);
  w.sizes.assign(baseRank, 1);
  w.strides.assign(baseRank, 1);
  SmallVector<Value> baseDynamic(baseRank);
  ArrayRef<int64_t> offsets = access.getStaticOffsets();
  ArrayRef<int64_t> sizes = access.getSizes(), strides = access.getStrides();
  llvm::SmallDenseSet<int64_t> squeezed(access.getSqueeze().begin(), access.getSqueeze().end());
  size_t dynamic = 0;
  SmallVector<bool> baseSqueezed(baseRank, true);
  for (size_t i = 0; i < map.size(); ++i) {
    Value dynamicOffset;
    if (ShapedType::isDynamic(offsets[i]))
      dynamicOffset = access.getOffsets()[dynamic++];
    if (map[i] < 0)
      continue; // a unit axis only the view has: index 0 of nothing
    int64_t j = map[i];
    w.staticOffsets[j] = offsets[i];
    baseDynamic[j] = dynamicOffset;
    w.sizes[j] = sizes[i];
    w.strides[j] = strides[i];
    baseSqueezed[j] = squeezed.contains(static_cast<int64_t>(i));
    if (!baseSqueezed[j])
      w.valueShape.push_back(sizes[i]);
  }
  for (int64_t j = 0; j < baseRank; ++j) {
    if (baseDynamic[j])
      w.offsets.push_back(baseDynamic[j]);
    if (baseSqueezed[j])
      w.squeeze.push_back(j);
  }
  return w;
}

/// `value` in `shape` (a pk.reshape when the shapes differ; scalars stay).
Value reshaped(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getShape() == shape)
    return value;
  return ReshapeOp::create(b, loc, type.clone(shape), value);
}

void foldLoad(LoadOp load, Value base, ArrayRef<int64_t> map) {
  auto baseType = llvm::cast<RefType>(base.getType());
  Window w = windowOnBase(load, map, baseType.getRank());
  OpBuilder b(load);
  Location loc = load.getLoc();
  auto resultType = llvm::cast<RankedTensorType>(load.getType());
  auto newType = resultType.clone(w.valueShape);
  Value mask = load.getMask() ? reshaped(b, loc, load.getMask(), w.valueShape) : Value();
  Value other = load.getOther() ? reshaped(b, loc, load.getOther(), w.valueShape) : Value();
  auto folded =
      LoadOp::create(b, loc, newType, base, w.offsets, b.getDenseI64ArrayAttr(w.staticOffsets),
                     b.getDenseI64ArrayAttr(w.sizes), b.getDenseI64ArrayAttr(w.strides),
                     b.getDenseI64ArrayAttr(w.squeeze), mask, other, load.getPadded());
  load.replaceAllUsesWith(reshaped(b, loc, folded.getResult(), resultType.getShape()));
  load.erase();
}

void foldStore(StoreOp store, Value base, ArrayRef<int64_t> map) {
  auto baseType = llvm::cast<RefType>(base.getType());
  Window w = windowOnBase(store, map, baseType.getRank());
  OpBuilder b(store);
  Location loc = store.getLoc();
  Value value = reshaped(b, loc, store.getValue(), w.valueShape);
  Value mask = store.getMask() ? reshaped(b, loc, store.getMask(), w.valueShape) : Value();
  StoreOp::create(b, loc, value, base, w.offsets, b.getDenseI64ArrayAttr(w.staticOffsets),
                  b.getDenseI64ArrayAttr(w.sizes), b.getDenseI64ArrayAttr(w.strides),
                  b.getDenseI64ArrayAttr(w.squeeze), mask, store.getPadded());
  store.erase();
}

struct PkFoldRefReshapes : impl::PkFoldRefReshapesBase<PkFoldRefReshapes> {
  void runOnOperation() override {
    SmallVector<RefReshapeOp> reshapes;
    getOperation()->walk([&](RefReshapeOp op) { reshapes.push_back(op); });
    // Outermost views first: their accesses move to the root, after which
    // the views they were made from have no users left.
    for (RefReshapeOp op : llvm::reverse(reshapes)) {
      if (!foldsIntoAccesses(op))
        continue;
      SmallVector<int64_t> map = *axisMapOf(op);
      Value root = reshapeRoot(op);
      for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
        if (auto load = llvm::dyn_cast<LoadOp>(user))
          foldLoad(load, root, map);
        else if (auto store = llvm::dyn_cast<StoreOp>(user))
          foldStore(store, root, map);
      }
    }
    for (RefReshapeOp op : llvm::reverse(reshapes)) // views before what they view
      if (op->use_empty())
        op.erase();
  }
};

} // namespace

bool foldsIntoAccesses(RefReshapeOp op) {
  std::optional<SmallVector<int64_t>> map = axisMapOf(op);
  if (!map)
    return false;
  for (Operation *user : op->getUsers()) {
    if (auto load = llvm::dyn_cast<LoadOp>(user)) {
      if (load.getRef() != op.getResult() || !staysInside(load, *map))
        return false;
    } else if (auto store = llvm::dyn_cast<StoreOp>(user)) {
      if (store.getRef() != op.getResult() || !staysInside(store, *map))
        return false;
    } else if (auto inner = llvm::dyn_cast<RefReshapeOp>(user)) {
      if (!foldsIntoAccesses(inner))
        return false;
    } else {
      return false;
    }
  }
  return true;
}

} // namespace pk
