//===- StaticArray.h - NumPy arrays computed at compile time ----*- C++ -*-===//
//
// Real Pallas programs run NumPy before JAX traces anything: splash
// attention turns its masks into block tables with np.arange, comparisons,
// np.nonzero, np.pad and np.stack; tests build expected tables the same
// way. pkc runs that code as Python would, on StaticArrayObj: NumPy's
// dtypes and promotion (NEP 50: Python scalars are weak), wrapping integer
// arithmetic, broadcasting, basic and advanced indexing. A static array
// meets JAX where JAX would turn it into a constant (jnp.asarray, a
// pallas_call input, arithmetic with a traced array): in an export it
// becomes an array made by a generated kernel, as jnp.array would.
//
// 0-d results (full indexing, reductions over every axis, element-wise
// ops of scalars) are Python numbers, which NumPy's scalars behave like.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_STATICARRAY_H
#define PK_FRONTEND_ELAB_STATICARRAY_H

#include "frontend/elab/Object.h"

#include <optional>
#include <vector>

namespace pk::elab {

using StaticArrayPtr = std::shared_ptr<StaticArrayObj>;

namespace static_array {

/// An array of `shape`, zero-filled; counts against the static budget.
StaticArrayPtr make(Elaborator &el, std::vector<int64_t> shape, DType dtype, bool numpy,
                    SourceRange r);

/// Elements of `shape`; fails past int64.
int64_t elementCount(Elaborator &el, const std::vector<int64_t> &shape, SourceRange r);
/// Fails unless an array of `shape` fits the static budget.
void requireBudget(Elaborator &el, const std::vector<int64_t> &shape, SourceRange r);

/// Element `k` of `a` as a double / an int (floats truncate toward zero).
double asDouble(const StaticArrayObj &a, int64_t k);
int64_t asInt(const StaticArrayObj &a, int64_t k);
/// Stores `v` (or integer `v`) at `k`, converted as NumPy's astype converts.
void storeDouble(StaticArrayObj &a, int64_t k, double v);
void storeInt(StaticArrayObj &a, int64_t k, int64_t v, bool fromUnsigned = false);
/// Copies element `from` of `src` into element `to` of `dst`, converting.
void copyElement(const StaticArrayObj &src, int64_t from, StaticArrayObj &dst, int64_t to);

/// Element `k` as indexing and iteration give it: of a NumPy array, a
/// NumPy scalar of its dtype; of a jax.Array, a number (bool, int or float).
Obj elementObj(const StaticArrayObj &a, int64_t k);
/// `number` as a Python number: a NumPy scalar's value without its dtype.
Obj pythonNumber(const Obj &number);
/// Element `k` as a Python number (`.item()`, `.tolist()`).
Obj pythonElement(const StaticArrayObj &a, int64_t k);
/// The NumPy scalar `np.<dtype>(number)`: the number converted to `dtype`
/// (rounded, or wrapped as NumPy wraps integers); `what` names it in errors.
Obj numpyScalar(Elaborator &el, DType dtype, const Obj &number, SourceRange r,
                const std::string &what = "the value");
/// A 0-d array as a Python number; other arrays as they are.
Obj result(const StaticArrayPtr &a);

/// NumPy's default dtypes: int64 for ints, float64 for floats (JAX's, i32
/// and f32, when `numpy` is false).
DType defaultInt(bool numpy);
DType defaultFloat(bool numpy);
/// A dtype argument as NumPy reads it (`int` is int64, `float` float64).
DType toDType(Elaborator &el, const Obj &o, SourceRange r, bool numpy);

/// Whether `o` is data NumPy turns into an array: a static array, a
/// number, or (nested) lists and tuples of them.
bool isStaticData(const Obj &o);
/// np.array(o, dtype): null when `o` is not static data.
StaticArrayPtr fromData(Elaborator &el, const Obj &o, std::optional<DType> dtype, bool numpy,
                        SourceRange r);
/// fromData that fails with `what` when `o` is not static data.
StaticArrayPtr toStatic(Elaborator &el, const Obj &o, SourceRange r, const char *what,
                        bool numpy = true);
/// `a` converted to `dtype` (a copy).
StaticArrayPtr astype(Elaborator &el, const StaticArrayObj &a, DType dtype, SourceRange r);

/// NumPy's promotion of two array dtypes.
DType promote(DType a, DType b);
/// The result dtype of an operation between an array of `array` and a
/// Python scalar `scalar` (NEP 50: the array's dtype, unless the scalar's
/// kind is higher).
DType promoteWithScalar(DType array, const Obj &scalar, bool numpy);

/// Broadcast shape of `a` and `b`; fails as NumPy does.
std::vector<int64_t> broadcastShapes(Elaborator &el, const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b, SourceRange r);
/// `a` broadcast to `shape` (a copy).
StaticArrayPtr broadcastTo(Elaborator &el, const StaticArrayObj &a,
                           const std::vector<int64_t> &shape, SourceRange r);

/// `lhs op rhs` where one side is a static array and the other a static
/// array, a number or static data.
Obj binary(Elaborator &el, ast::BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
Obj compare(Elaborator &el, ast::CompareOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
Obj unary(Elaborator &el, ast::UnaryOp op, const StaticArrayObj &a, SourceRange r);
/// np.maximum / np.minimum.
Obj extremum(Elaborator &el, bool maximum, const Obj &lhs, const Obj &rhs, SourceRange r);
/// np.logical_and / _or / _xor.
Obj logical(Elaborator &el, ast::BinaryOp op, const Obj &lhs, const Obj &rhs, SourceRange r);
/// An element-wise float function (np.sqrt, np.exp, ...).
Obj mapFloat(Elaborator &el, const Obj &x, double (*fn)(double), SourceRange r, bool numpy);

/// `a[index]` and `a[index] = value`, with NumPy's basic and advanced
/// indexing.
Obj getItem(Elaborator &el, const StaticArrayObj &a, const Obj &index, SourceRange r);
void setItem(Elaborator &el, StaticArrayObj &a, const Obj &index, const Obj &value, SourceRange r);

//===--- Making, reshaping and reducing (StaticArrayShapes.cpp) ---------===//

/// np.arange(start, stop, step, dtype).
StaticArrayPtr arange(Elaborator &el, const Obj &start, const Obj &stop, const Obj &step,
                      std::optional<DType> dtype, bool numpy, SourceRange r);
/// np.full(shape, value, dtype).
StaticArrayPtr full(Elaborator &el, const std::vector<int64_t> &shape, const Obj &value,
                    DType dtype, bool numpy, SourceRange r);
/// An axis argument (negative counts from the end) checked against `rank`.
int64_t normalizeAxis(Elaborator &el, int64_t axis, int64_t rank, SourceRange r);
/// `a.reshape(shape)`, one entry may be -1.
StaticArrayPtr reshape(Elaborator &el, const StaticArrayObj &a, std::vector<int64_t> shape,
                       SourceRange r);
/// `a.transpose(perm)`.
StaticArrayPtr transpose(Elaborator &el, const StaticArrayObj &a, const std::vector<int64_t> &perm,
                         SourceRange r);
/// np.concatenate(arrays, axis).
StaticArrayPtr concatenate(Elaborator &el, const std::vector<StaticArrayPtr> &arrays, int64_t axis,
                           SourceRange r);
/// np.pad(a, widths, mode) with mode "constant" (filled with `value`) or
/// "edge".
StaticArrayPtr pad(Elaborator &el, const StaticArrayObj &a,
                   const std::vector<std::pair<int64_t, int64_t>> &widths, bool edge,
                   const Obj &value, SourceRange r);
/// A reduction over `axes` (empty: every axis).
enum class Reduction { Sum, Prod, Max, Min, Any, All, Mean, ArgMax, ArgMin, CountNonzero };
Obj reduce(Elaborator &el, const StaticArrayObj &a, Reduction kind, std::vector<int64_t> axes,
           bool keepdims, std::optional<DType> dtype, SourceRange r);
/// np.cumsum / np.cumprod along `axis` (nullopt: flattened).
StaticArrayPtr cumulative(Elaborator &el, const StaticArrayObj &a, bool product,
                          std::optional<int64_t> axis, SourceRange r);
/// np.nonzero(a): one int64 array per axis.
std::vector<StaticArrayPtr> nonzero(Elaborator &el, const StaticArrayObj &a, SourceRange r);
/// np.sort along `axis` (nullopt: flattened); with `indices`, np.argsort.
StaticArrayPtr sort(Elaborator &el, const StaticArrayObj &a, std::optional<int64_t> axis,
                    bool indices, SourceRange r);
/// np.unique(a): the sorted distinct elements.
StaticArrayPtr unique(Elaborator &el, const StaticArrayObj &a, SourceRange r);
/// np.where(cond, x, y).
Obj select3(Elaborator &el, const Obj &cond, const Obj &x, const Obj &y, SourceRange r);

/// `target op= value` of a NumPy array: `result` (target op value) written
/// into `target` in place, as NumPy's in-place operators do (its dtype
/// must cast to target's under 'same_kind', its shape be target's).
void assignInPlace(Elaborator &el, StaticArrayObj &target, const Obj &result, SourceRange r);

/// Python's truth value of an array (one element, or an error).
bool truthy(Elaborator &el, const StaticArrayObj &a, SourceRange r);
/// The rows of `a` (Python numbers for a 1-d array).
std::vector<Obj> rows(Elaborator &el, const StaticArrayObj &a, SourceRange r);
/// `a.tolist()`.
Obj toList(const StaticArrayObj &a);
/// repr(a), as NumPy prints it (`array([1, 2], dtype=int32)`).
std::string repr(const StaticArrayObj &a);
/// Element-wise equality of contents (np.array_equal).
bool equalContents(const StaticArrayObj &a, const StaticArrayObj &b, bool equalNan);

} // namespace static_array

/// The np.* functions and ndarray methods and attributes
/// (BuiltinsNumpyStatic.cpp).
namespace static_numpy {

/// `name(args)` computed statically when `name` is a NumPy function the
/// engine has and its arguments are static; nullopt otherwise.
std::optional<Obj> call(Elaborator &el, const std::string &name, CallArgs &args);
/// `a.name`: attributes and methods.
Obj attribute(Elaborator &el, const Obj &a, const std::string &name, SourceRange r);
/// Whether `o` holds a static array anywhere (pytree leaves).
bool holdsStaticArray(const Obj &o);
/// `o` with each static array leaf replaced by the array JAX would make
/// of it (materialize).
Obj materializeLeaves(Elaborator &el, const Obj &o, SourceRange r);
/// materializeLeaves on every argument of a call.
void materializeArguments(Elaborator &el, CallArgs &args);
/// The array jnp.asarray makes of `a` here: in an export, an array made
/// by a generated kernel (64-bit dtypes narrowed, as JAX does without
/// x64); in a kernel or at module level, an error that says why.
Obj materialize(Elaborator &el, const StaticArrayObj &a, SourceRange r);
/// Adds to the `numpy` namespace np.ndarray and the engine's functions
/// jnp does not have (np.ndindex, np.array_equal, ...).
void defineFunctions(NamespaceObj &numpy);
/// Fails: the values of `a` are needed where pkc cannot make them.
[[noreturn]] void failValue(Elaborator &el, const StaticArrayObj &a, SourceRange r);

} // namespace static_numpy

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_STATICARRAY_H
