//===- MosaicGpuPipeline.cpp - emit_pipeline and nd_loop ------------------===//
//
// plgpu.emit_pipeline, emit_pipeline_warp_specialized and
// pltpu.emit_pipeline become one pk.pipeline op each: the schedule of
// copies (how many steps ahead, which thread issues them) is the
// lowering's business, the op says what each step sees. plgpu.nd_loop is
// a lax.fori_loop over the steps a program owns.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StateRefs.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"
#include "ir/SmemTransforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "support/ShapeText.h"

namespace pk::elab {

namespace {

using ast::BinaryOp;

/// What emit_pipeline(...) was given, before its operands arrive.
struct PipelineSpec {
  Obj body;
  std::vector<int64_t> grid; ///< ShapedType::kDynamic where computed
  std::vector<mlir::Value> dynamicGrid; ///< index values of the computed extents
  std::vector<Obj> inSpecs, outSpecs; ///< the BlockSpecs, flattened
  /// Each input's and output's spec as given: a BlockSpec or a pytree of
  /// them (MaxText's gmm passes dataclasses of weight, scale and bias);
  /// the operands and the body's blocks have the same structure.
  std::vector<Obj> inTrees, outTrees;
  int64_t maxConcurrentSteps = 1;
  std::optional<int64_t> delayRelease; ///< emit_pipeline(delay_release=): all inputs
  Obj initCarry;                       ///< emit_pipeline(init_carry=)
  bool warpSpecialized = false;
  std::string wgAxis;
  int64_t numComputeWgs = 0, memoryThread = 0, memoryRegisters = 0;
  /// manual_consumed_barriers=True: the body gets a barrier per input and
  /// releases the input's slot itself by arriving there.
  bool manualConsumed = false;
  Obj computeContext;
  SourceRange range, specsRange;
  /// pltpu.emit_pipeline: TPU Refs and VMEM blocks; the body takes the
  /// blocks only (no grid indices, no carry).
  bool tpu = false;
  /// pltpu.emit_pipeline(core_axis=): this core's first index along each
  /// grid axis (null where 0), added to the step's indices before the
  /// index maps see them.
  std::vector<Obj> gridOffsets;
  /// Each grid axis's extent: an int, or the i32 scalar computed in the
  /// kernel (what pl.num_programs answers in a TPU pipeline body).
  std::vector<Obj> extents;
};

/// The BlockSpecs of `in_specs` or `out_specs`, flattened; `trees` gets
/// one entry per operand: a tuple or list holds one per operand, anything
/// else is one operand's spec (a BlockSpec or a pytree of them), as
/// Pallas's _normalize_specs has it.
std::vector<Obj> specList(Elaborator &el, const Obj &o, SourceRange r, const char *what,
                          std::vector<Obj> &trees) {
  std::vector<Obj> specs;
  if (!o || isNone(o))
    return specs;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get()))
    trees = seq->items;
  else
    trees = {o};
  for (const Obj &tree : trees) {
    std::vector<Obj> leaves;
    pytreeLeaves(tree, leaves);
    for (const Obj &s : leaves) {
      if (!llvm::isa<BlockSpecObj>(s.get()))
        el.fail(r, std::string(what) + " must hold BlockSpecs (or pytrees of them), got " +
                       typeName(*s));
      specs.push_back(s);
    }
  }
  return specs;
}

/// The pipeline's operands as given (one pytree per spec tree) flattened
/// to Refs, one per BlockSpec.
void flattenOperands(Elaborator &el, const PipelineSpec &spec, const std::vector<Obj> &operands,
                     const std::vector<SourceRange> &ranges, SourceRange r,
                     std::vector<Obj> &refs, std::vector<SourceRange> &refRanges) {
  size_t numTrees = spec.inTrees.size() + spec.outTrees.size();
  if (operands.size() != numTrees)
    el.fail(r, "the pipeline has " + std::to_string(spec.inTrees.size()) + " in_specs and " +
                   std::to_string(spec.outTrees.size()) + " out_specs, so it takes " +
                   std::to_string(numTrees) + (spec.tpu ? " Refs" : " GMEM Refs") + ", got " +
                   std::to_string(operands.size()));
  for (size_t i = 0; i < operands.size(); ++i) {
    const Obj &tree = i < spec.inTrees.size() ? spec.inTrees[i]
                                              : spec.outTrees[i - spec.inTrees.size()];
    std::vector<Obj> specLeaves, leaves;
    pytreeLeaves(tree, specLeaves);
    pytreeLeaves(operands[i], leaves);
    if (leaves.size() != specLeaves.size())
      el.fail(ranges[i], "this operand has " + std::to_string(leaves.size()) +
                             " Refs but its spec has " + std::to_string(specLeaves.size()) +
                             " BlockSpecs; they must have the same structure");
    for (const Obj &leaf : leaves) {
      refs.push_back(leaf);
      refRanges.push_back(ranges[i]);
    }
  }
}

/// The extents of a grid given as a tuple or as one value.
std::vector<Obj> gridExtents(const Obj &o) {
  if (auto *sequence = llvm::dyn_cast<SequenceObj>(o.get()))
    return sequence->items;
  return {o};
}

/// A static, positive grid extent of `what` ("plgpu.nd_loop's grid").
int64_t staticExtent(Elaborator &el, const Obj &g, SourceRange r, const std::string &what) {
  std::optional<int64_t> v = el.staticInt(g);
  if (!v)
    el.fail(r, what + " extents must be static integers, got " + repr(*g));
  if (*v <= 0)
    el.fail(r, what + " sizes must be positive, got " + std::to_string(*v));
  return *v;
}

/// A pipeline's grid: static extents, or integer scalars computed in the
/// kernel (a ragged kernel's block count for its group).
void pipelineGrid(Elaborator &el, const Obj &o, SourceRange r, PipelineSpec &spec) {
  for (Obj g : gridExtents(o)) {
    if (Obj scalar = capturedScalar(el, g, r)) // a jit argument a TPU kernel closed over
      g = scalar;
    auto *a = llvm::dyn_cast<ArrayObj>(g.get());
    if (!a) {
      spec.grid.push_back(staticExtent(el, g, r, "pipeline grid"));
      spec.extents.push_back(makeInt(spec.grid.back()));
      continue;
    }
    spec.extents.push_back(g);
    if (a->rank() != 0 || !isInteger(a->dtype))
      el.fail(r, "a computed pipeline grid extent must be an integer scalar, got " + repr(*g));
    mlir::OpBuilder &b = el.builder();
    mlir::Value extent = el.arrays().cast(el.arrays().toArray(g, r), DType::I32, r)->value;
    spec.grid.push_back(mlir::ShapedType::kDynamic);
    spec.dynamicGrid.push_back(
        mlir::arith::IndexCastOp::create(b, el.loc(r), b.getIndexType(), extent));
  }
}

