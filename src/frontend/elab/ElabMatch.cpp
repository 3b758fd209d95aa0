//===- ElabMatch.cpp - The match statement --------------------------------===//
//
// `match` runs statically, as the rest of a program's Python does: the
// subject is a static value (a dtype, a tuple of shapes, a config object)
// and each case's pattern is tried in order with PEP 634's semantics. A
// pattern that needs a traced value's truth (`case 0:` on an array) is the
// same error `if` gives. The names a pattern binds are assigned once the
// whole pattern has matched.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Classes.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"

namespace pk::elab {

using namespace ast;

namespace {

using Bindings = std::vector<std::pair<std::string, Obj>>;

/// Python's collections.abc.Sequence for a pattern: tuples, lists and
/// ranges, not strings.
bool isSequence(const Obj &o) { return llvm::isa<SequenceObj, RangeObj>(o.get()); }

/// Builtin classes whose one positional sub-pattern matches the subject
/// itself (`case int(n):`).
bool matchesItself(const Obj &cls) {
  auto *builtin = llvm::dyn_cast<BuiltinObj>(cls.get());
  if (!builtin)
    return false;
  static const char *const names[] = {"bool", "bytearray", "bytes", "dict", "float", "frozenset",
                                      "int",  "list",      "set",   "str",  "tuple"};
  return std::find(std::begin(names), std::end(names), builtin->name) != std::end(names);
}

class PatternMatcher {
public:
  explicit PatternMatcher(Elaborator &el) : el(el) {}

  bool match(const Pattern &p, const Obj &subject, Bindings &bound) {
    switch (p.kind) {
    case Pattern::Kind::Wildcard:
      return true;
    case Pattern::Kind::Capture:
      bound.emplace_back(p.name, subject);
      return true;
    case Pattern::Kind::Value:
      return el.truthy(compareOperator(el, CompareOp::Eq, subject, el.eval(*p.value), p.range),
                       p.range);
    case Pattern::Kind::Singleton:
      return el.truthy(compareOperator(el, CompareOp::Is, subject, el.eval(*p.value), p.range),
                       p.range);
    case Pattern::Kind::As:
      if (!match(p.elements[0], subject, bound))
        return false;
      bound.emplace_back(p.name, subject);
      return true;
    case Pattern::Kind::Or:
      for (const Pattern &alternative : p.elements) {
        Bindings tried;
        if (match(alternative, subject, tried)) {
          bound.insert(bound.end(), tried.begin(), tried.end());
          return true;
        }
      }
      return false;
    case Pattern::Kind::Sequence:
      return matchSequence(p, subject, bound);
    case Pattern::Kind::Class:
      return matchClass(p, subject, bound);
    case Pattern::Kind::Mapping:
      return matchMapping(p, subject, bound);
    case Pattern::Kind::Star:
      break; // only inside a sequence
    }
    el.fail(p.range, "a star pattern is only allowed in a sequence pattern");
  }

private:
  bool matchSequence(const Pattern &p, const Obj &subject, Bindings &bound) {
    if (!isSequence(subject))
      return false;
    std::vector<Obj> items = el.iterate(subject, p.range);
    size_t star = p.elements.size();
    for (size_t i = 0; i < p.elements.size(); ++i)
      if (p.elements[i].kind == Pattern::Kind::Star)
        star = i;
    if (star == p.elements.size()) {
      if (items.size() != p.elements.size())
        return false;
      for (size_t i = 0; i < items.size(); ++i)
        if (!match(p.elements[i], items[i], bound))
          return false;
      return true;
    }
    size_t after = p.elements.size() - star - 1;
    if (items.size() < p.elements.size() - 1)
      return false;
    for (size_t i = 0; i < star; ++i)
      if (!match(p.elements[i], items[i], bound))
        return false;
    for (size_t i = 0; i < after; ++i)
      if (!match(p.elements[star + 1 + i], items[items.size() - after + i], bound))
        return false;
    if (!p.elements[star].name.empty())
      bound.emplace_back(p.elements[star].name,
                         makeList(std::vector<Obj>(items.begin() + star, items.end() - after)));
    return true;
  }

