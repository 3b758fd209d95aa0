//===- CApi.cpp - The C API: modules, kernels, launches -------------------===//
//
// Each function checks its pointers, then runs its body under guard(),
// which turns any exception into a status and pk_last_error() message.
//
//===----------------------------------------------------------------------===//
#include "runtime/Error.h"
#include "runtime/Launch.h"
#include "runtime/Module.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace pk::rt;

namespace {

#ifndef PK_RUNTIME_VERSION
#define PK_RUNTIME_VERSION "0.0.0"
#endif

const char *const kStatusNames[] = {
    "PK_OK",
    "PK_ERROR_INVALID_ARGUMENT",
    "PK_ERROR_IO",
    "PK_ERROR_MANIFEST",
    "PK_ERROR_MANIFEST_VERSION",
    "PK_ERROR_ARTIFACT",
    "PK_ERROR_NO_COMPATIBLE_ARTIFACT",
    "PK_ERROR_NOT_FOUND",
    "PK_ERROR_ARGUMENT_COUNT",
    "PK_ERROR_DEVICE_MISMATCH",
    "PK_ERROR_DTYPE",
    "PK_ERROR_RANK",
    "PK_ERROR_SHAPE",
    "PK_ERROR_LAYOUT",
    "PK_ERROR_ALIGNMENT",
    "PK_ERROR_ALIASING",
    "PK_ERROR_DRIVER_UNAVAILABLE",
    "PK_ERROR_NO_DEVICE",
    "PK_ERROR_UNSUPPORTED",
    "PK_ERROR_OUT_OF_MEMORY",
    "PK_ERROR_CUDA",
    "PK_ERROR_INTERNAL",
};
static_assert(sizeof kStatusNames / sizeof *kStatusNames == PK_ERROR_INTERNAL + 1,
              "one name per pk_status");

void require(const void *pointer, const char *what) {
  if (!pointer)
    fail(PK_ERROR_INVALID_ARGUMENT, std::string(what) + " is null");
}

/// The caller's options, read as far as their struct_size says (a caller
/// built against an older, shorter pk_load_options gets defaults for the
/// rest).
pk_load_options readOptions(const pk_load_options *given) {
  pk_load_options options;
  pk_load_options_init(&options);
  if (!given)
    return options;
  if (given->struct_size < offsetof(pk_load_options, device) ||
      given->struct_size > sizeof(pk_load_options))
    fail(PK_ERROR_INVALID_ARGUMENT, "pk_load_options.struct_size is " +
                                        std::to_string(given->struct_size) +
                                        "; initialize the options with pk_load_options_init");
  std::memcpy(&options, given, given->struct_size);
  if (options.flags & ~PK_LOAD_NO_DEVICE)
    fail(PK_ERROR_INVALID_ARGUMENT, "unknown pk_load_options.flags bits");
  if (options.device < -1)
    fail(PK_ERROR_INVALID_ARGUMENT, "pk_load_options.device is " + std::to_string(options.device) +
                                        "; expected a device ordinal or -1");
  if (options.num_artifacts && !options.artifacts)
    fail(PK_ERROR_INVALID_ARGUMENT, "pk_load_options.artifacts is null but num_artifacts is " +
                                        std::to_string(options.num_artifacts));
  return options;
}

ArtifactSource sourceOf(const pk_load_options &options, std::string directory) {
  ArtifactSource source;
  source.directory = std::move(directory);
  source.blobs = options.artifacts;
  source.numBlobs = options.num_artifacts;
  return source;
}

} // namespace

