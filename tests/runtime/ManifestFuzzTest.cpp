//===- ManifestFuzzTest.cpp - Malformed manifests never crash -------------===//
//
// Mutates the test manifest many times, byte by byte and node by node,
// and loads each result (without a device, so artifact selection and
// hashing run too); what loads is inspected and given random arguments to
// validate. Every call must return a status in range with a message on
// failure: no crash, no hang, no exception escaping. About two seconds;
// PK_FUZZ_SECONDS and PK_FUZZ_SEED change the budget and the seed. Run it
// under -fsanitize=address,undefined to catch what does not crash.
//
//===----------------------------------------------------------------------===//
#include "TestManifest.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

using namespace pk::test;
using nlohmann::json;

namespace {

class Fuzzer {
public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  size_t below(size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng_) : 0; }
  bool chance(unsigned percent) { return below(100) < percent; }

  /// A value of any JSON type, biased to what the schema uses.
  json value(int depth = 0) {
    static const char *strings[] = {
        "N",      "M",           "x",          "out0",       "add",      "ceildiv",
        "mul",    "mod",         "float32",    "bool",       "bfloat16", "input",
        "output", "cuda:sm_90a", "cuda:sm_80", "cuda:sm_86", "cubin",    "ptx",
        "",       "\xc3\xa9",    "launch",     "copy"};
    static const int64_t integers[] = {0,         1,         2,          3,         4,  16,
                                       256,       1024,      65536,      98304,     -1, -1024,
                                       INT64_MAX, INT64_MIN, 4294967296, 2147483648};
    switch (below(depth > 3 ? 5 : 8)) {
    case 0:
      return integers[below(std::size(integers))];
    case 1:
      return strings[below(std::size(strings))];
    case 2:
      return nullptr;
    case 3:
      return chance(50);
    case 4:
      return chance(50) ? json(1.5) : json(UINT64_MAX);
    case 5: {
      static const char *ops[] = {"add", "sub", "mul", "floordiv", "ceildiv", "mod", "max", "min"};
      return json::array({ops[below(8)], value(depth + 1), value(depth + 1)});
    }
    case 6: {
      json a = json::array();
      for (size_t i = below(4); i > 0; --i)
        a.push_back(value(depth + 1));
      return a;
    }
    default: {
      static const char *keys[] = {"param", "temp", "symbol", "launch", "copy", "name", "dim"};
      json o = json::object();
      for (size_t i = below(3); i > 0; --i)
        o[keys[below(std::size(keys))]] = value(depth + 1);
      return o;
    }
    }
  }

  /// Replaces, removes or duplicates one node of `j`.
  void mutateNode(json &j) {
    std::vector<json::json_pointer> nodes;
    collect(j, json::json_pointer(), nodes);
    json::json_pointer at = nodes[below(nodes.size())];
    if (at.empty()) {
      j = value();
      return;
    }
    json::json_pointer parent = at.parent_pointer();
    json &container = j[parent];
    std::string last = at.back();
    switch (below(4)) {
    case 0:
      if (container.is_object())
        container.erase(last);
      else
        container.erase(container.begin() + std::stol(last));
      break;
    case 1:
      if (container.is_array())
        container.push_back(j[at]);
      else
        j[at] = value();
      break;
    case 2:
      j[at] = similar(j[at]);
      break;
    default:
      j[at] = value();
    }
  }

  /// A value of the same type as `v` (for leaves), so that mutations
  /// often keep the manifest well-formed and reach the deeper checks.
  json similar(const json &v) {
    if (v.is_number_integer()) {
      static const int64_t deltas[] = {-1, 1, -2, 2, 100, -100, 1 << 20};
      return v.get<int64_t>() + deltas[below(std::size(deltas))];
    }
    if (v.is_string()) {
      json candidate = value();
      return candidate.is_string() ? candidate : json("N");
    }
    return value();
  }

  /// Flips, inserts, deletes, truncates or repeats bytes of `text`.
  void mutateBytes(std::string &text) {
    static const char alphabet[] = "{}[]\",:0123456789-eE.tfnul \\\x00\xff";
    size_t pos = below(text.size() + 1);
    switch (below(5)) {
    case 0:
      if (!text.empty())
        text[below(text.size())] ^= char(1 << below(8));
      break;
    case 1:
      text.insert(pos, 1, alphabet[below(sizeof alphabet - 1)]);
      break;
    case 2:
      text.erase(pos, below(16));
      break;
    case 3:
      text.resize(pos);
      break;
    default:
      text.insert(pos, text.substr(below(text.size() + 1), below(64)));
    }
  }

