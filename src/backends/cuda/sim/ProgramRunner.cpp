//===- ProgramRunner.cpp - Buffers, copies and launches of an export ------===//
#include "backends/cuda/sim/ProgramRunner.h"
#include "support/ShapeText.h"

#include "mlir/IR/AffineExpr.h"

#include <cstring>

namespace pk::sim {

using backends::BufferRef;

namespace {

int64_t checked(__int128 v, const char *what) {
  if (v > INT64_MAX || v < INT64_MIN)
    throw SimError(std::string("a size expression overflows 64 bits in ") + what);
  return static_cast<int64_t>(v);
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

} // namespace

int64_t evaluateSize(mlir::AffineExpr expr, const std::vector<int64_t> &symbols) {
  using mlir::AffineExprKind;
  if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(expr))
    return c.getValue();
  if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr)) {
    if (s.getPosition() >= symbols.size())
      throw SimError("a size expression names symbol " + std::to_string(s.getPosition()) +
                     ", but the export has " + std::to_string(symbols.size()));
    return symbols[s.getPosition()];
  }
  auto binary = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(expr);
  if (!binary)
    throw SimError("a size expression with a dimension (only symbols are bound)");
  int64_t a = evaluateSize(binary.getLHS(), symbols), b = evaluateSize(binary.getRHS(), symbols);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return checked(static_cast<__int128>(a) + b, "an addition");
  case AffineExprKind::Mul:
    return checked(static_cast<__int128>(a) * b, "a multiplication");
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    if (b <= 0)
      throw SimError("a size expression divides by " + std::to_string(b));
    int64_t q = floorDiv(a, b);
    if (expr.getKind() == AffineExprKind::FloorDiv)
      return q;
    if (expr.getKind() == AffineExprKind::Mod)
      return a - q * b;
    return q + (a - q * b != 0 ? 1 : 0); // ceildiv
  }
  default:
    throw SimError("a size expression of an unknown kind");
  }
}

/// A manifest tensor map encoded for these sizes over the buffer at
/// `address`, checked as cuTensorMapEncodeTiled checks it.
rt::TensorMapDesc tensorMapOf(const backends::TensorMapArg &t, uint64_t address,
                              const std::vector<int64_t> &symbols, const std::string &kernel) {
  rt::TensorMapDesc d;
  d.rank = static_cast<unsigned>(t.shape.size());
  if (d.rank == 0 || d.rank > rt::kMaxTensorMapRank || t.box.size() != d.rank ||
      t.strides.size() + 1 != d.rank)
    throw SimError("kernel '" + kernel + "': a malformed tensor map argument");
  d.elementBytes = byteWidth(t.dtype);
  d.isFloat = kindOf(t.dtype) == DTypeKind::Float;
  d.address = address;
  // The manifest lists dimensions outermost first; CUDA innermost first.
  d.strides[0] = d.elementBytes;
  for (unsigned i = 0; i < d.rank; ++i) {
    d.dims[d.rank - 1 - i] = static_cast<uint64_t>(std::max<int64_t>(0, evaluateSize(t.shape[i].expr, symbols)));
    d.box[d.rank - 1 - i] = static_cast<uint32_t>(t.box[i]);
    d.elementStrides[i] = t.elementStrides.empty() ? 1 : static_cast<uint32_t>(t.elementStrides[d.rank - 1 - i]);
    if (i + 1 < d.rank)
      d.strides[d.rank - 1 - i] =
          static_cast<uint64_t>(std::max<int64_t>(0, evaluateSize(t.strides[i].expr, symbols)));
  }
  d.swizzle = t.swizzle;
  d.interleave = t.interleave;
  d.l2Promotion = t.l2Promotion;
  d.oobFill = t.oobFill;
  d.dataType = 0;
  std::string why = rt::checkTensorMap(d);
  if (!why.empty() && t.optional)
    return rt::TensorMapDesc(); // zeros, as the runtime passes them: rank 0
  if (!why.empty())
    throw SimError("kernel '" + kernel + "': a tensor map argument cuTensorMapEncodeTiled would refuse: " + why);
  return d;
}

