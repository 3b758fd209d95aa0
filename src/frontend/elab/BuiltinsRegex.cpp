//===- BuiltinsRegex.cpp - Python's re module, on static strings ----------===//
//
// Module-level helpers of real kernels parse strings with `re` (megablox's
// common.py reads the TPU generation out of `device_kind` with
// `re.compile(r"TPU( v)?(\d+)").match(kind)`). pkc runs them at compile
// time with std::regex's ECMAScript grammar, which shares Python's syntax
// for what such helpers use: classes (\d \w \s [..]), groups,
// alternation, repetition (greedy and lazy) and anchors. What Python has
// and ECMAScript lacks or spells differently (named groups `(?P<..>)`,
// inline flags `(?i)`, lookbehind, `\A` `\Z`, back-references) is an
// error at the call.
//
// A Pattern and a Match are namespaces of their methods; `match[2]` reads
// a group through the Match's `__getitem__`.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"

#include <regex>

namespace pk::elab {

namespace {

constexpr int64_t kIgnoreCase = 2; // re.IGNORECASE's value in Python
// Patterns compile for libstdc++'s polynomial (Thompson NFA) matcher: no
// recursion as deep as the text, and no exponential backtracking on
// patterns such as (a*)*b, so matching always ends; it has no
// back-references, which are refused. The lengths bound its time (a
// search tries every start: (a*)*b over 4096 characters takes ~1 s).
constexpr size_t kMaxPattern = 1024, kMaxText = 4096;

struct CompiledPattern {
  std::string source;
  int64_t flags = 0;
  std::regex regex;
};

std::shared_ptr<CompiledPattern> compilePattern(Elaborator &el, const std::string &source,
                                                int64_t flags, SourceRange r) {
  for (const char *python : {"(?P<", "(?P=", "(?<=", "(?<!", "\\A", "\\Z", "(?#"})
    if (source.find(python) != std::string::npos)
      el.fail(r, std::string("re: '") + python + "' in the pattern '" + source +
                     "' is not supported (pkc matches with ECMAScript regular expressions)");
  if (source.size() > 2 && source[0] == '(' && source[1] == '?' &&
      std::isalpha(static_cast<unsigned char>(source[2])))
    el.fail(r, "re: inline flags such as '(?i)' are not supported; pass flags=re.IGNORECASE");
  if (source.size() > kMaxPattern)
    el.fail(r, "re: patterns longer than " + std::to_string(kMaxPattern) +
                   " characters are not supported at compile time");
  // Counted repetition copies its operand (a{100} is 100 states), and
  // nesting multiplies: bound the product of the counts.
  int64_t copies = 1;
  for (size_t i = source.find('{'); i != std::string::npos; i = source.find('{', i + 1)) {
    if (i > 0 && source[i - 1] == '\\')
      continue;
    int64_t largest = 0;
    for (size_t j = i + 1;
         j < source.size() &&
         (std::isdigit(static_cast<unsigned char>(source[j])) || source[j] == ',');
         ++j)
      if (std::isdigit(static_cast<unsigned char>(source[j])) &&
          (j == i + 1 || source[j - 1] == ','))
        largest =
            std::max<int64_t>(largest, std::min<int64_t>(std::atoll(source.c_str() + j), 1 << 20));
    copies *= std::max<int64_t>(largest, 1);
    if (copies > 10000)
      el.fail(r, "re: the pattern repeats too much ({m,n} counts multiplying past 10000) to "
                 "compile at compile time");
  }
  if (flags & ~kIgnoreCase)
    el.fail(r, "re: of the flags only re.IGNORECASE is supported, got " + std::to_string(flags));
  auto compiled = std::make_shared<CompiledPattern>();
  compiled->source = source;
  compiled->flags = flags;
  try {
    auto syntax = std::regex::ECMAScript | std::regex_constants::__polynomial;
    if (flags & kIgnoreCase)
      syntax |= std::regex::icase;
    compiled->regex = std::regex(source, syntax);
  } catch (const std::regex_error &e) {
    el.fail(r, "re: the pattern '" + source + "' is not a regular expression pkc reads (" +
                   e.what() + ")");
  }
  return compiled;
}

/// The string a pattern is matched against.
std::string textArg(Elaborator &el, const Obj &o, SourceRange r) {
  std::string text = el.toStr(o, r, "string");
  if (text.size() > kMaxText)
    el.fail(r, "re: strings longer than " + std::to_string(kMaxText) +
                   " characters are not matched at compile time");
  return text;
}

Obj makeMatch(const std::string &text, const std::smatch &m) {
  auto match = std::make_shared<NamespaceObj>("re.Match");
  std::vector<Obj> groups;
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t i = 0; i < m.size(); ++i) {
    groups.push_back(m[i].matched ? makeStr(m[i].str()) : none());
    spans.push_back(m[i].matched
                        ? std::pair<int64_t, int64_t>(m.position(i), m.position(i) + m.length(i))
                        : std::pair<int64_t, int64_t>(-1, -1));
  }
  auto groupIndex = [groups](Elaborator &el, const Obj &o, SourceRange r) -> size_t {
    int64_t g = el.toInt(o, r, "group");
    if (g < 0 || g >= static_cast<int64_t>(groups.size()))
      el.raise(r, "IndexError", "no such group");
    return static_cast<size_t>(g);
  };
  match->members["string"] = makeStr(text);
  match->members["__getitem__"] =
      builtin("re.Match.__getitem__", [groups, groupIndex](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"group"}});
        return groups[groupIndex(el, a[0], a.range(0))];
      });
  match->members["group"] =
      builtin("re.Match.group", [groups, groupIndex](Elaborator &el, CallArgs &args) -> Obj {
        if (args.positional.empty())
          return groups[0];
        std::vector<Obj> picked;
        for (size_t i = 0; i < args.positional.size(); ++i)
          picked.push_back(groups[groupIndex(el, args.positional[i], args.rangeOf(i))]);
        return picked.size() == 1 ? picked[0] : makeTuple(picked);
      });
  match->members["groups"] =
      builtin("re.Match.groups", [groups](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"default", none()}});
        std::vector<Obj> rest;
        for (size_t i = 1; i < groups.size(); ++i)
          rest.push_back(isNone(groups[i]) ? a[0] : groups[i]);
        return makeTuple(rest);
      });
  auto position = [spans, groupIndex](bool end, bool both) {
    return [=](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"group", makeInt(0)}});
      auto [from, to] = spans[groupIndex(el, a[0], a.range(0))];
      if (both)
        return makeTuple({makeInt(from), makeInt(to)});
      return makeInt(end ? to : from);
    };
  };
  match->members["start"] = builtin("re.Match.start", position(false, false));
  match->members["end"] = builtin("re.Match.end", position(true, false));
  match->members["span"] = builtin("re.Match.span", position(false, true));
  return match;
}

