//===- TensorMap.h - Tiled TMA tensor maps, as CUDA takes them --*- C++ -*-===//
//
// A launch's `tensor_map` arguments (docs/manifest.md) become CUtensorMaps
// encoded at launch by cuTensorMapEncodeTiled. This is everything that
// call takes, in CUDA's order (innermost dimension first), and the
// requirements cuda.h states for it, checked here so that a bad tensor map
// is a message naming the rule rather than CUDA_ERROR_INVALID_VALUE. The
// SIMT simulator checks its tensor maps with the same function.
//
// Self-contained (no LLVM, no CUDA headers): the runtime and the simulator
// both build it.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_TENSORMAP_H
#define PK_RUNTIME_TENSORMAP_H

#include <cstdint>
#include <string>
#include <string_view>

namespace pk::rt {

// The CUDA enums' values (cuda.h: CUtensorMapSwizzle, CUtensorMapInterleave,
// CUtensorMapL2promotion, CUtensorMapFloatOOBfill).
enum class TmaSwizzle : uint8_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };
enum class TmaInterleave : uint8_t { None = 0, B16 = 1, B32 = 2 };
enum class TmaL2Promotion : uint8_t { None = 0, B64 = 1, B128 = 2, B256 = 3 };
/// Zero fill, or CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA.
enum class TmaOobFill : uint8_t { Zero = 0, Nan = 1 };

/// The manifest's spellings: "none", "32B", "64B", "128B" (swizzle);
/// "none", "16B", "32B" (interleave); "none", "64B", "128B", "256B" (L2
/// promotion); "zero", "nan" (out-of-bounds fill). False for another.
bool parseTmaSwizzle(std::string_view text, TmaSwizzle &out);
bool parseTmaInterleave(std::string_view text, TmaInterleave &out);
bool parseTmaL2Promotion(std::string_view text, TmaL2Promotion &out);
bool parseTmaOobFill(std::string_view text, TmaOobFill &out);
const char *tmaName(TmaSwizzle s);
const char *tmaName(TmaInterleave s);
const char *tmaName(TmaL2Promotion s);
const char *tmaName(TmaOobFill s);
/// The swizzle span in bytes (0 for none).
unsigned swizzleBytes(TmaSwizzle s);

/// CUtensorMapDataType for an element of `bits` bits of a DLPack type
/// code (kDLInt, kDLUInt, kDLFloat, kDLBfloat, bool); -1 if TMA has none.
int tensorMapDataType(uint8_t dlpackCode, unsigned bits);

constexpr unsigned kMaxTensorMapRank = 5;

/// cuTensorMapEncodeTiled's arguments, innermost dimension first.
struct TensorMapDesc {
  unsigned rank = 0;
  int dataType = 0; ///< CUtensorMapDataType
  unsigned elementBytes = 0;
  bool isFloat = false;
  uint64_t address = 0; ///< the global buffer's device address
  uint64_t dims[kMaxTensorMapRank] = {};
  /// Byte strides of dimensions 1 .. rank-1 (CUDA's globalStrides[i - 1]
  /// is strides[i]); strides[0] is the element size.
  uint64_t strides[kMaxTensorMapRank] = {};
  uint32_t box[kMaxTensorMapRank] = {};
  uint32_t elementStrides[kMaxTensorMapRank] = {};
  TmaInterleave interleave = TmaInterleave::None;
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaL2Promotion l2Promotion = TmaL2Promotion::None;
  TmaOobFill oobFill = TmaOobFill::Zero;

  /// Bytes one box occupies in shared memory (what a TMA load completes
  /// on its mbarrier).
  uint64_t boxBytes() const;
};

/// The requirement of cuTensorMapEncodeTiled (cuda.h) that `d` breaks, as
/// a sentence ("box dimension 1 is 300; boxes have 1 to 256 elements per
/// dimension"), or empty when it meets them all. Dimension numbers in the
/// messages are the manifest's (0 outermost).
std::string checkTensorMap(const TensorMapDesc &d);
/// The checks that depend only on what the manifest fixes (rank, box,
/// element strides, element size, enums), for reading a manifest.
std::string checkTensorMapStatic(const TensorMapDesc &d);

} // namespace pk::rt

#endif // PK_RUNTIME_TENSORMAP_H
