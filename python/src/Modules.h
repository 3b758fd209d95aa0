//===- Modules.h - Loaded modules and their kernels -------------*- C++ -*-===//
//
// A Module owns a pk_module; a Kernel is one of its exports and keeps the
// module alive. A module also remembers where it came from (a manifest
// path, or the manifest and artifacts in memory), so that the XLA custom
// call can load the same artifacts on whichever device XLA runs it on.
//
//===----------------------------------------------------------------------===//
#ifndef PKC_PYTHON_MODULES_H
#define PKC_PYTHON_MODULES_H

#include "pk/runtime.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pkc {

/// What a module is loaded from.
struct ModuleSource {
  std::string path;                         ///< the manifest file, or empty
  std::string manifest;                     ///< the manifest's JSON, when in memory
  std::map<std::string, std::string> blobs; ///< artifacts in memory, by file name
  uint32_t flags = 0;                       ///< PK_LOAD_*
  int32_t computeCapability = 0;

  /// Loads the module on `device` (-1: the runtime's default). Raises.
  pk_module *load(int device) const;
  /// The same without Python: for XLA's threads, which do not hold the GIL.
  pk_status tryLoad(int device, pk_module **module) const;
};

/// An owned pk_module.
struct ModuleHandle {
  pk_module *module = nullptr;
  std::shared_ptr<ModuleSource> source;
  ~ModuleHandle() { pk_module_destroy(module); }
};

struct ParamInfo {
  std::string name;
  bool output = false;
  DLDataType dtype{};
  std::string dtypeName;
  int ndim = 0;
  uint64_t alignment = 1;
};

struct SymbolInfo {
  std::string name;
  size_t param = 0;
  int dim = 0;
};

/// An export of a loaded module, with its signature read once.
class Kernel {
public:
  Kernel(std::shared_ptr<ModuleHandle> module, pk_kernel *kernel);

  const std::string &name() const { return name_; }
  const std::vector<ParamInfo> &params() const { return params_; }
  const std::vector<SymbolInfo> &symbols() const { return symbols_; }
  size_t numInputs() const { return numInputs_; }
  size_t numOutputs() const { return params_.size() - numInputs_; }
  pk_kernel *handle() const { return kernel_; }
  const ModuleHandle &module() const { return *module_; }

  /// The outputs' shapes for inputs of these shapes. Raises ArgumentError
  /// when a symbol cannot be read from them (too few dimensions, or a
  /// symbol bound by an output).
  std::vector<std::vector<int64_t>>
  outputShapes(const std::vector<std::vector<int64_t>> &inputShapes) const;

  /// Checks inputs of these shapes and dtypes as pk_validate would check
  /// arrays of them (with made-up, well-aligned addresses), and returns
  /// the outputs' shapes. For tracing frameworks that have shapes and no
  /// memory yet (JAX, torch.compile's fake tensors).
  std::vector<std::vector<int64_t>> check(const std::vector<std::vector<int64_t>> &shapes,
                                          const std::vector<std::string> &dtypes) const;

  /// Launches with every param's array given (inputs, then outputs).
  void launch(nanobind::sequence arrays, uintptr_t stream) const;

  /// Runs the export on `inputs`: outputs from `out` (an array, or a
  /// sequence of them), else allocated by `framework` (see pkc/_frameworks.py)
  /// on the framework's current stream (or `stream` when given). Returns
  /// the outputs: one array, or a tuple for several.
  nanobind::object call(nanobind::tuple inputs, nanobind::handle out, nanobind::handle framework,
                        nanobind::handle stream) const;

private:
  std::string label(size_t param) const;
  std::vector<int64_t> symbolValues(const std::vector<const DLTensor *> &inputs) const;

  std::shared_ptr<ModuleHandle> module_;
  pk_kernel *kernel_;
  std::string name_;
  std::vector<ParamInfo> params_;
  std::vector<SymbolInfo> symbols_;
  size_t numInputs_ = 0;
};

} // namespace pkc

#endif // PKC_PYTHON_MODULES_H
