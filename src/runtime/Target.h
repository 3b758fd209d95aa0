//===- Target.h - Which artifact runs on which device -----------*- C++ -*-===//
//
// An artifact's "target" is "cuda:sm_XY" with an optional suffix: "a"
// (architecture-specific: wgmma, setmaxnreg) runs only on compute
// capability X.Y; "f" (family-specific) and no suffix run on X.Z for any
// Z >= Y (a cubin is binary compatible within a major version only). PTX
// is compiled by the driver for any device of compute capability >= XY
// (exactly XY for "a"). Among the artifacts that run on a device the
// runtime prefers the closest: a cubin for exactly its architecture
// (architecture-specific first), then the highest older minor version,
// then PTX.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_TARGET_H
#define PK_RUNTIME_TARGET_H

#include <optional>
#include <string>
#include <string_view>

namespace pk::rt {

struct CudaTarget {
  unsigned major = 0, minor = 0;
  char suffix = 0; ///< 'a', 'f' or 0

  /// 90 for sm_90a.
  unsigned capability() const { return major * 10 + minor; }
};

/// Parses "cuda:sm_90a"; nullopt for anything else (including "tpu").
std::optional<CudaTarget> parseCudaTarget(std::string_view target);

/// How well an artifact of `target` and `format` ("cubin" or "ptx") fits
/// a device of compute capability `major`.`minor`: 0 when it cannot run
/// there, higher is better.
unsigned compatibility(const CudaTarget &target, std::string_view format, unsigned major,
                       unsigned minor);

/// The devices an artifact runs on, for messages: "compute capability 9.0
/// only", "compute capability 8.x, x >= 6".
std::string runsOn(const CudaTarget &target, std::string_view format);

} // namespace pk::rt

#endif // PK_RUNTIME_TARGET_H
