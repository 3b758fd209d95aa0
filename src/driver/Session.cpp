//===- Session.cpp --------------------------------------------------------===//
#include "driver/Session.h"

#include "driver/ImportPath.h"
#include "frontend/parse/Parser.h"
#include "ir/PkDialect.h"
#include "transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace pk {

Session::Session(llvm::raw_ostream &diagnosticStream) : engine(sourceManager, diagnosticStream) {
  mlir::DialectRegistry registry;
  registerPkDialects(registry);
  // The front end runs on one thread: its work is small and sequential.
  // The CUDA backend turns the context's threads on for its stages, which
  // work kernel by kernel (CudaBackend.cpp).
  mlirContext = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  mlirContext->loadAllAvailableDialects();
}

Session::~Session() = default;

uint32_t Session::load(const std::string &path) {
  if (uint32_t existing = sourceManager.findFile(path))
    return existing;
  std::string error;
  uint32_t file = sourceManager.addFile(path, error);
  if (!file)
    engine.error(SourceRange(), error);
  else
    readPaths.push_back(path);
  return file;
}

std::unique_ptr<ast::Module> Session::parse(const std::string &path) {
  uint32_t file = load(path);
  if (!file)
    return nullptr;
  return parseModule(file, engine);
}

bool Session::addDefines(const std::vector<std::string> &defines, ElaborationOptions &options) {
  for (const std::string &define : defines) {
    size_t eq = define.find('=');
    std::string name = define.substr(0, eq);
    bool validName = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name)
      validName &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (eq == std::string::npos || !validName) {
      engine.error(SourceRange(), "-D expects NAME=VALUE with a Python identifier as NAME, got '" +
                                      define + "'");
      return false;
    }
    uint32_t file = sourceManager.addBuffer("<-D " + name + ">", define.substr(eq + 1));
    options.defines.push_back({name, file});
  }
  return true;
}

namespace {

SourceRange plainRange(mlir::Location location, const SourceManager &sources) {
  if (auto range = llvm::dyn_cast<mlir::FileLineColRange>(location)) {
    uint32_t file = sources.findFile(range.getFilename().getValue());
    if (file)
      return SourceRange({file, range.getStartLine(), range.getStartColumn()},
                         {file, range.getEndLine(), range.getEndColumn()});
  }
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(location))
    return plainRange(name.getChildLoc(), sources);
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(location))
    if (!fused.getLocations().empty())
      return plainRange(fused.getLocations().front(), sources);
  return SourceRange();
}

} // namespace

Diagnostic Session::diagnosticAt(mlir::Location location, Severity severity, std::string message) {
  std::vector<SourceRange> callers;
  while (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(location)) {
    // Callers nest outward: record them innermost first.
    mlir::Location caller = call.getCaller();
    std::vector<SourceRange> chain;
    while (auto inner = llvm::dyn_cast<mlir::CallSiteLoc>(caller)) {
      chain.push_back(plainRange(inner.getCallee(), sourceManager));
      caller = inner.getCaller();
    }
    chain.push_back(plainRange(caller, sourceManager));
    callers = chain;
    location = call.getCallee();
  }
  Diagnostic d(severity, plainRange(location, sourceManager), std::move(message));
  for (const SourceRange &r : callers)
    if (r.isValid())
      d.addNote(r, "called from here");
  return d;
}

mlir::OwningOpRef<mlir::ModuleOp> Session::compileSource(const std::string &name,
                                                         const std::string &source,
                                                         const ElaborationOptions &options) {
  uint32_t file = sourceManager.addBuffer(name, source);
  std::unique_ptr<ast::Module> module = parseModule(file, engine);
  if (!module)
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> ir = elaborate(*module, options, engine, *mlirContext);
  modules.push_back(std::move(module));
  return finishElaboration(std::move(ir));
}

mlir::OwningOpRef<mlir::ModuleOp> Session::finishElaboration(mlir::OwningOpRef<mlir::ModuleOp> ir) {
  if (!ir)
    return ir;
  mlir::PassManager pm(mlirContext.get());
  pm.addPass(createPkFuseArrayCode());
  mlir::TimingScope timing = timingRoot.nest("front-end passes");
  if (timing)
    pm.enableTiming(timing);
  if (mlir::failed(pm.run(*ir))) {
    engine.error(SourceRange(), "internal error: pk-fuse-array-code failed");
    return nullptr;
  }
  return ir;
}

mlir::OwningOpRef<mlir::ModuleOp> Session::loadIR(const std::string &path,
                                                   const ElaborationOptions &options) {
  if (llvm::StringRef(path).ends_with(".mlir")) {
    uint32_t file = load(path);
    if (!file)
      return nullptr;
    // MLIR reports its own parse and verifier errors; route them through
    // the same engine so they look like every other pkc diagnostic.
    mlir::ScopedDiagnosticHandler handler(mlirContext.get(), [&](mlir::Diagnostic &d) {
      SourceRange range;
      if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
        range = SourceRange({file, loc.getLine(), loc.getColumn()}, {file, loc.getLine(), loc.getColumn()});
      engine.error(range, d.str());
      return mlir::success();
    });
    return mlir::parseSourceString<mlir::ModuleOp>(sourceManager.contents(file), mlirContext.get(),
                                                   path);
  }
  // Imports are looked up next to the file first, then on -I.
  std::vector<std::string> directories;
  std::string own = llvm::sys::path::parent_path(path).str();
  directories.push_back(own.empty() ? "." : own);
  directories.insert(directories.end(), importDirectories.begin(), importDirectories.end());
  importPaths.push_back(std::make_unique<ImportPath>(
      std::move(directories), [this](const std::string &file) { return load(file); }, engine));
  ImportPath &importPath = *importPaths.back();
  mlir::TimingScope parsing = timingRoot.nest("parse");
  ImportLoader::Result main = importPath.parseFile(path);
  parsing.stop();
  if (!main.module)
    return nullptr;
  ElaborationOptions withImports = options;
  withImports.imports = &importPath;
  if (withImports.onlyExports.empty())
    withImports.onlyExports = selectedExports;
  if (withImports.deviceKind.empty())
    withImports.deviceKind = deviceKind;
  if (withImports.platform.empty())
    withImports.platform = platform;
  withImports.tpuTiles |= tpuTiles;
  mlir::TimingScope elaborating = timingRoot.nest("elaborate (imports parsed here)");
  mlir::OwningOpRef<mlir::ModuleOp> ir = elaborate(*main.module, withImports, engine, *mlirContext);
  elaborating.stop();
  return finishElaboration(std::move(ir));
}

} // namespace pk
