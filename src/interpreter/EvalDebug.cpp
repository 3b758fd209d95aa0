//===- EvalDebug.cpp - pk.debug_print -------------------------------------===//
//
// Prints the line when the program runs: each value as NumPy's str() shows
// it (what jax.debug.print prints in Pallas interpret mode), or with the
// field's format spec for scalars (`{:.3f}`).
//
//===----------------------------------------------------------------------===//
#include "interpreter/Evaluator.h"
#include "interpreter/NumpyFormat.h"

#include "ir/PkDialect.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace pk::interp {

namespace {

/// A scalar with a Python format spec: the common specs map onto printf.
std::string formatScalar(const HostArray &value, const std::string &spec) {
  char type = spec.empty() ? 0 : spec.back();
  std::string flags = spec;
  bool isFloatType = std::string("eEfFgG%").find(type) != std::string::npos && type;
  bool isIntType = std::string("dxXob").find(type) != std::string::npos && type;
  if (isFloatType || isIntType)
    flags.pop_back();
  char buffer[128];
  bool floatValue = isFloat(value.dtype());
  if (isIntType && !floatValue) {
    std::string f = "%" + flags + (type == 'd' || type == 'b' ? "lld" : type == 'o' ? "llo" : type == 'x' ? "llx" : "llX");
    std::snprintf(buffer, sizeof buffer, f.c_str(), static_cast<long long>(value.getInt(0)));
    return buffer;
  }
  if (isFloatType || floatValue) {
    double v = value.getDouble(0);
    if (type == '%') {
      std::string f = "%" + flags + "f%%";
      std::snprintf(buffer, sizeof buffer, f.c_str(), v * 100);
    } else {
      std::string f = "%" + flags + (isFloatType ? std::string(1, type) : "g");
      std::snprintf(buffer, sizeof buffer, f.c_str(), v);
    }
    return buffer;
  }
  std::string f = "%" + flags + "lld";
  std::snprintf(buffer, sizeof buffer, f.c_str(), static_cast<long long>(value.getInt(0)));
  return buffer;
}

} // namespace

void Evaluator::evalDebugPrint(mlir::Operation *op) {
  auto print = llvm::cast<pk::DebugPrintOp>(op);
  llvm::StringRef format = print.getFormat();
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      out += c;
      ++i;
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
    mlir::Value v = print.getValues()[next];
    DType dtype = *parseDType(llvm::cast<mlir::StringAttr>(print.getDtypes()[next]).getValue());
    ++next;
    TensorPtr t = get(v);
    HostArray host(dtype, t->shape);
    storeToHost(*t, host);
    out += spec.empty() || host.rank() != 0 ? formatNumpy(host) : formatScalar(host, spec);
  }
  llvm::outs() << out << "\n";
  llvm::outs().flush();
}

} // namespace pk::interp
