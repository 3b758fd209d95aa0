//===- ManifestReaderTest.cpp - Reading and checking manifests ------------===//
//
// The hand-written test manifest reads into the expected structure, and
// each way of breaking the schema is refused with its status and a
// message that names the place in the JSON.
//
//===----------------------------------------------------------------------===//
#include "TestManifest.h"

#include "runtime/Error.h"
#include "runtime/Manifest.h"

#include <gtest/gtest.h>

#include <functional>

using namespace pk::rt;
using nlohmann::json;

namespace {

TEST(ManifestReader, ReadsTheTestManifest) {
  Manifest m = readManifest(pk::test::testManifest().dump(), "test.json");
  ASSERT_EQ(m.exports.size(), 4u);
  const Export &matmul = m.exports[1];
  EXPECT_EQ(matmul.name, "matmul");
  ASSERT_EQ(matmul.symbols.size(), 2u);
  EXPECT_EQ(matmul.symbols[1].name, "N");
  EXPECT_EQ(matmul.symbols[1].param, 1u);
  EXPECT_EQ(matmul.symbols[1].dim, 1u);
  ASSERT_EQ(matmul.params.size(), 3u);
  EXPECT_EQ(matmul.numInputs, 2u);
  EXPECT_FALSE(matmul.params[0].output);
  EXPECT_TRUE(matmul.params[2].output);
  EXPECT_STREQ(matmul.params[0].dtype->name, "float32");
  ASSERT_EQ(matmul.params[0].shape.size(), 2u);
  EXPECT_TRUE(matmul.params[0].shape[1].isConstant());
  EXPECT_EQ(matmul.params[0].shape[1].constantValue(), 256);
  EXPECT_EQ(m.exports[3].params[1].dtype->dl.code, kDLBfloat);
  EXPECT_EQ(m.exports[3].params[0].dtype->dl.code, 6); // kDLBool
  EXPECT_EQ(m.exports[3].params[0].dtype->bytes, 1u);

  ASSERT_EQ(m.artifacts.size(), 3u);
  const Artifact &a = m.artifacts[0];
  EXPECT_EQ(a.target, "cuda:sm_90a");
  EXPECT_EQ(a.size, 26u);
  ASSERT_TRUE(a.cuda);
  ASSERT_EQ(a.programs.size(), 4u);
  const Program *p = a.program(1);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->temporaries.size(), 1u);
  ASSERT_EQ(p->steps.size(), 2u);
  const auto &launch = std::get<LaunchStep>(p->steps[0]);
  EXPECT_EQ(launch.kernel, "matmul_kernel");
  EXPECT_EQ(launch.cluster[0], 2u);
  EXPECT_EQ(launch.dynamicSharedMemory.constantValue(), 98304);
  ASSERT_EQ(launch.args.size(), 5u);
  EXPECT_EQ(launch.args[2].kind, KernelArg::Kind::Temp);
  EXPECT_EQ(launch.args[4].kind, KernelArg::Kind::Symbol);
  EXPECT_EQ(launch.args[4].index, 1u);
  const auto &copy = std::get<CopyStep>(p->steps[1]);
  EXPECT_EQ(copy.from.kind, BufferRef::Kind::Temp);
  EXPECT_EQ(copy.to.index, 2u);
  // The update program's launch has no cluster: it defaults to 1, 1, 1.
  EXPECT_EQ(std::get<LaunchStep>(a.program(2)->steps[1]).cluster[0], 1u);
  // The TPU artifact is listed, its programs unread.
  EXPECT_FALSE(m.artifacts[2].cuda);
  EXPECT_TRUE(m.artifacts[2].programs.empty());
}

TEST(ManifestReader, IgnoresUnknownFields) {
  json j = pk::test::testManifest();
  j["future"] = {1, 2, 3};
  j["exports"][0]["future"] = "x";
  j["exports"][0]["params"][0]["layout"] = "row-major";
  j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["occupancy"] = 4;
  j["artifacts"][0]["programs"][0]["future"] = json::object();
  EXPECT_NO_THROW(readManifest(j.dump(), "test.json"));
}

