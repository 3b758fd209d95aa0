// Runs the two exports of kernels/add.pk and kernels/affine.pk through the
// launch headers pk_add_kernels generates, and checks every element on the
// host.
//
//   app               run on GPU 0; exit 77 (skipped) without a GPU
//   app --load-only   load the modules and look the exports up, launch
//                     nothing (with APP_EMBED: first from memory with no
//                     device at all, which works on any machine)
#include "add.pk.h"
#include "affine.pk.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

/// Exit status for "no GPU here": CTest's SKIP_RETURN_CODE.
constexpr int kSkip = 77;

int report(const pk::Status &status, const char *what) {
  std::fprintf(stderr, "app: %s: %s\n", what, status.message().c_str());
  bool noGpu = status.code() == PK_ERROR_DRIVER_UNAVAILABLE || status.code() == PK_ERROR_NO_DEVICE;
  return noGpu ? kSkip : 1;
}

#if APP_EMBEDDED
/// The embedded module, checked without a driver or device: hashes, the
/// sm_90a artifact's choice, the exports' signatures.
int checkEmbeddedWithoutDevice() {
  pk_load_options options;
  pk_load_options_init(&options);
  options.flags = PK_LOAD_NO_DEVICE;
  options.compute_capability = 90;
  for (auto load : {pk_embedded_add_load, pk_embedded_affine_load}) {
    pk_module *module = nullptr;
    if (load(&options, &module) != PK_OK) {
      std::fprintf(stderr, "app: embedded module: %s\n", pk_last_error());
      return 1;
    }
    std::printf("embedded: %s from %s (%s)\n", pk_module_export_name(module, 0),
                pk_module_artifact(module), pk_module_target(module));
    pk_module_destroy(module);
  }
  return 0;
}
#endif

} // namespace

int main(int argc, char **argv) {
  bool loadOnly = argc > 1 && std::strcmp(argv[1], "--load-only") == 0;
#if APP_EMBEDDED
  if (loadOnly)
    if (int status = checkEmbeddedWithoutDevice())
      return status;
#endif
  pk::kernels::add add;
  pk::kernels::affine affine;
  if (!add.status())
    return report(add.status(), "loading add");
  if (!affine.status())
    return report(affine.status(), "loading affine");
  std::printf("loaded: add, affine\n");
  if (loadOnly)
    return 0;

  const int64_t n = 1000; // not a multiple of BLOCK: the last block is partial
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = float(i % 17) - 8.0f;
    y[i] = float(i % 5) * 0.5f;
  }
  pk::Stream stream;
  pk::DeviceBuffer dx, dy, sum, line;
  pk::Status s;
  if (!(s = pk::Stream::tryCreate(0, stream)) ||
      !(s = pk::DeviceBuffer::tryAllocate(0, n * 4, dx)) ||
      !(s = pk::DeviceBuffer::tryAllocate(0, n * 4, dy)) ||
      !(s = pk::DeviceBuffer::tryAllocate(0, n * 4, sum)) ||
      !(s = pk::DeviceBuffer::tryAllocate(0, n * 4, line)) ||
      !(s = dx.tryUpload(x.data(), n * 4)) || !(s = dy.tryUpload(y.data(), n * 4)))
    return report(s, "setting up device memory");

  // Typed launches: float pointers and rank-1 shapes, checked by the C++
  // compiler; N is bound from the shapes by the runtime.
  const float *px = static_cast<const float *>(dx.data());
  const float *py = static_cast<const float *>(dy.data());
  if (!(s = add.tryLaunch(stream.get(), px, {n}, py, {n}, static_cast<float *>(sum.data()), {n})))
    return report(s, "add");
  if (!(s = affine.tryLaunch(stream.get(), px, {n}, static_cast<float *>(line.data()), {n})))
    return report(s, "affine");
  std::vector<float> gotSum(n), gotLine(n);
  if (!(s = stream.trySynchronize()) || !(s = sum.tryDownload(gotSum.data(), n * 4)) ||
      !(s = line.tryDownload(gotLine.data(), n * 4)))
    return report(s, "reading back");

  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    float wantSum = x[i] + y[i], wantLine = x[i] * 2.0f + 1.0f;
    if (gotSum[i] != wantSum || gotLine[i] != wantLine) {
      if (bad++ < 5)
        std::fprintf(stderr, "app: element %lld: add %g (want %g), affine %g (want %g)\n",
                     static_cast<long long>(i), gotSum[i], wantSum, gotLine[i], wantLine);
    }
  }
  if (bad) {
    std::fprintf(stderr, "app: %d of %lld elements wrong\n", bad, static_cast<long long>(n));
    return 1;
  }
  std::printf("ok: add and affine over %lld elements\n", static_cast<long long>(n));
  return 0;
}
