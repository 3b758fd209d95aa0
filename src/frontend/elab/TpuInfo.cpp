//===- TpuInfo.cpp - pltpu's hardware facts: get_tpu_info, ChipVersion ----===//
//
// TPU kernels size their blocks and choose dtypes from the chip they are
// compiled for (`pltpu.get_tpu_info().vmem_capacity_bytes`, megablox's
// `tpu_generation()` from `device_kind`). pkc answers them for the
// generation `--target=tpu:v6e` names, with the numbers JAX's
// jax/_src/pallas/mosaic/tpu_info.py gives for that chip (per TensorCore;
// v4 and v5p as the megacore devices JAX exposes, two cores each).
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"

namespace pk::elab {

namespace {

struct ChipFacts {
  const char *version;    ///< ChipVersion's value: "v6e"
  const char *deviceKind; ///< what jax.Device.device_kind reports
  int64_t generation, numCores, mxuColumnSize, numMxus, numAccumulators;
  int64_t vmemBytes, cmemBytes, smemBytes, hbmBytes, memBandwidth;
  int64_t bf16Ops, int8Ops, fp8Ops, int4Ops;
  bool lite;
  int64_t physicalCores; ///< TensorCores per chip
};

constexpr int64_t kMiB = 1024 * 1024;

// tpu_info.py's _get_tpu_info_impl, for the generations pkc targets.
const ChipFacts kChips[] = {
    {"v4", "TPU v4", 4, 2, 128, 4, 0, 16 * kMiB, 67'000'000, kMiB, 17'200'000'000, 615'000'000'000,
     137'500'000'000'000, 0, 0, 0, false, 2},
    {"v5e", "TPU v5 lite", 5, 1, 128, 4, 0, 128 * kMiB, 0, kMiB, 17'200'000'000, 820'000'000'000,
     197'000'000'000'000, 394'000'000'000'000, 0, 788'000'000'000'000, true, 1},
    {"v5p", "TPU v5", 5, 2, 128, 4, 0, 64 * kMiB, 0, kMiB, 51'500'000'000, 1'230'000'000'000,
     229'500'000'000'000, 459'000'000'000'000, 0, 920'000'000'000'000, false, 2},
    {"v6e", "TPU v6 lite", 6, 1, 256, 2, 0, 128 * kMiB, 0, kMiB, 34'400'000'000, 1'640'000'000'000,
     920'000'000'000'000, 1'840'000'000'000'000, 920'000'000'000'000, 3'680'000'000'000'000, true,
     1},
    {"7x", "TPU7x", 7, 1, 256, 2, 128, 64 * kMiB, 0, kMiB, 103'000'000'000, 3'700'000'000'000,
     1'155'000'000'000'000, 0, 2'300'000'000'000'000, 0, false, 2},
};

const ChipFacts *chipByDeviceKind(const std::string &kind) {
  for (const ChipFacts &chip : kChips)
    if (kind == chip.deviceKind)
      return &chip;
  return nullptr;
}

const ChipFacts *chipByVersion(const std::string &version) {
  for (const ChipFacts &chip : kChips)
    if (version == chip.version)
      return &chip;
  return nullptr;
}

/// TpuInfo.is_matmul_supported: which operand dtypes the MXU takes
/// without a cast.
bool matmulSupported(int64_t generation, DType lhs, DType rhs) {
  auto in = [](DType t, std::initializer_list<DType> set) {
    return std::find(set.begin(), set.end(), t) != set.end();
  };
  switch (generation) {
  case 4:
    return in(lhs, {DType::F32, DType::BF16}) && in(rhs, {DType::F32, DType::BF16, DType::I8});
  case 5:
  case 6:
    // The float8 and 4-bit types pkc has no dtype for cannot be asked.
    return (in(lhs, {DType::F32, DType::BF16}) && in(rhs, {DType::F32, DType::BF16})) ||
           (in(lhs, {DType::U8, DType::I8}) && in(rhs, {DType::U8, DType::I8}));
  case 7:
    return in(lhs, {DType::F32, DType::BF16}) && in(rhs, {DType::F32, DType::BF16});
  default:
    return false;
  }
}

Obj tpuInfo(const ChipFacts &chip, int64_t numCores) {
  auto info = std::make_shared<NamespaceObj>("pltpu.TpuInfo");
  auto &m = info->members;
  m["chip_version"] = makeStr(chip.version);
  m["generation"] = makeInt(chip.generation);
  m["num_cores"] = makeInt(numCores);
  m["num_lanes"] = makeInt(128);
  m["num_sublanes"] = makeInt(8);
  m["mxu_column_size"] = makeInt(chip.mxuColumnSize);
  m["num_mxus"] = makeInt(chip.numMxus);
  m["num_accumulators"] = makeInt(chip.numAccumulators);
  m["vmem_capacity_bytes"] = makeInt(chip.vmemBytes);
  m["cmem_capacity_bytes"] = makeInt(chip.cmemBytes);
  m["smem_capacity_bytes"] = makeInt(chip.smemBytes);
  m["hbm_capacity_bytes"] = makeInt(chip.hbmBytes);
  m["mem_bw_bytes_per_second"] = makeInt(chip.memBandwidth);
  m["bf16_ops_per_second"] = makeInt(chip.bf16Ops);
  m["int8_ops_per_second"] = makeInt(chip.int8Ops);
  m["fp8_ops_per_second"] = makeInt(chip.fp8Ops);
  m["int4_ops_per_second"] = makeInt(chip.int4Ops);
  m["is_lite"] = makeBool(chip.lite);
  m["is_megacore"] = makeBool(numCores > 1);
  m["is_split_chip"] = makeBool(numCores == 1 && chip.physicalCores > 1);
  int64_t generation = chip.generation;
  define(*info, "is_matmul_supported", [generation](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"lhs_dtype"}, {"rhs_dtype"}});
    return makeBool(matmulSupported(generation, el.toDType(a[0], a.range(0), "dtype"),
                                    el.toDType(a[1], a.range(1), "dtype")));
  });
  define(*info, "get_sublane_tiling", [generation](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}});
    int64_t bits = bitWidth(el.toDType(a[0], a.range(0), "dtype"));
    // XLA's large second-minor tiling: before TPU7x only for types
    // narrower than 16 bits.
    if (generation < 7 && (bits == 16 || bits == 32))
      return makeInt(8);
    return makeInt(8 * (32 / std::max<int64_t>(bits, 1)));
  });
  return info;
}

} // namespace

