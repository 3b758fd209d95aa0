//===- Target.h - What pkc compiles for -------------------------*- C++ -*-===//
//
// A compilation target as `--target` spells it: `cuda:sm_90a`,
// `cuda:sm_80`, ..., `tpu` (any TPU generation) or `tpu:v6e` (one).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TARGET_H
#define PK_BACKENDS_TARGET_H

#include <optional>
#include <string>
#include <vector>

namespace pk::backends {

struct Target {
  enum class Kind { Cuda, Tpu };
  Kind kind = Kind::Cuda;
  /// "sm_90a" for CUDA; for TPU the generation ("v6e"), or empty when
  /// the code is for any.
  std::string arch;

  /// "cuda:sm_90a" / "tpu" / "tpu:v6e".
  std::string str() const;
  /// The compute capability as major * 10 + minor (90 for sm_90a, 100
  /// for sm_100a).
  unsigned computeCapability() const;
  /// Architecture-specific features (the "a" of sm_90a: wgmma, setmaxnreg;
  /// of sm_100a: tcgen05).
  bool archSpecific() const { return !arch.empty() && arch.back() == 'a'; }
  /// The NVPTX target features: the PTX ISA version the code needs.
  std::string ptxFeatures() const;
  /// The `device_kind` JAX reports for the device this target's code is
  /// for ("NVIDIA H100 80GB HBM3" for sm_90a, "TPU v6 lite" for tpu:v6e);
  /// empty for `tpu`, which does not say the generation.
  std::string deviceKind() const;
  /// The platform JAX reports for that device: "tpu" or "gpu" (known for
  /// `tpu` too).
  std::string platform() const { return kind == Kind::Tpu ? "tpu" : "gpu"; }
};

/// Parses a --target value; on failure returns nullopt and sets `error`.
std::optional<Target> parseTarget(const std::string &text, std::string &error);

/// The device_kind of the --target value `text` (Target::deviceKind); ""
/// for `tpu` or a value that is not a target.
std::string deviceKindOf(const std::string &text);
/// The platform of the --target value `text` (Target::platform); "" for a
/// value that is not a target.
std::string platformOf(const std::string &text);

/// The targets pkc accepts, as --target spells them.
std::vector<std::string> supportedTargets();

} // namespace pk::backends

#endif // PK_BACKENDS_TARGET_H
