//===- Sets.h - Python sets and frozensets at compile time -----*- C++ -*-===//
//
// `{a, b}`, `{x for x in xs}`, set() and frozenset(): sets of static values
// with Python's operators (| & - ^, subset comparisons, `in`) and methods.
// They live only while the program runs at compile time, like lists.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_SETS_H
#define PK_FRONTEND_ELAB_SETS_H

#include "frontend/elab/Object.h"

#include <optional>
#include <unordered_map>

namespace pk::elab {

class Elaborator;

/// Fails, as Python's TypeError, unless `o` may be a dict key or a set
/// element: not a list, dict, set or array, nor a tuple holding one.
void checkHashable(Elaborator &el, const Obj &o, SourceRange r);
/// The first unhashable value inside `o` (itself, or an item of a tuple),
/// or null.
const Object *firstUnhashable(const Obj &o);

/// A set (or frozenset) of `items`, duplicates dropped.
std::shared_ptr<SetObj> makeSet(Elaborator &el, const std::vector<Obj> &items, bool frozen,
                                SourceRange r);
bool setContains(const SetObj &set, const Obj &item);
void setAdd(Elaborator &el, SetObj &set, const Obj &item, SourceRange r);
/// The items in the order Python iterates them, as far as pkc follows
/// CPython: for a set of ints (and bools), the order of CPython's hash
/// table built by adding them in turn, which is CPython's order for sets
/// made by set(), .add, set(iterable) and comprehensions (checked on
/// random sets) and ascending for small non-negative ints. A set CPython
/// builds otherwise (a literal it folds into a constant, |, -, ^, which
/// presize or leave deleted slots) holds the same items but may iterate
/// differently. Other sets: the order items were added (CPython's order
/// for strings changes from run to run).
std::vector<Obj> setIterationOrder(const SetObj &set);
/// Whether two sets hold the same items (a set equals a frozenset).
bool setsEqual(const SetObj &a, const SetObj &b);

/// `a | b`, `a & b`, `a - b`, `a ^ b` when both are sets; null otherwise.
Obj setOperator(Elaborator &el, ast::BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
/// `<`, `<=`, `>`, `>=` between sets: proper subset, subset, ...
std::optional<bool> setOrder(ast::CompareOp op, const Obj &lhs, const Obj &rhs);

/// A set's method (`add`, `union`, `issubset`, ...).
Obj setMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);

/// The builtins `set` and `frozenset`.
void installSetBuiltins(std::unordered_map<std::string, Obj> &builtins);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_SETS_H
