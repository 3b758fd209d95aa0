//===- Formatting.cpp - str(), format specs, str.format, f-strings --------===//
#include "frontend/elab/Formatting.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"

#include <cmath>

namespace pk::elab {

std::string strOf(const Obj &o) {
  if (auto *s = llvm::dyn_cast<StrObj>(o.get()))
    return s->value;
  if (auto *e = llvm::dyn_cast<ExceptionTypeObj>(o.get()))
    return e->message;
  return repr(*o);
}

namespace {

/// [[fill]align][sign][z][#][0][width][grouping][.precision][type]
struct Spec {
  char fill = ' ';
  char align = 0;
  char sign = '-';
  bool alternate = false;
  bool zeroPad = false;
  int64_t width = 0;
  char grouping = 0;
  int64_t precision = -1;
  char type = 0;
};

Spec parseSpec(Elaborator &el, const std::string &text, SourceRange r) {
  Spec s;
  size_t i = 0;
  auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (text.size() >= 2 && isAlign(text[1])) {
    s.fill = text[0];
    s.align = text[1];
    i = 2;
  } else if (!text.empty() && isAlign(text[0])) {
    s.align = text[0];
    i = 1;
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' '))
    s.sign = text[i++];
  if (i < text.size() && text[i] == 'z')
    ++i;
  if (i < text.size() && text[i] == '#') {
    s.alternate = true;
    ++i;
  }
  if (i < text.size() && text[i] == '0') {
    s.zeroPad = true;
    ++i;
  }
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    s.width = s.width * 10 + (text[i++] - '0');
  if (i < text.size() && (text[i] == ',' || text[i] == '_'))
    s.grouping = text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    s.precision = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
      s.precision = s.precision * 10 + (text[i++] - '0');
  }
  if (i < text.size())
    s.type = text[i++];
  if (i != text.size())
    el.raise(r, "ValueError", "Invalid format specifier '" + text + "'");
  return s;
}

std::string group(const std::string &digits, char separator) {
  if (!separator)
    return digits;
  std::string out;
  size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - 1 - i) % 3 == 0 && i + 1 < n)
      out += separator;
  }
  return out;
}

/// Pads `body` (after its sign/prefix `head`) to the spec's width.
std::string pad(const Spec &s, const std::string &head, const std::string &body, bool numeric) {
  std::string text = head + body;
  if (static_cast<int64_t>(text.size()) >= s.width)
    return text;
  size_t missing = static_cast<size_t>(s.width) - text.size();
  char align = s.align ? s.align : (numeric ? '>' : '<');
  char fill = s.fill;
  if (s.zeroPad && !s.align) {
    align = '=';
    fill = '0';
  }
  switch (align) {
  case '<':
    return text + std::string(missing, fill);
  case '^':
    return std::string(missing / 2, fill) + text + std::string(missing - missing / 2, fill);
  case '=':
    return head + std::string(missing, fill) + body;
  default:
    return std::string(missing, fill) + text;
  }
}

std::string signOf(const Spec &s, bool negative) {
  if (negative)
    return "-";
  return s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
}

std::string formatInt(Elaborator &el, int64_t v, const Spec &s, SourceRange r) {
  bool negative = v < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  std::string digits, prefix;
  switch (s.type) {
  case 0:
  case 'd':
  case 'n':
    digits = std::to_string(magnitude);
    break;
  case 'x':
  case 'X':
  case 'o':
  case 'b': {
    unsigned base = s.type == 'o' ? 8 : s.type == 'b' ? 2 : 16;
    const char *alphabet = s.type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
      digits.insert(digits.begin(), alphabet[magnitude % base]);
      magnitude /= base;
    } while (magnitude);
    if (s.alternate)
      prefix = std::string("0") + s.type;
    break;
  }
  case 'c':
    return pad(s, "", std::string(1, static_cast<char>(v)), false);
  default: // float codes (e, f, g, %) reach formatFloat instead
    el.raise(r, "ValueError",
             std::string("Unknown format code '") + s.type + "' for object of type 'int'");
  }
  return pad(s, signOf(s, negative) + prefix, group(digits, s.grouping), true);
}

