//===- ExportArrays.cpp - Which code at export level is array code --===//
//
// JAX code around pallas_call (reshape, astype, slicing, element-wise math,
// reductions, small dots on whole arrays) runs as kernels of its own: each
// jnp / lax / jax.nn call, operator, method, property, subscript or dtype
// call applied to whole arrays in an export, and each array made there,
// goes to ArrayCodeTracer (ArrayCodeTracer.cpp), which traces it into a
// generated pallas_call. pk-fuse-array-code then merges chains of them,
// as XLA fuses producers into their consumer.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Object.h"
#include "frontend/elab/Tree.h"

#include <cstring>
#include <set>

namespace pk::elab {

bool Elaborator::holdsGlobalArray(const Obj &o) {
  bool found = false;
  forEachLeaf(o, [&](const Obj &leaf) { found |= llvm::isa<GlobalArrayObj>(leaf.get()); });
  return found;
}

Obj Elaborator::arrayCodeCall(const std::string &what, CallArgs &args, std::vector<Obj> leading,
                               const std::function<Obj(std::vector<Obj> &, CallArgs &)> &call,
                               bool sizesAtTopLevel) {
  size_t first = leading.size(), n = args.positional.size();
  std::vector<Obj> inputs = std::move(leading);
  inputs.insert(inputs.end(), args.positional.begin(), args.positional.end());
  for (const auto &[name, value] : args.keywords)
    inputs.push_back(value);
  return arrayCodeAtExport(
      what, args.range, inputs,
      [&](std::vector<Obj> &values) {
        CallArgs traced = args;
        for (size_t i = 0; i < n; ++i)
          traced.positional[i] = values[first + i];
        for (size_t i = 0; i < traced.keywords.size(); ++i)
          traced.keywords[i].second = values[first + n + i];
        std::vector<Obj> leadingValues(values.begin(), values.begin() + first);
        return call(leadingValues, traced);
      },
      sizesAtTopLevel);
}

bool Elaborator::tracesAtExport(const std::string &builtinName, const CallArgs &args) const {
  if (emitMode != EmitMode::Export)
    return false;
  static const char *const kArrayNamespaces[] = {"jax.numpy.", "numpy.", "jax.lax.", "jax.nn.",
                                                 "jax.scipy."};
  bool arrayFunction =
      builtinName == "abs" || builtinName == "pow" || builtinName == "jax.experimental.pallas.cdiv";
  for (const char *prefix : kArrayNamespaces)
    arrayFunction |= llvm::StringRef(builtinName).starts_with(prefix);
  if (!arrayFunction)
    return false;
  std::string tail = builtinName.substr(builtinName.rfind('.') + 1);
  // What only reads shapes and dtypes stays static (and works with
  // symbolic sizes).
  static const std::set<std::string> kMetadata = {
      "shape", "ndim", "size", "result_type", "dtype", "issubdtype", "isscalar", "finfo",
      "iinfo", "promote_types", "can_cast", "iscomplexobj", "isrealobj"};
  if (kMetadata.count(tail))
    return false;
  for (const Obj &a : args.positional)
    if (holdsGlobalArray(a))
      return true;
  for (const auto &[name, value] : args.keywords)
    if (holdsGlobalArray(value))
      return true;
  // Arrays made from nothing: jnp.zeros((1,), jnp.int32) as an operand.
  static const std::set<std::string> kCreation = {
      "zeros", "ones", "full", "empty", "array", "asarray", "arange", "eye", "identity",
      "linspace", "iota", "broadcasted_iota", "tri"};
  return kCreation.count(tail) > 0;
}

Obj Elaborator::callAtExport(const std::string &builtinName, const BuiltinObj::Fn &fn,
                             CallArgs &args) {
  // As the program spells it: jax.numpy.exp -> jnp.exp.
  std::string what = builtinName;
  for (auto [from, to] : {std::pair{"jax.numpy.", "jnp."}, {"jax.lax.", "lax."}, {"numpy.", "np."}})
    if (llvm::StringRef(what).starts_with(from)) {
      what = to + what.substr(std::strlen(from));
      break;
    }
  static const std::set<std::string> kTakesSizes = {"reshape", "broadcast_to", "zeros", "ones",
                                                    "empty", "full"};
  bool sizes = kTakesSizes.count(what.substr(what.rfind('.') + 1)) > 0;
  return arrayCodeCall(
      what, args, {}, [&](std::vector<Obj> &, CallArgs &traced) { return fn(*this, traced); },
      sizes);
}

Obj globalArrayMember(Elaborator &el, const Obj &array, const std::string &name, SourceRange r) {
  const auto &g = llvm::cast<GlobalArrayObj>(*array);
  std::string what = g.name + "." + name;
  // A property (x.T) is computed now; a method (x.reshape) when called.
  bool isMethod = false;
  Obj property = el.arrayCodeAtExport(what, r, {array}, [&](std::vector<Obj> &v) -> Obj {
    Obj member = getAttribute(el, v[0], name, r);
    if (llvm::isa<BoundMethodObj, BuiltinObj>(member.get())) {
      isMethod = true;
      return none();
    }
    return member;
  });
  if (!isMethod)
    return property;
  return std::make_shared<BoundMethodObj>(array, name, [what, name](Elaborator &el, CallArgs &args) {
    // args.positional[0] is the array itself.
    return el.arrayCodeCall(
        what, args, {},
        [&](std::vector<Obj> &, CallArgs &traced) {
          Obj self = traced.positional[0];
          traced.positional.erase(traced.positional.begin());
          traced.positionalRanges.erase(traced.positionalRanges.begin());
          return el.call(getAttribute(el, self, name, args.range), traced);
        },
        /*sizesAtTopLevel=*/name == "reshape");
  });
}

} // namespace pk::elab
