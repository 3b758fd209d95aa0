//===- Commands.h - The pkc subcommands -------------------------*- C++ -*-===//
#ifndef PK_CLI_PKC_COMMANDS_H
#define PK_CLI_PKC_COMMANDS_H

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
}

namespace pk {
class Session;
}

namespace pk::cli {

struct CommonOptions {
  std::string input;
  std::vector<std::string> defines;
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
};

struct RunOptions {
  std::string entry;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> sizes;
  bool print = false;
};

int runCheck(const CommonOptions &common, const DiagnosticOptions &diagnostics);
int runCompile(const CommonOptions &common, const CompileOptions &options,
               const DiagnosticOptions &diagnostics);
int runRun(const CommonOptions &common, const RunOptions &options,
           const DiagnosticOptions &diagnostics);

/// pkc compile with --target: runs the backends and writes what they make.
int compileForTargets(Session &session, mlir::ModuleOp module, const CommonOptions &common,
                      const CompileOptions &compile);

/// Applies the diagnostic options to a session.
void configure(Session &session, const DiagnosticOptions &diagnostics);

} // namespace pk::cli

#endif // PK_CLI_PKC_COMMANDS_H
