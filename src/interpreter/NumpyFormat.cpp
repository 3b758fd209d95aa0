//===- NumpyFormat.cpp ----------------------------------------------------===//
#include "interpreter/NumpyFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

namespace pk {

namespace {

constexpr int kPrecision = 8;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

/// Shortest decimal digits that read back as `v` at the dtype's precision.
std::string shortest(double v, DType dtype, bool scientific) {
  for (int digits = 1; digits <= 17; ++digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, v);
    double back = std::strtod(buffer, nullptr);
    if (roundToFloatType(back, dtype) == v || digits == 17) {
      if (scientific)
        return buffer;
      // Positional: reformat with the number of fractional digits needed.
      int exponent;
      std::sscanf(std::strchr(buffer, 'e') + 1, "%d", &exponent);
      int fraction = std::max(0, digits - 1 - exponent);
      fraction = std::min(fraction, kPrecision);
      std::snprintf(buffer, sizeof buffer, "%.*f", fraction, v);
      std::string s = buffer;
      if (s.find('.') == std::string::npos)
        s += '.';
      // Trim trailing zeros produced by the precision cap.
      while (s.back() == '0' && s.find('.') != std::string::npos && s[s.size() - 2] != '.')
        s.pop_back();
      if (s.size() >= 2 && s.back() == '0' && s[s.size() - 2] == '.')
        s.pop_back();
      return s;
    }
  }
  return "?";
}

/// "1.5e+08" NumPy style: unique mantissa digits, at least 2 exponent digits.
std::string scientificText(double v, DType dtype) {
  std::string s = shortest(v, dtype, true);
  size_t e = s.find('e');
  std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
  if (mantissa.find('.') == std::string::npos)
    mantissa += '.';
  char sign = exponent[0];
  std::string digits = exponent.substr(1);
  while (digits.size() > 2 && digits[0] == '0')
    digits.erase(0, 1);
  return mantissa + "e" + sign + digits;
}

struct Formatter {
  const HostArray &array;
  std::vector<std::string> text; ///< formatted element, by flat index (only those shown)
  bool summarize;

  explicit Formatter(const HostArray &a) : array(a), summarize(a.size() > kThreshold) {}

  bool shown(int64_t flat) const {
    if (!summarize)
      return true;
    int64_t stride = array.size();
    for (int64_t d = 0; d < array.rank(); ++d) {
      int64_t dim = array.shape()[d];
      stride /= dim;
      int64_t i = (flat / stride) % dim;
      if (dim > 2 * kEdgeItems && i >= kEdgeItems && i < dim - kEdgeItems)
        return false;
    }
    return true;
  }

  void formatElements() {
    text.assign(array.size(), "");
    DType t = array.dtype();
    if (t == DType::Bool) {
      for (int64_t i = 0; i < array.size(); ++i)
        if (shown(i))
          text[i] = array.getInt(i) ? "True" : "False";
    } else if (!isFloat(t)) {
      for (int64_t i = 0; i < array.size(); ++i)
        if (shown(i)) {
          int64_t v = array.getInt(i);
          text[i] = t == DType::U64 ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
        }
    } else {
      formatFloats(t);
    }
    size_t width = 0;
    for (int64_t i = 0; i < array.size(); ++i)
      width = std::max(width, text[i].size());
    for (std::string &s : text)
      if (!s.empty())
        s = std::string(width - s.size(), ' ') + s;
  }

