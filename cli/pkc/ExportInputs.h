//===- ExportInputs.h - The arrays an export runs on ------------*- C++ -*-===//
//
// `pkc run` and `pkc tune` take an export's inputs the same way: --in
// NAME=FILE.npy for some, the rest made up (pk::deterministicInput) with
// symbolic sizes from --size NAME=INT or the shapes of the given files.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_EXPORTINPUTS_H
#define PK_CLI_PKC_EXPORTINPUTS_H

#include "interpreter/Interpreter.h"
#include "ir/ExportSignature.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace pk::cli {

/// Splits "NAME=VALUE"; false when either side is empty or there is no '='.
bool splitAssignment(const std::string &text, std::string &name, std::string &value);

/// The arguments of export `signature`, in order: `inputSpecs` (--in) read
/// from .npy files, the others made up at the sizes `sizeSpecs` (--size)
/// and the files give. Nothing (with an error reported) when a spec is
/// malformed, a file cannot be read or a size has no value.
std::optional<std::vector<HostArray>> exportInputs(DiagnosticEngine &diag,
                                                   const ExportSignature &signature,
                                                   const std::vector<std::string> &inputSpecs,
                                                   const std::vector<std::string> &sizeSpecs);

/// The values of the export's symbolic sizes, read from `inputs` where
/// the signature binds them.
std::vector<int64_t> symbolValues(const ExportSignature &signature,
                                  const std::vector<HostArray> &inputs);

/// Arrays for the export's results, shaped for `inputs`.
std::vector<HostArray> outputArrays(const ExportSignature &signature,
                                    const std::vector<HostArray> &inputs);

} // namespace pk::cli

#endif // PK_CLI_PKC_EXPORTINPUTS_H
