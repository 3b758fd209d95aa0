//===- EvalStructure.cpp - pk's shape, reduction and dot ops --------------===//
#include "interpreter/Evaluator.h"

#include "ir/PkDialect.h"

#include <cmath>
#include <limits>

namespace pk::interp {

using namespace mlir;

namespace {

std::vector<int64_t> shapeOf(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end());
  return {};
}

/// Copies element `from` of `src` to element `to` of `dst`.
inline void copyElement(const Tensor &src, int64_t from, Tensor &dst, int64_t to) {
  if (src.element.isFloat)
    dst.f[to] = src.f[from];
  else
    dst.i[to] = src.i[from];
}

/// Calls `f(flatIndex, multiIndex)` for every element of `shape`.
template <typename F>
void forEachIndex(const std::vector<int64_t> &shape, F f) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

TensorPtr reduce(const Tensor &in, pk::ReductionKind kind, ArrayRef<int64_t> axes,
                 const ElementKind &out, const std::vector<int64_t> &outShape) {
  TensorPtr r = makeTensor(out, outShape);
  std::vector<bool> reduced(in.shape.size(), false);
  for (int64_t a : axes)
    reduced[a] = true;
  std::vector<int64_t> outStrides = stridesOf(outShape);
  auto outIndex = [&](const std::vector<int64_t> &index) {
    int64_t flat = 0, k = 0;
    for (size_t d = 0; d < index.size(); ++d)
      if (!reduced[d])
        flat += index[d] * outStrides[k++];
    return flat;
  };
  unsigned w = in.element.width;
  if (in.element.isFloat) {
    double init = 0;
    switch (kind) {
    case pk::ReductionKind::Mul: init = 1; break;
    case pk::ReductionKind::MaxF: init = -std::numeric_limits<double>::infinity(); break;
    case pk::ReductionKind::MinF: init = std::numeric_limits<double>::infinity(); break;
    default: break;
    }
    std::vector<double> acc(static_cast<size_t>(r->size()), init);
    forEachIndex(in.shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      double &a = acc[outIndex(index)];
      double v = in.f[flat];
      switch (kind) {
      case pk::ReductionKind::Add: a += v; break;
      case pk::ReductionKind::Mul: a *= v; break;
      case pk::ReductionKind::MaxF: a = (std::isnan(a) || std::isnan(v)) ? NAN : std::max(a, v); break;
      case pk::ReductionKind::MinF: a = (std::isnan(a) || std::isnan(v)) ? NAN : std::min(a, v); break;
      default: break;
      }
    });
    for (size_t k = 0; k < acc.size(); ++k)
      r->f[k] = roundFloat(acc[k], out);
    return r;
  }
  int64_t init = 0;
  switch (kind) {
  case pk::ReductionKind::Mul: init = 1; break;
  case pk::ReductionKind::And: init = -1; break;
  case pk::ReductionKind::MaxSI: init = w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1)); break;
  case pk::ReductionKind::MinSI: init = w >= 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1; break;
  case pk::ReductionKind::MinUI: init = -1; break;
  default: break;
  }
  std::vector<int64_t> acc(static_cast<size_t>(r->size()), wrapInt(init, w));
  forEachIndex(in.shape, [&](int64_t flat, const std::vector<int64_t> &index) {
    int64_t &a = acc[outIndex(index)];
    int64_t v = in.i[flat];
    switch (kind) {
    case pk::ReductionKind::Add: a = wrapInt(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(v)), w); break;
    case pk::ReductionKind::Mul: a = wrapInt(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(v)), w); break;
    case pk::ReductionKind::MaxSI: a = std::max(a, v); break;
    case pk::ReductionKind::MinSI: a = std::min(a, v); break;
    case pk::ReductionKind::MaxUI: a = asUnsigned(v, w) > asUnsigned(a, w) ? v : a; break;
    case pk::ReductionKind::MinUI: a = asUnsigned(v, w) < asUnsigned(a, w) ? v : a; break;
    case pk::ReductionKind::And: a = wrapInt(a & v, w); break;
    case pk::ReductionKind::Or: a = wrapInt(a | v, w); break;
    case pk::ReductionKind::Xor: a = wrapInt(a ^ v, w); break;
    default: break;
    }
  });
  r->i = std::move(acc);
  return r;
}

