//===- Tree.cpp -----------------------------------------------------------===//
#include "frontend/elab/Tree.h"

#include "frontend/elab/Classes.h"
#include "frontend/elab/Operators.h"

#include <algorithm>

namespace pk::elab {

bool isLeaf(const Obj &value) {
  return llvm::isa<ArrayObj, IntObj, FloatObj, BoolObj, SymIntObj>(value.get());
}

/// A dict's entries in the order JAX flattens them: string keys sorted.
std::vector<std::pair<Obj, Obj>> sortedEntries(const DictObj &dict) {
  std::vector<std::pair<Obj, Obj>> entries = dict.entries;
  std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
    auto *x = llvm::dyn_cast<StrObj>(a.first.get());
    auto *y = llvm::dyn_cast<StrObj>(b.first.get());
    return x && y && x->value < y->value;
  });
  return entries;
}

const std::vector<std::string> *pytreeDataFields(const Obj &o) {
  auto *inst = llvm::dyn_cast<InstanceObj>(o.get());
  if (!inst || !inst->cls->pytreeDataFields)
    return nullptr;
  return &*inst->cls->pytreeDataFields;
}

Obj withDataFields(const Obj &instance, const std::vector<Obj> &values) {
  const auto &inst = llvm::cast<InstanceObj>(*instance);
  auto copy = std::make_shared<InstanceObj>(inst.cls);
  copy->attributes = inst.attributes;
  const std::vector<std::string> &fields = *inst.cls->pytreeDataFields;
  for (size_t i = 0; i < fields.size(); ++i)
    copy->set(fields[i], values[i]);
  copy->initialized = true;
  return copy;
}

