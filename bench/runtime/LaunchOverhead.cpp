//===- LaunchOverhead.cpp - pk_launch against a raw cuLaunchKernel --------===//
//
//   pk_launch_overhead build/samples/runtime/kernels/add.json [launches]
//
// Loads the add sample through the runtime, and the very cubin the runtime
// chose straight through the driver into the same primary context, then
// times, on one stream with the same arguments:
//   - raw:        cuLaunchKernel with the grid and arguments precomputed;
//   - pk_launch:  validation, size evaluation and the same cuLaunchKernel;
//   - validate:   pk_validate alone (host work only);
// each as the enqueue cost per launch (a batch of launches, then one
// synchronize) and as the round trip of a launch followed by a synchronize.
// Every figure is the median of several rounds. It prints; it asserts
// nothing, and exits 77 without a GPU.
//
//===----------------------------------------------------------------------===//
#include "pk/runtime.hpp"

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;

struct Driver {
  CUresult (*primaryCtxRetain)(CUcontext *, int);
  CUresult (*ctxPushCurrent)(CUcontext);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*streamSynchronize)(CUstream);
};

/// The driver the runtime uses too ($PK_CUDA_DRIVER or libcuda.so.1).
bool openDriver(Driver &d) {
  const char *path = std::getenv("PK_CUDA_DRIVER");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return false;
  d.primaryCtxRetain =
      reinterpret_cast<decltype(d.primaryCtxRetain)>(dlsym(h, "cuDevicePrimaryCtxRetain"));
  d.ctxPushCurrent = reinterpret_cast<decltype(d.ctxPushCurrent)>(dlsym(h, "cuCtxPushCurrent_v2"));
  d.moduleLoadData = reinterpret_cast<decltype(d.moduleLoadData)>(dlsym(h, "cuModuleLoadData"));
  d.moduleGetFunction =
      reinterpret_cast<decltype(d.moduleGetFunction)>(dlsym(h, "cuModuleGetFunction"));
  d.launchKernel = reinterpret_cast<decltype(d.launchKernel)>(dlsym(h, "cuLaunchKernel"));
  d.streamSynchronize =
      reinterpret_cast<decltype(d.streamSynchronize)>(dlsym(h, "cuStreamSynchronize"));
  return d.primaryCtxRetain && d.ctxPushCurrent && d.moduleLoadData && d.moduleGetFunction &&
         d.launchKernel && d.streamSynchronize;
}