std::string formatFloat(Elaborator &el, double v, const Spec &s, SourceRange r) {
  bool negative = std::signbit(v) && !std::isnan(v);
  double magnitude = std::fabs(v);
  std::string body;
  if (std::isnan(v) || std::isinf(v)) {
    body = std::isnan(v) ? "nan" : "inf";
    if (s.type == 'E' || s.type == 'F' || s.type == 'G')
      for (char &c : body)
        c = static_cast<char>(std::toupper(c));
    return pad(s, signOf(s, negative), body, true);
  }
  char buffer[512];
  int precision = static_cast<int>(s.precision < 0 ? 6 : std::min<int64_t>(s.precision, 100));
  switch (s.type) {
  case 'e':
  case 'E':
  case 'f':
  case 'F': {
    char format[8] = {'%', '.', '*', s.type, 0};
    std::snprintf(buffer, sizeof buffer, format, precision, magnitude);
    body = buffer;
    break;
  }
  case '%':
    std::snprintf(buffer, sizeof buffer, "%.*f", precision, magnitude * 100);
    body = std::string(buffer) + "%";
    break;
  case 'g':
  case 'G':
  case 'n':
    std::snprintf(buffer, sizeof buffer, s.type == 'G' ? "%.*G" : "%.*g",
                  precision == 0 ? 1 : precision, magnitude);
    body = buffer;
    break;
  case 0:
    if (s.precision < 0) { // repr's digits
      body = repr(*makeFloat(magnitude));
    } else {
      std::snprintf(buffer, sizeof buffer, "%.*g", precision == 0 ? 1 : precision, magnitude);
      body = buffer;
      if (body.find_first_of(".e") == std::string::npos)
        body += ".0";
    }
    break;
  default:
    el.raise(r, "ValueError",
             std::string("Unknown format code '") + s.type + "' for object of type 'float'");
  }
  if (s.grouping) {
    size_t end = body.find_first_of(".eE%");
    body = group(body.substr(0, end), s.grouping) + (end == std::string::npos ? "" : body.substr(end));
  }
  return pad(s, signOf(s, negative), body, true);
}

/// `{field}`'s value: `0`, `name`, `0.shape`, `name[1]`.
Obj fieldValue(Elaborator &el, const std::string &field, CallArgs &args, size_t &next,
               SourceRange r) {
  size_t end = field.find_first_of(".[");
  std::string head = field.substr(0, end);
  Obj v;
  if (head.empty()) {
    if (next >= args.positional.size())
      el.raise(r, "IndexError", "Replacement index " + std::to_string(next - 1) +
                                    " out of range for positional args tuple");
    v = args.positional[next++];
  } else if (std::isdigit(static_cast<unsigned char>(head[0]))) {
    size_t index = std::stoul(head) + 1;
    if (index >= args.positional.size())
      el.raise(r, "IndexError", "Replacement index " + head +
                                    " out of range for positional args tuple");
    v = args.positional[index];
  } else {
    for (const auto &[k, kv] : args.keywords)
      if (k == head)
        v = kv;
    if (!v)
      el.raise(r, "KeyError", "'" + head + "'");
  }
  while (end != std::string::npos) {
    if (field[end] == '.') {
      size_t next = field.find_first_of(".[", end + 1);
      v = getAttribute(el, v, field.substr(end + 1, next == std::string::npos ? next : next - end - 1), r);
      end = next;
    } else {
      size_t close = field.find(']', end);
      if (close == std::string::npos)
        el.raise(r, "ValueError", "Missing ']' in format string");
      std::string key = field.substr(end + 1, close - end - 1);
      bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
      v = subscript(el, v, numeric ? makeInt(std::stoll(key)) : makeStr(key), r);
      end = close + 1 < field.size() ? close + 1 : std::string::npos;
    }
  }
  return v;
}

std::string convert(const Obj &v, char conversion) {
  return conversion == 'r' || conversion == 'a' ? repr(*v) : strOf(v);
}

} // namespace

