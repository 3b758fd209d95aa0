//===- SizeExpr.cpp -------------------------------------------------------===//
#include "runtime/SizeExpr.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace pk::rt {

using nlohmann::json;

bool floorDiv(int64_t a, int64_t b, int64_t &out) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
    return false;
  int64_t q = a / b; // truncates toward zero
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  out = q;
  return true;
}

bool ceilDiv(int64_t a, int64_t b, int64_t &out) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
    return false;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0)))
    ++q;
  out = q;
  return true;
}

bool pyMod(int64_t a, int64_t b, int64_t &out) {
  if (b == 0)
    return false;
  if (b == -1) { // a % -1 is 0, and INT64_MIN % -1 is undefined in C++
    out = 0;
    return true;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  out = r;
  return true;
}

SizeExpr SizeExpr::constant(int64_t value) {
  SizeExpr e;
  e.code_ = {{Op::Const, value}};
  return e;
}

bool SizeExpr::parseInto(const json &value, const std::vector<std::string> &symbols, unsigned depth,
                         std::vector<Node> &code, std::string &error) {
  if (depth > kMaxDepth) {
    error = "size expression nested deeper than " + std::to_string(kMaxDepth);
    return false;
  }
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
      error = "size " + value.dump() + " does not fit in 64-bit signed integer";
      return false;
    }
    code.push_back({Op::Const, value.get<int64_t>()});
    return true;
  }
  if (value.is_string()) {
    const std::string &name = value.get_ref<const std::string &>();
    for (size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i] == name) {
        code.push_back({Op::Symbol, int64_t(i)});
        return true;
      }
    error = "unknown symbol \"" + name + "\"";
    if (!symbols.empty()) {
      error += " (the export's symbols:";
      for (const std::string &s : symbols)
        error += " " + s;
      error += ")";
    }
    return false;
  }
  if (value.is_array()) {
    static const std::pair<const char *, Op> ops[] = {
        {"add", Op::Add},         {"sub", Op::Sub}, {"mul", Op::Mul}, {"floordiv", Op::FloorDiv},
        {"ceildiv", Op::CeilDiv}, {"mod", Op::Mod}, {"max", Op::Max}, {"min", Op::Min}};
    if (value.size() != 3 || !value[0].is_string()) {
      error = "an operation is [op, a, b], got " + std::to_string(value.size()) + " element(s)" +
              (value.empty() || value[0].is_string() ? "" : " starting with a non-string");
      return false;
    }
    const std::string &name = value[0].get_ref<const std::string &>();
    const Op *op = nullptr;
    for (const auto &[n, o] : ops)
      if (name == n)
        op = &o;
    if (!op) {
      error = "unknown operation \"" + name +
              "\"; expected add, sub, mul, floordiv, ceildiv, mod, max or min";
      return false;
    }
    if (!parseInto(value[1], symbols, depth + 1, code, error) ||
        !parseInto(value[2], symbols, depth + 1, code, error))
      return false;
    code.push_back({*op, 0});
    return true;
  }
  error = "a size expression is an integer, a symbol name or [op, a, b], got " +
          std::string(value.type_name());
  return false;
}

bool SizeExpr::parse(const json &value, const std::vector<std::string> &symbols, SizeExpr &out,
                     std::string &error) {
  std::vector<Node> code;
  if (!parseInto(value, symbols, 0, code, error))
    return false;
  out.code_ = std::move(code);
  return true;
}

bool SizeExpr::isSymbol(unsigned &index) const {
  if (code_.size() != 1 || code_[0].op != Op::Symbol)
    return false;
  index = unsigned(code_[0].value);
  return true;
}

bool SizeExpr::evaluate(const int64_t *symbols, int64_t &out, std::string &error) const {
  // Postfix over an expression at most kMaxDepth deep needs that many
  // slots plus one.
  int64_t stack[kMaxDepth + 2];
  unsigned top = 0;
  for (const Node &n : code_) {
    if (n.op == Op::Const) {
      stack[top++] = n.value;
      continue;
    }
    if (n.op == Op::Symbol) {
      stack[top++] = symbols[n.value];
      continue;
    }
    int64_t b = stack[--top], a = stack[top - 1], r = 0;
    bool ok = true;
    switch (n.op) {
    case Op::Add:
      ok = !__builtin_add_overflow(a, b, &r);
      break;
    case Op::Sub:
      ok = !__builtin_sub_overflow(a, b, &r);
      break;
    case Op::Mul:
      ok = !__builtin_mul_overflow(a, b, &r);
      break;
    case Op::FloorDiv:
      ok = floorDiv(a, b, r);
      break;
    case Op::CeilDiv:
      ok = ceilDiv(a, b, r);
      break;
    case Op::Mod:
      ok = pyMod(a, b, r);
      break;
    case Op::Max:
      r = a > b ? a : b;
      break;
    case Op::Min:
      r = a < b ? a : b;
      break;
    default:
      break;
    }
    if (!ok) {
      error = b == 0 && (n.op == Op::FloorDiv || n.op == Op::CeilDiv || n.op == Op::Mod)
                  ? "division by zero"
                  : "64-bit overflow";
      return false;
    }
    stack[top - 1] = r;
  }
  out = stack[0];
  return true;
}

std::string SizeExpr::str(const std::vector<std::string> &symbols) const {
  // Infix with the fewest parentheses: atoms and calls bind tightest (3),
  // then * (2), then + and - (1).
  struct Text {
    std::string text;
    unsigned precedence;
  };
  auto operand = [](const Text &t, unsigned needed) {
    return t.precedence < needed ? "(" + t.text + ")" : t.text;
  };
  std::vector<Text> stack;
  for (const Node &n : code_) {
    if (n.op == Op::Const) {
      stack.push_back({std::to_string(n.value), 3});
      continue;
    }
    if (n.op == Op::Symbol) {
      stack.push_back({n.value < int64_t(symbols.size()) ? symbols[n.value] : "?", 3});
      continue;
    }
    Text b = stack.back();
    stack.pop_back();
    Text a = stack.back();
    stack.pop_back();
    auto call = [&](const char *f) -> Text {
      return {std::string(f) + "(" + a.text + ", " + b.text + ")", 3};
    };
    switch (n.op) {
    case Op::Add:
      stack.push_back({operand(a, 1) + " + " + operand(b, 1), 1});
      break;
    case Op::Sub:
      stack.push_back({operand(a, 1) + " - " + operand(b, 2), 1});
      break;
    case Op::Mul:
      stack.push_back({operand(a, 2) + "*" + operand(b, 3), 2});
      break;
    case Op::FloorDiv:
      stack.push_back(call("floordiv"));
      break;
    case Op::CeilDiv:
      stack.push_back(call("ceildiv"));
      break;
    case Op::Mod:
      stack.push_back(call("mod"));
      break;
    case Op::Max:
      stack.push_back(call("max"));
      break;
    default:
      stack.push_back(call("min"));
      break;
    }
  }
  return stack.empty() ? "" : stack.back().text;
}

} // namespace pk::rt
