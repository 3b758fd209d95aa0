//===- ArrayCodeTracer.cpp - One operation of export array code -----===//
//
// Traces one operation of array code at export level (ExportArrays.cpp
// says which calls are) on block values standing for the whole arrays, and
// emits it as a generated pallas_call (`pk.generated`):
//
// - blocks are whole along static dimensions; along a symbolic dimension
//   one program per index (block 1), along a jax.vmap axis one per batch
//   element (squeezed), as in a vmapped kernel;
// - when an operand or the result is past 16384 elements, the code is
//   tiled along the axes it computes element-wise (tileParallelAxes; on
//   TPU along the leading axis only, tileLeadingAxis), or else a
//   reduction across tiles of rows accumulates into one output block in
//   grid order (the reduction emitter);
// - ParallelAxes checks that the traced code computes element-wise along
//   every such axis; a static tiling that does not hold is traced again
//   with whole blocks, a symbolic dimension is an error naming it.
//
// The code has exactly its in-kernel semantics, which are JAX's, and every
// backend and the interpreter run it as any pallas_call.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/ParallelAxes.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"
#include "ir/PkDialect.h"
#include "ir/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace pk::elab {

namespace {

/// "jnp.exp" -> "exp", "x.reshape" -> "reshape", "operator +" ->
/// "elementwise": the kernel's name.
std::string kernelNameFor(const std::string &what) {
  if (llvm::StringRef(what).starts_with("operator "))
    return "elementwise";
  std::string tail = what.substr(what.find_last_of('.') == std::string::npos
                                     ? 0
                                     : what.find_last_of('.') + 1);
  std::string name;
  for (char c : tail)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  bool named = std::any_of(name.begin(), name.end(),
                           [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  return named ? name : "array_code";
}

} // namespace

/// One operation of array code at export level, traced and emitted as a
/// generated pallas_call.
class ArrayCodeTracer {
public:
  using Compute = std::function<Obj(std::vector<Obj> &)>;

  /// An axis the generated kernel walks one block at a time, a grid axis
  /// of its own: a symbolic dimension (block 1), or the leading dimension
  /// of arrays too large for one block.
  struct TiledAxis {
    Dim size;
    int64_t block;
    std::string owner; ///< the array it comes from, for messages
    bool symbolic() const { return !size.isStatic(); }
  };

  ArrayCodeTracer(Elaborator &el, const std::string &what, SourceRange r, bool sizesAtTopLevel)
      : el(el), what(what), r(r), sizesAtTopLevel(sizesAtTopLevel),
        levels(el.activeVmaps()) {}

  Obj run(const std::vector<Obj> &inputs, const Compute &compute) {
    collectArrays(inputs);
    // Large arrays are tiled along the axes the code computes element-wise
    // (on TPU, along the leading axis only, where any block is a TPU
    // block); else, and for the rest, blocks are whole.
    if (!el.tpuTiles() && tileParallelAxes(inputs, compute))
      return emit();
    if (largestArray() && !wholeShapes && traceBlocks(inputs, compute, /*mayFail=*/true)) {
      recordWholeShapes();
      discard();
    }
    // Code that makes no arrays (pl.estimate_cost's trace) is not tiled:
    // only whole blocks say what it computes.
    bool makesArrays = !wholeShapes || !wholeShapes->empty();
    for (int64_t minBlock = 0; makesArrays && tileLeadingAxis(minBlock);) {
      // Code on a block sees the block's shape: `x[:200]` of a block of 8
      // rows is the whole block. A tiling holds only where the results
      // are those of whole blocks.
      bool holds = trace(inputs, compute, /*mayFail=*/true) &&
                   (!wholeShapes || givesWholeShapes(*wholeShapes));
      // On TPU a 1-D result's block along the tile must be a TPU vector
      // block of its type (bf16[128] is not): a larger tile, or none.
      int64_t needed = holds ? tpuVectorBlockOfResults() : 0;
      if (holds && needed <= tiled.back().block)
        return emit();
      accumulated = nullptr;
      discard();
      untileStatic();
      if (!holds)
        break;
      minBlock = needed;
    }
    trace(inputs, compute, /*mayFail=*/false);
    return emit();
  }

private:
  /// Past this many elements a whole-array block is tiled if it can be
  /// (a CTA holds a block in registers on CUDA).
  static constexpr int64_t kWholeBlockElements = Elaborator::kArrayCodeBlockElements;

  void collectArrays(const std::vector<Obj> &inputs) {
    std::map<void *, size_t> indexOfValue;
    for (const Obj &input : inputs)
      forEachLeaf(input, [&](const Obj &leaf) {
        // Outside kernels a block value can only have escaped one (through
        // a Python variable a kernel or loop body assigned): its IR lives
        // in that kernel.
        if (auto *a = llvm::dyn_cast<ArrayObj>(leaf.get())) {
          // Still in scope: a traced value of an export-level loop (its
          // index, x[i]), which array code cannot take yet.
          mlir::Region *here = el.builder().getInsertionBlock()->getParent();
          if (a->value && a->value.getParentRegion()->isAncestor(here))
            el.fail(r, what + " of whole arrays with a value traced in this export-level loop "
                              "(such as its index: x[i] in a lax.fori_loop body) is not "
                              "supported; do it in a kernel, e.g. a pallas_call whose index "
                              "map or scalar-prefetch operand takes the index");
          el.fail(r, what + " uses a value computed inside a kernel (or a loop body), which "
                            "escaped it through a Python variable; outside a kernel only whole "
                            "arrays exist: return it through an output Ref, or from the loop");
        }
        auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
        if (!g || indexOf.count(g))
          return;
        auto [it, inserted] = indexOfValue.try_emplace(g->value.getAsOpaquePointer(), arrays.size());
        if (inserted)
          arrays.push_back(g);
        indexOf[g] = it->second;
      });
    for (const GlobalArrayObj *g : arrays) {
      batched |= !g->batch.empty();
      // The generated kernel would read blocks of no elements.
      for (size_t d = 0; d < g->shape.size(); ++d)
        if (g->shape[d].isStatic() && g->shape[d].value == 0)
          el.fail(r, what + " on '" + g->name + "', whose axis " + std::to_string(d) +
                         " has size 0 (zero-size arrays are not supported)");
    }
    // Symbolic dimensions: one program per index, traced at size 1.
    for (const GlobalArrayObj *g : arrays) {
      ParallelAxes::Tags t(g->shape.size(), ParallelAxes::kNone);
      for (size_t d = 0; d < g->shape.size(); ++d)
        if (!g->shape[d].isStatic())
          t[d] = tagFor(g->shape[d], 1, *g);
      arrayTags.push_back(std::move(t));
    }
    firstStaticTile = tiled.size();
  }

  std::string ownerName(const GlobalArrayObj &g) const {
    return "'" + g.name + "' (" + shortName(g.dtype) + "[" + el.describeDims(g.shape) + "])";
  }

  int tagFor(const Dim &size, int64_t block, const GlobalArrayObj &g) {
    for (size_t i = 0; i < tiled.size(); ++i)
      if (tiled[i].size == size && tiled[i].block == block)
        return static_cast<int>(i);
    tiled.push_back({size, block, ownerName(g)});
    return static_cast<int>(tiled.size() - 1);
  }

  /// Elements of a block of `shape` (symbolic axes at their block of 1).
  static int64_t elements(llvm::ArrayRef<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }

  /// The array with the most elements, if one is past a whole block.
  const GlobalArrayObj *largestArray() const {
    const GlobalArrayObj *largest = nullptr;
    int64_t most = 0;
    for (size_t i = 0; i < arrays.size(); ++i)
      if (int64_t n = elements(blockShape(arrays[i]->shape, arrayTags[i])); n > most) {
        most = n;
        largest = arrays[i];
      }
    return most > kWholeBlockElements ? largest : nullptr;
  }

  /// Drops the static tiles, keeping the symbolic axes' tags.
  void untileStatic() {
    tiled.resize(firstStaticTile);
    for (ParallelAxes::Tags &t : arrayTags)
      for (int &tag : t)
        if (tag >= static_cast<int>(firstStaticTile))
          tag = ParallelAxes::kNone;
    tiledSizes.clear();
    constantResultAxes.clear();
  }

  /// Tiles the largest input or result along the axes the code computes
  /// element-wise, leading axes first, until its block fits: every static
  /// axis of an input is a candidate (shared by inputs of one rank with its
  /// size at its position), the code is traced once on whole blocks, and
  /// ParallelAxes drops the candidates it reads across until none is left;
  /// a result's axis along which it is constant (jnp.zeros, broadcast_to)
  /// is one too. The blocks chosen are then traced for real. Where nothing
  /// needs tiling, the first trace is the one emitted.
  bool tileParallelAxes(const std::vector<Obj> &inputs, const Compute &compute) {
    std::map<std::tuple<size_t, size_t, int64_t>, int> candidateOf;
    for (size_t i = 0; i < arrays.size(); ++i)
      for (size_t d = 0; d < arrays[i]->shape.size(); ++d) {
        const Dim &dim = arrays[i]->shape[d];
        if (!dim.isStatic() || dim.value <= 1)
          continue;
        auto [it, inserted] = candidateOf.try_emplace(
            std::tuple{arrays[i]->shape.size(), d, dim.value}, static_cast<int>(tiled.size()));
        if (inserted)
          tiled.push_back({dim, dim.value, ownerName(*arrays[i])});
        arrayTags[i][d] = it->second;
      }
    if (!traceBlocks(inputs, compute, /*mayFail=*/true)) {
      untileStatic();
      return false;
    }
    auto giveUp = [&] {
      discard();
      untileStatic();
      return false;
    };
    std::set<int> dropped;
    std::map<int, int64_t> extentOf; // per tile: the results' extent along it
    ParallelAxes axes;
    for (bool changed = true; changed;) {
      changed = false;
      axes = tagLoadedBlocks(dropped);
      if (std::optional<ParallelAxes::Conflict> c = axes.propagate(*kernel)) {
        if (c->tag < static_cast<int>(firstStaticTile)) // a symbolic axis: the trace fails
          return giveUp();
        changed = dropped.insert(c->tag).second;
        continue;
      }
      // Each result must have each tile once, and all of them as many of
      // its indices: a prefix (x[:n]) shortens a tile's axis.
      extentOf.clear();
      for (const Obj &result : results) {
        const auto &a = llvm::cast<ArrayObj>(*result);
        ParallelAxes::Tags t = a.rank() > 0 ? axes.of(a.value) : ParallelAxes::Tags();
        for (size_t tag = firstStaticTile; tag < tiled.size(); ++tag)
          if (!dropped.count(static_cast<int>(tag)) && llvm::count(t, static_cast<int>(tag)) != 1)
            changed |= dropped.insert(static_cast<int>(tag)).second;
        for (size_t d = 0; d < t.size(); ++d) {
          if (t[d] < static_cast<int>(firstStaticTile) || dropped.count(t[d]))
            continue;
          auto [it, inserted] = extentOf.try_emplace(t[d], a.shape[d]);
          if (!inserted && it->second != a.shape[d])
            changed |= dropped.insert(t[d]).second;
        }
      }
    }
    // The tiles stop where the results do: programs past a prefix would
    // compute nothing a result keeps.
    for (auto [tag, extent] : extentOf)
      if (!dropped.count(tag))
        tiled[tag].size = Dim{extent, {}};

    // What the results are, whole: the blocks chosen must give them back.
    recordWholeShapes();

    // The block that most needs tiling: an input's or a result's.
    std::vector<int64_t> block;
    ParallelAxes::Tags tags;
    bool ofResult = false;
    for (size_t i = 0; i < arrays.size(); ++i)
      if (std::vector<int64_t> shape = blockShape(arrays[i]->shape, arrayTags[i]);
          elements(shape) > elements(block)) {
        block = std::move(shape);
        tags = arrayTags[i];
        ofResult = false;
      }
    for (const Obj &result : results)
      if (const auto &a = llvm::cast<ArrayObj>(*result); elements(a.shape) > elements(block)) {
        block = a.shape;
        tags = axes.of(a.value);
        ofResult = true;
      }
    // Nothing to tile, or nothing computed (a method looked up: x.reshape).
    if (results.empty() || elements(block) <= kWholeBlockElements) {
      untileStatic();
      if (checkTiles(/*mayFail=*/true))
        return true;
      discard();
      return false;
    }
    discard();

    // Rows of 8 where that fits, else 1, and the last axis in lane-sized
    // chunks.
    std::vector<int> chosen;
    std::map<int, size_t> constantAxisOf; // new tiles of the one result's constant axes
    for (size_t d = 0; d < block.size() && elements(block) > kWholeBlockElements; ++d) {
      int tag = tags[d];
      bool constant = tag == ParallelAxes::kBroadcast && ofResult && results.size() == 1;
      if (!constant && (tag < static_cast<int>(firstStaticTile) || dropped.count(tag)))
        continue;
      int64_t rest = elements(llvm::ArrayRef(block).drop_front(d + 1));
      int64_t b = d + 1 == block.size()                             ? 4096
                  : block[d] > 8 && 8 * rest <= kWholeBlockElements ? 8
                                                                    : 1;
      // A tile shortened by a prefix is no longer than it: x[:1] of a
      // block of 8 rows is one row, not the block.
      if (!constant)
        b = std::min(b, tiled[tag].size.value);
      if (b >= block[d])
        continue;
      if (constant) {
        tag = static_cast<int>(tiled.size());
        tiled.push_back({Dim{block[d], {}}, b, "the result of " + what});
        constantAxisOf[tag] = d;
      }
      tiled[tag].block = b;
      block[d] = b;
      chosen.push_back(tag);
    }
    if (elements(block) > kWholeBlockElements) {
      untileStatic();
      return false;
    }

    // Keep the chosen tiles only, numbered after the symbolic ones; shape
    // arguments that spell the one result's shape take its blocks.
    std::map<int, int> renumbered;
    std::vector<TiledAxis> kept(tiled.begin(), tiled.begin() + firstStaticTile);
    for (int tag = static_cast<int>(firstStaticTile); tag < static_cast<int>(tiled.size()); ++tag)
      if (llvm::is_contained(chosen, tag)) {
        renumbered[tag] = static_cast<int>(kept.size());
        kept.push_back(tiled[tag]);
      }
    for (ParallelAxes::Tags &t : arrayTags)
      for (int &tag : t)
        if (tag >= static_cast<int>(firstStaticTile))
          tag = renumbered.count(tag) ? renumbered[tag] : ParallelAxes::kNone;
    for (auto [tag, d] : constantAxisOf)
      constantResultAxes[renumbered[tag]] = d;
    if (results.size() == 1) {
      const auto &a = llvm::cast<ArrayObj>(*results[0]);
      tracedShape = a.shape;
      ParallelAxes::Tags t = axes.of(a.value);
      for (auto [tag, d] : constantAxisOf)
        t[d] = tag;
      tiledSizes.assign(tracedShape.size(), 0);
      for (size_t d = 0; d < t.size(); ++d)
        if (renumbered.count(t[d]))
          tiledSizes[d] = tiled[t[d]].block;
    }
    tiled = std::move(kept);
    if (!trace(inputs, compute, /*mayFail=*/true) || accumulated ||
        !givesWholeShapes(*wholeShapes)) {
      accumulated = nullptr;
      return giveUp();
    }
    return true;
  }

  /// Keeps the shapes of the results just traced on whole blocks.
  void recordWholeShapes() {
    wholeShapes.emplace();
    for (const Obj &result : results)
      wholeShapes->push_back(llvm::cast<ArrayObj>(*result).shape);
  }

  /// Whether the results, their tiled axes at the tiles' sizes, have the
  /// shapes traced whole: a check that each tile lands on its own axis (a
  /// reshape's size-1 axes on blocks of 1 say less than the whole shapes).
  bool givesWholeShapes(const std::vector<std::vector<int64_t>> &wholeShapes) const {
    if (results.size() != wholeShapes.size())
      return false;
    for (size_t i = 0; i < results.size(); ++i) {
      const auto &a = llvm::cast<ArrayObj>(*results[i]);
      if (a.shape.size() != wholeShapes[i].size())
        return false;
      for (size_t d = 0; d < a.shape.size(); ++d) {
        int tag = resultTags[i][d];
        if (tag >= 0 && tiled[tag].symbolic())
          continue;
        if ((tag >= 0 ? tiled[tag].size.value : a.shape[d]) != wholeShapes[i][d])
          return false;
      }
    }
    return true;
  }

  /// The smallest tile a TPU takes for the 1-D results along the tiled
  /// axis (128 lanes of 32 bits: 256 bf16, 512 int8), or 0.
  int64_t tpuVectorBlockOfResults() const {
    int64_t needed = 0;
    if (!el.tpuTiles())
      return needed;
    for (size_t i = 0; i < results.size(); ++i) {
      const auto &a = llvm::cast<ArrayObj>(*results[i]);
      if (a.rank() != 1 || i >= resultTags.size() || resultTags[i][0] < 0 ||
          resultTags[i][0] < static_cast<int>(firstStaticTile))
        continue;
      unsigned bits = a.dtype == DType::Bool ? 32 : bitWidth(a.dtype);
      needed = std::max<int64_t>(needed, 128 * std::max(1u, 32 / bits));
    }
    return needed;
  }

  /// Tags the leading axis of the largest array (and of those of its rank
  /// and leading size) when its whole block would be too large, in blocks
  /// of at least `minBlock`.
  bool tileLeadingAxis(int64_t minBlock = 0) {
    const GlobalArrayObj *largest = largestArray();
    if (!largest || !largest->shape[0].isStatic())
      return false;
    size_t rank = largest->shape.size();
    int64_t size = largest->shape[0].value;
    // Rows of 8 (a TPU tile's sublanes; for a TPU target 128, which stay
    // a TPU block when a transpose makes the axis the last); a vector in
    // lane-sized chunks.
    int64_t block = std::max<int64_t>(minBlock, rank == 1 ? 4096 : el.tpuTiles() ? 128 : 8);
    if (size <= block)
      return false;
    for (size_t i = 0; i < arrays.size(); ++i)
      if (arrays[i]->shape.size() == rank && arrays[i]->shape[0] == largest->shape[0])
        arrayTags[i][0] = tagFor(Dim{size, {}}, block, *arrays[i]);
    return true;
  }

  std::vector<int64_t> blockShape(const std::vector<Dim> &dims, const ParallelAxes::Tags &tags) const {
    std::vector<int64_t> shape;
    for (size_t d = 0; d < dims.size(); ++d)
      shape.push_back(tags[d] >= 0 ? tiled[tags[d]].block : dims[d].value);
    return shape;
  }

  /// Sizes in shape arguments equal to a symbolic dimension (`x.reshape(B,
  /// 8, 64)`) read as the block's 1 in the trace.
  std::vector<Obj> standInSizes(std::vector<Obj> inputs) const {
    auto standIn = [&](const Obj &leaf) -> Obj {
      auto *sym = llvm::dyn_cast<SymIntObj>(leaf.get());
      if (!sym)
        return nullptr;
      for (const TiledAxis &axis : tiled)
        if (axis.symbolic() && axis.size.expr == sym->expr)
          return std::make_shared<IntObj>(1);
      return nullptr;
    };
    for (Obj &input : inputs) {
      if (llvm::isa<SequenceObj>(input.get()))
        input = mapLeaves(input, standIn);
      else if (Obj one = standIn(input); one && sizesAtTopLevel)
        input = one;
    }
    standInTiledSizes(inputs);
    return inputs;
  }

  /// Sizes that spell the traced result's shape (`x.reshape(B, T, H, V)`,
  /// `jnp.broadcast_to(x, shape)`) read as its block along static tiles.
  void standInTiledSizes(std::vector<Obj> &inputs) const {
    if (tiledSizes.empty())
      return;
    auto spellsShape = [&](const std::vector<Obj *> &sizes) {
      if (sizes.size() != tracedShape.size())
        return false;
      for (size_t d = 0; d < sizes.size(); ++d) {
        auto *n = llvm::dyn_cast<IntObj>(sizes[d]->get());
        if (!n || (n->value != tracedShape[d] && n->value != -1))
          return false;
      }
      return true;
    };
    auto standIn = [&](const std::vector<Obj *> &sizes) {
      for (size_t d = 0; d < sizes.size(); ++d)
        if (tiledSizes[d] && llvm::cast<IntObj>(**sizes[d]).value == tracedShape[d])
          *sizes[d] = std::make_shared<IntObj>(tiledSizes[d]);
    };
    std::vector<Obj *> topLevel;
    for (Obj &input : inputs) {
      if (sizesAtTopLevel && llvm::isa<IntObj>(input.get()))
        topLevel.push_back(&input);
      auto *seq = llvm::dyn_cast<SequenceObj>(input.get());
      if (!seq)
        continue;
      auto copy = std::make_shared<SequenceObj>(*seq);
      std::vector<Obj *> items;
      for (Obj &item : copy->items)
        items.push_back(&item);
      if (spellsShape(items)) {
        standIn(items);
        input = copy;
      }
    }
    if (spellsShape(topLevel))
      standIn(topLevel);
  }

  /// Clears the elaborator's grid while the code is traced (restored when
  /// destroyed).
  struct GridScope {
    explicit GridScope(Elaborator &el) : el(el), grid(el.grid), hidden(el.hiddenGrid) {
      el.grid.clear();
      el.hiddenGrid = 0;
    }
    ~GridScope() {
      el.grid = grid;
      el.hiddenGrid = hidden;
    }
    Elaborator &el;
    std::vector<Dim> grid;
    size_t hidden;
  };

  void discard() {
    if (!kernel)
      return;
    kernel->dropAllDefinedValueUses();
    kernel->dropAllReferences();
    kernel.reset();
  }

  /// Traces the code on the arrays' blocks into `kernel`; false (with
  /// `mayFail`) when that fails.
  bool traceBlocks(const std::vector<Obj> &inputs, const Compute &compute, bool mayFail) {
    results.clear();
    resultTags.clear();
    loadedBlocks.clear();
    // Only this trace's reshapes: an op erased since may share an address
    // with one made now.
    el.arrays().unitAxisReshapes.clear();
    kernel = std::make_unique<mlir::Block>();
    std::vector<mlir::Type> refTypes;
    for (size_t i = 0; i < arrays.size(); ++i) {
      refTypes.push_back(pk::RefType::get(blockShape(arrays[i]->shape, arrayTags[i]),
                                          storageType(&el.context(), arrays[i]->dtype), nullptr));
      kernel->addArgument(refTypes.back(), el.loc(r));
    }
    try {
      // The generated kernel has no grid the code could read.
      GridScope noGrid(el);
      Elaborator::ModeGuard mode(el, EmitMode::Kernel);
      el.b.setInsertionPointToEnd(kernel.get());
      std::vector<Obj> blocks;
      for (size_t i = 0; i < arrays.size(); ++i) {
        RefObj ref(kernel->getArgument(i), llvm::cast<pk::RefType>(refTypes[i]).getShape().vec(),
                   arrays[i]->dtype);
        blocks.push_back(loadRef(el, ref, std::make_shared<EllipsisObj>(), nullptr, nullptr, r));
        if (auto *a = llvm::dyn_cast<ArrayObj>(blocks.back().get()); a && a->rank() > 0)
          loadedBlocks.emplace_back(a->value, i);
      }
      std::vector<Obj> substituted;
      for (const Obj &input : standInSizes(inputs))
        substituted.push_back(mapLeaves(input, [&](const Obj &leaf) -> Obj {
          auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get());
          return g ? blocks[indexOf.at(g)] : nullptr;
        }));
      traced = compute(substituted);
      forEachLeaf(traced, [&](const Obj &leaf) {
        if (llvm::isa<ArrayObj>(leaf.get()))
          results.push_back(leaf);
        else if (llvm::isa<RefObj, RefAtObj>(leaf.get()))
          el.fail(r, what + " at export level gave a Ref; Refs exist only inside kernels");
      });
    } catch (ElabError &) {
      discard();
      if (mayFail)
        return false;
      throw;
    } catch (...) {
      discard();
      throw;
    }
    return true;
  }

  /// The loaded blocks' axes tagged as their arrays', but for `dropped`.
  ParallelAxes tagLoadedBlocks(const std::set<int> &dropped = {}) const {
    ParallelAxes axes;
    axes.setUnitAxisReshapes(&el.arrays().unitAxisReshapes);
    for (auto [value, i] : loadedBlocks) {
      ParallelAxes::Tags t = arrayTags[i];
      for (int &tag : t)
        if (dropped.count(tag))
          tag = ParallelAxes::kNone;
      axes.set(value, std::move(t));
    }
    return axes;
  }

  /// Traces the code on blocks; false (with `mayFail`) when a static tiling
  /// does not hold, to trace again with whole blocks.
  bool trace(const std::vector<Obj> &inputs, const Compute &compute, bool mayFail) {
    return traceBlocks(inputs, compute, mayFail) && checkTiles(mayFail);
  }

  /// Whether the traced kernel holds with the tiles; false (with
  /// `mayFail`) when a static tiling does not.
  bool checkTiles(bool mayFail) {
    // Along tiled axes the code must compute element-wise, and every
    // result must follow each of them.
    ParallelAxes axes = tagLoadedBlocks();
    std::optional<ParallelAxes::Conflict> conflict;
    if (!tiled.empty())
      conflict = axes.propagate(*kernel);
    accumulated = nullptr;
    if (conflict && mayFail && reducesAcrossTiles(*conflict, axes)) {
      // The reduction emitter: each tile reduces its rows, and the tiles
      // accumulate into the one output block in grid order.
      accumulated = llvm::cast<pk::ReduceOp>(conflict->op);
      accumulatedTag = conflict->tag;
      maskPaddedRows();
      resultTags.push_back(ParallelAxes::Tags(llvm::cast<ArrayObj>(*results[0]).shape.size(),
                                              ParallelAxes::kNone));
      return true;
    }
    int missing = ParallelAxes::kNone;
    const char *how = "reads across";
    for (const Obj &result : results) {
      const auto &a = llvm::cast<ArrayObj>(*result);
      ParallelAxes::Tags t = a.rank() > 0 ? axes.of(a.value) : ParallelAxes::Tags();
      // Constant along the axis in the trace that chose it, and so here,
      // where a broadcast to the block's 1 may have been no broadcast.
      for (auto [tag, d] : constantResultAxes)
        if (results.size() == 1 && d < t.size() &&
            (t[d] == ParallelAxes::kBroadcast || (t[d] == ParallelAxes::kNone && a.shape[d] == 1)))
          t[d] = tag;
      for (size_t tag = 0; tag < tiled.size() && missing < 0; ++tag)
        if (auto n = llvm::count(t, static_cast<int>(tag)); n != 1) {
          missing = static_cast<int>(tag);
          how = n ? "repeats" : "gives a result without";
        }
      resultTags.push_back(std::move(t));
    }
    if (conflict && conflict->otherTag >= 0 && !mayFail) {
      discard();
      el.fail(r, what + " outside a kernel combines arrays along the different symbolic sizes " +
                     name(conflict->tag) + " and " + name(conflict->otherTag) +
                     "; give them one size, or compute it in a kernel");
    }
    int bad = conflict ? conflict->tag : missing;
    if (bad >= 0) {
      discard();
      if (mayFail)
        return false;
      el.fail(r, what + " on the whole array " + tiled[bad].owner + " outside a kernel " +
                     (conflict ? "reads across" : how) + " its symbolic dimension " + name(bad) +
                     "; array code at export level runs once per index of a symbolic dimension, "
                     "so along it only element-wise work, reshapes and transposes that keep it, "
                     "and reductions over other axes are supported (compute it in a kernel, or "
                     "fix the size with -D)");
    }
    return true;
  }

  std::string name(int tag) const { return el.describeDims({tiled[tag].size}); }

  /// Whether `c` is a reduction over a static tile whose result is the
  /// code's one result: tiles can accumulate it (kinds with an identity).
  bool reducesAcrossTiles(const ParallelAxes::Conflict &c, const ParallelAxes &axes) {
    auto reduce = llvm::dyn_cast<pk::ReduceOp>(c.op);
    if (!reduce || c.otherTag >= 0 || tiled[c.tag].symbolic() || results.size() != 1 ||
        llvm::cast<ArrayObj>(*results[0]).value != reduce.getResult() ||
        !reduce.getResult().use_empty() || reduce.getKind() == pk::ReductionKind::Xor)
      return false;
    // Only this tile's axis may be tagged in what is reduced.
    reducedOperandTags = axes.of(reduce.getOperand());
    return llvm::count(reducedOperandTags, c.tag) == 1 &&
           llvm::all_of(reducedOperandTags, [&](int t) { return t < 0 || t == c.tag; });
  }

  /// The reduction's identity, splat over `type`.
  mlir::Value identity(mlir::OpBuilder &b, mlir::Location loc, pk::ReductionKind kind,
                       mlir::ShapedType type) const {
    return mlir::arith::ConstantOp::create(
        b, loc,
        mlir::DenseElementsAttr::get(type, pk::reductionIdentity(kind, type.getElementType())));
  }

  /// Rows past the array's end in the last tile (padding) take the
  /// reduction's identity.
  void maskPaddedRows() {
    const TiledAxis &axis = tiled[accumulatedTag];
    if (axis.size.value % axis.block == 0)
      return;
    mlir::OpBuilder b(accumulated);
    mlir::Location loc = accumulated.getLoc();
    mlir::Value in = accumulated.getOperand();
    auto type = llvm::cast<mlir::RankedTensorType>(in.getType());
    const ParallelAxes::Tags &tags = reducedOperandTags;
    int64_t rowAxis = std::find(tags.begin(), tags.end(), accumulatedTag) - tags.begin();
    auto i32 = b.getI32Type();
    auto indexType = mlir::RankedTensorType::get(type.getShape(), i32);
    mlir::Value pid = pk::ProgramIdOp::create(b, loc, i32, b.getI64IntegerAttr(tileGridAxis()));
    mlir::Value first = mlir::arith::MulIOp::create(
        b, loc, pid, mlir::arith::ConstantIntOp::create(b, loc, i32, axis.block));
    mlir::Value iota = pk::IotaOp::create(b, loc, indexType, b.getI64IntegerAttr(rowAxis));
    mlir::Value firsts =
        pk::BroadcastInDimOp::create(b, loc, indexType, first, b.getDenseI64ArrayAttr({}));
    mlir::Value rows = mlir::arith::AddIOp::create(b, loc, iota, firsts);
    mlir::Value end = mlir::arith::ConstantOp::create(
        b, loc, mlir::DenseElementsAttr::get(indexType, b.getI32IntegerAttr(axis.size.value)));
    mlir::Value inside =
        mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::slt, rows, end);
    mlir::Value masked = mlir::arith::SelectOp::create(
        b, loc, inside, in, identity(b, loc, accumulated.getKind(), type));
    accumulated.getOperandMutable().assign(masked);
  }

