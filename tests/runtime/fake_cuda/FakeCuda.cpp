//===- FakeCuda.cpp - A fake libcuda.so.1 over host memory ----------------===//
//
// See fake_cuda.h. Device pointers are host pointers from aligned_alloc;
// every access a copy or a fake kernel makes is checked to lie inside a
// live allocation (CUDA_ERROR_ILLEGAL_ADDRESS otherwise), and every call
// that needs a context checks that the right one is current, as the real
// driver would. All work completes synchronously.
//
//===----------------------------------------------------------------------===//
#include "fake_cuda.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3,
                   NO_DEVICE = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200,
                   INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_FOUND = 500,
                   ILLEGAL_ADDRESS = 700, NOT_SUPPORTED = 801;

struct DeviceConfig {
  const char *name;
  int major, minor;
  int optInSharedMemory;
  bool pools, clusters;
};
const DeviceConfig kDevices[] = {{"Fake Hopper", 9, 0, 232448, true, true},
                                 {"Fake Ampere", 8, 6, 101376, false, false}};

struct Context {
  int device;
};
struct Module {
  int device;
  std::string image;
};
struct Function {
  Module *module;
  std::string name;
  std::map<int, int> attributes; ///< set by cuFuncSetAttribute
};
struct Stream {
  int device;
};

struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  Stream *hStream;
  struct Attribute {
    int id;
    char pad[4];
    union {
      char pad[64];
      struct {
        unsigned x, y, z;
      } clusterDim;
    } value;
  } * attrs;
  unsigned numAttrs;
};

struct State {
  std::recursive_mutex mutex;
  bool initialized = false;
  int numDevices = 2;
  Context contexts[2] = {{0}, {1}};
  std::map<uintptr_t, size_t> allocations;
  std::vector<fake_cuda_launch> launches;
  std::vector<fake_cuda_copy> copies;
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Function>> functions;
  std::map<std::string, std::pair<CUresult, int>> failures;
  std::map<std::string, long> counters;
};

State &state() {
  static State s;
  return s;
}

thread_local std::vector<Context *> contextStack;

/// A failure the test asked for, if any is pending for `entry`.
bool injected(const char *entry, CUresult &result) {
  auto it = state().failures.find(entry);
  if (it == state().failures.end() || it->second.second <= 0)
    return false;
  result = it->second.first;
  --it->second.second;
  return true;
}

Context *current() { return contextStack.empty() ? nullptr : contextStack.back(); }

/// [p, p + bytes) lies inside one live allocation. With
/// FAKE_CUDA_HOST_MEMORY set, any non-null pointer does: the Python
/// package's tests run XLA's custom call on its CPU backend and hand the
/// fake XLA's host buffers as device memory.
bool inside(uint64_t p, uint64_t bytes) {
  static const bool anyHostMemory = std::getenv("FAKE_CUDA_HOST_MEMORY") != nullptr;
  if (anyHostMemory && p != 0)
    return true;
  auto &allocs = state().allocations;
  auto it = allocs.upper_bound(uintptr_t(p));
  if (it == allocs.begin())
    return bytes == 0;
  --it;
  return p >= it->first && p + bytes <= it->first + it->second;
}

// ---- The kernels of test_kernels.cu, on the host -------------------------

struct Geometry {
  unsigned grid[3], block[3], cluster[3];
  unsigned shared;
};

using Kernel = CUresult (*)(const Geometry &, const uint64_t *params);

/// Calls body(global thread index, block index) for every thread of a 1-D
/// launch, as the kernels compute their element index.
template <typename Body> void forEachThread(const Geometry &g, Body body) {
  for (unsigned b = 0; b < g.grid[0]; ++b)
    for (unsigned t = 0; t < g.block[0]; ++t)
      body(int64_t(b) * g.block[0] + t, b);
}

CUresult add(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[3]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4) || !inside(p[2], n * 4)))
    return ILLEGAL_ADDRESS;
  auto *x = reinterpret_cast<const float *>(p[0]), *y = reinterpret_cast<const float *>(p[1]);
  auto *out = reinterpret_cast<float *>(p[2]);
  forEachThread(g, [&](int64_t i, unsigned) {
    if (i < n)
      out[i] = x[i] + y[i];
  });
  return OK;
}

CUresult square(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[2]) * int64_t(p[3]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4)))
    return ILLEGAL_ADDRESS;
  auto *x = reinterpret_cast<const float *>(p[0]);
  auto *out = reinterpret_cast<float *>(p[1]);
  forEachThread(g, [&](int64_t i, unsigned) {
    if (i < n)
      out[i] = x[i] * x[i];
  });
  return OK;
}