/// The pipeline's grid at the step whose indices are `block`'s first
/// arguments (i32): those indices with this core's offsets (core_axis)
/// added, and the extents.
Elaborator::PipelineGrid stepGrid(Elaborator &el, const PipelineSpec &spec, mlir::Block *block,
                                  SourceRange r) {
  Elaborator::PipelineGrid grid;
  grid.extents = spec.extents;
  for (size_t g = 0; g < spec.grid.size(); ++g) {
    Obj index = el.arrays().wrap(block->getArgument(g), {}, DType::I32);
    if (g < spec.gridOffsets.size() && spec.gridOffsets[g])
      index = binaryOperator(el, BinaryOp::Add, index, spec.gridOffsets[g], r);
    grid.indices.push_back(index);
  }
  return grid;
}

/// A pipeline's body, grid, in_specs and out_specs: the first four
/// parameters of every emit_pipeline.
std::shared_ptr<PipelineSpec> newPipelineSpec(Elaborator &el, const BoundArgs &a, SourceRange r) {
  auto spec = std::make_shared<PipelineSpec>();
  spec->range = r;
  spec->body = a[0];
  pipelineGrid(el, a[1], a.range(1), *spec);
  spec->inSpecs = specList(el, a[2], a.range(2), "in_specs", spec->inTrees);
  spec->outSpecs = specList(el, a[3], a.range(3), "out_specs", spec->outTrees);
  spec->specsRange = a.range(2);
  return spec;
}

/// The block attribute of one operand (index maps are computed in the
/// op's index_map region) and its shape as the body sees it.
pk::BlockSpecAttr blockAttr(Elaborator &el, const BlockSpecObj &spec, pk::RefType ref,
                            const std::string &what, bool tpu, bool &pipelined,
                            std::vector<int64_t> &kernelShape) {
  mlir::MLIRContext *ctx = &el.context();
  size_t rank = ref.getShape().size();
  std::vector<int64_t> block, low(rank, 0), high(rank, 0);
  std::vector<pk::BlockDimKind> kinds;
  if (isNone(spec.blockShape)) {
    block.assign(ref.getShape().begin(), ref.getShape().end());
    kinds.assign(rank, pk::BlockDimKind::Blocked);
  } else {
    std::vector<Obj> entries = llvm::cast<SequenceObj>(*spec.blockShape).items;
    if (entries.size() != rank)
      el.fail(spec.range, "block_shape " + repr(*spec.blockShape) + " has " +
                              std::to_string(entries.size()) + " dimensions but " + what + " has " +
                              std::to_string(rank));
    for (size_t d = 0; d < rank; ++d) {
      const Obj &e = entries[d];
      if (isNone(e)) {
        block.push_back(1);
        kinds.push_back(pk::BlockDimKind::Squeezed);
        continue;
      }
      if (auto *bd = llvm::dyn_cast<BlockDimObj>(e.get())) {
        if (bd->which == BlockDimObj::Which::Squeezed) {
          block.push_back(1);
          kinds.push_back(pk::BlockDimKind::Squeezed);
          continue;
        }
        if (bd->which == BlockDimObj::Which::Element) {
          if (bd->low || bd->high)
            el.fail(spec.range, "pl.Element block dimensions with padding are not supported in "
                                "a pipeline");
          block.push_back(bd->size);
          kinds.push_back(pk::BlockDimKind::Element);
          continue;
        }
        if (bd->which == BlockDimObj::Which::BoundedSlice) {
          if (!tpu)
            el.fail(spec.range, "pl.BoundedSlice block dimensions are supported in "
                                "pltpu.emit_pipeline, not in Mosaic GPU pipelines");
          block.push_back(bd->size);
          kinds.push_back(pk::BlockDimKind::Bounded);
          if (bd->size > ref.getShape()[d])
            el.fail(spec.range, "pl.BoundedSlice(" + std::to_string(bd->size) + ") of " + what +
                                    " is larger than its dimension " + std::to_string(d) + " (" +
                                    std::to_string(ref.getShape()[d]) + " elements)");
          continue;
        }
        block.push_back(bd->size);
      } else {
        block.push_back(el.toInt(e, spec.range, "block dimension"));
      }
      kinds.push_back(pk::BlockDimKind::Blocked);
      if (block.back() <= 0 || block.back() > ref.getShape()[d])
        el.fail(spec.range, "block dimension " + std::to_string(d) + " of " + what + " is " +
                                std::to_string(block.back()) + ", but the Ref has " +
                                std::to_string(ref.getShape()[d]) + " elements there");
    }
  }
  if (!llvm::isa<IndexingModeObj>(spec.indexingMode.get()) || true) {
    if (auto *mode = llvm::dyn_cast<IndexingModeObj>(spec.indexingMode.get());
        mode && mode->unblocked)
      el.fail(spec.range, "pl.Unblocked indexing is not supported in a pipeline");
  }
  MemorySpace blockSpace;
  if (tpu) {
    MemorySpace given = spec.memorySpace.value_or(MemorySpace::VMEM);
    if (given == MemorySpace::GPUShared || given == MemorySpace::GPUGlobal ||
        given == MemorySpace::GPUAccumulator)
      el.fail(spec.range, "a TPU pipeline's blocks live in pltpu.VMEM or pltpu.SMEM (or stay "
                          "in pl.ANY / pltpu.HBM), not in GPU memory");
    pipelined = given == MemorySpace::VMEM || given == MemorySpace::SMEM;
    blockSpace = given;
    // A block that does not divide its array is cut at the array's end
    // (the copies move what lies inside it), as in Pallas.
  } else {
    pipelined = !spec.memorySpace || *spec.memorySpace == MemorySpace::GPUShared;
    if (spec.memorySpace && *spec.memorySpace != MemorySpace::GPUShared &&
        *spec.memorySpace != MemorySpace::GPUGlobal)
      el.fail(spec.range, "a pipeline's blocks live in plgpu.SMEM (or stay in plgpu.GMEM)");
    blockSpace = pipelined ? MemorySpace::GPUShared : MemorySpace::GPUGlobal;
  }
  kernelShape.clear();
  for (size_t d = 0; d < rank; ++d)
    if (kinds[d] != pk::BlockDimKind::Squeezed)
      kernelShape.push_back(block[d]);
  mlir::Attribute space = pk::MemorySpaceAttr::get(ctx, blockSpace);
  return pk::BlockSpecAttr::get(ctx, block, kinds, low, high, mlir::AffineMap(), space);
}

