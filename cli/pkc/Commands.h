//===- Commands.h - The pkc subcommands -------------------------*- C++ -*-===//
#ifndef PK_CLI_PKC_COMMANDS_H
#define PK_CLI_PKC_COMMANDS_H

#include <string>
#include <vector>

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
  std::string emit = "ir";
  std::string output = "-";
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

/// Applies the diagnostic options to a session.
void configure(Session &session, const DiagnosticOptions &diagnostics);

} // namespace pk::cli

#endif // PK_CLI_PKC_COMMANDS_H