  unsigned tileGridAxis() const {
    return static_cast<unsigned>((batched ? levels.size() : 0) + accumulatedTag);
  }

  /// out = partial at the first tile, out (+) partial after it.
  void storeAccumulated(mlir::Value out, const ArrayObj &partial) {
    mlir::OpBuilder &b = el.b;
    mlir::Location loc = el.loc(r);
    RefObj ref(out, partial.shape, partial.dtype);
    auto i32 = b.getI32Type();
    mlir::Value pid = pk::ProgramIdOp::create(b, loc, i32, b.getI64IntegerAttr(tileGridAxis()));
    mlir::Value first = mlir::arith::CmpIOp::create(
        b, loc, mlir::arith::CmpIPredicate::eq, pid, mlir::arith::ConstantIntOp::create(b, loc, i32, 0));
    auto ifOp = mlir::scf::IfOp::create(b, loc, first, /*withElseRegion=*/true);
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    storeRef(el, ref, std::make_shared<EllipsisObj>(), results[0], nullptr, r);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    Obj old = loadRef(el, ref, std::make_shared<EllipsisObj>(), nullptr, nullptr, r);
    mlir::Value a = llvm::cast<ArrayObj>(*old).value, p = partial.value;
    mlir::Value combined = pk::combineReduction(b, loc, accumulated.getKind(), a, p);
    auto sum = std::make_shared<ArrayObj>(combined, partial.shape, partial.dtype, partial.weak);
    storeRef(el, ref, std::make_shared<EllipsisObj>(), sum, nullptr, r);
  }

