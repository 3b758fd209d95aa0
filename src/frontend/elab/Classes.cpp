//===- Classes.cpp - `class` statements, instances and attribute access ---===//
//
// A class body runs once, at its `class` statement, in a frame of its own
// whose names become the class's attributes (functions defined there close
// over the enclosing scope, not the class body, as in Python). Annotated
// names in the body are recorded in order: they are a dataclass's or a
// NamedTuple's fields. Decorators then apply; @dataclasses.dataclass marks
// the class (makeDataclass).
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Classes.h"

#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"

#include "llvm/ADT/StringExtras.h"

namespace pk::elab {

namespace {

Obj boundMethod(const Obj &self, const std::string &name, const Obj &function) {
  return std::make_shared<BoundMethodObj>(
      self, name, [function](Elaborator &el, CallArgs &args) { return el.call(function, args); });
}

/// What looking `name` up on an instance (or a NamedTuple tuple) finds in
/// its class: functions bind `self`, descriptors apply.
Obj bindForInstance(Elaborator &el, const Obj &self, const std::shared_ptr<ClassObj> &cls,
                    const std::string &name, const Obj &found, SourceRange r) {
  if (auto *d = llvm::dyn_cast<DescriptorObj>(found.get())) {
    switch (d->which) {
    case DescriptorObj::Which::Property: {
      CallArgs args;
      args.range = r;
      args.callee = name;
      args.addPositional(self, r);
      return el.call(d->function, args);
    }
    case DescriptorObj::Which::ClassMethod:
      return boundMethod(cls, name, d->function);
    case DescriptorObj::Which::StaticMethod:
      return d->function;
    }
  }
  if (llvm::isa<FunctionObj, PartialObj, CustomDerivativeObj>(found.get()))
    return boundMethod(self, name, found);
  return found;
}

/// What looking `name` up on the class `cls` itself finds: classmethods
/// bind the class, staticmethods and the rest are as defined.
Obj bindForClass(const std::shared_ptr<ClassObj> &cls, const std::string &name, const Obj &found) {
  if (auto *d = llvm::dyn_cast<DescriptorObj>(found.get())) {
    if (d->which == DescriptorObj::Which::ClassMethod)
      return boundMethod(cls, name, d->function);
    if (d->which == DescriptorObj::Which::StaticMethod)
      return d->function;
  }
  return found;
}

/// Binds a dataclass's (or NamedTuple's) fields from a call's arguments,
/// as its generated __init__ would.
std::vector<std::pair<std::string, Obj>> bindFields(Elaborator &el, const ClassObj &cls,
                                                    CallArgs &args) {
  std::vector<ClassObj::Field> fields = cls.fields();
  std::vector<std::pair<std::string, Obj>> values;
  std::vector<bool> bound(fields.size(), false);
  std::vector<Obj> slots(fields.size());
  std::string fname = cls.name + "()";
  size_t next = 0;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    while (next < fields.size() && (!fields[next].init || fields[next].kwOnly))
      ++next;
    if (next == fields.size())
      el.fail(args.range, fname + " takes " + std::to_string(i) + " positional argument" +
                              (i == 1 ? "" : "s") + " but " +
                              std::to_string(args.positional.size()) + " were given");
    slots[next] = args.positional[i];
    bound[next++] = true;
  }
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    const std::string &name = args.keywords[k].first;
    const Obj &value = args.keywords[k].second;
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const ClassObj::Field &f) { return f.name == name && f.init; });
    if (it == fields.end())
      el.fail(args.rangeOfKeyword(name), fname + " got an unexpected keyword argument '" + name + "'");
    size_t i = static_cast<size_t>(it - fields.begin());
    if (bound[i])
      el.fail(args.rangeOfKeyword(name), fname + " got multiple values for argument '" + name + "'");
    slots[i] = value;
    bound[i] = true;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (bound[i]) {
      values.emplace_back(fields[i].name, slots[i]);
      continue;
    }
    if (fields[i].defaultFactory) {
      CallArgs none;
      none.range = args.range;
      values.emplace_back(fields[i].name, el.call(fields[i].defaultFactory, none));
    } else if (fields[i].defaultValue) {
      values.emplace_back(fields[i].name, fields[i].defaultValue);
    } else if (fields[i].init) {
      missing.push_back("'" + fields[i].name + "'");
    }
  }
  if (!missing.empty())
    el.fail(args.range, fname + " missing " + std::to_string(missing.size()) +
                            " required argument" + (missing.size() == 1 ? "" : "s") + ": " +
                            llvm::join(missing, ", "));
  return values;
}

