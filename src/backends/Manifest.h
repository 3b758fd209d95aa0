//===- Manifest.h - The launch manifest, as one struct ----------*- C++ -*-===//
//
// Everything a runtime needs to launch the exports of an artifact, gathered
// while lowering and written as JSON (docs/manifest.md is the schema). Size
// expressions are kept as affine maps over the export's symbols until they
// are written.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_MANIFEST_H
#define PK_BACKENDS_MANIFEST_H

#include "ir/ExportSignature.h"
#include "runtime/TensorMap.h"

#include "mlir/IR/AffineExpr.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pk::backends {

/// The manifest version a manifest gets: 1, or 2 when a launch passes a
/// tensor map (which a version-1 reader would not know).
constexpr int kManifestVersion = 1;
constexpr int kManifestVersionTensorMaps = 2;

/// A size expression over an export's symbols.
struct SizeExpr {
  mlir::AffineExpr expr;
  static SizeExpr constant(int64_t value, mlir::MLIRContext *ctx);
};

/// A device buffer a step refers to: an export param or a temporary, from
/// `offset` bytes on (a view: a leading-axis slice of a dense array).
struct BufferRef {
  enum class Kind { Param, Temp } kind = Kind::Param;
  unsigned index = 0;
  uint64_t offset = 0;
};

/// A TMA tensor map over a buffer, which the runtime encodes at launch
/// with cuTensorMapEncodeTiled and passes by value (docs/manifest.md,
/// "tensor_map"). Dimensions are listed outermost first.
struct TensorMapArg {
  BufferRef buffer;
  DType dtype = DType::F32;
  std::vector<SizeExpr> shape;
  /// Byte strides of every dimension but the innermost.
  std::vector<SizeExpr> strides;
  std::vector<int64_t> box;
  std::vector<int64_t> elementStrides; ///< empty: all 1
  rt::TmaSwizzle swizzle = rt::TmaSwizzle::None;
  rt::TmaInterleave interleave = rt::TmaInterleave::None;
  rt::TmaL2Promotion l2Promotion = rt::TmaL2Promotion::None;
  rt::TmaOobFill oobFill = rt::TmaOobFill::Zero;
  /// The kernel reads the map only for sizes it can be encoded for; for
  /// the others the runtime passes zeros instead of failing the launch.
  bool optional = false;
};

/// A kernel parameter: a buffer's address, a symbol's value, or a tensor
/// map.
struct KernelArg {
  std::variant<BufferRef, unsigned /*symbol index*/, TensorMapArg> value;
};

struct CudaLaunch {
  std::string kernel;
  SizeExpr grid[3];
  unsigned block[3] = {1, 1, 1};
  unsigned cluster[3] = {1, 1, 1};
  uint64_t staticSharedMemory = 0;
  uint64_t dynamicSharedMemory = 0;
  std::vector<KernelArg> args;
  // What ptxas reported.
  unsigned registers = 0;
  uint64_t spillStores = 0, spillLoads = 0, localMemory = 0;
};

struct BufferCopy {
  BufferRef from, to;
  /// The byte count as a product of size expressions (the array's
  /// dimensions and its element size).
  std::vector<SizeExpr> bytes;
};

struct Temporary {
  DType dtype;
  std::vector<SizeExpr> shape;
};

/// How to run one export: temporaries to allocate and steps in order.
struct CudaProgram {
  std::string exportName;
  std::vector<Temporary> temporaries;
  std::vector<std::variant<BufferCopy, CudaLaunch>> steps;
};

struct Artifact {
  std::string target; ///< "cuda:sm_90a"
  std::string file;   ///< relative to the manifest
  std::string format; ///< "cubin", "ptx", "mosaic"
  std::string sha256;
  uint64_t size = 0;
  std::vector<CudaProgram> cudaPrograms;
  /// Target-specific programs a backend writes itself (TPU).
  std::vector<nlohmann::json> otherPrograms;
  /// A cubin's ptxas "Potential Performance Loss" remarks (wgmma
  /// serialized, setmaxnreg ignored, ...), each as ptxas wrote it.
  std::vector<std::string> ptxasNotes;
};

struct Manifest {
  std::string sourcePath;
  std::string sourceSha256;
  std::vector<ExportSignature> exports;
  std::vector<Artifact> artifacts;
};

/// The manifest as JSON text (docs/manifest.md).
std::string writeManifest(const Manifest &manifest);
/// A size expression as JSON, naming symbols by `symbols`.
nlohmann::json sizeExprJson(mlir::AffineExpr expr, const std::vector<std::string> &symbols);
/// Lowercase hex SHA-256 of `bytes`.
std::string sha256Hex(const std::string &bytes);

} // namespace pk::backends

#endif // PK_BACKENDS_MANIFEST_H
