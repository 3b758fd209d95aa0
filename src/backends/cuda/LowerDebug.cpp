//===- LowerDebug.cpp - pk.debug_print -> gpu.printf -----------------------===//
//
// The first thread of each Pallas thread prints the line, as Mosaic GPU
// prints (in plgpu.warp_map bodies, each warp's first lane; in a
// pallas_call, the CTA's first thread): CUDA's vprintf, which
// gpu-to-nvvm makes of gpu.printf. Values must be scalars here: a block
// value is spread over the CTA's threads (the interpreter prints whole
// blocks). Python's `{}` fields become C conversions chosen by the
// value's dtype; `{:.3f}`-style specs carry over.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/LowerMosaicGpu.h"

#include "support/DType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace pk::gpu {

LogicalResult lowerDebugPrint(Emitter &e, pk::DebugPrintOp op) {
  llvm::StringRef format = op.getFormat();
  std::string out;
  SmallVector<Value> args;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '%') {
      out += "%%";
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = format.find('}', i);
    std::string spec = format.substr(i + 1, close - i - 1).str();
    if (!spec.empty() && spec[0] == ':')
      spec = spec.substr(1);
    i = close;
    Value original = op.getValues()[next];
    DType dtype = *parseDType(llvm::cast<StringAttr>(op.getDtypes()[next]).getValue());
    ++next;
    if (auto tensor = llvm::dyn_cast<RankedTensorType>(original.getType()); tensor && tensor.getRank() > 0)
      return e.fail(op, "pl.debug_print of a block value (" +
                            std::to_string(tensor.getNumElements()) +
                            " elements) is not supported on the GPU; print scalars (the "
                            "interpreter prints whole blocks)");
    Value v = e.values.lookupOrDefault(original);
    if (llvm::isa<VectorType>(v.getType()))
      v = e.extract(v, 0);
    // vprintf takes ints of 32 or 64 bits and doubles.
    Type type = v.getType();
    std::string conversion;
    char kind = spec.empty() ? 0 : spec.back();
    std::string flags = spec;
    if (kind && std::string("dxXoeEfFgG").find(kind) != std::string::npos)
      flags.pop_back();
    else
      kind = 0;
    if (isFloat(dtype)) {
      if (type.getIntOrFloatBitWidth() < 32)
        v = arith::ExtFOp::create(e.b, e.loc, e.b.getF32Type(), v);
      conversion = "%" + flags + (kind && std::string("eEfFgG").find(kind) != std::string::npos
                                      ? std::string(1, kind)
                                      : std::string("g"));
    } else {
      unsigned bits = type.getIntOrFloatBitWidth();
      if (bits < 32) {
        v = isUnsigned(dtype) || dtype == DType::Bool
                ? Value(arith::ExtUIOp::create(e.b, e.loc, e.b.getI32Type(), v))
                : Value(arith::ExtSIOp::create(e.b, e.loc, e.b.getI32Type(), v));
        bits = 32;
      }
      char intKind = kind && std::string("dxXo").find(kind) != std::string::npos
                         ? kind
                         : (isUnsigned(dtype) ? 'u' : 'd');
      conversion = "%" + flags + (bits == 64 ? "ll" : "") + std::string(1, intKind);
    }
    out += conversion;
    args.push_back(v);
  }
  out += "\n";
  e.guarded(isFirstThread(e), [&] { mlir::gpu::PrintfOp::create(e.b, e.loc, out, args); });
  return success();
}

} // namespace pk::gpu
