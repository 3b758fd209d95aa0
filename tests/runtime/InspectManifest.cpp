//===- InspectManifest.cpp - Load a manifest and print its exports --------===//
//
//   pk_runtime_inspect MANIFEST --cc 90      without a device, as for 9.0
//   pk_runtime_inspect MANIFEST --device 0   on a device: every kernel resolved
//
// Prints each export's signature and the artifact chosen, or the error;
// exits 0 when the manifest loads. The tests use it to check that what
// pkc compile writes is what the runtime reads.
//
//===----------------------------------------------------------------------===//
#include "pk/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char *dtypeName(DLDataType t) {
  switch (t.code) {
  case kDLFloat:
    return t.bits == 16 ? "float16" : t.bits == 32 ? "float32" : "float64";
  case kDLBfloat:
    return "bfloat16";
  case kDLInt:
    return t.bits == 8 ? "int8" : t.bits == 16 ? "int16" : t.bits == 32 ? "int32" : "int64";
  case kDLUInt:
    return t.bits == 8 ? "uint8" : t.bits == 16 ? "uint16" : t.bits == 32 ? "uint32" : "uint64";
  case 6:
    return "bool";
  }
  return "?";
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4 || (std::strcmp(argv[2], "--cc") && std::strcmp(argv[2], "--device"))) {
    std::fprintf(stderr, "usage: %s MANIFEST (--cc CC | --device ORDINAL)\n", argv[0]);
    return 2;
  }
  pk_load_options options;
  pk_load_options_init(&options);
  if (!std::strcmp(argv[2], "--cc")) {
    options.flags = PK_LOAD_NO_DEVICE;
    options.compute_capability = std::atoi(argv[3]);
  } else {
    options.device = std::atoi(argv[3]);
  }
  pk_module *module = nullptr;
  if (pk_module_load_ex(argv[1], &options, &module) != PK_OK) {
    std::fprintf(stderr, "%s\n", pk_last_error());
    return 1;
  }
  std::printf("%s: %s (%s)\n", argv[1], pk_module_artifact(module), pk_module_target(module));
  int status = 0;
  for (size_t e = 0; e < pk_module_num_exports(module); ++e) {
    pk_kernel *kernel = nullptr;
    if (pk_module_get(module, pk_module_export_name(module, e), &kernel) != PK_OK) {
      std::printf("  %s: %s\n", pk_module_export_name(module, e), pk_last_error());
      status = 1;
      continue;
    }
    std::string line = std::string("  ") + pk_kernel_name(kernel) + "(";
    for (size_t i = 0; i < pk_kernel_num_params(kernel); ++i) {
      pk_param_info info;
      pk_kernel_param(kernel, i, &info);
      line += (i ? ", " : "") + std::string(info.role == PK_PARAM_OUTPUT ? "out " : "") +
              info.name + ": " + dtypeName(info.dtype) + "[" + std::to_string(info.ndim) + "-d]";
    }
    std::printf("%s)\n", line.c_str());
  }
  pk_module_destroy(module);
  return status;
}