  /// The generated pallas_call for the traced code; its results as whole
  /// arrays in the structure the code returned.
  Obj emit() {
    if (results.empty()) {
      // Static results only (a shape, a dtype): nothing to compute.
      discard();
      return traced;
    }
    mlir::MLIRContext *ctx = &el.context();
    mlir::OpBuilder &b = el.b;
    // The grid: jax.vmap's levels (their axes squeezed), then the tiled axes.
    std::vector<Dim> gridDims;
    if (batched)
      for (const Elaborator::VmapLevel &level : levels)
        gridDims.push_back(level.size);
    size_t firstTiledGridAxis = gridDims.size();
    for (const TiledAxis &axis : tiled)
      gridDims.push_back(axis.symbolic() ? axis.size
                                         : Dim{(axis.size.value + axis.block - 1) / axis.block, {}});

    std::vector<mlir::Value> operands;
    for (const GlobalArrayObj *g : arrays)
      operands.push_back(g->value);
    std::vector<mlir::Type> resultTypes;
    std::vector<mlir::Attribute> outShapeAttrs;
    std::vector<std::vector<Dim>> outDims;
    std::vector<std::vector<BatchAxis>> outBatch;
    for (size_t i = 0; i < results.size(); ++i) {
      const auto &a = llvm::cast<ArrayObj>(*results[i]);
      std::vector<Dim> dims;
      for (size_t d = 0; d < a.shape.size(); ++d)
        dims.push_back(resultTags[i][d] >= 0 ? tiled[resultTags[i][d]].size : Dim{a.shape[d], {}});
      std::vector<BatchAxis> batch;
      if (batched)
        batch = el.outputBatchAxes(dims.size(), "the result of " + what);
      GlobalArrayObj shaped(nullptr, dims, a.dtype, "");
      shaped.batch = batch;
      std::vector<Dim> physical = shaped.physicalShape();
      resultTypes.push_back(el.globalType(physical, a.dtype));
      outShapeAttrs.push_back(mlir::AffineMapAttr::get(el.symbolicShape(physical)));
      outDims.push_back(std::move(dims));
      outBatch.push_back(std::move(batch));
    }
    auto op = pk::PallasCallOp::create(
        b, el.loc(r), resultTypes, operands, mlir::ValueRange{},
        b.getStringAttr(kernelNameFor(what)), mlir::AffineMapAttr::get(el.symbolicShape(gridDims)),
        b.getArrayAttr({}), b.getArrayAttr({}), b.getArrayAttr(outShapeAttrs), b.getArrayAttr({}),
        b.getDenseI64ArrayAttr({}), nullptr, nullptr, b.getI64IntegerAttr(0));
    op->setAttr("pk.generated", b.getUnitAttr());
    if (batched)
      op->setAttr("pk.vmap_axes", b.getI64IntegerAttr(static_cast<int64_t>(levels.size())));

    // Blocks: whole along untiled axes, a block at the program's index
    // along tiled ones, squeezed along jax.vmap's.
    auto specFor = [&](const std::vector<Dim> &dims, const ParallelAxes::Tags &tags,
                       const std::vector<BatchAxis> &batch) -> mlir::Attribute {
      std::vector<int64_t> shape = blockShape(dims, tags);
      std::vector<pk::BlockDimKind> kinds(shape.size(), pk::BlockDimKind::Blocked);
      std::vector<mlir::AffineExpr> index;
      for (size_t d = 0; d < dims.size(); ++d)
        index.push_back(tags[d] >= 0 ? mlir::getAffineDimExpr(
                                           static_cast<unsigned>(firstTiledGridAxis + tags[d]), ctx)
                                     : mlir::getAffineConstantExpr(0, ctx));
      for (const BatchAxis &axis : batch) {
        auto level = std::find_if(levels.begin(), levels.end(),
                                  [&](const Elaborator::VmapLevel &l) { return l.id == axis.level; });
        if (level == levels.end())
          el.fail(r, what + " uses an array mapped by a jax.vmap that has returned; pass arrays "
                            "into vmapped functions as arguments");
        auto at = static_cast<std::ptrdiff_t>(axis.axis);
        shape.insert(shape.begin() + at, 1);
        kinds.insert(kinds.begin() + at, pk::BlockDimKind::Squeezed);
        index.insert(index.begin() + at,
                     mlir::getAffineDimExpr(static_cast<unsigned>(level - levels.begin()), ctx));
      }
      std::vector<int64_t> zeros(shape.size(), 0);
      auto map = mlir::AffineMap::get(static_cast<unsigned>(gridDims.size()),
                                      static_cast<unsigned>(el.symbols().size()), index, ctx);
      return pk::BlockSpecAttr::get(ctx, shape, kinds, zeros, zeros, map, nullptr);
    };
    std::vector<mlir::Attribute> inSpecs, outSpecs;
    for (size_t i = 0; i < arrays.size(); ++i)
      inSpecs.push_back(specFor(arrays[i]->shape, arrayTags[i], arrays[i]->batch));
    for (size_t i = 0; i < results.size(); ++i)
      outSpecs.push_back(specFor(outDims[i], resultTags[i], outBatch[i]));
    op.setInSpecsAttr(b.getArrayAttr(inSpecs));
    op.setOutSpecsAttr(b.getArrayAttr(outSpecs));

    // Finish the kernel: store each result whole into its output Ref.
    op.getKernel().push_back(kernel.release());
    mlir::Block &body = op.getKernelBlock();
    {
      Elaborator::ModeGuard mode(el, EmitMode::Kernel);
      b.setInsertionPointToEnd(&body);
      for (size_t i = 0; i < results.size(); ++i) {
        const auto &a = llvm::cast<ArrayObj>(*results[i]);
        mlir::Value out = body.addArgument(
            pk::RefType::get(a.shape, storageType(ctx, a.dtype), nullptr), el.loc(r));
        if (accumulated) {
          storeAccumulated(out, a);
          continue;
        }
        RefObj ref(out, a.shape, a.dtype);
        storeRef(el, ref, std::make_shared<EllipsisObj>(), results[i], nullptr, r);
      }
      pk::YieldOp::create(b, el.loc(r));
    }

    size_t next = 0;
    return mapLeaves(traced, [&](const Obj &leaf) -> Obj {
      auto *a = llvm::dyn_cast<ArrayObj>(leaf.get());
      if (!a)
        return nullptr;
      size_t i = next++;
      auto g = std::make_shared<GlobalArrayObj>(op.getResult(i), outDims[i], a->dtype,
                                                "result of " + what);
      g->batch = outBatch[i];
      return g;
    });
  }

