//===- CompileCommands.cpp - pkc check, pkc compile -----------------------===//
#include "Commands.h"

#include <algorithm>

#include "DepFile.h"
#include "LaunchHeader.h"

#include "driver/Session.h"
#include "frontend/parse/Parser.h"
#include "ir/PkDialect.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

void configure(Session &session, const CommonOptions &common,
               const DiagnosticOptions &diagnostics) {
  session.diagnostics().setColor(diagnostics.color);
  session.diagnostics().setFormat(diagnostics.json ? DiagnosticEngine::Format::Json
                                                   : DiagnosticEngine::Format::Text);
  session.setImportDirectories(common.includeDirs);
}

int runCheck(const CommonOptions &common, const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  ElaborationOptions options;
  if (!session.addDefines(common.defines, options))
    return 1;
  return session.loadIR(common.input, options) ? 0 : 1;
}

namespace {

/// Writes the -MD dependency file once the outputs are written: GCC's
/// rules for the defaults (-MF: the output with its extension replaced by
/// .d; -MT: the output).
int writeDependencies(Session &session, const CompileOptions &compile,
                      const std::string &primaryOutput) {
  DiagnosticEngine &diag = session.diagnostics();
  bool toStdout = primaryOutput.empty() || primaryOutput == "-";
  std::vector<std::string> targets = compile.depTargets;
  if (targets.empty()) {
    if (toStdout) {
      diag.error(SourceRange(), "-MD needs -MT TARGET when the output goes to stdout");
      return 2;
    }
    targets.push_back(primaryOutput);
  }
  std::string path = compile.depFile;
  if (path.empty()) {
    if (toStdout) {
      diag.error(SourceRange(), "-MD needs -MF FILE when the output goes to stdout");
      return 2;
    }
    llvm::SmallString<256> d(primaryOutput);
    llvm::sys::path::replace_extension(d, ".d");
    path = d.str().str();
  }
  std::error_code error;
  llvm::raw_fd_ostream out(path, error, llvm::sys::fs::OF_Text);
  if (!error) {
    out << formatDepFile(targets, session.filesRead());
    out.close();
    error = out.error();
  }
  if (error) {
    diag.error(SourceRange(), "cannot write '" + path + "': " + error.message());
    return 1;
  }
  return 0;
}

std::vector<ExportSignature> signatures(mlir::ModuleOp module) {
  std::vector<ExportSignature> out;
  for (auto op : module.getOps<pk::ExportOp>())
    out.push_back(exportSignature(op));
  return out;
}

} // namespace

/// Erases the exports `keep` does not name (none when it is empty); an
/// error for a name that is not an export.
static bool keepExports(Session &session, mlir::ModuleOp module, const std::vector<std::string> &keep,
                 const std::string &input) {
  if (keep.empty())
    return true;
  std::vector<std::string> names;
  for (pk::ExportOp e : module.getOps<pk::ExportOp>())
    names.push_back(e.getSymName().str());
  for (const std::string &name : keep)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      session.diagnostics().error(SourceRange(), "--export " + name + ": no export named '" + name +
                                                     "' in " + input + " (exports: " +
                                                     llvm::join(names, ", ") + ")");
      return false;
    }
  for (pk::ExportOp e : llvm::make_early_inc_range(module.getOps<pk::ExportOp>()))
    if (std::find(keep.begin(), keep.end(), e.getSymName().str()) == keep.end())
      e.erase();
  return true;
}

int runCompile(const CommonOptions &common, const CompileOptions &compile,
               const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  bool deps = compile.writeDeps || !compile.depFile.empty() || !compile.depTargets.empty();
  if (!compile.writeDeps && deps) {
    session.diagnostics().error(SourceRange(), "-MF and -MT take effect with -MD");
    return 2;
  }
  if (compile.targets.empty() && (!compile.header.empty() || compile.embed)) {
    session.diagnostics().error(SourceRange(), std::string(compile.embed ? "--embed" : "--header") +
                                                   " writes files next to the artifacts; give "
                                                   "--target (or use --emit=header)");
    return 2;
  }
  if (!compile.targets.empty()) {
    if (compile.emit == "ast" || compile.emit == "ir" || compile.emit == "header") {
      session.diagnostics().error(
          SourceRange(), "--emit=" + compile.emit + " prints a front-end stage; drop --target" +
                             (compile.emit == "header" ? " (or write it with --header FILE)" : ""));
      return 2;
    }
    ElaborationOptions options;
    if (!session.addDefines(common.defines, options))
      return 1;
    mlir::OwningOpRef<mlir::ModuleOp> ir = session.loadIR(common.input, options);
    if (!ir || !keepExports(session, *ir, compile.exports, common.input))
      return 1;
    std::string primaryOutput;
    if (int status = compileForTargets(session, *ir, common, compile, primaryOutput))
      return status;
    return compile.writeDeps ? writeDependencies(session, compile, primaryOutput) : 0;
  }
  if (!compile.emit.empty() && compile.emit != "ast" && compile.emit != "ir" &&
      compile.emit != "header") {
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
    return compile.writeDeps ? writeDependencies(session, compile, compile.output) : 0;
  }
  ElaborationOptions options;
  if (!session.addDefines(common.defines, options))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> ir = session.loadIR(common.input, options);
  if (!ir || !keepExports(session, *ir, compile.exports, common.input))
    return 1;
  if (compile.emit == "header") {
    // Without artifacts beside it, the header loads the manifest pkc
    // compile --target would write for this file, from the working
    // directory at run time.
    HeaderOptions header;
    header.sourcePath = common.input;
    header.manifestPath = llvm::sys::path::stem(common.input).str() + ".json";
    out << launchHeader(signatures(*ir), header);
  } else {
    mlir::OpPrintingFlags flags;
    if (compile.debugInfo)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    ir->print(out, flags);
    out << '\n';
  }
  return compile.writeDeps ? writeDependencies(session, compile, compile.output) : 0;
}

} // namespace pk::cli