/// Emits the pk.pipeline of `spec` over `refs`, starting from `carry`
/// (null: no carry); returns the final carry (or None).
Obj emitPipelineOp(Elaborator &el, const PipelineSpec &spec, const std::vector<Obj> &operands,
                   const std::vector<SourceRange> &operandRanges, const Obj &carry, SourceRange r,
                   const std::vector<Obj> &scratches = {}) {
  mlir::OpBuilder &b = el.builder();
  mlir::MLIRContext *ctx = &el.context();
  size_t numIns = spec.inSpecs.size();
  std::vector<Obj> refObjs;
  std::vector<SourceRange> refRanges;
  flattenOperands(el, spec, operands, operandRanges, r, refObjs, refRanges);
  std::vector<mlir::Value> refs;
  std::vector<mlir::Attribute> inAttrs, outAttrs;
  std::vector<mlir::Type> bodyTypes;
  std::vector<DType> dtypes;
  std::vector<int64_t> delays;
  std::vector<mlir::Attribute> collectiveAxes; ///< per input
  bool anyCollective = false;
  std::vector<std::vector<int64_t>> kernelShapes;
  for (size_t i = 0; i < refObjs.size(); ++i) {
    bool isIn = i < numIns;
    std::string what =
        (isIn ? "input " + std::to_string(i) : "output " + std::to_string(i - numIns));
    auto *refObj = llvm::dyn_cast<RefObj>(refObjs[i].get());
    if (!refObj)
      el.fail(refRanges[i], std::string("a pipeline's operands are Refs") +
                                (spec.tpu ? "" : " in GMEM") + ", got " + typeName(*refObjs[i]));
    mlir::Value ref = materializeRef(el, *refObj, refRanges[i]);
    auto type = llvm::cast<pk::RefType>(ref.getType());
    std::optional<MemorySpace> operandSpace = type.getSpace();
    if (spec.tpu && operandSpace &&
        (*operandSpace == MemorySpace::GPUGlobal || *operandSpace == MemorySpace::GPUShared ||
         *operandSpace == MemorySpace::GPUAccumulator))
      el.fail(refRanges[i], "pltpu.emit_pipeline copies blocks of TPU Refs (pl.ANY, pltpu.HBM, "
                            "VMEM), but " + what + " is in GPU memory");
    if (!spec.tpu && operandSpace != MemorySpace::GPUGlobal)
      el.fail(refRanges[i],
              "a pipeline copies blocks of Refs in GMEM, but " + what + " is not in GMEM");
    const auto &blockSpec =
        llvm::cast<BlockSpecObj>(*(isIn ? spec.inSpecs[i] : spec.outSpecs[i - numIns]));
    bool pipelined = true;
    std::vector<int64_t> shape;
    pk::BlockSpecAttr attr = blockAttr(el, blockSpec, type, what, spec.tpu, pipelined, shape);
    (isIn ? inAttrs : outAttrs).push_back(attr);
    mlir::ArrayAttr transforms;
    if (!blockSpec.transforms.empty()) {
      transforms = mlir::ArrayAttr::get(ctx, blockSpec.transforms);
      std::string why = pk::checkSmemTransforms(shape, type.getElementType(), transforms);
      if (!why.empty())
        el.fail(blockSpec.range, "these transforms cannot lay out the " + shapeText(shape) +
                                     " block of " + what + ": " + why);
    }
    if (!isIn && !blockSpec.collectiveAxes.empty())
      el.fail(blockSpec.range, "output BlockSpecs cannot have collective_axes");
    if (isIn && !blockSpec.collectiveAxes.empty()) {
      if (!spec.warpSpecialized)
        el.fail(blockSpec.range, "BlockSpecs with collective_axes are not supported in "
                                 "emit_pipeline (use emit_pipeline_warp_specialized)");
      const MeshInfo &mesh = requireMesh(el, blockSpec.range, "collective_axes");
      for (const std::string &a : blockSpec.collectiveAxes) {
        auto axis = mesh.find(a);
        if (!axis || axis->first != 1)
          el.fail(blockSpec.range,
                  "collective_axes of a BlockSpec name cluster axes; '" + a + "' is not one");
      }
    }
    if (isIn) {
      std::vector<llvm::StringRef> axes(blockSpec.collectiveAxes.begin(),
                                        blockSpec.collectiveAxes.end());
      collectiveAxes.push_back(b.getStrArrayAttr(axes));
      anyCollective |= !axes.empty();
      int64_t delay = spec.delayRelease ? *spec.delayRelease : blockSpec.delayRelease;
      if (delay >= spec.maxConcurrentSteps)
        el.fail(blockSpec.range,
                "max_concurrent_steps (" + std::to_string(spec.maxConcurrentSteps) +
                    ") must be greater than every delay_release (" + std::to_string(delay) + ")");
      delays.push_back(delay);
    }
    refs.push_back(ref);
    dtypes.push_back(*dtypeOf(type.getElementType()));
    kernelShapes.push_back(shape);
    bodyTypes.push_back(pipelined ? mlir::Type(pk::RefType::get(shape, type.getElementType(),
                                                                attr.getMemorySpace(), transforms))
                                  : mlir::Type(type));
  }
  if (spec.warpSpecialized && delays.size() > 1)
    for (int64_t d : delays)
      if (d != delays[0])
        el.fail(spec.specsRange, "all inputs of a warp-specialized pipeline need the same "
                                 "delay_release");

  // The carry, flattened into values.
  std::vector<Obj> carryLeaves;
  TreeDef carryDef;
  bool hasCarry = carry != nullptr;
  if (hasCarry)
    carryDef = flatten(carry, carryLeaves);
  // Values are carried from step to step; a Ref in the carry (the wgmma
  // accumulator JAX's hopper_matmul_mgpu.py threads through) is the same
  // Ref at every step and passes through. carried[c]: leaf c's place
  // among the carried values, or -1.
  std::vector<mlir::Value> inits;
  std::vector<mlir::Type> carryTypes;
  std::vector<int> carried;
  for (Obj &leaf : carryLeaves) {
    if (llvm::isa<RefObj, SyncRefObj>(leaf.get())) {
      carried.push_back(-1);
      continue;
    }
    ArrayPtr a = el.arrays().toArray(leaf, r);
    leaf = a;
    carried.push_back(static_cast<int>(inits.size()));
    inits.push_back(a->value);
    carryTypes.push_back(a->value.getType());
  }

  int64_t concurrent = spec.maxConcurrentSteps;
  if (spec.dynamicGrid.empty()) {
    int64_t steps = 1;
    for (int64_t g : spec.grid)
      steps *= g;
    concurrent = std::min(concurrent, steps);
  }
  auto op = pk::PipelineOp::create(
      b, el.loc(r), carryTypes, refs, inits, spec.dynamicGrid, b.getDenseI64ArrayAttr(spec.grid),
      b.getI64IntegerAttr(concurrent), b.getArrayAttr(inAttrs), b.getArrayAttr(outAttrs),
      b.getDenseI64ArrayAttr(delays), spec.warpSpecialized ? b.getUnitAttr() : nullptr,
      spec.warpSpecialized ? b.getStringAttr(spec.wgAxis) : nullptr,
      spec.warpSpecialized ? b.getI64IntegerAttr(spec.numComputeWgs) : nullptr,
      spec.warpSpecialized ? b.getI64IntegerAttr(spec.memoryThread) : nullptr,
      spec.warpSpecialized ? b.getI64IntegerAttr(spec.memoryRegisters) : nullptr,
      spec.manualConsumed ? b.getUnitAttr() : nullptr,
      anyCollective ? b.getArrayAttr(collectiveAxes) : nullptr);

  // index_map: the block index of every operand at a step.
  std::vector<mlir::Type> gridTypes(spec.grid.size(), b.getI32Type());
  std::vector<mlir::Location> gridLocs(spec.grid.size(), el.loc(r));
  mlir::Block *mapBlock;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    mapBlock = b.createBlock(&op.getIndexMap(), {}, gridTypes, gridLocs);
    b.setInsertionPointToEnd(mapBlock);
    std::vector<mlir::Value> indices;
    // Index maps run in the pipeline's grid too (Pallas computes them in
    // its scheduler's grid environment).
    Elaborator::PipelineGrid grid = stepGrid(el, spec, mapBlock, r);
    auto i32 = [&](const Obj &o, SourceRange range) {
      ArrayPtr a = el.arrays().toArray(o, range);
      if (a->rank() != 0 || isFloat(a->dtype) || a->dtype == DType::Bool)
        el.fail(range, "an index_map must return integer scalars");
      return el.arrays().cast(a, DType::I32, range)->value;
    };
    for (size_t i = 0; i < refObjs.size(); ++i) {
      const auto &blockSpec =
          llvm::cast<BlockSpecObj>(*(i < numIns ? spec.inSpecs[i] : spec.outSpecs[i - numIns]));
      pk::BlockSpecAttr attr = llvm::cast<pk::BlockSpecAttr>(
          i < numIns ? inAttrs[i] : outAttrs[i - numIns]);
      size_t rank = llvm::cast<pk::RefType>(refs[i].getType()).getShape().size();
      if (isNone(blockSpec.indexMap)) {
        if (attr.getNumIndexValues() != static_cast<int64_t>(rank))
          el.fail(blockSpec.range, "a pl.BoundedSlice block dimension needs an index_map that "
                                   "returns pl.ds(start, size) for it");
        for (size_t d = 0; d < rank; ++d)
          indices.push_back(el.arrays().constantInt(0, DType::I32, {}, r)->value);
        continue;
      }
      CallArgs mapArgs;
      mapArgs.range = blockSpec.range;
      mapArgs.callee = "index_map";
      for (const Obj &index : grid.indices)
        mapArgs.addPositional(index, blockSpec.range);
      Obj result = el.withPipelineGrid(spec.tpu ? &grid : el.activePipelineGrid,
                                       [&] { return el.call(blockSpec.indexMap, mapArgs); });
      std::vector<Obj> items = llvm::isa<SequenceObj>(result.get())
                                   ? llvm::cast<SequenceObj>(*result).items
                                   : std::vector<Obj>{result};
      if (items.size() != rank)
        el.fail(blockSpec.range, "the index_map returns " + std::to_string(items.size()) +
                                     " indices but the block has rank " + std::to_string(rank));
      for (size_t d = 0; d < rank; ++d) {
        const Obj &item = items[d];
        if (!attr.isBounded(static_cast<unsigned>(d))) {
          indices.push_back(i32(item, blockSpec.range));
          continue;
        }
        // pl.BoundedSlice(n): the index map gives the element start and
        // the size (at most n) of the slice, as pl.ds(start, size).
        auto *ds = llvm::dyn_cast<DynamicSliceObj>(item.get());
        if (!ds)
          el.fail(blockSpec.range, "the index_map must return a pl.ds(start, size) for the "
                                   "pl.BoundedSlice dimension " + std::to_string(d) + ", got " +
                                   repr(*item));
        if (!ds->dynamicSize && ds->size > attr.getBlockShape()[d])
          el.fail(blockSpec.range, "the index_map's " + repr(*item) + " is larger than its " +
                                       "pl.BoundedSlice(" +
                                       std::to_string(attr.getBlockShape()[d]) + ")");
        indices.push_back(i32(ds->start, blockSpec.range));
        indices.push_back(ds->dynamicSize ? i32(ds->dynamicSize, blockSpec.range)
                                          : el.arrays().constantInt(ds->size, DType::I32, {},
                                                                    blockSpec.range)->value);
      }
    }
    pk::ScopeYieldOp::create(b, el.loc(r), indices);
  }

  // body: the step's indices, the blocks, the inputs' consumed barriers
  // (manual_consumed_barriers), the carry.
  std::vector<mlir::Type> argTypes = gridTypes;
  argTypes.insert(argTypes.end(), bodyTypes.begin(), bodyTypes.end());
  size_t numConsumed = spec.manualConsumed ? numIns : 0;
  argTypes.insert(argTypes.end(), numConsumed, op.consumedBarrierType());
  argTypes.insert(argTypes.end(), carryTypes.begin(), carryTypes.end());
  std::vector<mlir::Location> argLocs(argTypes.size(), el.loc(r));
  mlir::Block *body;
  std::vector<Obj> finals;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    body = b.createBlock(&op.getBody(), {}, argTypes, argLocs);
    b.setInsertionPointToEnd(body);
    // A TPU pipeline's body sees the pipeline's grid as the kernel's.
    Elaborator::PipelineGrid grid = stepGrid(el, spec, body, r);
    CallArgs bodyArgs;
    bodyArgs.range = r;
    bodyArgs.callee = "pipeline body";
    if (!spec.tpu)
      bodyArgs.addPositional(makeTuple(grid.indices), r); // Mosaic GPU bodies get the step first
    // The blocks, in the structure of the specs.
    std::vector<Obj> blocks;
    for (size_t i = 0; i < refObjs.size(); ++i) {
      mlir::Value arg = body->getArgument(spec.grid.size() + i);
      blocks.push_back(std::make_shared<RefObj>(
          arg, std::vector<int64_t>(llvm::cast<pk::RefType>(arg.getType()).getShape()),
          dtypes[i]));
    }
    size_t nextBlock = 0;
    for (const auto *trees : {&spec.inTrees, &spec.outTrees})
      for (const Obj &tree : *trees)
        bodyArgs.addPositional(pytreeRebuild(tree, blocks, nextBlock), r);
    // pltpu.emit_pipeline's scratches=: the kernel's Refs, after the blocks.
    for (const Obj &scratch : scratches)
      bodyArgs.addPositional(scratch, r);
    for (size_t i = 0; i < numConsumed; ++i)
      bodyArgs.addPositional(
          std::make_shared<SyncRefObj>(MgpuObject::Which::BarrierRef,
                                       body->getArgument(spec.grid.size() + refObjs.size() + i)),
          r);
    std::vector<Obj> carryIn;
    for (size_t c = 0; c < carryLeaves.size(); ++c) {
      if (carried[c] < 0) {
        carryIn.push_back(carryLeaves[c]);
        continue;
      }
      auto &leaf = llvm::cast<ArrayObj>(*carryLeaves[c]);
      carryIn.push_back(el.arrays().wrap(
          body->getArgument(spec.grid.size() + refObjs.size() + numConsumed + carried[c]),
          leaf.shape, leaf.dtype, leaf.weak));
    }
    if (hasCarry) {
      size_t next = 0;
      bodyArgs.addPositional(unflatten(carryDef, carryIn, next), r);
    }
    Obj next = el.withPipelineGrid(spec.tpu ? &grid : el.activePipelineGrid,
                                   [&] { return el.call(spec.body, bodyArgs); });
    std::vector<mlir::Value> yielded;
    if (hasCarry) {
      std::vector<Obj> nextLeaves;
      TreeDef nextDef = flatten(next, nextLeaves);
      if (!sameStructure(nextDef, carryDef))
        el.fail(r, "the pipeline body must return the next carry, with the structure of the "
                   "initial one (got " +
                       repr(*next) + ")");
      for (size_t c = 0; c < nextLeaves.size(); ++c) {
        if (carried[c] < 0) {
          if (nextLeaves[c] != carryLeaves[c])
            el.fail(r, "the pipeline body must return the carry's Refs themselves (got " +
                           repr(*nextLeaves[c]) + " for " + repr(*carryLeaves[c]) + ")");
          continue;
        }
        auto &leaf = llvm::cast<ArrayObj>(*carryLeaves[c]);
        ArrayPtr a = el.arrays().toArray(nextLeaves[c], r, JaxType{leaf.dtype, leaf.weak});
        if (a->shape != leaf.shape || a->dtype != leaf.dtype)
          el.fail(r, "the pipeline body changes the carry's shape or dtype (from " +
                         std::string(shortName(leaf.dtype)) + shapeText(leaf.shape) + " to " +
                         shortName(a->dtype) + shapeText(a->shape) + ")");
        yielded.push_back(a->value);
      }
    }
    pk::ScopeYieldOp::create(b, el.loc(r), yielded);
  }
  if (!hasCarry)
    return none();
  for (size_t c = 0; c < carryLeaves.size(); ++c) {
    if (carried[c] < 0) {
      finals.push_back(carryLeaves[c]);
      continue;
    }
    auto &leaf = llvm::cast<ArrayObj>(*carryLeaves[c]);
    finals.push_back(el.arrays().wrap(op.getResult(carried[c]), leaf.shape, leaf.dtype, leaf.weak));
  }

  size_t next = 0;
  return unflatten(carryDef, finals, next);
}

