//===- MeshTma.cpp - Which Mosaic GPU copies TMA carries ------------------===//
#include "backends/cuda/MeshTma.h"

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

int64_t storageBytes(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

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
  w.root = chain.empty() ? ref : chain.back().getRef();
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

/// The TMA copy of a window of operand `operand`, if TMA can carry it.
std::optional<MeshTmaCopy> tmaCopy(const Window &global, const Window &shared, Type element) {
  int64_t bytes = storageBytes(element);
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return std::nullopt;
  size_t rank = global.rootShape.size();
  if (rank == 0 || rank > rt::kMaxTensorMapRank)
    return std::nullopt;
  if (!isSharedRef(shared.root) || !isAlignedContiguous(shared, bytes))
    return std::nullopt;
  // Global strides (every dimension but the innermost) are multiples of 16
  // bytes; so is the innermost box dimension.
  int64_t stride = bytes;
  for (size_t d = rank; d-- > 1;) {
    stride *= global.rootShape[d];
    if (stride % 16 != 0)
      return std::nullopt;
  }
  if (global.extent.back() * bytes % 16 != 0)
    return std::nullopt;
  MeshTmaCopy copy;
  copy.window.assign(global.extent.begin(), global.extent.end());
  // Every box dimension fits TMA's limit but the outermost non-unit one,
  // which is cut into boxes that land one after another.
  size_t first = 0;
  while (first + 1 < rank && global.extent[first] == 1)
    ++first;
  for (size_t d = first + 1; d < rank; ++d)
    if (global.extent[d] > kTmaMaxBox)
      return std::nullopt;
  copy.splitDim = static_cast<unsigned>(first);
  int64_t box = std::min(global.extent[first], kTmaMaxBox);
  if (global.extent[first] % box != 0)
    return std::nullopt;
  copy.boxes = global.extent[first] / box;
  copy.bytes = bytes;
  for (int64_t e : global.extent)
    copy.bytes *= e;
  return copy;
}

} // namespace

MeshTmaPlan planMeshTma(pk::MeshKernelOp kernel) {
  MeshTmaPlan plan;
  Block &body = kernel.getBodyBlock();
  std::map<std::tuple<unsigned, std::vector<int64_t>>, unsigned> known;
  kernel.walk([&](Operation *op) {
    Value global, shared;
    if (auto load = llvm::dyn_cast<pk::CopyGmemToSmemOp>(op)) {
      if (!load.getCollectiveAxes().empty())
        return; // multicast: not lowered (rejected by name)
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
    if (!arg || arg.getOwner() != &body || !s)
      return;
    Type element = llvm::cast<pk::RefType>(global.getType()).getElementType();
    std::optional<MeshTmaCopy> copy = tmaCopy(*g, *s, element);
    if (!copy)
      return;
    std::vector<int64_t> box = copy->window;
    box[copy->splitDim] /= copy->boxes;
    auto key = std::make_tuple(arg.getArgNumber(), box);
    auto [it, inserted] = known.try_emplace(key, static_cast<unsigned>(plan.tensorMaps.size()));
    if (inserted)
      plan.tensorMaps.push_back({arg.getArgNumber(), std::vector<int64_t>(g->rootShape.begin(), g->rootShape.end()),
                                 box, element});
    copy->tensorMap = it->second;
    plan.copies[op] = *copy;
  });
  return plan;
}

} // namespace pk::gpu