TensorPtr argReduce(const Tensor &in, pk::ReductionKind kind, int64_t axis,
                    const ElementKind &out, const std::vector<int64_t> &outShape) {
  TensorPtr r = makeTensor(out, outShape);
  std::vector<int64_t> strides = stridesOf(in.shape);
  int64_t n = in.shape[axis], stride = strides[axis];
  bool isMax = kind == pk::ReductionKind::MaxF || kind == pk::ReductionKind::MaxSI ||
               kind == pk::ReductionKind::MaxUI;
  unsigned w = in.element.width;
  forEachIndex(outShape, [&](int64_t flat, const std::vector<int64_t> &index) {
    // The input offset of element 0 along `axis` for this output position.
    int64_t base = 0, k = 0;
    for (int64_t d = 0; d < in.rank(); ++d)
      if (d != axis)
        base += index[k++] * strides[d];
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j) {
      int64_t at = base + j * stride, current = base + best * stride;
      bool better;
      if (in.element.isFloat) {
        double v = in.f[at], b = in.f[current];
        // The first NaN wins, as in jnp.argmax.
        better = !std::isnan(b) && (std::isnan(v) || (isMax ? v > b : v < b));
      } else if (kind == pk::ReductionKind::MaxUI || kind == pk::ReductionKind::MinUI) {
        uint64_t v = asUnsigned(in.i[at], w), b = asUnsigned(in.i[current], w);
        better = isMax ? v > b : v < b;
      } else {
        better = isMax ? in.i[at] > in.i[current] : in.i[at] < in.i[current];
      }
      if (better)
        best = j;
    }
    r->i[flat] = best;
  });
  return r;
}

TensorPtr dot(const Tensor &a, const Tensor &b, bool transposeA, bool transposeB,
              bool unsignedOperands, const ElementKind &out) {
  int64_t m = a.shape[transposeA ? 1 : 0], k = a.shape[transposeA ? 0 : 1];
  int64_t n = b.shape[transposeB ? 0 : 1];
  TensorPtr r = makeTensor(out, {m, n});
  auto aIndex = [&](int64_t i, int64_t p) { return transposeA ? p * m + i : i * k + p; };
  auto bIndex = [&](int64_t p, int64_t j) { return transposeB ? j * k + p : p * n + j; };
  if (out.isFloat) {
    // Row by row, accumulating in double; the inner loop runs over
    // contiguous memory when B is not transposed, so it vectorizes.
    std::vector<double> row(static_cast<size_t>(n));
    std::vector<double> bt;
    const double *bData = b.f.data();
    if (transposeB) {
      bt.resize(static_cast<size_t>(k * n));
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          bt[p * n + j] = b.f[bIndex(p, j)];
      bData = bt.data();
    }
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        double x = a.f[aIndex(i, p)];
        const double *bRow = bData + p * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * bRow[j];
      }
      for (int64_t j = 0; j < n; ++j)
        r->f[i * n + j] = roundFloat(row[j], out);
    }
    return r;
  }
  // Integers are held sign-extended; unsigned operands widen by zero
  // extension instead (uint8 200 is 200, not -56).
  unsigned width = a.element.width;
  uint64_t operandMask = !unsignedOperands || width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  auto widen = [&](int64_t v) { return static_cast<uint64_t>(v) & operandMask; };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint64_t acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += widen(a.i[aIndex(i, p)]) * widen(b.i[bIndex(p, j)]);
      r->i[i * n + j] = wrapInt(static_cast<int64_t>(acc), out.width);
    }
  return r;
}

} // namespace

