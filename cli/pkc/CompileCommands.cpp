//===- CompileCommands.cpp - pkc check, pkc compile -----------------------===//
#include "Commands.h"

#include <algorithm>
#include <set>

#include "DepFile.h"
#include "LaunchHeader.h"
#include "TuneRecord.h"
#include "TunedModule.h"

#include "backends/Manifest.h"
#include "backends/Target.h"

#include "driver/Session.h"
#include "frontend/parse/Parser.h"
#include "ir/PkDialect.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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

mlir::OwningOpRef<mlir::ModuleOp> loadWithDefines(Session &session, const std::string &path,
                                                  const std::vector<std::string> &defines) {
  ElaborationOptions options;
  if (!session.addDefines(defines, options))
    return nullptr;
  return session.loadIR(path, options);
}

namespace {

/// A --target, checked before the program elaborates for it (reported on
/// failure); array code is tiled for TPU blocks when it is a TPU.
std::optional<backends::Target> elaborationTarget(Session &session, const std::string &text) {
  std::string error;
  std::optional<backends::Target> target = backends::parseTarget(text, error);
  if (!target) {
    session.diagnostics().error(SourceRange(), error);
    return std::nullopt;
  }
  if (target->kind == backends::Target::Kind::Tpu)
    session.setTpuTiles(true);
  return target;
}

} // namespace

int runCheck(const CommonOptions &common, const std::string &target,
             const DiagnosticOptions &diagnostics) {
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  // As compile elaborates for its target: programs may ask what device
  // they are for.
  if (!target.empty()) {
    std::optional<backends::Target> parsed = elaborationTarget(session, target);
    if (!parsed)
      return 2;
    session.setDeviceKind(parsed->deviceKind());
    session.setPlatform(parsed->platform());
  }
  return loadWithDefines(session, common.input, common.defines) ? 0 : 1;
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

/// The file's IR: with -D, and with --tuned each export with the
/// constants the record chose for it.
mlir::OwningOpRef<mlir::ModuleOp> loadForCompile(Session &session, const CommonOptions &common,
                                                 const CompileOptions &compile) {
  // --export: only those are elaborated, so another's error does not stop them.
  session.selectExports(compile.exports);
  if (compile.tuned.empty())
    return loadWithDefines(session, common.input, common.defines);
  DiagnosticEngine &diag = session.diagnostics();
  if (llvm::StringRef(common.input).ends_with(".mlir")) {
    diag.error(SourceRange(), "--tuned applies a tuning record to a .pk source, not to IR");
    return nullptr;
  }
  // Read through the session, so that -MD lists the record among the
  // files the artifact depends on.
  uint32_t file = session.load(compile.tuned);
  if (!file)
    return nullptr;
  TuneRecord record;
  std::string error;
  if (!parseTuneRecord(session.sources().contents(file), compile.tuned, record, error)) {
    diag.error(SourceRange(), error);
    return nullptr;
  }
  // A record describes one version of the file, compiled one way; say so
  // when this compile differs, but apply it: the constants may well
  // still be the right ones.
  if (auto buffer = llvm::MemoryBuffer::getFile(common.input))
    if (!record.sourceSha256.empty() &&
        backends::sha256Hex((*buffer)->getBuffer().str()) != record.sourceSha256)
      diag.warning(SourceRange(), compile.tuned + " was tuned on another version of " +
                                      common.input + " (its SHA-256 differs)");
  auto describe = [](const std::vector<std::string> &defines) {
    return defines.empty() ? std::string("no -D") : "-D " + llvm::join(defines, " -D ");
  };
  if (record.defines != common.defines)
    diag.warning(SourceRange(), compile.tuned + " was tuned with " + describe(record.defines) +
                                    ", and this compile has " + describe(common.defines));
  if (!compile.targets.empty() && !record.target.empty() &&
      llvm::none_of(compile.targets, [&](const std::string &t) { return t == record.target; }))
    diag.warning(SourceRange(), compile.tuned + " was tuned for " + record.target +
                                    ", not for the targets compiled here");
  return loadWithChosenConstants(session, common.input, common.defines, chosenConstants(record));
}

} // namespace

bool keepExports(Session &session, mlir::ModuleOp module, const std::vector<std::string> &keep,
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
  // Prints its report on stderr when it goes out of scope, after the
  // session's timers have stopped.
  mlir::DefaultTimingManager timing;
  timing.setEnabled(compile.timeReport);
  Session session(llvm::errs());
  configure(session, common, diagnostics);
  if (compile.timeReport)
    session.setTiming(timing.getRootScope());
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
  for (const std::string &text : compile.targets)
    if (!elaborationTarget(session, text))
      return 2;
  // --emit=ir with one target prints the front end's IR as elaborated for
  // it: programs may ask what device they are for (device_kind).
  bool irForTarget = compile.emit == "ir" && compile.targets.size() == 1;
  if (irForTarget) {
    session.setDeviceKind(backends::deviceKindOf(compile.targets[0]));
    session.setPlatform(backends::platformOf(compile.targets[0]));
  }
  if (!compile.targets.empty() && !irForTarget) {
    if (compile.emit == "ast" || compile.emit == "ir" || compile.emit == "header") {
      session.diagnostics().error(
          SourceRange(), "--emit=" + compile.emit + " prints a front-end stage; drop --target" +
                             (compile.emit == "header" ? " (or write it with --header FILE)"
                              : compile.emit == "ir"   ? " (or give one, for its device kind)"
                                                       : ""));
      return 2;
    }
    // Programs that ask what device they run on (device_kind) get an
    // answer only when every target is the same kind of device.
    // jax.default_backend() only needs them to be of one platform.
    std::set<std::string> kinds, platforms;
    for (const std::string &text : compile.targets) {
      kinds.insert(backends::deviceKindOf(text));
      platforms.insert(backends::platformOf(text));
    }
    if (kinds.size() == 1)
      session.setDeviceKind(*kinds.begin());
    if (platforms.size() == 1)
      session.setPlatform(*platforms.begin());
    mlir::OwningOpRef<mlir::ModuleOp> ir = loadForCompile(session, common, compile);
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
  mlir::OwningOpRef<mlir::ModuleOp> ir = loadForCompile(session, common, compile);
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