  std::mt19937_64 &rng() { return rng_; }

private:
  static void collect(const json &j, const json::json_pointer &at,
                      std::vector<json::json_pointer> &out) {
    out.push_back(at);
    if (j.is_object())
      for (auto it = j.begin(); it != j.end(); ++it)
        collect(it.value(), at / it.key(), out);
    else if (j.is_array())
      for (size_t i = 0; i < j.size(); ++i)
        collect(j[i], at / i, out);
  }
  std::mt19937_64 rng_;
};

struct Tally {
  size_t loads = 0, loaded = 0, validated = 0;
};

bool statusInRange(pk_status s) { return s >= PK_OK && s <= PK_ERROR_INTERNAL; }

/// Loads `text` and, if it loads, exercises every export.
void exercise(const std::string &text, Fuzzer &f, Tally &tally) {
  static const std::vector<pk_artifact_data> artifacts = testArtifacts();
  static const int ccs[] = {90, 86, 80, 0, 100};
  pk_load_options o = noDevice(ccs[f.below(5)], artifacts, f.chance(50) ? 0 : -1);
  pk_module *m = nullptr;
  pk_status s = pk_module_load_memory(text.data(), text.size(), &o, &m);
  ++tally.loads;
  ASSERT_TRUE(statusInRange(s)) << s;
  if (s != PK_OK) {
    ASSERT_EQ(m, nullptr);
    ASSERT_STRNE(pk_last_error(), "") << pk_status_name(s);
    ASSERT_NE(s, PK_ERROR_INTERNAL) << pk_last_error();
    return;
  }
  ++tally.loaded;
  static const DLDataType dtypes[] = {kF32, kF64, kI32, kBool, kBF16, {kDLFloat, 32, 2}};
  static const int64_t sizes[] = {0, 1, 2, 3, 7, 256, 1000, -1, INT64_MAX, 1LL << 40};
  for (size_t e = 0; e < pk_module_num_exports(m); ++e) {
    pk_kernel *k = nullptr;
    if (pk_module_get(m, pk_module_export_name(m, e), &k) != PK_OK)
      continue;
    size_t n = pk_kernel_num_params(k);
    std::vector<int64_t> symbols(pk_kernel_num_symbols(k));
    for (int64_t &v : symbols)
      v = int64_t(f.below(5));
    std::vector<std::vector<int64_t>> shapes(n), strides(n);
    std::vector<DLTensor> args(n);
    for (size_t i = 0; i < n; ++i) {
      pk_param_info info{};
      ASSERT_EQ(pk_kernel_param(k, i, &info), PK_OK);
      int ndim = f.chance(90) ? info.ndim : int(f.below(4));
      // Mostly the shape the export expects for some symbol values, so
      // that validation gets past the shapes; sometimes anything.
      shapes[i].assign(size_t(ndim), 3);
      if (!(ndim == info.ndim && f.chance(70) &&
            pk_kernel_param_shape(k, i, symbols.data(), symbols.size(), shapes[i].data()) == PK_OK))
        for (int64_t &d : shapes[i])
          d = f.chance(50) ? 3 : sizes[f.below(std::size(sizes))];
      bool withStrides = f.chance(20);
      for (int d = 0; d < ndim && withStrides; ++d)
        strides[i].push_back(sizes[f.below(std::size(sizes))]);
      args[i] = tensor(0x10000000 * (i + 1) + (f.chance(10) ? 4 : 0), shapes[i],
                       f.chance(90) ? info.dtype : dtypes[f.below(std::size(dtypes))],
                       f.chance(95) ? 0 : 1, withStrides ? strides[i].data() : nullptr);
    }
    size_t count = f.chance(95) ? n : f.below(n + 2);
    s = f.chance(50) ? pk_validate(k, args.data(), count)
                     : pk_launch(k, args.data(), count, nullptr);
    ASSERT_TRUE(statusInRange(s));
    ASSERT_NE(s, PK_ERROR_INTERNAL) << pk_last_error();
    if (s == PK_OK || s == PK_ERROR_NO_DEVICE)
      ++tally.validated;
    std::vector<int64_t> values(pk_kernel_num_symbols(k));
    for (int64_t &v : values)
      v = sizes[f.below(std::size(sizes))];
    std::vector<int64_t> shape(64);
    pk_param_info info{};
    if (n && pk_kernel_param(k, 0, &info) == PK_OK && info.ndim <= 64) {
      s = pk_kernel_param_shape(k, 0, values.data(), values.size(), shape.data());
      ASSERT_TRUE(statusInRange(s));
      ASSERT_NE(s, PK_ERROR_INTERNAL) << pk_last_error();
    }
  }
  pk_module_destroy(m);
}

