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
#include "frontend/elab/StaticArray.h"
#include "frontend/elab/Tree.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <limits>
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

namespace {

/// The function's name without its module when `builtinName` is a
/// function of arrays (jnp, np, lax, jax.nn, ...) that computes with
/// their values; null for the others, and for those that only read
/// shapes and dtypes (which stay static and work with symbolic sizes).
std::optional<std::string> arrayFunctionTail(const std::string &builtinName) {
  static const char *const kArrayNamespaces[] = {"jax.numpy.", "numpy.",     "jax.lax.",
                                                 "jax.nn.",    "jax.scipy.", "jax._src.random."};
  bool arrayFunction =
      builtinName == "abs" || builtinName == "pow" || builtinName == "jax.experimental.pallas.cdiv";
  for (const char *prefix : kArrayNamespaces)
    arrayFunction |= llvm::StringRef(builtinName).starts_with(prefix);
  if (!arrayFunction)
    return std::nullopt;
  std::string tail = builtinName.substr(builtinName.rfind('.') + 1);
  static const std::set<std::string> kMetadata = {
      "shape", "ndim", "size", "result_type", "dtype", "issubdtype", "isscalar", "finfo",
      "iinfo", "promote_types", "can_cast", "iscomplexobj", "isrealobj"};
  if (kMetadata.count(tail))
    return std::nullopt;
  return tail;
}

} // namespace

void Elaborator::materializeStaticArguments(const std::string &builtinName, CallArgs &args) {
  // NumPy data handed to JAX becomes a JAX array, as jnp.asarray makes.
  if (!arrayFunctionTail(builtinName))
    return;
  static_numpy::materializeArguments(*this, args);
}

bool Elaborator::tracesAtExport(const std::string &builtinName, const CallArgs &args) const {
  if (emitMode != EmitMode::Export)
    return false;
  std::optional<std::string> function = arrayFunctionTail(builtinName);
  if (!function)
    return false;
  const std::string &tail = *function;
  for (const Obj &a : args.positional)
    if (holdsGlobalArray(a))
      return true;
  for (const auto &[name, value] : args.keywords)
    if (holdsGlobalArray(value))
      return true;
  // Arrays made from nothing: jnp.zeros((1,), jnp.int32) as an operand,
  // jnp.zeros_like(jax.ShapeDtypeStruct(...)).
  static const std::set<std::string> kCreation = {
      "zeros",  "ones",         "full",       "empty",     "array",     "asarray",
      "arange", "eye",          "identity",   "linspace",  "iota",      "broadcasted_iota",
      "tri",    "broadcast_to", "zeros_like", "ones_like", "full_like", "empty_like",
      "indices"};
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
  if (what == "jnp.matmul")
    if (std::optional<Obj> product = vmapBatchedMatmul(fn, args))
      return *product;
  if (what == "jnp.einsum")
    if (std::optional<Obj> product = vmapBatchedEinsum(fn, args))
      return *product;
  static const std::set<std::string> kTakesSizes = {"reshape", "broadcast_to", "zeros", "ones",
                                                    "empty", "full"};
  bool sizes = kTakesSizes.count(what.substr(what.rfind('.') + 1)) > 0;
  return arrayCodeCall(
      what, args, {}, [&](std::vector<Obj> &, CallArgs &traced) { return fn(*this, traced); },
      sizes);
}

namespace {

/// Whether the operands or the result of a product are past one block of
/// a generated kernel (symbolic axes count at their block of 1).
bool pastOneBlock(const std::vector<Dim> &a, const std::vector<Dim> &b,
                  const std::vector<Dim> &result) {
  // Saturating: the result of an outer product of large operands may
  // have more elements than int64 counts.
  auto elements = [](const std::vector<Dim> &dims) {
    int64_t n = 1;
    for (const Dim &d : dims)
      if (llvm::MulOverflow(n, d.isStatic() ? d.value : int64_t{1}, n))
        return std::numeric_limits<int64_t>::max();
    return n;
  };
  return std::max({elements(a), elements(b), elements(result)}) >
         Elaborator::kArrayCodeBlockElements;
}

} // namespace

// Traced whole, a batched product is one dot per batch element in one
// block, which on CUDA is past a CTA's registers and shared memory once the
// arrays are large, and no axis of it can be tiled. Under jax.vmap the
// generated kernel runs one program per batch element instead. TPU blocks
// stay whole (VMEM holds them).

