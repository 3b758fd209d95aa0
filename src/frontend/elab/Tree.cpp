//===- Tree.cpp -----------------------------------------------------------===//
#include "frontend/elab/Tree.h"

#include "frontend/elab/Operators.h"

#include <algorithm>

namespace pk::elab {

bool isLeaf(const Obj &value) {
  return llvm::isa<ArrayObj, IntObj, FloatObj, BoolObj, SymIntObj>(value.get());
}

TreeDef flatten(const Obj &value, std::vector<Obj> &leaves) {
  TreeDef def;
  if (isLeaf(value)) {
    def.kind = TreeDef::Kind::Leaf;
    leaves.push_back(value);
    return def;
  }
  if (auto *seq = llvm::dyn_cast<SequenceObj>(value.get())) {
    def.kind = seq->isList() ? TreeDef::Kind::List : TreeDef::Kind::Tuple;
    def.namedTuple = seq->namedTuple;
    for (const Obj &item : seq->items)
      def.children.push_back(flatten(item, leaves));
    return def;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(value.get())) {
    def.kind = TreeDef::Kind::Dict;
    for (const auto &[k, v] : dict->entries) {
      def.keys.push_back(k);
      def.children.push_back(flatten(v, leaves));
    }
    return def;
  }
  def.kind = TreeDef::Kind::Static;
  def.staticValue = value;
  return def;
}

Obj unflatten(const TreeDef &def, const std::vector<Obj> &leaves, size_t &next) {
  switch (def.kind) {
  case TreeDef::Kind::Leaf:
    return leaves[next++];
  case TreeDef::Kind::Static:
    return def.staticValue;
  case TreeDef::Kind::Tuple:
  case TreeDef::Kind::List: {
    std::vector<Obj> items;
    for (const TreeDef &child : def.children)
      items.push_back(unflatten(child, leaves, next));
    if (def.kind == TreeDef::Kind::List)
      return makeList(items);
    auto tuple = std::make_shared<SequenceObj>(Object::Kind::Tuple, std::move(items));
    tuple->namedTuple = def.namedTuple;
    return tuple;
  }
  case TreeDef::Kind::Dict: {
    auto dict = std::make_shared<DictObj>();
    for (size_t i = 0; i < def.children.size(); ++i)
      dict->entries.emplace_back(def.keys[i], unflatten(def.children[i], leaves, next));
    return dict;
  }
  }
  return none();
}

bool sameStructure(const TreeDef &a, const TreeDef &b) {
  if (a.kind != b.kind || a.children.size() != b.children.size() || a.namedTuple != b.namedTuple)
    return false;
  if (a.kind == TreeDef::Kind::Static)
    return a.staticValue.get() == b.staticValue.get() || staticEqual(a.staticValue, b.staticValue);
  for (size_t i = 0; i < a.keys.size(); ++i)
    if (!staticEqual(a.keys[i], b.keys[i]))
      return false;
  for (size_t i = 0; i < a.children.size(); ++i)
    if (!sameStructure(a.children[i], b.children[i]))
      return false;
  return true;
}

void pytreeLeaves(const Obj &tree, std::vector<Obj> &out) {
  if (isNone(tree))
    return;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(tree.get())) {
    for (const Obj &item : seq->items)
      pytreeLeaves(item, out);
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(tree.get())) {
    // JAX flattens dicts in sorted key order.
    std::vector<std::pair<Obj, Obj>> entries = dict->entries;
    std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
      auto *x = llvm::dyn_cast<StrObj>(a.first.get());
      auto *y = llvm::dyn_cast<StrObj>(b.first.get());
      return x && y && x->value < y->value;
    });
    for (const auto &[k, v] : entries)
      pytreeLeaves(v, out);
    return;
  }
  out.push_back(tree);
}

/// Rebuilds `tree`'s structure with leaves from `leaves` (consumed in order).
Obj pytreeRebuild(const Obj &tree, const std::vector<Obj> &leaves, size_t &next) {
  if (isNone(tree))
    return tree;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(tree.get())) {
    auto copy = std::make_shared<SequenceObj>(seq->kind(), std::vector<Obj>());
    copy->namedTuple = seq->namedTuple;
    for (const Obj &item : seq->items)
      copy->items.push_back(pytreeRebuild(item, leaves, next));
    return copy;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(tree.get())) {
    std::vector<size_t> order(dict->entries.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      auto *x = llvm::dyn_cast<StrObj>(dict->entries[a].first.get());
      auto *y = llvm::dyn_cast<StrObj>(dict->entries[b].first.get());
      return x && y && x->value < y->value;
    });
    std::vector<Obj> values(order.size());
    for (size_t i : order)
      values[i] = pytreeRebuild(dict->entries[i].second, leaves, next);
    auto copy = std::make_shared<DictObj>();
    for (size_t i = 0; i < values.size(); ++i)
      copy->entries.emplace_back(dict->entries[i].first, values[i]);
    return copy;
  }
  return leaves[next++];
}


Obj mapLeaves(const Obj &o, const std::function<Obj(const Obj &)> &replace) {
  if (Obj r = replace(o))
    return r;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    auto copy = std::make_shared<SequenceObj>(seq->kind(), std::vector<Obj>());
    copy->namedTuple = seq->namedTuple;
    bool changed = false;
    for (const Obj &item : seq->items) {
      copy->items.push_back(mapLeaves(item, replace));
      changed |= copy->items.back() != item;
    }
    return changed ? copy : o;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
    auto copy = std::make_shared<DictObj>();
    bool changed = false;
    for (const auto &[k, v] : dict->entries) {
      copy->entries.emplace_back(k, mapLeaves(v, replace));
      changed |= copy->entries.back().second != v;
    }
    return changed ? copy : o;
  }
  return o;
}

void forEachLeaf(const Obj &o, const std::function<void(const Obj &)> &visit) {
  if (auto *seq = llvm::dyn_cast<SequenceObj>(o.get())) {
    for (const Obj &item : seq->items)
      forEachLeaf(item, visit);
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(o.get())) {
    for (const auto &[k, v] : dict->entries)
      forEachLeaf(v, visit);
    return;
  }
  visit(o);
}

} // namespace pk::elab
