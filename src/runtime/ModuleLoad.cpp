//===- ModuleLoad.cpp - From a manifest to a loaded module ----------------===//
//
// The order matters for what a user is told: the manifest is checked
// before the driver is touched (a bad manifest is reported as such on any
// machine), the artifact is chosen for the device and its hash checked
// before it is handed to the driver, and every kernel is resolved and its
// attributes set at load time, so that a launch only evaluates sizes and
// launches.
//
//===----------------------------------------------------------------------===//
#include "runtime/Error.h"
#include "runtime/Module.h"

#include <map>

namespace pk::rt {

namespace {

/// Resolves `name` in the loaded module and reads what launches check.
Function *resolve(pk_module &m, const Artifact &a, const std::string &name,
                  std::map<std::string, Function *> &byName, const std::string &where) {
  auto it = byName.find(name);
  if (it != byName.end())
    return it->second;
  const Driver &d = *m.driver;
  auto f = std::make_unique<Function>();
  f->name = name;
  cu::CUresult r = d.moduleGetFunction(&f->handle, m.cuModule, name.c_str());
  if (r == cu::CUDA_ERROR_NOT_FOUND)
    fail(PK_ERROR_ARTIFACT, m.origin + ": " + a.file + " has no kernel \"" + name + "\" (" + where +
                                "); the artifact and the manifest do not match");
  d.check(r, "cuModuleGetFunction(\"" + name + "\")");
  d.check(d.funcGetAttribute(&f->maxThreadsPerBlock, cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                             f->handle),
          "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  d.check(d.funcGetAttribute(&f->staticSharedMemory, cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                             f->handle),
          "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  int limit = 0;
  d.check(d.funcGetAttribute(&limit, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f->handle),
          "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  f->dynamicSharedLimit.store(limit);
  Function *raw = f.get();
  m.functions.push_back(std::move(f));
  byName[name] = raw;
  return raw;
}

/// What a launch step needs of the device and function that can be
/// checked (or set) before any launch.
void prepare(pk_module &m, const LaunchStep &l, Function &f, const std::string &where) {
  const Driver &d = *m.driver;
  const Device &dev = *m.device;
  bool cluster = l.cluster[0] * l.cluster[1] * l.cluster[2] != 1;
  if (cluster) {
    if (!dev.clusterLaunch)
      fail(PK_ERROR_UNSUPPORTED, m.origin + ": " + where +
                                     " launches thread block clusters, which " + dev.describe() +
                                     " does not support");
    if (!d.launchKernelEx)
      fail(PK_ERROR_UNSUPPORTED,
           m.origin + ": " + where +
               " launches thread block clusters, which needs cuLaunchKernelEx "
               "(a CUDA 12.0 driver or newer); this driver is " +
               std::to_string(d.version));
    // Clusters of more than 8 blocks are "non-portable" and need the
    // function's permission.
    if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 8)
      d.check(
          d.funcSetAttribute(f.handle, cu::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
          "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) for " + where);
  }
  if (!l.tensorMaps.empty()) {
    if (dev.major < 9)
      fail(PK_ERROR_UNSUPPORTED, m.origin + ": " + where + " takes TMA tensor maps, which " +
                                     dev.describe() +
                                     " does not support (compute capability 9.0 or newer)");
    if (!d.tensorMapEncodeTiled)
      fail(PK_ERROR_UNSUPPORTED, m.origin + ": " + where +
                                     " takes TMA tensor maps, which need cuTensorMapEncodeTiled (a "
                                     "CUDA 12.0 driver or newer); this driver is " +
                                     std::to_string(d.version));
  }
  // A constant amount of dynamic shared memory above the default limit is
  // opted in now; one that depends on the sizes is opted in by the launch
  // that needs it.
  if (l.dynamicSharedMemory.isConstant()) {
    int64_t bytes = l.dynamicSharedMemory.constantValue();
    int64_t limit = int64_t(dev.maxSharedMemoryOptIn) - f.staticSharedMemory;
    if (bytes < 0 || bytes > limit)
      fail(PK_ERROR_UNSUPPORTED, m.origin + ": " + where + " needs " + std::to_string(bytes) +
                                     " bytes of dynamic shared memory; " + dev.describe() +
                                     " allows at most " + std::to_string(limit) + " (" +
                                     std::to_string(dev.maxSharedMemoryOptIn) + " per block, " +
                                     std::to_string(f.staticSharedMemory) + " of them static)");
    if (bytes > f.dynamicSharedLimit.load()) {
      d.check(d.funcSetAttribute(f.handle, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 int(bytes)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) for " + where);
      f.dynamicSharedLimit.store(int(bytes));
    }
  }
}

void buildKernels(pk_module &m) {
  const Artifact *a = m.artifact >= 0 ? &m.manifest.artifacts[m.artifact] : nullptr;
  m.kernels.resize(m.manifest.exports.size());
  for (size_t i = 0; i < m.manifest.exports.size(); ++i) {
    pk_kernel &k = m.kernels[i];
    k.module = &m;
    k.exp = &m.manifest.exports[i];
    k.program = a ? a->program(unsigned(i)) : nullptr;
  }
}

} // namespace

std::unique_ptr<pk_module> loadModule(std::string_view json, const std::string &origin,
                                      const ArtifactSource &source,
                                      const pk_load_options &options) {
  auto m = std::make_unique<pk_module>();
  m->origin = origin;
  m->manifest = readManifest(json, origin);

  if (options.flags & PK_LOAD_NO_DEVICE) {
    m->ordinal = options.device;
    if (options.compute_capability > 0) {
      int major = options.compute_capability / 10, minor = options.compute_capability % 10;
      m->artifact = selectArtifact(m->manifest, major, minor);
      if (m->artifact < 0)
        fail(PK_ERROR_NO_COMPATIBLE_ARTIFACT,
             noArtifactMessage(m->manifest, origin,
                               "compute capability " + std::to_string(major) + "." +
                                   std::to_string(minor),
                               major, minor));
      readArtifact(m->manifest.artifacts[m->artifact], source, origin);
    }
    buildKernels(*m);
    return m;
  }
  if (options.compute_capability != 0)
    fail(PK_ERROR_INVALID_ARGUMENT,
         "pk_load_options.compute_capability is only for PK_LOAD_NO_DEVICE; a device has its own");

  const Driver &d = driver();
  int ordinal = options.device;
  if (ordinal < 0) {
    ordinal = currentDeviceOrdinal(d);
    if (ordinal < 0)
      ordinal = 0;
  }
  const Device &dev = device(d, ordinal);
  m->driver = &d;
  m->device = &dev;
  m->ordinal = ordinal;
  m->artifact = selectArtifact(m->manifest, dev.major, dev.minor);
  if (m->artifact < 0)
    fail(PK_ERROR_NO_COMPATIBLE_ARTIFACT,
         noArtifactMessage(m->manifest, origin, dev.describe(), dev.major, dev.minor));
  const Artifact &a = m->manifest.artifacts[m->artifact];
  std::string image = readArtifact(a, source, origin);
  // PTX is text the driver reads up to its terminating NUL.
  if (a.format == "ptx")
    image.push_back('\0');

  ContextScope scope(d, dev.context);
  d.check(d.moduleLoadData(&m->cuModule, image.data()), "cuModuleLoadData(" + a.file + ")");
  std::map<std::string, Function *> byName;
  buildKernels(*m);
  for (pk_kernel &k : m->kernels) {
    if (!k.program)
      continue;
    k.functions.assign(k.program->steps.size(), nullptr);
    for (size_t s = 0; s < k.program->steps.size(); ++s) {
      const auto *launch = std::get_if<LaunchStep>(&k.program->steps[s]);
      if (!launch)
        continue;
      std::string where = "step " + std::to_string(s) + " of export \"" + k.exp->name + "\"";
      Function *f = resolve(*m, a, launch->kernel, byName, where);
      prepare(*m, *launch, *f, "kernel \"" + launch->kernel + "\" (" + where + ")");
      k.functions[s] = f;
    }
  }
  return m;
}

} // namespace pk::rt

pk_module::~pk_module() {
  if (!cuModule || !driver || !device)
    return;
  // Unloading needs the module's context current; errors have no one to
  // go to here.
  pk::rt::cu::CUcontext current = nullptr;
  bool pushed = driver->ctxGetCurrent(&current) == pk::rt::cu::CUDA_SUCCESS &&
                current != device->context && driver->ctxPushCurrent(device->context) == 0;
  driver->moduleUnload(cuModule);
  if (pushed)
    driver->ctxPopCurrent(&current);
}
