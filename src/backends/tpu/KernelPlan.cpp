//===- KernelPlan.cpp - Planning each pallas_call's Mosaic kernel ---------===//
#include "backends/tpu/KernelPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/SmallSet.h"

#include <algorithm>

#include <map>

namespace pk::backends::tpu {

using namespace mlir;

MemRefType memrefTypeFor(ArrayRef<int64_t> shape, Type element, mosaic::MemorySpace space) {
  MLIRContext *ctx = element.getContext();
  if (auto integer = llvm::dyn_cast<IntegerType>(element))
    element = IntegerType::get(ctx, integer.getWidth() == 1 ? 32 : integer.getWidth());
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                         mosaic::MemorySpaceAttr::get(ctx, space));
}

MemRefType memrefTypeOf(pk::RefType ref) {
  return memrefTypeFor(ref.getShape(), ref.getElementType(), mosaicMemorySpace(ref.getMemorySpace()));
}

MemRefType semaphoreMemRefType(pk::SemaphoreType type) {
  MLIRContext *ctx = type.getContext();
  Type element = type.isDma() ? Type(mosaic::DMASemaphoreType::get(ctx))
                              : Type(mosaic::SemaphoreType::get(ctx));
  return MemRefType::get(type.getShape(), element, MemRefLayoutAttrInterface(),
                         mosaic::MemorySpaceAttr::get(ctx, mosaic::MemorySpace::SemaphoreMem));
}

mosaic::MemorySpace mosaicMemorySpace(Attribute pkMemorySpace) {
  auto attr = llvm::dyn_cast_or_null<pk::MemorySpaceAttr>(pkMemorySpace);
  if (!attr)
    return mosaic::MemorySpace::VMEM;
  switch (attr.getValue()) {
  case pk::MemorySpace::Any:
    return mosaic::MemorySpace::Any;
  case pk::MemorySpace::SMEM:
    return mosaic::MemorySpace::SMEM;
  case pk::MemorySpace::HBM:
    return mosaic::MemorySpace::HBM;
  case pk::MemorySpace::VMEM:
  case pk::MemorySpace::GPUGlobal: // rejected by pk-tpu-check
  case pk::MemorySpace::GPUShared:
  case pk::MemorySpace::GPUAccumulator:
  case pk::MemorySpace::GPUTensorMemory:
    return mosaic::MemorySpace::VMEM;
  }
  return mosaic::MemorySpace::VMEM;
}

AffineMap symbolicShapeOf(Value array) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(array))
    if (auto exportOp = llvm::dyn_cast<pk::ExportOp>(arg.getOwner()->getParentOp()))
      return exportOp.getArgShape(arg.getArgNumber());
  if (auto call = array.getDefiningOp<pk::PallasCallOp>())
    return call.getOutShape(llvm::cast<OpResult>(array).getResultNumber());
  // Not reached for verified IR; a static shape is the best answer.
  auto type = llvm::cast<RankedTensorType>(array.getType());
  SmallVector<AffineExpr> dims;
  for (int64_t d : type.getShape())
    dims.push_back(getAffineConstantExpr(d, array.getContext()));
  return AffineMap::get(0, 0, dims, array.getContext());
}

std::string sanitizeName(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  return out.empty() ? "kernel" : out;
}

