//===- Manifest.h - A launch manifest, as the runtime reads it --*- C++ -*-===//
//
// The runtime's model of docs/manifest.md, checked on reading so that a
// launch never meets an index out of range, an unknown dtype or a symbol
// without a value: every index here is known valid for the vectors it
// indexes. TPU artifacts are kept by name only.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_MANIFEST_H
#define PK_RUNTIME_MANIFEST_H

#include "runtime/DType.h"
#include "runtime/SizeExpr.h"
#include "runtime/Target.h"
#include "runtime/TensorMap.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pk::rt {

/// The newest manifest version this runtime reads (it reads 1 too).
/// Version 2 added `tensor_map` kernel arguments; a writer says 2 only
/// when it uses them.
constexpr int kManifestVersion = 2;

struct Param {
  std::string name;
  bool output = false;
  const DTypeDesc *dtype = nullptr;
  std::vector<SizeExpr> shape;
  uint64_t alignment = 1; ///< a power of two
};

/// Symbol `name` is dimension `dim` of param `param`, whose size there is
/// exactly the symbol.
struct SymbolBinding {
  std::string name;
  unsigned param = 0, dim = 0;
};

struct Export {
  std::string name;
  std::vector<SymbolBinding> symbols;
  std::vector<std::string> symbolNames; ///< symbols[i].name, for SizeExpr
  std::vector<Param> params;            ///< inputs, then outputs
  unsigned numInputs = 0;
};

/// A buffer a step names: an export param or a temporary, from `offset`
/// bytes on (a view of it).
struct BufferRef {
  enum class Kind : uint8_t { Param, Temp } kind = Kind::Param;
  unsigned index = 0;
  uint64_t offset = 0;
};

struct KernelArg {
  /// TensorMap: `index` is into LaunchStep::tensorMaps.
  enum class Kind : uint8_t { Param, Temp, Symbol, TensorMap } kind = Kind::Param;
  unsigned index = 0;
  uint64_t offset = 0; ///< Param, Temp: bytes into the buffer
};

/// A `tensor_map` argument: a CUtensorMap over `buffer`, encoded at launch
/// (the shape and strides may depend on the symbols) and passed by value.
struct TensorMapArg {
  BufferRef buffer;
  const DTypeDesc *dtype = nullptr;
  std::vector<SizeExpr> shape;   ///< outermost first, as in the manifest
  std::vector<SizeExpr> strides; ///< bytes, every dimension but the innermost
  /// What the manifest fixes: rank, data type, box, element strides and
  /// the modes, innermost first (dims, strides and address are set at
  /// launch).
  TensorMapDesc fixed;
  /// The kernel reads the map only for sizes it can be encoded for; for
  /// the others it is passed as zeros.
  bool optional = false;
};

struct LaunchStep {
  std::string kernel;
  SizeExpr grid[3], block[3];
  unsigned cluster[3] = {1, 1, 1};
  SizeExpr dynamicSharedMemory;
  uint64_t staticSharedMemory = 0;
  std::vector<KernelArg> args;
  std::vector<TensorMapArg> tensorMaps;
};

struct CopyStep {
  BufferRef from, to;
  SizeExpr bytes;
};

struct Temporary {
  const DTypeDesc *dtype = nullptr;
  std::vector<SizeExpr> shape;
};

struct Program {
  unsigned exportIndex = 0;
  std::vector<Temporary> temporaries;
  std::vector<std::variant<LaunchStep, CopyStep>> steps;
};

struct Artifact {
  std::string target; ///< "cuda:sm_90a", "tpu"
  std::string file;   ///< relative to the manifest's directory
  std::string format; ///< "cubin", "ptx", "mosaic"
  std::string sha256;
  uint64_t size = 0;
  /// Set for CUDA artifacts in a format the runtime loads (cubin, ptx);
  /// only those have their programs read.
  std::optional<CudaTarget> cuda;
  std::vector<Program> programs;

  /// The program of export `exportIndex`, or null.
  const Program *program(unsigned exportIndex) const;
};

struct Manifest {
  std::vector<Export> exports;
  std::vector<Artifact> artifacts;

  /// The index of the export named `name`, or -1.
  int findExport(std::string_view name) const;
};

/// Reads and checks a manifest. Throws Error: PK_ERROR_MANIFEST for
/// malformed JSON or a schema violation, PK_ERROR_MANIFEST_VERSION for
/// another format or version. Messages start with `origin` (the file, or
/// "manifest") and say where in the JSON the problem is.
Manifest readManifest(std::string_view json, const std::string &origin);

} // namespace pk::rt

#endif // PK_RUNTIME_MANIFEST_H
