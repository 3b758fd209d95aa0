//===- CudaExport.h - An export compiled for GPU 0 and loaded ---*- C++ -*-===//
//
// What `pkc run --device=cuda` and `pkc tune` share: the module compiled
// in-process for GPU 0's architecture, described by the manifest `pkc
// compile` would write and loaded from memory by the runtime library, and
// device arrays for its arguments. What runs is exactly what a user's host
// program would load.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CLI_PKC_CUDAEXPORT_H
#define PK_CLI_PKC_CUDAEXPORT_H

#include "backends/Compile.h"
#include "backends/Manifest.h"
#include "interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"

#include "pk/runtime.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pk {
class Session;
}

namespace pk::cli {

/// The pkc target for GPU 0: its own architecture (sm_90a on 9.0), else
/// the newest of its major version below it. Empty, with `error` set, when
/// there is no GPU or pkc has no target for it.
std::string cudaTargetOfDevice(std::string &error);

struct CudaExport {
  std::unique_ptr<pk_module, void (*)(pk_module *)> module{nullptr, pk_module_destroy};
  pk_kernel *kernel = nullptr;
  /// What the backend made: each export's launches, with what ptxas reported.
  std::vector<backends::CudaProgram> programs;
};

/// Compiles `module` for the CUDA `target`, with the backend's diagnostics
/// reported through `session` at the user's lines. Nothing, with `error`
/// set, on failure.
std::optional<backends::BackendOutput> compileForCuda(Session &session, mlir::ModuleOp module,
                                                      const std::string &target,
                                                      std::string &error);

/// Compiles `module` for `target` and loads it for GPU 0, with the backend's
/// diagnostics reported through `session` at the user's lines. Nothing,
/// with `error` set, on failure.
std::optional<CudaExport> loadOnCuda(Session &session, mlir::ModuleOp module,
                                     const std::string &entry, const std::string &target,
                                     std::string &error);

/// Device copies of an export's inputs and room for its outputs, freed
/// with the object.
class DeviceArguments {
public:
  DeviceArguments() = default;
  DeviceArguments(const DeviceArguments &) = delete;
  DeviceArguments &operator=(const DeviceArguments &) = delete;
  ~DeviceArguments();

  /// Allocates the inputs and outputs (in that order, the kernel's
  /// parameters) and copies the inputs to the device. False, with `error`
  /// set, on failure.
  bool prepare(const pk_kernel *kernel, const std::vector<HostArray> &inputs,
               const std::vector<HostArray> &outputs, std::string &error);
  const std::vector<DLTensor> &tensors() const { return args; }
  void *pointer(size_t i) const { return pointers[i]; }

private:
  std::vector<void *> pointers;
  std::vector<DLTensor> args;
};

} // namespace pk::cli

#endif // PK_CLI_PKC_CUDAEXPORT_H
