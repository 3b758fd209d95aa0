//===- DebugPrint.cpp - pl.debug_print and jax.debug.print in kernels -----===//
//
// Both take a Python format string and values. Fields whose values are
// static (numbers, shapes, strings) are formatted now, as Python would;
// fields holding kernel values (or Refs, read whole, as JAX's interpret
// mode prints them) become operands of pk.debug_print, which prints when
// the program runs. Outside kernels nothing runs at run time but
// pallas_calls, so a print there happens at compile time (a note).
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"
#include "frontend/elab/Indexing.h"

#include "mlir/IR/Builders.h"

namespace pk::elab {

namespace {

std::string escapeBraces(const std::string &text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '{' || c == '}')
      out += c;
  }
  return out;
}

} // namespace

Obj debugPrint(Elaborator &el, CallArgs &args, const char *what) {
  if (args.positional.empty())
    el.fail(args.range, std::string(what) + " needs a format string");
  std::string format = el.toStr(args.positional[0], args.rangeOf(0), "format string");
  std::vector<std::pair<std::string, Obj>> keywords;
  for (const auto &[k, v] : args.keywords)
    if (k != "ordered" && k != "partitioned")
      keywords.emplace_back(k, v);
  std::string out;
  std::vector<mlir::Value> values;
  std::vector<mlir::Attribute> dtypes;
  size_t next = 1;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      out += std::string(2, c);
      ++i;
      continue;
    }
    if (c == '}')
      el.fail(args.rangeOf(0), "single '}' encountered in the format string");
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = format.find('}', i);
    if (close == std::string::npos)
      el.fail(args.rangeOf(0), "unmatched '{' in the format string");
    std::string field = format.substr(i + 1, close - i - 1), spec;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos)
      field = field.substr(0, bang);
    Obj v;
    if (field.empty()) {
      if (next >= args.positional.size())
        el.fail(args.range, "the format string has more fields than values");
      v = args.positional[next++];
    } else if (std::isdigit(static_cast<unsigned char>(field[0]))) {
      size_t index = std::stoul(field) + 1;
      if (index >= args.positional.size())
        el.fail(args.range, "format field {" + field + "} has no value");
      v = args.positional[index];
    } else {
      for (const auto &[k, kv] : keywords)
        if (k == field)
          v = kv;
      if (!v)
        el.fail(args.range, "format field {" + field + "} has no keyword value");
    }
    i = close;
    if (auto *ref = llvm::dyn_cast<RefObj>(v.get()))
      v = loadRef(el, *ref, std::make_shared<EllipsisObj>(), nullptr, nullptr, args.range);
    if (llvm::isa<ArrayObj>(v.get()) && el.inKernel()) {
      const auto &array = llvm::cast<ArrayObj>(*v);
      if (!spec.empty() && array.rank() != 0)
        el.fail(args.range, "a format spec ('{:" + spec + "}') needs a scalar; this value has shape " +
                                repr(*makeTuple([&] {
                                  std::vector<Obj> d;
                                  for (int64_t x : array.shape)
                                    d.push_back(makeInt(x));
                                  return d;
                                }())));
      out += spec.empty() ? "{}" : "{:" + spec + "}";
      values.push_back(array.value);
      dtypes.push_back(el.builder().getStringAttr(shortName(array.dtype)));
      continue;
    }
    out += escapeBraces(formatValue(el, v, spec, args.range));
  }
  if (!el.inKernel()) {
    // Static values only: what Python would print, now.
    std::string text;
    for (size_t i = 0; i < out.size(); ++i) {
      text += out[i];
      if ((out[i] == '{' || out[i] == '}') && i + 1 < out.size() && out[i + 1] == out[i])
        ++i;
    }
    Diagnostic d(Severity::Note, args.range, std::string(what) + " at compile time: " + text);
    el.note(d);
    return none();
  }
  mlir::OpBuilder &b = el.builder();
  pk::DebugPrintOp::create(b, el.loc(args.range), b.getStringAttr(out), values,
                           b.getArrayAttr(dtypes));
  return none();
}

} // namespace pk::elab
