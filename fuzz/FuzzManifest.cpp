//===- FuzzManifest.cpp - libFuzzer: the runtime's manifest reader --------===//
//
// The runtime reads manifests next to artifacts, which users may edit,
// truncate or mix up. Any bytes give a Manifest or a pk::rt::Error with a
// message; nothing else may escape (a JSON library exception would abort
// a host process that only catches the runtime's errors at the C ABI).
//
//===----------------------------------------------------------------------===//
#include "runtime/Error.h"
#include "runtime/Manifest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view json(reinterpret_cast<const char *>(data), size);
  try {
    pk::rt::Manifest manifest = pk::rt::readManifest(json, "fuzz.json");
    for (const pk::rt::Export &e : manifest.exports)
      if (manifest.findExport(e.name) < 0) {
        std::fprintf(stderr, "pk-fuzz-manifest: export '%s' read but not found\n", e.name.c_str());
        std::abort();
      }
  } catch (const pk::rt::Error &error) {
    if (error.message().empty()) {
      std::fprintf(stderr, "pk-fuzz-manifest: an error without a message\n");
      std::abort();
    }
  }
  return 0;
}