enum class Anchor { Start, Anywhere, Whole };

Obj find(const CompiledPattern &p, const std::string &text, Anchor anchor) {
  std::smatch m;
  bool found = anchor == Anchor::Whole ? std::regex_match(text, m, p.regex)
               : anchor == Anchor::Start
                   ? std::regex_search(text, m, p.regex, std::regex_constants::match_continuous)
                   : std::regex_search(text, m, p.regex);
  return found ? makeMatch(text, m) : none();
}

Obj findAll(const CompiledPattern &p, const std::string &text) {
  std::vector<Obj> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), p.regex);
       it != std::sregex_iterator(); ++it) {
    const std::smatch &m = *it;
    if (m.size() <= 1) {
      found.push_back(makeStr(m.str()));
    } else if (m.size() == 2) {
      found.push_back(makeStr(m[1].str()));
    } else {
      std::vector<Obj> groups;
      for (size_t i = 1; i < m.size(); ++i)
        groups.push_back(makeStr(m[i].str()));
      found.push_back(makeTuple(groups));
    }
  }
  return makeList(found);
}

/// Python's replacement syntax (\1, \g<1>) as ECMAScript's ($1).
std::string ecmaReplacement(Elaborator &el, const std::string &repl, SourceRange r) {
  std::string out;
  for (size_t i = 0; i < repl.size(); ++i) {
    char c = repl[i];
    if (c == '$') {
      out += "$$";
    } else if (c == '\\' && i + 1 < repl.size() &&
               std::isdigit(static_cast<unsigned char>(repl[i + 1]))) {
      out += '$';
      out += repl[++i];
    } else if (c == '\\' && repl.compare(i, 3, "\\g<") == 0) {
      size_t close = repl.find('>', i);
      std::string group = close == std::string::npos ? "" : repl.substr(i + 3, close - i - 3);
      if (group.empty() || !std::all_of(group.begin(), group.end(), ::isdigit))
        el.fail(r, "re.sub: only numbered groups (\\1, \\g<1>) are supported in the replacement");
      out += "$" + group;
      i = close;
    } else if (c == '\\' && i + 1 < repl.size() && repl[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

Obj substitute(Elaborator &el, const CompiledPattern &p, const Obj &repl, const std::string &text,
               int64_t count, SourceRange r) {
  if (!llvm::isa<StrObj>(repl.get()))
    el.fail(r, "re.sub: the replacement must be a string (a function is not supported)");
  std::string format = ecmaReplacement(el, llvm::cast<StrObj>(*repl).value, r);
  if (count <= 0)
    return makeStr(std::regex_replace(text, p.regex, format));
  std::string out;
  auto last = text.cbegin();
  int64_t done = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), p.regex);
       it != std::sregex_iterator() && done < count; ++it, ++done) {
    out.append(last, (*it)[0].first);
    out += it->format(format);
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return makeStr(out);
}

Obj makePattern(const std::shared_ptr<CompiledPattern> &p) {
  auto pattern = std::make_shared<NamespaceObj>("re.Pattern");
  pattern->members["pattern"] = makeStr(p->source);
  pattern->members["flags"] = makeInt(p->flags);
  auto finder = [p](Anchor anchor, const char *name) {
    return builtin(name, [p, anchor](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"string"}});
      return find(*p, textArg(el, a[0], a.range(0)), anchor);
    });
  };
  pattern->members["match"] = finder(Anchor::Start, "re.Pattern.match");
  pattern->members["search"] = finder(Anchor::Anywhere, "re.Pattern.search");
  pattern->members["fullmatch"] = finder(Anchor::Whole, "re.Pattern.fullmatch");
  pattern->members["findall"] =
      builtin("re.Pattern.findall", [p](Elaborator &el, CallArgs &args) -> Obj {
        BoundArgs a = el.bind(args, {{"string"}});
        return findAll(*p, textArg(el, a[0], a.range(0)));
      });
  pattern->members["sub"] = builtin("re.Pattern.sub", [p](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"repl"}, {"string"}, {"count", makeInt(0)}});
    return substitute(el, *p, a[0], textArg(el, a[1], a.range(1)),
                      el.toInt(a[2], a.range(2), "count"), args.range);
  });
  return pattern;
}

