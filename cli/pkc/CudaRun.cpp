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
#include "CudaExport.h"
#include "ExportInputs.h"

#include "backends/Compile.h"
#include "driver/Session.h"
#include "interpreter/Interpreter.h"
#include "ir/PkDialect.h"

#include "mlir/IR/Diagnostics.h"

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

} // namespace

bool cudaDeviceAvailable() {
  int count = 0;
  return pk_device_count(&count) == PK_OK && count > 0;
}

std::string cudaTargetOfDevice(std::string &error) {
  int count = 0;
  if (pk_device_count(&count) != PK_OK) {
    error = std::string("no CUDA GPU is available: ") + pk_last_error();
    return "";
  }
  if (count == 0) {
    error = "no CUDA GPU is available (the driver sees none)";
    return "";
  }
  int major = 0, minor = 0;
  if (pk_device_compute_capability(0, &major, &minor) != PK_OK) {
    error = std::string("cannot query device 0: ") + pk_last_error();
    return "";
  }
  return targetFor(major, minor, error);
}

std::optional<backends::BackendOutput> compileForCuda(Session &session, mlir::ModuleOp module,
                                                      const std::string &targetName,
                                                      std::string &error) {
  std::optional<backends::Target> target = backends::parseTarget(targetName, error);
  if (!target)
    return std::nullopt;
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
  if (!output)
    error = "compiling for " + targetName + " failed";
  return output;
}

std::optional<CudaExport> loadOnCuda(Session &session, mlir::ModuleOp module,
                                     const std::string &entry, const std::string &targetName,
                                     std::string &error) {
  std::optional<backends::BackendOutput> output =
      compileForCuda(session, module, targetName, error);
  if (!output)
    return std::nullopt;

  // The manifest `pkc compile` would write, and the artifact beside it.
  backends::Manifest manifest;
  manifest.sourcePath = "<pkc>";
  manifest.sourceSha256 = backends::sha256Hex("");
  for (auto op : module.getOps<pk::ExportOp>())
    manifest.exports.push_back(exportSignature(op));
  backends::Artifact artifact;
  artifact.target = targetName;
  artifact.file = "kernels" + output->extension;
  artifact.format = output->format;
  artifact.sha256 = backends::sha256Hex(output->artifact);
  artifact.size = output->artifact.size();
  artifact.cudaPrograms = output->cudaPrograms;
  manifest.artifacts.push_back(std::move(artifact));
  std::string json = backends::writeManifest(manifest);

  CudaExport loaded;
  loaded.programs = std::move(output->cudaPrograms);
  pk_artifact_data blob = {manifest.artifacts[0].file.c_str(), output->artifact.data(),
                           output->artifact.size()};
  pk_load_options load;
  pk_load_options_init(&load);
  load.device = 0;
  load.artifacts = &blob;
  load.num_artifacts = 1;
  pk_module *raw = nullptr;
  if (pk_module_load_memory(json.data(), json.size(), &load, &raw) != PK_OK) {
    error = std::string("cannot load the compiled kernels: ") + pk_last_error();
    return std::nullopt;
  }
  loaded.module.reset(raw);
  if (pk_module_get(raw, entry.c_str(), &loaded.kernel) != PK_OK) {
    error = "cannot find export '" + entry + "': " + pk_last_error();
    return std::nullopt;
  }
  return loaded;
}

DeviceArguments::~DeviceArguments() {
  for (void *p : pointers)
    pk_device_free(0, p);
}

bool DeviceArguments::prepare(const pk_kernel *kernel, const std::vector<HostArray> &inputs,
                              const std::vector<HostArray> &outputs, std::string &error) {
  std::vector<const HostArray *> arrays;
  for (const HostArray &a : inputs)
    arrays.push_back(&a);
  for (const HostArray &a : outputs)
    arrays.push_back(&a);
  size_t numInputs = inputs.size();
  args.resize(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    void *p = nullptr;
    if (pk_device_alloc(0, arrays[i]->byteSize(), &p) != PK_OK) {
      error = std::string("cannot allocate device memory: ") + pk_last_error();
      return false;
    }
    pointers.push_back(p);
    if (i < numInputs &&
        pk_memcpy_to_device(0, p, arrays[i]->data(), arrays[i]->byteSize()) != PK_OK) {
      error = std::string("cannot copy an input to the device: ") + pk_last_error();
      return false;
    }
    pk_param_info info;
    if (pk_kernel_param(kernel, i, &info) != PK_OK) {
      error = "the compiled export does not match its signature";
      return false;
    }
    args[i] = DLTensor{p,
                       DLDevice{kDLCUDA, 0},
                       int32_t(arrays[i]->rank()),
                       info.dtype,
                       const_cast<int64_t *>(arrays[i]->shape().data()),
                       nullptr,
                       0};
  }
  return true;
}

RunResult runOnCuda(Session &session, mlir::ModuleOp module, const std::string &entry,
                    const ExportSignature &signature, const std::vector<HostArray> &inputs) {
  RunResult result;
  std::string error;
  std::string target = cudaTargetOfDevice(error);
  std::optional<CudaExport> loaded;
  if (!target.empty())
    loaded = loadOnCuda(session, module, entry, target, error);
  if (!loaded) {
    result.error = "--device=cuda: " + error;
    return result;
  }

  result.outputs = outputArrays(signature, inputs);
  DeviceArguments device;
  auto runtimeError = [&](const std::string &what) {
    result.error = "--device=cuda: " + what;
    return result;
  };
  if (!device.prepare(loaded->kernel, inputs, result.outputs, error))
    return runtimeError(error);
  if (pk_launch(loaded->kernel, device.tensors().data(), device.tensors().size(), nullptr) != PK_OK)
    return runtimeError("launching '" + entry + "' failed: " + pk_last_error());
  for (size_t o = 0; o < result.outputs.size(); ++o) {
    HostArray &out = result.outputs[o];
    if (pk_memcpy_to_host(0, out.data(), device.pointer(inputs.size() + o), out.byteSize()) !=
        PK_OK)
      return runtimeError("running '" + entry + "' failed: " + pk_last_error());
  }
  return result;
}

} // namespace pk::cli
