//===- StrMethods.cpp - Methods of Python's str and int -------------------===//
//
// What the host-side code of real kernels calls on strings and ints at
// compile time: parsing a device kind (`kind.endswith("v5e")`), an
// environment flag (`os.environ.get(...).strip().lower()`), rounding to a
// power of two (`(n - 1).bit_length()`). Strings are byte strings here, as
// .pk sources are ASCII where it matters: the character classes are
// ASCII's.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Formatting.h"

#include "llvm/ADT/bit.h"
#include <algorithm>

#include <cctype>
#include <optional>

namespace pk::elab {

namespace {

const std::string &self(const BoundArgs &a) { return llvm::cast<StrObj>(*a[0]).value; }

std::string str(Elaborator &el, const BoundArgs &a, size_t i, const char *what) {
  return el.toStr(a[i], a.range(i), what);
}

/// `s[start:end]`'s bounds for the optional start= and end= of find(),
/// count(), startswith(), ..., clamped as slicing clamps them; nullopt
/// when start lies past the end, where CPython finds nothing (not even
/// an empty string).
std::optional<std::pair<size_t, size_t>> window(Elaborator &el, const BoundArgs &a, size_t start,
                                                size_t size) {
  auto bound = [&](size_t i, int64_t fallback) {
    if (isNone(a[i]))
      return fallback;
    int64_t v = el.toInt(a[i], a.range(i), "index");
    if (v < 0)
      v = std::max<int64_t>(v + static_cast<int64_t>(size), 0);
    return v;
  };
  int64_t n = static_cast<int64_t>(size);
  int64_t lo = bound(start, 0), hi = std::min(bound(start + 1, n), n);
  if (lo > n)
    return std::nullopt;
  return std::make_pair(static_cast<size_t>(lo), static_cast<size_t>(std::max(lo, hi)));
}

bool isSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

/// str.split / rsplit: on runs of whitespace without a separator (empty
/// ends dropped), else on each separator; at most `maxsplit` splits from
/// the left (or the right).
std::vector<std::string> split(Elaborator &el, const std::string &s, const Obj &sep,
                               int64_t maxsplit, bool fromRight, SourceRange r) {
  std::vector<std::string> parts;
  if (isNone(sep)) {
    std::vector<std::pair<size_t, size_t>> words;
    for (size_t i = 0; i < s.size();) {
      while (i < s.size() && isSpace(s[i]))
        ++i;
      size_t j = i;
      while (j < s.size() && !isSpace(s[j]))
        ++j;
      if (j > i)
        words.push_back({i, j});
      i = j;
    }
    // CPython: past `maxsplit` words the rest of the string is one more
    // part, its whitespace on the far side kept.
    if (maxsplit < 0 || static_cast<int64_t>(words.size()) <= maxsplit) {
      for (auto [i, j] : words)
        parts.push_back(s.substr(i, j - i));
      return parts;
    }
    size_t keep = static_cast<size_t>(maxsplit);
    if (!fromRight) {
      for (size_t w = 0; w < keep; ++w)
        parts.push_back(s.substr(words[w].first, words[w].second - words[w].first));
      parts.push_back(s.substr(words[keep].first));
    } else {
      size_t first = words.size() - keep;
      parts.push_back(s.substr(0, words[first - 1].second));
      for (size_t w = first; w < words.size(); ++w)
        parts.push_back(s.substr(words[w].first, words[w].second - words[w].first));
    }
    return parts;
  }
  std::string separator = el.toStr(sep, r, "separator");
  if (separator.empty())
    el.raise(r, "ValueError", "empty separator");
  std::vector<size_t> cuts;
  for (size_t at = s.find(separator); at != std::string::npos;
       at = s.find(separator, at + separator.size()))
    cuts.push_back(at);
  if (maxsplit >= 0 && static_cast<int64_t>(cuts.size()) > maxsplit) {
    if (fromRight)
      cuts.erase(cuts.begin(), cuts.end() - maxsplit);
    else
      cuts.resize(static_cast<size_t>(maxsplit));
  }
  size_t begin = 0;
  for (size_t at : cuts) {
    parts.push_back(s.substr(begin, at - begin));
    begin = at + separator.size();
  }
  parts.push_back(s.substr(begin));
  return parts;
}

Obj strings(const std::vector<std::string> &parts) {
  std::vector<Obj> items;
  for (const std::string &p : parts)
    items.push_back(makeStr(p));
  return makeList(items);
}

} // namespace

Obj strMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (name == "format")
    return method(value, name, formatMethod);
  if (name == "join")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"iterable"}});
      std::string out;
      bool first = true;
      for (const Obj &item : el.iterate(a[1], a.range(1))) {
        out += (first ? "" : self(a)) + el.toStr(item, a.range(1), "joined item");
        first = false;
      }
      return makeStr(out);
    });
  if (name == "upper" || name == "lower" || name == "casefold" || name == "swapcase" ||
      name == "capitalize" || name == "title")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}});
      std::string s = self(a);
      bool wordStart = true;
      for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        int out = c;
        if (name == "upper")
          out = std::toupper(c);
        else if (name == "lower" || name == "casefold")
          out = std::tolower(c);
        else if (name == "swapcase")
          out = std::isupper(c) ? std::tolower(c) : std::toupper(c);
        else if (name == "capitalize")
          out = i == 0 ? std::toupper(c) : std::tolower(c);
        else // title: a letter after a non-letter starts a word
          out = wordStart ? std::toupper(c) : std::tolower(c);
        wordStart = !std::isalpha(c);
        s[i] = static_cast<char>(out);
      }
      return makeStr(s);
    });
  if (name == "startswith" || name == "endswith")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"prefix"}, {"start", none()}, {"end", none()}});
      auto bounds = window(el, a, 2, self(a).size());
      if (!bounds)
        return makeBool(false);
      auto [lo, hi] = *bounds;
      std::string s = self(a).substr(lo, hi - lo);
      std::vector<Obj> options = llvm::isa<SequenceObj>(a[1].get()) ? el.iterate(a[1], a.range(1))
                                                                    : std::vector<Obj>{a[1]};
      for (const Obj &option : options) {
        std::string p = el.toStr(option, a.range(1), name.c_str());
        if (p.size() <= s.size() &&
            (name == "startswith" ? s.compare(0, p.size(), p) == 0
                                  : s.compare(s.size() - p.size(), p.size(), p) == 0))
          return makeBool(true);
      }
      return makeBool(false);
    });
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"chars", none()}});
      std::string s = self(a);
      std::string chars = isNone(a[1]) ? std::string() : str(el, a, 1, "chars");
      auto strips = [&](char c) {
        return isNone(a[1]) ? isSpace(c) : chars.find(c) != std::string::npos;
      };
      size_t lo = 0, hi = s.size();
      if (name != "rstrip")
        while (lo < hi && strips(s[lo]))
          ++lo;
      if (name != "lstrip")
        while (hi > lo && strips(s[hi - 1]))
          --hi;
      return makeStr(s.substr(lo, hi - lo));
    });
  if (name == "removeprefix" || name == "removesuffix")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"affix"}});
      std::string s = self(a), p = str(el, a, 1, name.c_str());
      if (p.size() <= s.size()) {
        if (name == "removeprefix" && s.compare(0, p.size(), p) == 0)
          return makeStr(s.substr(p.size()));
        if (name == "removesuffix" && !p.empty() &&
            s.compare(s.size() - p.size(), p.size(), p) == 0)
          return makeStr(s.substr(0, s.size() - p.size()));
      }
      return makeStr(s);
    });
  if (name == "split" || name == "rsplit")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"sep", none()}, {"maxsplit", makeInt(-1)}});
      return strings(split(el, self(a), a[1], el.toInt(a[2], a.range(2), "maxsplit"),
                           name == "rsplit", a.range(1)));
    });
  if (name == "splitlines")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"keepends", makeBool(false)}});
      bool keep = el.truthy(a[1], a.range(1));
      std::vector<std::string> lines;
      const std::string &s = self(a);
      size_t begin = 0;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] == '\n' || s[i] == '\r') {
          size_t end = i;
          if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')
            ++i;
          lines.push_back(s.substr(begin, (keep ? i + 1 : end) - begin));
          begin = i + 1;
        }
      if (begin < s.size())
        lines.push_back(s.substr(begin));
      return strings(lines);
    });
  if (name == "partition" || name == "rpartition")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"sep"}});
      const std::string &s = self(a);
      std::string sep = str(el, a, 1, "separator");
      if (sep.empty())
        el.raise(args.range, "ValueError", "empty separator");
      size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
      if (at == std::string::npos)
        return name == "partition" ? makeTuple({makeStr(s), makeStr(""), makeStr("")})
                                   : makeTuple({makeStr(""), makeStr(""), makeStr(s)});
      return makeTuple(
          {makeStr(s.substr(0, at)), makeStr(sep), makeStr(s.substr(at + sep.size()))});
    });
  if (name == "replace")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"old"}, {"new"}, {"count", makeInt(-1)}});
      std::string s = self(a), from = str(el, a, 1, "old"), to = str(el, a, 2, "new"), out;
      int64_t left = el.toInt(a[3], a.range(3), "count");
      size_t begin = 0;
      while (left != 0) {
        size_t at =
            from.empty() ? (begin <= s.size() ? begin : std::string::npos) : s.find(from, begin);
        if (at == std::string::npos)
          break;
        out += s.substr(begin, at - begin) + to;
        if (from.empty()) { // "ab".replace("", "-") is "-a-b-"
          if (at < s.size())
            out += s[at];
          begin = at + 1;
        } else {
          begin = at + from.size();
        }
        if (left > 0)
          --left;
      }
      if (begin <= s.size())
        out += s.substr(begin);
      return makeStr(out);
    });
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"sub"}, {"start", none()}, {"end", none()}});
      const std::string &s = self(a);
      std::string sub = str(el, a, 1, "substring");
      auto bounds = window(el, a, 2, s.size());
      if (!bounds) {
        if (name == "count")
          return makeInt(0);
        if (name == "index" || name == "rindex")
          el.raise(args.range, "ValueError", "substring not found");
        return makeInt(-1);
      }
      auto [lo, hi] = *bounds;
      std::string part = s.substr(lo, hi - lo);
      if (name == "count") {
        if (sub.empty())
          return makeInt(static_cast<int64_t>(part.size() + 1));
        int64_t n = 0;
        for (size_t at = part.find(sub); at != std::string::npos;
             at = part.find(sub, at + sub.size()))
          ++n;
        return makeInt(n);
      }
      bool right = name == "rfind" || name == "rindex";
      size_t at = right ? part.rfind(sub) : part.find(sub);
      if (at == std::string::npos) {
        if (name == "index" || name == "rindex")
          el.raise(args.range, "ValueError", "substring not found");
        return makeInt(-1);
      }
      return makeInt(static_cast<int64_t>(at + lo));
    });
  if (name == "isdigit" || name == "isdecimal" || name == "isnumeric" || name == "isalpha" ||
      name == "isalnum" || name == "isspace" || name == "isupper" || name == "islower" ||
      name == "isidentifier")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}});
      const std::string &s = self(a);
      auto all = [&](int (*test)(int)) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
          return test(static_cast<unsigned char>(c)) != 0;
        });
      };
      if (name == "isdigit" || name == "isdecimal" || name == "isnumeric")
        return makeBool(all(std::isdigit));
      if (name == "isalpha")
        return makeBool(all(std::isalpha));
      if (name == "isalnum")
        return makeBool(all(std::isalnum));
      if (name == "isspace")
        return makeBool(all(std::isspace));
      if (name == "isidentifier")
        return makeBool(!s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
                        std::all_of(s.begin(), s.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                        }));
      // isupper / islower: some cased letter, and none of the other case.
      bool cased = false, other = false;
      for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        cased |= name == "isupper" ? std::isupper(c) != 0 : std::islower(c) != 0;
        other |= name == "isupper" ? std::islower(c) != 0 : std::isupper(c) != 0;
      }
      return makeBool(cased && !other);
    });
  if (name == "zfill" || name == "ljust" || name == "rjust" || name == "center")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"width"}, {"fillchar", makeStr(" ")}});
      std::string s = self(a), fill = str(el, a, 2, "fillchar");
      if (fill.size() != 1)
        el.raise(args.range, "TypeError", "The fill character must be exactly one character long");
      int64_t width = el.toInt(a[1], a.range(1), "width");
      if (width <= static_cast<int64_t>(s.size()))
        return makeStr(s);
      size_t pad = static_cast<size_t>(width) - s.size();
      if (name == "zfill") {
        size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
        return makeStr(s.substr(0, sign) + std::string(pad, '0') + s.substr(sign));
      }
      if (name == "ljust")
        return makeStr(s + std::string(pad, fill[0]));
      if (name == "rjust")
        return makeStr(std::string(pad, fill[0]) + s);
      // center: CPython puts the odd extra fill on the left when the width is odd.
      size_t left = pad / 2 + (pad & static_cast<size_t>(width) & 1);
      return makeStr(std::string(left, fill[0]) + s + std::string(pad - left, fill[0]));
    });
  el.fail(r, "'str' object has no attribute '" + name + "'");
}

Obj intMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (name == "bit_length" || name == "bit_count")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}});
      int64_t v = el.toInt(a[0], a.range(0), "int");
      uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      if (name == "bit_count")
        return makeInt(llvm::popcount(magnitude));
      return makeInt(64 - llvm::countl_zero(magnitude));
    });
  if (name == "real" || name == "numerator")
    return makeInt(el.toInt(value, r, "int"));
  if (name == "imag")
    return makeInt(0);
  if (name == "denominator")
    return makeInt(1);
  el.fail(r, "'" + typeName(*value) + "' object has no attribute '" + name + "'");
}

} // namespace pk::elab