std::vector<HostArray> runProgram(Device &device, const backends::CudaProgram &program,
                                  const ExportSignature &signature, const std::vector<HostArray> &inputs) {
  const std::string exportName = "export '" + signature.name + "'";
  if (inputs.size() != signature.arguments.size())
    throw SimError(exportName + " takes " + std::to_string(signature.arguments.size()) + " arrays, got " +
                   std::to_string(inputs.size()));
  // Symbols from the shapes they are bound to.
  std::vector<int64_t> symbols(signature.symbols.size(), 0);
  for (size_t s = 0; s < signature.bindings.size(); ++s) {
    const ExportSignature::Binding &b = signature.bindings[s];
    if (b.argument >= inputs.size() || b.dim >= inputs[b.argument].shape().size())
      throw SimError(exportName + ": symbol '" + signature.symbols[s] + "' is bound to a dimension the input lacks");
    symbols[s] = inputs[b.argument].shape()[b.dim];
  }
  auto shapeOf = [&](const ExportSignature::Array &a) {
    std::vector<int64_t> shape;
    for (mlir::AffineExpr e : a.shape.getResults())
      shape.push_back(evaluateSize(e, symbols));
    return shape;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ExportSignature::Array &a = signature.arguments[i];
    if (inputs[i].dtype() != a.dtype)
      throw SimError(exportName + ": argument '" + a.name + "' must be " + numpyName(a.dtype) + ", got " +
                     numpyName(inputs[i].dtype()));
    std::vector<int64_t> expected = shapeOf(a);
    if (inputs[i].shape() != expected)
      throw SimError(exportName + ": argument '" + a.name + "' has shape " + shapeText(inputs[i].shape()) +
                     ", but the signature and the bound sizes give " + shapeText(expected));
  }

  Memory &memory = device.memory();
  std::vector<uint32_t> params, temps;
  std::vector<std::vector<int64_t>> outputShapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t id = memory.allocate(Space::Global, inputs[i].byteSize(),
                                  "param " + std::to_string(i) + " '" + signature.arguments[i].name + "'",
                                  0, /*initialized=*/true);
    if (inputs[i].byteSize())
      std::memcpy(memory.get(id).bytes.data(), inputs[i].data(), inputs[i].byteSize());
    params.push_back(id);
  }
  for (size_t j = 0; j < signature.results.size(); ++j) {
    const ExportSignature::Array &a = signature.results[j];
    std::vector<int64_t> shape = shapeOf(a);
    HostArray sized(a.dtype, shape);
    params.push_back(memory.allocate(Space::Global, sized.byteSize(),
                                     "param " + std::to_string(inputs.size() + j) + " (output " +
                                         std::to_string(j) + ")",
                                     kOutputFill, false));
    outputShapes.push_back(shape);
  }
  for (size_t j = 0; j < program.temporaries.size(); ++j) {
    const backends::Temporary &t = program.temporaries[j];
    std::vector<int64_t> shape;
    for (const backends::SizeExpr &e : t.shape)
      shape.push_back(evaluateSize(e.expr, symbols));
    HostArray sized(t.dtype, shape);
    temps.push_back(memory.allocate(Space::Global, sized.byteSize(), "temporary " + std::to_string(j),
                                    kOutputFill, false));
  }
  auto buffer = [&](const BufferRef &b) -> uint32_t {
    const std::vector<uint32_t> &list = b.kind == BufferRef::Kind::Param ? params : temps;
    if (b.index >= list.size())
      throw SimError(exportName + ": the host program names " +
                     (b.kind == BufferRef::Kind::Param ? "param " : "temporary ") + std::to_string(b.index) +
                     ", which does not exist");
    return list[b.index];
  };

  for (const auto &step : program.steps) {
    if (const auto *copy = std::get_if<backends::BufferCopy>(&step)) {
      int64_t bytes = 1;
      for (const backends::SizeExpr &e : copy->bytes)
        bytes = checked(static_cast<__int128>(bytes) * evaluateSize(e.expr, symbols), "a copy's size");
      Allocation &from = memory.get(buffer(copy->from)), &to = memory.get(buffer(copy->to));
      size_t fromAt = copy->from.offset, toAt = copy->to.offset; // views start inside
      if (bytes < 0 || fromAt > from.bytes.size() || toAt > to.bytes.size() ||
          static_cast<size_t>(bytes) > from.bytes.size() - fromAt ||
          static_cast<size_t>(bytes) > to.bytes.size() - toAt)
        throw SimError(exportName + ": a copy of " + std::to_string(bytes) + " bytes from " + from.name + " (" +
                       std::to_string(from.bytes.size()) + " bytes, from byte " + std::to_string(fromAt) +
                       ") to " + to.name + " (" + std::to_string(to.bytes.size()) + " bytes, from byte " +
                       std::to_string(toAt) + ")");
      if (bytes)
        std::memcpy(to.bytes.data() + toAt, from.bytes.data() + fromAt, static_cast<size_t>(bytes));
      for (int64_t i = 0; i < bytes; ++i)
        to.shadow[toAt + i].initialized = from.shadow[fromAt + i].initialized;
      continue;
    }
    const auto &launch = std::get<backends::CudaLaunch>(step);
    uint64_t grid[3];
    for (unsigned i = 0; i < 3; ++i) {
      int64_t g = evaluateSize(launch.grid[i].expr, symbols);
      if (g < 0)
        throw SimError(exportName + ": kernel '" + launch.kernel + "' has grid dimension " + std::to_string(i) +
                       " = " + std::to_string(g));
      grid[i] = static_cast<uint64_t>(g);
    }
    for (unsigned i = 0; i < 3; ++i)
      if (launch.cluster[i] == 0 || grid[i] % launch.cluster[i] != 0)
        throw SimError(exportName + ": kernel '" + launch.kernel + "' has grid dimension " + std::to_string(i) +
                       " = " + std::to_string(grid[i]) + ", not a multiple of its cluster dimension " +
                       std::to_string(launch.cluster[i]));
    std::vector<LaunchArg> args;
    for (const backends::KernelArg &arg : launch.args) {
      if (const auto *b = std::get_if<BufferRef>(&arg.value))
        args.push_back(LaunchArg::pointer(buffer(*b), static_cast<int64_t>(b->offset)));
      else if (const auto *t = std::get_if<backends::TensorMapArg>(&arg.value))
        args.push_back(LaunchArg::map(tensorMapOf(
            *t, makePointer(buffer(t->buffer), static_cast<int64_t>(t->buffer.offset)), symbols,
            launch.kernel)));
      else {
        unsigned s = std::get<unsigned>(arg.value);
        if (s >= symbols.size())
          throw SimError(exportName + ": a launch passes symbol " + std::to_string(s) + ", which does not exist");
        args.push_back(LaunchArg::integer(symbols[s]));
      }
    }
    // Stage 03 has no static shared memory (ptxas reports it later).
    device.launch(launch.kernel, grid, launch.block, launch.cluster, launch.dynamicSharedMemory,
                  args);
  }

  std::vector<HostArray> outputs;
  for (size_t j = 0; j < signature.results.size(); ++j) {
    HostArray out(signature.results[j].dtype, outputShapes[j]);
    const Allocation &a = memory.get(params[inputs.size() + j]);
    if (out.byteSize())
      std::memcpy(out.data(), a.bytes.data(), out.byteSize());
    outputs.push_back(std::move(out));
  }
  return outputs;
}

} // namespace pk::sim
