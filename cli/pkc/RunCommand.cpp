//===- RunCommand.cpp - pkc run -------------------------------------------===//
#include "Commands.h"

#include "driver/Session.h"

#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

int runRun(const CommonOptions &common, const RunOptions &options,
           const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, diagnostics);
  session.diagnostics().error(SourceRange(), "pkc run: the interpreter is not built yet");
  return 1;
}

} // namespace pk::cli
