//===- TpuManifest.cpp - Describing each export's custom calls ------------===//
#include "backends/tpu/TpuManifest.h"

#include "backends/Manifest.h"
#include "ir/DTypeMapping.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace pk::backends::tpu {

using namespace mlir;
using nlohmann::json;

namespace {

std::vector<std::string> symbolNames(pk::ExportOp exportOp) {
  std::vector<std::string> names;
  for (Attribute s : exportOp.getSymbols())
    names.push_back(llvm::cast<StringAttr>(s).str());
  return names;
}

/// The NumPy name of an array or Ref element type (keeping signedness).
std::string dtypeName(Type element) {
  std::optional<DType> dtype = dtypeOf(element);
  return dtype ? numpyName(*dtype) : "unknown";
}

json shapeJson(AffineMap shape, const std::vector<std::string> &symbols) {
  json dims = json::array();
  for (AffineExpr e : shape.getResults())
    dims.push_back(sizeExprJson(e, symbols));
  return dims;
}

/// Compiler parameters as JSON values.
json attrJson(Attribute attr) {
  if (auto b = llvm::dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = llvm::dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = llvm::dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = llvm::dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto a = llvm::dyn_cast<ArrayAttr>(attr)) {
    json items = json::array();
    for (Attribute item : a)
      items.push_back(attrJson(item));
    return items;
  }
  if (auto d = llvm::dyn_cast<DictionaryAttr>(attr)) {
    json entries = json::object();
    for (NamedAttribute e : d)
      entries[e.getName().str()] = attrJson(e.getValue());
    return entries;
  }
  return nullptr;
}

/// Buffers of one export: params (arguments then results) and temporaries
/// for arrays passed between its pallas_calls.
class Buffers {
public:
  explicit Buffers(pk::ExportOp exportOp) : symbols(symbolNames(exportOp)) {
    for (BlockArgument arg : exportOp.getBody().getArguments())
      buffers[arg] = json{{"param", arg.getArgNumber()}};
    auto ret = llvm::cast<pk::ReturnOp>(exportOp.getBody().front().getTerminator());
    unsigned numArgs = exportOp.getBody().getNumArguments();
    for (auto [k, v] : llvm::enumerate(ret.getResults())) {
      json param = {{"param", numArgs + k}};
      if (!buffers.count(v) && v.getDefiningOp<pk::PallasCallOp>()) {
        buffers[v] = param;
        continue;
      }
      // An argument returned as is, or one array returned twice: copy it.
      copies.push_back({v, param});
    }
  }

  json of(Value array) {
    auto it = buffers.find(array);
    if (it != buffers.end())
      return it->second;
    json temp = {{"temp", temporaries.size()}};
    temporaries.push_back({{"dtype", dtypeName(llvm::cast<ShapedType>(array.getType()).getElementType())},
                           {"shape", shapeJson(symbolicShapeOf(array), symbols)}});
    buffers[array] = temp;
    return temp;
  }

  json copySteps() {
    json steps = json::array();
    for (auto &[from, to] : copies) {
      auto type = llvm::cast<ShapedType>(from.getType());
      // Bytes: the element size times each dimension.
      AffineMap shape = symbolicShapeOf(from);
      std::optional<DType> dtype = dtypeOf(type.getElementType());
      AffineExpr bytes = getAffineConstantExpr(dtype ? byteWidth(*dtype) : 0, from.getContext());
      for (AffineExpr d : shape.getResults())
        bytes = bytes * d;
      steps.push_back({{"copy", {{"from", of(from)}, {"to", to}, {"bytes", sizeExprJson(bytes, symbols)}}}});
    }
    return steps;
  }

