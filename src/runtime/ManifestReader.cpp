//===- ManifestReader.cpp - Reading and checking a launch manifest --------===//
//
// Everything a launch will rely on is checked here, once, with a message
// that names the place in the JSON: "add.json: exports[0].params[1].dtype:
// unknown dtype \"float8\" ...". Unknown fields are ignored, as
// docs/manifest.md promises within a version.
//
//===----------------------------------------------------------------------===//
#include "runtime/Error.h"
#include "runtime/Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace pk::rt {

using nlohmann::json;

const Program *Artifact::program(unsigned exportIndex) const {
  for (const Program &p : programs)
    if (p.exportIndex == exportIndex)
      return &p;
  return nullptr;
}

int Manifest::findExport(std::string_view name) const {
  for (size_t i = 0; i < exports.size(); ++i)
    if (exports[i].name == name)
      return int(i);
  return -1;
}

namespace {

std::string quote(const std::string &s) { return "\"" + s + "\""; }

/// A JSON value for a message, cut short when it is long.
std::string brief(const json &value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

/// Reads one manifest; each method takes the JSON path of its value.
class Reader {
public:
  explicit Reader(const std::string &origin) : origin_(origin) {}

  Manifest read(std::string_view text);

private:
  [[noreturn]] void error(const std::string &at, const std::string &message,
                          pk_status status = PK_ERROR_MANIFEST) const {
    fail(status, origin_ + ": " + (at.empty() ? "" : at + ": ") + message);
  }

  const json &member(const json &object, const char *key, const std::string &at) const {
    if (!object.is_object())
      error(at, std::string("expected an object, got ") + object.type_name());
    auto it = object.find(key);
    if (it == object.end())
      error(at, std::string("missing \"") + key + "\"");
    return *it;
  }
  static std::string path(const std::string &at, const char *key) {
    return at.empty() ? key : at + "." + key;
  }
  static std::string path(const std::string &at, size_t index) {
    return at + "[" + std::to_string(index) + "]";
  }

  const json &array(const json &object, const char *key, const std::string &at) const {
    const json &v = member(object, key, at);
    if (!v.is_array())
      error(path(at, key), std::string("expected an array, got ") + v.type_name());
    return v;
  }
  std::string string(const json &object, const char *key, const std::string &at,
                     bool nonEmpty = true) const {
    const json &v = member(object, key, at);
    if (!v.is_string())
      error(path(at, key), std::string("expected a string, got ") + v.type_name());
    if (nonEmpty && v.get_ref<const std::string &>().empty())
      error(path(at, key), "expected a non-empty string");
    return v.get<std::string>();
  }
  /// A non-negative integer no larger than `max`.
  uint64_t count(const json &v, const std::string &at,
                 uint64_t max = uint64_t(std::numeric_limits<int64_t>::max())) const {
    if (!v.is_number_integer())
      error(at, std::string("expected a non-negative integer, got ") +
                    (v.is_number() ? brief(v) : std::string(v.type_name())));
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
      error(at, "expected a non-negative integer, got " + v.dump());
    uint64_t value = v.get<uint64_t>();
    if (value > max)
      error(at, v.dump() + " is out of range (at most " + std::to_string(max) + ")");
    return value;
  }
  uint64_t count(const json &object, const char *key, const std::string &at,
                 uint64_t max = uint64_t(std::numeric_limits<int64_t>::max())) const {
    return count(member(object, key, at), path(at, key), max);
  }
  SizeExpr sizeExpr(const json &v, const Export &e, const std::string &at) const {
    SizeExpr out;
    std::string message;
    if (!SizeExpr::parse(v, e.symbolNames, out, message))
      error(at, message);
    return out;
  }
  std::vector<SizeExpr> shape(const json &object, const Export &e, const std::string &at) const {
    const json &dims = array(object, "shape", at);
    std::vector<SizeExpr> out;
    for (size_t d = 0; d < dims.size(); ++d)
      out.push_back(sizeExpr(dims[d], e, path(path(at, "shape"), d)));
    return out;
  }
  const DTypeDesc *dtype(const json &object, const std::string &at) const {
    std::string name = string(object, "dtype", at);
    const DTypeDesc *d = dtypeByName(name);
    if (!d)
      error(path(at, "dtype"),
            "unknown dtype " + quote(name) + "; expected one of " + dtypeNames());
    return d;
  }

  void readFormat(const json &root);
  Export readExport(const json &value, const std::string &at) const;
  Artifact readArtifact(const json &value, const Manifest &m, const std::string &at) const;
  Program readProgram(const json &value, const Manifest &m, const std::string &at) const;
  BufferRef buffer(const json &value, const Export &e, const Program &p,
                   const std::string &at) const;
  LaunchStep readLaunch(const json &value, const Export &e, const Program &p,
                        const std::string &at) const;
  CopyStep readCopy(const json &value, const Export &e, const Program &p,
                    const std::string &at) const;
  TensorMapArg readTensorMap(const json &value, const Export &e, const Program &p,
                             const std::string &at) const;

  const std::string &origin_;
  int version_ = 1;
};

void Reader::readFormat(const json &root) {
  if (!root.is_object())
    error("", std::string("expected a JSON object, got ") + root.type_name());
  auto format = root.find("format");
  if (format == root.end() || !format->is_string() || *format != "pkc-manifest")
    error("",
          "not a pkc launch manifest: \"format\" is " +
              (format == root.end() ? std::string("missing") : brief(*format)) +
              ", expected \"pkc-manifest\"",
          PK_ERROR_MANIFEST_VERSION);
  const json &version = member(root, "version", "");
  if (!version.is_number_integer())
    error("version", std::string("expected an integer, got ") + version.type_name());
  // Every version up to kManifestVersion reads; later ones may mean
  // something this reader would get wrong.
  if (!version.is_number_unsigned() || version.get<uint64_t>() < 1 ||
      version.get<uint64_t>() > uint64_t(kManifestVersion)) {
    bool newer =
        version.is_number_unsigned() && version.get<uint64_t>() > uint64_t(kManifestVersion);
    error("",
          "manifest version " + version.dump() + " is not one this runtime reads (versions 1 to " +
              std::to_string(kManifestVersion) + "); " +
              (newer ? "update the pkc runtime, or compile the kernels with a matching pkc"
                     : "recompile the kernels with a current pkc"),
          PK_ERROR_MANIFEST_VERSION);
  }
  version_ = int(version.get<uint64_t>());
}

Export Reader::readExport(const json &value, const std::string &at) const {
  Export e;
  e.name = string(value, "name", at);

  // Symbols first: shapes refer to them. Their bindings are checked once
  // the params are read.
  const json &symbols = array(value, "symbols", at);
  std::vector<std::pair<uint64_t, uint64_t>> bindings;
  for (size_t i = 0; i < symbols.size(); ++i) {
    std::string where = path(path(at, "symbols"), i);
    SymbolBinding s;
    s.name = string(symbols[i], "name", where);
    if (std::find(e.symbolNames.begin(), e.symbolNames.end(), s.name) != e.symbolNames.end())
      error(path(where, "name"), "symbol " + quote(s.name) + " is listed twice");
    bindings.push_back({count(symbols[i], "param", where), count(symbols[i], "dim", where)});
    e.symbols.push_back(s);
    e.symbolNames.push_back(s.name);
  }

  const json &params = array(value, "params", at);
  for (size_t i = 0; i < params.size(); ++i) {
    std::string where = path(path(at, "params"), i);
    Param p;
    p.name = string(params[i], "name", where);
    std::string role = string(params[i], "role", where);
    if (role != "input" && role != "output")
      error(path(where, "role"), "expected \"input\" or \"output\", got " + quote(role));
    p.output = role == "output";
    if (!p.output && !e.params.empty() && e.params.back().output)
      error(where,
            "input " + quote(p.name) + " follows an output; params list inputs, then outputs");
    p.dtype = dtype(params[i], where);
    p.shape = shape(params[i], e, where);
    p.alignment = count(params[i], "alignment", where, uint64_t(1) << 32);
    if (p.alignment == 0 || (p.alignment & (p.alignment - 1)))
      error(path(where, "alignment"),
            "expected a power of two, got " + std::to_string(p.alignment));
    if (!p.output)
      ++e.numInputs;
    e.params.push_back(std::move(p));
  }

  for (size_t i = 0; i < e.symbols.size(); ++i) {
    std::string where = path(path(at, "symbols"), i);
    auto [param, dim] = bindings[i];
    if (param >= e.params.size())
      error(path(where, "param"), "param " + std::to_string(param) +
                                      " does not exist (the export has " +
                                      std::to_string(e.params.size()) + ")");
    const Param &p = e.params[param];
    if (dim >= p.shape.size())
      error(path(where, "dim"), quote(p.name) + " has " + std::to_string(p.shape.size()) +
                                    " dimension(s), so there is no dimension " +
                                    std::to_string(dim));
    unsigned symbol;
    if (!p.shape[dim].isSymbol(symbol) || symbol != i)
      error(where, "symbol " + quote(e.symbols[i].name) + " is bound to dimension " +
                       std::to_string(dim) + " of " + quote(p.name) + ", whose size is " +
                       p.shape[dim].str(e.symbolNames) + ", not the symbol itself");
    e.symbols[i].param = unsigned(param);
    e.symbols[i].dim = unsigned(dim);
  }
  return e;
}

BufferRef Reader::buffer(const json &value, const Export &e, const Program &p,
                         const std::string &at) const {
  bool view = value.is_object() && value.contains("offset");
  if (!value.is_object() || value.size() != 1 + size_t(view) ||
      !(value.contains("param") || value.contains("temp")))
    error(at, "expected {\"param\": i} or {\"temp\": j} (with an optional \"offset\"), got " +
                  brief(value));
  BufferRef b;
  if (view)
    b.offset = count(value, "offset", at);
  if (value.contains("param")) {
    b.kind = BufferRef::Kind::Param;
    if (e.params.empty())
      error(path(at, "param"), "the export has no params");
    b.index = unsigned(count(value.at("param"), path(at, "param"), e.params.size() - 1));
  } else {
    b.kind = BufferRef::Kind::Temp;
    if (p.temporaries.empty())
      error(path(at, "temp"), "the program has no temporaries");
    b.index = unsigned(count(value.at("temp"), path(at, "temp"), p.temporaries.size() - 1));
  }
  return b;
}

LaunchStep Reader::readLaunch(const json &value, const Export &e, const Program &p,
                              const std::string &at) const {
  LaunchStep l;
  l.kernel = string(value, "kernel", at);
  for (const char *key : {"grid", "block"}) {
    const json &dims = array(value, key, at);
    if (dims.size() != 3)
      error(path(at, key), "expected 3 dimensions, got " + std::to_string(dims.size()));
    for (size_t d = 0; d < 3; ++d)
      (key[0] == 'g' ? l.grid : l.block)[d] = sizeExpr(dims[d], e, path(path(at, key), d));
  }
  if (value.contains("cluster")) {
    const json &dims = array(value, "cluster", at);
    if (dims.size() != 3)
      error(path(at, "cluster"), "expected 3 dimensions, got " + std::to_string(dims.size()));
    for (size_t d = 0; d < 3; ++d) {
      l.cluster[d] = unsigned(count(dims[d], path(path(at, "cluster"), d), 1024));
      if (l.cluster[d] == 0)
        error(path(path(at, "cluster"), d), "cluster dimensions are at least 1");
    }
  }
  const json &shared = member(value, "shared_memory", at);
  std::string sharedAt = path(at, "shared_memory");
  l.dynamicSharedMemory =
      sizeExpr(member(shared, "dynamic", sharedAt), e, path(sharedAt, "dynamic"));
  if (shared.contains("static"))
    l.staticSharedMemory = count(shared, "static", sharedAt);
  const json &args = array(value, "args", at);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string where = path(path(at, "args"), i);
    const json &a = args[i];
    bool view = a.is_object() && a.contains("offset") && (a.contains("param") || a.contains("temp"));
    if (!a.is_object() || a.size() != 1 + size_t(view) ||
        !(a.contains("param") || a.contains("temp") || a.contains("symbol") ||
          a.contains("tensor_map")))
      error(where, "expected {\"param\": i}, {\"temp\": j} (either with an optional "
                   "\"offset\"), {\"symbol\": \"N\"} or {\"tensor_map\": {...}}, got " +
                       brief(a));
    KernelArg arg;
    if (a.contains("tensor_map")) {
      if (version_ < 2)
        error(path(where, "tensor_map"), "tensor_map arguments need manifest version 2, and this "
                                         "manifest says version " +
                                             std::to_string(version_));
      arg.kind = KernelArg::Kind::TensorMap;
      arg.index = unsigned(l.tensorMaps.size());
      l.tensorMaps.push_back(readTensorMap(a.at("tensor_map"), e, p, path(where, "tensor_map")));
    } else if (a.contains("symbol")) {
      arg.kind = KernelArg::Kind::Symbol;
      std::string name = string(a, "symbol", where);
      auto it = std::find(e.symbolNames.begin(), e.symbolNames.end(), name);
      if (it == e.symbolNames.end())
        error(path(where, "symbol"), "unknown symbol " + quote(name));
      arg.index = unsigned(it - e.symbolNames.begin());
    } else {
      BufferRef b = buffer(a, e, p, where);
      arg.kind = b.kind == BufferRef::Kind::Param ? KernelArg::Kind::Param : KernelArg::Kind::Temp;
      arg.index = b.index;
      arg.offset = b.offset;
    }
    l.args.push_back(arg);
  }
  return l;
}

TensorMapArg Reader::readTensorMap(const json &value, const Export &e, const Program &p,
                                   const std::string &at) const {
  TensorMapArg t;
  t.buffer = buffer(member(value, "buffer", at), e, p, path(at, "buffer"));
  t.dtype = dtype(value, at);
  const DTypeDesc *bufferType = t.buffer.kind == BufferRef::Kind::Param
                                    ? e.params[t.buffer.index].dtype
                                    : p.temporaries[t.buffer.index].dtype;
  if (bufferType != t.dtype)
    error(path(at, "dtype"),
          quote(t.dtype->name) + " differs from the buffer's dtype " + quote(bufferType->name));
  t.shape = shape(value, e, at);
  TensorMapDesc &d = t.fixed;
  d.rank = unsigned(t.shape.size());
  if (d.rank < 1 || d.rank > kMaxTensorMapRank)
    error(path(at, "shape"), "a tensor map has 1 to 5 dimensions, got " + std::to_string(d.rank));
  const json &strides = array(value, "strides", at);
  if (strides.size() + 1 != d.rank)
    error(path(at, "strides"), "expected " + std::to_string(d.rank - 1) +
                                   " byte strides (every dimension but the innermost), got " +
                                   std::to_string(strides.size()));
  for (size_t i = 0; i < strides.size(); ++i)
    t.strides.push_back(sizeExpr(strides[i], e, path(path(at, "strides"), i)));
  // The manifest lists dimensions outermost first; CUDA innermost first.
  const json &box = array(value, "box", at);
  if (box.size() != d.rank)
    error(path(at, "box"), "expected " + std::to_string(d.rank) + " box dimensions, got " +
                               std::to_string(box.size()));
  for (unsigned i = 0; i < d.rank; ++i)
    d.box[d.rank - 1 - i] = uint32_t(count(box[i], path(path(at, "box"), i), 1u << 16));
  for (unsigned i = 0; i < d.rank; ++i)
    d.elementStrides[i] = 1;
  if (value.contains("element_strides")) {
    const json &es = array(value, "element_strides", at);
    if (es.size() != d.rank)
      error(path(at, "element_strides"), "expected " + std::to_string(d.rank) +
                                             " element strides, got " + std::to_string(es.size()));
    for (unsigned i = 0; i < d.rank; ++i)
      d.elementStrides[d.rank - 1 - i] =
          uint32_t(count(es[i], path(path(at, "element_strides"), i), 1u << 16));
  }
  auto mode = [&](const char *key, auto parse, auto &out, const char *choices) {
    if (!value.contains(key))
      return;
    std::string text = string(value, key, at);
    if (!parse(text, out))
      error(path(at, key), "unknown value " + quote(text) + "; expected one of " + choices);
  };
  mode("swizzle", parseTmaSwizzle, d.swizzle, "\"none\", \"32B\", \"64B\", \"128B\"");
  mode("interleave", parseTmaInterleave, d.interleave, "\"none\", \"16B\", \"32B\"");
  mode("l2_promotion", parseTmaL2Promotion, d.l2Promotion, "\"none\", \"64B\", \"128B\", \"256B\"");
  mode("oob_fill", parseTmaOobFill, d.oobFill, "\"zero\", \"nan\"");
  if (value.contains("optional")) {
    if (!value.at("optional").is_boolean())
      error(path(at, "optional"), "expected true or false");
    t.optional = value.at("optional").get<bool>();
  }
  d.dataType = tensorMapDataType(t.dtype->dl.code, t.dtype->dl.bits);
  d.elementBytes = t.dtype->bytes;
  d.isFloat = t.dtype->dl.code == kDLFloat || t.dtype->dl.code == kDLBfloat;
  std::string why = checkTensorMapStatic(d);
  if (!why.empty())
    error(at, why);
  return t;
}

CopyStep Reader::readCopy(const json &value, const Export &e, const Program &p,
                          const std::string &at) const {
  CopyStep c;
  c.from = buffer(member(value, "from", at), e, p, path(at, "from"));
  c.to = buffer(member(value, "to", at), e, p, path(at, "to"));
  c.bytes = sizeExpr(member(value, "bytes", at), e, path(at, "bytes"));
  // The caller's inputs are read-only: a copy may only fill an output or a
  // temporary.
  if (c.to.kind == BufferRef::Kind::Param && !e.params[c.to.index].output)
    error(path(at, "to"), "a copy writes to input " + quote(e.params[c.to.index].name) +
                              "; it may only write an output or a temporary");
  return c;
}

Program Reader::readProgram(const json &value, const Manifest &m, const std::string &at) const {
  Program p;
  std::string name = string(value, "export", at);
  int index = m.findExport(name);
  if (index < 0)
    error(path(at, "export"), "no export named " + quote(name) + " in \"exports\"");
  p.exportIndex = unsigned(index);
  const Export &e = m.exports[index];
  const json &temporaries = array(value, "temporaries", at);
  for (size_t i = 0; i < temporaries.size(); ++i) {
    std::string where = path(path(at, "temporaries"), i);
    Temporary t;
    t.dtype = dtype(temporaries[i], where);
    t.shape = shape(temporaries[i], e, where);
    p.temporaries.push_back(std::move(t));
  }
  const json &steps = array(value, "steps", at);
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string where = path(path(at, "steps"), i);
    const json &s = steps[i];
    bool launch = s.is_object() && s.contains("launch"), copy = s.is_object() && s.contains("copy");
    if (launch == copy)
      error(where,
            "a step is {\"launch\": {...}} or {\"copy\": {...}}, got " +
                (s.is_object() ? std::string("an object with ") + (launch ? "both" : "neither")
                               : std::string(s.type_name())));
    if (launch)
      p.steps.push_back(readLaunch(s.at("launch"), e, p, path(where, "launch")));
    else
      p.steps.push_back(readCopy(s.at("copy"), e, p, path(where, "copy")));
  }
  return p;
}