/// The function emit_pipeline returns: called with the GMEM Refs.
Obj pipelineFunction(const std::shared_ptr<PipelineSpec> &spec) {
  auto fn = [spec](Elaborator &el, CallArgs &args) -> Obj {
    if (spec->tpu) {
      el.requireKernel(args.range, "a TPU pipeline");
      if (el.activeMesh)
        el.fail(args.range, "pltpu.emit_pipeline runs in a TPU kernel (pl.pallas_call), not in a "
                            "Mosaic GPU kernel; use plgpu.emit_pipeline there");
      std::vector<Obj> scratches;
      for (size_t i = 0; i < args.keywords.size(); ++i) {
        const std::string &k = args.keywords[i].first;
        const Obj &v = args.keywords[i].second;
        if (k != "allocations" && k != "scratches" && k != "first_cycle" && k != "last_cycle" &&
            k != "init_accumulators" && k != "prefetch" && k != "postyeet" && k != "schedule")
          el.fail(args.rangeOfKeyword(k),
                  "a pipeline takes its Refs positionally, got '" + k + "'");
        if (k == "scratches" && !isNone(v)) {
          // Each is passed to the body as given: a Ref or a pytree of them.
          for (const Obj &s : el.iterate(v, args.rangeOfKeyword(k))) {
            std::vector<Obj> leaves;
            pytreeLeaves(s, leaves);
            for (const Obj &leaf : leaves)
              if (!llvm::isa<RefObj, SyncRefObj>(leaf.get()))
                el.fail(args.rangeOfKeyword(k),
                        "the pipeline's scratches are the kernel's Refs (or pytrees of them), "
                        "got " +
                            typeName(*leaf));
            scratches.push_back(s);
          }
          continue;
        }
        if (!isNone(v))
          el.fail(args.rangeOfKeyword(k), "pltpu.emit_pipeline's " + k +
                                              "= is not supported yet (the pipeline allocates "
                                              "its own buffers and runs its whole grid)");
      }
      return emitPipelineOp(el, *spec, args.positional, args.positionalRanges, nullptr,
                            args.range, scratches);
    }
    requireMesh(el, args.range, "a Mosaic GPU pipeline");
    std::vector<Obj> refs = args.positional;
    std::vector<SourceRange> ranges = args.positionalRanges;
    for (size_t i = 0; i < args.keywords.size(); ++i)
      if (args.keywords[i].first != "allocations")
        el.fail(args.rangeOfKeyword(args.keywords[i].first),
                "a pipeline takes its GMEM Refs positionally, got '" + args.keywords[i].first +
                    "'");
    if (!spec->warpSpecialized)
      return emitPipelineOp(el, *spec, refs, ranges, spec->initCarry, args.range);
    // Warp specialization: the compute threads run the body (and the
    // compute context around it); the memory thread issues the copies,
    // which the op implies.
    const MeshInfo &mesh = requireMesh(el, args.range, "emit_pipeline_warp_specialized");
    if (mesh.mesh->threadName != spec->wgAxis)
      el.fail(spec->range, "wg_axis='" + spec->wgAxis + "' is not the thread axis of this kernel" +
                               (mesh.mesh->threadName.empty()
                                    ? std::string(" (it has none: give plgpu.kernel num_threads= "
                                                  "and thread_name=)")
                                    : " ('" + mesh.mesh->threadName + "')"));
    if (mesh.mesh->numThreads != spec->numComputeWgs + 1)
      el.fail(spec->range, "a warp-specialized pipeline with num_compute_wgs=" +
                               std::to_string(spec->numComputeWgs) + " needs " +
                               std::to_string(spec->numComputeWgs + 1) +
                               " Pallas threads (one more for copies), but the kernel has " +
                               std::to_string(mesh.mesh->numThreads));
    SourceRange r = args.range;
    Obj thread = axisIndex(el, makeStr(spec->wgAxis), r);
    Obj isCompute = compareOperator(el, ast::CompareOp::Ne, thread, makeInt(spec->memoryThread), r);
    auto computeBody =
        std::make_shared<BuiltinObj>("compute threads", [=](Elaborator &el, CallArgs &) -> Obj {
          if (!spec->computeContext || isNone(spec->computeContext)) {
            emitPipelineOp(el, *spec, refs, ranges, nullptr, r);
            return none();
          }
          auto run =
              std::make_shared<BuiltinObj>("pipeline", [=](Elaborator &el, CallArgs &inner) -> Obj {
                if (inner.positional.size() != 1 || !inner.keywords.empty())
                  el.fail(inner.range,
                          "the pipeline callback of a compute_context takes the initial "
                          "carry (one value, or a tuple)");
                return emitPipelineOp(el, *spec, refs, ranges, inner.positional[0], inner.range);
              });
          CallArgs ctxArgs;
          ctxArgs.range = r;
          ctxArgs.callee = "compute_context";
          ctxArgs.addPositional(run, r);
          el.call(spec->computeContext, ctxArgs);
          return none();
        });
    // The branch is where the memory thread's copies go (ExpandPipelines):
    // every thread of the kernel reaches this call, as in Mosaic GPU.
    mlir::Block *block = el.builder().getInsertionBlock();
    el.when(isCompute, computeBody, r);
    if (!block->empty())
      if (auto branch = llvm::dyn_cast<mlir::scf::IfOp>(block->back()))
        branch->setAttr(pk::PipelineOp::getWarpSpecializedBranchAttrName(),
                        el.builder().getUnitAttr());
    return none();
  };
  auto callable = std::make_shared<CallableObj>("pipeline", fn);
  // get_allocations(*refs): the op allocates its own buffers.
  callable->members["get_allocations"] = std::make_shared<BuiltinObj>(
      "get_allocations", [](Elaborator &, CallArgs &) -> Obj { return makeTuple({}); });
  return callable;
}

