//===- Sets.cpp - Python sets and frozensets at compile time --------------===//
#include "frontend/elab/Sets.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"

namespace pk::elab {

namespace {

using ast::BinaryOp;
using ast::CompareOp;

SetObj &self(CallArgs &args) { return llvm::cast<SetObj>(*args.positional[0]); }

/// The items of every positional argument after `self`, one list each
/// (set.union(a, b) takes any iterables).
std::vector<std::vector<Obj>> iterables(Elaborator &el, CallArgs &args, const char *name) {
  if (!args.keywords.empty())
    el.fail(args.range, std::string("set.") + name + "() takes no keyword arguments");
  std::vector<std::vector<Obj>> out;
  for (size_t i = 1; i < args.positional.size(); ++i)
    out.push_back(el.iterate(args.positional[i], args.rangeOf(i)));
  return out;
}

std::shared_ptr<SetObj> copyOf(const SetObj &set) {
  auto out = std::make_shared<SetObj>(set.frozen);
  out->items = set.items;
  return out;
}

/// `set & other`, `set - other` and `set ^ other` on item lists.
std::shared_ptr<SetObj> combine(Elaborator &el, const SetObj &set, const std::vector<Obj> &other,
                                BinaryOp op, SourceRange r) {
  std::shared_ptr<SetObj> rhs = makeSet(el, other, true, r);
  auto out = std::make_shared<SetObj>(set.frozen);
  for (const Obj &item : set.items) {
    bool inOther = setContains(*rhs, item);
    if ((op == BinaryOp::BitAnd) == inOther)
      out->items.push_back(item);
  }
  if (op == BinaryOp::BitXor)
    for (const Obj &item : rhs->items)
      if (!setContains(set, item))
        out->items.push_back(item);
  return out;
}

/// CPython's hash of an int: the value modulo 2^61 - 1, keeping its sign,
/// with -1 (an error code in C) made -2.
int64_t pythonIntHash(int64_t v) {
  constexpr uint64_t modulus = (uint64_t(1) << 61) - 1;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int64_t h = static_cast<int64_t>(magnitude % modulus);
  if (v < 0)
    h = -h;
  return h == -1 ? -2 : h;
}

bool isSubset(const SetObj &a, const SetObj &b) {
  for (const Obj &item : a.items)
    if (!setContains(b, item))
      return false;
  return true;
}

} // namespace

const Object *firstUnhashable(const Obj &o) {
  switch (o->kind()) {
  case Object::Kind::List:
  case Object::Kind::Dict:
  case Object::Kind::Array:
  case Object::Kind::Ref:
  case Object::Kind::GlobalArray:
  case Object::Kind::StaticArray:
    return o.get();
  case Object::Kind::Set:
    return llvm::cast<SetObj>(*o).frozen ? nullptr : o.get();
  case Object::Kind::Tuple:
    for (const Obj &item : llvm::cast<SequenceObj>(*o).items)
      if (const Object *inner = firstUnhashable(item))
        return inner;
    return nullptr;
  default:
    return nullptr;
  }
}

void checkHashable(Elaborator &el, const Obj &o, SourceRange r) {
  if (const Object *bad = firstUnhashable(o))
    el.fail(r, "unhashable type: '" + typeName(*bad) + "'");
}

std::shared_ptr<SetObj> makeSet(Elaborator &el, const std::vector<Obj> &items, bool frozen,
                                SourceRange r) {
  auto set = std::make_shared<SetObj>(frozen);
  for (const Obj &item : items)
    setAdd(el, *set, item, r);
  return set;
}

bool setContains(const SetObj &set, const Obj &item) {
  for (const Obj &member : set.items)
    if (staticEqual(member, item))
      return true;
  return false;
}

void setAdd(Elaborator &el, SetObj &set, const Obj &item, SourceRange r) {
  checkHashable(el, item, r);
  if (!setContains(set, item))
    set.items.push_back(item);
}

std::vector<Obj> setIterationOrder(const SetObj &set) {
  std::vector<uint64_t> hashes;
  for (const Obj &item : set.items) {
    if (!llvm::isa<IntObj, BoolObj>(item.get()))
      return set.items;
    int64_t v = llvm::isa<IntObj>(item.get()) ? llvm::cast<IntObj>(*item).value
                                              : llvm::cast<BoolObj>(*item).value;
    hashes.push_back(static_cast<uint64_t>(pythonIntHash(v)));
  }
  // Objects/setobject.c: a table of 8 slots to start, probed 9 slots
  // linearly, then perturbed; grown (its entries reinserted in slot order)
  // once 3/5 full.
  constexpr size_t linearProbes = 9, perturbShift = 5;
  std::vector<int64_t> table(8, -1);
  auto insert = [&](std::vector<int64_t> &slots, size_t index) {
    size_t mask = slots.size() - 1;
    uint64_t perturb = hashes[index];
    size_t i = hashes[index] & mask;
    while (true) {
      size_t probes = i + linearProbes <= mask ? linearProbes : 0;
      for (size_t j = 0; j <= probes; ++j)
        if (slots[i + j] < 0) {
          slots[i + j] = static_cast<int64_t>(index);
          return;
        }
      perturb >>= perturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  };
  for (size_t n = 0; n < hashes.size(); ++n) {
    insert(table, n);
    size_t used = n + 1, mask = table.size() - 1;
    if (used * 5 < mask * 3)
      continue;
    size_t size = 8, wanted = used > 50000 ? used * 2 : used * 4;
    while (size <= wanted)
      size <<= 1;
    std::vector<int64_t> grown(size, -1);
    for (int64_t index : table)
      if (index >= 0)
        insert(grown, static_cast<size_t>(index));
    table = std::move(grown);
  }
  std::vector<Obj> order;
  for (int64_t index : table)
    if (index >= 0)
      order.push_back(set.items[static_cast<size_t>(index)]);
  return order;
}

bool setsEqual(const SetObj &a, const SetObj &b) {
  return a.items.size() == b.items.size() && isSubset(a, b);
}

Obj setOperator(Elaborator &el, BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r) {
  auto *a = llvm::dyn_cast<SetObj>(lhs.get());
  auto *b = llvm::dyn_cast<SetObj>(rhs.get());
  if (!a || !b)
    return nullptr;
  switch (op) {
  case BinaryOp::BitOr: {
    // CPython copies the left set and adds the right one's items in its
    // iteration order.
    std::shared_ptr<SetObj> out = copyOf(*a);
    for (const Obj &item : setIterationOrder(*b))
      setAdd(el, *out, item, r);
    return out;
  }
  case BinaryOp::BitAnd:
  case BinaryOp::Sub:
  case BinaryOp::BitXor:
    return combine(el, *a, b->items, op, r);
  default:
    return nullptr;
  }
}

std::optional<bool> setOrder(CompareOp op, const Obj &lhs, const Obj &rhs) {
  auto *a = llvm::dyn_cast<SetObj>(lhs.get());
  auto *b = llvm::dyn_cast<SetObj>(rhs.get());
  if (!a || !b)
    return std::nullopt;
  switch (op) {
  case CompareOp::Le:
    return isSubset(*a, *b);
  case CompareOp::Lt:
    return isSubset(*a, *b) && a->items.size() < b->items.size();
  case CompareOp::Ge:
    return isSubset(*b, *a);
  case CompareOp::Gt:
    return isSubset(*b, *a) && b->items.size() < a->items.size();
  default:
    return std::nullopt;
  }
}

Obj setMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  const auto &set = llvm::cast<SetObj>(*value);
  // What a frozenset has too: the methods that make new sets or test.
  if (name == "copy")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      return copyOf(self(args));
    });
  if (name == "union")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      std::shared_ptr<SetObj> out = copyOf(self(args));
      for (const std::vector<Obj> &items : iterables(el, args, "union"))
        for (const Obj &item : items)
          setAdd(el, *out, item, args.range);
      return out;
    });
  if (name == "intersection" || name == "difference")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      std::shared_ptr<SetObj> out = copyOf(self(args));
      BinaryOp op = name == "intersection" ? BinaryOp::BitAnd : BinaryOp::Sub;
      for (const std::vector<Obj> &items : iterables(el, args, name.c_str()))
        out = combine(el, *out, items, op, args.range);
      return out;
    });
  if (name == "symmetric_difference")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"other"}});
      return combine(el, self(args), el.iterate(a[1], a.range(1)), BinaryOp::BitXor, args.range);
    });
  if (name == "issubset" || name == "issuperset" || name == "isdisjoint")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"other"}});
      std::shared_ptr<SetObj> other = makeSet(el, el.iterate(a[1], a.range(1)), true, a.range(1));
      if (name == "issubset")
        return makeBool(isSubset(self(args), *other));
      if (name == "issuperset")
        return makeBool(isSubset(*other, self(args)));
      return makeBool(
          combine(el, self(args), other->items, BinaryOp::BitAnd, args.range)->items.empty());
    });
  if (set.frozen)
    el.fail(r, "'frozenset' object has no attribute '" + name + "'");
  // A set's own: the methods that change it.
  if (name == "add" || name == "discard" || name == "remove")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"self"}, {"elem"}});
      SetObj &set = self(args);
      if (name == "add") {
        setAdd(el, set, a[1], a.range(1));
        return none();
      }
      checkHashable(el, a[1], a.range(1));
      auto it = std::find_if(set.items.begin(), set.items.end(),
                             [&](const Obj &item) { return staticEqual(item, a[1]); });
      if (it != set.items.end())
        set.items.erase(it);
      else if (name == "remove")
        el.fail(args.range, "KeyError: " + repr(*a[1]) + " is not in the set");
      return none();
    });
  if (name == "update" || name == "intersection_update" || name == "difference_update")
    return method(value, name, [name](Elaborator &el, CallArgs &args) -> Obj {
      SetObj &set = self(args);
      for (const std::vector<Obj> &items : iterables(el, args, name.c_str())) {
        if (name == "update")
          for (const Obj &item : items)
            setAdd(el, set, item, args.range);
        else
          set.items =
              combine(el, set, items,
                      name == "intersection_update" ? BinaryOp::BitAnd : BinaryOp::Sub, args.range)
                  ->items;
      }
      return none();
    });
  if (name == "pop")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      SetObj &set = self(args);
      if (set.items.empty())
        el.fail(args.range, "KeyError: 'pop from an empty set'");
      Obj first = setIterationOrder(set).front();
      set.items.erase(std::find(set.items.begin(), set.items.end(), first));
      return first;
    });
  if (name == "clear")
    return method(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"self"}});
      self(args).items.clear();
      return none();
    });
  el.fail(r, "'set' object has no attribute '" + name + "'");
}

void installSetBuiltins(std::unordered_map<std::string, Obj> &builtins) {
  for (bool frozen : {false, true}) {
    std::string name = frozen ? "frozenset" : "set";
    builtins[name] =
        std::make_shared<BuiltinObj>(name, [frozen](Elaborator &el, CallArgs &args) -> Obj {
          BoundArgs a = el.bind(args, {{"iterable", makeTuple({})}});
          return makeSet(el, el.iterate(a[0], a.range(0)), frozen, a.range(0));
        });
  }
}

} // namespace pk::elab