  Elaborator &el;
  std::string what;
  SourceRange r;
  bool sizesAtTopLevel;
  const std::vector<Elaborator::VmapLevel> &levels;

  std::vector<const GlobalArrayObj *> arrays; ///< each whole array once
  std::map<const GlobalArrayObj *, size_t> indexOf;
  bool batched = false;
  std::vector<TiledAxis> tiled;
  /// The results' shapes traced on whole blocks, once a tiling is tried.
  std::optional<std::vector<std::vector<int64_t>>> wholeShapes;
  size_t firstStaticTile = 0; ///< tiled axes from here on are static tiles
  std::vector<ParallelAxes::Tags> arrayTags;

  std::unique_ptr<mlir::Block> kernel;
  pk::ReduceOp accumulated; ///< the reduction tiles accumulate, if any
  int accumulatedTag = ParallelAxes::kNone;
  ParallelAxes::Tags reducedOperandTags;
  std::vector<std::pair<mlir::Value, size_t>> loadedBlocks; ///< and their arrays' indices
  /// The one result's shape in the trace that chose the static tiles, and
  /// its block along them (0 elsewhere): for standInTiledSizes.
  std::vector<int64_t> tracedShape;
  std::vector<int64_t> tiledSizes;
  /// Tiles along axes of the one result that no input has, where the
  /// result is constant: the result's axis of each.
  std::map<int, size_t> constantResultAxes;
  Obj traced;
  std::vector<Obj> results;
  std::vector<ParallelAxes::Tags> resultTags;
};

Obj Elaborator::arrayCodeAtExport(const std::string &what, SourceRange r, std::vector<Obj> inputs,
                                  const std::function<Obj(std::vector<Obj> &)> &compute,
                                  bool sizesAtTopLevel) {
  if (inKernelCode())
    for (const Obj &input : inputs)
      forEachLeaf(input, [&](const Obj &leaf) {
        if (auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get()))
          failCapturedArray(*g, r);
      });
  ArrayCodeTracer tracer(*this, what, r, sizesAtTopLevel);
  return tracer.run(inputs, compute);
}

void Elaborator::failCapturedArray(const GlobalArrayObj &array, SourceRange r) {
  fail(r, "the kernel captures an array of the export: " + array.name + " (" +
              std::string(shortName(array.dtype)) + "[" + describeDims(array.shape) +
              "]); a kernel reads arrays only through its Refs: pass it to the pallas_call (or "
              "pl.kernel) as an input, as Pallas requires");
}

} // namespace pk::elab
