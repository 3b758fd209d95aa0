//===- EvalMemory.cpp - pk.load and pk.store ------------------------------===//
//
// Windows of a Ref, with Pallas interpret mode's two out-of-bounds rules,
// both built on lax.dynamic_slice, which first counts a negative start from
// the end (start + extent) and then clamps it so that the window fits.
// Ref indexing (plain pk.load / pk.store) does exactly that on the Ref: a
// window that runs past the end is shifted back inside. pl.load / pl.store
// (`padded`, or a mask) first pad each axis by the window size: elements
// past the end read as the uninitialized value and are not written, and a
// start past the end (or a small negative one) reads only padding. Masked
// accesses touch only the selected, in-bounds elements, and masked-off
// loads take `other` (or the uninitialized value).
//
//===----------------------------------------------------------------------===//
#include "interpreter/Evaluator.h"

#include "ir/PkDialect.h"

namespace pk::interp {

using namespace mlir;

namespace {

struct Window {
  std::vector<int64_t> start, sizes, strides;
  std::vector<bool> squeezed;
  std::vector<int64_t> valueShape;
};

template <typename OpT>
Window window(OpT op, const std::vector<int64_t> &refShape,
              const std::function<int64_t(Value)> &readIndex) {
  Window w;
  bool padded = op.getPadded() || op.getMask();
  ArrayRef<int64_t> staticOffsets = op.getStaticOffsets();
  unsigned dynamic = 0;
  for (size_t d = 0; d < refShape.size(); ++d) {
    int64_t offset = ShapedType::isDynamic(staticOffsets[d]) ? readIndex(op.getOffsets()[dynamic++])
                                                            : staticOffsets[d];
    int64_t size = op.getSizes()[d], stride = op.getStrides()[d];
    int64_t span = (size - 1) * stride + 1;
    int64_t extent = padded ? refShape[d] + span : refShape[d];
    if (offset < 0)
      offset += extent;
    offset = std::max<int64_t>(0, std::min(offset, extent - span));
    w.start.push_back(offset);
    w.sizes.push_back(size);
    w.strides.push_back(stride);
    w.squeezed.push_back(llvm::is_contained(op.getSqueeze(), static_cast<int64_t>(d)));
    if (!w.squeezed.back())
      w.valueShape.push_back(size);
  }
  return w;
}

/// Calls f(valueIndex, refIndex or -1 when out of bounds) for each element.
template <typename F>
void forEachWindowElement(const Window &w, const RefBuffer &ref, F f) {
  const std::vector<int64_t> &refShape = ref.viewShape();
  std::vector<int64_t> refStrides = ref.elementStrides();
  int64_t count = 1;
  for (int64_t s : w.sizes)
    count *= s;
  std::vector<int64_t> index(w.sizes.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t at = ref.base();
    bool inBounds = true;
    for (size_t d = 0; d < index.size(); ++d) {
      int64_t coordinate = w.start[d] + index[d] * w.strides[d];
      inBounds &= coordinate >= 0 && coordinate < refShape[d];
      at += coordinate * refStrides[d];
    }
    f(flat, inBounds ? at : -1);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < w.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace

void Evaluator::evalLoad(Operation *operation) {
  auto op = llvm::cast<pk::LoadOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  const Tensor &data = *ref.data;
  bool masked = static_cast<bool>(op.getMask());
  Window w = window(op, ref.viewShape(), [&](Value v) { return get(v)->i[0]; });
  TensorPtr result = makeTensor(data.element, w.valueShape);
  TensorPtr mask = masked ? get(op.getMask()) : nullptr;
  TensorPtr other = op.getOther() ? get(op.getOther()) : nullptr;
  Tensor uninitialized(data.element, {1});
  fillUninitialized(uninitialized, ref.dtype);
  forEachWindowElement(w, ref, [&](int64_t k, int64_t at) {
    bool selected = !mask || mask->i[mask->rank() == 0 ? 0 : k] != 0;
    if (selected && at >= 0) {
      if (!pendingDmas.empty())
        checkNotInFlight(operation, data, at, false);
      if (data.element.isFloat)
        result->f[k] = data.f[at];
      else
        result->i[k] = data.i[at];
      return;
    }
    if (!selected && other) {
      int64_t from = other->rank() == 0 ? 0 : k;
      if (data.element.isFloat)
        result->f[k] = other->f[from];
      else
        result->i[k] = other->i[from];
      return;
    }
    if (data.element.isFloat)
      result->f[k] = uninitialized.f[0];
    else
      result->i[k] = uninitialized.i[0];
  });
  set(op.getResult(), result);
}

void Evaluator::evalStore(Operation *operation) {
  auto op = llvm::cast<pk::StoreOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  Tensor &data = *ref.data;
  bool masked = static_cast<bool>(op.getMask());
  Window w = window(op, ref.viewShape(), [&](Value v) { return get(v)->i[0]; });
  const Tensor &value = *get(op.getValue());
  TensorPtr mask = masked ? get(op.getMask()) : nullptr;
  forEachWindowElement(w, ref, [&](int64_t k, int64_t at) {
    bool selected = !mask || mask->i[mask->rank() == 0 ? 0 : k] != 0;
    if (!selected || at < 0)
      return;
    if (!pendingDmas.empty())
      checkNotInFlight(operation, data, at, true);
    if (data.element.isFloat)
      data.f[at] = value.f[value.rank() == 0 ? 0 : k];
    else
      data.i[at] = value.i[value.rank() == 0 ? 0 : k];
  });
  ref.written = true;
}

namespace {

/// The flat Ref offset of element k of a gather / scatter, or -1 when a
/// coordinate is outside the Ref and `clamp` is off.
int64_t coordinateOffset(const std::vector<TensorPtr> &indices, const RefBuffer &ref, int64_t k,
                         bool clamp) {
  const std::vector<int64_t> &refShape = ref.viewShape();
  std::vector<int64_t> refStrides = ref.elementStrides();
  int64_t at = ref.base();
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t c = indices[d]->i[k];
    if (c < 0 || c >= refShape[d]) {
      if (!clamp)
        return -1;
      c = std::max<int64_t>(0, std::min(c, refShape[d] - 1));
    }
    at += c * refStrides[d];
  }
  return at;
}

} // namespace

void Evaluator::evalGather(Operation *operation) {
  auto op = llvm::cast<pk::GatherOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  const Tensor &data = *ref.data;
  std::vector<TensorPtr> indices;
  for (Value v : op.getIndices())
    indices.push_back(get(v));
  auto type = llvm::cast<RankedTensorType>(op.getType());
  TensorPtr result = makeTensor(data.element, std::vector<int64_t>(type.getShape()));
  TensorPtr mask = op.getMask() ? get(op.getMask()) : nullptr;
  TensorPtr other = op.getOther() ? get(op.getOther()) : nullptr;
  Tensor uninitialized(data.element, {1});
  fillUninitialized(uninitialized, ref.dtype);
  for (int64_t k = 0; k < result->size(); ++k) {
    bool selected = !mask || mask->i[mask->rank() == 0 ? 0 : k] != 0;
    const Tensor *source = &data;
    int64_t at = 0;
    if (selected) {
      at = coordinateOffset(indices, ref, k, /*clamp=*/true); // jnp gathers clamp
    } else if (other) {
      source = other.get();
      at = other->rank() == 0 ? 0 : k;
    } else {
      source = &uninitialized;
    }
    if (data.element.isFloat)
      result->f[k] = source->f[at];
    else
      result->i[k] = source->i[at];
  }
  set(op.getResult(), result);
}

void Evaluator::evalScatter(Operation *operation) {
  auto op = llvm::cast<pk::ScatterOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  Tensor &data = *ref.data;
  const Tensor &value = *get(op.getValue());
  std::vector<TensorPtr> indices;
  for (Value v : op.getIndices())
    indices.push_back(get(v));
  TensorPtr mask = op.getMask() ? get(op.getMask()) : nullptr;
  for (int64_t k = 0; k < value.size(); ++k) {
    if (mask && mask->i[mask->rank() == 0 ? 0 : k] == 0)
      continue;
    int64_t at = coordinateOffset(indices, ref, k, /*clamp=*/false); // dropped
    if (at < 0)
      continue;
    if (data.element.isFloat)
      data.f[at] = value.f[k];
    else
      data.i[at] = value.i[k];
  }
  ref.written = true;
}

namespace {

/// kind(old, v) for an atomic update, as the element type computes it.
double atomicFloat(pk::AtomicKind kind, double old, double v, const ElementKind &element) {
  switch (kind) {
  case pk::AtomicKind::Add:
    return roundFloat(old + v, element);
  case pk::AtomicKind::Max: // jnp.maximum: NaN wins
    return std::isnan(old) || std::isnan(v) ? NAN : std::max(old, v);
  case pk::AtomicKind::Min:
    return std::isnan(old) || std::isnan(v) ? NAN : std::min(old, v);
  default: // xchg
    return v;
  }
}

int64_t atomicInt(pk::AtomicKind kind, int64_t old, int64_t v, unsigned width) {
  switch (kind) {
  case pk::AtomicKind::Xchg:
    return v;
  case pk::AtomicKind::Add:
    return wrapInt(old + v, width);
  case pk::AtomicKind::Max:
    return std::max(old, v);
  case pk::AtomicKind::Min:
    return std::min(old, v);
  case pk::AtomicKind::MaxU:
    return asUnsigned(old, width) >= asUnsigned(v, width) ? old : v;
  case pk::AtomicKind::MinU:
    return asUnsigned(old, width) <= asUnsigned(v, width) ? old : v;
  case pk::AtomicKind::And:
    return old & v;
  case pk::AtomicKind::Or:
    return old | v;
  case pk::AtomicKind::Xor:
    return wrapInt(old ^ v, width);
  }
  return v;
}

} // namespace

void Evaluator::evalAtomicRmw(Operation *operation) {
  // Programs run one at a time here, so "atomic" is simply read, combine,
  // write, element by element in row-major order.
  auto op = llvm::cast<pk::AtomicRmwOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  Tensor &data = *ref.data;
  Window w = window(op, ref.viewShape(), [&](Value v) { return get(v)->i[0]; });
  const Tensor &value = *get(op.getValue());
  TensorPtr mask = op.getMask() ? get(op.getMask()) : nullptr;
  TensorPtr result = makeTensor(data.element, w.valueShape);
  fillUninitialized(*result, ref.dtype);
  forEachWindowElement(w, ref, [&](int64_t k, int64_t at) {
    bool selected = !mask || mask->i[mask->rank() == 0 ? 0 : k] != 0;
    if (!selected || at < 0)
      return;
    int64_t from = value.rank() == 0 ? 0 : k;
    if (data.element.isFloat) {
      result->f[k] = data.f[at];
      data.f[at] = atomicFloat(op.getKind(), data.f[at], value.f[from], data.element);
    } else {
      result->i[k] = data.i[at];
      data.i[at] = atomicInt(op.getKind(), data.i[at], value.i[from], data.element.width);
    }
  });
  ref.written = true;
  set(op.getResult(), result);
}

void Evaluator::evalAtomicCas(Operation *operation) {
  auto op = llvm::cast<pk::AtomicCasOp>(operation);
  RefBuffer &ref = getRef(op.getRef());
  Tensor &data = *ref.data;
  std::vector<int64_t> strides = ref.elementStrides();
  int64_t at = ref.base();
  for (size_t d = 0; d < op.getOffsets().size(); ++d)
    at += get(op.getOffsets()[d])->i[0] * strides[d];
  TensorPtr result = makeTensor(data.element, {});
  const Tensor &compare = *get(op.getCmp()), &value = *get(op.getValue());
  if (data.element.isFloat) {
    result->f[0] = data.f[at];
    if (data.f[at] == compare.f[0])
      data.f[at] = value.f[0];
  } else {
    result->i[0] = data.i[at];
    if (data.i[at] == compare.i[0])
      data.i[at] = value.i[0];
  }
  ref.written = true;
  set(op.getResult(), result);
}

} // namespace pk::interp