std::string formatValue(Elaborator &el, const Obj &value, const std::string &specText,
                        SourceRange r) {
  if (specText.empty())
    return strOf(value);
  Spec s = parseSpec(el, specText, r);
  if (auto *b = llvm::dyn_cast<BoolObj>(value.get()); b && (s.type == 0 || s.type == 's'))
    return pad(s, "", b->value ? "True" : "False", false);
  bool floatType = s.type && std::string("eEfFgG%").find(s.type) != std::string::npos;
  if (llvm::isa<IntObj, BoolObj>(value.get()) && !floatType) {
    int64_t v = llvm::isa<IntObj>(value.get()) ? llvm::cast<IntObj>(*value).value
                                                : llvm::cast<BoolObj>(*value).value;
    return formatInt(el, v, s, r);
  }
  if (llvm::isa<IntObj, BoolObj, FloatObj>(value.get())) {
    double v = el.toDouble(value, r, "formatted value");
    return formatFloat(el, v, s, r);
  }
  if (s.type && s.type != 's')
    el.raise(r, "ValueError", std::string("Unknown format code '") + s.type +
                                  "' for object of type '" + typeName(*value) + "'");
  std::string text = strOf(value);
  if (s.precision >= 0 && static_cast<int64_t>(text.size()) > s.precision)
    text = text.substr(0, static_cast<size_t>(s.precision));
  return pad(s, "", text, false);
}

Obj evalFormattedString(Elaborator &el, const ast::StringExpr &s) {
  std::function<std::string(const std::vector<ast::FormatPart> &)> render =
      [&](const std::vector<ast::FormatPart> &parts) {
        std::string out;
        for (const ast::FormatPart &part : parts) {
          if (!part.value) {
            out += part.literal;
            continue;
          }
          Obj v = el.eval(*part.value);
          out += part.debugText;
          std::string spec = render(part.spec);
          if (part.conversion)
            out += formatValue(el, makeStr(convert(v, part.conversion)), spec, part.value->range());
          else
            out += formatValue(el, v, spec, part.value->range());
        }
        return out;
      };
  return makeStr(render(s.parts));
}

Obj formatMethod(Elaborator &el, CallArgs &args) {
  const std::string &pattern = llvm::cast<StrObj>(*args.positional[0]).value;
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}')
      el.raise(args.range, "ValueError", "Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    // The field runs to its matching '}' (a spec may hold nested fields).
    size_t depth = 1, close = i + 1;
    for (; close < pattern.size() && depth; ++close)
      depth += pattern[close] == '{' ? 1 : pattern[close] == '}' ? -1 : 0;
    if (depth)
      el.raise(args.range, "ValueError", "unmatched '{' in format spec");
    std::string field = pattern.substr(i + 1, close - i - 2);
    std::string spec;
    char conversion = 0;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = bang + 1 < field.size() ? field[bang + 1] : 0;
      field = field.substr(0, bang);
    }
    if (spec.find('{') != std::string::npos) { // nested fields in the spec
      CallArgs inner = args;
      inner.positional[0] = makeStr(spec);
      spec = llvm::cast<StrObj>(*formatMethod(el, inner)).value;
    }
    Obj v = fieldValue(el, field, args, next, args.range);
    out += conversion ? formatValue(el, makeStr(convert(v, conversion)), spec, args.range)
                      : formatValue(el, v, spec, args.range);
    i = close - 1;
  }
  return makeStr(out);
}

Obj percentFormat(Elaborator &el, const std::string &pattern, const Obj &values, SourceRange r) {
  std::vector<Obj> items;
  if (auto *t = llvm::dyn_cast<SequenceObj>(values.get()); t && !t->isList())
    items = t->items;
  else
    items.push_back(values);
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    std::string flags;
    while (j < pattern.size() && std::string("-+ #0123456789.").find(pattern[j]) != std::string::npos)
      flags += pattern[j++];
    if (j >= pattern.size())
      el.raise(r, "ValueError", "incomplete format");
    char type = pattern[j];
    if (next >= items.size())
      el.raise(r, "TypeError", "not enough arguments for format string");
    Obj v = items[next++];
    // %-style flags map onto a format spec: '-' is left alignment.
    std::string spec;
    bool left = flags.find('-') != std::string::npos;
    for (char f : flags)
      if (f != '-')
        spec += f;
    if (left)
      spec = "<" + spec;
    if (type == 's' || type == 'r')
      out += formatValue(el, makeStr(type == 'r' ? repr(*v) : strOf(v)), spec, r);
    else if (type == 'i' || type == 'u')
      out += formatValue(el, v, spec + "d", r);
    else
      out += formatValue(el, v, spec + type, r);
    i = j;
  }
  if (next != items.size())
    el.raise(r, "TypeError", "not all arguments converted during string formatting");
  return makeStr(out);
}

} // namespace pk::elab
