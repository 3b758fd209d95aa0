//===- Manifest.cpp - Writing the launch manifest -------------------------===//
#include "backends/Manifest.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/SHA256.h"

#include <nlohmann/json.hpp>

namespace pk::backends {

using json = nlohmann::ordered_json;

SizeExpr SizeExpr::constant(int64_t value, mlir::MLIRContext *ctx) {
  return {mlir::getAffineConstantExpr(value, ctx)};
}

namespace {

json expressionJson(mlir::AffineExpr expr, const std::vector<std::string> &symbols) {
  if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(expr))
    return c.getValue();
  if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr))
    return symbols.at(s.getPosition());
  auto binary = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
  json lhs = expressionJson(binary.getLHS(), symbols);
  mlir::AffineExpr rhsExpr = binary.getRHS();
  const char *op = nullptr;
  switch (expr.getKind()) {
  case mlir::AffineExprKind::Add:
    // a + (-1 * b) reads better as a - b.
    if (auto m = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(rhsExpr);
        m && m.getKind() == mlir::AffineExprKind::Mul)
      if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(m.getRHS()); c && c.getValue() == -1)
        return json::array({"sub", lhs, expressionJson(m.getLHS(), symbols)});
    if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(rhsExpr); c && c.getValue() < 0)
      return json::array({"sub", lhs, -c.getValue()});
    op = "add";
    break;
  case mlir::AffineExprKind::Mul:
    op = "mul";
    break;
  case mlir::AffineExprKind::FloorDiv:
    op = "floordiv";
    break;
  case mlir::AffineExprKind::CeilDiv:
    op = "ceildiv";
    break;
  case mlir::AffineExprKind::Mod:
    op = "mod";
    break;
  default:
    break;
  }
  return json::array({op, lhs, expressionJson(rhsExpr, symbols)});
}

} // namespace

nlohmann::json sizeExprJson(mlir::AffineExpr expr, const std::vector<std::string> &symbols) {
  return nlohmann::json::parse(expressionJson(expr, symbols).dump());
}

std::string sha256Hex(const std::string &bytes) {
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : hash) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

