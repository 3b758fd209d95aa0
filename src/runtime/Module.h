//===- Module.h - A loaded module and its kernels ---------------*- C++ -*-===//
//
// pk_module owns the checked manifest, the chosen artifact loaded into the
// device's primary context, and one pk_kernel per export. After loading,
// everything is read-only except each kernel function's dynamic shared
// memory opt-in, which only grows and is guarded; so launches need no lock.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_MODULE_H
#define PK_RUNTIME_MODULE_H

#include "runtime/Device.h"
#include "runtime/Manifest.h"

#include "pk/runtime.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace pk::rt {

/// A kernel function of the loaded artifact, shared by the steps that
/// launch it.
struct Function {
  std::string name;
  cu::CUfunction handle = nullptr;
  int maxThreadsPerBlock = 1024;
  int staticSharedMemory = 0;
  /// The dynamic shared memory the function may use: at first what the
  /// driver allows without opting in (48 KiB less its static shared
  /// memory), then raised (never lowered) under `optInMutex` when a
  /// launch needs more.
  std::atomic<int> dynamicSharedLimit{0};
  std::mutex optInMutex;
};

/// Where the runtime reads an artifact from.
struct ArtifactSource {
  std::string directory; ///< the manifest's directory; empty for a manifest in memory
  const pk_artifact_data *blobs = nullptr;
  size_t numBlobs = 0;
};

/// Reads artifact `a` (from a blob of its file name, else from the
/// directory) and checks its size and sha256. Throws PK_ERROR_IO or
/// PK_ERROR_ARTIFACT.
std::string readArtifact(const Artifact &a, const ArtifactSource &source,
                         const std::string &origin);

/// The artifact of `m` that best fits compute capability major.minor, or
/// -1. `origin` names the manifest in messages.
int selectArtifact(const Manifest &m, int major, int minor);
/// Why no artifact fits: the artifacts there are and what runs them.
std::string noArtifactMessage(const Manifest &m, const std::string &origin,
                              const std::string &device, int major, int minor);

} // namespace pk::rt

struct pk_kernel {
  const pk_module *module = nullptr;
  const pk::rt::Export *exp = nullptr;
  /// The export's program in the chosen artifact; null when no artifact
  /// was chosen (PK_LOAD_NO_DEVICE without a compute capability).
  const pk::rt::Program *program = nullptr;
  /// One per step of `program`: the function a launch step runs, null for
  /// copies.
  std::vector<pk::rt::Function *> functions;
};

struct pk_module {
  std::string origin; ///< the manifest's path, or "manifest"
  pk::rt::Manifest manifest;
  int artifact = -1; ///< the chosen artifact, or -1
  int ordinal = -1;  ///< the device; with PK_LOAD_NO_DEVICE, the one arrays must be on (or -1)
  const pk::rt::Driver *driver = nullptr; ///< null with PK_LOAD_NO_DEVICE
  const pk::rt::Device *device = nullptr;
  pk::rt::cu::CUmodule cuModule = nullptr;
  std::vector<std::unique_ptr<pk::rt::Function>> functions;
  std::vector<pk_kernel> kernels; ///< one per export, in manifest order

  pk_module() = default;
  pk_module(const pk_module &) = delete;
  pk_module &operator=(const pk_module &) = delete;
  ~pk_module();
};

namespace pk::rt {

/// Loads a module from manifest text (see pk_module_load_ex).
std::unique_ptr<pk_module> loadModule(std::string_view json, const std::string &origin,
                                      const ArtifactSource &source, const pk_load_options &options);

} // namespace pk::rt

#endif // PK_RUNTIME_MODULE_H