CUresult rowsum(const Geometry &g, const uint64_t *p) {
  int64_t rows = int64_t(p[2]), cols = int64_t(p[3]);
  if (rows * cols > 0 && (!inside(p[0], rows * cols * 4) || !inside(p[1], rows * 4)))
    return ILLEGAL_ADDRESS;
  // The real kernel needs room for at least one element to make progress.
  if (cols > 0 && g.shared < 4)
    return INVALID_VALUE;
  auto *x = reinterpret_cast<const float *>(p[0]);
  auto *out = reinterpret_cast<float *>(p[1]);
  for (unsigned row = 0; row < g.grid[0]; ++row) {
    if (row >= rows)
      continue;
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += x[row * cols + c];
    out[row] = float(sum);
  }
  return OK;
}

CUresult accumulate(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[2]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4)))
    return ILLEGAL_ADDRESS;
  auto *acc = reinterpret_cast<float *>(p[0]);
  auto *x = reinterpret_cast<const float *>(p[1]);
  forEachThread(g, [&](int64_t i, unsigned) {
    if (i < n)
      acc[i] += x[i];
  });
  return OK;
}

CUresult clusterRank(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[2]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4)))
    return ILLEGAL_ADDRESS;
  auto *x = reinterpret_cast<const int *>(p[0]);
  auto *out = reinterpret_cast<int *>(p[1]);
  int size = int(g.cluster[0] * g.cluster[1] * g.cluster[2]);
  forEachThread(g, [&](int64_t i, unsigned block) {
    if (i < n)
      out[i] = x[i] + int(block % g.cluster[0]) + 100 * size;
  });
  return OK;
}

// pkc's own kernels for the samples (samples/add.pk's add and
// samples/matmul.pk's matmul_scaled), with the grids pkc's CUDA backend
// gives them: add's CTA i covers elements [1024 i, 1024 i + 1024);
// matmul's CTA (x, y) the 64 x 64 tile at rows 64 y, columns 64 x. The
// fake cannot see a kernel's parameters, and the same names with other
// signatures (-D N=8 makes add's size static) must not run these, so they
// answer only when PK_FAKE_SAMPLE_TWINS is set (the samples' tests set
// it); otherwise a launch of pkc's kernels is refused, as before.
CUresult pkcAdd(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[3]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4) || !inside(p[2], n * 4)))
    return ILLEGAL_ADDRESS;
  auto *x = reinterpret_cast<const float *>(p[0]), *y = reinterpret_cast<const float *>(p[1]);
  auto *out = reinterpret_cast<float *>(p[2]);
  for (int64_t i = 0; i < std::min<int64_t>(n, int64_t(g.grid[0]) * 1024); ++i)
    out[i] = x[i] + y[i];
  return OK;
}

/// `v` as a tensor core reads an f32 word for a TF32 product (sign,
/// exponent, 10 mantissa bits): matmul_scaled's dot is at JAX's default
/// precision, which pkc's GPU kernels run on TF32 (docs/cuda.md).
float tf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= ~uint32_t{(1u << 13) - 1};
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

CUresult pkcMatmulScaled(const Geometry &g, const uint64_t *p) {
  const int64_t k = 256, tile = 64;
  int64_t m = int64_t(p[3]), n = int64_t(p[4]);
  if (m * n > 0 &&
      (!inside(p[0], m * k * 4) || !inside(p[1], k * n * 4) || !inside(p[2], m * n * 4)))
    return ILLEGAL_ADDRESS;
  auto *x = reinterpret_cast<const float *>(p[0]), *y = reinterpret_cast<const float *>(p[1]);
  auto *out = reinterpret_cast<float *>(p[2]);
  for (int64_t r = 0; r < std::min(m, int64_t(g.grid[1]) * tile); ++r)
    for (int64_t c = 0; c < std::min(n, int64_t(g.grid[0]) * tile); ++c) {
      float acc = 0;
      for (int64_t q = 0; q < k; ++q)
        acc += tf32(x[r * k + q]) * tf32(y[q * n + c]);
      out[r * n + c] = acc * 0.5f;
    }
  return OK;
}

