//===- CompileCommands.cpp - pkc check, pkc compile -----------------------===//
#include "Commands.h"

#include "driver/Session.h"
#include "frontend/parse/Parser.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

void configure(Session &session, const DiagnosticOptions &diagnostics) {
  session.diagnostics().setColor(diagnostics.color);
  session.diagnostics().setFormat(diagnostics.json ? DiagnosticEngine::Format::Json
                                                   : DiagnosticEngine::Format::Text);
}

int runCheck(const CommonOptions &common, const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, diagnostics);
  ElaborationOptions options;
  if (!session.addDefines(common.defines, options))
    return 1;
  return session.loadIR(common.input, options) ? 0 : 1;
}

int runCompile(const CommonOptions &common, const CompileOptions &compile,
               const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, diagnostics);
  if (!compile.targets.empty()) {
    if (compile.emit == "ast" || compile.emit == "ir") {
      session.diagnostics().error(SourceRange(), "--emit=" + compile.emit +
                                                     " prints a front-end stage; drop --target");
      return 2;
    }
    ElaborationOptions options;
    if (!session.addDefines(common.defines, options))
      return 1;
    mlir::OwningOpRef<mlir::ModuleOp> ir = session.loadIR(common.input, options);
    if (!ir)
      return 1;
    return compileForTargets(session, *ir, common, compile);
  }
  if (!compile.emit.empty() && compile.emit != "ast" && compile.emit != "ir") {
    session.diagnostics().error(SourceRange(), "--emit=" + compile.emit + " needs a --target");
    return 2;
  }
  std::error_code error;
  llvm::raw_fd_ostream out(compile.output.empty() ? "-" : compile.output, error,
                           llvm::sys::fs::OF_TextWithCRLF);
  if (error) {
    session.diagnostics().error(SourceRange(), "cannot write '" + compile.output + "': " + error.message());
    return 1;
  }
  if (compile.emit == "ast") {
    std::unique_ptr<ast::Module> module = session.parse(common.input);
    if (!module)
      return 1;
    ast::dump(*module, session.sources(), out);
    return 0;
  }
  ElaborationOptions options;
  if (!session.addDefines(common.defines, options))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> ir = session.loadIR(common.input, options);
  if (!ir)
    return 1;
  mlir::OpPrintingFlags flags;
  if (compile.debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  ir->print(out, flags);
  out << '\n';
  return 0;
}

} // namespace pk::cli