namespace {

json bufferJson(const BufferRef &b) {
  json ref{{b.kind == BufferRef::Kind::Param ? "param" : "temp", b.index}};
  if (b.offset)
    ref["offset"] = b.offset;
  return ref;
}

json shapeJson(mlir::AffineMap shape, const std::vector<std::string> &symbols) {
  json dims = json::array();
  for (mlir::AffineExpr e : shape.getResults())
    dims.push_back(expressionJson(e, symbols));
  return dims;
}

json exportJson(const ExportSignature &s) {
  json symbols = json::array();
  for (size_t i = 0; i < s.symbols.size(); ++i)
    symbols.push_back({{"name", s.symbols[i]}, {"param", s.bindings[i].argument},
                       {"dim", s.bindings[i].dim}});
  json params = json::array();
  auto add = [&](const ExportSignature::Array &a, const char *role, const std::string &name) {
    params.push_back({{"name", name},
                      {"role", role},
                      {"dtype", numpyName(a.dtype)},
                      {"shape", shapeJson(a.shape, s.symbols)},
                      {"alignment", 16}});
  };
  for (const auto &a : s.arguments)
    add(a, "input", a.name);
  for (size_t i = 0; i < s.results.size(); ++i)
    add(s.results[i], "output", "out" + std::to_string(i));
  json out = {{"name", s.name}, {"symbols", symbols}, {"params", params}};
  if (!s.tuned.empty()) {
    json tuned = json::object();
    for (const auto &[name, value] : s.tuned)
      tuned[name] = value;
    out["tuned"] = std::move(tuned);
  }
  return out;
}

json tensorMapJson(const TensorMapArg &t, const std::vector<std::string> &symbols) {
  json shape = json::array(), strides = json::array();
  for (const SizeExpr &d : t.shape)
    shape.push_back(expressionJson(d.expr, symbols));
  for (const SizeExpr &d : t.strides)
    strides.push_back(expressionJson(d.expr, symbols));
  std::vector<int64_t> elementStrides = t.elementStrides;
  if (elementStrides.empty())
    elementStrides.assign(t.box.size(), 1);
  json map = {{"buffer", bufferJson(t.buffer)},
              {"dtype", numpyName(t.dtype)},
              {"shape", shape},
              {"strides", strides},
              {"box", t.box},
              {"element_strides", elementStrides},
              {"swizzle", rt::tmaName(t.swizzle)},
              {"interleave", rt::tmaName(t.interleave)},
              {"l2_promotion", rt::tmaName(t.l2Promotion)},
              {"oob_fill", rt::tmaName(t.oobFill)}};
  if (t.optional)
    map["optional"] = true;
  return map;
}

bool usesTensorMaps(const Manifest &m) {
  for (const Artifact &a : m.artifacts)
    for (const CudaProgram &p : a.cudaPrograms)
      for (const auto &step : p.steps)
        if (const auto *l = std::get_if<CudaLaunch>(&step))
          for (const KernelArg &arg : l->args)
            if (std::holds_alternative<TensorMapArg>(arg.value))
              return true;
  return false;
}

json launchJson(const CudaLaunch &l, const std::vector<std::string> &symbols) {
  json args = json::array();
  for (const KernelArg &a : l.args) {
    if (auto *b = std::get_if<BufferRef>(&a.value))
      args.push_back(bufferJson(*b));
    else if (auto *t = std::get_if<TensorMapArg>(&a.value))
      args.push_back({{"tensor_map", tensorMapJson(*t, symbols)}});
    else
      args.push_back({{"symbol", symbols.at(std::get<unsigned>(a.value))}});
  }
  json grid = json::array();
  for (const SizeExpr &g : l.grid)
    grid.push_back(expressionJson(g.expr, symbols));
  return {{"kernel", l.kernel},
          {"grid", grid},
          {"block", {l.block[0], l.block[1], l.block[2]}},
          {"cluster", {l.cluster[0], l.cluster[1], l.cluster[2]}},
          {"shared_memory", {{"static", l.staticSharedMemory}, {"dynamic", l.dynamicSharedMemory}}},
          {"args", args},
          {"registers", l.registers},
          {"spill_stores", l.spillStores},
          {"spill_loads", l.spillLoads},
          {"local_memory", l.localMemory}};
}

json programJson(const CudaProgram &p, const ExportSignature &s) {
  json temporaries = json::array();
  for (const Temporary &t : p.temporaries) {
    json shape = json::array();
    for (const SizeExpr &d : t.shape)
      shape.push_back(expressionJson(d.expr, s.symbols));
    temporaries.push_back({{"dtype", numpyName(t.dtype)}, {"shape", shape}});
  }
  json steps = json::array();
  for (const auto &step : p.steps) {
    if (auto *copy = std::get_if<BufferCopy>(&step)) {
      json bytes = 1;
      for (size_t i = 0; i < copy->bytes.size(); ++i) {
        json factor = expressionJson(copy->bytes[i].expr, s.symbols);
        bytes = i == 0 ? factor : json::array({"mul", bytes, factor});
      }
      steps.push_back({{"copy",
                        {{"from", bufferJson(copy->from)},
                         {"to", bufferJson(copy->to)},
                         {"bytes", bytes}}}});
    }
    else
      steps.push_back({{"launch", launchJson(std::get<CudaLaunch>(step), s.symbols)}});
  }
  return {{"export", p.exportName}, {"temporaries", temporaries}, {"steps", steps}};
}

} // namespace

std::string writeManifest(const Manifest &m) {
  json exports = json::array();
  for (const ExportSignature &s : m.exports)
    exports.push_back(exportJson(s));
  json artifacts = json::array();
  for (const Artifact &a : m.artifacts) {
    json programs = json::array();
    for (const CudaProgram &p : a.cudaPrograms) {
      auto s = std::find_if(m.exports.begin(), m.exports.end(),
                            [&](const ExportSignature &e) { return e.name == p.exportName; });
      programs.push_back(programJson(p, *s));
    }
    for (const nlohmann::json &p : a.otherPrograms)
      programs.push_back(json::parse(p.dump()));
    json artifact = {{"target", a.target}, {"file", a.file},         {"format", a.format},
                     {"sha256", a.sha256}, {"size", a.size},         {"programs", programs}};
    if (a.format == "cubin")
      artifact["ptxas_notes"] = a.ptxasNotes;
    artifacts.push_back(std::move(artifact));
  }
  json root = {{"format", "pkc-manifest"},
               {"version", usesTensorMaps(m) ? kManifestVersionTensorMaps : kManifestVersion},
               {"compiler", {{"name", "pkc"}, {"version", PKC_VERSION}}},
               {"source", {{"path", m.sourcePath}, {"sha256", m.sourceSha256}}},
               {"exports", exports},
               {"artifacts", artifacts}};
  return root.dump(2) + "\n";
}

} // namespace pk::backends
