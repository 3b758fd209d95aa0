//===- CudaRun.cpp - pkc run --device=cuda: an export on the GPU ----------===//
//
// Compiles the module in-process for the GPU's architecture, describes the
// result with the same launch manifest `pkc compile` writes, and runs it
// through the runtime library (src/runtime) from memory: the manifest and
// cubin never touch the disk, and what runs is exactly what a user's host
// program would load. Inputs and outputs are host arrays, as for the
// interpreter.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "backends/Compile.h"
#include "driver/Session.h"
#include "interpreter/Interpreter.h"
#include "ir/PkDialect.h"

#include "mlir/IR/Diagnostics.h"

#include "pk/runtime.h"

#include <algorithm>

namespace pk::cli {

namespace {

/// The pkc target closest to device 0: its own architecture (sm_90a on
/// 9.0), else the newest of its major version below it. Empty (and
/// `error` set) when pkc has none.
std::string targetFor(int major, int minor, std::string &error) {
  std::vector<std::string> supported = backends::supportedTargets();
  std::string exact = "cuda:sm_" + std::to_string(major) + std::to_string(minor);
  if (std::find(supported.begin(), supported.end(), exact + "a") != supported.end())
    return exact + "a";
  for (int m = minor; m >= 0; --m) {
    std::string t = "cuda:sm_" + std::to_string(major) + std::to_string(m);
    if (std::find(supported.begin(), supported.end(), t) != supported.end())
      return t;
  }
  error = "pkc has no CUDA target for compute capability " + std::to_string(major) + "." +
          std::to_string(minor) + " (it compiles for";
  for (const std::string &t : supported)
    if (t.rfind("cuda:", 0) == 0)
      error += " " + t;
  error += ")";
  return "";
}

/// Device memory freed on every path out.
struct DeviceArrays {
  std::vector<void *> pointers;
  ~DeviceArrays() {
    for (void *p : pointers)
      pk_device_free(0, p);
  }
};

} // namespace

bool cudaDeviceAvailable() {
  int count = 0;
  return pk_device_count(&count) == PK_OK && count > 0;
}

RunResult runOnCuda(Session &session, mlir::ModuleOp module, const std::string &entry,
                    const ExportSignature &signature, const std::vector<HostArray> &inputs) {
  RunResult result;
  auto runtimeError = [&](const std::string &what) {
    result.error = "--device=cuda: " + what + ": " + pk_last_error();
    return result;
  };
  int count = 0;
  if (pk_device_count(&count) != PK_OK)
    return runtimeError("no CUDA GPU is available");
  if (count == 0) {
    result.error = "--device=cuda: no CUDA GPU is available (the driver sees none)";
    return result;
  }
  int major = 0, minor = 0;
  if (pk_device_compute_capability(0, &major, &minor) != PK_OK)
    return runtimeError("cannot query device 0");
  std::string error;
  std::string targetName = targetFor(major, minor, error);
  if (targetName.empty()) {
    result.error = "--device=cuda: " + error;
    return result;
  }

  // Compile, with the backend's diagnostics pointing at the user's lines.
  std::optional<backends::Target> target = backends::parseTarget(targetName, error);
  backends::BackendOptions options;
  options.target = *target;
  std::optional<backends::BackendOutput> output;
  {
    DiagnosticEngine &diag = session.diagnostics();
    mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
      Severity severity = d.getSeverity() == mlir::DiagnosticSeverity::Warning ? Severity::Warning
                          : d.getSeverity() == mlir::DiagnosticSeverity::Error ? Severity::Error
                                                                               : Severity::Note;
      diag.report(session.diagnosticAt(d.getLocation(), severity, d.str()));
      return mlir::success();
    });
    output = backends::compile(module, options);
  }
  if (!output) {
    result.error = "--device=cuda: compiling for " + targetName + " failed";
    return result;
  }

  // The manifest `pkc compile` would write, and the artifact beside it.
  backends::Manifest manifest;
  manifest.sourcePath = "<pkc run>";
  manifest.sourceSha256 = backends::sha256Hex("");
  for (auto op : module.getOps<pk::ExportOp>())
    manifest.exports.push_back(exportSignature(op));
  backends::Artifact artifact;
  artifact.target = targetName;
  artifact.file = "run" + output->extension;
  artifact.format = output->format;
  artifact.sha256 = backends::sha256Hex(output->artifact);
  artifact.size = output->artifact.size();
  artifact.cudaPrograms = std::move(output->cudaPrograms);
  manifest.artifacts.push_back(std::move(artifact));
  std::string json = backends::writeManifest(manifest);

  pk_artifact_data blob = {manifest.artifacts[0].file.c_str(), output->artifact.data(),
                           output->artifact.size()};
  pk_load_options load;
  pk_load_options_init(&load);
  load.device = 0;
  load.artifacts = &blob;
  load.num_artifacts = 1;
  pk_module *loaded = nullptr;
  if (pk_module_load_memory(json.data(), json.size(), &load, &loaded) != PK_OK)
    return runtimeError("cannot load the compiled kernels");
  std::unique_ptr<pk_module, void (*)(pk_module *)> owner(loaded, pk_module_destroy);
  pk_kernel *kernel = nullptr;
  if (pk_module_get(loaded, entry.c_str(), &kernel) != PK_OK)
    return runtimeError("cannot find export '" + entry + "'");

  // Symbols from the inputs, as the signature binds them; outputs sized
  // from them.
  std::vector<int64_t> symbols(signature.symbols.size());
  for (size_t s = 0; s < symbols.size(); ++s)
    symbols[s] = inputs[signature.bindings[s].argument].shape()[signature.bindings[s].dim];
  for (const ExportSignature::Array &r : signature.results)
    result.outputs.emplace_back(r.dtype, concreteShape(r, symbols));

  DeviceArrays device;
  std::vector<const HostArray *> arrays;
  for (const HostArray &a : inputs)
    arrays.push_back(&a);
  for (const HostArray &a : result.outputs)
    arrays.push_back(&a);
  std::vector<DLTensor> args(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    void *p = nullptr;
    if (pk_device_alloc(0, arrays[i]->byteSize(), &p) != PK_OK)
      return runtimeError("cannot allocate device memory");
    device.pointers.push_back(p);
    if (i < inputs.size() &&
        pk_memcpy_to_device(0, p, arrays[i]->data(), arrays[i]->byteSize()) != PK_OK)
      return runtimeError("cannot copy an input to the device");
    pk_param_info info;
    if (pk_kernel_param(kernel, i, &info) != PK_OK)
      return runtimeError("the compiled export does not match its signature");
    args[i] = DLTensor{p,
                       DLDevice{kDLCUDA, 0},
                       int32_t(arrays[i]->rank()),
                       info.dtype,
                       const_cast<int64_t *>(arrays[i]->shape().data()),
                       nullptr,
                       0};
  }
  if (pk_launch(kernel, args.data(), args.size(), nullptr) != PK_OK)
    return runtimeError("launching '" + entry + "' failed");
  for (size_t o = 0; o < result.outputs.size(); ++o) {
    HostArray &out = result.outputs[o];
    if (pk_memcpy_to_host(0, out.data(), device.pointers[inputs.size() + o], out.byteSize()) !=
        PK_OK)
      return runtimeError("running '" + entry + "' failed");
  }
  return result;
}

} // namespace pk::cli
