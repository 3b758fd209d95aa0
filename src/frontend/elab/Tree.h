//===- Tree.h - Pytrees of loop carries and branch results ------*- C++ -*-===//
//
// lax.fori_loop carries, lax.cond results and variables live across dynamic
// loops and branches can be tuples, lists and dicts of values. A TreeDef
// records the structure and the static parts; the leaves are what can
// become SSA values: block values, Python numbers and symbolic sizes.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_TREE_H
#define PK_FRONTEND_ELAB_TREE_H

#include "frontend/elab/Object.h"

#include <functional>

namespace pk::elab {

struct TreeDef {
  enum class Kind { Leaf, Static, Tuple, List, Dict, Dataclass };
  Kind kind = Kind::Leaf;
  std::vector<TreeDef> children;
  std::vector<Obj> keys; ///< dict keys
  Obj staticValue;       ///< for Static; a Dataclass's instance (its static fields)
  std::shared_ptr<ClassObj> namedTuple; ///< a Tuple's NamedTuple class
};

/// Splits `value` into its structure and its leaves (appended to `leaves`).
TreeDef flatten(const Obj &value, std::vector<Obj> &leaves);
/// Rebuilds a value from a structure and leaves, consuming from `next`.
Obj unflatten(const TreeDef &def, const std::vector<Obj> &leaves, size_t &next);
/// True when both trees have the same shape and the same static parts.
bool sameStructure(const TreeDef &a, const TreeDef &b);
/// True for what flatten() treats as a leaf.
bool isLeaf(const Obj &value);

/// A dict's entries in the order JAX flattens them: string keys sorted.
std::vector<std::pair<Obj, Obj>> sortedEntries(const DictObj &dict);
/// The data fields of an instance of a class registered with
/// jax.tree_util.register_dataclass (its children as a pytree node), or
/// null for any other value.
const std::vector<std::string> *pytreeDataFields(const Obj &o);
/// A copy of such an instance with its data fields set to `values`.
Obj withDataFields(const Obj &instance, const std::vector<Obj> &values);

/// JAX's pytrees (jax.tree, pallas_call's operands): None is an empty node;
/// tuples (NamedTuples too), lists, dicts (in sorted key order) and
/// registered dataclasses (their data fields) are nodes; everything else is
/// a leaf. Appends `tree`'s leaves to `out`.
void pytreeLeaves(const Obj &tree, std::vector<Obj> &out);
/// The subtrees of `tree` at the leaves of `prefix` (JAX's
/// flatten_up_to, as jax.tree.map reads its later trees): false when
/// `tree` does not have `prefix`'s structure down to those leaves.
bool pytreeLeavesUpTo(const Obj &prefix, const Obj &tree, std::vector<Obj> &out);
/// Calls `visit` on every leaf of `o` (sequences and dicts are walked, in
/// order; everything else, None included, is a leaf).
void forEachLeaf(const Obj &o, const std::function<void(const Obj &)> &visit);
/// `o` with each leaf that `replace` maps to something (non-null) replaced;
/// unchanged containers are shared.
Obj mapLeaves(const Obj &o, const std::function<Obj(const Obj &)> &replace);
/// pytreeLeaves with each leaf's key path (JAX's tree_leaves_with_path):
/// a tuple of DictKey(key=), SequenceKey(idx=) and GetAttrKey(name=)
/// entries from the root (NamedTuple fields and dataclass fields are
/// GetAttrKeys, as in JAX).
void pytreeLeavesWithPaths(const Obj &tree, std::vector<std::pair<Obj, Obj>> &out);
/// The key classes of those paths: "DictKey", "SequenceKey", "GetAttrKey".
const std::shared_ptr<ClassObj> &pytreeKeyClass(const std::string &name);

/// `tree`'s structure with its leaves replaced from `leaves[next...]`.
Obj pytreeRebuild(const Obj &tree, const std::vector<Obj> &leaves, size_t &next);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_TREE_H