/// tests/lit/cli/Inputs/tune/scale.pk's `scale` (out = 2 x), whatever its
/// block (pkc tune's trials differ in it); the grid must still cover the
/// array with blocks of at most 65536 elements.
CUresult pkcTuneScale(const Geometry &g, const uint64_t *p) {
  int64_t n = int64_t(p[2]);
  if (n > 0 && (!inside(p[0], n * 4) || !inside(p[1], n * 4)))
    return ILLEGAL_ADDRESS;
  if (int64_t(g.grid[0]) * 65536 < n)
    return INVALID_VALUE;
  auto *x = reinterpret_cast<const float *>(p[0]);
  auto *out = reinterpret_cast<float *>(p[1]);
  for (int64_t i = 0; i < n; ++i)
    out[i] = 2.0f * x[i];
  return OK;
}

struct KernelInfo {
  const char *name;
  int numParams;
  int staticShared;
  Kernel run;
  bool sampleTwin = false; ///< one of pkc's sample kernels, see above
};
const KernelInfo kKernels[] = {
    {"pk_test_add_f32", 4, 0, add},
    {"pk_test_square_f32", 4, 0, square},
    {"pk_test_rowsum_f32", 4, 1024, rowsum},
    {"pk_test_accumulate_f32", 3, 0, accumulate},
    {"pk_test_cluster_rank_i32", 3, 0, clusterRank},
    {"add_add_kernel", 4, 0, pkcAdd, true},
    {"matmul_scaled_matmul_kernel", 5, 0, pkcMatmulScaled, true},
    {"scale_scale_kernel", 3, 0, pkcTuneScale, true},
};

const KernelInfo *kernelInfo(const std::string &name) {
  static const bool sampleTwins = std::getenv("PK_FAKE_SAMPLE_TWINS") != nullptr;
  for (const KernelInfo &k : kKernels)
    if (name == k.name && (!k.sampleTwin || sampleTwins))
      return &k;
  return nullptr;
}

/// The dynamic shared memory a function may use before opting in, as CUDA
/// defines it: 48 KiB less the function's static shared memory.
int defaultDynamicShared(const Function *f) {
  const KernelInfo *k = kernelInfo(f->name);
  return 48 * 1024 - (k ? k->staticShared : 0);
}

CUresult launch(Function *f, const Geometry &g, Stream *stream, void **params, bool ex) {
  State &s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  CUresult injectedResult;
  if (injected(ex ? "cuLaunchKernelEx" : "cuLaunchKernel", injectedResult))
    return injectedResult;
  if (!f)
    return INVALID_HANDLE;
  Context *c = current();
  if (!c || c->device != f->module->device)
    return INVALID_CONTEXT;
  if (stream && stream->device != c->device)
    return INVALID_HANDLE;
  const KernelInfo *k = kernelInfo(f->name);
  if (!k)
    return INVALID_VALUE;
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] == 0 || g.block[i] == 0)
      return INVALID_VALUE;
  if (g.block[0] * g.block[1] * g.block[2] > 1024)
    return INVALID_VALUE;
  // Dynamic shared memory beyond what 48 KiB leaves next to the static
  // shared memory needs the function's opt-in.
  auto limit = f->attributes.find(8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */);
  unsigned allowed =
      limit == f->attributes.end() ? unsigned(defaultDynamicShared(f)) : unsigned(limit->second);
  if (g.shared > allowed)
    return INVALID_VALUE;
  fake_cuda_launch record = {};
  std::strncpy(record.kernel, f->name.c_str(), sizeof record.kernel - 1);
  record.device = c->device;
  for (int i = 0; i < 3; ++i) {
    record.grid[i] = g.grid[i];
    record.block[i] = g.block[i];
    record.cluster[i] = g.cluster[i];
  }
  record.shared_memory = g.shared;
  record.stream = stream;
  record.num_params = k->numParams;
  record.used_launch_ex = ex;
  uint64_t values[8] = {};
  for (int i = 0; i < k->numParams; ++i) {
    std::memcpy(&values[i], params[i], 8);
    record.params[i] = values[i];
  }
  CUresult r = k->run(g, values);
  if (r == OK)
    s.launches.push_back(record);
  return r;
}

} // namespace

// ---- The driver API ------------------------------------------------------

#define LOCK                                                                                       \
  State &s = state();                                                                              \
  std::lock_guard<std::recursive_mutex> lock(s.mutex)
#define INJECT(name)                                                                               \
  do {                                                                                             \
    CUresult injectedResult;                                                                       \
    if (injected(name, injectedResult))                                                            \
      return injectedResult;                                                                       \
  } while (0)
