//===- ParallelAxes.h - Axes a traced body computes independently -*- C++ -*-===//
//
// Array code at export level on an array with a symbolic dimension runs
// once per index of that dimension: it is traced with the dimension at size
// 1, and is correct only if every element it computes along that axis
// depends on the same index of its inputs, as element-wise math does and a
// reduction over the axis does not. This analysis checks that: it tags the
// symbolic axes of the loaded inputs and follows the tags through the
// body's ops (an indexing map restricted to those axes), failing at the
// first op that reads across a tagged axis, mixes two tags, or combines a
// tagged axis with an untagged one of another size (which, traced at the
// block's size, would hide a broadcast the whole arrays do not allow).
// Large static axes are tiled the same way (ArrayCodeTracer.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_PARALLELAXES_H
#define PK_FRONTEND_ELAB_PARALLELAXES_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <vector>

namespace pk::elab {

class ParallelAxes {
public:
  static constexpr int kNone = -1;
  /// An axis along which the value is constant (a splat, or the new and
  /// size-1 axes of a broadcast): it combines with any tag.
  static constexpr int kBroadcast = -2;
  using Tags = std::vector<int>; ///< per axis: a tag (>= 0), kNone or kBroadcast

  /// Declares `value`'s axes' tags (a loaded input).
  void set(mlir::Value value, Tags axisTags) { tags[value] = std::move(axisTags); }
  /// The tags of `value`: kNone everywhere unless something tagged it.
  Tags of(mlir::Value value) const;

  /// Why an op cannot run once per index of a tagged axis.
  struct Conflict {
    mlir::Operation *op;
    int tag;
    int otherTag; ///< a second tag the op mixes with `tag`, or kNone
  };
  /// Follows the tags through `block`'s ops, in order.
  std::optional<Conflict> propagate(mlir::Block &block);

  /// Reshapes known to insert or drop unit axes, with where each operand
  /// axis goes (-1: dropped); ArrayOps::unitAxisReshapes.
  using UnitAxisReshapes = llvm::DenseMap<mlir::Operation *, std::vector<int64_t>>;
  void setUnitAxisReshapes(const UnitAxisReshapes *known) { unitAxisReshapes = known; }

private:
  std::optional<Conflict> visit(mlir::Operation &op);
  /// Where `op` (a recorded reshape of a rank-`rank` operand) puts each
  /// operand axis; null for any other op.
  const std::vector<int64_t> *placedAxes(mlir::Operation &op, size_t rank) const;
  llvm::DenseMap<mlir::Value, Tags> tags;
  const UnitAxisReshapes *unitAxisReshapes = nullptr;
};

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_PARALLELAXES_H
