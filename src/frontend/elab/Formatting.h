//===- Formatting.h - str(), format specs, str.format, f-strings -*- C++ -*-===//
//
// Python's text formatting on static values: str() and repr(), the format
// specification mini-language (`{x:>8.3f}`), str.format and f-strings. A
// message built this way (`raise ValueError(f"{n=} must be ...")`, a
// kernel's `name=f"..."`) reads as it would in Python.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_FORMATTING_H
#define PK_FRONTEND_ELAB_FORMATTING_H

#include "frontend/elab/Object.h"

namespace pk::elab {

class Elaborator;
struct CallArgs;

/// Python's str(): a string's own text, repr() for the rest.
std::string strOf(const Obj &o);
/// format(value, spec).
std::string formatValue(Elaborator &el, const Obj &value, const std::string &spec, SourceRange r);
/// Evaluates an f-string.
Obj evalFormattedString(Elaborator &el, const ast::StringExpr &s);
/// `pattern.format(*args, **kwargs)`: args.positional[0] is the pattern.
Obj formatMethod(Elaborator &el, CallArgs &args);
/// `pattern % values`.
Obj percentFormat(Elaborator &el, const std::string &pattern, const Obj &values, SourceRange r);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_FORMATTING_H
