//===- MeshTma.cpp - Which Mosaic GPU copies TMA carries ------------------===//
#include "backends/cuda/MeshTma.h"
#include "backends/cuda/Storage.h"

#include "runtime/TensorMap.h"

#include <map>
#include <optional>
#include <tuple>

namespace pk::gpu {

using namespace mlir;

SmallVector<pk::RefViewOp> viewChain(Value ref) {
  SmallVector<pk::RefViewOp> chain;
  while (auto view = ref.getDefiningOp<pk::RefViewOp>()) {
    chain.push_back(view);
    ref = view.getRef();
  }
  return chain;
}

namespace {

/// A window of a root Ref through a chain of views.
struct Window {
  Value root;
  SmallVector<int64_t> rootShape;
  SmallVector<int64_t> extent; ///< per root dimension
  /// Per root dimension: whether some view offsets it dynamically, and
  /// the sum of its static offsets.
  SmallVector<bool> dynamicOffset;
  SmallVector<int64_t> staticOffset;
};

/// The window `ref` sees, when every view has unit strides.
std::optional<Window> windowOf(Value ref) {
  SmallVector<pk::RefViewOp> chain = viewChain(ref);
  Window w;
  w.root = pk::viewedRef(ref);
  auto rootType = llvm::cast<pk::RefType>(w.root.getType());
  w.rootShape.assign(rootType.getShape().begin(), rootType.getShape().end());
  w.extent = w.rootShape;
  w.dynamicOffset.assign(w.rootShape.size(), false);
  w.staticOffset.assign(w.rootShape.size(), 0);
  // The root dimension of each dimension of the current view.
  SmallVector<unsigned> dims;
  for (unsigned d = 0; d < w.rootShape.size(); ++d)
    dims.push_back(d);
  for (pk::RefViewOp view : llvm::reverse(chain)) {
    SmallVector<unsigned> kept;
    for (auto [j, rootDim] : llvm::enumerate(dims)) {
      if (view.getStrides()[j] != 1)
        return std::nullopt;
      w.extent[rootDim] = view.getSizes()[j];
      int64_t offset = view.getStaticOffsets()[j];
      if (ShapedType::isDynamic(offset))
        w.dynamicOffset[rootDim] = true;
      else
        w.staticOffset[rootDim] += offset;
      if (!llvm::is_contained(view.getSqueeze(), static_cast<int64_t>(j)))
        kept.push_back(rootDim);
    }
    dims = kept;
  }
  return w;
}

/// Whether a window of shared memory is one contiguous run of bytes
/// starting at a multiple of kMeshSmemAlignment from its buffer's start.
bool isAlignedContiguous(const Window &w, int64_t elementBytes) {
  size_t rank = w.rootShape.size();
  size_t k = 0; // the first dimension the window does not fix to one index
  while (k < rank && w.extent[k] == 1)
    ++k;
  for (size_t d = k + 1; d < rank; ++d)
    if (w.extent[d] != w.rootShape[d])
      return false;
  int64_t stride = elementBytes, offset = 0;
  for (size_t d = rank; d-- > 0;) {
    if (w.dynamicOffset[d] && stride % kMeshSmemAlignment != 0)
      return false;
    offset += w.staticOffset[d] * stride;
    stride *= w.rootShape[d];
  }
  return offset % kMeshSmemAlignment == 0;
}

bool isSharedRef(Value root) {
  return llvm::cast<pk::RefType>(root.getType()).getSpace() == pk::MemorySpace::GPUShared;
}

/// The boxes of a copy between a global window and a row-major shared
/// one: the outermost non-unit dimension is cut into boxes that land one
/// after another. None when another dimension exceeds TMA's limit.
/// Where a copy's boxes may be cut into slices for a multicast: the
/// dimension, and the shared memory bytes of one index along it.
struct SliceDimension {
  unsigned dimension = 0;
  int64_t unitBytes = 0;
};

std::optional<std::vector<MeshTmaCopy::Box>> rowMajorBoxes(const Window &global, int64_t bytes,
                                                           std::vector<int64_t> &box,
                                                           SliceDimension &slice) {
  size_t rank = global.rootShape.size();
  size_t first = 0;
  while (first + 1 < rank && global.extent[first] == 1)
    ++first;
  for (size_t d = first + 1; d < rank; ++d)
    if (global.extent[d] > kTmaMaxBox)
      return std::nullopt;
  box.assign(global.extent.begin(), global.extent.end());
  box[first] = std::min(global.extent[first], kTmaMaxBox);
  if (global.extent[first] % box[first] != 0)
    return std::nullopt;
  int64_t boxBytes = bytes;
  for (int64_t e : box)
    boxBytes *= e;
  slice = {static_cast<unsigned>(first), boxBytes / box[first]};
  std::vector<MeshTmaCopy::Box> boxes;
  for (int64_t i = 0; i < global.extent[first] / box[first]; ++i) {
    MeshTmaCopy::Box b;
    b.start.assign(rank, 0);
    b.start[first] = i * box[first];
    b.sharedByte = i * boxBytes;
    boxes.push_back(b);
  }
  return boxes;
}

/// The boxes of a copy between a global window and one 2-D tile of a
/// buffer stored as wgmma strips (SharedLayout::strips): one box per
/// strip (and per 256 rows), each as wide as the swizzle's span.
std::optional<std::vector<MeshTmaCopy::Box>> stripBoxes(const Window &global, const Window &shared,
                                                        int64_t bytes, int64_t swizzle,
                                                        std::vector<int64_t> &box,
                                                        SliceDimension &slice) {
  size_t rank = global.rootShape.size(), sharedRank = shared.rootShape.size();
  if (rank < 2)
    return std::nullopt;
  // The shared window is one whole tile; the global one has its shape.
  for (size_t d = 0; d + 2 < sharedRank; ++d)
    if (shared.extent[d] != 1)
      return std::nullopt;
  int64_t rows = shared.rootShape[sharedRank - 2], columns = shared.rootShape[sharedRank - 1];
  if (shared.extent[sharedRank - 2] != rows || shared.extent[sharedRank - 1] != columns ||
      shared.dynamicOffset[sharedRank - 2] || shared.dynamicOffset[sharedRank - 1] ||
      shared.staticOffset[sharedRank - 2] || shared.staticOffset[sharedRank - 1])
    return std::nullopt;
  // The tile's rows run along one outer dimension of the global window,
  // the others being single elements (`q_ref.at[b, pl.ds(r, 64), h]` of a
  // (batch, seq, heads, dim) array); its columns along the innermost.
  size_t rowDim = rank - 2;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (global.extent[d] != 1) {
      if (global.extent[rowDim] != 1 && rowDim != d)
        return std::nullopt;
      rowDim = d;
    }
  if (global.extent[rowDim] != rows || global.extent[rank - 1] != columns)
    return std::nullopt;
  slice = {static_cast<unsigned>(rowDim),
           swizzle ? swizzle : 16}; // a strip's rows are a span apart
  return wgmmaStripBoxes(rank, rowDim, rows, columns, bytes, swizzle, box);
}

/// The TMA copy of `global` to or from `shared`, if TMA can carry it; its
/// box and swizzle in `map`.
std::optional<MeshTmaCopy> tmaCopy(const Window &global, const Window &shared, Type element,
                                   MeshTensorMap &map, SliceDimension &slice) {
  int64_t bytes = elementBytes(element);
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return std::nullopt;
  size_t rank = global.rootShape.size();
  if (rank == 0 || rank > rt::kMaxTensorMapRank || !isSharedRef(shared.root))
    return std::nullopt;
  // Global strides (every dimension but the innermost) are multiples of 16
  // bytes; so is the innermost box dimension.
  int64_t stride = bytes;
  for (size_t d = rank; d-- > 1;) {
    stride *= global.rootShape[d];
    if (stride % 16 != 0)
      return std::nullopt;
  }
  auto sharedType = llvm::cast<pk::RefType>(shared.root.getType());
  std::optional<std::vector<MeshTmaCopy::Box>> boxes;
  if (sharedType.getRank() >= 2 && feedsWgmma(shared.root)) {
    map.swizzle = wgmmaOperandSwizzle(sharedType);
    boxes = stripBoxes(global, shared, bytes, map.swizzle, map.box, slice);
  } else if (isAlignedContiguous(shared, bytes)) {
    boxes = rowMajorBoxes(global, bytes, map.box, slice);
  }
  if (!boxes || map.box.back() * bytes % 16 != 0)
    return std::nullopt;
  MeshTmaCopy copy;
  copy.boxes = std::move(*boxes);
  copy.bytes = bytes;
  for (int64_t e : global.extent)
    copy.bytes *= e;
  return copy;
}

/// Cuts `copy`'s boxes into one slice per member of the collective
/// `axes` of `kernel`'s cluster, when each slice still lands where TMA
/// may write (a multiple of 128 bytes, and of the swizzle's 8-row period)
/// on a whole index of `slice`'s dimension. Otherwise every CTA keeps
/// loading the whole copy itself: the same data, more L2 traffic.
void planMulticast(pk::MeshKernelOp kernel, ArrayAttr axes, const SliceDimension &slice,
                   MeshTensorMap &map, MeshTmaCopy &copy) {
  MeshTmaCopy::Multicast multicast;
  for (Attribute a : axes) {
    std::optional<std::pair<unsigned, unsigned>> axis =
        kernel.findAxis(llvm::cast<StringAttr>(a).getValue());
    if (!axis || axis->first != 1)
      return;
    multicast.axes.push_back(axis->second);
    multicast.members *= kernel.getCluster()[axis->second];
  }
  llvm::sort(multicast.axes);
  int64_t rows = map.box[slice.dimension];
  if (multicast.members <= 1 || rows % multicast.members != 0)
    return;
  multicast.dimension = slice.dimension;
  multicast.rows = rows / multicast.members;
  multicast.bytes = multicast.rows * slice.unitBytes;
  int64_t period = std::max<int64_t>(kMeshSmemAlignment, 8 * map.swizzle);
  if (multicast.bytes % period != 0)
    return;
  map.box[slice.dimension] = multicast.rows;
  copy.multicast = std::move(multicast);
}

} // namespace

std::optional<std::vector<MeshTmaCopy::Box>> wgmmaStripBoxes(size_t rank, size_t rowDim,
                                                             int64_t rows, int64_t columns,
                                                             int64_t elementBytes, int64_t swizzle,
                                                             std::vector<int64_t> &box) {
  int64_t span = swizzle ? swizzle : 16, width = span / elementBytes;
  if (rank < 2 || rowDim + 1 >= rank || columns * elementBytes % span != 0 || rows % 8 != 0)
    return std::nullopt;
  int64_t boxRows = std::min<int64_t>(rows, kTmaMaxBox);
  if (rows % boxRows != 0)
    return std::nullopt;
  box.assign(rank, 1);
  box[rowDim] = boxRows;
  box[rank - 1] = width;
  std::vector<MeshTmaCopy::Box> boxes;
  for (int64_t strip = 0; strip < columns / width; ++strip)
    for (int64_t r = 0; r < rows; r += boxRows) {
      MeshTmaCopy::Box b;
      b.start.assign(rank, 0);
      b.start[rowDim] = r;
      b.start[rank - 1] = strip * width;
      b.sharedByte = strip * rows * span + r * span;
      boxes.push_back(b);
    }
  return boxes;
}

bool feedsWgmma(Value ref) {
  for (OpOperand &use : ref.getUses()) {
    Operation *user = use.getOwner();
    if (llvm::isa<pk::RefViewOp, pk::RefTransposeOp>(user))
      if (feedsWgmma(user->getResult(0)))
        return true;
    if (auto wgmma = llvm::dyn_cast<pk::WgmmaOp>(user))
      if (use.get() != wgmma.getAcc())
        return true;
    if (auto mma = llvm::dyn_cast<pk::Tcgen05MmaOp>(user))
      if (use.get() != mma.getAcc())
        return true;
  }
  return false;
}

int64_t wgmmaOperandSwizzle(pk::RefType ref) {
  if (ref.getTransforms())
    for (Attribute t : ref.getTransforms())
      if (auto swizzle = llvm::dyn_cast<pk::SwizzleTransformAttr>(t))
        return swizzle.getSwizzle();
  int64_t row = ref.getShape().back() * elementBytes(ref.getElementType());
  for (int64_t span : {128, 64, 32})
    if (row % span == 0)
      return span;
  return 0;
}

MeshTmaPlan planMeshTma(pk::MeshKernelOp kernel) {
  MeshTmaPlan plan;
  Block &body = kernel.getBodyBlock();
  std::map<std::tuple<unsigned, std::vector<int64_t>, int64_t>, unsigned> known;
  kernel.walk([&](Operation *op) {
    Value global, shared;
    if (auto load = llvm::dyn_cast<pk::CopyGmemToSmemOp>(op)) {
      // A collective copy (collective_axes) gives every CTA along the axes
      // the same data: multicast where its boxes cut into slices
      // (planMulticast), else each CTA loads it itself.
      global = load.getSrc();
      shared = load.getDst();
    } else if (auto store = llvm::dyn_cast<pk::CopySmemToGmemOp>(op)) {
      global = store.getDst();
      shared = store.getSrc();
    } else {
      return;
    }
    std::optional<Window> g = windowOf(global), s = windowOf(shared);
    auto arg = g ? llvm::dyn_cast<BlockArgument>(g->root) : BlockArgument();
    // Both ends must be windows of allocations (a transposed view is
    // copied element by element); a Ref of a plgpu.RefUnion is one.
    if (!arg || arg.getOwner() != &body || !s ||
        !(llvm::isa<BlockArgument>(s->root) || s->root.getDefiningOp<pk::RefReinterpretOp>()))
      return;
    Type element = llvm::cast<pk::RefType>(global.getType()).getElementType();
    MeshTensorMap map;
    SliceDimension slice;
    std::optional<MeshTmaCopy> copy = tmaCopy(*g, *s, element, map, slice);
    if (!copy)
      return;
    if (auto load = llvm::dyn_cast<pk::CopyGmemToSmemOp>(op);
        load && !load.getCollectiveAxes().empty())
      planMulticast(kernel, load.getCollectiveAxes(), slice, map, *copy);
    map.operand = arg.getArgNumber();
    map.shape.assign(g->rootShape.begin(), g->rootShape.end());
    map.element = element;
    auto key = std::make_tuple(map.operand, map.box, map.swizzle);
    auto [it, inserted] = known.try_emplace(key, static_cast<unsigned>(plan.tensorMaps.size()));
    if (inserted)
      plan.tensorMaps.push_back(map);
    copy->tensorMap = it->second;
    plan.copies[op] = *copy;
  });
  return plan;
}

} // namespace pk::gpu