extern "C" {

PK_API const char *pk_last_error(void) { return lastError(); }

PK_API const char *pk_status_name(pk_status status) {
  // A C caller may pass any int (a status of a newer runtime, say), which
  // C++ may not even load as a pk_status: its bytes are read as an int.
  int code;
  static_assert(sizeof code == sizeof status);
  std::memcpy(&code, &status, sizeof code);
  if (code < 0 || code > PK_ERROR_INTERNAL)
    return "PK_STATUS_UNKNOWN";
  return kStatusNames[code];
}

PK_API const char *pk_runtime_version(void) { return PK_RUNTIME_VERSION; }
PK_API int pk_runtime_abi_version(void) { return PK_RUNTIME_ABI_VERSION; }

PK_API void pk_load_options_init(pk_load_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->device = -1;
}

PK_API pk_status pk_module_load(const char *manifest_path, pk_module **module) {
  return pk_module_load_ex(manifest_path, nullptr, module);
}

PK_API pk_status pk_module_load_ex(const char *manifest_path, const pk_load_options *options,
                                   pk_module **module) {
  if (module)
    *module = nullptr;
  return guard([&] {
    require(manifest_path, "the manifest path");
    require(module, "the module pointer");
    pk_load_options o = readOptions(options);
    std::string path = manifest_path;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      fail(PK_ERROR_IO, "cannot read manifest " + path + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    size_t slash = path.rfind('/');
    std::string directory = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    *module = loadModule(text.str(), path, sourceOf(o, directory), o).release();
  });
}

PK_API pk_status pk_module_load_memory(const void *manifest_json, size_t size,
                                       const pk_load_options *options, pk_module **module) {
  if (module)
    *module = nullptr;
  return guard([&] {
    require(manifest_json, "the manifest");
    require(module, "the module pointer");
    pk_load_options o = readOptions(options);
    std::string_view text(static_cast<const char *>(manifest_json), size);
    *module = loadModule(text, "manifest", sourceOf(o, ""), o).release();
  });
}

PK_API void pk_module_destroy(pk_module *module) {
  // A destructor that throws has nowhere to report to; guard() keeps the
  // promise that nothing escapes.
  (void)guard([&] { delete module; });
}

PK_API pk_status pk_module_get(pk_module *module, const char *name, pk_kernel **kernel) {
  if (kernel)
    *kernel = nullptr;
  return guard([&] {
    require(module, "the module");
    require(name, "the export name");
    require(kernel, "the kernel pointer");
    int index = module->manifest.findExport(name);
    if (index < 0) {
      std::string names;
      for (const Export &e : module->manifest.exports)
        names += (names.empty() ? "" : ", ") + e.name;
      fail(PK_ERROR_NOT_FOUND,
           module->origin + ": no export named \"" + name + "\"" +
               (names.empty() ? " (it has none)" : " (its exports: " + names + ")"));
    }
    pk_kernel &k = module->kernels[size_t(index)];
    if (!k.program && module->driver)
      fail(PK_ERROR_NOT_FOUND, module->origin + ": export \"" + std::string(name) +
                                   "\" has no program in " +
                                   module->manifest.artifacts[size_t(module->artifact)].file +
                                   ", the artifact for this device");
    *kernel = &k;
  });
}

PK_API size_t pk_module_num_exports(const pk_module *module) {
  return module ? module->manifest.exports.size() : 0;
}

PK_API const char *pk_module_export_name(const pk_module *module, size_t index) {
  if (!module || index >= module->manifest.exports.size())
    return nullptr;
  return module->manifest.exports[index].name.c_str();
}

PK_API const char *pk_module_target(const pk_module *module) {
  if (!module || module->artifact < 0)
    return "";
  return module->manifest.artifacts[size_t(module->artifact)].target.c_str();
}

PK_API const char *pk_module_artifact(const pk_module *module) {
  if (!module || module->artifact < 0)
    return "";
  return module->manifest.artifacts[size_t(module->artifact)].file.c_str();
}

PK_API int pk_module_device(const pk_module *module) {
  return module && module->driver ? module->ordinal : -1;
}

PK_API const char *pk_kernel_name(const pk_kernel *kernel) {
  return kernel ? kernel->exp->name.c_str() : nullptr;
}

PK_API size_t pk_kernel_num_params(const pk_kernel *kernel) {
  return kernel ? kernel->exp->params.size() : 0;
}

PK_API pk_status pk_kernel_param(const pk_kernel *kernel, size_t index, pk_param_info *info) {
  return guard([&] {
    require(kernel, "the kernel");
    require(info, "the pk_param_info pointer");
    if (index >= kernel->exp->params.size())
      fail(PK_ERROR_INVALID_ARGUMENT, kernel->exp->name + " has " +
                                          std::to_string(kernel->exp->params.size()) +
                                          " params; there is no param " + std::to_string(index));
    const Param &p = kernel->exp->params[index];
    info->name = p.name.c_str();
    info->role = p.output ? PK_PARAM_OUTPUT : PK_PARAM_INPUT;
    info->dtype = p.dtype->dl;
    info->ndim = int32_t(p.shape.size());
    info->alignment = p.alignment;
  });
}

PK_API size_t pk_kernel_num_symbols(const pk_kernel *kernel) {
  return kernel ? kernel->exp->symbols.size() : 0;
}

PK_API const char *pk_kernel_symbol_name(const pk_kernel *kernel, size_t index) {
  if (!kernel || index >= kernel->exp->symbols.size())
    return nullptr;
  return kernel->exp->symbols[index].name.c_str();
}

PK_API pk_status pk_kernel_symbol_source(const pk_kernel *kernel, size_t index, size_t *param,
                                         int32_t *dim) {
  return guard([&] {
    require(kernel, "the kernel");
    require(param, "the param pointer");
    require(dim, "the dim pointer");
    const Export &e = *kernel->exp;
    if (index >= e.symbols.size())
      fail(PK_ERROR_INVALID_ARGUMENT, e.name + " has " + std::to_string(e.symbols.size()) +
                                          " symbolic sizes; there is no symbol " +
                                          std::to_string(index));
    *param = e.symbols[index].param;
    *dim = int32_t(e.symbols[index].dim);
  });
}

PK_API pk_status pk_kernel_param_shape(const pk_kernel *kernel, size_t index,
                                       const int64_t *symbol_values, size_t num_symbols,
                                       int64_t *shape) {
  return guard([&] {
    require(kernel, "the kernel");
    const Export &e = *kernel->exp;
    if (index >= e.params.size())
      fail(PK_ERROR_INVALID_ARGUMENT, e.name + " has " + std::to_string(e.params.size()) +
                                          " params; there is no param " + std::to_string(index));
    if (num_symbols != e.symbols.size())
      fail(PK_ERROR_INVALID_ARGUMENT, e.name + " has " + std::to_string(e.symbols.size()) +
                                          " symbolic sizes, got " + std::to_string(num_symbols) +
                                          " values");
    if (num_symbols)
      require(symbol_values, "the symbol values");
    const Param &p = e.params[index];
    if (!p.shape.empty())
      require(shape, "the shape pointer");
    for (size_t s = 0; s < num_symbols; ++s)
      if (symbol_values[s] < 0)
        fail(PK_ERROR_SHAPE, e.name + ": symbol " + e.symbols[s].name + " = " +
                                 std::to_string(symbol_values[s]) + " is negative");
    for (size_t d = 0; d < p.shape.size(); ++d) {
      std::string why;
      if (!p.shape[d].evaluate(symbol_values, shape[d], why))
        fail(PK_ERROR_SHAPE, e.name + ": dimension " + std::to_string(d) + " of \"" + p.name +
                                 "\", " + p.shape[d].str(e.symbolNames) + ", gives " + why);
    }
  });
}

PK_API pk_status pk_validate(const pk_kernel *kernel, const DLTensor *args, size_t num_args) {
  return guard([&] {
    require(kernel, "the kernel");
    validateLaunch(*kernel, args, num_args);
  });
}

PK_API pk_status pk_launch(const pk_kernel *kernel, const DLTensor *args, size_t num_args,
                           void *stream) {
  return guard([&] {
    require(kernel, "the kernel");
    launch(*kernel, args, num_args, static_cast<cu::CUstream>(stream));
  });
}

} // extern "C"