  void formatFloats(DType t) {
    double maxAbs = 0, minAbs = INFINITY;
    bool anyFinite = false;
    for (int64_t i = 0; i < array.size(); ++i) {
      if (!shown(i))
        continue;
      double v = array.getDouble(i);
      if (!std::isfinite(v) || v == 0)
        continue;
      anyFinite = true;
      maxAbs = std::max(maxAbs, std::fabs(v));
      minAbs = std::min(minAbs, std::fabs(v));
    }
    bool scientific = anyFinite && (maxAbs >= 1e8 || minAbs < 1e-4 || maxAbs / minAbs > 1e3);
    std::vector<std::string> raw(array.size());
    size_t intWidth = 0, fracWidth = 0;
    for (int64_t i = 0; i < array.size(); ++i) {
      if (!shown(i))
        continue;
      double v = array.getDouble(i);
      if (std::isnan(v)) {
        raw[i] = "nan";
        continue;
      }
      if (std::isinf(v)) {
        raw[i] = v > 0 ? "inf" : "-inf";
        continue;
      }
      raw[i] = scientific ? scientificText(v, t) : shortest(v, t, false);
      std::string mantissa = raw[i].substr(0, raw[i].find('e'));
      size_t dot = mantissa.find('.');
      intWidth = std::max(intWidth, dot);
      fracWidth = std::max(fracWidth, mantissa.size() - dot - 1);
    }
    for (int64_t i = 0; i < array.size(); ++i) {
      if (!shown(i))
        continue;
      std::string &s = raw[i];
      if (s == "nan" || s == "inf" || s == "-inf") {
        text[i] = std::string(intWidth + 1 + fracWidth > s.size() ? intWidth + 1 + fracWidth - s.size() : 0, ' ') + s;
        continue;
      }
      size_t e = s.find('e');
      std::string mantissa = s.substr(0, e), exponent = e == std::string::npos ? "" : s.substr(e);
      size_t dot = mantissa.find('.');
      std::string padded = std::string(intWidth - dot, ' ') + mantissa;
      size_t frac = mantissa.size() - dot - 1;
      // Scientific mantissas pad with zeros, positional ones with spaces.
      padded += std::string(fracWidth - frac, scientific ? '0' : ' ');
      text[i] = padded + exponent;
    }
  }

  /// Formats the sub-array starting at `offset` along axis `depth`.
  std::string block(int64_t depth, int64_t offset, int64_t stride) const {
    int64_t dim = array.shape()[depth];
    int64_t innerStride = stride / dim;
    std::vector<int64_t> indices;
    bool elided = summarize && dim > 2 * kEdgeItems;
    for (int64_t i = 0; i < dim; ++i)
      if (!elided || i < kEdgeItems || i >= dim - kEdgeItems)
        indices.push_back(i);
    std::string indent(depth + 1, ' ');
    if (depth == array.rank() - 1) {
      std::vector<std::string> words;
      for (size_t k = 0; k < indices.size(); ++k) {
        if (elided && k == static_cast<size_t>(kEdgeItems))
          words.push_back("...");
        words.push_back(text[offset + indices[k]]);
      }
      std::string out = "[", line = "[";
      for (size_t k = 0; k < words.size(); ++k) {
        std::string piece = (k ? " " : "") + words[k];
        if (k && line.size() + piece.size() + 1 > kLineWidth) {
          while (!out.empty() && out.back() == ' ')
            out.pop_back(); // NumPy strips the spaces that end a wrapped line
          out += "\n" + indent;
          line = indent;
          piece = words[k];
        }
        out += piece;
        line += piece;
      }
      return out + "]";
    }
    std::string separator = "\n" + std::string(static_cast<size_t>(array.rank() - depth - 2), '\n');
    std::string out = "[";
    for (size_t k = 0; k < indices.size(); ++k) {
      if (k)
        out += separator + indent;
      if (elided && k == kEdgeItems)
        out += "..." + separator + indent;
      out += block(depth + 1, offset + indices[k] * innerStride, innerStride);
    }
    return out + "]";
  }
};

} // namespace

std::string formatNumpy(const HostArray &array) {
  Formatter f(array);
  f.formatElements();
  if (array.rank() == 0) {
    std::string s = f.text[0];
    s.erase(0, s.find_first_not_of(' '));
    return s;
  }
  return f.block(0, 0, array.size());
}

} // namespace pk