/// Calls a user method found on a class with `self` first.
Obj callMethod(Elaborator &el, const Obj &self, const Obj &method, const std::string &name,
               CallArgs &args) {
  CallArgs call = args;
  call.positional.insert(call.positional.begin(), self);
  call.positionalRanges.insert(call.positionalRanges.begin(), args.range);
  call.callee = name;
  return el.call(method, call);
}

bool isExceptionClass(const ClassObj &cls) {
  for (const ClassObj *c : cls.mro())
    if (!c->builtinBase.empty() &&
        (c->builtinBase.find("Error") != std::string::npos || c->builtinBase == "Exception"))
      return true;
  return false;
}

} // namespace

const std::shared_ptr<ClassObj> &dataclassFieldClass() {
  static std::shared_ptr<ClassObj> field = [] {
    auto c = std::make_shared<ClassObj>();
    c->name = "Field";
    c->builtinBase = "dataclasses.Field";
    return c;
  }();
  return field;
}

std::shared_ptr<ClassObj> typeMarker(const std::string &name) {
  auto c = std::make_shared<ClassObj>();
  c->name = name;
  c->builtinBase = name;
  return c;
}

bool isTypeLike(const Obj &o) {
  if (llvm::isa<ClassObj, NoneObj, DTypeObj, ExtendedDTypeObj>(o.get()))
    return true;
  if (auto *b = llvm::dyn_cast<BuiltinObj>(o.get()))
    return b->name == "int" || b->name == "float" || b->name == "str" || b->name == "bool" ||
           b->name == "tuple" || b->name == "list" || b->name == "dict" || b->name == "set" ||
           b->name == "frozenset" || b->name == "jax.Array" || b->name == "jax.Ref" ||
           b->name == "slice" || b->name == "type";
  return false;
}

void makeDataclass(Elaborator &el, const std::shared_ptr<ClassObj> &cls, bool frozen, bool kwOnly,
                   SourceRange r) {
  cls->isDataclass = true;
  cls->frozen = frozen;
  if (kwOnly)
    for (ClassObj::Field &f : cls->annotated)
      f.kwOnly = true;
  // As Python: a field without a default may not follow one with a default
  // (among the positional ones).
  bool sawDefault = false;
  for (const ClassObj::Field &f : cls->fields()) {
    if (!f.init || f.kwOnly)
      continue;
    bool hasDefault = f.defaultValue || f.defaultFactory;
    if (sawDefault && !hasDefault)
      el.fail(r, "non-default argument '" + f.name + "' follows default argument in dataclass '" +
                     cls->name + "'");
    sawDefault |= hasDefault;
  }
}

std::shared_ptr<ClassObj> makeNamedTupleClass(const std::string &name,
                                              const std::vector<std::string> &fields,
                                              const std::vector<Obj> &defaults) {
  auto cls = std::make_shared<ClassObj>();
  cls->name = name;
  cls->isNamedTuple = true;
  size_t firstDefault = fields.size() - std::min(fields.size(), defaults.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    ClassObj::Field f;
    f.name = fields[i];
    if (i >= firstDefault)
      f.defaultValue = defaults[i - firstDefault];
    cls->annotated.push_back(f);
  }
  return cls;
}

std::vector<std::pair<std::string, Obj>> fieldValues(const Obj &value) {
  std::vector<std::pair<std::string, Obj>> out;
  if (auto *inst = llvm::dyn_cast<InstanceObj>(value.get())) {
    for (const ClassObj::Field &f : inst->cls->fields())
      if (Obj v = inst->get(f.name))
        out.emplace_back(f.name, v);
  } else if (auto *seq = llvm::dyn_cast<SequenceObj>(value.get()); seq && seq->namedTuple) {
    std::vector<ClassObj::Field> fields = seq->namedTuple->fields();
    for (size_t i = 0; i < fields.size() && i < seq->items.size(); ++i)
      out.emplace_back(fields[i].name, seq->items[i]);
  }
  return out;
}

