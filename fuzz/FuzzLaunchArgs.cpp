//===- FuzzLaunchArgs.cpp - libFuzzer: the runtime's argument checks ------===//
//
// Every launch validates its DLPack arguments against the export before
// anything reaches the driver: count, device, dtype, rank, shapes and the
// symbols they bind, strides, alignment and aliasing. The input decides the
// export (from manifests with symbolic and fixed shapes) and every field of
// every DLTensor; validation must accept or throw pk::rt::Error, and an
// accepted launch binds every symbol to a size (zero or more).
//
//===----------------------------------------------------------------------===//
#include "runtime/Error.h"
#include "runtime/Manifest.h"
#include "runtime/Validate.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr const char *kManifest = R"({
  "format": "pkc-manifest", "version": 1,
  "compiler": {"name": "pkc", "version": "0.1.0"},
  "exports": [
    {"name": "add",
     "symbols": [{"name": "N", "param": 0, "dim": 0}],
     "params": [
       {"name": "x", "role": "input", "dtype": "float32", "shape": ["N"], "alignment": 16},
       {"name": "y", "role": "input", "dtype": "float32", "shape": ["N"], "alignment": 16},
       {"name": "out0", "role": "output", "dtype": "float32", "shape": ["N"], "alignment": 16}]},
    {"name": "matmul",
     "symbols": [{"name": "M", "param": 0, "dim": 0}, {"name": "K", "param": 0, "dim": 1},
                 {"name": "N", "param": 1, "dim": 1}],
     "params": [
       {"name": "a", "role": "input", "dtype": "bfloat16", "shape": ["M", "K"], "alignment": 16},
       {"name": "b", "role": "input", "dtype": "bfloat16", "shape": ["K", "N"], "alignment": 16},
       {"name": "out0", "role": "output", "dtype": "float32", "shape": ["M", "N"], "alignment": 16}]},
    {"name": "fixed",
     "symbols": [],
     "params": [
       {"name": "x", "role": "input", "dtype": "uint8", "shape": [4, 3, 2], "alignment": 1},
       {"name": "out0", "role": "output", "dtype": "int64", "shape": [], "alignment": 8}]}],
  "artifacts": []
})";

/// Reads the fuzzer's bytes in order; zeros once they run out.
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t byte() { return at < size ? data[at++] : 0; }
  int64_t int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v = v << 8 | byte();
    // Mostly small sizes, sometimes anything at all.
    return (v >> 63) ? static_cast<int64_t>(v) : static_cast<int64_t>(v % 97);
  }

private:
  const uint8_t *data;
  size_t size;
  size_t at = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const pk::rt::Manifest manifest = pk::rt::readManifest(kManifest, "fuzz manifest");
  Bytes in(data, size);
  const pk::rt::Export &e = manifest.exports[in.byte() % manifest.exports.size()];
  size_t count = in.byte() % 6;
  constexpr int kMaxRank = 6;
  std::vector<std::array<int64_t, kMaxRank>> shapes(count), strides(count);
  std::vector<DLTensor> args(count);
  for (size_t i = 0; i < count; ++i) {
    DLTensor &t = args[i];
    std::memset(&t, 0, sizeof t);
    t.device.device_type = static_cast<DLDeviceType>(in.byte() % 3 ? kDLCUDA : in.byte());
    t.device.device_id = in.byte() % 4 ? 0 : in.byte();
    t.ndim = in.byte() % (kMaxRank + 1);
    t.dtype.code = in.byte() % 6;
    t.dtype.bits = static_cast<uint8_t>(8u << (in.byte() % 4));
    t.dtype.lanes = in.byte() % 8 ? 1 : in.byte();
    for (int d = 0; d < t.ndim; ++d) {
      shapes[i][d] = in.int64();
      strides[i][d] = in.int64();
    }
    t.shape = shapes[i].data();
    t.strides = in.byte() % 2 ? strides[i].data() : nullptr;
    t.data = reinterpret_cast<void *>(static_cast<uintptr_t>(in.int64()) << (in.byte() % 12));
    t.byte_offset = in.byte() % 2 ? 0 : static_cast<uint64_t>(in.int64());
  }
  pk::rt::BoundArgs bound;
  try {
    pk::rt::validate(e, args.data(), args.size(), in.byte() % 2 ? -1 : 0, bound);
  } catch (const pk::rt::Error &error) {
    if (error.message().empty()) {
      std::fprintf(stderr, "pk-fuzz-launch-args: an error without a message\n");
      std::abort();
    }
    return 0;
  }
  for (int64_t symbol : bound.symbols)
    if (symbol < 0) {
      std::fprintf(stderr, "pk-fuzz-launch-args: a launch accepted with a symbol of %lld\n",
                   static_cast<long long>(symbol));
      std::abort();
    }
  return 0;
}
