//===- TestManifest.h - A hand-written manifest for GPU-free tests -*- C++ -*-===//
//
// A manifest with every kind of thing the schema has (several exports and
// symbols, a constant dimension, bool and bfloat16, temporaries, a copy
// step, a cluster launch, a TPU artifact the runtime skips), whose
// artifacts are short strings held in memory. Their sha256 values were
// computed with sha256sum, independently of the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef PK_TESTS_RUNTIME_TESTMANIFEST_H
#define PK_TESTS_RUNTIME_TESTMANIFEST_H

#include "pk/runtime.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pk::test {

inline const std::string kArtifact90 = "pkc runtime test artifact\n";
inline const char kArtifact90Sha[] =
    "c3208eb7b7ab6ff2113a45662bac27f7f91f9108a4334e04114d2506b0623939";
inline const std::string kArtifact80 = "another artifact for sm_80\n";
inline const char kArtifact80Sha[] =
    "67e18a93af8bb83f18bef829e1d6fbe61469ca8abc725aea0b8c22980b4b012f";

inline nlohmann::json testManifest() {
  return nlohmann::json::parse(std::string(R"({
  "format": "pkc-manifest",
  "version": 1,
  "compiler": {"name": "pkc", "version": "0.1.0"},
  "source": {"path": "test.pk", "sha256": "0000000000000000000000000000000000000000000000000000000000000000"},
  "exports": [
    {"name": "add",
     "symbols": [{"name": "N", "param": 0, "dim": 0}],
     "params": [
       {"name": "x", "role": "input", "dtype": "float32", "shape": ["N"], "alignment": 16},
       {"name": "y", "role": "input", "dtype": "float32", "shape": ["N"], "alignment": 16},
       {"name": "out0", "role": "output", "dtype": "float32", "shape": ["N"], "alignment": 16}]},
    {"name": "matmul",
     "symbols": [{"name": "M", "param": 0, "dim": 0}, {"name": "N", "param": 1, "dim": 1}],
     "params": [
       {"name": "x", "role": "input", "dtype": "float32", "shape": ["M", 256], "alignment": 16},
       {"name": "y", "role": "input", "dtype": "float32", "shape": [256, "N"], "alignment": 16},
       {"name": "out0", "role": "output", "dtype": "float32", "shape": ["M", "N"], "alignment": 16}]},
    {"name": "update",
     "symbols": [{"name": "N", "param": 0, "dim": 0}],
     "params": [
       {"name": "acc", "role": "input", "dtype": "int32", "shape": ["N"], "alignment": 4},
       {"name": "x", "role": "input", "dtype": "int32", "shape": ["N"], "alignment": 4},
       {"name": "out0", "role": "output", "dtype": "int32", "shape": ["N"], "alignment": 4}]},
    {"name": "widen",
     "symbols": [{"name": "N", "param": 0, "dim": 0}],
     "params": [
       {"name": "flags", "role": "input", "dtype": "bool", "shape": ["N"], "alignment": 1},
       {"name": "out0", "role": "output", "dtype": "bfloat16", "shape": [["add", "N", 1], 2], "alignment": 2}]}
  ],
  "artifacts": [
    {"target": "cuda:sm_90a", "file": "test.sm_90a.cubin", "format": "cubin",
     "sha256": ")") + kArtifact90Sha +
                               R"(", "size": 26,
     "programs": [
       {"export": "add", "temporaries": [], "steps": [
         {"launch": {"kernel": "add_kernel", "grid": [["ceildiv", "N", 1024], 1, 1], "block": [128, 1, 1],
                     "cluster": [1, 1, 1], "shared_memory": {"static": 0, "dynamic": 0},
                     "args": [{"param": 0}, {"param": 1}, {"param": 2}, {"symbol": "N"}],
                     "registers": 26, "spill_stores": 0, "spill_loads": 0, "local_memory": 0}}]},
       {"export": "matmul", "temporaries": [{"dtype": "float32", "shape": ["M", "N"]}], "steps": [
         {"launch": {"kernel": "matmul_kernel", "grid": [["ceildiv", "M", 64], ["ceildiv", "N", 64], 1],
                     "block": [128, 1, 1], "cluster": [2, 1, 1],
                     "shared_memory": {"static": 0, "dynamic": 98304},
                     "args": [{"param": 0}, {"param": 1}, {"temp": 0}, {"symbol": "M"}, {"symbol": "N"}]}},
         {"copy": {"from": {"temp": 0}, "to": {"param": 2}, "bytes": ["mul", ["mul", "M", "N"], 4]}}]},
       {"export": "update", "temporaries": [], "steps": [
         {"copy": {"from": {"param": 0}, "to": {"param": 2}, "bytes": ["mul", "N", 4]}},
         {"launch": {"kernel": "update_kernel", "grid": [["ceildiv", "N", 256], 1, 1], "block": [256, 1, 1],
                     "shared_memory": {"dynamic": 0}, "args": [{"param": 2}, {"param": 1}, {"symbol": "N"}]}}]},
       {"export": "widen", "temporaries": [], "steps": []}
     ]},
    {"target": "cuda:sm_80", "file": "test.sm_80.cubin", "format": "cubin",
     "sha256": ")" + kArtifact80Sha +
                               R"(", "size": 27,
     "programs": [
       {"export": "add", "temporaries": [], "steps": [
         {"launch": {"kernel": "add_kernel", "grid": [["ceildiv", "N", 1024], 1, 1], "block": [128, 1, 1],
                     "shared_memory": {"static": 0, "dynamic": 0},
                     "args": [{"param": 0}, {"param": 1}, {"param": 2}, {"symbol": "N"}]}}]}
     ]},
    {"target": "tpu", "file": "test.mlir", "format": "mosaic",
     "sha256": "0000000000000000000000000000000000000000000000000000000000000000", "size": 3,
     "programs": [{"anything": ["the TPU schema", 1, 2]}]}
  ]
})");
}

/// The artifacts of testManifest(), in memory.
inline std::vector<pk_artifact_data> testArtifacts() {
  return {{"test.sm_90a.cubin", kArtifact90.data(), kArtifact90.size()},
          {"test.sm_80.cubin", kArtifact80.data(), kArtifact80.size()}};
}

/// Options that load without a device, choosing the artifact as for
/// compute capability `cc`.
inline pk_load_options noDevice(int cc, const std::vector<pk_artifact_data> &artifacts,
                                int device = -1) {
  pk_load_options o;
  pk_load_options_init(&o);
  o.flags = PK_LOAD_NO_DEVICE;
  o.compute_capability = cc;
  o.device = device;
  o.artifacts = artifacts.data();
  o.num_artifacts = artifacts.size();
  return o;
}

/// A DLTensor on CUDA device `device` at `address`, dense unless
/// `strides` is given. `shape` and `strides` must outlive it.
inline DLTensor tensor(uintptr_t address, const std::vector<int64_t> &shape, DLDataType dtype,
                       int device = 0, const int64_t *strides = nullptr) {
  DLTensor t{};
  t.data = reinterpret_cast<void *>(address);
  t.device = DLDevice{kDLCUDA, device};
  t.ndim = int32_t(shape.size());
  t.dtype = dtype;
  t.shape = const_cast<int64_t *>(shape.data());
  t.strides = const_cast<int64_t *>(strides);
  t.byte_offset = 0;
  return t;
}

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};
constexpr DLDataType kBool{6, 8, 1};
constexpr DLDataType kBF16{kDLBfloat, 16, 1};

} // namespace pk::test

#endif // PK_TESTS_RUNTIME_TESTMANIFEST_H
