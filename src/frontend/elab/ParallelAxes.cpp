//===- ParallelAxes.cpp ---------------------------------------------------===//
#include "frontend/elab/ParallelAxes.h"

#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

namespace pk::elab {

namespace {

llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  if (auto t = llvm::dyn_cast<mlir::ShapedType>(v.getType()))
    return t.getShape();
  return {};
}

int firstTag(const ParallelAxes::Tags &t) {
  for (int tag : t)
    if (tag >= 0)
      return tag;
  return ParallelAxes::kNone;
}

/// The tags of a reshape's input on the axes it keeps, into `out`, or
/// the tag of an axis it splits or merges. An axis is kept when as many
/// elements precede it in both shapes and its size is the same. Size-1
/// axes (a tile's block of 1) that as many elements precede form a run in
/// each shape, matched in order when the runs are as long; else which is
/// which is unknown.
std::optional<int> mapKeptAxes(const ParallelAxes::Tags &in, llvm::ArrayRef<int64_t> inShape,
                               llvm::ArrayRef<int64_t> outShape, ParallelAxes::Tags &out) {
  auto prefixes = [](llvm::ArrayRef<int64_t> shape) {
    llvm::SmallVector<int64_t> before(shape.size());
    int64_t n = 1;
    for (size_t d = 0; d < shape.size(); n *= shape[d++])
      before[d] = n;
    return before;
  };
  llvm::SmallVector<int64_t> inBefore = prefixes(inShape), outBefore = prefixes(outShape);
  auto unitRun = [](llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> before, int64_t at) {
    llvm::SmallVector<size_t> run;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 1 && before[d] == at)
        run.push_back(d);
    return run;
  };
  for (size_t d = 0; d < inShape.size(); ++d) {
    if (in[d] < 0)
      continue;
    std::optional<size_t> kept;
    if (inShape[d] == 1) {
      llvm::SmallVector<size_t> inRun = unitRun(inShape, inBefore, inBefore[d]);
      llvm::SmallVector<size_t> outRun = unitRun(outShape, outBefore, inBefore[d]);
      if (inRun.size() == outRun.size())
        kept = outRun[llvm::find(inRun, d) - inRun.begin()];
    } else {
      for (size_t k = 0; k < outShape.size() && !kept; ++k)
        if (outBefore[k] == inBefore[d] && outShape[k] == inShape[d])
          kept = k;
    }
    if (!kept)
      return in[d];
    out[*kept] = in[d];
  }
  return std::nullopt;
}

} // namespace

ParallelAxes::Tags ParallelAxes::of(mlir::Value value) const {
  auto it = tags.find(value);
  if (it != tags.end())
    return it->second;
  return Tags(shapeOf(value).size(), kNone);
}

const std::vector<int64_t> *ParallelAxes::placedAxes(mlir::Operation &op, size_t rank) const {
  if (!unitAxisReshapes)
    return nullptr;
  auto it = unitAxisReshapes->find(&op);
  // A record of another rank is not this op's (it was rewritten since).
  return it != unitAxisReshapes->end() && it->second.size() == rank ? &it->second : nullptr;
}

std::optional<ParallelAxes::Conflict> ParallelAxes::propagate(mlir::Block &block) {
  for (mlir::Operation &op : block)
    if (std::optional<Conflict> c = visit(op))
      return c;
  return std::nullopt;
}

