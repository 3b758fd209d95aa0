//===- Embed.h - Artifacts compiled into the application ---------*- C++ -*-===//
//
// `pkc compile --target=... --embed` also writes STEM.embed.cpp: the
// manifest and every artifact as byte arrays, and one C function that
// loads them through the runtime's from-memory API:
//
//   extern "C" pk_status pk_embedded_STEM_load(const pk_load_options *options,
//                                              pk_module **module);
//
// so an application linking that source needs no files at run time. The
// runtime checks the artifacts' sizes and hashes against the manifest as
// it does for files. The generated header (--header) calls the function.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_EMBED_H
#define PK_CLI_PKC_EMBED_H

#include <string>
#include <utility>
#include <vector>

namespace pk::cli {

struct EmbeddedFile {
  std::string name; ///< the manifest's `file`
  std::string bytes;
};

/// The C++ source holding `manifest` (JSON text) and `artifacts`.
std::string embeddedSource(const std::string &sourcePath, const std::string &manifest,
                           const std::vector<EmbeddedFile> &artifacts);

} // namespace pk::cli

#endif // PK_CLI_PKC_EMBED_H