void Elaborator::execClassDef(const ast::ClassDefStmt &s) {
  auto cls = std::make_shared<ClassObj>();
  definedClasses.push_back(cls); // see ~Elaborator: its members may hold it
  cls->name = s.name;
  cls->range = s.range();
  for (const ast::Argument &a : s.bases) {
    if (a.kind == ast::Argument::Kind::Keyword) {
      eval(*a.value); // metaclass=..., total=...: they change nothing pkc models
      continue;
    }
    if (a.kind != ast::Argument::Kind::Positional)
      fail(a.range, "'*' and '**' are not supported in a class's bases");
    Obj base = eval(*a.value);
    if (auto c = std::dynamic_pointer_cast<ClassObj>(base)) {
      if (c->builtinBase == "typing.NamedTuple") {
        cls->isNamedTuple = true;
      } else if (c->builtinBase == "enum.Enum" || c->builtinBase == "enum.IntEnum" ||
                 c->builtinBase == "enum.StrEnum" || c->builtinBase == "enum.Flag") {
        cls->isEnum = true;
        cls->isIntEnum |= c->builtinBase == "enum.IntEnum";
      } else {
        if (c->isNamedTuple)
          cls->isNamedTuple = true;
        if (c->isEnum)
          cls->isEnum = true;
        cls->isIntEnum |= c->isIntEnum;
        cls->bases.push_back(c);
      }
      continue;
    }
    if (auto *e = llvm::dyn_cast<ExceptionTypeObj>(base.get())) {
      cls->builtinBase = e->name;
      continue;
    }
    if (isTypeLike(base) || llvm::isa<NamespaceObj>(base.get())) {
      continue; // `class C(object)`, `class C(int)`: nothing to inherit that pkc models
    }
    fail(a.range, "a class's bases must be classes, got " + repr(*base));
  }

  auto body = std::make_shared<Frame>();
  body->parent = frame;
  body->classBody = cls.get();
  {
    FrameSwitch enter(*this, body);
    Flow flow = exec(s.body);
    if (flow != Flow::Normal)
      fail(lastJumpRange(), "'return', 'break' and 'continue' are not allowed in a class body");
  }

  // What `super()` in the class's methods starts from.
  for (auto &[name, value] : cls->attributes) {
    Obj function = value;
    if (auto *d = llvm::dyn_cast<DescriptorObj>(value.get()))
      function = d->function;
    if (auto *f = llvm::dyn_cast<FunctionObj>(function.get()))
      f->ownerClass = cls;
  }

  // Enum members: the body's plain values become instances of the class.
  if (cls->isEnum) {
    int64_t autoValue = 1;
    for (auto &[name, value] : cls->attributes) {
      if (name.rfind("__", 0) == 0 || name.rfind('_', 0) == 0 ||
          llvm::isa<FunctionObj, DescriptorObj, BuiltinObj, PartialObj>(value.get()))
        continue;
      auto member = std::make_shared<InstanceObj>(cls);
      Obj v = value;
      if (auto *marker = llvm::dyn_cast<ClassObj>(v.get()); marker && marker->builtinBase == "enum.auto")
        v = makeInt(autoValue);
      if (auto *i = llvm::dyn_cast<IntObj>(v.get()))
        autoValue = i->value + 1;
      member->set("name", makeStr(name));
      member->set("value", v);
      member->set("_value_", v);
      member->initialized = true;
      value = member;
    }
  }

  setVariable(s.name, applyDecorators(s.decorators, cls, s.nameRange));
}

void Elaborator::recordClassAnnotation(const ast::AnnAssignStmt &s, const Obj &value) {
  auto *name = llvm::dyn_cast<ast::NameExpr>(s.target.get());
  ClassObj *cls = frame->classBody;
  if (!name || !cls)
    return;
  // `x: ClassVar[int] = 3` is a class attribute, not a field; `_:
  // KW_ONLY` makes the fields after it keyword-only.
  const ast::Expr *annotation = s.annotation.get();
  if (auto *sub = llvm::dyn_cast<ast::SubscriptExpr>(annotation))
    annotation = sub->value.get();
  std::string head;
  if (auto *n = llvm::dyn_cast<ast::NameExpr>(annotation))
    head = n->name;
  else if (auto *attr = llvm::dyn_cast<ast::AttributeExpr>(annotation))
    head = attr->attribute;
  if (head == "ClassVar")
    return;
  if (head == "KW_ONLY") {
    cls->kwOnlyFromHere = true;
    return;
  }
  ClassObj::Field field;
  field.name = name->name;
  field.kwOnly = cls->kwOnlyFromHere;
  if (value) {
    if (auto *f = llvm::dyn_cast<InstanceObj>(value.get()); f && f->cls == dataclassFieldClass()) {
      Obj d = f->get("default"), factory = f->get("default_factory"), init = f->get("init"),
          kwOnly = f->get("kw_only");
      if (d && !isNone(d))
        field.defaultValue = d;
      if (factory && !isNone(factory))
        field.defaultFactory = factory;
      if (init)
        field.init = truthy(init, s.range());
      if (kwOnly && !isNone(kwOnly))
        field.kwOnly = truthy(kwOnly, s.range());
      if (auto *metadata = llvm::dyn_cast_or_null<DictObj>(f->get("metadata").get()))
        if (Obj isStatic = dictGet(*metadata, makeStr("static")))
          field.pytreeStatic = truthy(isStatic, s.range());
      // The class attribute is the default, as dataclasses leaves it.
      cls->set(name->name, field.defaultValue ? field.defaultValue : none());
      if (!field.defaultValue)
        cls->attributes.erase(std::remove_if(cls->attributes.begin(), cls->attributes.end(),
                                             [&](const auto &a) { return a.first == name->name; }),
                              cls->attributes.end());
    } else {
      field.defaultValue = value;
    }
  }
  auto same = std::find_if(cls->annotated.begin(), cls->annotated.end(),
                           [&](const ClassObj::Field &f) { return f.name == field.name; });
  if (same != cls->annotated.end())
    *same = field;
  else
    cls->annotated.push_back(field);
}