Obj emitPipeline(Elaborator &el, CallArgs &args, bool warpSpecialized) {
  std::vector<Param> params{{"body"},
                            {"grid", nullptr, true},
                            {"in_specs", makeTuple({}), true},
                            {"out_specs", makeTuple({}), true},
                            {"max_concurrent_steps", makeInt(warpSpecialized ? 2 : 1), true}};
  if (warpSpecialized) {
    for (const char *p : {"memory_registers", "wg_axis", "num_compute_wgs"})
      params.push_back(Param{p, nullptr, true});
    for (const char *p : {"pipeline_state", "compute_context", "memory_thread_idx"})
      params.push_back(Param{p, none(), true});
    params.push_back(Param{"manual_consumed_barriers", makeBool(false), true});
  } else {
    params.push_back(Param{"init_carry", none(), true});
    params.push_back(Param{"delay_release", none(), true});
  }
  BoundArgs a = el.bind(args, params);
  auto spec = newPipelineSpec(el, a, args.range);
  spec->maxConcurrentSteps = el.toInt(a[4], a.range(4), "max_concurrent_steps");
  if (spec->maxConcurrentSteps < 1)
    el.fail(a.range(4), "max_concurrent_steps must be at least 1");
  spec->warpSpecialized = warpSpecialized;
  if (warpSpecialized) {
    spec->memoryRegisters = el.toInt(a[5], a.range(5), "memory_registers");
    spec->wgAxis = el.toStr(a[6], a.range(6), "wg_axis");
    spec->numComputeWgs = el.toInt(a[7], a.range(7), "num_compute_wgs");
    if (spec->numComputeWgs < 1)
      el.fail(a.range(7), "num_compute_wgs must be at least 1");
    if (!isNone(a[8]))
      el.fail(a.range(8), "pipeline_state= is not supported yet");
    spec->computeContext = a[9];
    spec->memoryThread =
        isNone(a[10]) ? spec->numComputeWgs : el.toInt(a[10], a.range(10), "memory_thread_idx");
    if (spec->memoryThread != spec->numComputeWgs)
      el.fail(a.range(10), "the memory thread must be the last thread (memory_thread_idx=" +
                               std::to_string(spec->numComputeWgs) + "), as in Mosaic GPU");
    spec->manualConsumed = el.truthy(a[11], a.range(11));
    if (spec->manualConsumed)
      for (const Obj &s : spec->inSpecs)
        if (llvm::cast<BlockSpecObj>(*s).memorySpace == MemorySpace::GPUGlobal)
          el.fail(llvm::cast<BlockSpecObj>(*s).range,
                  "with manual_consumed_barriers=True every input is pipelined: an input left "
                  "in GMEM has no slot to release");
    for (const Obj &s : spec->inSpecs)
      if (isNone(llvm::cast<BlockSpecObj>(*s).indexMap))
        el.fail(llvm::cast<BlockSpecObj>(*s).range,
                "a warp-specialized pipeline only supports inputs whose blocks depend on the grid "
                "(give an index_map)");
  } else {
    spec->initCarry = isNone(a[5]) ? nullptr : a[5];
    if (!isNone(a[6]))
      spec->delayRelease = el.toInt(a[6], a.range(6), "delay_release");
  }
  return pipelineFunction(spec);
}