Artifact Reader::readArtifact(const json &value, const Manifest &m, const std::string &at) const {
  Artifact a;
  a.target = string(value, "target", at);
  a.file = string(value, "file", at);
  if (a.file.front() == '/')
    error(path(at, "file"), "expected a path relative to the manifest, got " + quote(a.file));
  a.format = string(value, "format", at);
  a.sha256 = string(value, "sha256", at);
  if (a.sha256.size() != 64 || !std::all_of(a.sha256.begin(), a.sha256.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      }))
    error(path(at, "sha256"), "expected 64 lowercase hex digits, got " + quote(a.sha256));
  a.size = count(value, "size", at);
  if (a.target.rfind("cuda:", 0) != 0)
    return a; // another target's programs (TPU) follow their own schema
  a.cuda = parseCudaTarget(a.target);
  if (!a.cuda)
    error(path(at, "target"), "unknown CUDA target " + quote(a.target) +
                                  "; expected cuda:sm_XY with an optional a or f suffix");
  if (a.format != "cubin" && a.format != "ptx") {
    a.cuda.reset(); // not a format this runtime loads; listed in messages only
    return a;
  }
  const json &programs = array(value, "programs", at);
  for (size_t i = 0; i < programs.size(); ++i) {
    Program p = readProgram(programs[i], m, path(path(at, "programs"), i));
    if (a.program(p.exportIndex))
      error(path(path(at, "programs"), i),
            "a second program for export " + quote(m.exports[p.exportIndex].name));
    a.programs.push_back(std::move(p));
  }
  return a;
}

