//===- Object.cpp - Constructors and repr() of elaborator objects ---------===//
#include "frontend/elab/Object.h"
#include "frontend/elab/StaticArray.h"

#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Sets.h"
#include "support/ShapeText.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace pk::elab {

Obj none() {
  static Obj theNone = std::make_shared<NoneObj>();
  return theNone;
}
Obj makeBool(bool v) { return std::make_shared<BoolObj>(v); }
Obj makeInt(int64_t v) { return std::make_shared<IntObj>(v); }
Obj makeFloat(double v) { return std::make_shared<FloatObj>(v); }

std::shared_ptr<NamespaceObj> opaqueNamespace(std::string name, std::string why) {
  auto ns = std::make_shared<NamespaceObj>(std::move(name));
  ns->opaque = true;
  ns->why = std::move(why);
  return ns;
}

std::optional<DType> numpyScalarType(const Object &o) {
  if (auto *i = llvm::dyn_cast<IntObj>(&o))
    return i->numpyType;
  if (auto *f = llvm::dyn_cast<FloatObj>(&o))
    return f->numpyType;
  return std::nullopt;
}
namespace {
thread_local uint64_t itemsLeft = UINT64_MAX;
} // namespace

void checkStaticItems(size_t items) {
  if (items > itemsLeft)
    throw StaticBudgetExceeded{};
}
void countStaticItems(size_t items) {
  checkStaticItems(items);
  itemsLeft -= items;
}
void setStaticItemBudget(uint64_t items) { itemsLeft = items; }
uint64_t staticItemBudget() { return itemsLeft; }

Obj makeStr(std::string v) {
  countStaticItems(1 + v.size() / 16);
  return std::make_shared<StrObj>(std::move(v));
}
Obj makeTuple(std::vector<Obj> items) {
  countStaticItems(items.size());
  return std::make_shared<SequenceObj>(Object::Kind::Tuple, std::move(items));
}
Obj makeList(std::vector<Obj> items) {
  countStaticItems(items.size());
  return std::make_shared<SequenceObj>(Object::Kind::List, std::move(items));
}

Obj makeSymbolic(mlir::AffineExpr e) {
  if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(e))
    return makeInt(c.getValue());
  return std::make_shared<SymIntObj>(e);
}

Obj makeDim(const Dim &d) { return d.isStatic() ? makeInt(d.value) : makeSymbolic(d.expr); }

/// Python's repr of a str: single quotes unless only double quotes avoid
/// escaping; backslashes, the quote and control characters escaped.
static std::string strRepr(const std::string &s) {
  char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + quote;
}

std::string typeName(const Object &o) {
  using K = Object::Kind;
  switch (o.kind()) {
  case K::None: return "NoneType";
  case K::Bool: return "bool";
  case K::Int: return "int";
  case K::Float: return "float";
  case K::Str: return "str";
  case K::Ellipsis: return "ellipsis";
  case K::SymInt: return "symbolic int";
  case K::Tuple: return "tuple";
  case K::List: return "list";
  case K::Dict: return "dict";
  case K::Set:
    return llvm::cast<SetObj>(o).frozen ? "frozenset" : "set";
  case K::Slice: return "slice";
  case K::Range: return "range";
  case K::DType: return "dtype";
  case K::Function: return "function";
  case K::Builtin: return "builtin function";
  case K::BoundMethod: return "method";
  case K::Partial: return "functools.partial";
  case K::Namespace: return "module";
  case K::Array: return "Array";
  case K::Ref: return "Ref";
  case K::RefAt: return "Ref indexer";
  case K::GlobalArray: return "array";
  case K::StaticArray:
    return llvm::cast<StaticArrayObj>(o).numpy ? "numpy.ndarray" : "Array";
  case K::Super:
    return "super";
  case K::Iterator:
    return "iterator";
  case K::DynamicSlice: return "pl.ds";
  case K::BlockSpec: return "BlockSpec";
  case K::BlockDim: return "block dimension";
  case K::IndexingMode: return "indexing mode";
  case K::ShapeDtypeStruct: return "ShapeDtypeStruct";
  case K::MemorySpace: return "memory space";
  case K::ScratchShape: return "scratch shape";
  case K::CompilerParams: return "CompilerParams";
  case K::GridSpec: return "GridSpec";
  case K::PallasCallable: return "pallas_call";
  case K::ArrayAnnotation: return "array type";
  case K::ExceptionType: return "exception";
  case K::Undefined: return "undefined";
  case K::MosaicGpu: return mosaicGpuTypeName(o);
  case K::Class: return "type";
  case K::Instance: return static_cast<const InstanceObj &>(o).cls->name;
  case K::Descriptor: return "descriptor";
  case K::ContextManager: return "context manager";
  case K::CustomDerivative: return "custom derivative function";
  case K::ExtendedDType: return "dtype";
  case K::ArrayAt: return "_IndexUpdateHelper";
  }
  return "object";
}

