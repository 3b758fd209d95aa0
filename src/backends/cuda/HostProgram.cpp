//===- HostProgram.cpp ----------------------------------------------------===//
#include "backends/cuda/HostProgram.h"

#include "backends/cuda/Async.h"
#include "backends/cuda/BufferViews.h"
#include "backends/cuda/MeshTma.h"
#include "ir/DTypeMapping.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/DenseMap.h"

namespace pk::gpu {

using namespace mlir;
using backends::BufferRef;

namespace {

std::vector<backends::SizeExpr> shapeOf(AffineMap shape) {
  std::vector<backends::SizeExpr> dims;
  for (AffineExpr e : shape.getResults())
    dims.push_back({e});
  return dims;
}

std::vector<backends::SizeExpr> bytesOf(Value array) {
  auto type = llvm::cast<RankedTensorType>(array.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  std::vector<backends::SizeExpr> bytes = shapeOf(symbolicShapeOf(array));
  bytes.push_back(backends::SizeExpr::constant(bits < 8 ? 1 : bits / 8, array.getContext()));
  return bytes;
}

/// A tensor map over the whole row-major array in `buffer` (of `shape`,
/// `element`s): `box` boxes under `swizzle` bytes, which the runtime
/// encodes at launch.
backends::TensorMapArg tensorMapOver(BufferRef buffer, Type element,
                                     const std::vector<backends::SizeExpr> &shape,
                                     ArrayRef<int64_t> box, int64_t swizzle, MLIRContext *ctx) {
  backends::TensorMapArg arg;
  arg.buffer = buffer;
  arg.dtype = *dtypeOf(element);
  arg.shape = shape;
  // Each dimension's pitch is the element's bytes times the sizes inside it.
  unsigned bits = element.getIntOrFloatBitWidth();
  AffineExpr pitch = getAffineConstantExpr(bits < 8 ? 1 : bits / 8, ctx);
  for (size_t d = shape.size(); d-- > 1;) {
    pitch = pitch * shape[d].expr;
    arg.strides.insert(arg.strides.begin(), {pitch});
  }
  arg.box.assign(box.begin(), box.end());
  arg.swizzle = swizzle == 128  ? rt::TmaSwizzle::B128
                : swizzle == 64 ? rt::TmaSwizzle::B64
                : swizzle == 32 ? rt::TmaSwizzle::B32
                                : rt::TmaSwizzle::None;
  return arg;
}

/// The manifest's description of a Mosaic GPU kernel's tensor map
/// parameter: the runtime encodes it at launch over `buffer`.
backends::TensorMapArg tensorMapArg(const MeshTensorMap &map, BufferRef buffer, MLIRContext *ctx) {
  std::vector<backends::SizeExpr> shape;
  for (int64_t d : map.shape)
    shape.push_back(backends::SizeExpr::constant(d, ctx));
  return tensorMapOver(buffer, map.element, shape, map.box, map.swizzle, ctx);
}

backends::CudaProgram
buildProgram(pk::ExportOp exportOp, const std::map<Operation *, LaunchPlan> &plans,
             std::map<std::string, std::vector<OperandArray>> &kernelOperands) {
  backends::CudaProgram program;
  program.exportName = exportOp.getSymName().str();
  unsigned numArgs = exportOp.getArgumentTypes().size();
  Block &body = exportOp.getBody().front();
  auto returnOp = llvm::cast<pk::ReturnOp>(body.getTerminator());

  llvm::DenseMap<Value, BufferRef> buffers;
  for (unsigned i = 0; i < numArgs; ++i)
    buffers[body.getArgument(i)] = {BufferRef::Kind::Param, i};
  // Results go straight to the output param they are returned as (the
  // first, if returned twice); others live in temporaries.
  llvm::DenseMap<Value, unsigned> returnedAs;
  for (auto [j, v] : llvm::enumerate(returnOp.getOperands()))
    returnedAs.try_emplace(v, numArgs + static_cast<unsigned>(j));

  for (Operation &op : body.without_terminator()) {
    auto call = llvm::dyn_cast<pk::PallasCallOp>(op);
    auto mesh = llvm::dyn_cast<pk::MeshKernelOp>(op);
    if (!call && !mesh)
      continue;
    if (std::optional<uint64_t> offset = call ? bufferViewOffset(call) : std::nullopt) {
      // A reshape or contiguous slice of a dense array: bytes of its buffer
      // under another shape.
      BufferRef view = buffers[call.getInputs()[0]];
      view.offset += *offset;
      buffers[call.getResult(0)] = view;
      continue;
    }
    ValueRange inputs = call ? call.getInputs() : mesh.getInputs();
    ValueRange outputs = call ? call.getOutputs() : mesh.getOutputs();
    ArrayRef<int64_t> aliases = call ? call.getInputOutputAliases() : mesh.getInputOutputAliases();
    for (Value result : outputs) {
      auto it = returnedAs.find(result);
      if (it != returnedAs.end() && !llvm::isa<BlockArgument>(result)) {
        buffers[result] = {BufferRef::Kind::Param, it->second};
        continue;
      }
      auto type = llvm::cast<RankedTensorType>(result.getType());
      buffers[result] = {BufferRef::Kind::Temp, static_cast<unsigned>(program.temporaries.size())};
      program.temporaries.push_back({*dtypeOf(type.getElementType()), shapeOf(symbolicShapeOf(result))});
    }
    const LaunchPlan &plan = plans.at(&op);
    backends::CudaLaunch launch;
    launch.kernel = plan.kernelName;
    for (unsigned c = 0; c < 3; ++c)
      launch.grid[c] = {plan.cudaSize[c]};
    launch.block[0] = plan.threadsPerBlock();
    launch.cluster[0] = plan.clusterSize;
    // An output aliased to an input starts as a copy of it; the kernel
    // then reads and writes the output's buffer for both.
    llvm::DenseMap<unsigned, BufferRef> inputBuffer;
    for (size_t a = 0; a + 1 < aliases.size(); a += 2) {
      Value input = inputs[aliases[a]], output = outputs[aliases[a + 1]];
      program.steps.push_back(backends::BufferCopy{buffers[input], buffers[output], bytesOf(input)});
      inputBuffer[static_cast<unsigned>(aliases[a])] = buffers[output];
    }
    std::vector<BufferRef> operandBuffers;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto it = inputBuffer.find(static_cast<unsigned>(i));
      operandBuffers.push_back(it != inputBuffer.end() ? it->second : buffers[input]);
    }
    for (Value output : outputs)
      operandBuffers.push_back(buffers[output]);
    if (call) {
      std::vector<OperandArray> &arrays = kernelOperands[plan.kernelName];
      for (ValueRange values : {inputs, outputs})
        for (Value v : values)
          arrays.push_back({shapeOf(symbolicShapeOf(v)),
                            llvm::cast<RankedTensorType>(v.getType()).getElementType()});
    }
    for (const BufferRef &buffer : operandBuffers)
      launch.args.push_back({buffer});
    for (unsigned s = 0; s < exportOp.getNumSymbols(); ++s)
      launch.args.push_back({s});
    if (call)
      for (Value bound : call.getGridBounds()) // read in the kernel (Outline.cpp)
        launch.args.push_back({buffers[bound]});
    if (mesh)
      for (const MeshTensorMap &map : planMeshTma(mesh).tensorMaps)
        launch.args.push_back({tensorMapArg(map, operandBuffers[map.operand], exportOp.getContext())});
    program.steps.push_back(launch);
  }
  // Outputs that are not already in place: an argument returned as is, or
  // an array returned twice.
  for (auto [j, v] : llvm::enumerate(returnOp.getOperands())) {
    BufferRef target{BufferRef::Kind::Param, numArgs + static_cast<unsigned>(j)};
    BufferRef source = buffers[v];
    if (source.kind != target.kind || source.index != target.index || source.offset != target.offset)
      program.steps.push_back(backends::BufferCopy{source, target, bytesOf(v)});
  }
  return program;
}

} // namespace

HostPrograms buildHostPrograms(ModuleOp module, const std::map<Operation *, LaunchPlan> &plans) {
  HostPrograms host;
  for (auto exportOp : module.getOps<pk::ExportOp>())
    host.programs.push_back(buildProgram(exportOp, plans, host.operands));
  return host;
}

LogicalResult addOperandTensorMaps(ModuleOp module, HostPrograms &host) {
  // The launches of each kernel.
  std::map<std::string, std::vector<backends::CudaLaunch *>> launches;
  for (backends::CudaProgram &program : host.programs)
    for (auto &step : program.steps)
      if (auto *launch = std::get_if<backends::CudaLaunch>(&step))
        launches[launch->kernel].push_back(launch);
  LogicalResult result = success();
  module.walk([&](::mlir::gpu::GPUFuncOp func) {
    auto maps = func->getAttrOfType<ArrayAttr>(kOperandTensorMapsAttr);
    auto params = func->getAttrOfType<DenseI64ArrayAttr>(kTensorMapParamsAttr);
    if (!maps)
      return;
    std::string name = func.getName().str();
    auto arrays = host.operands.find(name);
    for (backends::CudaLaunch *launch : launches[name]) {
      for (auto [map, param] : llvm::zip(maps, params.asArrayRef())) {
        ArrayRef<int64_t> fields = llvm::cast<DenseI64ArrayAttr>(map).asArrayRef();
        size_t operand = static_cast<size_t>(fields[0]);
        auto *buffer = operand < launch->args.size()
                           ? std::get_if<backends::BufferRef>(&launch->args[operand].value)
                           : nullptr;
        if (arrays == host.operands.end() || operand >= arrays->second.size() || !buffer ||
            static_cast<size_t>(param) != launch->args.size()) {
          func.emitError("internal error: a tensor map over an operand the launch does not pass");
          result = failure();
          return;
        }
        const OperandArray &array = arrays->second[operand];
        backends::TensorMapArg arg =
            tensorMapOver(*buffer, array.element, array.shape, fields.drop_front(3), fields[1],
                          func.getContext());
        arg.optional = fields[2] != 0;
        launch->args.push_back({arg});
      }
    }
  });
  return result;
}

} // namespace pk::gpu