bool Evaluator::evalStructure(Operation *op) {
  if (auto iota = llvm::dyn_cast<pk::IotaOp>(op)) {
    std::vector<int64_t> shape = shapeOf(iota.getType());
    ElementKind out = elementKindOf(iota.getType());
    TensorPtr r = makeTensor(out, shape);
    int64_t dim = static_cast<int64_t>(iota.getDimension());
    forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      if (out.isFloat)
        r->f[flat] = roundFloat(static_cast<double>(index[dim]), out);
      else
        r->i[flat] = wrapInt(index[dim], out.width);
    });
    set(iota.getResult(), r);
    return true;
  }
  if (auto bcast = llvm::dyn_cast<pk::BroadcastInDimOp>(op)) {
    const Tensor &in = *get(bcast.getOperand());
    std::vector<int64_t> shape = shapeOf(bcast.getType());
    TensorPtr r = makeTensor(in.element, shape);
    ArrayRef<int64_t> dims = bcast.getBroadcastDimensions();
    std::vector<int64_t> inStrides = stridesOf(in.shape);
    forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      int64_t from = 0;
      for (size_t d = 0; d < dims.size(); ++d)
        if (in.shape[d] != 1)
          from += index[dims[d]] * inStrides[d];
      copyElement(in, from, *r, flat);
    });
    set(bcast.getResult(), r);
    return true;
  }
  if (auto reshape = llvm::dyn_cast<pk::ReshapeOp>(op)) {
    TensorPtr r = std::make_shared<Tensor>(*get(reshape.getOperand()));
    r->shape = shapeOf(reshape.getType());
    set(reshape.getResult(), r);
    return true;
  }
  if (auto bitcast = llvm::dyn_cast<pk::BitcastOp>(op)) {
    // Rows of the second-minor axis pack into (or unpack from) the wider
    // type, the first row in the low bits.
    const Tensor &in = *get(bitcast.getOperand());
    TensorPtr r = makeTensor(elementKindOf(bitcast.getType()), shapeOf(bitcast.getType()));
    unsigned from = in.element.width, to = r->element.width;
    int64_t columns = in.shape.back();
    int64_t inRows = in.shape[in.shape.size() - 2];
    int64_t outRows = r->shape[r->shape.size() - 2];
    int64_t matrices = in.size() / (inRows * columns);
    for (int64_t m = 0; m < matrices; ++m)
      for (int64_t row = 0; row < outRows; ++row)
        for (int64_t c = 0; c < columns; ++c) {
          int64_t at = (m * outRows + row) * columns + c;
          if (from < to) {
            uint64_t bits = 0;
            for (unsigned k = 0; k < to / from; ++k)
              bits |= elementBits(in, (m * inRows + row * (to / from) + k) * columns + c)
                      << (k * from);
            setElementBits(*r, at, bits);
          } else {
            uint64_t word = elementBits(in, (m * inRows + row / (from / to)) * columns + c);
            uint64_t mask = to >= 64 ? ~uint64_t(0) : (uint64_t(1) << to) - 1;
            setElementBits(*r, at, (word >> ((row % (from / to)) * to)) & mask);
          }
        }
    set(bitcast.getResult(), r);
    return true;
  }
  if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op)) {
    const Tensor &in = *get(transpose.getOperand());
    std::vector<int64_t> shape = shapeOf(transpose.getType());
    TensorPtr r = makeTensor(in.element, shape);
    ArrayRef<int64_t> perm = transpose.getPermutation();
    std::vector<int64_t> inStrides = stridesOf(in.shape);
    forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      int64_t from = 0;
      for (size_t d = 0; d < perm.size(); ++d)
        from += index[d] * inStrides[perm[d]];
      copyElement(in, from, *r, flat);
    });
    set(transpose.getResult(), r);
    return true;
  }
  if (auto slice = llvm::dyn_cast<pk::SliceOp>(op)) {
    const Tensor &in = *get(slice.getOperand());
    std::vector<int64_t> shape = shapeOf(slice.getType());
    TensorPtr r = makeTensor(in.element, shape);
    ArrayRef<int64_t> start = slice.getStartIndices(), stride = slice.getStrides();
    std::vector<int64_t> inStrides = stridesOf(in.shape);
    forEachIndex(shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      int64_t from = 0;
      for (size_t d = 0; d < index.size(); ++d)
        from += (start[d] + index[d] * stride[d]) * inStrides[d];
      copyElement(in, from, *r, flat);
    });
    set(slice.getResult(), r);
    return true;
  }
  if (auto butterfly = llvm::dyn_cast<pk::ButterflyOp>(op)) {
    const Tensor &in = *get(butterfly.getOperand());
    TensorPtr r = makeTensor(in.element, in.shape);
    size_t axis = butterfly.getDimension();
    int64_t distance = butterfly.getDistance();
    std::vector<int64_t> strides = stridesOf(in.shape);
    forEachIndex(in.shape, [&](int64_t flat, const std::vector<int64_t> &index) {
      int64_t partner = index[axis] ^ distance;
      copyElement(in, flat + (partner - index[axis]) * strides[axis], *r, flat);
    });
    set(butterfly.getResult(), r);
    return true;
  }
  if (auto concat = llvm::dyn_cast<pk::ConcatenateOp>(op)) {
    std::vector<int64_t> shape = shapeOf(concat.getType());
    int64_t axis = static_cast<int64_t>(concat.getDimension());
    ElementKind out = elementKindOf(concat.getType());
    TensorPtr r = makeTensor(out, shape);
    std::vector<int64_t> outStrides = stridesOf(shape);
    int64_t offset = 0;
    for (Value v : concat.getOperands()) {
      const Tensor &in = *get(v);
      forEachIndex(in.shape, [&](int64_t flat, const std::vector<int64_t> &index) {
        int64_t to = 0;
        for (size_t d = 0; d < index.size(); ++d)
          to += (index[d] + (static_cast<int64_t>(d) == axis ? offset : 0)) * outStrides[d];
        copyElement(in, flat, *r, to);
      });
      offset += in.shape[axis];
    }
    set(concat.getResult(), r);
    return true;
  }
  if (auto red = llvm::dyn_cast<pk::ReduceOp>(op)) {
    set(red.getResult(), reduce(*get(red.getOperand()), red.getKind(), red.getAxes(),
                                elementKindOf(red.getType()), shapeOf(red.getType())));
    return true;
  }
  if (auto arg = llvm::dyn_cast<pk::ArgReduceOp>(op)) {
    set(arg.getResult(), argReduce(*get(arg.getOperand()), arg.getKind(),
                                   static_cast<int64_t>(arg.getAxis()), elementKindOf(arg.getType()),
                                   shapeOf(arg.getType())));
    return true;
  }
  if (auto d = llvm::dyn_cast<pk::DotOp>(op)) {
    set(d.getResult(), dot(*get(d.getLhs()), *get(d.getRhs()), d.getTransposeLhs(),
                           d.getTransposeRhs(), d.getUnsignedOperands(),
                           elementKindOf(d.getType())));
    return true;
  }
  return false;
}

} // namespace pk::interp
