//===- HostProgram.cpp ----------------------------------------------------===//
#include "backends/cuda/HostProgram.h"

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
    if (!call)
      continue;
    for (Value result : call.getOutputs()) {
      auto it = returnedAs.find(result);
      if (it != returnedAs.end() && !llvm::isa<BlockArgument>(result)) {
        buffers[result] = {BufferRef::Kind::Param, it->second};
        continue;
      }
      auto type = llvm::cast<RankedTensorType>(result.getType());
      buffers[result] = {BufferRef::Kind::Temp, static_cast<unsigned>(program.temporaries.size())};
      program.temporaries.push_back({*dtypeOf(type.getElementType()), shapeOf(symbolicShapeOf(result))});
    }
    const LaunchPlan &plan = plans.at(call.getOperation());
    backends::CudaLaunch launch;
    launch.kernel = plan.kernelName;
    for (unsigned c = 0; c < 3; ++c)
      launch.grid[c] = {plan.cudaSize[c]};
    launch.block[0] = plan.threadsPerBlock();
    // An output aliased to an input starts as a copy of it; the kernel
    // then reads and writes the output's buffer for both.
    llvm::DenseMap<unsigned, BufferRef> inputBuffer;
    ArrayRef<int64_t> aliases = call.getInputOutputAliases();
    for (size_t a = 0; a + 1 < aliases.size(); a += 2) {
      Value input = call.getInputs()[aliases[a]], output = call.getOutputs()[aliases[a + 1]];
      program.steps.push_back(backends::BufferCopy{buffers[input], buffers[output], bytesOf(input)});
      inputBuffer[static_cast<unsigned>(aliases[a])] = buffers[output];
    }
    for (auto [i, input] : llvm::enumerate(call.getInputs())) {
      auto it = inputBuffer.find(static_cast<unsigned>(i));
      launch.args.push_back({it != inputBuffer.end() ? it->second : buffers[input]});
    }
    for (Value output : call.getOutputs())
      launch.args.push_back({buffers[output]});
    for (unsigned s = 0; s < exportOp.getNumSymbols(); ++s)
      launch.args.push_back({s});
    program.steps.push_back(launch);
  }
  // Outputs that are not already in place: an argument returned as is, or
  // an array returned twice.
  for (auto [j, v] : llvm::enumerate(returnOp.getOperands())) {
    BufferRef target{BufferRef::Kind::Param, numArgs + static_cast<unsigned>(j)};
    BufferRef source = buffers[v];
    if (source.kind != target.kind || source.index != target.index)
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
