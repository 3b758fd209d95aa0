//===- SizeExpr.h - Size expressions over an export's symbols ---*- C++ -*-===//
//
// Shapes, grids and byte counts in the manifest are size expressions: an
// integer, a symbol name, or [op, a, b] (docs/manifest.md). They are read
// once, into postfix code, and evaluated at every launch with 64-bit
// checked arithmetic and Python's rounding for floordiv, ceildiv and mod.
// Evaluation allocates nothing.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_SIZEEXPR_H
#define PK_RUNTIME_SIZEEXPR_H

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pk::rt {

class SizeExpr {
public:
  /// Deeper expressions are refused when read; it bounds the evaluation
  /// stack (and the reader's recursion).
  static constexpr unsigned kMaxDepth = 32;

  SizeExpr() = default;
  static SizeExpr constant(int64_t value);

  /// Reads `value`; symbols are looked up in `symbols`. On failure returns
  /// false and sets `error` (which does not name where `value` is).
  static bool parse(const nlohmann::json &value, const std::vector<std::string> &symbols,
                    SizeExpr &out, std::string &error);

  /// Evaluates with `symbols[i]` the value of symbol i. On overflow or a
  /// division by zero returns false and sets `error`.
  bool evaluate(const int64_t *symbols, int64_t &out, std::string &error) const;
  /// Evaluates an expression known to be constant (isConstant()).
  int64_t constantValue() const { return code_.front().value; }

  bool isConstant() const { return code_.size() == 1 && code_[0].op == Op::Const; }
  /// True (and the index) when the expression is a lone symbol.
  bool isSymbol(unsigned &index) const;
  /// "ceildiv(N, 1024)", "2*N + 1": for messages.
  std::string str(const std::vector<std::string> &symbols) const;

private:
  enum class Op : uint8_t { Const, Symbol, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Max, Min };
  struct Node {
    Op op;
    int64_t value; ///< the constant, or the symbol's index
  };
  static bool parseInto(const nlohmann::json &value, const std::vector<std::string> &symbols,
                        unsigned depth, std::vector<Node> &code, std::string &error);
  std::vector<Node> code_ = {{Op::Const, 0}}; ///< postfix
};

/// Python's a // b, a ceildiv b, a % b on 64-bit integers. Return false on
/// a zero divisor or overflow (INT64_MIN // -1).
bool floorDiv(int64_t a, int64_t b, int64_t &out);
bool ceilDiv(int64_t a, int64_t b, int64_t &out);
bool pyMod(int64_t a, int64_t b, int64_t &out);

} // namespace pk::rt

#endif // PK_RUNTIME_SIZEEXPR_H
