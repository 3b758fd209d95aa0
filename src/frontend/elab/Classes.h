//===- Classes.h - User classes: instances, attributes, dunders -*- C++ -*-===//
//
// `class` statements make ClassObjs; calling one makes an instance (an
// InstanceObj, or a tuple for a NamedTuple, or an enum member). Classes
// are static Python: the configuration objects, NamedTuples of arrays and
// helper classes real Pallas code writes around its kernels. Attribute
// lookup follows Python (instance, then the class and its bases), methods
// bind `self`, and property / classmethod / staticmethod work as
// descriptors; dataclasses get their generated __init__, __eq__ and
// __repr__.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_CLASSES_H
#define PK_FRONTEND_ELAB_CLASSES_H

#include "frontend/elab/Object.h"

#include <optional>

namespace pk::elab {

class Elaborator;
struct CallArgs;

/// `Cls(args)`.
Obj instantiate(Elaborator &el, const std::shared_ptr<ClassObj> &cls, CallArgs &args);
/// `value.name` for classes, instances and NamedTuple tuples; null when
/// `value` is none of them (or, for a NamedTuple, has no such name and
/// the tuple's own methods should answer).
Obj classAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);
/// `super()` and `super(Cls, obj)`.
Obj callSuper(Elaborator &el, CallArgs &args);
/// `super().name`.
Obj superAttribute(Elaborator &el, const SuperObj &sup, const std::string &name, SourceRange r);
/// `target.name = value`.
void setAttribute(Elaborator &el, const Obj &target, const std::string &name, const Obj &value,
                  SourceRange r);
/// Calls `obj.__name__(args...)` if obj's class defines it; nullopt when it
/// does not (or obj is not an instance).
std::optional<Obj> callDunder(Elaborator &el, const Obj &obj, const char *name,
                              std::vector<Obj> args, SourceRange r);
/// A dataclass instance's fields, or a NamedTuple's, as (name, value).
std::vector<std::pair<std::string, Obj>> fieldValues(const Obj &value);
/// Marks `cls` a dataclass with these options (the @dataclass decorator).
void makeDataclass(Elaborator &el, const std::shared_ptr<ClassObj> &cls, bool frozen,
                   bool kwOnly, SourceRange r);
/// A NamedTuple class with these fields (collections.namedtuple).
std::shared_ptr<ClassObj> makeNamedTupleClass(const std::string &name,
                                              const std::vector<std::string> &fields,
                                              const std::vector<Obj> &defaults);
/// Type markers for typing names and unions (`int | None`): classes
/// without behaviour, so annotations and aliases evaluate.
std::shared_ptr<ClassObj> typeMarker(const std::string &name);
/// True for what can appear in a type union: classes, builtin types,
/// None, dtypes.
bool isTypeLike(const Obj &o);
/// The class `dataclasses.field(...)` returns an instance of.
const std::shared_ptr<ClassObj> &dataclassFieldClass();

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_CLASSES_H