Obj instantiate(Elaborator &el, const std::shared_ptr<ClassObj> &cls, CallArgs &args) {
  if (!cls->builtinBase.empty() && cls->bases.empty() && cls->annotated.empty() &&
      cls->attributes.empty() && !isExceptionClass(*cls))
    el.fail(args.range, "'" + cls->name + "' is a type annotation; it cannot be called in a .pk "
                        "program");
  if (cls->isNamedTuple) {
    auto tuple = std::make_shared<SequenceObj>(Object::Kind::Tuple, std::vector<Obj>());
    for (auto &[name, value] : bindFields(el, *cls, args))
      tuple->items.push_back(value);
    tuple->namedTuple = cls;
    return tuple;
  }
  if (cls->isEnum) {
    BoundArgs a = el.bind(args, {{"value"}});
    for (const auto &[name, member] : cls->attributes)
      if (auto *m = llvm::dyn_cast<InstanceObj>(member.get()); m && m->cls == cls)
        if (staticEqual(m->get("value"), a[0]))
          return member;
    el.fail(args.range, repr(*a[0]) + " is not a valid " + cls->name);
  }
  if (isExceptionClass(*cls)) {
    auto e = std::make_shared<ExceptionTypeObj>(cls->name);
    if (!args.positional.empty())
      e->message = llvm::isa<StrObj>(args.positional[0].get())
                       ? llvm::cast<StrObj>(*args.positional[0]).value
                       : repr(*args.positional[0]);
    return e;
  }
  auto inst = std::make_shared<InstanceObj>(cls);
  bool ownInit = false;
  for (const auto &[name, value] : cls->attributes)
    ownInit |= name == "__init__";
  const ClassObj *owner = nullptr;
  Obj init = cls->lookup("__init__", &owner);
  if (cls->isDataclass && !ownInit) {
    for (auto &[name, value] : bindFields(el, *cls, args))
      inst->set(name, value);
    inst->initialized = true;
  } else if (init) {
    if (cls->frozen)
      inst->initialized = true; // a frozen dataclass's own __init__ cannot assign either
    callMethod(el, inst, init, "__init__", args);
    inst->initialized = true;
  } else {
    if (!args.positional.empty() || !args.keywords.empty())
      el.fail(args.range, cls->name + "() takes no arguments");
    inst->initialized = true;
  }
  if (cls->isDataclass)
    if (Obj post = cls->lookup("__post_init__")) {
      CallArgs none;
      none.range = args.range;
      callMethod(el, inst, post, "__post_init__", none);
    }
  return inst;
}

namespace {

/// Whether `o` is an instance whose class defines the method `name`.
bool definesDunder(const Obj &o, const char *name) {
  auto *inst = llvm::dyn_cast_or_null<InstanceObj>(o.get());
  return inst && inst->cls->lookup(name);
}

} // namespace

