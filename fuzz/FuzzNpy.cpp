//===- FuzzNpy.cpp - libFuzzer: the .npy reader ---------------------------===//
//
// `pkc run --in` reads .npy files users hand it. Any bytes give an array or
// an error message; an array must hold exactly as many bytes as its shape
// and dtype say, and what it holds must serialize and read back the same.
//
//===----------------------------------------------------------------------===//
#include "interpreter/Npy.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<pk::HostArray> array = pk::parseNpy(bytes, std::nullopt, error);
  if (!array) {
    if (error.empty()) {
      std::fprintf(stderr, "pk-fuzz-npy: rejected without a message\n");
      std::abort();
    }
    return 0;
  }
  std::string again;
  std::optional<pk::HostArray> reread = pk::parseNpy(pk::serializeNpy(*array), std::nullopt, again);
  int64_t expectedBytes = array->size() * static_cast<int64_t>(array->elementBytes());
  if (static_cast<int64_t>(array->byteSize()) != expectedBytes) {
    std::fprintf(stderr, "pk-fuzz-npy: %s holds %zu bytes\n", array->describe().c_str(),
                 array->byteSize());
    std::abort();
  }
  if (!reread || reread->shape() != array->shape() || reread->dtype() != array->dtype() ||
      !std::equal(array->data(), array->data() + array->byteSize(), reread->data())) {
    std::fprintf(stderr, "pk-fuzz-npy: an array read does not survive writing and reading back: %s\n",
                 again.c_str());
    std::abort();
  }
  return 0;
}