/// The pattern argument of a module-level function: a string or a Pattern.
std::shared_ptr<CompiledPattern> patternOf(Elaborator &el, const Obj &o, const Obj &flags,
                                           SourceRange r, SourceRange flagsRange) {
  if (auto *ns = llvm::dyn_cast<NamespaceObj>(o.get()); ns && ns->name == "re.Pattern")
    return compilePattern(el, llvm::cast<StrObj>(*ns->members.at("pattern")).value,
                          llvm::cast<IntObj>(*ns->members.at("flags")).value, r);
  return compilePattern(el, el.toStr(o, r, "pattern"), el.toInt(flags, flagsRange, "flags"), r);
}

} // namespace

std::shared_ptr<NamespaceObj> makeRegexModule() {
  auto ns = std::make_shared<NamespaceObj>("re");
  NamespaceObj &n = *ns;
  n.members["IGNORECASE"] = makeInt(kIgnoreCase);
  n.members["I"] = makeInt(kIgnoreCase);
  define(n, "compile", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"pattern"}, {"flags", makeInt(0)}});
    return makePattern(patternOf(el, a[0], a[1], a.range(0), a.range(1)));
  });
  for (auto [name, how] : {std::pair{"match", Anchor::Start},
                           {"search", Anchor::Anywhere},
                           {"fullmatch", Anchor::Whole}})
    define(n, name, [anchor = how](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"pattern"}, {"string"}, {"flags", makeInt(0)}});
      return find(*patternOf(el, a[0], a[2], a.range(0), a.range(2)), textArg(el, a[1], a.range(1)),
                  anchor);
    });
  define(n, "findall", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"pattern"}, {"string"}, {"flags", makeInt(0)}});
    return findAll(*patternOf(el, a[0], a[2], a.range(0), a.range(2)),
                   textArg(el, a[1], a.range(1)));
  });
  define(n, "sub", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(
        args, {{"pattern"}, {"repl"}, {"string"}, {"count", makeInt(0)}, {"flags", makeInt(0)}});
    return substitute(el, *patternOf(el, a[0], a[4], a.range(0), a.range(4)), a[1],
                      textArg(el, a[2], a.range(2)), el.toInt(a[3], a.range(3), "count"),
                      args.range);
  });
  define(n, "escape", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"pattern"}});
    std::string text = el.toStr(a[0], a.range(0), "pattern"), out;
    for (char c : text) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && !(c & 0x80))
        out += '\\';
      out += c;
    }
    return makeStr(out);
  });
  return ns;
}

} // namespace pk::elab
