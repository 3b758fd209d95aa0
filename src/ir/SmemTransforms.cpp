//===- SmemTransforms.cpp - Mosaic GPU shared-memory transforms -----------===//
#include "ir/SmemTransforms.h"

#include "ir/PkDialect.h"
#include "support/ShapeText.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <numeric>

namespace pk {

namespace {

unsigned bitWidthOf(mlir::Type element) {
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(element))
    return integer.getWidth() == 1 ? 8 : integer.getWidth();
  return element.getIntOrFloatBitWidth();
}

bool isPermutation(llvm::ArrayRef<int64_t> p) {
  std::vector<int64_t> sorted(p.begin(), p.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// The physical dim each logical dim lands on, before tiling.
std::vector<int64_t> logicalOfPhysical(mlir::ArrayAttr transforms, size_t rank) {
  std::vector<int64_t> q = transposeOf(transforms);
  if (q.empty()) {
    q.resize(rank);
    std::iota(q.begin(), q.end(), 0);
  }
  return q;
}

} // namespace

std::string checkSmemTransforms(llvm::ArrayRef<int64_t> logicalShape, mlir::Type elementType,
                                mlir::ArrayAttr transforms) {
  if (!transforms)
    return "";
  std::vector<int64_t> shape(logicalShape.begin(), logicalShape.end());
  bool tiled = false, swizzled = false;
  for (mlir::Attribute t : transforms) {
    if (auto transpose = llvm::dyn_cast<TransposeTransformAttr>(t)) {
      llvm::ArrayRef<int64_t> p = transpose.getPermutation();
      if (tiled || swizzled)
        return "a TransposeTransform must come before tiling and swizzling";
      if (p.size() != shape.size() || !isPermutation(p))
        return "TransposeTransform" + shapeText(p) + " is not a permutation of the " +
               std::to_string(shape.size()) + " dimensions of shape " + shapeText(shape);
      std::vector<int64_t> permuted;
      for (int64_t d : p)
        permuted.push_back(shape[d]);
      shape = permuted;
    } else if (auto tile = llvm::dyn_cast<TileTransformAttr>(t)) {
      llvm::ArrayRef<int64_t> tiling = tile.getTiling();
      if (tiled)
        return "a Ref can be tiled only once";
      if (swizzled)
        return "a TilingTransform must come before the SwizzleTransform";
      if (tiling.empty() || tiling.size() > shape.size())
        return "TilingTransform" + shapeText(tiling) + " tiles more dimensions than shape " +
               shapeText(shape) + " has";
      size_t lead = shape.size() - tiling.size();
      std::vector<int64_t> tiledShape(shape.begin(), shape.begin() + lead);
      for (size_t i = 0; i < tiling.size(); ++i) {
        if (tiling[i] <= 0 || shape[lead + i] % tiling[i] != 0)
          return "TilingTransform" + shapeText(tiling) + " does not divide shape " +
                 shapeText(shape) + ": each tiled dimension must be a multiple of its tile";
        tiledShape.push_back(shape[lead + i] / tiling[i]);
      }
      tiledShape.insert(tiledShape.end(), tiling.begin(), tiling.end());
      shape = tiledShape;
      tiled = true;
    } else if (auto swizzle = llvm::dyn_cast<SwizzleTransformAttr>(t)) {
      int64_t bytes = swizzle.getSwizzle();
      if (swizzled)
        return "a Ref can be swizzled only once";
      if (bytes != 32 && bytes != 64 && bytes != 128)
        return "SwizzleTransform(" + std::to_string(bytes) +
               ") is not supported: the swizzle must be 32, 64 or 128 bytes";
      int64_t elems = bytes * 8 / bitWidthOf(elementType);
      if (shape.empty() || shape.back() != elems)
        return "SwizzleTransform(" + std::to_string(bytes) + ") needs the minor dimension" +
               (tiled ? " of the tile" : "") + " to be " + std::to_string(bytes) + " bytes (" +
               std::to_string(elems) + " elements), but the " + (tiled ? "tiled shape" : "shape") +
               " is " + shapeText(shape) +
               (tiled ? ""
                      : "; tile it with TilingTransform((8, " + std::to_string(elems) + ")) first");
      swizzled = true;
    } else {
      return "unknown transform";
    }
  }
  return "";
}

int64_t swizzleOf(mlir::ArrayAttr transforms) {
  if (transforms)
    for (mlir::Attribute t : transforms)
      if (auto s = llvm::dyn_cast<SwizzleTransformAttr>(t))
        return s.getSwizzle();
  return 0;
}

std::vector<int64_t> tilingOf(mlir::ArrayAttr transforms) {
  if (transforms)
    for (mlir::Attribute t : transforms)
      if (auto tile = llvm::dyn_cast<TileTransformAttr>(t))
        return std::vector<int64_t>(tile.getTiling().begin(), tile.getTiling().end());
  return {};
}

std::vector<int64_t> transposeOf(mlir::ArrayAttr transforms) {
  if (transforms && !transforms.empty())
    if (auto t = llvm::dyn_cast<TransposeTransformAttr>(transforms[0]))
      return std::vector<int64_t>(t.getPermutation().begin(), t.getPermutation().end());
  return {};
}

mlir::ArrayAttr transposeTransforms(mlir::MLIRContext *context, mlir::ArrayAttr transforms,
                                    llvm::ArrayRef<int64_t> permutation) {
  size_t rank = permutation.size();
  // The view's dim i is the Ref's dim permutation[i]: the Ref's logical dim
  // j is the view's dim inverse[j].
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i)
    inverse[permutation[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> old = logicalOfPhysical(transforms, rank);
  std::vector<int64_t> composed(rank);
  for (size_t i = 0; i < rank; ++i)
    composed[i] = inverse[old[i]];
  std::vector<mlir::Attribute> rest;
  if (transforms)
    for (mlir::Attribute t : transforms)
      if (!llvm::isa<TransposeTransformAttr>(t))
        rest.push_back(t);
  bool identity = true;
  for (size_t i = 0; i < rank; ++i)
    identity &= composed[i] == static_cast<int64_t>(i);
  std::vector<mlir::Attribute> result;
  if (!identity)
    result.push_back(TransposeTransformAttr::get(context, composed));
  result.insert(result.end(), rest.begin(), rest.end());
  return result.empty() ? mlir::ArrayAttr() : mlir::ArrayAttr::get(context, result);
}

std::string checkSmemWindow(llvm::ArrayRef<int64_t> shape, mlir::ArrayAttr transforms,
                            llvm::ArrayRef<int64_t> staticOffsets, llvm::ArrayRef<int64_t> sizes,
                            llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> squeezed) {
  if (!transforms || transforms.empty())
    return "";
  size_t rank = shape.size();
  std::vector<int64_t> logical = logicalOfPhysical(transforms, rank);
  std::vector<int64_t> tiling = tilingOf(transforms);
  bool swizzled = swizzleOf(transforms) != 0;
  auto isSqueezed = [&](int64_t d) { return llvm::is_contained(squeezed, d); };
  auto sliced = [&](int64_t d) { return staticOffsets[d] != 0 || sizes[d] != shape[d]; };
  for (size_t k = 0; k < tiling.size(); ++k) {
    size_t physical = rank - tiling.size() + k;
    int64_t d = logical[physical];
    int64_t tile = tiling[k];
    if (isSqueezed(d))
      return "dimension " + std::to_string(d) + " is tiled (TilingTransform" + shapeText(tiling) +
             "), so it can only be sliced, not indexed with an integer";
    if (strides[d] != 1)
      return "dimension " + std::to_string(d) + " is tiled, so it cannot be sliced with a stride";
    int64_t start = staticOffsets[d];
    bool dynamic = mlir::ShapedType::isDynamic(start);
    if ((!dynamic && start % tile) || sizes[d] % tile)
      return "dimension " + std::to_string(d) + " is tiled by " + std::to_string(tile) +
             ", so a slice of it must start and end on a tile boundary (got start " +
             (dynamic ? std::string("dynamic") : std::to_string(start)) + ", size " +
             std::to_string(sizes[d]) + ")";
  }
  if (swizzled && tiling.empty()) {
    int64_t minor = logical[rank - 1];
    if (isSqueezed(minor) || sliced(minor) || strides[minor] != 1)
      return "the minor dimension is swizzled, so it cannot be sliced or indexed";
    if (rank >= 2 && isSqueezed(logical[rank - 2]))
      return "the two minor dimensions of a swizzled Ref can only be sliced, not indexed";
  }
  return "";
}

mlir::ArrayAttr windowTransforms(mlir::MLIRContext *context, mlir::ArrayAttr transforms,
                                 llvm::ArrayRef<int64_t> squeezed, size_t rank) {
  if (!transforms || transforms.empty() || squeezed.empty())
    return transforms && !transforms.empty() ? transforms : mlir::ArrayAttr();
  std::vector<int64_t> q = transposeOf(transforms);
  if (q.empty())
    return transforms;
  // Keep the permutation of the dims that remain, renumbered.
  std::vector<int64_t> renumber(rank, -1);
  int64_t next = 0;
  for (size_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(squeezed, static_cast<int64_t>(d)))
      renumber[d] = next++;
  std::vector<int64_t> kept;
  for (int64_t d : q)
    if (renumber[d] >= 0)
      kept.push_back(renumber[d]);
  std::vector<mlir::Attribute> result;
  bool identity = true;
  for (size_t i = 0; i < kept.size(); ++i)
    identity &= kept[i] == static_cast<int64_t>(i);
  if (!identity)
    result.push_back(TransposeTransformAttr::get(context, kept));
  for (mlir::Attribute t : transforms)
    if (!llvm::isa<TransposeTransformAttr>(t))
      result.push_back(t);
  return result.empty() ? mlir::ArrayAttr() : mlir::ArrayAttr::get(context, result);
}

} // namespace pk