TEST(ManifestFuzz, MalformedManifestsNeverCrash) {
  uint64_t seed = std::getenv("PK_FUZZ_SEED")
                      ? std::strtoull(std::getenv("PK_FUZZ_SEED"), nullptr, 10)
                      : 20240611;
  double seconds = std::getenv("PK_FUZZ_SECONDS") ? std::atof(std::getenv("PK_FUZZ_SECONDS")) : 2.0;
  std::printf("seed %llu, %.1f seconds (PK_FUZZ_SEED, PK_FUZZ_SECONDS)\n", (unsigned long long)seed,
              seconds);
  Fuzzer f(seed);
  Tally structural, bytes;
  const json base = testManifest();
  const std::string baseText = base.dump(1);
  auto start = std::chrono::steady_clock::now();
  size_t iteration = 0;
  // At least a few hundred iterations, so that a slow (sanitized, loaded)
  // machine still explores.
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (iteration < 500 || elapsed() < seconds) {
    ++iteration;
    if (iteration % 2) {
      json j = base;
      for (size_t i = f.chance(60) ? 1 : f.below(3) + 2; i > 0; --i)
        f.mutateNode(j);
      exercise(j.dump(), f, structural);
    } else {
      std::string text = baseText;
      for (size_t i = f.below(4) + 1; i > 0; --i)
        f.mutateBytes(text);
      exercise(text, f, bytes);
    }
    if (HasFatalFailure()) {
      ADD_FAILURE() << "at iteration " << iteration << " with seed " << seed;
      return;
    }
  }
  std::printf(
      "%zu structural mutations (%zu loaded, %zu argument sets accepted), %zu byte mutations (%zu "
      "loaded)\n",
      structural.loads, structural.loaded, structural.validated, bytes.loads, bytes.loaded);
  // The mutations must reach past the first checks for the test to mean
  // anything: some mutated manifests still load and take arguments.
  EXPECT_GT(structural.loaded, structural.loads / 20);
  EXPECT_GT(structural.validated, 0u);
  EXPECT_GT(bytes.loads, 100u);
}

TEST(ManifestFuzz, PathologicalInputs) {
  std::vector<std::string> inputs = {
      std::string(100000, '['),
      std::string(100000, '{'),
      "{\"format\": \"pkc-manifest\", \"version\": 1, \"exports\": " + std::string(50000, '[') +
          std::string(50000, ']') + "}",
      "{\"format\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
      "{\"format\": \"pkc-manifest\", \"version\": 1, \"exports\": [{\"name\": " +
          std::string(100000, '[') + std::string(100000, ']') + "}]}",
      std::string("{\"format\": \"pkc-manifest\"\0, \"version\": 1}", 40),
      "{\"format\": \"pkc-manifest\", \"version\": 1e400}",
      "{\"format\": \"pkc-manifest\", \"version\": 99999999999999999999999}",
      "{\"format\": \"\xff\xfe\"}",
      "\xef\xbb\xbf{}",
      "",
      "null",
  };
  std::vector<pk_artifact_data> artifacts = testArtifacts();
  pk_load_options o = noDevice(90, artifacts);
  for (const std::string &text : inputs) {
    pk_module *m = nullptr;
    pk_status s = pk_module_load_memory(text.data(), text.size(), &o, &m);
    EXPECT_NE(s, PK_OK);
    EXPECT_NE(s, PK_ERROR_INTERNAL) << pk_last_error();
    EXPECT_STRNE(pk_last_error(), "");
  }
}

} // namespace
