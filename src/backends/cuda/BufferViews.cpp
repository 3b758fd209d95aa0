//===- BufferViews.cpp ----------------------------------------------------===//
#include "backends/cuda/BufferViews.h"

#include "ir/WholeRef.h"

namespace pk::gpu {

namespace {

/// The grid axes a spec's index map walks, in order, when it walks them
/// along a prefix of the array's axes (blocked or squeezed, as jax.vmap's
/// axes are; the rest at block 0); else nothing.
std::optional<llvm::SmallVector<unsigned>> leadingWalk(pk::BlockSpecAttr spec) {
  if (!spec.hasAffineIndexMap())
    return std::nullopt;
  llvm::SmallVector<unsigned> walk;
  bool prefix = true;
  for (auto [d, e] : llvm::enumerate(spec.getIndexMap().getResults())) {
    if (spec.getDimKinds()[d] == pk::BlockDimKind::Element)
      return std::nullopt;
    if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(e); dim && prefix) {
      walk.push_back(dim.getPosition());
      continue;
    }
    auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || spec.isSqueezed(d))
      return std::nullopt;
    prefix = false;
  }
  return walk;
}

/// The first element of `slice` when its elements are contiguous in the
/// row-major operand: single indices, then one unit-stride range, then
/// whole axes.
std::optional<uint64_t> contiguousStart(pk::SliceOp slice) {
  llvm::ArrayRef<int64_t> shape = llvm::cast<mlir::ShapedType>(slice.getOperand().getType()).getShape();
  llvm::ArrayRef<int64_t> start = slice.getStartIndices(), limit = slice.getLimitIndices();
  size_t rank = shape.size(), d = 0;
  if (llvm::any_of(slice.getStrides(), [](int64_t s) { return s != 1; }))
    return std::nullopt;
  while (d < rank && limit[d] - start[d] == 1)
    ++d;
  for (size_t e = d + 1; e < rank; ++e)
    if (start[e] != 0 || limit[e] != shape[e])
      return std::nullopt;
  uint64_t first = 0, stride = 1;
  for (size_t e = rank; e-- > 0;) {
    first += static_cast<uint64_t>(start[e]) * stride;
    stride *= static_cast<uint64_t>(shape[e]);
  }
  return first;
}

} // namespace

std::optional<uint64_t> bufferViewOffset(pk::PallasCallOp call) {
  if (!call->hasAttr("pk.generated") || call.getInputs().size() != 1 || call.getNumResults() != 1 ||
      call.getNumScalarPrefetch() != 0 || !call.getScratchTypes().empty() ||
      !call.getInputOutputAliases().empty())
    return std::nullopt;
  auto in = llvm::cast<mlir::RankedTensorType>(call.getInputs()[0].getType());
  auto out = llvm::cast<mlir::RankedTensorType>(call.getResult(0).getType());
  if (in.getElementType() != out.getElementType())
    return std::nullopt;
  // Both blocks walk the same grid axes down a prefix of their axes, so
  // program k reads and writes the same row-major stretch of elements.
  auto inWalk = leadingWalk(call.getInSpec(0)), outWalk = leadingWalk(call.getOutSpec(0));
  if (!inWalk || !outWalk || *inWalk != *outWalk)
    return std::nullopt;
  for (size_t d = 0; d < inWalk->size(); ++d)
    if (call.getInSpec(0).getBlockShape()[d] != call.getOutSpec(0).getBlockShape()[d])
      return std::nullopt;
  // The other axes are whole.
  auto wholeRest = [&](pk::BlockSpecAttr spec, mlir::RankedTensorType type) {
    for (size_t d = inWalk->size(); d < static_cast<size_t>(type.getRank()); ++d)
      if (type.isDynamicDim(d) || spec.getBlockShape()[d] != type.getDimSize(d))
        return false;
    return true;
  };
  if (!wholeRest(call.getInSpec(0), in) || !wholeRest(call.getOutSpec(0), out))
    return std::nullopt;

  // The body: read the block whole, take one contiguous slice of it (only
  // of a whole-array block) and reshape it any number of times, store it
  // whole.
  mlir::Block &body = call.getKernelBlock();
  mlir::Value value;
  bool stored = false, sliced = false;
  uint64_t offset = 0;
  for (mlir::Operation &op : body) {
    if (auto load = llvm::dyn_cast<pk::LoadOp>(op)) {
      if (value || load.getRef() != body.getArgument(0) || !pk::readsWholeRef(load))
        return std::nullopt;
      value = load.getResult();
    } else if (auto slice = llvm::dyn_cast<pk::SliceOp>(op)) {
      if (!value || slice.getOperand() != value || sliced || !inWalk->empty())
        return std::nullopt;
      std::optional<uint64_t> elements = contiguousStart(slice);
      if (!elements)
        return std::nullopt;
      unsigned bits = in.getElementType().getIntOrFloatBitWidth();
      offset = *elements * (bits < 8 ? 1 : bits / 8);
      sliced = true;
      value = slice.getResult();
    } else if (auto reshape = llvm::dyn_cast<pk::ReshapeOp>(op)) {
      if (!value || reshape.getOperand() != value)
        return std::nullopt;
      value = reshape.getResult();
    } else if (auto store = llvm::dyn_cast<pk::StoreOp>(op)) {
      if (!value || store.getValue() != value || store.getRef() != body.getArgument(1) ||
          !pk::writesWholeRef(store))
        return std::nullopt;
      value = nullptr;
      stored = true;
    } else if (!llvm::isa<pk::YieldOp>(op)) {
      return std::nullopt;
    }
  }
  if (!stored || value || body.getNumArguments() != 2 || offset % 16 != 0)
    return std::nullopt;
  return offset;
}

} // namespace pk::gpu
