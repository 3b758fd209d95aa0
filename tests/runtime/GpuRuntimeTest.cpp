//===- GpuRuntimeTest.cpp - The test kernels on a real GPU ----------------===//
//
// Runs every export of the test kernels' manifest (kernels.json, built
// from kernels/test_kernels.cu by nvcc) through the runtime on device 0 and
// checks the results against plain host loops: a one-step launch, a
// program with a temporary and 64 KiB of opted-in shared memory, symbolic
// shared memory, an aliased output's copy, a cluster launch (compute
// capability 9.0), and concurrent launches from several threads on several
// streams. Exits 77 (skipped) without a GPU. No GoogleTest: GPU machines
// need not have it.
//
//   pk_runtime_gpu_test build/tests/runtime/kernels/kernels.json
//
//===----------------------------------------------------------------------===//
#include "pk/runtime.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                       \
      std::fprintf(stderr, __VA_ARGS__);                                                           \
      std::fprintf(stderr, "\n");                                                                  \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

float value(size_t i) { return float(int((i * 2654435761u) % 2001) - 1000) / 64.0f; }

template <typename T> struct Array {
  std::vector<T> host;
  pk::DeviceBuffer device;
  pk::Tensor tensor;
  Array(std::vector<int64_t> shape, T (*init)(size_t) = nullptr)
      : tensor(nullptr, shape, pk::dtypeOf<T>()) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= size_t(d);
    host.resize(n);
    for (size_t i = 0; i < n && init; ++i)
      host[i] = init(i);
    if (n)
      device = pk::DeviceBuffer::from(0, host);
    tensor = pk::Tensor(device.data(), shape, pk::dtypeOf<T>());
  }
  const DLTensor &dl() const { return tensor.dl(); }
  std::vector<T> download() const { return device.download<T>(); }
};

void add(const pk::Module &m) {
  pk::Kernel k = m.kernel("add");
  for (int64_t n : {1, 255, 256, 257, 100000, 1 << 22}) {
    Array<float> x({n}, value), y({n}, [](size_t i) { return value(i + 11); }), out({n});
    k.launch({x.dl(), y.dl(), out.dl()});
    std::vector<float> got = out.download();
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
      bad += got[size_t(i)] != x.host[size_t(i)] + y.host[size_t(i)];
    CHECK(bad == 0, "add: %lld of %lld elements wrong", (long long)bad, (long long)n);
  }
}

void rowsums(const pk::Module &m, const char *name, bool square,
             const std::vector<int64_t> &colsList) {
  pk::Kernel k = m.kernel(name);
  for (int64_t cols : colsList) {
    int64_t rows = 37;
    Array<float> x({rows, cols}, value), out({rows});
    k.launch({x.dl(), out.dl()});
    std::vector<float> got = out.download();
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0, magnitude = 0;
      for (int64_t c = 0; c < cols; ++c) {
        double v = x.host[size_t(r * cols + c)];
        sum += square ? v * v : v;
        magnitude += std::abs(square ? v * v : v);
      }
      // float accumulation in a different order: relative to the sum of
      // magnitudes.
      CHECK(std::abs(got[size_t(r)] - sum) <= 1e-5 * magnitude + 1e-4,
            "%s cols %lld row %lld: %g, expected %g", name, (long long)cols, (long long)r,
            got[size_t(r)], sum);
    }
  }
}

void accumulate(const pk::Module &m) {
  int64_t n = 5000;
  Array<float> acc({n}, value), x({n}, [](size_t i) { return float(i); }), out({n});
  m.kernel("accumulate").launch({acc.dl(), x.dl(), out.dl()});
  std::vector<float> got = out.download(), accAfter = acc.download();
  for (int64_t i = 0; i < n; ++i) {
    CHECK(got[size_t(i)] == acc.host[size_t(i)] + x.host[size_t(i)], "accumulate %lld",
          (long long)i);
    CHECK(accAfter[size_t(i)] == acc.host[size_t(i)], "accumulate changed its input at %lld",
          (long long)i);
  }
}

void clusters(const pk::Module &m) {
  int64_t n = 3000;
  Array<int32_t> x({n}, [](size_t i) { return int32_t(i); }), out({n});
  m.kernel("cluster_ranks").launch({x.dl(), out.dl()});
  std::vector<int32_t> got = out.download();
  for (int64_t i = 0; i < n; ++i)
    CHECK(got[size_t(i)] == int32_t(i) + int32_t((i / 256) % 2) + 200, "cluster rank at %lld: %d",
          (long long)i, got[size_t(i)]);
}

void concurrent(const pk::Module &m) {
  pk::Kernel add = m.kernel("add"), rowsum = m.kernel("rowsum_squares");
  constexpr int kThreads = 8, kIterations = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      pk::Stream stream = pk::Stream::create(0);
      int64_t n = 4096 + t * 1000;
      Array<float> x({n}, value), y({n}, [](size_t i) { return value(i * 3); }), out({n});
      Array<float> mat({4, n}, value), sums({4});
      for (int i = 0; i < kIterations; ++i) {
        if (!add.tryLaunch({x.dl(), y.dl(), out.dl()}, stream.get()) ||
            !rowsum.tryLaunch({mat.dl(), sums.dl()}, stream.get())) {
          std::fprintf(stderr, "thread %d: %s\n", t, pk_last_error());
          ++wrong;
          return;
        }
      }
      stream.synchronize();
      std::vector<float> got = out.download();
      for (int64_t i = 0; i < n; ++i)
        if (got[size_t(i)] != x.host[size_t(i)] + y.host[size_t(i)]) {
          ++wrong;
          return;
        }
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(wrong == 0, "%d of %d threads got errors or wrong results", wrong.load(), kThreads);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s kernels.json\n", argv[0]);
    return 2;
  }
  int count = 0;
  if (pk_device_count(&count) != PK_OK || count == 0) {
    std::printf("SKIPPED: no CUDA GPU (%s)\n",
                count == 0 && *pk_last_error() ? pk_last_error() : "no devices");
    return 77;
  }
  int major = 0, minor = 0;
  char name[128] = {};
  pk_device_compute_capability(0, &major, &minor);
  pk_device_name(0, name, sizeof name);
  try {
    pk::Module m = pk::Module::load(argv[1]);
    std::printf("device 0: %s (compute capability %d.%d), artifact %s\n", name, major, minor,
                m.target().c_str());
    add(m);
    rowsums(m, "rowsum_squares", true, {1, 1000, 20000});
    rowsums(m, "rowsum_wide", false, {1, 100, 20000, 30000});
    accumulate(m);
    if (major >= 9)
      clusters(m);
    else
      std::printf("cluster launch: skipped below compute capability 9.0\n");
    concurrent(m);
  } catch (const pk::Error &e) {
    std::fprintf(stderr, "FAILED: %s (%s)\n", e.what(), pk_status_name(e.code()));
    return 1;
  }
  std::printf(failures ? "%d check(s) FAILED\n" : "all checks passed\n", failures);
  return failures ? 1 : 0;
}
