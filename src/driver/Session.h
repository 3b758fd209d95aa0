//===- Session.h - One pkc invocation: sources to verified IR ---*- C++ -*-===//
//
// Wires the front end together for the command-line tools and the tests:
// a SourceManager, a DiagnosticEngine, an MLIRContext with the pk dialects,
// and the steps source -> AST -> elaborated, verified pk IR. Each step
// reports its errors as diagnostics and returns null on failure.
//
//===----------------------------------------------------------------------===//
#ifndef PK_DRIVER_SESSION_H
#define PK_DRIVER_SESSION_H

#include "frontend/ast/AST.h"
#include "frontend/elab/Elaborate.h"
#include "support/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace pk {

class ImportPath;

class Session {
public:
  explicit Session(llvm::raw_ostream &diagnosticStream);
  ~Session();

  SourceManager &sources() { return sourceManager; }
  DiagnosticEngine &diagnostics() { return engine; }
  mlir::MLIRContext &context() { return *mlirContext; }

  /// Reads a file into the SourceManager; 0 (with an error) on failure.
  uint32_t load(const std::string &path);
  /// Parses a .pk file.
  std::unique_ptr<ast::Module> parse(const std::string &path);
  /// The -I directories searched for imported .pk files, after the
  /// directory of the file being compiled.
  void setImportDirectories(std::vector<std::string> directories) {
    importDirectories = std::move(directories);
  }
  /// Elaborate only these exports of the .pk files loaded from now on
  /// (ElaborationOptions::onlyExports); empty: all.
  void selectExports(std::vector<std::string> names) { selectedExports = std::move(names); }
  /// The device kind the .pk files loaded from now on see
  /// (ElaborationOptions::deviceKind); empty: none.
  void setDeviceKind(std::string kind) { deviceKind = std::move(kind); }
  /// The platform they see when no device kind says it
  /// (ElaborationOptions::platform); empty: none.
  void setPlatform(std::string name) { platform = std::move(name); }
  /// Array code of the .pk files loaded from now on is tiled for TPU
  /// blocks (ElaborationOptions::tpuTiles).
  void setTpuTiles(bool on) { tpuTiles = on; }
  const std::vector<std::string> &exportSelection() const { return selectedExports; }
  /// The front end's steps are timed under `scope` from now on (pkc
  /// compile --time-report); the backends nest theirs under timing().
  void setTiming(mlir::TimingScope scope) { timingRoot = std::move(scope); }
  mlir::TimingScope &timing() { return timingRoot; }
  /// Every file read from disk so far, in the order first read: the
  /// inputs of a dependency file.
  const std::vector<std::string> &filesRead() const { return readPaths; }
  /// Turns `NAME=VALUE` strings into elaboration defines.
  bool addDefines(const std::vector<std::string> &defines, ElaborationOptions &options);
  /// A .pk file (parsed and elaborated) or a .mlir file (parsed and
  /// verified) as pk IR.
  mlir::OwningOpRef<mlir::ModuleOp> loadIR(const std::string &path,
                                           const ElaborationOptions &options);
  /// Elaborates .pk source held in memory (tests, embedders); `name` is
  /// what diagnostics call the file.
  mlir::OwningOpRef<mlir::ModuleOp> compileSource(const std::string &name,
                                                  const std::string &source,
                                                  const ElaborationOptions &options = {});

  /// The source range an MLIR location points at (the innermost callee
  /// of a call-site location), and notes for the calls that led there.
  Diagnostic diagnosticAt(mlir::Location location, Severity severity, std::string message);

private:
  /// The target-independent passes every consumer of elaborated IR sees
  /// (pk-fuse-array-code); null when one fails.
  mlir::OwningOpRef<mlir::ModuleOp> finishElaboration(mlir::OwningOpRef<mlir::ModuleOp> ir);

  SourceManager sourceManager;
  DiagnosticEngine engine;
  std::unique_ptr<mlir::MLIRContext> mlirContext;
  std::vector<std::unique_ptr<ast::Module>> modules; ///< kept alive for the IR's lifetime
  std::vector<std::string> importDirectories;
  std::string deviceKind;
  std::string platform;
  bool tpuTiles = false;
  std::vector<std::string> selectedExports;
  std::vector<std::unique_ptr<ImportPath>> importPaths; ///< own the modules' ASTs
  std::vector<std::string> readPaths;
  mlir::TimingScope timingRoot; ///< records nothing unless setTiming gave it a timer
};

} // namespace pk

#endif // PK_DRIVER_SESSION_H
