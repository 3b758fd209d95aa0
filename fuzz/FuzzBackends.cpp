//===- FuzzBackends.cpp - libFuzzer: .pk bytes -> PTX and Mosaic MLIR -----===//
//
// The front end, then each backend on what it accepts: the CUDA backend to
// PTX for sm_90a (ptxas is not run: it is another process) and the TPU
// backend to Mosaic MLIR. A backend either produces its stage or reports
// an error; every error it reports is located, as `pkc compile` prints it.
// Programs the front end rejects are the front-end harness's business.
//
//===----------------------------------------------------------------------===//
#include "FuzzLimits.h"
#include "backends/Compile.h"

#include "driver/Session.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void violated(const char *target, const char *what, const std::string &detail) {
  std::fprintf(stderr, "pk-fuzz-backends: %s: %s\n%s\n", target, what, detail.c_str());
  std::abort();
}

void compileFor(pk::Session &session, mlir::ModuleOp module, const char *targetName,
                const char *emit) {
  std::string error;
  std::optional<pk::backends::Target> target = pk::backends::parseTarget(targetName, error);
  if (!target)
    violated(targetName, "not a target", error);
  pk::backends::BackendOptions options;
  options.target = *target;
  options.emit = emit;
  unsigned errors = 0;
  std::string unlocated;
  std::optional<pk::backends::BackendOutput> output;
  {
    mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
      if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
        return mlir::success();
      ++errors;
      pk::Diagnostic located = session.diagnosticAt(d.getLocation(), pk::Severity::Error, d.str());
      if (!located.range.isValid() && unlocated.empty())
        unlocated = d.str();
      return mlir::success();
    });
    output = pk::backends::compile(module, options);
  }
  if (!output && errors == 0)
    violated(targetName, "the backend failed without an error", "");
  if (output && errors != 0)
    violated(targetName, "the backend reported an error and still produced output", "");
  // Errors about the toolkit (no libdevice) have no line to point at.
  if (!unlocated.empty() && unlocated.find("toolkit") == std::string::npos &&
      unlocated.find("libdevice") == std::string::npos)
    violated(targetName, "an error without a location", unlocated);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  pk::Session session(stream);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      session.compileSource("fuzz.pk", source, pk::fuzz::elaborationOptions());
  if (!module)
    return 0;
  // Each backend lowers the module in place: give each its own copy.
  mlir::OwningOpRef<mlir::ModuleOp> forTpu(module->clone());
  compileFor(session, *module, "cuda:sm_90a", "ptx");
  compileFor(session, *forTpu, "tpu", "mlir");
  return 0;
}
