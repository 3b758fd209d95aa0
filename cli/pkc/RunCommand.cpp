//===- RunCommand.cpp - pkc run: an export on the GPU or the interpreter --===//
//
// Inputs come from --in NAME=FILE.npy; the rest are made up with
// pk::deterministicInput. Symbolic sizes are read from the given inputs,
// or set with --size NAME=INT (or fixed at compile time with -D).
// Outputs go to --out files (.npy) and, with --print, to stdout.
// --device picks where it runs: the reference interpreter, or GPU 0
// through the runtime library (CudaRun.cpp); by default the GPU when there
// is one.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "driver/Session.h"
#include "interpreter/Interpreter.h"
#include "interpreter/Npy.h"
#include "interpreter/NumpyFormat.h"
#include "ir/PkDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace pk::cli {

namespace {

bool splitAssignment(const std::string &text, std::string &name, std::string &value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return !name.empty() && !value.empty();
}

} // namespace

int runRun(const CommonOptions &common, const RunOptions &options,
           const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  DiagnosticEngine &diag = session.diagnostics();
  auto error = [&](const std::string &message) {
    diag.error(SourceRange(), message);
    return 1;
  };

  ElaborationOptions elaboration;
  if (!session.addDefines(common.defines, elaboration))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module = session.loadIR(common.input, elaboration);
  if (!module)
    return 1;

  std::vector<std::string> names = exportNames(*module);
  std::string entry = options.entry;
  if (entry.empty()) {
    if (names.empty())
      return error(common.input + " has no exports, so there is nothing to run; mark the "
                                  "function to run with @export");
    if (names.size() != 1)
      return error(common.input + " has " + std::to_string(names.size()) +
                   " exports; choose one with --entry (" + llvm::join(names, ", ") + ")");
    entry = names[0];
  }
  std::optional<ExportSignature> signature = exportSignature(*module, entry);
  if (!signature)
    return error("no export named '" + entry + "' in " + common.input +
                 (names.empty() ? "" : " (exports: " + llvm::join(names, ", ") + ")"));

  // Inputs given as files.
  std::vector<std::optional<HostArray>> inputs(signature->arguments.size());
  for (const std::string &spec : options.inputs) {
    std::string name, path;
    if (!splitAssignment(spec, name, path))
      return error("--in expects NAME=FILE.npy, got '" + spec + "'");
    auto it = std::find_if(signature->arguments.begin(), signature->arguments.end(),
                           [&](const ExportSignature::Array &a) { return a.name == name; });
    if (it == signature->arguments.end()) {
      std::vector<std::string> params;
      for (const auto &a : signature->arguments)
        params.push_back(a.name);
      return error("export '" + entry + "' has no parameter '" + name + "' (parameters: " +
                   llvm::join(params, ", ") + ")");
    }
    std::string message;
    std::optional<HostArray> array = readNpy(path, it->dtype, message);
    if (!array)
      return error(message);
    inputs[it - signature->arguments.begin()] = std::move(array);
  }

  // Symbolic sizes: --size, then the shapes of the given inputs.
  std::vector<int64_t> symbols(signature->symbols.size(), -1);
  for (const std::string &spec : options.sizes) {
    std::string name, value;
    if (!splitAssignment(spec, name, value))
      return error("--size expects NAME=INT, got '" + spec + "'");
    auto it = std::find(signature->symbols.begin(), signature->symbols.end(), name);
    if (it == signature->symbols.end())
      return error("'" + name + "' is not a symbolic size of export '" + entry + "'" +
                   (signature->symbols.empty() ? "" : " (its sizes: " + llvm::join(signature->symbols, ", ") + ")"));
    int64_t size;
    if (llvm::StringRef(value).getAsInteger(10, size) || size < 0)
      return error("--size " + name + " must be a non-negative integer, got '" + value + "'");
    symbols[it - signature->symbols.begin()] = size;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i])
      continue;
    const mlir::AffineMap &shape = signature->arguments[i].shape;
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
        return error("symbolic size '" + signature->symbols[s] + "' of export '" + entry +
                     "' has no value: pass --size " + signature->symbols[s] + "=<int>, fix it with -D " +
                     signature->symbols[s] + "=<int>, or give an input with --in");
    const ExportSignature::Array &a = signature->arguments[i];
    inputs[i] = deterministicInput(a.dtype, concreteShape(a, symbols), static_cast<unsigned>(i));
  }

  std::vector<HostArray> arguments;
  for (auto &input : inputs)
    arguments.push_back(std::move(*input));
  // Only the entry runs, so only it is compiled: another export of the
  // file whose blocks a GPU cannot hold must not stop this one.
  for (pk::ExportOp other : llvm::make_early_inc_range(module->getOps<pk::ExportOp>()))
    if (other.getSymName() != entry)
      other.erase();
  bool cuda = options.device == "cuda" || (options.device == "auto" && cudaDeviceAvailable());
  RunResult result = options.device == "cuda-sim" ? runOnCudaSim(session, *module, entry, arguments, options)
                     : cuda ? runOnCuda(session, *module, entry, *signature, arguments)
                            : runExport(*module, entry, arguments);
  if (!result.ok()) {
    if (result.errorLocation)
      diag.report(session.diagnosticAt(*result.errorLocation, Severity::Error, result.error));
    else
      diag.error(SourceRange(), result.error);
    return 1;
  }

  // Outputs: positional files in order, or INDEX=FILE.
  size_t nextPositional = 0;
  for (const std::string &spec : options.outputs) {
    std::string indexText, path = spec;
    size_t index = nextPositional;
    if (splitAssignment(spec, indexText, path) && llvm::all_of(indexText, llvm::isDigit))
      index = std::stoul(indexText);
    else
      ++nextPositional;
    if (index >= result.outputs.size())
      return error("--out " + spec + ": export '" + entry + "' has " +
                   std::to_string(result.outputs.size()) + " output(s)");
    std::string message;
    if (!writeNpy(path, result.outputs[index], message))
      return error(message);
  }
  if (options.print) {
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      llvm::outs() << "# " << entry << " output " << i << ": " << result.outputs[i].describe() << "\n";
      llvm::outs() << formatNumpy(result.outputs[i]) << "\n";
    }
  }
  return 0;
}

} // namespace pk::cli
