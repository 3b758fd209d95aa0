//===- Arguments.h - Build-system spellings of pkc's options ----*- C++ -*-===//
//
// Build systems drive compilers with conventions CLI11 cannot parse
// directly: response files (`@file`, for command lines too long for the
// OS) and GCC's dependency options (`-MD -MF file -MT target`). This
// rewrites them into the long options main.cpp declares, before CLI11
// sees the command line.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_ARGUMENTS_H
#define PK_CLI_PKC_ARGUMENTS_H

#include <string>
#include <vector>

namespace pk::cli {

/// Expands `@file` arguments (GNU quoting, nested files resolved relative
/// to the file that names them) and rewrites -MD, -MF FILE, -MT TARGET (or
/// -MFFILE, -MTTARGET) as --MD, --MF FILE, --MT TARGET. Returns false with
/// `error` set when a response file cannot be read.
bool normalizeArguments(int argc, char **argv, std::vector<std::string> &out, std::string &error);

} // namespace pk::cli

#endif // PK_CLI_PKC_ARGUMENTS_H