Obj classAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r) {
  if (auto cls = std::dynamic_pointer_cast<ClassObj>(value)) {
    if (name == "__name__" || name == "__qualname__")
      return makeStr(cls->name);
    if (Obj found = cls->lookup(name)) {
      // A descriptor (an object whose class defines __get__) answers for
      // itself: __get__(None, cls).
      if (std::optional<Obj> got = callDunder(el, found, "__get__", {none(), cls}, r))
        return *got;
      return bindForClass(cls, name, found);
    }
    if (cls->isNamedTuple && name == "_fields") {
      std::vector<Obj> names;
      for (const ClassObj::Field &f : cls->fields())
        names.push_back(makeStr(f.name));
      return makeTuple(names);
    }
    if (cls->isEnum && name == "__members__") {
      auto dict = std::make_shared<DictObj>();
      for (const auto &[n, member] : cls->attributes)
        if (auto *m = llvm::dyn_cast<InstanceObj>(member.get()); m && m->cls == cls)
          dict->entries.emplace_back(makeStr(n), member);
      return dict;
    }
    el.raise(r, "AttributeError", "type object '" + cls->name + "' has no attribute '" + name + "'", false);
  }
  if (auto inst = std::dynamic_pointer_cast<InstanceObj>(value)) {
    // Python's order: a data descriptor on the class (its class defines
    // __set__), the instance's own attributes, then the class's, where a
    // descriptor's __get__(instance, cls) answers.
    Obj found = inst->cls->lookup(name);
    if (!definesDunder(found, "__set__"))
      if (Obj v = inst->get(name))
        return v;
    if (found) {
      if (std::optional<Obj> got = callDunder(el, found, "__get__", {value, inst->cls}, r))
        return *got;
      return bindForInstance(el, value, inst->cls, name, found, r);
    }
    if (name == "__class__")
      return inst->cls;
    if (name == "__dict__") {
      auto dict = std::make_shared<DictObj>();
      for (const auto &[n, v] : inst->attributes)
        dict->entries.emplace_back(makeStr(n), v);
      return dict;
    }
    // A class's __getattr__ answers what lookup did not find (tokamax's
    // BlockRef delegates to the Ref it wraps). Not for dunders, which
    // Python looks up on the type.
    bool dunder = llvm::StringRef(name).starts_with("__") && llvm::StringRef(name).ends_with("__");
    if (!dunder)
      if (std::optional<Obj> got = callDunder(el, value, "__getattr__", {makeStr(name)}, r))
        return *got;
    el.raise(r, "AttributeError", "'" + inst->cls->name + "' object has no attribute '" + name + "'", false);
  }
  auto *seq = llvm::dyn_cast<SequenceObj>(value.get());
  if (!seq || !seq->namedTuple)
    return nullptr;
  const std::shared_ptr<ClassObj> &cls = seq->namedTuple;
  std::vector<ClassObj::Field> fields = cls->fields();
  for (size_t i = 0; i < fields.size() && i < seq->items.size(); ++i)
    if (fields[i].name == name)
      return seq->items[i];
  if (Obj found = cls->lookup(name))
    return bindForInstance(el, value, cls, name, found, r);
  if (name == "_fields")
    return classAttribute(el, cls, name, r);
  if (name == "_asdict")
    return std::make_shared<BoundMethodObj>(value, name, [](Elaborator &, CallArgs &args) -> Obj {
      auto dict = std::make_shared<DictObj>();
      for (auto &[n, v] : fieldValues(args.positional[0]))
        dict->entries.emplace_back(makeStr(n), v);
      return dict;
    });
  if (name == "_replace")
    return std::make_shared<BoundMethodObj>(value, name, [](Elaborator &el, CallArgs &args) -> Obj {
      auto &tuple = llvm::cast<SequenceObj>(*args.positional[0]);
      auto copy = std::make_shared<SequenceObj>(Object::Kind::Tuple, tuple.items);
      copy->namedTuple = tuple.namedTuple;
      std::vector<ClassObj::Field> fields = tuple.namedTuple->fields();
      for (const auto &keyword : args.keywords) {
        const std::string &k = keyword.first;
        const Obj &v = keyword.second;
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const ClassObj::Field &f) { return f.name == k; });
        if (it == fields.end())
          el.fail(args.rangeOfKeyword(k), "got unexpected field name '" + k + "'");
        copy->items[static_cast<size_t>(it - fields.begin())] = v;
      }
      return copy;
    });
  return nullptr;
}