int64_t tpuCoresOfDevice(const std::string &deviceKind) {
  const ChipFacts *chip = chipByDeviceKind(deviceKind);
  return chip ? chip->numCores : 0;
}

void defineTpuInfo(NamespaceObj &tpu) {
  auto versions = std::make_shared<NamespaceObj>("pltpu.ChipVersion");
  for (const char *name : {"v2", "v3", "v4i", "v4", "v5e", "v5p", "v6e", "7", "7x", "8i"}) {
    std::string member = "TPU_";
    for (const char *c = name; *c; ++c)
      member += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    versions->members[member] = makeStr(name);
  }
  tpu.members["ChipVersion"] = versions;
  // What device the program is for, as tpu_info.py answers from
  // device_kind: a TPU of the generation --target=tpu:GEN names; known
  // not to be one on the interpreter and CUDA targets (JAX's ValueError);
  // and for plain --target=tpu an error, since the answer would choose
  // the generation for the program.
  auto unknownTpu = [](Elaborator &el, SourceRange r, const char *what) {
    el.fail(r, std::string(what) +
                   " needs the device kind, which pkc knows when compiling for CUDA targets, "
                   "for one TPU generation (--target=tpu:v5e, tpu:v6e, ...) or running on the "
                   "interpreter; plain --target=tpu is for every generation");
  };
  define(tpu, "is_tpu_device", [unknownTpu](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    if (el.deviceKind().empty())
      unknownTpu(el, args.range, "pltpu.is_tpu_device()");
    return makeBool(chipByDeviceKind(el.deviceKind()) != nullptr);
  });
  define(tpu, "get_tpu_info", [unknownTpu](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    if (el.deviceKind().empty())
      unknownTpu(el, args.range, "pltpu.get_tpu_info()");
    const ChipFacts *chip = chipByDeviceKind(el.deviceKind());
    if (!chip)
      el.raise(args.range, "ValueError", "Unsupported TPU device kind: " + el.deviceKind());
    return tpuInfo(*chip, chip->numCores);
  });
  define(tpu, "get_tpu_info_for_chip", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"chip_version"}, {"num_tensor_cores_per_logical_device"}});
    std::string version = el.toStr(a[0], a.range(0), "chip_version");
    const ChipFacts *chip = chipByVersion(version);
    if (!chip)
      el.fail(a.range(0), "pltpu.get_tpu_info_for_chip: pkc knows TPU v4, v5e, v5p, v6e and 7x, "
                          "not '" +
                              version + "'");
    int64_t cores = el.toInt(a[1], a.range(1), "num_tensor_cores_per_logical_device");
    bool megacore = std::string(chip->version) == "v4" || std::string(chip->version) == "v5p";
    if (cores != 1 && !(megacore && cores == 2))
      el.raise(a.range(1), "ValueError",
               "Lite chips and dual-core chips that do not support Megacore must have "
               "num_tensor_cores_per_logical_device=1, but got " +
                   std::to_string(cores) + ".");
    return tpuInfo(*chip, cores);
  });
}

} // namespace pk::elab