TEST(ManifestReader, ReadsBufferViewOffsets) {
  // A view: a buffer from a byte on (a slice pkc passes without a kernel).
  json j = pk::test::testManifest();
  j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][0] = {{"param", 0},
                                                                       {"offset", 4096}};
  pk::rt::Manifest m = readManifest(j.dump(), "test.json");
  const auto &launch = std::get<LaunchStep>(m.artifacts[0].program(0)->steps[0]);
  EXPECT_EQ(launch.args[0].kind, KernelArg::Kind::Param);
  EXPECT_EQ(launch.args[0].index, 0u);
  EXPECT_EQ(launch.args[0].offset, 4096u);
  EXPECT_EQ(launch.args[1].offset, 0u);
}

struct BadCase {
  const char *name;
  std::function<void(json &)> mutate;
  pk_status status;
  const char *message;
};

std::string failure(const std::string &text, pk_status &status) {
  try {
    readManifest(text, "test.json");
  } catch (const Error &e) {
    status = e.status();
    return e.message();
  }
  status = PK_OK;
  return "";
}

TEST(ManifestReader, RefusesWhatBreaksTheSchema) {
  const BadCase cases[] = {
      {"not an object", [](json &j) { j = json::array(); }, PK_ERROR_MANIFEST,
       "test.json: expected a JSON object, got array"},
      {"no format", [](json &j) { j.erase("format"); }, PK_ERROR_MANIFEST_VERSION,
       "test.json: not a pkc launch manifest: \"format\" is missing, expected \"pkc-manifest\""},
      {"other format", [](json &j) { j["format"] = "onnx"; }, PK_ERROR_MANIFEST_VERSION,
       "test.json: not a pkc launch manifest: \"format\" is \"onnx\", expected \"pkc-manifest\""},
      {"newer version", [](json &j) { j["version"] = 3; }, PK_ERROR_MANIFEST_VERSION,
       "test.json: manifest version 3 is not one this runtime reads (versions 1 to 2); update the "
       "pkc runtime, or compile the kernels with a matching pkc"},
      {"older version", [](json &j) { j["version"] = 0; }, PK_ERROR_MANIFEST_VERSION,
       "test.json: manifest version 0 is not one this runtime reads (versions 1 to 2); recompile "
       "the kernels with a current pkc"},
      {"version as text", [](json &j) { j["version"] = "1"; }, PK_ERROR_MANIFEST,
       "test.json: version: expected an integer, got string"},
      {"no exports", [](json &j) { j.erase("exports"); }, PK_ERROR_MANIFEST,
       "test.json: missing \"exports\""},
      {"exports not an array", [](json &j) { j["exports"] = 3; }, PK_ERROR_MANIFEST,
       "test.json: exports: expected an array, got number"},
      {"unknown dtype", [](json &j) { j["exports"][0]["params"][1]["dtype"] = "float8"; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[1].dtype: unknown dtype \"float8\"; expected one of bool, "
       "int8, "
       "int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64"},
      {"unknown role", [](json &j) { j["exports"][0]["params"][2]["role"] = "inout"; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[2].role: expected \"input\" or \"output\", got \"inout\""},
      {"input after output",
       [](json &j) { std::swap(j["exports"][0]["params"][1], j["exports"][0]["params"][2]); },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[2]: input \"y\" follows an output; params list inputs, then "
       "outputs"},
      {"empty name", [](json &j) { j["exports"][0]["name"] = ""; }, PK_ERROR_MANIFEST,
       "test.json: exports[0].name: expected a non-empty string"},
      {"unknown symbol", [](json &j) { j["exports"][0]["params"][1]["shape"][0] = "K"; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[1].shape[0]: unknown symbol \"K\" (the export's symbols: N)"},
      {"unknown operation", [](json &j) { j["exports"][3]["params"][1]["shape"][0][0] = "pow"; },
       PK_ERROR_MANIFEST,
       "test.json: exports[3].params[1].shape[0]: unknown operation \"pow\"; expected add, sub, "
       "mul, "
       "floordiv, ceildiv, mod, max or min"},
      {"float size", [](json &j) { j["exports"][1]["params"][0]["shape"][1] = 256.0; },
       PK_ERROR_MANIFEST,
       "test.json: exports[1].params[0].shape[1]: a size expression is an integer, a symbol name "
       "or "
       "[op, a, b], got number"},
      {"alignment not a power of two",
       [](json &j) { j["exports"][0]["params"][0]["alignment"] = 12; }, PK_ERROR_MANIFEST,
       "test.json: exports[0].params[0].alignment: expected a power of two, got 12"},
      {"negative alignment", [](json &j) { j["exports"][0]["params"][0]["alignment"] = -16; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[0].alignment: expected a non-negative integer, got -16"},
      {"no alignment", [](json &j) { j["exports"][0]["params"][0].erase("alignment"); },
       PK_ERROR_MANIFEST, "test.json: exports[0].params[0]: missing \"alignment\""},
      {"symbol bound to a missing param",
       [](json &j) { j["exports"][0]["symbols"][0]["param"] = 7; }, PK_ERROR_MANIFEST,
       "test.json: exports[0].symbols[0].param: param 7 does not exist (the export has 3)"},
      {"symbol bound to a missing dim", [](json &j) { j["exports"][0]["symbols"][0]["dim"] = 3; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].symbols[0].dim: \"x\" has 1 dimension(s), so there is no dimension "
       "3"},
      {"symbol bound to a constant dim", [](json &j) { j["exports"][1]["symbols"][0]["dim"] = 1; },
       PK_ERROR_MANIFEST,
       "test.json: exports[1].symbols[0]: symbol \"M\" is bound to dimension 1 of \"x\", whose "
       "size is "
       "256, not the symbol itself"},
      {"symbol bound to another symbol's dim",
       [](json &j) { j["exports"][1]["symbols"][1]["dim"] = 0; }, PK_ERROR_MANIFEST,
       "test.json: exports[1].symbols[1]: symbol \"N\" is bound to dimension 0 of \"y\", whose "
       "size is "
       "256, not the symbol itself"},
      {"duplicate symbol", [](json &j) { j["exports"][1]["symbols"][1]["name"] = "M"; },
       PK_ERROR_MANIFEST, "test.json: exports[1].symbols[1].name: symbol \"M\" is listed twice"},
      {"duplicate export", [](json &j) { j["exports"][1]["name"] = "add"; }, PK_ERROR_MANIFEST,
       "test.json: exports[1].name: a second export named \"add\""},
      {"short sha256", [](json &j) { j["artifacts"][0]["sha256"] = "abc"; }, PK_ERROR_MANIFEST,
       "test.json: artifacts[0].sha256: expected 64 lowercase hex digits, got \"abc\""},
      {"uppercase sha256", [](json &j) { j["artifacts"][0]["sha256"] = std::string(64, 'A'); },
       PK_ERROR_MANIFEST, "test.json: artifacts[0].sha256: expected 64 lowercase hex digits"},
      {"negative size", [](json &j) { j["artifacts"][0]["size"] = -1; }, PK_ERROR_MANIFEST,
       "test.json: artifacts[0].size: expected a non-negative integer, got -1"},
      {"absolute file", [](json &j) { j["artifacts"][0]["file"] = "/tmp/x.cubin"; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].file: expected a path relative to the manifest, got "
       "\"/tmp/x.cubin\""},
      {"unknown CUDA target", [](json &j) { j["artifacts"][0]["target"] = "cuda:gfx90a"; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].target: unknown CUDA target \"cuda:gfx90a\"; expected cuda:sm_XY "
       "with an "
       "optional a or f suffix"},
      {"program of an unknown export",
       [](json &j) { j["artifacts"][0]["programs"][0]["export"] = "sub"; }, PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].export: no export named \"sub\" in \"exports\""},
      {"two programs for one export",
       [](json &j) { j["artifacts"][0]["programs"][1] = j["artifacts"][0]["programs"][0]; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[1]: a second program for export \"add\""},
      {"step with launch and copy",
       [](json &j) { j["artifacts"][0]["programs"][0]["steps"][0]["copy"] = json::object(); },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0]: a step is {\"launch\": {...}} or {\"copy\": "
       "{...}}, "
       "got an object with both"},
      {"step with neither",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0] = {{"wait", 1}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0]: a step is {\"launch\": {...}} or {\"copy\": "
       "{...}}, "
       "got an object with neither"},
      {"two grid dimensions",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["grid"] = {1, 1};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.grid: expected 3 dimensions, got 2"},
      {"block with unknown symbol",
       [](json &j) { j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["block"][0] = "B"; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.block[0]: unknown symbol \"B\" (the "
       "export's "
       "symbols: N)"},
      {"param arg out of range",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][2] = {{"param", 3}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[2].param: 3 is out of range (at "
       "most 2)"},
      {"temp arg without temporaries",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][2] = {{"temp", 0}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[2].temp: the program has no "
       "temporaries"},
      {"unknown symbol arg",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][3] = {{"symbol", "M"}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[3].symbol: unknown symbol \"M\""},
      {"arg with two keys",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][0] = {{"param", 0},
                                                                              {"temp", 0}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[0]: expected {\"param\": i}, "
       "{\"temp\": j} (either with an optional \"offset\"), {\"symbol\": \"N\"} or "
       "{\"tensor_map\": {...}}, got {\"param\":0,\"temp\":0}"},
      {"negative offset",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][0] = {{"param", 0},
                                                                              {"offset", -16}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[0].offset: expected a "
       "non-negative integer, got -16"},
      {"offset without a buffer",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"]["args"][0] = {{"offset", 16}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch.args[0]: expected {\"param\": i}, "},
      {"copy into an input",
       [](json &j) {
         j["artifacts"][0]["programs"][2]["steps"][0]["copy"]["to"] = {{"param", 1}};
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[2].steps[0].copy.to: a copy writes to input \"x\"; it may "
       "only "
       "write an output or a temporary"},
      {"copy without bytes",
       [](json &j) { j["artifacts"][0]["programs"][2]["steps"][0]["copy"].erase("bytes"); },
       PK_ERROR_MANIFEST, "test.json: artifacts[0].programs[2].steps[0].copy: missing \"bytes\""},
      {"zero cluster",
       [](json &j) { j["artifacts"][0]["programs"][1]["steps"][0]["launch"]["cluster"][0] = 0; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[1].steps[0].launch.cluster[0]: cluster dimensions are at "
       "least 1"},
      {"no shared memory",
       [](json &j) {
         j["artifacts"][0]["programs"][0]["steps"][0]["launch"].erase("shared_memory");
       },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[0].steps[0].launch: missing \"shared_memory\""},
      {"huge size", [](json &j) { j["exports"][0]["params"][0]["shape"][0] = UINT64_MAX; },
       PK_ERROR_MANIFEST,
       "test.json: exports[0].params[0].shape[0]: size 18446744073709551615 does not fit in 64-bit "
       "signed "
       "integer"},
      {"temporary with unknown dtype",
       [](json &j) { j["artifacts"][0]["programs"][1]["temporaries"][0]["dtype"] = "complex64"; },
       PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[1].temporaries[0].dtype: unknown dtype \"complex64\""},
  };
  for (const BadCase &c : cases) {
    json j = pk::test::testManifest();
    c.mutate(j);
    pk_status status;
    std::string message = failure(j.dump(), status);
    EXPECT_EQ(status, c.status) << c.name << ": " << message;
    EXPECT_EQ(message.substr(0, std::string(c.message).size()), c.message) << c.name;
  }
}

/// The test manifest at version 2, with matmul's first argument a tensor
/// map over x (M x 256 float32): 64 x 32 boxes under the 128B swizzle.
json tensorMapManifest() {
  json j = pk::test::testManifest();
  j["version"] = 2;
  j["artifacts"][0]["programs"][1]["steps"][0]["launch"]["args"][0] = {
      {"tensor_map",
       {{"buffer", {{"param", 0}}},
        {"dtype", "float32"},
        {"shape", {"M", 256}},
        {"strides", {1024}},
        {"box", {64, 32}},
        {"element_strides", {1, 1}},
        {"swizzle", "128B"},
        {"interleave", "none"},
        {"l2_promotion", "128B"},
        {"oob_fill", "nan"}}}};
  return j;
}

json &tensorMapArg(json &j) {
  return j["artifacts"][0]["programs"][1]["steps"][0]["launch"]["args"][0]["tensor_map"];
}

TEST(ManifestReader, ReadsTensorMaps) {
  pk::rt::Manifest m = pk::rt::readManifest(tensorMapManifest().dump(), "test.json");
  const auto &launch = std::get<pk::rt::LaunchStep>(m.artifacts[0].programs[1].steps[0]);
  ASSERT_EQ(launch.args[0].kind, pk::rt::KernelArg::Kind::TensorMap);
  ASSERT_EQ(launch.tensorMaps.size(), 1u);
  const pk::rt::TensorMapArg &t = launch.tensorMaps[launch.args[0].index];
  EXPECT_EQ(t.buffer.kind, pk::rt::BufferRef::Kind::Param);
  EXPECT_EQ(t.buffer.index, 0u);
  EXPECT_STREQ(t.dtype->name, "float32");
  ASSERT_EQ(t.shape.size(), 2u);
  ASSERT_EQ(t.strides.size(), 1u);
  // CUDA's order: innermost first.
  EXPECT_EQ(t.fixed.rank, 2u);
  EXPECT_EQ(t.fixed.box[0], 32u);
  EXPECT_EQ(t.fixed.box[1], 64u);
  EXPECT_EQ(t.fixed.dataType, 7); // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  EXPECT_EQ(t.fixed.elementBytes, 4u);
  EXPECT_EQ(t.fixed.swizzle, pk::rt::TmaSwizzle::B128);
  EXPECT_EQ(t.fixed.l2Promotion, pk::rt::TmaL2Promotion::B128);
  EXPECT_EQ(t.fixed.oobFill, pk::rt::TmaOobFill::Nan);
  EXPECT_EQ(t.fixed.boxBytes(), 64u * 32 * 4);
  // The modes are optional: none, no promotion, zero fill, unit strides.
  json j = tensorMapManifest();
  for (const char *key : {"element_strides", "swizzle", "interleave", "l2_promotion", "oob_fill"})
    tensorMapArg(j).erase(key);
  m = pk::rt::readManifest(j.dump(), "test.json");
  const auto &plain =
      std::get<pk::rt::LaunchStep>(m.artifacts[0].programs[1].steps[0]).tensorMaps[0];
  EXPECT_EQ(plain.fixed.swizzle, pk::rt::TmaSwizzle::None);
  EXPECT_EQ(plain.fixed.oobFill, pk::rt::TmaOobFill::Zero);
  EXPECT_EQ(plain.fixed.elementStrides[1], 1u);
  EXPECT_FALSE(plain.optional);
  // A map the kernel reads only for sizes it can be encoded for.
  j = tensorMapManifest();
  tensorMapArg(j)["optional"] = true;
  m = pk::rt::readManifest(j.dump(), "test.json");
  EXPECT_TRUE(
      std::get<pk::rt::LaunchStep>(m.artifacts[0].programs[1].steps[0]).tensorMaps[0].optional);
}

TEST(ManifestReader, RefusesBadTensorMaps) {
  const std::string at = "test.json: artifacts[0].programs[1].steps[0].launch.args[0].tensor_map";
  const BadCase cases[] = {
      {"in a version-1 manifest", [](json &j) { j["version"] = 1; }, PK_ERROR_MANIFEST,
       "test.json: artifacts[0].programs[1].steps[0].launch.args[0].tensor_map: tensor_map "
       "arguments need manifest version 2, and this manifest says version 1"},
      {"box too large", [](json &j) { tensorMapArg(j)["box"][0] = 300; }, PK_ERROR_MANIFEST,
       "box dimension 0 is 300; a TMA box has 1 to 256 elements per dimension"},
      {"box rank", [](json &j) { tensorMapArg(j)["box"] = {64}; }, PK_ERROR_MANIFEST,
       "expected 2 box dimensions, got 1"},
      {"inner box not 16 bytes",
       [](json &j) {
         tensorMapArg(j)["box"][1] = 6;
         tensorMapArg(j)["swizzle"] = "none";
       },
       PK_ERROR_MANIFEST,
       "the box's innermost dimension is 24 bytes; TMA needs a multiple of 16 (the last box "
       "dimension times the element size)"},
      {"inner box wider than the swizzle", [](json &j) { tensorMapArg(j)["swizzle"] = "64B"; },
       PK_ERROR_MANIFEST,
       "the box's innermost dimension is 128 bytes, more than the 64B swizzle's span; use a "
       "narrower "
       "box or a wider swizzle"},
      {"element stride", [](json &j) { tensorMapArg(j)["element_strides"][0] = 9; },
       PK_ERROR_MANIFEST, "element stride 0 is 9; element strides are 1 to 8"},
      {"strides count", [](json &j) { tensorMapArg(j)["strides"] = json::array(); },
       PK_ERROR_MANIFEST, "expected 1 byte strides (every dimension but the innermost), got 0"},
      {"dtype of another buffer", [](json &j) { tensorMapArg(j)["dtype"] = "int32"; },
       PK_ERROR_MANIFEST, "\"int32\" differs from the buffer's dtype \"float32\""},
      {"unknown swizzle", [](json &j) { tensorMapArg(j)["swizzle"] = "256B"; }, PK_ERROR_MANIFEST,
       "unknown value \"256B\"; expected one of \"none\", \"32B\", \"64B\", \"128B\""},
      {"NaN fill of integers",
       [](json &j) {
         j["exports"][1]["params"][0]["dtype"] = "int32";
         tensorMapArg(j)["dtype"] = "int32";
       },
       PK_ERROR_MANIFEST, "out-of-bounds NaN fill needs a floating-point dtype"},
      {"six dimensions", [](json &j) { tensorMapArg(j)["shape"] = {1, 1, 1, 1, 1, 1}; },
       PK_ERROR_MANIFEST, "a tensor map has 1 to 5 dimensions, got 6"},
      {"optional not a boolean", [](json &j) { tensorMapArg(j)["optional"] = 1; },
       PK_ERROR_MANIFEST, "expected true or false"},
  };
  for (const BadCase &c : cases) {
    json j = tensorMapManifest();
    c.mutate(j);
    pk_status status;
    std::string message = failure(j.dump(), status);
    EXPECT_EQ(status, c.status) << c.name << ": " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.name << ": " << message;
    EXPECT_EQ(message.rfind(c.name == std::string("in a version-1 manifest") ? "test.json" : at, 0),
              0u)
        << c.name << ": " << message;
  }
}

TEST(ManifestReader, RefusesMalformedJson) {
  pk_status status;
  std::string message = failure("{\"format\": \"pkc-manifest\",", status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST);
  EXPECT_EQ(message.rfind("test.json: malformed JSON: parse error at line 1, column 27", 0), 0u)
      << message;
  message = failure("", status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST);
  EXPECT_NE(message.find("malformed JSON"), std::string::npos);
  // Deep nesting is refused without exhausting the stack.
  message = failure(std::string(200000, '[') + std::string(200000, ']'), status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST);
  message = failure(std::string(200000, '['), status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST);
  // A deep value where a message quotes it (this overflowed the stack
  // while printing the value for the message).
  message = failure("{\"format\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
                    status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST);
  EXPECT_EQ(message, "test.json: malformed JSON: nested more than 64 levels deep");
  // 64 levels are fine as JSON (and then wrong as a format).
  message = failure("{\"format\": " + std::string(63, '[') + std::string(63, ']') + "}", status);
  EXPECT_EQ(status, PK_ERROR_MANIFEST_VERSION);
  EXPECT_NE(message.find("format"), std::string::npos) << message;
  EXPECT_EQ(message.find("nested more than"), std::string::npos) << message;
}

TEST(ManifestReader, KeepsFormatsItDoesNotLoadOutOfSelection) {
  json j = pk::test::testManifest();
  j["artifacts"][0]["format"] = "fatbin";
  j["artifacts"][0]["programs"] = "not read";
  Manifest m = readManifest(j.dump(), "test.json");
  EXPECT_FALSE(m.artifacts[0].cuda);
  EXPECT_TRUE(m.artifacts[1].cuda);
}

} // namespace
