//===- Target.cpp ---------------------------------------------------------===//
#include "runtime/Target.h"

namespace pk::rt {

std::optional<CudaTarget> parseCudaTarget(std::string_view target) {
  constexpr std::string_view prefix = "cuda:sm_";
  if (target.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  std::string_view arch = target.substr(prefix.size());
  CudaTarget t;
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    t.suffix = arch.back();
    arch.remove_suffix(1);
  }
  // Two or three digits: the last is the minor version (sm_90, sm_100).
  if (arch.size() < 2 || arch.size() > 3)
    return std::nullopt;
  for (char c : arch)
    if (c < '0' || c > '9')
      return std::nullopt;
  t.minor = unsigned(arch.back() - '0');
  t.major = 0;
  for (char c : arch.substr(0, arch.size() - 1))
    t.major = t.major * 10 + unsigned(c - '0');
  if (t.major == 0)
    return std::nullopt;
  return t;
}

unsigned compatibility(const CudaTarget &t, std::string_view format, unsigned major,
                       unsigned minor) {
  unsigned device = major * 10 + minor;
  if (format == "ptx") {
    if (t.suffix == 'a')
      return device == t.capability() ? 2 : 0;
    return device >= t.capability() ? 1 : 0;
  }
  if (format != "cubin" || t.major != major || minor < t.minor)
    return 0;
  if (t.suffix == 'a')
    return minor == t.minor ? 100 : 0;
  // Exactly this architecture beats an older minor version; newer minor
  // versions beat older ones.
  return minor == t.minor ? 90 : 10 + t.minor;
}

std::string runsOn(const CudaTarget &t, std::string_view format) {
  std::string cc = std::to_string(t.major) + "." + std::to_string(t.minor);
  if (t.suffix == 'a')
    return "compute capability " + cc + " only";
  if (format == "ptx")
    return "compute capability " + cc + " and newer";
  if (t.minor == 0)
    return "compute capability " + std::to_string(t.major) + ".x";
  return "compute capability " + std::to_string(t.major) + ".x, x >= " + std::to_string(t.minor);
}

} // namespace pk::rt
