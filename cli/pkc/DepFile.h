//===- DepFile.h - Makefile-style dependency files --------------*- C++ -*-===//
//
// `pkc compile -MD -MF FILE -MT TARGET` writes what GCC's -MD writes: one
// Make rule, `TARGET: every file the compilation read`, so that Make,
// Ninja (CMake's DEPFILE) and others rebuild the target when the .pk file
// or any file it imports changes. Only files that were read appear;
// like GCC, no phony rules are written.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_DEPFILE_H
#define PK_CLI_PKC_DEPFILE_H

#include <string>
#include <vector>

namespace pk::cli {

/// The rule `targets: inputs`, with the characters Make and Ninja treat
/// specially escaped (space and '#' with a backslash, '$' as '$$').
std::string formatDepFile(const std::vector<std::string> &targets,
                          const std::vector<std::string> &inputs);

} // namespace pk::cli

#endif // PK_CLI_PKC_DEPFILE_H