namespace {

std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  if (std::signbit(v))
    return "-" + formatFloat(-v);
  if (v == 0)
    return "0.0";
  // Python's repr: the shortest digits that round-trip, written in fixed
  // notation when the decimal exponent is in [-4, 16), else scientific.
  for (int precision = 1; precision <= 17; ++precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*e", precision - 1, v);
    if (std::strtod(buffer, nullptr) != v)
      continue;
    std::string text = buffer;
    size_t e = text.find('e');
    int exponent = std::atoi(text.c_str() + e + 1);
    std::string digits;
    for (char c : text.substr(0, e))
      if (c != '.')
        digits += c;
    while (digits.size() > 1 && digits.back() == '0')
      digits.pop_back();
    if (exponent < -4 || exponent >= 16) {
      std::string mantissa =
          digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
      char suffix[16];
      std::snprintf(suffix, sizeof suffix, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
      return mantissa + suffix;
    }
    if (exponent < 0)
      return "0." + std::string(-exponent - 1, '0') + digits;
    size_t whole = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= whole)
      return digits + std::string(whole - digits.size(), '0') + ".0";
    return digits.substr(0, whole) + "." + digits.substr(whole);
  }
  return std::to_string(v);
}

thread_local const std::vector<std::string> *symbolNames = nullptr;

/// `context` is the binding strength the surroundings need: 0 for a sum,
/// 1 for an operand of `*`, `//` or `%`, 2 for their right operand.
std::string pythonText(mlir::AffineExpr e, int context) {
  using mlir::AffineExprKind;
  std::string s;
  int strength = 2;
  auto constant = [](mlir::AffineExpr x) -> std::optional<int64_t> {
    if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(x))
      return c.getValue();
    return std::nullopt;
  };
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    s = std::to_string(*constant(e));
    strength = *constant(e) < 0 ? 1 : 2;
    break;
  case AffineExprKind::DimId:
    s = "d" + std::to_string(llvm::cast<mlir::AffineDimExpr>(e).getPosition());
    break;
  case AffineExprKind::SymbolId: {
    unsigned position = llvm::cast<mlir::AffineSymbolExpr>(e).getPosition();
    s = symbolNames && position < symbolNames->size() ? (*symbolNames)[position]
                                                       : "s" + std::to_string(position);
    break;
  }
  default: {
    auto bin = llvm::cast<mlir::AffineBinaryOpExpr>(e);
    mlir::AffineExpr lhs = bin.getLHS(), rhs = bin.getRHS();
    switch (e.getKind()) {
    case AffineExprKind::Add: {
      strength = 0;
      std::optional<int64_t> c = constant(rhs);
      auto negated = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(rhs);
      if (c && *c < 0 && *c != INT64_MIN) {
        s = pythonText(lhs, 0) + " - " + std::to_string(-*c);
      } else if (negated && negated.getKind() == AffineExprKind::Mul &&
                 constant(negated.getRHS()) == -1) {
        s = pythonText(lhs, 0) + " - " + pythonText(negated.getLHS(), 1);
      } else {
        s = pythonText(lhs, 0) + " + " + pythonText(rhs, 1);
      }
      break;
    }
    case AffineExprKind::Mul:
      strength = 1;
      s = constant(rhs) == -1 ? "-" + pythonText(lhs, 2)
                              : pythonText(lhs, 1) + " * " + pythonText(rhs, 2);
      break;
    case AffineExprKind::FloorDiv:
    case AffineExprKind::Mod:
      strength = 1;
      s = pythonText(lhs, 1) + (e.getKind() == AffineExprKind::Mod ? " % " : " // ") +
          pythonText(rhs, 2);
      break;
    default: // CeilDiv
      s = "pl.cdiv(" + pythonText(lhs, 0) + ", " + pythonText(rhs, 0) + ")";
      break;
    }
  }
  }
  return strength < context ? "(" + s + ")" : s;
}

std::string exprText(mlir::AffineExpr e) { return pythonText(e, 0); }

/// Marks a container as being printed, so that one that contains itself
/// prints as `[...]` (as in Python) instead of recursing forever.
struct ReprGuard {
  explicit ReprGuard(const Object &o) : object(&o) {
    recursive = std::find(active.begin(), active.end(), object) != active.end();
    if (!recursive)
      active.push_back(object);
  }
  ~ReprGuard() {
    if (!recursive)
      active.pop_back();
  }
  const Object *object;
  bool recursive;
  static thread_local std::vector<const Object *> active;
};
thread_local std::vector<const Object *> ReprGuard::active;

