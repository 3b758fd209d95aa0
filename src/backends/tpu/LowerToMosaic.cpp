//===- LowerToMosaic.cpp - pk-tpu-lower-to-mosaic -------------------------===//
//
// Builds, per pallas_call, the module Pallas's Mosaic lowering builds
// (lower_jaxpr_into_pipelined_module): the kernel function with its
// attributes, then one transform function per window. Bodies are lowered
// by BodyLowering.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"
#include "backends/tpu/Passes.h"
#include "backends/tpu/Rules.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace pk::backends::tpu {

#define GEN_PASS_DEF_PKTPULOWERTOMOSAIC
#include "backends/tpu/Passes.h.inc"

using namespace mlir;

namespace {

/// The serialization version of Mosaic's dialect that the text follows
/// (jaxlib 0.10); Mosaic upgrades older versions when it reads them.
constexpr int64_t kMosaicVersion = 11;

/// How a window's axes sit in its memref: squeezed block axes as -1.
SmallVector<int> refAxes(pk::BlockSpecAttr spec) {
  SmallVector<int> axes;
  int next = 0;
  for (unsigned d = 0; d < spec.getRank(); ++d)
    axes.push_back(spec.isSqueezed(d) ? -1 : next++);
  return axes;
}

RefBinding binding(Value memref, Value pkRef, pk::BlockSpecAttr spec = {}) {
  auto ref = llvm::cast<pk::RefType>(pkRef.getType());
  if (!spec)
    return wholeRefBinding(memref, ref);
  return {memref, refAxes(spec), ref.getElementType().isInteger(1)};
}

DictionaryAttr windowParams(OpBuilder &b, const Window &w, unsigned gridRank) {
  if (!w.windowed)
    return b.getDictionaryAttr({}); // ANY / HBM: reached by DMA, not windowed
  NamedAttrList params;
  if (w.meshWhole) {
    SmallVector<AffineExpr> zeros(w.spec.getRank(), getAffineConstantExpr(0, b.getContext()));
    params.append("transform_indices",
                  AffineMapAttr::get(AffineMap::get(gridRank, 0, zeros, b.getContext())));
    return params.getDictionary(b.getContext());
  }
  params.append("transform_indices",
                FlatSymbolRefAttr::get(b.getContext(), "transform_" + std::to_string(w.specIndex)));
  params.append("window_bounds", b.getDenseI64ArrayAttr(w.windowBounds));
  if (w.elementWindow) {
    SmallVector<int64_t> low, high;
    for (unsigned d = 0; d < w.spec.getRank(); ++d) {
      bool element = w.spec.isElement(d);
      low.push_back(element ? w.spec.getPaddingLow()[d] : 0);
      high.push_back(element ? w.spec.getPaddingHigh()[d] : 0);
    }
    params.append("window_kind", mosaic::ElementWindowAttr::get(b.getContext(), low, high));
  }
  if (int64_t buffers = w.pipelineBuffers())
    params.append("pipeline_mode",
                  mosaic::PipelineModeAttr::get(
                      b.getContext(), buffers == 1 ? mosaic::PipelineMode::Synchronous
                                                   : mosaic::PipelineMode::DoubleBuffered));
  return params.getDictionary(b.getContext());
}

/// Removes ops whose results nothing uses (an index_map region computes
/// every computed spec's indices; a transform function returns one's).
void eraseDeadOps(Region &region) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> ops;
    region.walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
  }
}

LogicalResult buildTransform(OpBuilder &mb, const KernelPlan &plan, const Window &w) {
  MLIRContext *ctx = mb.getContext();
  Location loc = plan.call.getLoc();
  unsigned g = plan.grid.size();
  SmallVector<Type> inputs(g, IntegerType::get(ctx, 32));
  inputs.append(plan.prefetchTypes.begin(), plan.prefetchTypes.end());
  SmallVector<Type> results(w.spec.getRank(), IntegerType::get(ctx, 32));
  auto func = func::FuncOp::create(mb, loc, "transform_" + std::to_string(w.specIndex),
                                   FunctionType::get(ctx, inputs, results));
  Block *entry = func.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  pk::PallasCallOp call = plan.call;
  SmallVector<Value> grid(entry->getArguments().take_front(g));
  BodyLowering lowering(b, plan, grid, plan.hasSymbolTable() ? entry->getArgument(g) : Value());

  if (w.spec.hasAffineIndexMap()) {
    SmallVector<Value> indices;
    for (AffineExpr e : w.spec.getIndexMap().getResults())
      indices.push_back(lowering.affineValue(e, grid, loc));
    func::ReturnOp::create(b, loc, indices);
    return success();
  }

  // A computed index map: the call's index_map region yields the indices
  // of every computed spec, in operand order; keep this spec's.
  Block &region = call.getIndexMap().front();
  for (unsigned i = 0; i < g; ++i)
    lowering.map(region.getArgument(i), entry->getArgument(i));
  unsigned firstPrefetch = g + (plan.hasSymbolTable() ? 1 : 0);
  for (unsigned i = 0; i < call.getNumScalarPrefetch(); ++i)
    lowering.bindRef(region.getArgument(g + i),
                     binding(entry->getArgument(firstPrefetch + i), region.getArgument(g + i)));
  unsigned offset = 0;
  // Named: a range over ArrayRef(call.getAllSpecs()) would outlive the
  // vector it points into (the range-init's temporaries end before the loop).
  SmallVector<pk::BlockSpecAttr> specs = call.getAllSpecs();
  for (pk::BlockSpecAttr spec : ArrayRef(specs).take_front(w.specIndex))
    if (!spec.hasAffineIndexMap())
      offset += spec.getRank();
  lowering.onYield = [&](pk::YieldOp yield) -> LogicalResult {
    SmallVector<Value> indices;
    for (Value v : yield.getValues().slice(offset, w.spec.getRank()))
      indices.push_back(lowering.lookup(v));
    func::ReturnOp::create(b, yield.getLoc(), indices);
    return success();
  };
  if (failed(lowering.lowerOps(region)))
    return failure();
  eraseDeadOps(func.getBody());
  return success();
}

