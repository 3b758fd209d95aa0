//===- TargetCompile.cpp - pkc compile --target=... -----------------------===//
//
// Runs a backend per --target and writes what was asked for: by default
// each artifact and one manifest describing them all into the -o
// directory (with --header, the typed launch header; with --embed, a C++
// source holding them all); with --emit=STAGE, that stage's text to -o (a
// file or '-').
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Embed.h"
#include "LaunchHeader.h"

#include "backends/Compile.h"
#include "driver/Session.h"
#include "ir/PkDialect.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::cli {

namespace {

bool writeFile(DiagnosticEngine &diag, const std::string &path, const std::string &bytes,
               bool binary) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error,
                           binary ? llvm::sys::fs::OF_None : llvm::sys::fs::OF_TextWithCRLF);
  if (!error) {
    out << bytes;
    out.close();
    error = out.error();
  }
  if (error) {
    diag.error(SourceRange(), "cannot write '" + path + "': " + error.message());
    return false;
  }
  return true;
}

/// The artifact's file name: the source's stem, plus the architecture
/// when several targets share the directory.
std::string artifactName(const std::string &input, const backends::Target &target, bool several,
                         const std::string &extension) {
  std::string stem = llvm::sys::path::stem(input).str();
  if (several)
    stem += "." + (target.kind != backends::Target::Kind::Tpu ? target.arch
                   : target.arch.empty()                      ? std::string("tpu")
                                                              : "tpu_" + target.arch);
  return stem + extension;
}

/// Writes a generated C++ file unless it already holds `text`: build
/// systems that check timestamps after a command (Ninja's restat, which
/// CMake uses) then leave the code that includes it alone when a .pk edit
/// does not change it.
bool writeSourceIfChanged(DiagnosticEngine &diag, const std::string &path,
                          const std::string &text) {
  if (auto existing = llvm::MemoryBuffer::getFile(path, /*IsText=*/false))
    if ((*existing)->getBuffer() == text)
      return true;
  return writeFile(diag, path, text, /*binary=*/true);
}

} // namespace

int compileForTargets(Session &session, mlir::ModuleOp module, const CommonOptions &common,
                      const CompileOptions &compile, std::string &primaryOutput) {
  DiagnosticEngine &diag = session.diagnostics();
  std::vector<backends::Target> targets;
  for (const std::string &text : compile.targets) {
    std::string error;
    std::optional<backends::Target> target = backends::parseTarget(text, error);
    if (!target) {
      diag.error(SourceRange(), error);
      return 2;
    }
    targets.push_back(*target);
  }
  bool artifacts = compile.emit.empty() || compile.emit == "artifact";
  if (!artifacts && targets.size() > 1) {
    diag.error(SourceRange(), "--emit=" + compile.emit + " prints one target's stage; give one --target");
    return 2;
  }
  std::string outputDir = compile.output.empty() ? "." : compile.output;
  if (artifacts && outputDir == "-") {
    diag.error(SourceRange(), "artifacts are files: give -o a directory (or use --emit=STAGE to print a stage)");
    return 2;
  }

  // Backend errors carry the locations of the pk ops they concern, which
  // point at the user's lines.
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
    Severity severity = d.getSeverity() == mlir::DiagnosticSeverity::Warning ? Severity::Warning
                        : d.getSeverity() == mlir::DiagnosticSeverity::Error ? Severity::Error
                                                                              : Severity::Note;
    Diagnostic report = session.diagnosticAt(d.getLocation(), severity, d.str());
    for (const mlir::Diagnostic &note : d.getNotes())
      report.addNote(session.diagnosticAt(note.getLocation(), Severity::Note, note.str()).range,
                     note.str());
    diag.report(report);
    return mlir::success();
  });

  backends::Manifest manifest;
  manifest.sourcePath = common.input;
  std::string source;
  if (auto buffer = llvm::MemoryBuffer::getFile(common.input))
    source = (*buffer)->getBuffer().str();
  manifest.sourceSha256 = backends::sha256Hex(source);
  for (auto op : module.getOps<pk::ExportOp>())
    manifest.exports.push_back(exportSignature(op));

  if (artifacts) {
    if (std::error_code error = llvm::sys::fs::create_directories(outputDir)) {
      diag.error(SourceRange(), "cannot create '" + outputDir + "': " + error.message());
      return 1;
    }
  }
  std::vector<EmbeddedFile> embedded;
  for (const backends::Target &target : targets) {
    backends::BackendOptions options;
    options.target = target;
    options.emit = artifacts ? "" : compile.emit;
    options.dumpDir = compile.dumpDir;
    mlir::TimingScope timing = session.timing().nest(target.str());
    if (timing)
      options.timing = &timing;
    std::optional<backends::BackendOutput> output = backends::compile(module, options);
    timing.stop();
    if (!output)
      return 1;
    if (!artifacts) {
      bool binary = compile.emit == "cubin";
      primaryOutput = compile.output;
      if (compile.output.empty() || compile.output == "-") {
        llvm::outs() << (binary ? output->artifact : output->emitted);
        return 0;
      }
      return writeFile(diag, compile.output, binary ? output->artifact : output->emitted, binary) ? 0 : 1;
    }
    backends::Artifact artifact;
    artifact.target = target.str();
    artifact.file = artifactName(common.input, target, targets.size() > 1, output->extension);
    artifact.format = output->format;
    artifact.sha256 = backends::sha256Hex(output->artifact);
    artifact.size = output->artifact.size();
    artifact.cudaPrograms = std::move(output->cudaPrograms);
    artifact.otherPrograms = std::move(output->otherPrograms);
    artifact.ptxasNotes = std::move(output->ptxasNotes);
    llvm::SmallString<256> path(outputDir);
    llvm::sys::path::append(path, artifact.file);
    if (!writeFile(diag, path.str().str(), output->artifact, /*binary=*/true))
      return 1;
    if (compile.embed)
      embedded.push_back({artifact.file, std::move(output->artifact)});
    manifest.artifacts.push_back(std::move(artifact));
  }
  std::string stem = llvm::sys::path::stem(common.input).str();
  llvm::SmallString<256> manifestPath(outputDir);
  llvm::sys::path::append(manifestPath, stem + ".json");
  primaryOutput = manifestPath.str().str();
  std::string manifestText = backends::writeManifest(manifest);
  if (!writeFile(diag, primaryOutput, manifestText, false))
    return 1;
  if (compile.embed) {
    llvm::SmallString<256> embedPath(outputDir);
    llvm::sys::path::append(embedPath, stem + ".embed.cpp");
    if (!writeSourceIfChanged(diag, embedPath.str().str(),
                              embeddedSource(common.input, manifestText, embedded)))
      return 1;
  }
  if (!compile.header.empty()) {
    // A header that loads from a file names the manifest by its absolute
    // path: the program may run from any directory.
    HeaderOptions header;
    header.sourcePath = common.input;
    header.embedded = compile.embed;
    llvm::SmallString<256> absolute(manifestPath);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    header.manifestPath = absolute.str().str();
    if (!writeSourceIfChanged(diag, compile.header, launchHeader(manifest.exports, header)))
      return 1;
  }
  return 0;
}

} // namespace pk::cli
