//===- ExportInputs.cpp - The arrays an export runs on --------------------===//
#include "ExportInputs.h"

#include "interpreter/Npy.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace pk::cli {

bool splitAssignment(const std::string &text, std::string &name, std::string &value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return !name.empty() && !value.empty();
}

std::optional<std::vector<HostArray>> exportInputs(DiagnosticEngine &diag,
                                                   const ExportSignature &signature,
                                                   const std::vector<std::string> &inputSpecs,
                                                   const std::vector<std::string> &sizeSpecs) {
  auto error = [&](const std::string &message) -> std::optional<std::vector<HostArray>> {
    diag.error(SourceRange(), message);
    return std::nullopt;
  };
  const std::string &entry = signature.name;

  // Inputs given as files.
  std::vector<std::optional<HostArray>> inputs(signature.arguments.size());
  for (const std::string &spec : inputSpecs) {
    std::string name, path;
    if (!splitAssignment(spec, name, path))
      return error("--in expects NAME=FILE.npy, got '" + spec + "'");
    auto it = std::find_if(signature.arguments.begin(), signature.arguments.end(),
                           [&](const ExportSignature::Array &a) { return a.name == name; });
    if (it == signature.arguments.end()) {
      std::vector<std::string> params;
      for (const auto &a : signature.arguments)
        params.push_back(a.name);
      return error("export '" + entry + "' has no parameter '" + name +
                   "' (parameters: " + llvm::join(params, ", ") + ")");
    }
    std::string message;
    std::optional<HostArray> array = readNpy(path, it->dtype, message);
    if (!array)
      return error(message);
    inputs[it - signature.arguments.begin()] = std::move(array);
  }

  // Symbolic sizes: --size, then the shapes of the given inputs.
  std::vector<int64_t> symbols(signature.symbols.size(), -1);
  for (const std::string &spec : sizeSpecs) {
    std::string name, value;
    if (!splitAssignment(spec, name, value))
      return error("--size expects NAME=INT, got '" + spec + "'");
    auto it = std::find(signature.symbols.begin(), signature.symbols.end(), name);
    if (it == signature.symbols.end())
      return error("'" + name + "' is not a symbolic size of export '" + entry + "'" +
                   (signature.symbols.empty()
                        ? ""
                        : " (its sizes: " + llvm::join(signature.symbols, ", ") + ")"));
    int64_t size;
    if (llvm::StringRef(value).getAsInteger(10, size) || size < 0)
      return error("--size " + name + " must be a non-negative integer, got '" + value + "'");
    symbols[it - signature.symbols.begin()] = size;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i])
      continue;
    const mlir::AffineMap &shape = signature.arguments[i].shape;
    for (unsigned d = 0; d < shape.getNumResults() && d < inputs[i]->shape().size(); ++d)
      if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(shape.getResult(d)))
        if (symbols[s.getPosition()] < 0)
          symbols[s.getPosition()] = inputs[i]->shape()[d];
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i])
      continue;
    for (size_t s = 0; s < symbols.size(); ++s)
      if (symbols[s] < 0)
        return error("symbolic size '" + signature.symbols[s] + "' of export '" + entry +
                     "' has no value: pass --size " + signature.symbols[s] +
                     "=<int>, fix it with -D " + signature.symbols[s] +
                     "=<int>, or give an input with --in");
    const ExportSignature::Array &a = signature.arguments[i];
    inputs[i] = deterministicInput(a.dtype, concreteShape(a, symbols), static_cast<unsigned>(i));
  }

  std::vector<HostArray> arguments;
  for (auto &input : inputs)
    arguments.push_back(std::move(*input));
  return arguments;
}

std::vector<int64_t> symbolValues(const ExportSignature &signature,
                                  const std::vector<HostArray> &inputs) {
  std::vector<int64_t> symbols(signature.symbols.size());
  for (size_t s = 0; s < symbols.size(); ++s)
    symbols[s] = inputs[signature.bindings[s].argument].shape()[signature.bindings[s].dim];
  return symbols;
}

std::vector<HostArray> outputArrays(const ExportSignature &signature,
                                    const std::vector<HostArray> &inputs) {
  std::vector<int64_t> symbols = symbolValues(signature, inputs);
  std::vector<HostArray> outputs;
  for (const ExportSignature::Array &r : signature.results)
    outputs.emplace_back(r.dtype, concreteShape(r, symbols));
  return outputs;
}

} // namespace pk::cli