std::optional<ParallelAxes::Conflict> ParallelAxes::visit(mlir::Operation &op) {
  // What is constant along axes: splats, and what a broadcast adds.
  if (auto constant = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) {
    auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat())
      tags[constant.getResult()] = Tags(shapeOf(constant.getResult()).size(), kBroadcast);
    return std::nullopt;
  }
  if (auto bcast = llvm::dyn_cast<pk::BroadcastInDimOp>(op)) {
    Tags in = of(bcast.getOperand());
    llvm::ArrayRef<int64_t> inShape = shapeOf(bcast.getOperand()), outShape = shapeOf(bcast.getResult());
    llvm::ArrayRef<int64_t> dims = bcast.getBroadcastDimensions();
    Tags out(outShape.size(), kBroadcast);
    for (size_t d = 0; d < in.size(); ++d) {
      bool expanded = outShape[dims[d]] != inShape[d];
      if (in[d] >= 0 && expanded) // a size-1 stand-in broadcast against a static size
        return Conflict{&op, in[d], kNone};
      out[dims[d]] = expanded ? kBroadcast : in[d];
    }
    tags[bcast.getResult()] = out;
    return std::nullopt;
  }
  // Ops that touch no tagged value compute the same thing at every index.
  int used = kNone;
  op.walk([&](mlir::Operation *inner) {
    for (mlir::Value v : inner->getOperands())
      if (used < 0)
        used = firstTag(of(v));
  });
  if (used < 0 || llvm::isa<pk::LoadOp>(op))
    return std::nullopt;
  auto conflict = [&](int tag, int other = kNone) { return Conflict{&op, tag, other}; };
  if (op.getNumRegions() != 0 || op.getNumResults() != 1)
    return conflict(used);
  mlir::Value result = op.getResult(0);
  size_t rank = shapeOf(result).size();

  // Element-wise: operands have the result's shape (scalars broadcast);
  // each axis keeps the one tag its operands agree on. An operand without
  // the tag must be constant along the axis, or of size 1 there (a whole
  // array JAX broadcasts).
  auto merge = [&](mlir::ValueRange operands, std::optional<int64_t> skipAxis)
      -> std::optional<Conflict> {
    Tags out(rank, kNone);
    for (size_t d = 0; d < rank; ++d) {
      int tag = kNone;
      bool constant = true;
      for (mlir::Value v : operands) {
        Tags t = of(v);
        if (t.empty())
          continue;
        if (t.size() != rank) {
          if (firstTag(t) >= 0)
            return conflict(firstTag(t));
          constant = false;
          continue;
        }
        constant &= t[d] == kBroadcast;
        if (t[d] < 0)
          continue;
        if (skipAxis && static_cast<int64_t>(d) == *skipAxis)
          return conflict(t[d]);
        if (tag >= 0 && tag != t[d])
          return conflict(tag, t[d]);
        tag = t[d];
      }
      if (tag >= 0)
        for (mlir::Value v : operands) {
          Tags t = of(v);
          if (t.size() == rank && t[d] == kNone && shapeOf(v)[d] != 1)
            return conflict(tag);
        }
      out[d] = tag >= 0 ? tag : constant ? kBroadcast : kNone;
    }
    tags[result] = out;
    return std::nullopt;
  };
  mlir::Dialect *dialect = op.getDialect();
  if (dialect && llvm::isa<mlir::arith::ArithDialect, mlir::math::MathDialect>(dialect))
    return merge(op.getOperands(), std::nullopt);
  if (auto concat = llvm::dyn_cast<pk::ConcatenateOp>(op))
    return merge(concat.getOperands(), static_cast<int64_t>(concat.getDimension()));

  mlir::Value operand = op.getOperand(0);
  Tags in = of(operand);
  llvm::ArrayRef<int64_t> inShape = shapeOf(operand), outShape = shapeOf(result);
  Tags out(rank, kNone);
  if (const std::vector<int64_t> *placed = placedAxes(op, in.size())) {
    // New or squeezed unit axes: each kept axis goes where the elaborator
    // put it (a tagged axis squeezed away is read across).
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] == kNone)
        continue;
      if ((*placed)[d] < 0) {
        if (in[d] >= 0)
          return conflict(in[d]);
        continue;
      }
      out[(*placed)[d]] = in[d];
    }
  } else if (llvm::isa<pk::ReshapeOp>(op)) {
    // Tagged axes must lead a prefix the reshape leaves as it is, or be
    // axes it neither splits nor merges.
    size_t prefix = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] >= 0)
        prefix = d + 1;
    if (outShape.size() >= prefix && inShape.take_front(prefix) == outShape.take_front(prefix)) {
      for (size_t d = 0; d < prefix; ++d)
        out[d] = in[d];
    } else if (std::optional<int> bad = mapKeptAxes(in, inShape, outShape, out)) {
      return conflict(*bad);
    }
  } else if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op)) {
    llvm::ArrayRef<int64_t> perm = transpose.getPermutation();
    for (size_t d = 0; d < rank; ++d)
      out[d] = in[perm[d]];
  } else if (auto butterfly = llvm::dyn_cast<pk::ButterflyOp>(op)) {
    // Reads across its axis (a sort's exchange); the others stay.
    for (size_t d = 0; d < in.size(); ++d) {
      if (d == butterfly.getDimension() && in[d] >= 0)
        return conflict(in[d]);
      out[d] = in[d];
    }
  } else if (auto slice = llvm::dyn_cast<pk::SliceOp>(op)) {
    // A prefix (x[:n]) keeps the tag: index i of the result is index i of
    // the operand. Its axis is shorter; the tracer runs only the tiles the
    // results need (ArrayCodeTracer's tileParallelAxes).
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d] < 0)
        continue;
      if (slice.getStartIndices()[d] != 0 || slice.getStrides()[d] != 1)
        return conflict(in[d]);
      out[d] = in[d];
    }
  } else if (auto reduce = llvm::dyn_cast<pk::ReduceOp>(op)) {
    llvm::ArrayRef<int64_t> axes = reduce.getAxes();
    for (size_t d = 0; d < in.size(); ++d) {
      bool reduced = llvm::is_contained(axes, static_cast<int64_t>(d));
      if (reduced && in[d] >= 0)
        return conflict(in[d]);
      if (!reduced && !out.empty())
        out[d - llvm::count_if(axes, [&](int64_t a) { return a < static_cast<int64_t>(d); })] = in[d];
    }
  } else if (auto arg = llvm::dyn_cast<pk::ArgReduceOp>(op)) {
    size_t axis = arg.getAxis();
    for (size_t d = 0; d < in.size(); ++d) {
      if (d == axis && in[d] >= 0)
        return conflict(in[d]);
      if (d != axis)
        out[d < axis ? d : d - 1] = in[d];
    }
  } else if (auto dot = llvm::dyn_cast<pk::DotOp>(op)) {
    Tags lhs = of(dot.getLhs()), rhs = of(dot.getRhs());
    if (lhs.size() != 2 || rhs.size() != 2 || rank != 2)
      return conflict(used);
    int m = lhs[dot.getTransposeLhs() ? 1 : 0], kl = lhs[dot.getTransposeLhs() ? 0 : 1];
    int kr = rhs[dot.getTransposeRhs() ? 1 : 0], n = rhs[dot.getTransposeRhs() ? 0 : 1];
    if (kl >= 0 || kr >= 0)
      return conflict(kl >= 0 ? kl : kr);
    out = {m, n};
  } else {
    return conflict(used);
  }
  tags[result] = out;
  return std::nullopt;
}

} // namespace pk::elab