#define REQUIRE_INIT                                                                               \
  if (!s.initialized)                                                                              \
  return NOT_INITIALIZED

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  LOCK;
  INJECT("cuInit");
  if (flags != 0)
    return INVALID_VALUE;
  if (const char *n = std::getenv("FAKE_CUDA_DEVICES"))
    s.numDevices = std::atoi(n) < 0 ? 0 : std::atoi(n) > 2 ? 2 : std::atoi(n);
  if (s.numDevices == 0)
    return NO_DEVICE;
  s.initialized = true;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int *version) {
  *version = 12080;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case OK:
    *name = "CUDA_SUCCESS";
    return OK;
  case INVALID_VALUE:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return OK;
  case OUT_OF_MEMORY:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return OK;
  case NOT_INITIALIZED:
    *name = "CUDA_ERROR_NOT_INITIALIZED";
    return OK;
  case NO_DEVICE:
    *name = "CUDA_ERROR_NO_DEVICE";
    return OK;
  case INVALID_DEVICE:
    *name = "CUDA_ERROR_INVALID_DEVICE";
    return OK;
  case INVALID_IMAGE:
    *name = "CUDA_ERROR_INVALID_IMAGE";
    return OK;
  case INVALID_CONTEXT:
    *name = "CUDA_ERROR_INVALID_CONTEXT";
    return OK;
  case INVALID_HANDLE:
    *name = "CUDA_ERROR_INVALID_HANDLE";
    return OK;
  case NOT_FOUND:
    *name = "CUDA_ERROR_NOT_FOUND";
    return OK;
  case ILLEGAL_ADDRESS:
    *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return OK;
  case NOT_SUPPORTED:
    *name = "CUDA_ERROR_NOT_SUPPORTED";
    return OK;
  }
  *name = nullptr;
  return INVALID_VALUE;
}