Obj callSuper(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {optionalParam("type"), optionalParam("object_or_type")});
  if (a[0]) {
    auto owner = std::dynamic_pointer_cast<ClassObj>(a[0]);
    if (!owner)
      el.fail(a.range(0), "super() argument 1 must be a type, not " + typeName(*a[0]));
    if (!a[1])
      el.fail(args.range, "super() with one argument is not supported; pass the instance too");
    return std::make_shared<SuperObj>(a[1], owner);
  }
  // Python's zero-argument form: the class that defined the running
  // method, and the method's first argument.
  const Frame *f = &el.currentFrame();
  while (f->comprehension && f->parent)
    f = f->parent.get();
  std::shared_ptr<ClassObj> owner = f->function ? f->function->ownerClass.lock() : nullptr;
  if (!owner)
    el.fail(args.range, "super(): no arguments outside a method defined in a class body");
  const std::vector<ast::Parameter> &params = *f->function->parameters;
  auto self = params.empty() ? f->vars.end() : f->vars.find(params[0].name);
  if (self == f->vars.end())
    el.fail(args.range, "super(): the method has no first argument");
  return std::make_shared<SuperObj>(self->second, owner);
}

Obj superAttribute(Elaborator &el, const SuperObj &sup, const std::string &name, SourceRange r) {
  std::shared_ptr<ClassObj> cls = std::dynamic_pointer_cast<ClassObj>(sup.self);
  bool onClass = cls != nullptr;
  if (auto *inst = llvm::dyn_cast<InstanceObj>(sup.self.get()))
    cls = inst->cls;
  if (!cls)
    el.fail(r, "super(): the object is a '" + typeName(*sup.self) +
                   "', not an instance of a class defined in the program");
  std::vector<const ClassObj *> order = cls->mro();
  auto start = std::find(order.begin(), order.end(), sup.owner.get());
  if (start == order.end())
    el.fail(r, "super(type, obj): obj must be an instance or subtype of type '" + sup.owner->name +
                   "'");
  for (auto it = std::next(start); it != order.end(); ++it)
    for (const auto &[n, found] : (*it)->attributes)
      if (n == name)
        return onClass ? bindForClass(cls, name, found)
                       : bindForInstance(el, sup.self, cls, name, found, r);
  // object.__init__ and the like: nothing to do.
  if (name == "__init__" || name == "__post_init__" || name == "__init_subclass__")
    return std::make_shared<BoundMethodObj>(sup.self, name,
                                            [](Elaborator &, CallArgs &) { return none(); });
  el.raise(r, "AttributeError", "'super' object has no attribute '" + name + "'", false);
}

void setAttribute(Elaborator &el, const Obj &target, const std::string &name, const Obj &value,
                  SourceRange r) {
  if (auto *inst = llvm::dyn_cast<InstanceObj>(target.get())) {
    if (inst->cls->frozen && inst->initialized)
      el.raise(r, "dataclasses.FrozenInstanceError", "cannot assign to field '" + name + "'");
    if (Obj found = inst->cls->lookup(name)) {
      if (auto *d = llvm::dyn_cast<DescriptorObj>(found.get());
          d && d->which == DescriptorObj::Which::Property)
        el.fail(r, "property '" + name + "' of '" + inst->cls->name + "' object has no setter");
      // A data descriptor stores the value itself: __set__(instance, value).
      if (callDunder(el, found, "__set__", {target, value}, r))
        return;
    }
    inst->set(name, value);
    return;
  }
  if (auto *cls = llvm::dyn_cast<ClassObj>(target.get())) {
    cls->set(name, value);
    return;
  }
  if (auto *seq = llvm::dyn_cast<SequenceObj>(target.get()); seq && seq->namedTuple)
    el.raise(r, "AttributeError", "can't set attribute '" + name + "' of a NamedTuple", false);
  el.fail(r, "cannot assign to attribute '" + name + "' of " + repr(*target) +
                 "; only instances of classes defined in the program take new attributes");
}

std::optional<Obj> callDunder(Elaborator &el, const Obj &obj, const char *name,
                              std::vector<Obj> args, SourceRange r) {
  std::shared_ptr<ClassObj> cls;
  if (auto *inst = llvm::dyn_cast<InstanceObj>(obj.get()))
    cls = inst->cls;
  else if (auto *seq = llvm::dyn_cast<SequenceObj>(obj.get()); seq && seq->namedTuple)
    cls = seq->namedTuple;
  if (!cls)
    return std::nullopt;
  Obj method = cls->lookup(name);
  if (!method || !llvm::isa<FunctionObj, PartialObj>(method.get()))
    return std::nullopt;
  CallArgs call;
  call.range = r;
  for (Obj &a : args)
    call.addPositional(std::move(a), r);
  return callMethod(el, obj, method, name, call);
}

} // namespace pk::elab
