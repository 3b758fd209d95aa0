//===- LaunchHeader.cpp ---------------------------------------------------===//
#include "LaunchHeader.h"

#include "backends/Manifest.h"

#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>

namespace pk::cli {

namespace {

/// A manifest size expression in .pk syntax: N, (N + 1), cdiv(N, 128).
std::string sizeText(const nlohmann::json &e) {
  if (e.is_number_integer())
    return std::to_string(e.get<int64_t>());
  if (e.is_string())
    return e.get<std::string>();
  std::string op = e[0], a = sizeText(e[1]), b = sizeText(e[2]);
  if (op == "ceildiv" || op == "max" || op == "min")
    return (op == "ceildiv" ? std::string("cdiv") : op) + "(" + a + ", " + b + ")";
  static const std::map<std::string, std::string> symbols = {
      {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"floordiv", "//"}, {"mod", "%"}};
  return "(" + a + " " + symbols.at(op) + " " + b + ")";
}

std::string arrayText(const ExportSignature::Array &a, const std::vector<std::string> &symbols) {
  std::string text = std::string(shortName(a.dtype)) + "[";
  for (size_t i = 0; i < a.shape.getNumResults(); ++i) {
    std::string dim = sizeText(backends::sizeExprJson(a.shape.getResult(i), symbols));
    if (dim.size() > 2 && dim.front() == '(' && dim.back() == ')')
      dim = dim.substr(1, dim.size() - 2);
    text += (i ? ", " : "") + dim;
  }
  return text + "]";
}

/// `add(x: f32[N], y: f32[N]) -> f32[N]`, as the .pk signature reads.
std::string signatureText(const ExportSignature &s) {
  std::string text = s.name + "(";
  for (size_t i = 0; i < s.arguments.size(); ++i)
    text += (i ? ", " : "") + s.arguments[i].name + ": " + arrayText(s.arguments[i], s.symbols);
  text += ") -> ";
  if (s.results.size() != 1)
    text += "(";
  for (size_t i = 0; i < s.results.size(); ++i)
    text += (i ? ", " : "") + arrayText(s.results[i], s.symbols);
  if (s.results.size() != 1)
    text += ")";
  return text;
}

/// The C++ element type a typed launcher takes, and the DLPack dtype it
/// passes. f16 and bf16 have no standard C++ type: they travel as their
/// 16-bit storage.
struct ElementType {
  const char *cxx;
  const char *dlpack;
};

ElementType elementType(DType t) {
  switch (t) {
  case DType::Bool:
    return {"bool", "DLDataType{6 /* kDLBool */, 8, 1}"};
  case DType::F16:
    return {"uint16_t", "DLDataType{kDLFloat, 16, 1}"};
  case DType::BF16:
    return {"uint16_t", "DLDataType{kDLBfloat, 16, 1}"};
  case DType::F32:
    return {"float", "DLDataType{kDLFloat, 32, 1}"};
  case DType::F64:
    return {"double", "DLDataType{kDLFloat, 64, 1}"};
  default:
    break;
  }
  static const std::map<DType, ElementType> integers = {
      {DType::I8, {"int8_t", "DLDataType{kDLInt, 8, 1}"}},
      {DType::I16, {"int16_t", "DLDataType{kDLInt, 16, 1}"}},
      {DType::I32, {"int32_t", "DLDataType{kDLInt, 32, 1}"}},
      {DType::I64, {"int64_t", "DLDataType{kDLInt, 64, 1}"}},
      {DType::U8, {"uint8_t", "DLDataType{kDLUInt, 8, 1}"}},
      {DType::U16, {"uint16_t", "DLDataType{kDLUInt, 16, 1}"}},
      {DType::U32, {"uint32_t", "DLDataType{kDLUInt, 32, 1}"}},
      {DType::U64, {"uint64_t", "DLDataType{kDLUInt, 64, 1}"}},
  };
  return integers.at(t);
}

std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// One param of an export as the launchers take it.
struct Param {
  std::string name; ///< a C++ identifier
  const ExportSignature::Array *array;
  bool output;
};

void writeClass(std::ostream &os, const ExportSignature &s, const std::string &loader) {
  std::string cls = cxxIdentifier(s.name);
  std::vector<Param> params;
  std::set<std::string> used = {"stream", "args", "status", "tensor", "kernel", "module"};
  // Each array takes two parameters, NAME and NAME_shape; both must be
  // free.
  auto unique = [&](std::string name) {
    name = cxxIdentifier(name);
    while (used.count(name) || used.count(name + "_shape"))
      name += "_";
    used.insert(name);
    used.insert(name + "_shape");
    return name;
  };
  for (const auto &a : s.arguments)
    params.push_back({unique(a.name), &a, false});
  for (size_t i = 0; i < s.results.size(); ++i)
    params.push_back({unique("out" + std::to_string(i)), &s.results[i], true});

  os << "/// " << signatureText(s) << "\n///\n";
  os << "/// Arrays in device memory, inputs then outputs";
  if (!s.symbols.empty()) {
    os << "; ";
    for (size_t i = 0; i < s.symbols.size(); ++i)
      os << (i ? ", " : "") << s.symbols[i];
    os << (s.symbols.size() == 1 ? " is" : " are") << " bound from their shapes";
  }
  os << ".\nclass " << cls << " {\npublic:\n";
  os << "  /// The export in the module of this file, loaded on first use and shared.\n";
  os << "  " << cls << "() noexcept {\n"
     << "    const ::pk::Module *module = nullptr;\n"
     << "    status_ = " << loader << "(module);\n"
     << "    if (status_)\n"
     << "      status_ = module->tryKernel(" << quoted(s.name) << ", kernel_);\n"
     << "    if (status_)\n"
     << "      device_ = module->device();\n"
     << "  }\n";
  os << "  /// The export in a module the caller loaded (and keeps alive).\n";
  os << "  explicit " << cls << "(const ::pk::Module &module) noexcept {\n"
     << "    status_ = module.tryKernel(" << quoted(s.name) << ", kernel_);\n"
     << "    device_ = module.device();\n"
     << "  }\n\n";
  os << "  /// Whether loading the module and finding the export worked.\n"
     << "  const ::pk::Status &status() const noexcept { return status_; }\n"
     << "  const ::pk::Kernel &kernel() const noexcept { return kernel_; }\n\n";

  // DLTensor form.
  auto dlParams = [&] {
    std::string text;
    for (const Param &p : params)
      text += ", const DLTensor &" + p.name;
    return text;
  };
  auto dlArgs = [&] {
    std::string text;
    for (size_t i = 0; i < params.size(); ++i)
      text += (i ? ", " : "") + params[i].name;
    return text;
  };
  os << "  ::pk::Status tryLaunch(void *stream" << dlParams() << ") const noexcept {\n"
     << "    if (!status_)\n      return status_;\n"
     << "    const DLTensor args[] = {" << dlArgs() << "};\n"
     << "    return kernel_.tryLaunch(args, " << params.size() << ", stream);\n  }\n";

  // Typed form: element types and ranks checked by the C++ compiler.
  auto typedParams = [&] {
    std::string text;
    for (const Param &p : params)
      text += ",\n      " + std::string(p.output ? "" : "const ") +
              elementType(p.array->dtype).cxx + " *" + p.name + ", const std::array<int64_t, " +
              std::to_string(p.array->shape.getNumResults()) + "> &" + p.name + "_shape";
    return text;
  };
  auto typedArgs = [&] {
    std::string text;
    for (size_t i = 0; i < params.size(); ++i)
      text += std::string(i ? ", " : "") + params[i].name + ", " + params[i].name + "_shape";
    return text;
  };
  os << "  ::pk::Status tryLaunch(void *stream" << typedParams() << ") const noexcept {\n";
  os << "    return tryLaunch(stream";
  for (const Param &p : params)
    os << ",\n        tensor(" << p.name << ", " << p.name << "_shape, "
       << elementType(p.array->dtype).dlpack << ")";
  os << ");\n  }\n\n";

  os << "#if PK_RUNTIME_EXCEPTIONS\n";
  os << "  /// Launches on `stream`; throws pk::Error on failure.\n";
  os << "  void operator()(void *stream" << dlParams() << ") const {\n"
     << "    ::pk::check(tryLaunch(stream, " << dlArgs() << "));\n  }\n";
  os << "  void operator()(void *stream" << typedParams() << ") const {\n"
     << "    ::pk::check(tryLaunch(stream, " << typedArgs() << "));\n  }\n";
  os << "#endif\n\n";

  os << "private:\n"
     << "  template <size_t R>\n"
     << "  DLTensor tensor(const void *data, const std::array<int64_t, R> &shape,\n"
     << "                  DLDataType dtype) const noexcept {\n"
     << "    DLTensor t{};\n"
     << "    t.data = const_cast<void *>(data); // inputs are only read\n"
     << "    t.device = DLDevice{kDLCUDA, device_};\n"
     << "    t.ndim = int32_t(R);\n"
     << "    t.dtype = dtype;\n"
     << "    t.shape = R ? const_cast<int64_t *>(shape.data()) : nullptr;\n"
     << "    return t;\n"
     << "  }\n\n"
     << "  ::pk::Status status_;\n"
     << "  ::pk::Kernel kernel_;\n"
     << "  int device_ = 0;\n"
     << "};\n\n";
}

} // namespace

std::string cxxIdentifier(const std::string &name) {
  static const std::set<std::string> keywords = {"alignas",       "alignof",     "and",
                                                 "and_eq",        "asm",         "auto",
                                                 "bitand",        "bitor",       "bool",
                                                 "break",         "case",        "catch",
                                                 "char",          "char8_t",     "char16_t",
                                                 "char32_t",      "class",       "compl",
                                                 "concept",       "const",       "consteval",
                                                 "constexpr",     "constinit",   "const_cast",
                                                 "continue",      "co_await",    "co_return",
                                                 "co_yield",      "decltype",    "default",
                                                 "delete",        "do",          "double",
                                                 "dynamic_cast",  "else",        "enum",
                                                 "explicit",      "export",      "extern",
                                                 "false",         "float",       "for",
                                                 "friend",        "goto",        "if",
                                                 "inline",        "int",         "long",
                                                 "mutable",       "namespace",   "new",
                                                 "noexcept",      "not",         "not_eq",
                                                 "nullptr",       "operator",    "or",
                                                 "or_eq",         "private",     "protected",
                                                 "public",        "register",    "reinterpret_cast",
                                                 "requires",      "return",      "short",
                                                 "signed",        "sizeof",      "static",
                                                 "static_assert", "static_cast", "struct",
                                                 "switch",        "template",    "this",
                                                 "thread_local",  "throw",       "true",
                                                 "try",           "typedef",     "typeid",
                                                 "typename",      "union",       "unsigned",
                                                 "using",         "virtual",     "void",
                                                 "volatile",      "wchar_t",     "while",
                                                 "xor",           "xor_eq"};
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  if (keywords.count(out))
    out += "_";
  return out;
}

std::string embeddedLoaderName(const std::string &sourcePath) {
  return "pk_embedded_" + cxxIdentifier(llvm::sys::path::stem(sourcePath).str()) + "_load";
}

std::string launchHeader(const std::vector<ExportSignature> &exports,
                         const HeaderOptions &options) {
  std::string stem = cxxIdentifier(llvm::sys::path::stem(options.sourcePath).str());
  std::string guard = "PK_KERNELS_";
  for (char c : stem)
    guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard += "_PK_H";
  std::string loader = "load_" + stem + "_module";

  std::ostringstream os;
  os << "// Typed launchers for the exports of " << options.sourcePath << ".\n"
     << "// Generated by pkc; do not edit. Each export is a class: construct it\n"
     << "// (the module loads once per process), then call it with a stream and the\n"
     << "// arrays, inputs then outputs. Element types and ranks are checked here,\n"
     << "// at compile time; sizes by the runtime at launch (pk::Status / pk::Error).\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <pk/runtime.hpp>\n\n"
     << "#include <array>\n#include <cstddef>\n#include <cstdint>\n\n";
  std::string macro = "PK_MANIFEST_";
  for (char c : stem)
    macro += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (options.embedded) {
    os << "// Defined in the source `pkc compile --embed` wrote with the artifacts.\n"
       << "extern \"C\" pk_status " << embeddedLoaderName(options.sourcePath)
       << "(const pk_load_options *options, pk_module **module);\n\n";
  } else {
    // Where the artifacts were written; a program installed elsewhere
    // defines the macro to where they are installed.
    os << "#ifndef " << macro << "\n#define " << macro << " " << quoted(options.manifestPath)
       << "\n#endif\n\n";
  }
  os << "namespace pk::kernels {\n\n"
     << "namespace detail {\n"
     << "/// The module of " << options.sourcePath
     << ", loaded on first use (thread-safe) and kept for the\n"
     << "/// life of the process; the status says whether that worked.\n"
     << "inline ::pk::Status " << loader << "(const ::pk::Module *&module) noexcept {\n"
     << "  struct Loaded {\n"
     << "    ::pk::Module module;\n"
     << "    ::pk::Status status;\n"
     << "  };\n"
     << "  // Never destroyed: at exit the CUDA driver may be gone before this\n"
     << "  // object, and unloading a module then fails or crashes.\n"
     << "  static const Loaded *const loaded = [] {\n"
     << "    Loaded *l = new Loaded();\n";
  if (options.embedded)
    os << "    pk_module *m = nullptr;\n"
       << "    l->status = ::pk::Status::of(" << embeddedLoaderName(options.sourcePath)
       << "(nullptr, &m));\n"
       << "    l->module.reset(m);\n";
  else
    os << "    l->status = ::pk::Module::tryLoad(" << macro << ", l->module);\n";
  os << "    return l;\n"
     << "  }();\n"
     << "  module = &loaded->module;\n"
     << "  return loaded->status;\n"
     << "}\n"
     << "} // namespace detail\n\n";
  for (const ExportSignature &s : exports)
    writeClass(os, s, "detail::" + loader);
  os << "} // namespace pk::kernels\n\n#endif // " << guard << "\n";
  return os.str();
}

} // namespace pk::cli