  bool matchClass(const Pattern &p, const Obj &subject, Bindings &bound) {
    Obj cls = el.eval(*p.value);
    if (!llvm::isa<ClassObj, BuiltinObj>(cls.get()))
      el.fail(p.value->range(), "called match pattern must be a class");
    if (!isInstanceOf(el, subject, cls, p.value->range()))
      return false;
    std::vector<std::string> names;
    if (!p.elements.empty()) {
      if (matchesItself(cls)) {
        if (p.elements.size() > 1)
          el.fail(p.range, typeName(*cls) + "() accepts 1 positional sub-pattern (" +
                               std::to_string(p.elements.size()) + " given)");
        if (!match(p.elements[0], subject, bound))
          return false;
      } else {
        names = matchArgs(p, cls, subject);
        for (size_t i = 0; i < p.elements.size(); ++i)
          if (!matchAttribute(p.elements[i], subject, names[i], bound))
            return false;
      }
    }
    for (size_t i = 0; i < p.keywords.size(); ++i) {
      if (std::find(names.begin(), names.end(), p.keywords[i]) != names.end())
        el.fail(p.range, "attribute name repeated in class pattern: " + p.keywords[i]);
      if (!matchAttribute(p.keywordPatterns[i], subject, p.keywords[i], bound))
        return false;
    }
    return true;
  }

  /// The attribute names positional sub-patterns stand for: the class's
  /// `__match_args__`, or a dataclass's or NamedTuple's fields (which is
  /// what Python generates for them).
  std::vector<std::string> matchArgs(const Pattern &p, const Obj &cls, const Obj &subject) {
    std::vector<std::string> names;
    auto *c = llvm::dyn_cast<ClassObj>(cls.get());
    if (Obj declared = c ? c->lookup("__match_args__") : Obj()) {
      for (const Obj &name : el.iterate(declared, p.range))
        names.push_back(el.toStr(name, p.range, "__match_args__ item"));
    } else {
      for (const auto &field : fieldValues(subject))
        names.push_back(field.first);
    }
    if (p.elements.size() > names.size())
      el.fail(p.range, typeName(*cls) + "() accepts " + std::to_string(names.size()) +
                           " positional sub-pattern" + (names.size() == 1 ? "" : "s") + " (" +
                           std::to_string(p.elements.size()) + " given)");
    return names;
  }

  bool matchAttribute(const Pattern &p, const Obj &subject, const std::string &name,
                      Bindings &bound) {
    Obj value;
    try {
      value = getAttribute(el, subject, name, p.range);
    } catch (const ElabError &) {
      return false; // a missing attribute fails the match, as in Python
    }
    return match(p, value, bound);
  }

  bool matchMapping(const Pattern &p, const Obj &subject, Bindings &bound) {
    auto *dict = llvm::dyn_cast<DictObj>(subject.get());
    if (!dict)
      return false;
    std::vector<Obj> keys;
    for (size_t i = 0; i < p.keys.size(); ++i) {
      Obj key = el.eval(*p.keys[i]);
      for (const Obj &seen : keys)
        if (staticEqual(seen, key))
          el.fail(p.keys[i]->range(), "mapping pattern checks duplicate key");
      keys.push_back(key);
      Obj value = dictGet(*dict, key);
      if (!value || !match(p.elements[i], value, bound))
        return false;
    }
    if (!p.name.empty()) {
      auto rest = std::make_shared<DictObj>();
      for (const auto &entry : dict->entries)
        if (std::none_of(keys.begin(), keys.end(),
                         [&](const Obj &k) { return staticEqual(k, entry.first); }))
          rest->entries.push_back(entry);
      bound.emplace_back(p.name, rest);
    }
    return true;
  }

  Elaborator &el;
};

} // namespace

Flow Elaborator::execMatch(const MatchStmt &s) {
  Obj subject = eval(*s.subject);
  PatternMatcher matcher(*this);
  for (const MatchStmt::Case &c : s.cases) {
    spendFuel(c.pattern.range);
    Bindings bound;
    if (!matcher.match(c.pattern, subject, bound))
      continue;
    for (const auto &[name, value] : bound)
      setVariable(name, value);
    if (c.guard && !truthy(eval(*c.guard), c.guard->range()))
      continue;
    return exec(c.body);
  }
  return Flow::Normal;
}

} // namespace pk::elab