std::optional<Obj> Elaborator::vmapBatchedMatmul(const BuiltinObj::Fn &matmul, CallArgs &args) {
  if (tpuTiles() || args.positional.size() != 2)
    return std::nullopt;
  auto *a = llvm::dyn_cast<GlobalArrayObj>(args.positional[0].get());
  auto *b = llvm::dyn_cast<GlobalArrayObj>(args.positional[1].get());
  if (!a || !b || a->shape.size() < 3 ||
      (b->shape.size() != 2 && b->shape.size() != a->shape.size()))
    return std::nullopt;
  bool shared = b->shape.size() == 2; // x @ w: the one matrix in every program
  if (!shared && !(a->shape[0] == b->shape[0]))
    return std::nullopt; // broadcast batch axes stay whole
  if (!(a->shape.back() == b->shape[b->shape.size() - 2]))
    return std::nullopt; // the whole trace says so, with the whole shapes
  std::vector<Dim> result = a->shape;
  result.back() = b->shape.back();
  if (!pastOneBlock(a->shape, b->shape, result))
    return std::nullopt;
  // One level per batch axis: the call below comes back here for the next.
  CallArgs mapped = args;
  Obj inAxes = shared ? std::make_shared<SequenceObj>(Object::Kind::Tuple,
                                                      std::vector<Obj>{makeInt(0), none()})
                      : makeInt(0);
  return applyVmap(std::make_shared<BuiltinObj>("jax.numpy.matmul", matmul), inAxes, makeInt(0),
                   none(), args.range, mapped);
}

std::optional<Obj> Elaborator::vmapBatchedEinsum(const BuiltinObj::Fn &einsum, CallArgs &args) {
  // The explicit two-operand form, "bnik,bnjk->bnij", without ellipses.
  if (tpuTiles() || args.positional.size() != 3)
    return std::nullopt;
  auto *spec = llvm::dyn_cast<StrObj>(args.positional[0].get());
  auto *a = llvm::dyn_cast<GlobalArrayObj>(args.positional[1].get());
  auto *b = llvm::dyn_cast<GlobalArrayObj>(args.positional[2].get());
  if (!spec || !a || !b)
    return std::nullopt;
  std::string text;
  for (char c : spec->value)
    if (c != ' ')
      text += c;
  size_t comma = text.find(','), arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow ||
      text.find('.') != std::string::npos)
    return std::nullopt;
  std::string lhs = text.substr(0, comma), rhs = text.substr(comma + 1, arrow - comma - 1),
              out = text.substr(arrow + 2);
  if (lhs.size() != a->shape.size() || rhs.size() != b->shape.size())
    return std::nullopt;
  for (size_t i = 0; i < lhs.size(); ++i) // sizes that disagree: the whole trace says so
    if (size_t j = rhs.find(lhs[i]); j != std::string::npos && !(a->shape[i] == b->shape[j]))
      return std::nullopt;
  std::vector<Dim> result;
  for (char c : out) {
    // An index of neither operand, or named twice: the traced call says so
    // with the user's subscripts.
    if ((lhs.find(c) == std::string::npos && rhs.find(c) == std::string::npos) ||
        out.find(c) != out.rfind(c))
      return std::nullopt;
    size_t at = lhs.find(c);
    result.push_back(at != std::string::npos ? a->shape[at] : b->shape[rhs.find(c)]);
  }
  if (!pastOneBlock(a->shape, b->shape, result))
    return std::nullopt;
  // The first batch index of the result: once in each operand (whose
  // sizes agree, checked above).
  for (size_t o = 0; o < out.size(); ++o) {
    char c = out[o];
    size_t i = lhs.find(c), j = rhs.find(c);
    if (i == std::string::npos || j == std::string::npos || lhs.rfind(c) != i ||
        rhs.rfind(c) != j || out.rfind(c) != o)
      continue;
    auto without = [c](std::string s) {
      s.erase(s.find(c), 1);
      return s;
    };
    CallArgs mapped = args;
    mapped.positional[0] = makeStr(without(lhs) + "," + without(rhs) + "->" + without(out));
    auto inAxes = std::make_shared<SequenceObj>(
        Object::Kind::Tuple, std::vector<Obj>{none(), makeInt(static_cast<int64_t>(i)),
                                              makeInt(static_cast<int64_t>(j))});
    return applyVmap(std::make_shared<BuiltinObj>("jax.numpy.einsum", einsum), inAxes,
                     makeInt(static_cast<int64_t>(o)), none(), args.range, mapped);
  }
  return std::nullopt;
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