std::optional<SmallVector<mosaic::DimensionSemantics>>
dimensionSemantics(pk::PallasCallOp call, std::string &error) {
  unsigned rank = call.getGridRank();
  // jax.vmap's batch axes (pk.vmap_axes leading axes) are "parallel", as
  // Pallas makes them; the kernel's own axes default to "arbitrary".
  unsigned batch = 0;
  if (auto axes = call->getAttrOfType<IntegerAttr>("pk.vmap_axes"))
    batch = static_cast<unsigned>(std::clamp<int64_t>(axes.getInt(), 0, rank));
  SmallVector<mosaic::DimensionSemantics> given(rank - batch, mosaic::DimensionSemantics::Arbitrary);
  if (DictionaryAttr params = call.getCompilerParamsAttr())
    if (auto tpuParams = params.getAs<DictionaryAttr>("tpu"))
      if (Attribute list = tpuParams.get("dimension_semantics")) {
        auto array = llvm::dyn_cast<ArrayAttr>(list);
        if (!array) {
          error = "dimension_semantics must be a tuple of 'parallel', 'arbitrary' or "
                  "'core_parallel'";
          return std::nullopt;
        }
        given.clear();
        for (Attribute item : array) {
          auto name = llvm::dyn_cast<StringAttr>(item);
          std::optional<mosaic::DimensionSemantics> s =
              name ? mosaic::symbolizeDimensionSemantics(name.getValue()) : std::nullopt;
          if (!s) {
            error = "unknown dimension semantics; expected 'parallel', 'arbitrary', "
                    "'core_parallel' or 'subcore_parallel'";
            return std::nullopt;
          }
          given.push_back(*s);
        }
        if (given.size() > rank) {
          error = "dimension_semantics has " + std::to_string(given.size()) +
                  " entries but the grid has " + std::to_string(rank) + " axes";
          return std::nullopt;
        }
      }
  // Leading axes the list does not describe are batch axes: parallel.
  SmallVector<mosaic::DimensionSemantics> all(rank - given.size(),
                                              mosaic::DimensionSemantics::Parallel);
  all.append(given.begin(), given.end());
  return all;
}

FunctionType KernelPlan::kernelType(MLIRContext *ctx) const {
  SmallVector<Type> inputs(grid.size(), IntegerType::get(ctx, 32));
  inputs.append(prefetchTypes.begin(), prefetchTypes.end());
  for (const Window &w : windows)
    inputs.push_back(w.memref);
  inputs.append(scratchTypes.begin(), scratchTypes.end());
  return FunctionType::get(ctx, inputs, {});
}

namespace {

void collectSymbols(AffineExpr expr, llvm::SmallSet<unsigned, 4> &used) {
  expr.walk([&](AffineExpr e) {
    if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
      used.insert(s.getPosition());
  });
}

/// The block is the whole array and the index map returns zeros.
bool isTrivialWindow(pk::BlockSpecAttr spec, AffineMap arrayShape) {
  if (!spec.hasAffineIndexMap())
    return false;
  for (auto [size, dim] : llvm::zip(spec.getBlockShape(), arrayShape.getResults())) {
    auto c = llvm::dyn_cast<AffineConstantExpr>(dim);
    if (!c || c.getValue() != size)
      return false;
  }
  for (AffineExpr e : spec.getIndexMap().getResults()) {
    auto c = llvm::dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0)
      return false;
  }
  return true;
}

