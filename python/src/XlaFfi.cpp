//===- XlaFfi.cpp - pkc exports as an XLA FFI custom call -----------------===//
//
// `pkc.jax` registers `pkc_launch` with XLA (jax.ffi.register_ffi_target)
// and calls it through jax.ffi.ffi_call, so a pkc export runs inside
// jax.jit like any other op: XLA allocates the outputs and passes the
// buffers and its CUDA stream, and this handler launches through the
// runtime on them.
//
// The custom call names the module by a key (attribute `module`: the
// manifest's absolute path, or a hash for one loaded from memory) and the
// export (`export`). The Python side registers each module it hands to JAX
// under its key; the handler loads it again on the device XLA runs on when
// that is not the module's own (and loads a key that is a path on first
// use, so a serialized jax.export runs in a fresh process once pkc.jax is
// imported). Loaded modules stay for the life of the process, as XLA's
// executables may run them at any time.
//
// Only built when jaxlib's FFI headers are found (PKC_WITH_XLA_FFI).
//
//===----------------------------------------------------------------------===//
#include "XlaFfi.h"

#include "Errors.h"

#include "xla/ffi/api/ffi.h"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <mutex>
#include <string_view>
#include <unordered_map>

namespace nb = nanobind;
namespace ffi = xla::ffi;

namespace pkc {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<ModuleSource>> sources;
  /// Loaded modules by "key\ndevice", and their kernels by "key\ndevice\nexport".
  std::unordered_map<std::string, std::shared_ptr<ModuleHandle>> modules;
  std::unordered_map<std::string, pk_kernel *> kernels;
};

Registry &registry() {
  static auto *r = new Registry; // never destroyed: XLA may call late
  return *r;
}

/// The kernel `exportName` of module `key` on `device`, loading the module
/// there on first use. Returns null and sets `error` on failure.
pk_kernel *findKernel(std::string_view key, std::string_view exportName, int device,
                      std::string &error) {
  Registry &r = registry();
  std::string moduleKey = std::string(key) + "\n" + std::to_string(device);
  std::string kernelKey = moduleKey + "\n" + std::string(exportName);
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.kernels.find(kernelKey); it != r.kernels.end())
    return it->second;
  auto loaded = r.modules.find(moduleKey);
  if (loaded == r.modules.end()) {
    std::shared_ptr<ModuleSource> source;
    if (auto it = r.sources.find(std::string(key)); it != r.sources.end()) {
      source = it->second;
    } else if (!key.empty() && key.front() == '/') {
      auto s = std::make_shared<ModuleSource>();
      s->path = std::string(key);
      source = s;
    } else {
      error = "pkc: no module \"" + std::string(key) +
              "\" was registered in this process (load it with pkc before running the "
              "computation)";
      return nullptr;
    }
    // On XLA's device for real, however the Python side loaded it.
    ModuleSource onDevice = *source;
    onDevice.flags = 0;
    onDevice.computeCapability = 0;
    pk_module *m = nullptr;
    pk_status s = onDevice.tryLoad(device, &m);
    if (s != PK_OK) {
      error = std::string("pkc: ") + pk_last_error();
      return nullptr;
    }
    auto handle = std::make_shared<ModuleHandle>();
    handle->module = m;
    handle->source = source;
    loaded = r.modules.emplace(moduleKey, std::move(handle)).first;
  }
  pk_kernel *k = nullptr;
  if (pk_module_get(loaded->second->module, std::string(exportName).c_str(), &k) != PK_OK) {
    error = std::string("pkc: ") + pk_last_error();
    return nullptr;
  }
  r.kernels.emplace(kernelKey, k);
  return k;
}

/// XLA's element types as DLPack's; false for those pkc kernels never take.
bool toDLPack(ffi::DataType type, DLDataType &dl) {
  switch (type) {
  case ffi::DataType::PRED:
    dl = {6 /* kDLBool */, 8, 1};
    return true;
#define PKC_INT(T, code, bits)                                                                     \
  case ffi::DataType::T:                                                                           \
    dl = {code, bits, 1};                                                                          \
    return true;
    PKC_INT(S8, kDLInt, 8)
    PKC_INT(S16, kDLInt, 16)
    PKC_INT(S32, kDLInt, 32)
    PKC_INT(S64, kDLInt, 64)
    PKC_INT(U8, kDLUInt, 8)
    PKC_INT(U16, kDLUInt, 16)
    PKC_INT(U32, kDLUInt, 32)
    PKC_INT(U64, kDLUInt, 64)
    PKC_INT(F16, kDLFloat, 16)
    PKC_INT(F32, kDLFloat, 32)
    PKC_INT(F64, kDLFloat, 64)
    PKC_INT(BF16, kDLBfloat, 16)
#undef PKC_INT
  default:
    return false;
  }
}

