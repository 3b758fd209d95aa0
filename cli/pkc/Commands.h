//===- Commands.h - The pkc subcommands -------------------------*- C++ -*-===//
#ifndef PK_CLI_PKC_COMMANDS_H
#define PK_CLI_PKC_COMMANDS_H

#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace pk {
class Session;
class HostArray;
struct ExportSignature;
struct RunResult;
} // namespace pk

namespace pk::cli {

struct CommonOptions {
  std::string input;
  std::vector<std::string> defines;
  std::vector<std::string> includeDirs; ///< -I: the import path after the file's directory
};

struct DiagnosticOptions {
  bool color = false;
  bool json = false;
};

struct CompileOptions {
  std::string emit;   ///< ast, ir; with --target: artifact (default), ptx, llvm, gpu, cubin, mlir
  std::string output; ///< a file or '-' for a stage; a directory for artifacts
  std::vector<std::string> targets;
  std::string dumpDir;
  bool debugInfo = false;
  std::string header;     ///< --header: with --target, also write the launch header here
  bool embed = false;     ///< --embed: with --target, also write STEM.embed.cpp
  bool writeDeps = false; ///< -MD
  std::string depFile;    ///< -MF
  std::vector<std::string> depTargets; ///< -MT
  std::vector<std::string> exports;    ///< --export: compile only these (default: all)
  std::string tuned; ///< --tuned: a tuning record whose chosen constants each export takes
  bool timeReport = false; ///< --time-report: each step's wall time, on stderr
};

struct RunOptions {
  std::string entry;
  std::string device = "auto"; ///< cuda, interpreter, or auto (cuda when a GPU is present)
  std::string target = "cuda:sm_90a"; ///< --device=cuda-sim: the target to compile for
  std::string ctaOrder = "linear";     ///< --device=cuda-sim: linear, reverse, shuffled[:SEED]
  bool simStats = false;               ///< --device=cuda-sim: print what was simulated
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> sizes;
  bool print = false;
};

struct TuneOptions {
  std::vector<std::string> exports; ///< --export: tune these (default: those with @autotune)
  std::vector<std::string> tries;   ///< --try NAME=VALUE: configurations instead of @autotune's
  std::vector<std::string> sizes;   ///< --size NAME=INT: the sizes to time at
  std::vector<std::string> inputs;  ///< --in NAME=FILE.npy
  std::string target;               ///< --target: GPU 0's by default
  std::string output;               ///< -o: where the record and the artifact go
  bool compileOnly = false;         ///< --compile-only: compile each configuration, time none
};

/// `target` (may be empty): elaborate for that target's device kind.
int runCheck(const CommonOptions &common, const std::string &target,
             const DiagnosticOptions &diagnostics);
int runCompile(const CommonOptions &common, const CompileOptions &options,
               const DiagnosticOptions &diagnostics);
int runRun(const CommonOptions &common, const RunOptions &options,
           const DiagnosticOptions &diagnostics);

int runTune(const CommonOptions &common, const TuneOptions &options,
            const DiagnosticOptions &diagnostics);

/// Erases the exports `keep` does not name (none when it is empty); an
/// error for a name that is not an export.
bool keepExports(Session &session, mlir::ModuleOp module, const std::vector<std::string> &keep,
                 const std::string &input);

/// pkc compile with --target: runs the backends and writes what they make.
/// Sets `primaryOutput` to the manifest (or the stage's file) written.
int compileForTargets(Session &session, mlir::ModuleOp module, const CommonOptions &common,
                      const CompileOptions &compile, std::string &primaryOutput);

/// pkc run --device=cuda: compiles `module` for GPU 0 and runs `entry`
/// there through the runtime library (CudaRun.cpp).
RunResult runOnCuda(Session &session, mlir::ModuleOp module, const std::string &entry,
                    const ExportSignature &signature, const std::vector<HostArray> &inputs);
/// Whether the runtime finds a CUDA GPU (and a driver).
bool cudaDeviceAvailable();
/// pkc run --device=cuda-sim: compiles `module` with the CUDA backend up
/// to stage 03 and runs `entry` on the SIMT simulator (SimRun.cpp).
RunResult runOnCudaSim(Session &session, mlir::ModuleOp module, const std::string &entry,
                       const std::vector<HostArray> &inputs, const RunOptions &options);

/// The file's IR, elaborated with `defines` (-D); null, with errors
/// reported, on failure.
mlir::OwningOpRef<mlir::ModuleOp> loadWithDefines(Session &session, const std::string &path,
                                                  const std::vector<std::string> &defines);

/// Applies the diagnostic options and the import path to a session.
void configure(Session &session, const CommonOptions &common, const DiagnosticOptions &diagnostics);

} // namespace pk::cli

#endif // PK_CLI_PKC_COMMANDS_H
