//===- ArrayCodeTracer.cpp - One operation of export array code -----===//
//
// Traces one operation of array code at export level (ExportArrays.cpp
// says which calls are) on block values standing for the whole arrays, and
// emits it as a generated pallas_call (`pk.generated`):
//
// - blocks are whole along static dimensions; along a symbolic dimension
//   one program per index (block 1), along a jax.vmap axis one per batch
//   element (squeezed), as in a vmapped kernel;
// - an array past 16384 elements is tiled along its leading axis (the loop
//   emitter), and a reduction across those tiles accumulates into one
//   output block in grid order (the reduction emitter);
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
    // Large arrays are tiled along their leading axis when the code allows
    // it (ParallelAxes says so); else, and for the rest, blocks are whole.
    if (tileLeadingAxis()) {
      if (trace(inputs, compute, /*mayFail=*/true))
        return emit();
      tiled.resize(firstStaticTile);
      for (ParallelAxes::Tags &t : arrayTags)
        for (int &tag : t)
          if (tag >= static_cast<int>(firstStaticTile))
            tag = ParallelAxes::kNone;
    }
    trace(inputs, compute, /*mayFail=*/false);
    return emit();
  }

private:
  /// Past this many elements a whole-array block is tiled if it can be
  /// (a CTA holds a block in registers on CUDA).
  static constexpr int64_t kWholeBlockElements = 16384;

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

  int tagFor(const Dim &size, int64_t block, const GlobalArrayObj &g) {
    for (size_t i = 0; i < tiled.size(); ++i)
      if (tiled[i].size == size && tiled[i].block == block)
        return static_cast<int>(i);
    tiled.push_back({size, block,
                     "'" + g.name + "' (" + shortName(g.dtype) + "[" + el.describeDims(g.shape) + "])"});
    return static_cast<int>(tiled.size() - 1);
  }

  /// Tags the leading axis of the largest array (and of those of its rank
  /// and leading size) when its whole block would be too large.
  bool tileLeadingAxis() {
    const GlobalArrayObj *largest = nullptr;
    int64_t most = 0;
    for (const GlobalArrayObj *g : arrays) {
      int64_t n = 1;
      for (const Dim &d : g->shape)
        n *= d.isStatic() ? d.value : 1;
      if (n > most) {
        most = n;
        largest = g;
      }
    }
    if (!largest || most <= kWholeBlockElements || !largest->shape[0].isStatic())
      return false;
    size_t rank = largest->shape.size();
    int64_t size = largest->shape[0].value;
    // Rows of 8 (a TPU tile's sublanes; for a TPU target 128, which stay
    // a TPU block when a transpose makes the axis the last); a vector in
    // lane-sized chunks.
    int64_t block = rank == 1 ? 4096 : el.tpuTiles() ? 128 : 8;
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
    return inputs;
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

  /// Traces the code on blocks; false (with `mayFail`) when a static tiling
  /// does not hold, to trace again with whole blocks.
  bool trace(const std::vector<Obj> &inputs, const Compute &compute, bool mayFail) {
    results.clear();
    resultTags.clear();
    kernel = std::make_unique<mlir::Block>();
    std::vector<mlir::Type> refTypes;
    for (size_t i = 0; i < arrays.size(); ++i) {
      refTypes.push_back(pk::RefType::get(blockShape(arrays[i]->shape, arrayTags[i]),
                                          storageType(&el.context(), arrays[i]->dtype), nullptr));
      kernel->addArgument(refTypes.back(), el.loc(r));
    }
    ParallelAxes axes;
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
          axes.set(a->value, arrayTags[i]);
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

    // Along tiled axes the code must compute element-wise, and every
    // result must follow each of them.
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
  size_t firstStaticTile = 0; ///< tiled axes from here on are static tiles
  std::vector<ParallelAxes::Tags> arrayTags;

  std::unique_ptr<mlir::Block> kernel;
  pk::ReduceOp accumulated; ///< the reduction tiles accumulate, if any
  int accumulatedTag = ParallelAxes::kNone;
  ParallelAxes::Tags reducedOperandTags;
  Obj traced;
  std::vector<Obj> results;
  std::vector<ParallelAxes::Tags> resultTags;
};

Obj Elaborator::arrayCodeAtExport(const std::string &what, SourceRange r, std::vector<Obj> inputs,
                                  const std::function<Obj(std::vector<Obj> &)> &compute,
                                  bool sizesAtTopLevel) {
  ArrayCodeTracer tracer(*this, what, r, sizesAtTopLevel);
  return tracer.run(inputs, compute);
}

} // namespace pk::elab
