//===- HostProgram.cpp ----------------------------------------------------===//
#include "backends/cuda/HostProgram.h"

#include "backends/cuda/BufferViews.h"
#include "backends/cuda/MeshTma.h"
#include "ir/DTypeMapping.h"

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

/// The manifest's description of a tensor map parameter: the runtime
/// encodes it at launch over `buffer`.
backends::TensorMapArg tensorMapArg(const MeshTensorMap &map, BufferRef buffer, MLIRContext *ctx) {
  backends::TensorMapArg arg;
  arg.buffer = buffer;
  arg.dtype = *dtypeOf(map.element);
  int64_t stride = map.element.getIntOrFloatBitWidth() < 8 ? 1 : map.element.getIntOrFloatBitWidth() / 8;
  for (size_t d = map.shape.size(); d-- > 0;) {
    arg.shape.insert(arg.shape.begin(), backends::SizeExpr::constant(map.shape[d], ctx));
    if (d + 1 < map.shape.size())
      arg.strides.insert(arg.strides.begin(), backends::SizeExpr::constant(stride, ctx));
    stride *= map.shape[d];
  }
  arg.box = map.box;
  arg.swizzle = map.swizzle == 128  ? rt::TmaSwizzle::B128
                : map.swizzle == 64 ? rt::TmaSwizzle::B64
                : map.swizzle == 32 ? rt::TmaSwizzle::B32
                                    : rt::TmaSwizzle::None;
  return arg;
}

backends::CudaProgram buildProgram(pk::ExportOp exportOp, const std::map<Operation *, LaunchPlan> &plans) {
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

std::vector<backends::CudaProgram> buildHostPrograms(ModuleOp module,
                                                     const std::map<Operation *, LaunchPlan> &plans) {
  std::vector<backends::CudaProgram> programs;
  for (auto exportOp : module.getOps<pk::ExportOp>())
    programs.push_back(buildProgram(exportOp, plans));
  return programs;
}

} // namespace pk::gpu