__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult error,
                                                                 const char **text) {
  switch (error) {
  case OUT_OF_MEMORY:
    *text = "out of memory";
    return OK;
  case ILLEGAL_ADDRESS:
    *text = "an illegal memory access was encountered";
    return OK;
  case INVALID_VALUE:
    *text = "invalid argument";
    return OK;
  }
  *text = "fake CUDA error";
  return OK;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int *count) {
  LOCK;
  REQUIRE_INIT;
  *count = s.numDevices;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  LOCK;
  REQUIRE_INIT;
  if (ordinal < 0 || ordinal >= s.numDevices)
    return INVALID_DEVICE;
  *device = ordinal;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetAttribute(int *value, int attribute,
                                                                     CUdevice device) {
  LOCK;
  REQUIRE_INIT;
  if (device < 0 || device >= s.numDevices)
    return INVALID_DEVICE;
  const DeviceConfig &d = kDevices[device];
  switch (attribute) {
  case 2:
    *value = 1024;
    return OK; // MAX_BLOCK_DIM_X
  case 5:
    *value = 2147483647;
    return OK; // MAX_GRID_DIM_X
  case 6:
  case 7:
    *value = 65535;
    return OK;
  case 75:
    *value = d.major;
    return OK;
  case 76:
    *value = d.minor;
    return OK;
  case 97:
    *value = d.optInSharedMemory;
    return OK;
  case 115:
    *value = d.pools;
    return OK;
  case 120:
    *value = d.clusters;
    return OK;
  }
  return INVALID_VALUE;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetName(char *name, int size,
                                                                CUdevice device) {
  LOCK;
  REQUIRE_INIT;
  if (device < 0 || device >= s.numDevices)
    return INVALID_DEVICE;
  std::strncpy(name, kDevices[device].name, size_t(size));
  return OK;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(Context **context,
                                                                         CUdevice device) {
  LOCK;
  REQUIRE_INIT;
  if (device < 0 || device >= s.numDevices)
    return INVALID_DEVICE;
  *context = &s.contexts[device];
  ++s.counters["retains"];
  return OK;
}

__attribute__((visibility("default"))) CUresult cuCtxGetCurrent(Context **context) {
  *context = current();
  return OK;
}

__attribute__((visibility("default"))) CUresult cuCtxGetDevice(CUdevice *device) {
  Context *c = current();
  if (!c)
    return INVALID_CONTEXT;
  *device = c->device;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuCtxPushCurrent_v2(Context *context) {
  if (!context)
    return INVALID_CONTEXT;
  contextStack.push_back(context);
  return OK;
}

__attribute__((visibility("default"))) CUresult cuCtxPopCurrent_v2(Context **context) {
  if (contextStack.empty())
    return INVALID_CONTEXT;
  if (context)
    *context = contextStack.back();
  contextStack.pop_back();
  return OK;
}

__attribute__((visibility("default"))) CUresult cuModuleLoadData(Module **module,
                                                                 const void *image) {
  LOCK;
  INJECT("cuModuleLoadData");
  Context *c = current();
  if (!c)
    return INVALID_CONTEXT;
  const char *bytes = static_cast<const char *>(image);
  // A cubin is an ELF file that ends with its section header table; the
  // driver is not told its size, so (like the driver) the fake reads it
  // from the ELF header.
  if (std::memcmp(bytes,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return INVALID_IMAGE;
  uint64_t shoff, shentsize, shnum;
  std::memcpy(&shoff, bytes + 0x28, 8);
  const auto *u = reinterpret_cast<const unsigned char *>(bytes);
  shentsize = uint64_t(u[0x3a] | u[0x3b] << 8);
  shnum = uint64_t(u[0x3c] | u[0x3d] << 8);
  size_t size = size_t(shoff + shentsize * shnum);
  auto m = std::make_unique<Module>();
  m->device = c->device;
  m->image.assign(bytes, size);
  *module = m.get();
  s.modules.push_back(std::move(m));
  ++s.counters["module_loads"];
  return OK;
}

__attribute__((visibility("default"))) CUresult cuModuleUnload(Module *module) {
  LOCK;
  if (!current() || current()->device != module->device)
    return INVALID_CONTEXT;
  ++s.counters["module_unloads"];
  return OK;
}

__attribute__((visibility("default"))) CUresult
cuModuleGetFunction(Function **function, Module *module, const char *name) {
  LOCK;
  std::string needle = std::string(1, '\0') + name + std::string(1, '\0');
  if (module->image.find(needle) == std::string::npos)
    return NOT_FOUND;
  auto f = std::make_unique<Function>();
  f->module = module;
  f->name = name;
  *function = f.get();
  s.functions.push_back(std::move(f));
  return OK;
}

__attribute__((visibility("default"))) CUresult cuFuncGetAttribute(int *value, int attribute,
                                                                   Function *f) {
  LOCK;
  const KernelInfo *k = kernelInfo(f->name);
  switch (attribute) {
  case 0:
    *value = 1024;
    return OK;
  case 1:
    *value = k ? k->staticShared : 0;
    return OK;
  case 8: {
    auto it = f->attributes.find(8);
    *value = it == f->attributes.end() ? defaultDynamicShared(f) : it->second;
    return OK;
  }
  }
  return INVALID_VALUE;
}

__attribute__((visibility("default"))) CUresult cuFuncSetAttribute(Function *f, int attribute,
                                                                   int value) {
  LOCK;
  INJECT("cuFuncSetAttribute");
  const KernelInfo *k = kernelInfo(f->name);
  if (attribute == 8 &&
      value > kDevices[f->module->device].optInSharedMemory - (k ? k->staticShared : 0))
    return INVALID_VALUE;
  if (attribute == 14 && !kDevices[f->module->device].clusters)
    return NOT_SUPPORTED;
  f->attributes[attribute] = value;
  return OK;
}

__attribute__((visibility("default"))) CUresult
cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shared, Stream *stream, void **params, void **extra) {
  if (extra)
    return INVALID_VALUE;
  Geometry g = {{gx, gy, gz}, {bx, by, bz}, {1, 1, 1}, shared};
  return launch(f, g, stream, params, false);
}

__attribute__((visibility("default"))) CUresult
cuLaunchKernelEx(const LaunchConfig *config, Function *f, void **params, void **extra) {
  if (extra || !config)
    return INVALID_VALUE;
  Geometry g = {{config->gridDimX, config->gridDimY, config->gridDimZ},
                {config->blockDimX, config->blockDimY, config->blockDimZ},
                {1, 1, 1},
                config->sharedMemBytes};
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == 4) { // CLUSTER_DIMENSION
      g.cluster[0] = config->attrs[i].value.clusterDim.x;
      g.cluster[1] = config->attrs[i].value.clusterDim.y;
      g.cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  if (f && !kDevices[f->module->device].clusters && g.cluster[0] * g.cluster[1] * g.cluster[2] != 1)
    return NOT_SUPPORTED;
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] % g.cluster[i])
      return INVALID_VALUE;
  return launch(f, g, config->hStream, params, true);
}

static CUresult allocate(CUdeviceptr *pointer, size_t bytes, const char *counter) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  if (bytes == 0)
    return INVALID_VALUE;
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return OUT_OF_MEMORY;
  s.allocations[uintptr_t(p)] = bytes;
  *pointer = CUdeviceptr(uintptr_t(p));
  ++s.counters[counter];
  return OK;
}

static CUresult release(CUdeviceptr pointer) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  auto it = s.allocations.find(uintptr_t(pointer));
  if (it == s.allocations.end())
    return INVALID_VALUE;
  std::free(reinterpret_cast<void *>(it->first));
  s.allocations.erase(it);
  return OK;
}

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  {
    LOCK;
    INJECT("cuMemAlloc");
  }
  return allocate(pointer, bytes, "sync_allocations");
}

