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
#include "ExportInputs.h"

#include "backends/Target.h"
#include "driver/Session.h"
#include "interpreter/Interpreter.h"
#include "interpreter/Npy.h"
#include "interpreter/NumpyFormat.h"
#include "ir/PkDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

int runRun(const CommonOptions &common, const RunOptions &options,
           const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  DiagnosticEngine &diag = session.diagnostics();
  auto error = [&](const std::string &message) {
    diag.error(SourceRange(), message);
    return 1;
  };

  // Only the entry is elaborated: another export's error does not stop it.
  if (!options.entry.empty())
    session.selectExports({options.entry});
  // The device the program sees (device_kind): the interpreter is a CPU,
  // as under JAX's interpret mode; the simulator and a GPU run code for
  // --target.
  bool cuda = options.device == "cuda" || (options.device == "auto" && cudaDeviceAvailable());
  session.setDeviceKind(
      cuda || options.device == "cuda-sim" ? backends::deviceKindOf(options.target) : "cpu");
  mlir::OwningOpRef<mlir::ModuleOp> module = loadWithDefines(session, common.input, common.defines);
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

  std::optional<std::vector<HostArray>> arguments =
      exportInputs(diag, *signature, options.inputs, options.sizes);
  if (!arguments)
    return 1;
  // Only the entry runs, so only it is compiled: another export of the
  // file whose blocks a GPU cannot hold must not stop this one.
  for (pk::ExportOp other : llvm::make_early_inc_range(module->getOps<pk::ExportOp>()))
    if (other.getSymName() != entry)
      other.erase();
  RunResult result = options.device == "cuda-sim"
                         ? runOnCudaSim(session, *module, entry, *arguments, options)
                     : cuda ? runOnCuda(session, *module, entry, *signature, *arguments)
                            : runExport(*module, entry, *arguments);
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
