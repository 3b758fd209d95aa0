//===- Elaborate.h - AST to pk IR -------------------------------*- C++ -*-===//
//
// The public entry of the elaborator: runs the static part of a .pk module
// (module constants, `def`s, lambdas, partial, static loops and branches)
// and emits a pk IR module with one pk.export per `@export` function.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_ELABORATE_H
#define PK_FRONTEND_ELAB_ELABORATE_H

#include "frontend/ast/AST.h"
#include "support/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <set>
#include <string>
#include <vector>

namespace pk {

/// Finds and parses the .pk files a module imports (`from kernels.common
/// import gelu` reads kernels/common.pk from the import path). The driver
/// implements it, since it owns the search path and the files; the
/// elaborator runs what it returns, once per elaboration.
class ImportLoader {
public:
  virtual ~ImportLoader() = default;

  struct Result {
    /// The parsed module; null when there is no such file or it failed
    /// to parse.
    const ast::Module *module = nullptr;
    /// The file exists but does not parse; the parser has reported why.
    bool failed = false;
  };
  /// Looks `dottedName` up as a .pk file on the import path.
  virtual Result load(const std::string &dottedName) = 0;
  /// A relative import in file `importer`: `level` dots, then
  /// `dottedName`, from the importer's directory (1) or its parents.
  /// `where` is set to the directory searched.
  virtual Result loadRelative(const std::string &importer, unsigned level,
                              const std::string &dottedName, std::string &where) = 0;
  /// The directories searched, for "cannot import" messages.
  virtual std::string describePath() const = 0;
};

struct ElaborationOptions {
  /// `-D NAME=VALUE`: VALUE is a .pk expression, registered as a source
  /// buffer so that errors in it can be reported.
  struct Define {
    std::string name;
    uint32_t valueFile = 0;
  };
  std::vector<Define> defines;
  /// Resolves imports of other .pk files; null: only the built-in
  /// modules (jax, numpy, ...) can be imported. -D applies to the
  /// elaborated module only, never to the modules it imports.
  ImportLoader *imports = nullptr;
  /// Static evaluation's limits, so that any program ends in a diagnostic
  /// within seconds. Steps: each statement, call, loop iteration and
  /// comprehension item is one; every sample and test program takes fewer
  /// than 1,000, and 2,000,000 take 1-2 s. Items: what static values build,
  /// at 16 bytes an item at most 512 MiB. Both are counts, not clocks, so
  /// a program that compiles compiles everywhere. Tools that run many
  /// programs (the fuzz harnesses) lower them.
  uint64_t stepLimit = 2'000'000;
  uint64_t staticItemLimit = uint64_t(1) << 25;
  /// The exports to elaborate (pkc compile --export, run --entry); empty:
  /// all. The others are not elaborated, so an error in one does not stop
  /// another from compiling (as in Python, where a function's body runs
  /// only when it is called). A selection naming an export the file lacks
  /// elaborates all, so that the caller can list them.
  std::vector<std::string> onlyExports;
  /// What `jax.devices()[0].device_kind` answers: the kind of device the
  /// compilation is for when it is for one ("cpu" for the interpreter, a
  /// GPU's name for a CUDA target, "TPU v6 lite" for tpu:v6e). Empty when
  /// it is not (plain --target=tpu, for any generation; several kinds at
  /// once; pkc check), and then a program reading it gets an error at that
  /// line.
  std::string deviceKind;
  /// What `jax.default_backend()` and a device's `platform` answer ("cpu",
  /// "gpu", "tpu"): known whenever every target is of one platform, even
  /// where device_kind is not (plain --target=tpu; sm_90a with sm_80).
  /// Empty: the platform of `deviceKind`, if any.
  std::string platform;
  /// The compilation includes a TPU target: array code too large for one
  /// block is tiled in 128 rows rather than 8, a TPU block wherever a
  /// transpose puts the tiled axis (8 rows are a TPU tile's sublanes, not
  /// its 128 lanes).
  bool tpuTiles = false;
};

/// The names `module` assigns at its top level: the constants a -D (and a
/// tuning configuration) replaces where they are assigned.
std::set<std::string> moduleConstants(const ast::Module &module);

/// Elaborates `module`. Reports errors through `diagnostics` and returns
/// null if there were any. The IR is verified before it is returned.
mlir::OwningOpRef<mlir::ModuleOp> elaborate(const ast::Module &module,
                                            const ElaborationOptions &options,
                                            DiagnosticEngine &diagnostics,
                                            mlir::MLIRContext &context);

} // namespace pk

#endif // PK_FRONTEND_ELAB_ELABORATE_H