#define DRIVER_CHECK(call)                                                                         \
  do {                                                                                             \
    if (CUresult r_ = (call)) {                                                                    \
      std::fprintf(stderr, "%s failed: CUDA error %d\n", #call, r_);                               \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

/// Median over `rounds` of the seconds per call of `batch` calls of
/// `body`, each round ended by `sync` (which is timed with it).
double medianMicroseconds(int rounds, int batch, const std::function<void()> &body,
                          const std::function<void()> &sync) {
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i)
      body();
    sync();
    std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    samples.push_back(took.count() / batch);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s add.json [launches]\n", argv[0]);
    return 2;
  }
  int batch = argc > 2 ? std::atoi(argv[2]) : 20000;
  int devices = 0;
  Driver d{};
  if (pk_device_count(&devices) != PK_OK || devices == 0 || !openDriver(d)) {
    std::printf("SKIPPED: no CUDA GPU (%s)\n", pk_last_error());
    return 77;
  }
  try {
    pk::Module module = pk::Module::load(argv[1]);
    pk::Kernel add = module.kernel("add");
    int device = module.device();

    // The same cubin, loaded by hand into the runtime's context.
    std::ifstream in(argv[1]);
    nlohmann::json manifest = nlohmann::json::parse(in);
    std::string dir = std::string(argv[1]).substr(0, std::string(argv[1]).rfind('/') + 1);
    // The raw launch copies the manifest's: kernel, CTA size, and the grid
    // ["ceildiv", "N", elements per CTA].
    std::string kernelName;
    unsigned threads = 0;
    int64_t perCta = 0;
    for (const auto &a : manifest["artifacts"])
      if (a["file"] == module.artifact()) {
        const auto &launch = a["programs"][0]["steps"][0]["launch"];
        kernelName = launch["kernel"];
        threads = launch["block"][0];
        if (launch["grid"][0].is_array() && launch["grid"][0][0] == "ceildiv")
          perCta = launch["grid"][0][2];
      }
    if (kernelName.empty() || threads == 0 || perCta <= 0) {
      std::fprintf(stderr, "%s: expected add's launch as samples/add.pk compiles it\n", argv[1]);
      return 1;
    }
    std::ifstream file(dir + module.artifact(), std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    std::string image = bytes.str();
    image.push_back('\0'); // PTX is read up to a NUL
    CUcontext context = nullptr;
    DRIVER_CHECK(d.primaryCtxRetain(&context, device));
    DRIVER_CHECK(d.ctxPushCurrent(context));
    CUmodule raw = nullptr;
    CUfunction function = nullptr;
    DRIVER_CHECK(d.moduleLoadData(&raw, image.data()));
    DRIVER_CHECK(d.moduleGetFunction(&function, raw, kernelName.c_str()));

    int64_t n = 4096;
    std::vector<float> host(size_t(n), 1.0f);
    pk::DeviceBuffer x = pk::DeviceBuffer::from(device, host),
                     y = pk::DeviceBuffer::from(device, host);
    pk::DeviceBuffer out = pk::DeviceBuffer::allocate(device, size_t(n) * sizeof(float));
    pk::Stream stream = pk::Stream::create(device);
    pk::Tensor tx = pk::Tensor::of(static_cast<float *>(x.data()), {n}, device);
    pk::Tensor ty = pk::Tensor::of(static_cast<float *>(y.data()), {n}, device);
    pk::Tensor tout = pk::Tensor::of(static_cast<float *>(out.data()), {n}, device);
    const DLTensor args[3] = {tx.dl(), ty.dl(), tout.dl()};

    unsigned long long px = uintptr_t(x.data()), py = uintptr_t(y.data()),
                       pout = uintptr_t(out.data());
    long long nn = n;
    void *params[] = {&px, &py, &pout, &nn};
    unsigned grid = unsigned((n + perCta - 1) / perCta);
    auto rawLaunch = [&] {
      DRIVER_CHECK(
          d.launchKernel(function, grid, 1, 1, threads, 1, 1, 0, stream.get(), params, nullptr));
    };
    auto pkLaunch = [&] {
      if (pk_launch(add.get(), args, 3, stream.get()) != PK_OK) {
        std::fprintf(stderr, "pk_launch: %s\n", pk_last_error());
        std::exit(1);
      }
    };
    auto validate = [&] {
      if (pk_validate(add.get(), args, 3) != PK_OK)
        std::exit(1);
    };
    auto sync = [&] { DRIVER_CHECK(d.streamSynchronize(stream.get())); };
    auto none = [] {};

    char name[128] = {};
    pk_device_name(device, name, sizeof name);
    std::printf("device %d: %s; artifact %s (%s); add of %lld floats\n", device, name,
                module.artifact().c_str(), module.target().c_str(), (long long)n);
    // Warm up both paths (module loading, first-launch costs).
    medianMicroseconds(1, 1000, rawLaunch, sync);
    medianMicroseconds(1, 1000, pkLaunch, sync);

    const int rounds = 7;
    double rawEnqueue = medianMicroseconds(rounds, batch, rawLaunch, sync);
    double pkEnqueue = medianMicroseconds(rounds, batch, pkLaunch, sync);
    double validateOnly = medianMicroseconds(rounds, batch, validate, none);
    int trips = std::max(1, batch / 20);
    double rawTrip = medianMicroseconds(
        rounds, trips,
        [&] {
          rawLaunch();
          sync();
        },
        none);
    double pkTrip = medianMicroseconds(
        rounds, trips,
        [&] {
          pkLaunch();
          sync();
        },
        none);

    std::printf("\nmicroseconds per launch, median of %d rounds\n", rounds);
    std::printf("  %-34s %10s %10s\n", "", "raw", "pk_launch");
    std::printf("  %-34s %10.3f %10.3f  (+%.3f)\n", "enqueue (batch of launches + sync)",
                rawEnqueue, pkEnqueue, pkEnqueue - rawEnqueue);
    std::printf("  %-34s %10.3f %10.3f  (+%.3f)\n", "round trip (launch + sync)", rawTrip, pkTrip,
                pkTrip - rawTrip);
    std::printf("  %-34s %10s %10.3f\n", "pk_validate alone (host only)", "", validateOnly);
    std::vector<float> got = out.download<float>();
    if (got[0] != 2.0f || got[size_t(n - 1)] != 2.0f) {
      std::fprintf(stderr, "wrong result: %g\n", got[0]);
      return 1;
    }
  } catch (const pk::Error &e) {
    std::fprintf(stderr, "%s: %s\n", pk_status_name(e.code()), e.what());
    return 1;
  }
  return 0;
}
