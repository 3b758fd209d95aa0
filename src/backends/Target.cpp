//===- Target.cpp ---------------------------------------------------------===//
#include "backends/Target.h"

#include <algorithm>
#include <cctype>

namespace pk::backends {

namespace {

// Ampere and newer: mma.sync everywhere; sm_90a adds wgmma and TMA;
// sm_100a (Blackwell) keeps TMA and mbarriers and replaces wgmma by
// tcgen05 MMA into tensor memory.
const char *const kCudaArchs[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100a"};

// TPU generations a program may be compiled for, with the device_kind
// JAX reports for each (what jax._src.test_util.is_device_tpu matches).
// Mosaic modules do not depend on the generation; programs that ask for
// it (device_kind, pltpu.get_tpu_info) do.
struct TpuGeneration {
  const char *name;
  const char *deviceKind;
};
const TpuGeneration kTpuGenerations[] = {{"v4", "TPU v4"},
                                         {"v5e", "TPU v5 lite"},
                                         {"v5p", "TPU v5"},
                                         {"v6e", "TPU v6 lite"},
                                         {"v7x", "TPU7x"}};

const TpuGeneration *findTpuGeneration(const std::string &name) {
  for (const TpuGeneration &g : kTpuGenerations)
    if (name == g.name)
      return &g;
  return nullptr;
}

} // namespace

std::string Target::str() const {
  if (kind == Kind::Tpu)
    return arch.empty() ? "tpu" : "tpu:" + arch;
  return "cuda:" + arch;
}

unsigned Target::computeCapability() const {
  if (kind != Kind::Cuda || arch.rfind("sm_", 0) != 0)
    return 0;
  // The digits after "sm_": the last is the minor version (sm_90, sm_100).
  unsigned cc = 0;
  for (size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    cc = cc * 10 + static_cast<unsigned>(arch[i] - '0');
  return cc;
}

std::string Target::ptxFeatures() const {
  // tcgen05 needs PTX ISA 8.6; everything else 8.0 (ptxas 12.0 reads it).
  return computeCapability() >= 100 ? "+ptx86" : "+ptx80";
}

std::string Target::deviceKind() const {
  if (kind == Kind::Tpu) {
    const TpuGeneration *generation = findTpuGeneration(arch);
    return generation ? generation->deviceKind : "";
  }
  // The device JAX would name for code of this architecture: the one the
  // SM counts pkc answers (132) belong to for sm_90, the data-center part
  // of each other generation.
  unsigned cc = computeCapability();
  if (cc >= 100)
    return "NVIDIA B200";
  if (cc >= 90)
    return "NVIDIA H100 80GB HBM3";
  if (cc == 89)
    return "NVIDIA L4";
  if (cc >= 86)
    return "NVIDIA A10";
  return "NVIDIA A100-SXM4-80GB";
}

std::string deviceKindOf(const std::string &text) {
  std::string unused;
  std::optional<Target> target = parseTarget(text, unused);
  return target ? target->deviceKind() : "";
}

std::string platformOf(const std::string &text) {
  std::string unused;
  std::optional<Target> target = parseTarget(text, unused);
  return target ? target->platform() : "";
}

std::optional<Target> parseTarget(const std::string &text, std::string &error) {
  if (text == "tpu")
    return Target{Target::Kind::Tpu, ""};
  if (text.rfind("tpu:", 0) == 0) {
    std::string generation = text.substr(4);
    if (findTpuGeneration(generation))
      return Target{Target::Kind::Tpu, generation};
    error = "unknown TPU generation '" + generation + "'; pkc supports";
    for (const TpuGeneration &g : kTpuGenerations)
      error += std::string(" tpu:") + g.name;
    error += " (or tpu, for any generation)";
    return std::nullopt;
  }
  std::string arch;
  if (text == "cuda")
    arch = "sm_90a";
  else if (text.rfind("cuda:", 0) == 0)
    arch = text.substr(5);
  else {
    error = "unknown target '" + text +
            "'; expected cuda:<arch> (e.g. cuda:sm_90a), tpu or tpu:<generation> (e.g. tpu:v6e)";
    return std::nullopt;
  }
  if (std::find(std::begin(kCudaArchs), std::end(kCudaArchs), arch) == std::end(kCudaArchs)) {
    error = "unsupported CUDA architecture '" + arch + "'; pkc supports";
    for (const char *a : kCudaArchs)
      error += std::string(" ") + a;
    return std::nullopt;
  }
  return Target{Target::Kind::Cuda, arch};
}

std::vector<std::string> supportedTargets() {
  std::vector<std::string> out;
  for (const char *a : kCudaArchs)
    out.push_back(std::string("cuda:") + a);
  out.push_back("tpu");
  for (const TpuGeneration &g : kTpuGenerations)
    out.push_back(std::string("tpu:") + g.name);
  return out;
}

} // namespace pk::backends