std::string dimsText(const std::vector<Dim> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i].isStatic() ? std::to_string(shape[i].value) : exprText(shape[i].expr);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

} // namespace

std::string symbolicText(mlir::AffineExpr e) { return exprText(e); }

void setSymbolNames(const std::vector<std::string> *names) { symbolNames = names; }

bool isCallable(const Obj &o) {
  if (llvm::isa<FunctionObj, BuiltinObj, BoundMethodObj, PartialObj, ClassObj>(o.get()))
    return true;
  auto *instance = llvm::dyn_cast<InstanceObj>(o.get());
  return instance && instance->cls->lookup("__call__");
}

std::string repr(const Object &o) {
  using K = Object::Kind;
  switch (o.kind()) {
  case K::None: return "None";
  case K::Bool: return llvm::cast<BoolObj>(o).value ? "True" : "False";
  case K::Int: return std::to_string(llvm::cast<IntObj>(o).value);
  case K::Float: return formatFloat(llvm::cast<FloatObj>(o).value);
  case K::Str: return strRepr(llvm::cast<StrObj>(o).value);
  case K::Ellipsis: return "Ellipsis";
  case K::SymInt: return exprText(llvm::cast<SymIntObj>(o).expr);
  case K::Tuple:
  case K::List: {
    const auto &s = llvm::cast<SequenceObj>(o);
    ReprGuard guard(o);
    if (guard.recursive)
      return s.isList() ? "[...]" : "(...)";
    if (s.namedTuple) { // SegmentIds(q=..., kv=...)
      std::vector<ClassObj::Field> fields = s.namedTuple->fields();
      std::string text = s.namedTuple->name + "(";
      for (size_t i = 0; i < s.items.size(); ++i)
        text += (i ? ", " : "") + (i < fields.size() ? fields[i].name + "=" : "") +
                repr(*s.items[i]);
      return text + ")";
    }
    std::string text = s.isList() ? "[" : "(";
    for (size_t i = 0; i < s.items.size(); ++i) {
      if (i)
        text += ", ";
      text += repr(*s.items[i]);
    }
    if (!s.isList() && s.items.size() == 1)
      text += ",";
    return text + (s.isList() ? "]" : ")");
  }
  case K::Dict: {
    ReprGuard guard(o);
    if (guard.recursive)
      return "{...}";
    std::string text = "{";
    bool first = true;
    for (const auto &[k, v] : llvm::cast<DictObj>(o).entries) {
      if (!first)
        text += ", ";
      first = false;
      text += repr(*k) + ": " + repr(*v);
    }
    return text + "}";
  }
  case K::Set: {
    const auto &s = llvm::cast<SetObj>(o);
    if (s.items.empty())
      return s.frozen ? "frozenset()" : "set()";
    std::string text = s.frozen ? "frozenset({" : "{";
    std::vector<Obj> items = setIterationOrder(s);
    for (size_t i = 0; i < items.size(); ++i)
      text += (i ? ", " : "") + repr(*items[i]);
    return text + (s.frozen ? "})" : "}");
  }
  case K::Slice: {
    const auto &s = llvm::cast<SliceObj>(o);
    return "slice(" + repr(*s.start) + ", " + repr(*s.stop) + ", " + repr(*s.step) + ")";
  }
  case K::Range: {
    const auto &r = llvm::cast<RangeObj>(o);
    return "range(" + repr(*r.start) + ", " + repr(*r.stop) + ", " + repr(*r.step) + ")";
  }
  case K::DType: return numpyName(llvm::cast<DTypeObj>(o).dtype);
  case K::Function: return "<function " + llvm::cast<FunctionObj>(o).name + ">";
  case K::Builtin: return "<built-in function " + llvm::cast<BuiltinObj>(o).name + ">";
  case K::BoundMethod: return "<method " + llvm::cast<BoundMethodObj>(o).name + ">";
  case K::Partial: return "functools.partial(" + repr(*llvm::cast<PartialObj>(o).function) + ", ...)";
  case K::Namespace: return "<module '" + llvm::cast<NamespaceObj>(o).name + "'>";
  case K::Array: {
    const auto &a = llvm::cast<ArrayObj>(o);
    return std::string("Array(") + shapeText(a.shape) + ", " + numpyName(a.dtype) +
           (a.weak ? ", weak_type=True" : "") + ")";
  }
  case K::Ref: {
    const auto &r = llvm::cast<RefObj>(o);
    return std::string("Ref(") + shapeText(r.shape) + ", " + numpyName(r.dtype) + ")";
  }
  case K::GlobalArray: {
    const auto &g = llvm::cast<GlobalArrayObj>(o);
    return std::string(shortName(g.dtype)) + dimsText(g.shape);
  }
  case K::StaticArray:
    return static_array::repr(llvm::cast<StaticArrayObj>(o));
  case K::DynamicSlice: {
    const auto &d = llvm::cast<DynamicSliceObj>(o);
    return "pl.ds(" + repr(*d.start) + ", " +
           (d.dynamicSize ? repr(*d.dynamicSize) : std::to_string(d.size)) + ")";
  }
  case K::ShapeDtypeStruct: {
    const auto &s = llvm::cast<ShapeDtypeStructObj>(o);
    return "ShapeDtypeStruct(shape=" + dimsText(s.shape) + ", dtype=" + numpyName(s.dtype) + ")";
  }
  case K::ArrayAnnotation: {
    const auto &a = llvm::cast<ArrayAnnotationObj>(o);
    std::string dims = dimsText(a.shape);
    return std::string(shortName(a.dtype)) + "[" + dims.substr(1, dims.size() - 2) + "]";
  }
  case K::ExceptionType: return llvm::cast<ExceptionTypeObj>(o).name;
  case K::Class: return "<class '" + llvm::cast<ClassObj>(o).name + "'>";
  case K::Instance: {
    const auto &inst = llvm::cast<InstanceObj>(o);
    ReprGuard guard(o);
    if (inst.cls->isDataclass && !guard.recursive) { // the dataclass repr
      std::string text = inst.cls->name + "(";
      bool first = true;
      for (const ClassObj::Field &f : inst.cls->fields()) {
        Obj v = inst.get(f.name);
        text += (first ? "" : ", ") + f.name + "=" + (v ? repr(*v) : "?");
        first = false;
      }
      return text + ")";
    }
    if (inst.cls->isEnum)
      if (Obj name = inst.get("name"))
        if (auto *s = llvm::dyn_cast<StrObj>(name.get()))
          return "<" + inst.cls->name + "." + s->value + ">";
    return "<" + inst.cls->name + " object>";
  }
  case K::ExtendedDType: return llvm::cast<ExtendedDTypeObj>(o).name;
  case K::ContextManager: return "<" + llvm::cast<ContextManagerObj>(o).name + ">";
  default: return "<" + typeName(o) + ">";
  }
}