ffi::Error launch(void *stream, int32_t device, std::string_view key, std::string_view exportName,
                  ffi::RemainingArgs args, ffi::RemainingRets rets) {
  std::string error;
  pk_kernel *kernel = findKernel(key, exportName, device, error);
  if (!kernel)
    return ffi::Error(ffi::ErrorCode::kNotFound, error);
  size_t n = args.size() + rets.size();
  std::vector<DLTensor> tensors(n);
  auto describe = [&](size_t i, const ffi::AnyBuffer &buffer) -> bool {
    DLTensor &t = tensors[i];
    if (!toDLPack(buffer.element_type(), t.dtype))
      return false;
    auto dims = buffer.dimensions();
    t.data = buffer.untyped_data();
    t.device = {kDLCUDA, device};
    t.ndim = int32_t(dims.size());
    t.shape = const_cast<int64_t *>(dims.begin());
    t.strides = nullptr; // XLA's default layout is row-major, which the call asks for
    t.byte_offset = 0;
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    bool known;
    if (i < args.size()) {
      auto buffer = args.get<ffi::AnyBuffer>(i);
      if (buffer.has_error())
        return buffer.error();
      known = describe(i, *buffer);
    } else {
      auto buffer = rets.get<ffi::AnyBuffer>(i - args.size());
      if (buffer.has_error())
        return buffer.error();
      known = describe(i, **buffer);
    }
    if (!known)
      return ffi::Error::InvalidArgument("pkc: buffer " + std::to_string(i) +
                                         " has an element type pkc kernels do not take");
  }
  if (pk_launch(kernel, tensors.data(), n, stream) != PK_OK)
    return ffi::Error(ffi::ErrorCode::kInternal, std::string("pkc: ") + pk_last_error());
  return ffi::Error::Success();
}

ffi::Error launchOnCuda(void *stream, int32_t device, std::string_view key,
                        std::string_view exportName, ffi::RemainingArgs args,
                        ffi::RemainingRets rets) {
  return launch(stream, device, key, exportName, args, rets);
}

// Only for pkc's own tests: the same handler on XLA's CPU backend, with
// XLA's host buffers passed as device 0's memory and no stream, so that the
// whole custom call runs in CI over the fake driver (which keeps "device"
// memory on the host). A real driver would refuse the host pointers.
ffi::Error launchOnCpuForTests(std::string_view key, std::string_view exportName,
                               ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return launch(nullptr, 0, key, exportName, args, rets);
}

} // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(PkcLaunchCuda, launchOnCuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void *>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Attr<std::string_view>("module")
                                  .Attr<std::string_view>("export")
                                  .RemainingArgs()
                                  .RemainingRets());

XLA_FFI_DEFINE_HANDLER_SYMBOL(PkcLaunchCpuForTests, launchOnCpuForTests,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("module")
                                  .Attr<std::string_view>("export")
                                  .RemainingArgs()
                                  .RemainingRets());

void defineXlaFfi(nb::module_ &m) {
  m.attr("has_xla_ffi") = true;
  m.def(
      "xla_register",
      [](const std::string &key, const ModuleSource &source) {
        // A copy: the registry outlives the interpreter's objects.
        auto copy = std::make_shared<ModuleSource>(source);
        Registry &r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        r.sources[key] = std::move(copy);
      },
      nb::arg("key"), nb::arg("source"),
      "Registers a module's source under `key` for the pkc_launch custom call.");
  m.def(
      "xla_handlers",
      []() {
        nb::dict handlers;
        handlers["cuda"] = nb::capsule(reinterpret_cast<void *>(&PkcLaunchCuda));
        handlers["cpu_for_tests"] = nb::capsule(reinterpret_cast<void *>(&PkcLaunchCpuForTests));
        return handlers;
      },
      "The XLA FFI handlers: {\"cuda\": ..., \"cpu_for_tests\": ...}, as capsules for "
      "jax.ffi.register_ffi_target.");
}

} // namespace pkc