Obj ndLoop(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"grid"},
                               {"collective_axes", nullptr, true},
                               {"tiling", none(), true},
                               {"init_carry", none(), true},
                               {"include_wave_step", none(), true}});
  SourceRange r = args.range;
  // Extents are Python ints or integer scalars computed in the kernel (a
  // step count read from memory), as in JAX: the loop's arithmetic is the
  // same for both, and folds for the first.
  std::vector<Obj> grid;
  for (const Obj &g : gridExtents(a[0])) {
    auto *array = llvm::dyn_cast<ArrayObj>(g.get());
    if (!array) {
      grid.push_back(makeInt(staticExtent(el, g, a.range(0), "plgpu.nd_loop's grid")));
      continue;
    }
    if (array->rank() != 0 || !isInteger(array->dtype))
      el.fail(a.range(0),
              "a computed plgpu.nd_loop grid extent must be an integer scalar, got " + repr(*g));
    grid.push_back(el.arrays().cast(el.arrays().toArray(g, a.range(0)), DType::I32, r));
  }
  Obj axes = a[1];
  SourceRange axesRange = a.range(1);
  if (!isNone(a[2])) {
    std::vector<int64_t> tiling = el.toShape(a[2], a.range(2), "tiling");
    if (tiling.size() != grid.size())
      el.fail(a.range(2), "tiling " + shapeText(tiling) + " and grid of " +
                              std::to_string(grid.size()) + " extents must have the same length");
    std::vector<Obj> tiled;
    for (size_t i = 0; i < grid.size(); ++i) {
      std::optional<int64_t> extent = el.staticInt(grid[i]);
      if (tiling[i] <= 0 || (extent && *extent % tiling[i]))
        el.fail(a.range(2), "tiling " + shapeText(tiling) + " does not divide the grid's extent " +
                                (extent ? std::to_string(*extent) : std::string("?")));
      tiled.push_back(binaryOperator(el, BinaryOp::FloorDiv, grid[i], makeInt(tiling[i]), r));
    }
    for (int64_t t : tiling)
      tiled.push_back(makeInt(t));
    grid = tiled;
  }
  Obj tilingObj = a[2];
  Obj init = a[3];
  return std::make_shared<BuiltinObj>(
      "plgpu.nd_loop(...)", [=](Elaborator &el, CallArgs &inner) -> Obj {
        if (inner.positional.size() != 1)
          el.fail(inner.range, "plgpu.nd_loop(...) decorates a loop body");
        Obj body = inner.positional[0];
        Obj axisIndexObj = axisIndex(el, axes, axesRange);
        int64_t axisSizeValue = axisSize(el, axes, axesRange);
        Obj total = makeInt(1);
        for (const Obj &g : grid)
          total = binaryOperator(el, BinaryOp::Mul, total, g, r);
        // Steps axis_index, axis_index + size, ... below the grid's size.
        Obj upper = binaryOperator(
            el, BinaryOp::Add,
            binaryOperator(el, BinaryOp::FloorDiv, total, makeInt(axisSizeValue), r),
            el.arrays().cast(
                el.arrays().toArray(compareOperator(el, ast::CompareOp::Lt, axisIndexObj,
                                                    binaryOperator(el, BinaryOp::Mod, total,
                                                                   makeInt(axisSizeValue), r),
                                                    r),
                                    r),
                DType::I32, r),
            r);
        std::vector<int64_t> tiling;
        if (!isNone(tilingObj))
          tiling = el.toShape(tilingObj, r, "tiling");
        bool carried = !isNone(init);
        auto wrapper = std::make_shared<BuiltinObj>(
            "nd_loop body", [=](Elaborator &el, CallArgs &loop) -> Obj {
              Obj wave = loop.positional[0];
              Obj step =
                  binaryOperator(el, BinaryOp::Add,
                                 binaryOperator(el, BinaryOp::Mul, wave, makeInt(axisSizeValue), r),
                                 axisIndexObj, r);
              std::vector<Obj> index(grid.size());
              for (size_t d = grid.size(); d-- > 0;) {
                index[d] = binaryOperator(el, BinaryOp::Mod, step, grid[d], r);
                step = binaryOperator(el, BinaryOp::FloorDiv, step, grid[d], r);
              }
              if (!tiling.empty()) {
                std::vector<Obj> untiled;
                size_t n = tiling.size();
                for (size_t i = 0; i < n; ++i)
                  untiled.push_back(binaryOperator(
                      el, BinaryOp::Add, index[n + i],
                      binaryOperator(el, BinaryOp::Mul, index[i], makeInt(tiling[i]), r), r));
                index = untiled;
              }
              Obj info = ndLoopInfo(el, makeTuple(index), wave, upper, r);
              CallArgs call;
              call.range = r;
              call.callee = "nd_loop body";
              call.addPositional(info, r);
              if (carried) {
                call.keywords.emplace_back("carry", loop.positional[1]);
                call.keywordRanges.push_back(r);
              }
              Obj result = el.call(body, call);
              return carried ? result : loop.positional[1];
            });
        Obj result = el.foriLoop(makeInt(0), upper, wrapper, carried ? init : makeTuple({}), r);
        return carried ? result : none();
      });
}