std::vector<const ClassObj *> ClassObj::mro() const {
  std::vector<const ClassObj *> order;
  std::function<void(const ClassObj *)> visit = [&](const ClassObj *c) {
    if (std::find(order.begin(), order.end(), c) == order.end())
      order.push_back(c);
    for (const auto &base : c->bases)
      visit(base.get());
  };
  visit(this);
  return order;
}

Obj ClassObj::lookup(const std::string &name, const ClassObj **owner) const {
  for (const ClassObj *c : mro())
    for (const auto &[n, v] : c->attributes)
      if (n == name) {
        if (owner)
          *owner = c;
        return v;
      }
  return nullptr;
}

void ClassObj::set(const std::string &name, Obj value) {
  for (auto &[n, v] : attributes)
    if (n == name) {
      v = std::move(value);
      return;
    }
  attributes.emplace_back(name, std::move(value));
}

std::vector<ClassObj::Field> ClassObj::fields() const {
  // Python's dataclasses: base classes' fields first, in MRO reverse order;
  // a redefinition keeps the original position.
  std::vector<Field> out;
  std::vector<const ClassObj *> order = mro();
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (const Field &f : (*it)->annotated) {
      auto same = std::find_if(out.begin(), out.end(),
                               [&](const Field &g) { return g.name == f.name; });
      if (same != out.end())
        *same = f;
      else
        out.push_back(f);
    }
  return out;
}

Obj InstanceObj::get(const std::string &name) const {
  for (const auto &[n, v] : attributes)
    if (n == name)
      return v;
  return nullptr;
}

void InstanceObj::set(const std::string &name, Obj value) {
  for (auto &[n, v] : attributes)
    if (n == name) {
      v = std::move(value);
      return;
    }
  attributes.emplace_back(name, std::move(value));
}

std::vector<Dim> GlobalArrayObj::physicalShape() const {
  std::vector<Dim> dims = shape;
  for (const BatchAxis &b : batch) // increasing axes: each lands in place
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(b.axis), b.size);
  return dims;
}

} // namespace pk::elab