KernelPlan planCall(pk::PallasCallOp call, pk::ExportOp exportOp, unsigned callIndex,
                    unsigned callsInExport) {
  MLIRContext *ctx = call.getContext();
  KernelPlan plan;
  plan.call = call;
  plan.exportOp = exportOp;
  plan.callIndex = callIndex;
  plan.moduleName = exportOp.getSymName().str();
  if (callsInExport > 1)
    plan.moduleName += "." + std::to_string(callIndex);
  plan.kernelName = sanitizeName(call.getName());

  for (AffineExpr e : call.getGrid().getResults()) {
    plan.grid.push_back(e);
    auto c = llvm::dyn_cast<AffineConstantExpr>(e);
    plan.iterationBounds.push_back(c ? c.getValue() : ShapedType::kDynamic);
  }
  std::string error;
  if (auto semantics = dimensionSemantics(call, error))
    plan.semantics = *semantics;
  else // pk-tpu-check reports it; plan something valid regardless.
    plan.semantics.assign(plan.grid.size(), mosaic::DimensionSemantics::Arbitrary);

  // Symbols read at run time: in affine index maps, and in symbolic_size ops
  // of the kernel and the index_map region.
  llvm::SmallSet<unsigned, 4> used;
  SmallVector<pk::BlockSpecAttr> specs = call.getAllSpecs();
  for (pk::BlockSpecAttr spec : specs)
    if (spec.hasAffineIndexMap())
      for (AffineExpr e : spec.getIndexMap().getResults())
        collectSymbols(e, used);
  call->walk([&](pk::SymbolicSizeOp op) {
    for (AffineExpr e : op.getExpr().getResults())
      collectSymbols(e, used);
  });
  for (unsigned s = 0; s < exportOp.getNumSymbols(); ++s)
    if (used.count(s))
      plan.symbols.push_back(s);
  if (plan.hasSymbolTable())
    plan.prefetchTypes.push_back(memrefTypeFor({static_cast<int64_t>(plan.symbols.size())},
                                               IntegerType::get(ctx, 32),
                                               mosaic::MemorySpace::SMEM));

  Block &kernel = call.getKernelBlock();
  unsigned prefetch = call.getNumScalarPrefetch();
  for (unsigned i = 0; i < prefetch; ++i) {
    auto ref = llvm::cast<pk::RefType>(kernel.getArgument(i).getType());
    plan.prefetchTypes.push_back(
        memrefTypeFor(ref.getShape(), ref.getElementType(), mosaic::MemorySpace::SMEM));
  }

  unsigned numInputs = call.getInputs().size();
  for (auto [specIndex, spec] : llvm::enumerate(specs)) {
    Window w;
    w.isOutput = specIndex + prefetch >= numInputs;
    w.index = w.isOutput ? specIndex + prefetch - numInputs : specIndex + prefetch;
    w.specIndex = specIndex;
    w.spec = spec;
    Value array = w.isOutput ? call.getOutputs()[w.index] : call.getInputs()[w.index];
    w.arrayShape = symbolicShapeOf(array);
    w.windowBounds.assign(spec.getBlockShape().begin(), spec.getBlockShape().end());
    w.memorySpace = mosaicMemorySpace(spec.getMemorySpace());
    w.windowed = w.memorySpace != mosaic::MemorySpace::Any &&
                 w.memorySpace != mosaic::MemorySpace::HBM;
    w.trivial = isTrivialWindow(spec, w.arrayShape);
    w.meshWhole = w.windowed && w.trivial && call->hasAttr("pk.core_map");
    w.elementWindow = llvm::any_of(spec.getDimKinds(),
                                   [](pk::BlockDimKind k) { return k == pk::BlockDimKind::Element; });
    if (DictionaryAttr mode = pipelineModeOf(call, specIndex))
      w.bufferCount = mode.getAs<IntegerAttr>("buffer_count").getInt();
    auto ref = llvm::cast<pk::RefType>(kernel.getArgument(prefetch + specIndex).getType());
    w.memref = memrefTypeFor(w.windowBounds, ref.getElementType(), w.memorySpace);
    plan.windows.push_back(w);
  }
  for (Attribute t : call.getScratchTypes()) {
    if (auto sem = llvm::dyn_cast<pk::SemaphoreType>(llvm::cast<TypeAttr>(t).getValue())) {
      plan.scratchTypes.push_back(semaphoreMemRefType(sem));
      continue;
    }
    plan.scratchTypes.push_back(
        memrefTypeOf(llvm::cast<pk::RefType>(llvm::cast<TypeAttr>(t).getValue())));
  }
  return plan;
}

} // namespace

DictionaryAttr pipelineModeOf(pk::PallasCallOp call, unsigned specIndex) {
  auto modes = call->getAttrOfType<ArrayAttr>("pk.pipeline_modes");
  if (!modes || specIndex >= modes.size())
    return nullptr;
  auto mode = llvm::dyn_cast<DictionaryAttr>(modes[specIndex]);
  return mode && !mode.empty() ? mode : nullptr;
}

KernelPlan planKernel(pk::PallasCallOp call) {
  auto exportOp = call->getParentOfType<pk::ExportOp>();
  unsigned calls = 0, index = 0;
  exportOp.walk([&](pk::PallasCallOp c) {
    if (c == call)
      index = calls;
    ++calls;
  });
  return planCall(call, exportOp, index, calls);
}

std::vector<KernelPlan> planKernels(ModuleOp module) {
  std::vector<KernelPlan> plans;
  for (auto exportOp : module.getOps<pk::ExportOp>()) {
    SmallVector<pk::PallasCallOp> calls;
    exportOp.walk([&](pk::PallasCallOp call) { calls.push_back(call); });
    for (auto [i, call] : llvm::enumerate(calls))
      plans.push_back(planCall(call, exportOp, i, calls.size()));
  }
  return plans;
}

} // namespace pk::backends::tpu