/// How deeply a manifest's JSON may nest. pkc writes at most 6 levels;
/// without a limit a value nested 100,000 deep parses (the parser keeps
/// its own stack) but then overflows the C stack in anything recursive
/// over it, such as dump() for an error message.
constexpr int kMaxJsonDepth = 64;

struct TooDeep {};

Manifest Reader::read(std::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end(),
                       [](int depth, json::parse_event_t, json &) {
                         if (depth > kMaxJsonDepth)
                           throw TooDeep{};
                         return true;
                       });
  } catch (const TooDeep &) {
    error("", "malformed JSON: nested more than " + std::to_string(kMaxJsonDepth) +
                  " levels deep");
  } catch (const json::exception &e) {
    // "[json.exception.parse_error.101] parse error at line 1, ..." reads
    // better without its bracketed prefix.
    std::string message = e.what();
    size_t bracket = message.find("] ");
    error("", "malformed JSON: " +
                  (bracket == std::string::npos ? message : message.substr(bracket + 2)));
  }
  readFormat(root);
  Manifest m;
  const json &exports = array(root, "exports", "");
  for (size_t i = 0; i < exports.size(); ++i) {
    Export e = readExport(exports[i], path("exports", i));
    if (m.findExport(e.name) >= 0)
      error(path(path("exports", i), "name"), "a second export named " + quote(e.name));
    m.exports.push_back(std::move(e));
  }
  const json &artifacts = array(root, "artifacts", "");
  for (size_t i = 0; i < artifacts.size(); ++i)
    m.artifacts.push_back(readArtifact(artifacts[i], m, path("artifacts", i)));
  return m;
}

} // namespace

Manifest readManifest(std::string_view text, const std::string &origin) {
  return Reader(origin).read(text);
}

} // namespace pk::rt
