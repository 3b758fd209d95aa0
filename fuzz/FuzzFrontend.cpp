//===- FuzzFrontend.cpp - libFuzzer: .pk bytes -> diagnostics or pk IR ----===//
//
// Runs the whole front end (lexer, parser, elaborator, verifier) on each
// input as `pkc check` would. Beyond what the sanitizers catch, it holds
// the front end to its promises: a program is either IR or at least one
// error, never both and never neither; and every error is located
// (file:line:col), since "pkc: error:" with no place is a bug to the user.
//
//===----------------------------------------------------------------------===//
#include "FuzzLimits.h"

#include "driver/Session.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void violated(const char *what, const std::string &diagnostics) {
  std::fprintf(stderr, "pk-fuzz-frontend: %s\n--- diagnostics\n%s---\n", what, diagnostics.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  pk::Session session(stream);
  // JSON: one diagnostic a line, the program's own text escaped inside it,
  // so a program cannot print a line that looks like a diagnostic (the
  // fuzzer learns the strings this harness compares against).
  session.diagnostics().setFormat(pk::DiagnosticEngine::Format::Json);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      session.compileSource("fuzz.pk", source, pk::fuzz::elaborationOptions());
  unsigned errors = session.diagnostics().errorCount();
  stream.flush();
  if (!module && errors == 0)
    violated("the front end failed without an error", diagnostics);
  if (module && errors != 0)
    violated("the front end reported an error and still produced IR", diagnostics);
  for (llvm::StringRef rest = diagnostics; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    if (line.consume_front("{\"severity\": \"error\"") && !line.starts_with(", \"file\": "))
      violated("an error without a location", diagnostics);
    rest = next;
  }
  return 0;
}
