//===- Operators.h - Python operators on elaborator objects -----*- C++ -*-===//
//
// `a + b` and friends: Python semantics on static values (ints, floats,
// tuples, strings), affine arithmetic on symbolic sizes, and ArrayOps for
// block values.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_OPERATORS_H
#define PK_FRONTEND_ELAB_OPERATORS_H

#include "frontend/elab/Object.h"

namespace pk::elab {

class Elaborator;

Obj binaryOperator(Elaborator &el, ast::BinaryOp op, const Obj &lhs, const Obj &rhs,
                   SourceRange r);
Obj unaryOperator(Elaborator &el, ast::UnaryOp op, const Obj &operand, SourceRange r);
Obj compareOperator(Elaborator &el, ast::CompareOp op, const Obj &lhs, const Obj &rhs,
                    SourceRange r);

/// Python `==` on static values (false for things it cannot compare).
bool staticEqual(const Obj &a, const Obj &b);

/// Dict access with Python key equality; keys must be static.
Obj dictGet(const DictObj &dict, const Obj &key);
void dictSet(Elaborator &el, DictObj &dict, const Obj &key, const Obj &value, SourceRange r);
/// Removes `key`'s entry; false when the dict has none.
bool dictErase(DictObj &dict, const Obj &key);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_OPERATORS_H