/// plgpu.planar_snake(lin_idx, shape, minor_dim, tile_width): the grid
/// order of JAX's helpers.py that keeps neighbouring steps on neighbouring
/// tiles. The minor dimension is cut into strips of `tile_width`; within a
/// strip the index runs along the minor dimension first, and every other
/// strip walks the major dimension backwards. A last, narrower strip takes
/// what is left. `shape` is static here.
Obj planarSnake(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"lin_idx"}, {"shape"}, {"minor_dim"}, {"tile_width"}});
  SourceRange r = args.range;
  std::vector<int64_t> shape = el.toShape(a[1], a.range(1), "shape");
  if (shape.size() != 2)
    el.fail(a.range(1), "plgpu.planar_snake walks a 2-D shape, got " + shapeText(shape));
  int64_t minorDim = el.toInt(a[2], a.range(2), "minor_dim");
  if (minorDim != 0 && minorDim != 1)
    el.fail(a.range(2), "minor_dim must be 0 or 1, got " + std::to_string(minorDim));
  int64_t width = el.toInt(a[3], a.range(3), "tile_width");
  if (width <= 0)
    el.fail(a.range(3), "tile_width must be positive, got " + std::to_string(width));
  int64_t major = shape[1 - minorDim], minor = shape[minorDim];
  auto op = [&](ast::BinaryOp kind, const Obj &x, int64_t y) {
    return binaryOperator(el, kind, x, makeInt(y), r);
  };
  Obj lin = el.arrays().cast(el.arrays().toArray(a[0], a.range(0)), DType::I32, r);
  Obj minorTile = op(ast::BinaryOp::FloorDiv, lin, width * major);
  Obj evenTile =
      compareOperator(el, ast::CompareOp::Eq, op(ast::BinaryOp::Mod, minorTile, 2), makeInt(0), r);
  // The (minor, major) coordinates of `index` within a strip `w` wide.
  auto coordinates = [&](const Obj &index, int64_t w) -> std::pair<Obj, Obj> {
    Obj minorWithin = op(ast::BinaryOp::Mod, index, w);
    Obj majorWithin = op(ast::BinaryOp::Mod, op(ast::BinaryOp::FloorDiv, index, w), major);
    Obj minorAt = binaryOperator(el, ast::BinaryOp::Add, op(ast::BinaryOp::Mul, minorTile, width),
                                 minorWithin, r);
    Obj backwards = binaryOperator(el, ast::BinaryOp::Sub, makeInt(major - 1), majorWithin, r);
    return {minorAt, el.arrays().where(evenTile, majorWithin, backwards, r)};
  };
  int64_t fullTiles = minor / width, fullElements = fullTiles * width * major;
  auto [minorAt, majorAt] = coordinates(lin, width);
  if (fullTiles * width != minor) {
    auto [restMinor, restMajor] =
        coordinates(op(ast::BinaryOp::Sub, lin, fullElements), minor - fullTiles * width);
    Obj full = compareOperator(el, ast::CompareOp::Lt, lin, makeInt(fullElements), r);
    minorAt = el.arrays().where(full, minorAt, restMinor, r);
    majorAt = el.arrays().where(full, majorAt, restMajor, r);
  }
  return minorDim == 0 ? makeTuple({minorAt, majorAt}) : makeTuple({majorAt, minorAt});
}