__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr pointer) {
  return release(pointer);
}

__attribute__((visibility("default"))) CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes,
                                                                Stream *stream) {
  {
    LOCK;
    INJECT("cuMemAllocAsync");
    if (!current() || !kDevices[current()->device].pools)
      return NOT_SUPPORTED;
    if (stream && stream->device != current()->device)
      return INVALID_HANDLE;
  }
  return allocate(pointer, bytes, "async_allocations");
}

__attribute__((visibility("default"))) CUresult cuMemFreeAsync(CUdeviceptr pointer, Stream *) {
  return release(pointer);
}

__attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src,
                                                                size_t bytes) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  if (!inside(dst, bytes))
    return INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
  return OK;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src,
                                                                size_t bytes) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  if (!inside(src, bytes))
    return INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void *>(uintptr_t(src)), bytes);
  return OK;
}

__attribute__((visibility("default"))) CUresult
cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, Stream *stream) {
  LOCK;
  INJECT("cuMemcpyDtoDAsync");
  if (!current())
    return INVALID_CONTEXT;
  if (!inside(dst, bytes) || !inside(src, bytes))
    return ILLEGAL_ADDRESS;
  std::memmove(reinterpret_cast<void *>(uintptr_t(dst)),
               reinterpret_cast<const void *>(uintptr_t(src)), bytes);
  s.copies.push_back({dst, src, bytes, stream});
  return OK;
}

__attribute__((visibility("default"))) CUresult cuStreamCreate(Stream **stream, unsigned) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  *stream = new Stream{current()->device};
  return OK;
}

__attribute__((visibility("default"))) CUresult cuStreamDestroy_v2(Stream *stream) {
  delete stream;
  return OK;
}

__attribute__((visibility("default"))) CUresult cuStreamSynchronize(Stream *) {
  LOCK;
  if (!current())
    return INVALID_CONTEXT;
  ++s.counters["stream_syncs"];
  return OK;
}

// ---- For the tests -------------------------------------------------------

__attribute__((visibility("default"))) size_t fake_cuda_num_launches(void) {
  LOCK;
  return s.launches.size();
}

__attribute__((visibility("default"))) int fake_cuda_get_launch(size_t index,
                                                                fake_cuda_launch *out) {
  LOCK;
  if (index >= s.launches.size())
    return 0;
  *out = s.launches[index];
  return 1;
}

__attribute__((visibility("default"))) size_t fake_cuda_num_copies(void) {
  LOCK;
  return s.copies.size();
}

__attribute__((visibility("default"))) int fake_cuda_get_copy(size_t index, fake_cuda_copy *out) {
  LOCK;
  if (index >= s.copies.size())
    return 0;
  *out = s.copies[index];
  return 1;
}

__attribute__((visibility("default"))) void fake_cuda_reset(void) {
  LOCK;
  s.launches.clear();
  s.copies.clear();
  s.failures.clear();
  long retains = s.counters["retains"];
  s.counters.clear();
  s.counters["retains"] = retains;
}

__attribute__((visibility("default"))) void fake_cuda_fail(const char *entry, int result,
                                                           int count) {
  LOCK;
  s.failures[entry] = {result, count};
}

__attribute__((visibility("default"))) int fake_cuda_func_attribute(int device, const char *name,
                                                                    int attribute) {
  LOCK;
  int value = -1;
  for (const auto &f : s.functions)
    if (f->module->device == device && f->name == name) {
      auto it = f->attributes.find(attribute);
      if (it != f->attributes.end())
        value = it->second;
    }
  return value;
}

__attribute__((visibility("default"))) long fake_cuda_counter(const char *name) {
  LOCK;
  if (std::string(name) == "live_allocations")
    return long(s.allocations.size());
  if (std::string(name) == "context_depth")
    return long(contextStack.size());
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

} // extern "C"