namespace {

/// The values of a registered dataclass's data fields (None where unset).
std::vector<Obj> dataFieldValues(const Obj &o) {
  const auto &inst = llvm::cast<InstanceObj>(*o);
  std::vector<Obj> values;
  for (const std::string &name : *pytreeDataFields(o)) {
    Obj v = inst.get(name);
    values.push_back(v ? v : none());
  }
  return values;
}

} // namespace

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
  if (pytreeDataFields(value)) {
    def.kind = TreeDef::Kind::Dataclass;
    def.staticValue = value;
    for (const Obj &v : dataFieldValues(value))
      def.children.push_back(flatten(v, leaves));
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
  case TreeDef::Kind::Dataclass: {
    std::vector<Obj> values;
    for (const TreeDef &child : def.children)
      values.push_back(unflatten(child, leaves, next));
    return withDataFields(def.staticValue, values);
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
  if (a.kind == TreeDef::Kind::Dataclass) {
    // One class, and equal static (meta) fields.
    const auto &x = llvm::cast<InstanceObj>(*a.staticValue);
    const auto &y = llvm::cast<InstanceObj>(*b.staticValue);
    if (x.cls != y.cls)
      return false;
    const std::vector<std::string> &data = *x.cls->pytreeDataFields;
    for (const auto &[name, value] : x.attributes) {
      if (llvm::is_contained(data, name))
        continue;
      Obj other = y.get(name);
      if (!other || !staticEqual(value, other))
        return false;
    }
  }
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
  if (pytreeDataFields(tree)) {
    for (const Obj &v : dataFieldValues(tree))
      pytreeLeaves(v, out);
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(tree.get())) {
    // JAX flattens dicts in sorted key order.
    std::vector<std::pair<Obj, Obj>> entries = sortedEntries(*dict);
    for (const auto &[k, v] : entries)
      pytreeLeaves(v, out);
    return;
  }
  out.push_back(tree);
}

bool pytreeLeavesUpTo(const Obj &prefix, const Obj &tree, std::vector<Obj> &out) {
  if (isNone(prefix))
    return isNone(tree);
  if (auto *p = llvm::dyn_cast<SequenceObj>(prefix.get())) {
    auto *t = llvm::dyn_cast<SequenceObj>(tree.get());
    if (!t || t->kind() != p->kind() || t->items.size() != p->items.size())
      return false;
    for (size_t i = 0; i < p->items.size(); ++i)
      if (!pytreeLeavesUpTo(p->items[i], t->items[i], out))
        return false;
    return true;
  }
  if (const std::vector<std::string> *fields = pytreeDataFields(prefix)) {
    if (pytreeDataFields(tree) != fields)
      return false;
    std::vector<Obj> p = dataFieldValues(prefix), t = dataFieldValues(tree);
    for (size_t i = 0; i < p.size(); ++i)
      if (!pytreeLeavesUpTo(p[i], t[i], out))
        return false;
    return true;
  }
  if (auto *p = llvm::dyn_cast<DictObj>(prefix.get())) {
    auto *t = llvm::dyn_cast<DictObj>(tree.get());
    if (!t || t->entries.size() != p->entries.size())
      return false;
    std::vector<std::pair<Obj, Obj>> pe = sortedEntries(*p), te = sortedEntries(*t);
    for (size_t i = 0; i < pe.size(); ++i)
      if (!staticEqual(pe[i].first, te[i].first) ||
          !pytreeLeavesUpTo(pe[i].second, te[i].second, out))
        return false;
    return true;
  }
  out.push_back(tree); // a leaf of the prefix: the whole subtree
  return true;
}

const std::shared_ptr<ClassObj> &pytreeKeyClass(const std::string &name) {
  static const std::shared_ptr<ClassObj> dictKey = makeNamedTupleClass("DictKey", {"key"}, {});
  static const std::shared_ptr<ClassObj> sequenceKey =
      makeNamedTupleClass("SequenceKey", {"idx"}, {});
  static const std::shared_ptr<ClassObj> attrKey = makeNamedTupleClass("GetAttrKey", {"name"}, {});
  return name == "DictKey" ? dictKey : name == "SequenceKey" ? sequenceKey : attrKey;
}

namespace {

Obj key(const char *kind, const Obj &value) {
  auto entry = std::make_shared<SequenceObj>(Object::Kind::Tuple, std::vector<Obj>{value});
  entry->namedTuple = pytreeKeyClass(kind);
  return entry;
}

void withPaths(const Obj &tree, std::vector<Obj> &path, std::vector<std::pair<Obj, Obj>> &out) {
  auto child = [&](Obj entry, const Obj &value) {
    path.push_back(std::move(entry));
    withPaths(value, path, out);
    path.pop_back();
  };
  if (isNone(tree))
    return;
  if (auto *seq = llvm::dyn_cast<SequenceObj>(tree.get())) {
    std::vector<ClassObj::Field> fields;
    if (seq->namedTuple)
      fields = seq->namedTuple->fields();
    for (size_t i = 0; i < seq->items.size(); ++i)
      child(i < fields.size() ? key("GetAttrKey", makeStr(fields[i].name))
                              : key("SequenceKey", makeInt(static_cast<int64_t>(i))),
            seq->items[i]);
    return;
  }
  if (const std::vector<std::string> *fields = pytreeDataFields(tree)) {
    std::vector<Obj> values = dataFieldValues(tree);
    for (size_t i = 0; i < fields->size(); ++i)
      child(key("GetAttrKey", makeStr((*fields)[i])), values[i]);
    return;
  }
  if (auto *dict = llvm::dyn_cast<DictObj>(tree.get())) {
    std::vector<std::pair<Obj, Obj>> entries = sortedEntries(*dict);
    for (const auto &[k, v] : entries)
      child(key("DictKey", k), v);
    return;
  }
  out.emplace_back(makeTuple(path), tree);
}

} // namespace

void pytreeLeavesWithPaths(const Obj &tree, std::vector<std::pair<Obj, Obj>> &out) {
  std::vector<Obj> path;
  withPaths(tree, path, out);
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
  if (pytreeDataFields(tree)) {
    std::vector<Obj> values;
    for (const Obj &v : dataFieldValues(tree))
      values.push_back(pytreeRebuild(v, leaves, next));
    return withDataFields(tree, values);
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
  if (pytreeDataFields(o)) {
    std::vector<Obj> old = dataFieldValues(o), values;
    bool changed = false;
    for (const Obj &v : old) {
      values.push_back(mapLeaves(v, replace));
      changed |= values.back() != v;
    }
    return changed ? withDataFields(o, values) : o;
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
  if (pytreeDataFields(o)) {
    for (const Obj &v : dataFieldValues(o))
      forEachLeaf(v, visit);
    return;
  }
  visit(o);
}

} // namespace pk::elab
