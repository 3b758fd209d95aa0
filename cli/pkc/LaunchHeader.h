//===- LaunchHeader.h - Typed C++ launchers for a file's exports -*- C++ -*-===//
//
// `pkc compile --emit=header` (or `--header FILE` next to the artifacts)
// writes a C++ header with one class per export of the .pk file, over the
// runtime's C++ wrapper (include/pk/runtime.hpp):
//
//   #include "add.pk.h"
//   pk::kernels::add add;                       // loads the module once
//   add(stream, x, {n}, y, {n}, out, {n});      // typed pointers and shapes
//   add(stream, xDl, yDl, outDl);               // or DLTensors
//
// Where C++ can check the signature, it does, at compile time: the number
// of arrays, each one's element type (a pointer to `float` for f32; f16
// and bf16 arrays are `uint16_t` storage) and rank (`std::array<int64_t,
// R>` shapes). Sizes, including symbolic ones, are checked and bound at
// run time by the runtime, which reports a mismatch as a pk::Status.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_LAUNCHHEADER_H
#define PK_CLI_PKC_LAUNCHHEADER_H

#include "ir/ExportSignature.h"

#include <string>
#include <vector>

namespace pk::cli {

struct HeaderOptions {
  std::string sourcePath; ///< the .pk file, for comments
  /// Where the launchers load the module from at run time when it is not
  /// embedded: the manifest's path, the default of the header's
  /// PK_MANIFEST_<STEM> macro.
  std::string manifestPath;
  /// The module is embedded (`--embed`): load it through the function the
  /// embedded source defines (embeddedLoaderName) instead of from a file.
  bool embedded = false;
};

/// The header's text.
std::string launchHeader(const std::vector<ExportSignature> &exports, const HeaderOptions &options);

/// `pk_embedded_<stem>_load`: the C function an embedded source defines
/// for the .pk file `sourcePath`, shared by the header and the source.
std::string embeddedLoaderName(const std::string &sourcePath);

/// `name`, made a valid C++ identifier that is no keyword.
std::string cxxIdentifier(const std::string &name);

} // namespace pk::cli

#endif // PK_CLI_PKC_LAUNCHHEADER_H
