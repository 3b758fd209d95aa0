//===- Extension.cpp - pkc._pkc, the runtime's C API for Python -----------===//
//
// The extension module under the `pkc` package: modules and kernels over
// the runtime's C API (include/pk/runtime.h), the launch path, the runtime's
// errors as exceptions, and the XLA FFI handler. Everything a user calls
// goes through pkc/__init__.py, which adds output allocation by framework,
// the compiler and its cache; this layer has no policy of its own.
//
//===----------------------------------------------------------------------===//
#include "Arrays.h"
#include "Errors.h"
#include "Modules.h"
#ifdef PKC_WITH_XLA_FFI
#include "XlaFfi.h"
#endif

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;
using namespace nb::literals;

namespace pkc {
namespace {

/// A Python handle on a loaded module.
struct Module {
  std::shared_ptr<ModuleHandle> handle;

  static Module load(std::shared_ptr<ModuleSource> source, int device) {
    Module m;
    m.handle = std::make_shared<ModuleHandle>();
    m.handle->module = source->load(device);
    m.handle->source = std::move(source);
    return m;
  }

  std::vector<std::string> exports() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < pk_module_num_exports(handle->module); ++i)
      names.push_back(pk_module_export_name(handle->module, i));
    return names;
  }

  Kernel kernel(const std::string &name) const {
    pk_kernel *k = nullptr;
    check(pk_module_get(handle->module, name.c_str(), &k));
    return Kernel(handle, k);
  }
};

uint32_t loadFlags(bool noDevice) { return noDevice ? PK_LOAD_NO_DEVICE : 0u; }

} // namespace
} // namespace pkc

using namespace pkc;

NB_MODULE(_pkc, m) {
  m.doc() = "pkc's runtime library for Python (use the pkc package, not this module)";
  defineErrors(m);

  m.def("runtime_version", &pk_runtime_version);
  m.def("device_count", []() {
    int count = 0;
    check(pk_device_count(&count));
    return count;
  });
  m.def(
      "compute_capability",
      [](int device) {
        int major = 0, minor = 0;
        check(pk_device_compute_capability(device, &major, &minor));
        return std::make_tuple(major, minor);
      },
      "device"_a);
  m.def("enable_torch", &enableTorch, "tensor_type"_a, "dtypes"_a,
        "Reads instances of tensor_type (torch.Tensor) through their attributes; dtypes maps "
        "each torch.dtype to its NumPy name.");
  m.def("enable_torch_shortcuts", &enableTorchShortcuts, "framework"_a, "raw_stream"_a,
        "empty_like"_a,
        "Calls whose framework is `framework` allocate outputs with Tensor.new_empty (or "
        "empty_like(first input) when it is a dense row-major array of the output's shape and "
        "dtype) and take the stream from raw_stream(device index), skipping the framework's "
        "methods.");
  m.def("enable_cupy_shortcuts", &enableCupyShortcuts, "framework"_a, "current_device"_a,
        "current_stream"_a, "ndarray"_a,
        "Calls whose framework is `framework`, on arrays of current_device(), take "
        "current_stream().ptr and allocate outputs of the first input's dtype as "
        "ndarray(shape, input.dtype), skipping the framework's methods.");
  m.def("enable_cupy", &enableCupy, "array_type"_a,
        "Reads instances of array_type (cupy.ndarray) through their attributes.");

  nb::class_<ModuleSource>(m, "ModuleSource",
                           "Where a module was loaded from (for the XLA custom call).")
      .def_ro("path", &ModuleSource::path);

  nb::class_<ParamInfo>(m, "Param", "One array an export takes or returns.")
      .def_ro("name", &ParamInfo::name)
      .def_prop_ro("role", [](const ParamInfo &p) { return p.output ? "output" : "input"; })
      .def_ro("dtype", &ParamInfo::dtypeName)
      .def_ro("ndim", &ParamInfo::ndim)
      .def_ro("alignment", &ParamInfo::alignment)
      .def("__repr__", [](const ParamInfo &p) {
        return "Param(" + p.name + ", " + (p.output ? "output" : "input") + ", " + p.dtypeName +
               ", ndim=" + std::to_string(p.ndim) + ")";
      });

  nb::class_<Kernel>(m, "Kernel", "An export of a loaded module.")
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("params", &Kernel::params)
      .def_prop_ro("num_inputs", &Kernel::numInputs)
      .def_prop_ro("num_outputs", &Kernel::numOutputs)
      .def_prop_ro("symbols",
                   [](const Kernel &k) {
                     std::vector<std::tuple<std::string, size_t, int>> out;
                     for (const SymbolInfo &s : k.symbols())
                       out.emplace_back(s.name, s.param, s.dim);
                     return out;
                   })
      .def_prop_ro("module_source", [](const Kernel &k) { return k.module().source; })
      .def("output_shapes", &Kernel::outputShapes, "input_shapes"_a)
      .def("check", &Kernel::check, "shapes"_a, "dtypes"_a)
      .def("launch", &Kernel::launch, "arrays"_a, "stream"_a = 0)
      .def("call", &Kernel::call, "inputs"_a, "out"_a.none(), "framework"_a.none(),
           "stream"_a.none());

  nb::class_<Module>(m, "Module", "A loaded manifest and its artifact.")
      .def_static(
          "load",
          [](const std::string &path, int device, bool noDevice, int computeCapability) {
            auto source = std::make_shared<ModuleSource>();
            source->path = path;
            source->flags = loadFlags(noDevice);
            source->computeCapability = computeCapability;
            return Module::load(std::move(source), device);
          },
          "path"_a, "device"_a = -1, "no_device"_a = false, "compute_capability"_a = 0)
      .def_static(
          "load_memory",
          [](nb::bytes manifest, std::map<std::string, nb::bytes> artifacts, int device,
             bool noDevice, int computeCapability) {
            auto source = std::make_shared<ModuleSource>();
            source->manifest.assign(manifest.c_str(), manifest.size());
            for (auto &[file, bytes] : artifacts)
              source->blobs[file].assign(bytes.c_str(), bytes.size());
            source->flags = loadFlags(noDevice);
            source->computeCapability = computeCapability;
            return Module::load(std::move(source), device);
          },
          "manifest"_a, "artifacts"_a, "device"_a = -1, "no_device"_a = false,
          "compute_capability"_a = 0)
      .def_prop_ro("exports", &Module::exports)
      .def_prop_ro("target", [](const Module &m) { return pk_module_target(m.handle->module); })
      .def_prop_ro("artifact", [](const Module &m) { return pk_module_artifact(m.handle->module); })
      .def_prop_ro("device", [](const Module &m) { return pk_module_device(m.handle->module); })
      .def_prop_ro("source", [](const Module &m) { return m.handle->source; })
      .def("kernel", &Module::kernel, "name"_a);

#ifdef PKC_WITH_XLA_FFI
  defineXlaFfi(m);
#else
  m.attr("has_xla_ffi") = false;
#endif
}