  std::vector<std::string> symbols;
  json temporaries = json::array();

private:
  llvm::DenseMap<Value, json> buffers;
  std::vector<std::pair<Value, json>> copies;
};

json windowJson(const KernelPlan &plan, const Window &w, unsigned operand) {
  Type element =
      llvm::cast<pk::RefType>(plan.call.getKernelBlock().getArgument(plan.call.getNumScalarPrefetch() + w.specIndex)
                                  .getType())
          .getElementType();
  json window = {{w.isOutput ? "result" : "operand", operand},
                 {"block_shape", w.windowBounds},
                 {"dtype", element.isInteger(1) ? "int32" : dtypeName(element)},
                 {"memory_space", mosaic::stringifyMemorySpace(w.memorySpace).str()}};
  if (!w.windowed)
    return window;
  window["transform"] = "transform_" + std::to_string(w.specIndex);
  if (int64_t buffers = w.pipelineBuffers())
    window["pipeline_mode"] = buffers == 1 ? "synchronous" : "double_buffered";
  if (w.elementWindow) {
    std::vector<int64_t> low, high;
    for (unsigned d = 0; d < w.spec.getRank(); ++d) {
      low.push_back(w.spec.isElement(d) ? w.spec.getPaddingLow()[d] : 0);
      high.push_back(w.spec.isElement(d) ? w.spec.getPaddingHigh()[d] : 0);
    }
    window["element_window"] = {{"pad_low", low}, {"pad_high", high}};
  }
  return window;
}

json callJson(const KernelPlan &plan, Buffers &buffers) {
  const std::vector<std::string> &symbols = buffers.symbols;
  pk::PallasCallOp call = plan.call;
  // A size computed from data is the 0-d int32 buffer that holds it, both
  // in `grid` and as the custom call's operand (Pallas passes its dynamic
  // grid bounds first, as it does sizes of symbolic axes).
  auto fromData = [&](unsigned axis) -> std::optional<json> {
    auto s = llvm::dyn_cast<AffineSymbolExpr>(plan.grid[axis]);
    if (!s || s.getPosition() < call.getNumExportSymbols())
      return std::nullopt;
    return buffers.of(call.getGridBounds()[s.getPosition() - call.getNumExportSymbols()]);
  };
  json grid = json::array();
  for (auto [axis, e] : llvm::enumerate(plan.grid)) {
    std::optional<json> buffer = fromData(axis);
    grid.push_back(buffer ? *buffer : sizeExprJson(e, symbols)); // not value_or: eager
  }
  json semantics = json::array();
  for (mosaic::DimensionSemantics s : plan.semantics)
    semantics.push_back(mosaic::stringifyDimensionSemantics(s).str());

  // The custom call's operands, in order: dynamic grid sizes, the symbol
  // table, then the call's inputs.
  json operands = json::array();
  for (auto [axis, bound] : llvm::enumerate(plan.iterationBounds)) {
    if (!ShapedType::isDynamic(bound))
      continue;
    if (std::optional<json> buffer = fromData(axis))
      operands.push_back(*buffer);
    else
      operands.push_back({{"grid_size", sizeExprJson(plan.grid[axis], symbols)}});
  }
  if (plan.hasSymbolTable()) {
    json names = json::array();
    for (unsigned s : plan.symbols)
      names.push_back(symbols[s]);
    operands.push_back({{"symbols", names}});
  }
  unsigned firstInput = operands.size();
  for (Value input : call.getInputs())
    operands.push_back(buffers.of(input));
  json results = json::array();
  for (Value output : call.getOutputs())
    results.push_back(buffers.of(output));

  json aliases = json::array();
  ArrayRef<int64_t> pairs = call.getInputOutputAliases();
  for (size_t i = 0; i + 1 < pairs.size(); i += 2)
    aliases.push_back({firstInput + pairs[i], pairs[i + 1]});

  json windows = json::array();
  for (const Window &w : plan.windows)
    windows.push_back(windowJson(plan, w, w.isOutput ? w.index : firstInput + w.index));
  json scratch = json::array();
  for (auto [i, type] : llvm::enumerate(plan.scratchTypes)) {
    Type scratchType = llvm::cast<TypeAttr>(call.getScratchTypes()[i]).getValue();
    if (auto sem = llvm::dyn_cast<pk::SemaphoreType>(scratchType)) {
      scratch.push_back({{"semaphore", sem.isDma() ? "dma" : "regular"},
                         {"shape", type.getShape()},
                         {"memory_space", "semaphore_mem"}});
      continue;
    }
    auto ref = llvm::cast<pk::RefType>(scratchType);
    auto space = llvm::cast<mosaic::MemorySpaceAttr>(type.getMemorySpace());
    scratch.push_back({{"dtype", ref.getElementType().isInteger(1) ? "int32" : dtypeName(ref.getElementType())},
                       {"shape", type.getShape()},
                       {"memory_space", mosaic::stringifyMemorySpace(space.getValue()).str()}});
  }

  json description = {{"module", plan.moduleName},
                      {"kernel", plan.kernelName},
                      {"grid", grid},
                      {"dimension_semantics", semantics},
                      {"operands", operands},
                      {"results", results},
                      {"input_output_aliases", aliases},
                      {"scalar_prefetch", plan.prefetchTypes.size()},
                      {"windows", windows},
                      {"scratch", scratch}};
  if (call->hasAttr("pk.generated")) // array code at export level, not a user kernel
    description["generated"] = true;
  if (DictionaryAttr params = call.getCompilerParamsAttr()) {
    if (Attribute cost = params.get("cost_estimate"))
      description["cost_estimate"] = attrJson(cost);
    if (auto tpuParams = params.getAs<DictionaryAttr>("tpu")) {
      json rest = json::object();
      for (NamedAttribute p : tpuParams)
        if (p.getName() != "dimension_semantics")
          rest[p.getName().str()] = attrJson(p.getValue());
      if (!rest.empty())
        description["compiler_params"] = rest;
    }
  }
  return {{"call", description}};
}

} // namespace

std::vector<json> manifestPrograms(ModuleOp module, const std::vector<KernelPlan> &plans) {
  std::vector<json> programs;
  for (auto exportOp : module.getOps<pk::ExportOp>()) {
    Buffers buffers(exportOp);
    json steps = json::array();
    for (const KernelPlan &plan : plans)
      if (plan.exportOp == exportOp)
        steps.push_back(callJson(plan, buffers));
    for (json &copy : buffers.copySteps())
      steps.push_back(copy);
    programs.push_back({{"export", exportOp.getSymName().str()},
                        {"temporaries", buffers.temporaries},
                        {"steps", steps}});
  }
  return programs;
}

} // namespace pk::backends::tpu