LogicalResult buildKernelModule(OpBuilder &b, const KernelPlan &plan) {
  pk::PallasCallOp call = plan.call;
  if (failed(checkCall(call)))
    return failure();
  MLIRContext *ctx = b.getContext();
  Location loc = plan.call.getLoc();
  auto module = ModuleOp::create(b, loc, StringRef(plan.moduleName));
  module->setAttr("stable_mosaic.version", b.getI64IntegerAttr(kMosaicVersion));
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());

  auto kernel = func::FuncOp::create(mb, loc, plan.kernelName, plan.kernelType(ctx));
  SmallVector<Attribute> semantics;
  for (mosaic::DimensionSemantics s : plan.semantics)
    semantics.push_back(mosaic::DimensionSemanticsAttr::get(ctx, s));
  kernel->setAttr("dimension_semantics", b.getArrayAttr(semantics));
  kernel->setAttr("scalar_prefetch", b.getI64IntegerAttr(plan.prefetchTypes.size()));
  kernel->setAttr("scratch_operands", b.getI64IntegerAttr(plan.scratchTypes.size()));
  kernel->setAttr("tpu.core_type", mosaic::CoreTypeAttr::get(ctx, mosaic::CoreType::TC));
  if (plan.hasGrid()) {
    // A grid-free call has neither (pk-tpu-check made its windows whole).
    kernel->setAttr("iteration_bounds", b.getDenseI64ArrayAttr(plan.iterationBounds));
    SmallVector<Attribute> params;
    for (const Window &w : plan.windows)
      params.push_back(windowParams(b, w, plan.grid.size()));
    kernel->setAttr("window_params", b.getArrayAttr(params));
  }

  Block *entry = kernel.addEntryBlock();
  OpBuilder kb = OpBuilder::atBlockEnd(entry);
  unsigned g = plan.grid.size();
  SmallVector<Value> grid(entry->getArguments().take_front(g));
  BodyLowering lowering(kb, plan, grid,
                        plan.hasSymbolTable() ? entry->getArgument(g) : Value());
  Block &body = call.getKernelBlock();
  unsigned arg = g + (plan.hasSymbolTable() ? 1 : 0);
  unsigned prefetch = call.getNumScalarPrefetch();
  for (unsigned i = 0; i < prefetch; ++i)
    lowering.bindRef(body.getArgument(i), binding(entry->getArgument(arg++), body.getArgument(i)));
  for (const Window &w : plan.windows) {
    Value ref = body.getArgument(prefetch + w.specIndex);
    lowering.bindRef(ref, binding(entry->getArgument(arg++), ref, w.spec));
  }
  for (unsigned i = prefetch + plan.windows.size(); i < body.getNumArguments(); ++i) {
    if (llvm::isa<pk::SemaphoreType>(body.getArgument(i).getType()))
      lowering.map(body.getArgument(i), entry->getArgument(arg++));
    else
      lowering.bindRef(body.getArgument(i),
                       binding(entry->getArgument(arg++), body.getArgument(i)));
  }
  lowering.onYield = [&](pk::YieldOp yield) -> LogicalResult {
    func::ReturnOp::create(kb, yield.getLoc());
    return success();
  };
  if (failed(lowering.lowerOps(body)))
    return failure();

  if (plan.hasGrid())
    for (const Window &w : plan.windows)
      if (w.windowed && !w.meshWhole && failed(buildTransform(mb, plan, w)))
        return failure();
  return success();
}

struct LowerToMosaicPass : impl::PkTpuLowerToMosaicBase<LowerToMosaicPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<KernelPlan> plans = planKernels(module);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    for (const KernelPlan &plan : plans)
      if (failed(buildKernelModule(b, plan)))
        return signalPassFailure();
    // Only the Mosaic modules remain: exports and pk attributes go (JAX
    // does not know the pk dialect).
    for (auto exportOp : llvm::make_early_inc_range(module.getOps<pk::ExportOp>()))
      exportOp.erase();
    for (NamedAttribute attr : llvm::to_vector(module->getDiscardableAttrs()))
      module->removeDiscardableAttr(attr.getName());
  }
};

} // namespace

} // namespace pk::backends::tpu