/// Pallas's _partition_grid for pltpu.emit_pipeline(core_axis=AXIS): the
/// kernel's grid axis AXIS runs one program per TensorCore
/// (pltpu.CORE_PARALLEL on a megacore chip), and each core's pipeline
/// takes a share of one parallel axis of its own grid: the first whose
/// size the cores divide, else the largest, the first `rem` cores taking
/// one step more.
void partitionAcrossCores(Elaborator &el, PipelineSpec &spec, const Obj &coreAxis,
                          SourceRange axisRange, const Obj &semantics, SourceRange r) {
  if (llvm::isa<SequenceObj>(coreAxis.get()) || llvm::isa<StrObj>(coreAxis.get()))
    el.fail(axisRange, "pltpu.emit_pipeline(core_axis=) takes one grid axis of the kernel (an "
                       "int); core axes by name or several are not supported");
  CallArgs axisArgs;
  axisArgs.range = axisRange;
  axisArgs.addPositional(coreAxis, axisRange);
  std::optional<int64_t> numCores = el.staticInt(numPrograms(el, axisArgs));
  if (!numCores)
    el.raise(axisRange, "NotImplementedError",
             "Cannot partition grid over dynamic number of cores: core_axis=" + repr(*coreAxis));
  if (*numCores == 1)
    return;
  Obj coreId = programId(el, axisArgs);
  size_t rank = spec.grid.size();
  std::vector<bool> parallel(rank, false);
  if (!isNone(semantics)) {
    std::vector<Obj> items = llvm::isa<SequenceObj>(semantics.get())
                                 ? llvm::cast<SequenceObj>(*semantics).items
                                 : std::vector<Obj>{semantics};
    if (items.size() != rank)
      el.raise(r, "ValueError", "dimension_semantics must be the same length as grid.");
    for (size_t d = 0; d < rank; ++d)
      parallel[d] = el.toStr(items[d], r, "dimension semantics") == "parallel";
  }
  if (llvm::none_of(parallel, [](bool p) { return p; }))
    el.raise(r, "NotImplementedError",
             "Cannot partition over cores without parallel grid dimensions: "
             "dimension_semantics=" +
                 repr(*semantics));
  auto isStatic = [&](size_t d) { return spec.grid[d] != mlir::ShapedType::kDynamic; };
  spec.gridOffsets.assign(rank, nullptr);
  auto mul = [&](const Obj &x, int64_t y) {
    return binaryOperator(el, BinaryOp::Mul, x, makeInt(y), r);
  };
  for (size_t d = 0; d < rank; ++d)
    if (parallel[d] && isStatic(d) && spec.grid[d] % *numCores == 0) {
      spec.grid[d] /= *numCores;
      spec.extents[d] = makeInt(spec.grid[d]);
      spec.gridOffsets[d] = mul(coreId, spec.grid[d]);
      return;
    }
  // No parallel axis the cores divide: the largest static one, split as
  // evenly as it goes. (Pallas also splits an axis of computed size; pkc
  // does not yet.)
  std::optional<size_t> split;
  for (size_t d = 0; d < rank; ++d)
    if (parallel[d] && isStatic(d) && (!split || spec.grid[d] > spec.grid[*split]))
      split = d;
  if (!split)
    el.fail(r, "pltpu.emit_pipeline(core_axis=) splits a parallel grid axis of static size; "
               "this pipeline's parallel axes are computed in the kernel");
  int64_t base = spec.grid[*split] / *numCores, rem = spec.grid[*split] % *numCores;
  Obj early = compareOperator(el, ast::CompareOp::Lt, coreId, makeInt(rem), r);
  Obj steps = el.arrays().where(early, makeInt(base + 1), makeInt(base), r);
  Obj earlyOffset = binaryOperator(el, BinaryOp::Mul, coreId, steps, r);
  Obj lateOffset = binaryOperator(el, BinaryOp::Add, mul(coreId, base), makeInt(rem), r);
  Obj offset = el.arrays().where(early, earlyOffset, lateOffset, r);
  // The axis's size is now computed: it joins the computed extents, in
  // axis order.
  size_t before = 0;
  for (size_t d = 0; d < *split; ++d)
    before += !isStatic(d);
  mlir::OpBuilder &b = el.builder();
  mlir::Value extent = el.arrays().cast(el.arrays().toArray(steps, r), DType::I32, r)->value;
  spec.dynamicGrid.insert(spec.dynamicGrid.begin() + before,
                          mlir::arith::IndexCastOp::create(b, el.loc(r), b.getIndexType(), extent));
  spec.grid[*split] = mlir::ShapedType::kDynamic;
  spec.extents[*split] = steps;
  spec.gridOffsets[*split] = offset;
}

/// pltpu.emit_pipeline(body, *, grid, in_specs, out_specs, ...).
Obj emitTpuPipeline(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"body"},
                               {"grid", nullptr, true},
                               {"in_specs", makeTuple({}), true},
                               {"out_specs", makeTuple({}), true},
                               {"tiling", none(), true},
                               {"core_axis", none(), true},
                               {"core_axis_name", none(), true},
                               {"dimension_semantics", none(), true},
                               {"trace_scopes", makeBool(true), true},
                               {"no_pipelining", makeBool(false), true}});
  if (!isNone(a[5]) && !isNone(a[6]))
    el.raise(args.range, "ValueError", "core_axis and core_axis_name cannot both be provided.");
  // core_axis_name= names the TensorCore mesh's axis of a pl.kernel, whose
  // cores are the programs of its kernel's grid axis 0 (TpuKernel.cpp).
  Obj coreAxis = a[5];
  SourceRange coreAxisRange = a.range(5);
  if (!isNone(a[6])) {
    if (!tensorCoreAxisSize(el, a[6]))
      el.fail(a.range(6), "pltpu.emit_pipeline(core_axis_name=) names the axis of a TensorCore "
                          "mesh, inside pl.kernel(mesh=pltpu.create_tensorcore_mesh(...)); " +
                              repr(*a[6]) + " is not one here");
    coreAxis = makeInt(0);
    coreAxisRange = a.range(6);
  }
  auto spec = newPipelineSpec(el, a, args.range);
  spec->tpu = true;
  if (!isNone(coreAxis))
    partitionAcrossCores(el, *spec, coreAxis, coreAxisRange, a[7], args.range);
  el.truthy(a[9], a.range(9)); // no_pipelining: pkc's TPU pipelines do not overlap yet
  spec->maxConcurrentSteps = 1;  // one buffer per operand (LowerPipeline.cpp)
  return pipelineFunction(spec);
}

} // namespace

Obj emitMosaicGpuPipeline(Elaborator &el, CallArgs &args) { return emitPipeline(el, args, false); }

void defineTpuPipelines(Elaborator &el, NamespaceObj &tpu) {
  define(tpu, "emit_pipeline", emitTpuPipeline);
}

void defineMosaicGpuPipelines(Elaborator &el, NamespaceObj &n) {
  define(n, "emit_pipeline",
         [](Elaborator &el, CallArgs &args) { return emitPipeline(el, args, false); });
  define(n, "emit_pipeline_warp_specialized",
         [](Elaborator &el, CallArgs &args) { return emitPipeline(el, args, true); });
  define(n, "nd_loop", ndLoop);
  define(n, "planar_snake", planarSnake);
  // plgpu.NDLoopInfo(index, local_index, num_local_steps): what nd_loop
  // hands its body, a frozen dataclass as in JAX (kernels make their own
  // for a grid without a loop, and dataclasses.replace its index).
  auto info = std::make_shared<ClassObj>();
  info->name = "NDLoopInfo";
  for (const char *field : {"index", "local_index", "num_local_steps"})
    info->annotated.push_back({field, nullptr, nullptr});
  makeDataclass(el, info, /*frozen=*/true, /*kwOnly=*/false, SourceRange());
  n.members["NDLoopInfo"] = info;
}

Obj ndLoopInfo(Elaborator &el, const Obj &index, const Obj &localIndex, const Obj &numLocalSteps,
               SourceRange r) {
  Obj cls =
      getAttribute(el, el.importModule("jax.experimental.pallas.mosaic_gpu", r), "NDLoopInfo", r);
  return callAt(el, cls, {index, localIndex, numLocalSteps}, {}, r);
}

} // namespace pk::elab
