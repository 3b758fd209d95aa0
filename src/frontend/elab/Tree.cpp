//===- Tree.cpp -----------------------------------------------------------===//
#include "frontend/elab/Tree.h"

#include "frontend/elab/Operators.h"

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
    return def.kind == TreeDef::Kind::List ? makeList(items) : makeTuple(items);
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
  if (a.kind != b.kind || a.children.size() != b.children.size())
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

} // namespace pk::elab
