//===- Object.h - Values the elaborator computes with ----------*- C++ -*-===//
//
// The elaborator is an interpreter for the static part of a .pk program.
// Everything it computes is an Object: Python values (ints, tuples,
// functions, ...), Pallas descriptions (BlockSpecs, ShapeDtypeStructs), and
// handles to what only exists at run time - block values (Array) and block
// references (Ref) inside kernels, full arrays (GlobalArray) at export level.
// Handles carry the MLIR value that computes them plus the static facts the
// elaborator checks (shape, dtype, JAX weak type).
//
// Objects are shared and mostly immutable; lists and dicts are mutable, as
// in Python.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_OBJECT_H
#define PK_FRONTEND_ELAB_OBJECT_H

#include "frontend/ast/AST.h"
#include "ir/PkDialect.h"
#include "support/DType.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Value.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pk::elab {

class Object;
using Obj = std::shared_ptr<Object>;
class Elaborator;
struct CallArgs;
struct Frame;

class Object {
public:
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    Str,
    Ellipsis,
    SymInt,
    Tuple,
    List,
    Dict,
    Set,
    Slice,
    Range,
    DType,
    Function,
    Builtin,
    BoundMethod,
    Partial,
    Namespace,
    Array,
    Ref,
    RefAt,
    GlobalArray,
    DynamicSlice,
    BlockSpec,
    BlockDim,
    IndexingMode,
    ShapeDtypeStruct,
    MemorySpace,
    ScratchShape,
    CompilerParams,
    GridSpec,
    PallasCallable,
    ArrayAnnotation,
    ExceptionType,
    Undefined,
    MosaicGpu, ///< plgpu objects (MosaicGpu.h)
    Class,
    Instance,
    Descriptor,
    ContextManager,
    CustomDerivative,
    ExtendedDType,
    ArrayAt,
    StaticArray,
    Super,
    Iterator,
  };

  explicit Object(Kind kind) : objectKind(kind) {}
  virtual ~Object() = default;
  Kind kind() const { return objectKind; }

private:
  Kind objectKind;
};

/// Python type name of an object, for messages ("int", "tuple", "Array").
std::string typeName(const Object &o);

#define PK_OBJECT_CLASSOF(K)                                                     \
  static bool classof(const Object *o) { return o->kind() == Kind::K; }

struct NoneObj : Object {
  NoneObj() : Object(Kind::None) {}
  PK_OBJECT_CLASSOF(None)
};

struct EllipsisObj : Object {
  EllipsisObj() : Object(Kind::Ellipsis) {}
  PK_OBJECT_CLASSOF(Ellipsis)
};

struct BoolObj : Object {
  explicit BoolObj(bool v) : Object(Kind::Bool), value(v) {}
  PK_OBJECT_CLASSOF(Bool)
  bool value;
};

// Numbers. A Python number has no dtype, and JAX types it weakly (`x * 2`
// keeps x's dtype). A NumPy scalar (np.float32(1), np.finfo(t).eps, an
// element of a NumPy array) carries `numpyType`, and JAX types it strongly
// (bf16 + np.float32(1) is f32); static arithmetic keeps it (NEP 50).
struct IntObj : Object {
  explicit IntObj(int64_t v, std::optional<DType> numpyType = std::nullopt)
      : Object(Kind::Int), value(v), numpyType(numpyType) {}
  PK_OBJECT_CLASSOF(Int)
  int64_t value;
  std::optional<DType> numpyType;
};

struct FloatObj : Object {
  explicit FloatObj(double v, std::optional<DType> numpyType = std::nullopt)
      : Object(Kind::Float), value(v), numpyType(numpyType) {}
  PK_OBJECT_CLASSOF(Float)
  double value;
  std::optional<DType> numpyType;
};

struct StrObj : Object {
  explicit StrObj(std::string v) : Object(Kind::Str), value(std::move(v)) {}
  PK_OBJECT_CLASSOF(Str)
  std::string value;
};

/// An integer known only symbolically: an affine expression over the
/// export's symbolic sizes (symbols) and, while an index map is being
/// traced, the grid indices (dims). Never a constant: constants are IntObj.
struct SymIntObj : Object {
  explicit SymIntObj(mlir::AffineExpr e) : Object(Kind::SymInt), expr(e) {}
  PK_OBJECT_CLASSOF(SymInt)
  mlir::AffineExpr expr;
};

struct ClassObj;

/// A tuple or a list. Lists are mutable in place (`append`). A tuple whose
/// `namedTuple` is set is an instance of that NamedTuple class: a tuple
/// everywhere, with its fields readable by name.
struct SequenceObj : Object {
  SequenceObj(Kind kind, std::vector<Obj> items) : Object(kind), items(std::move(items)) {}
  static bool classof(const Object *o) {
    return o->kind() == Kind::Tuple || o->kind() == Kind::List;
  }
  bool isList() const { return kind() == Kind::List; }
  std::vector<Obj> items;
  std::shared_ptr<ClassObj> namedTuple;
};

struct DictObj : Object {
  DictObj() : Object(Kind::Dict) {}
  PK_OBJECT_CLASSOF(Dict)
  std::vector<std::pair<Obj, Obj>> entries; // insertion order, as Python
  /// collections.defaultdict's default_factory: called, and its result
  /// stored, for a missing key; null for a plain dict (or a factory of
  /// None).
  Obj defaultFactory;
};

/// A set or a frozenset of hashable static values (Sets.h), in the order
/// they were added; setIterationOrder gives Python's order.
struct SetObj : Object {
  explicit SetObj(bool frozen) : Object(Kind::Set), frozen(frozen) {}
  PK_OBJECT_CLASSOF(Set)
  bool frozen;
  std::vector<Obj> items;
};

/// `start:stop:step`; each part is None, an int, or (for start) dynamic.
struct SliceObj : Object {
  SliceObj(Obj start, Obj stop, Obj step)
      : Object(Kind::Slice), start(std::move(start)), stop(std::move(stop)),
        step(std::move(step)) {}
  PK_OBJECT_CLASSOF(Slice)
  Obj start, stop, step;
};

/// `range(start, stop, step)`. Bounds are ints, or dynamic values when the
/// range drives a loop that runs at kernel run time.
struct RangeObj : Object {
  RangeObj(Obj start, Obj stop, Obj step)
      : Object(Kind::Range), start(std::move(start)), stop(std::move(stop)),
        step(std::move(step)) {}
  PK_OBJECT_CLASSOF(Range)
  Obj start, stop, step;
};

struct DTypeObj : Object {
  explicit DTypeObj(DType t) : Object(Kind::DType), dtype(t) {}
  PK_OBJECT_CLASSOF(DType)
  DType dtype;
};

/// A `def` or `lambda` closed over the frame it was defined in.
struct FunctionObj : Object {
  FunctionObj() : Object(Kind::Function) {}
  PK_OBJECT_CLASSOF(Function)
  std::string name;
  const std::vector<ast::Parameter> *parameters = nullptr;
  const ast::StmtList *body = nullptr; ///< a def's body
  const ast::Expr *lambdaBody = nullptr; ///< a lambda's expression
  SourceRange range;
  std::shared_ptr<Frame> closure;
  std::vector<Obj> defaults; ///< one per parameter; null when none
  std::vector<Obj> decorators;
  const ast::FunctionDefStmt *def = nullptr;
  /// The names the body assigns with `:=` (locals, as assigned names are).
  const std::vector<std::string> *namedTargets = nullptr;
  /// The class whose body defined this function (for `super()`).
  std::weak_ptr<ClassObj> ownerClass;
};

/// A function implemented by the elaborator: jnp.exp, pl.program_id, range...
struct BuiltinObj : Object {
  using Fn = std::function<Obj(Elaborator &, CallArgs &)>;
  BuiltinObj(std::string name, Fn fn) : Object(Kind::Builtin), name(std::move(name)), fn(std::move(fn)) {}
  PK_OBJECT_CLASSOF(Builtin)
  std::string name;
  Fn fn;
  std::map<std::string, Obj> members; ///< attributes: `jax.ShapeDtypeStruct.like`
  /// Why pkc refuses the construct, when it does: calling it or reading
  /// its attributes (`plgpu.CopyPartition.REPLICATED`) fails with this.
  std::string unsupportedBecause;
};

/// `x.astype` before the call: the receiver and the method.
struct BoundMethodObj : Object {
  BoundMethodObj(Obj self, std::string name, BuiltinObj::Fn fn)
      : Object(Kind::BoundMethod), self(std::move(self)), name(std::move(name)), fn(std::move(fn)) {}
  PK_OBJECT_CLASSOF(BoundMethod)
  Obj self;
  std::string name;
  BuiltinObj::Fn fn;
};

/// `functools.partial(f, *args, **kwargs)`.
struct PartialObj : Object {
  PartialObj() : Object(Kind::Partial) {}
  PK_OBJECT_CLASSOF(Partial)
  Obj function;
  std::vector<Obj> args;
  std::vector<std::pair<std::string, Obj>> kwargs;
};

/// A module-like namespace: `jnp`, `pl`, `lax`, `jax.nn`, ...
///
/// An *opaque* namespace stands for a module pkc does not have (absltest,
/// jax._src.test_util, ...): importing it succeeds, its attributes are
/// opaque too, and any other use is an error that names it (`why` says
/// what was looked for, `importedAt` where).
struct NamespaceObj : Object {
  explicit NamespaceObj(std::string name) : Object(Kind::Namespace), name(std::move(name)) {}
  PK_OBJECT_CLASSOF(Namespace)
  std::string name;
  std::map<std::string, Obj> members;
  bool opaque = false;
  std::string why;
  SourceRange importedAt;
  /// A module whose top level is still running (an import cycle reached
  /// it): what it has defined so far, and the cycle, for errors.
  std::string partialCycle;
};

/// A namespace pkc names but does not have: using it (or anything in it)
/// is an error that says `why`.
std::shared_ptr<NamespaceObj> opaqueNamespace(std::string name, std::string why);

/// The opaque namespace in `o`, or null.
inline const NamespaceObj *asOpaque(const Obj &o) {
  auto *ns = llvm::dyn_cast_or_null<NamespaceObj>(o.get());
  return ns && ns->opaque ? ns : nullptr;
}

/// A value computed in a kernel: a static-shape block (or a scalar, rank 0).
/// `weak` is JAX's weak type: Python scalars and what derives only from
/// them adapt to the dtype of the arrays they meet.
struct ArrayObj : Object {
  ArrayObj(mlir::Value value, std::vector<int64_t> shape, DType dtype, bool weak)
      : Object(Kind::Array), value(value), shape(std::move(shape)), dtype(dtype), weak(weak) {}
  PK_OBJECT_CLASSOF(Array)
  mlir::Value value;
  std::vector<int64_t> shape;
  DType dtype;
  bool weak;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

struct RefObj;

/// The window `x_ref.at[...]` selects, for every axis of the underlying
/// Ref: where it starts (static, or an `index` value), its size and stride,
/// and whether the axis is dropped.
struct RefView {
  std::vector<int64_t> staticOffsets; ///< ShapedType::kDynamic where dynamic
  std::vector<mlir::Value> dynamicOffsets; ///< one per dynamic offset, in order
  std::vector<int64_t> sizes, strides;
  std::vector<bool> squeezed;
  /// The window runs past the Ref's end (`x_ref.at[pl.ds(0, 128)]` of a
  /// 100-element Ref, read under a mask): accesses through it see the Ref
  /// padded past its end, as pl.load / pl.store do.
  bool pastEnd = false;
  /// `x_ref.at[idx]` with integer arrays: the i32 coordinates, one tensor
  /// of the view's shape per axis of the underlying Ref. Reading the view
  /// gathers, writing it scatters.
  std::vector<mlir::Value> gather;
  /// The run-time sizes (`index`) of the axes whose size is
  /// ShapedType::kDynamic: `x_ref.at[pl.ds(s, n)]` with n traced, a view
  /// only an async copy may move (the view is "ragged").
  std::vector<mlir::Value> dynamicSizes;
  /// `x_ref.bitcast(dtype)`: the Ref whose bits this view reinterprets
  /// (never itself a bitcast view); the view has no window of its own.
  std::shared_ptr<const RefObj> bitcastOf;
};

/// A kernel's view of a buffer. `value` is the !pk.ref block argument;
/// `view`, when set, narrows it to a window (`x_ref.at[...]`) and `shape`
/// is then the window's.
struct RefObj : Object {
  RefObj(mlir::Value value, std::vector<int64_t> shape, DType dtype,
         std::shared_ptr<const RefView> view = nullptr)
      : Object(Kind::Ref), value(value), shape(std::move(shape)), dtype(dtype),
        view(std::move(view)) {}
  PK_OBJECT_CLASSOF(Ref)
  mlir::Value value;
  std::vector<int64_t> shape; ///< kDynamic on a ragged view's run-time-sized axes
  DType dtype;
  std::shared_ptr<const RefView> view;
  /// A view with a size known only at run time (RefView::dynamicSizes).
  bool isRagged() const { return view && !view->dynamicSizes.empty(); }
  /// A Ref.bitcast view (RefView::bitcastOf).
  bool isBitcast() const { return view && view->bitcastOf; }
};

/// `x_ref.at`, waiting for its `[...]`.
struct RefAtObj : Object {
  explicit RefAtObj(std::shared_ptr<RefObj> ref) : Object(Kind::RefAt), ref(std::move(ref)) {}
  PK_OBJECT_CLASSOF(RefAt)
  std::shared_ptr<RefObj> ref;
};

/// A static or symbolic integer: a dimension of a full array, a grid size.
struct Dim {
  int64_t value = 0;       ///< when !expr
  mlir::AffineExpr expr{}; ///< a non-constant symbolic size
  bool isStatic() const { return !expr; }
  bool operator==(const Dim &o) const {
    return isStatic() == o.isStatic() && (isStatic() ? value == o.value : expr == o.expr);
  }
};

/// An axis of a full array that an enclosing jax.vmap maps over: it exists
/// in the IR value (at `axis`) but not in the shape the program sees.
struct BatchAxis {
  unsigned level; ///< which jax.vmap call (Elaborator::VmapLevel::id)
  size_t axis;    ///< position in the IR value's shape
  Dim size;
};

/// A full array at export level: an export argument or a pallas_call result.
struct GlobalArrayObj : Object {
  GlobalArrayObj(mlir::Value value, std::vector<Dim> shape, DType dtype, std::string name)
      : Object(Kind::GlobalArray), value(value), shape(std::move(shape)), dtype(dtype),
        name(std::move(name)) {}
  PK_OBJECT_CLASSOF(GlobalArray)
  mlir::Value value;
  std::vector<Dim> shape; ///< as the program sees it: without vmapped axes
  DType dtype;
  std::string name; ///< the parameter's name, for messages
  std::vector<BatchAxis> batch; ///< in increasing `axis` order

  /// The shape of `value`: `shape` with the vmapped axes in place.
  std::vector<Dim> physicalShape() const;
};

/// An array whose elements are known at compile time (StaticArray.h): a
/// NumPy array (`np.arange(8)`, a mask table built with NumPy), or a JAX
/// array made from static data at module level (`slices = jnp.array([[0,
/// 2], [2, 3]])`). Elements are stored row-major, integers and bools in
/// `ints` (unsigned ones as their bits), floats in `floats`.
struct StaticArrayObj : Object {
  StaticArrayObj(std::vector<int64_t> shape, DType dtype, bool numpy)
      : Object(Kind::StaticArray), shape(std::move(shape)), dtype(dtype), numpy(numpy) {}
  PK_OBJECT_CLASSOF(StaticArray)
  std::vector<int64_t> shape;
  DType dtype;
  bool numpy; ///< an np.ndarray; else a jax.Array
  std::vector<int64_t> ints;
  std::vector<double> floats;

  int64_t size() const {
    return static_cast<int64_t>(isFloat(dtype) ? floats.size() : ints.size());
  }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// `pl.ds(start, size, stride)`: a window with a possibly dynamic start.
/// Its size is static, except where an index map of a pl.BoundedSlice
/// block dimension returns it: there `dynamicSize` holds the traced size
/// (and `size` is 0). `staticSize()` is what every other use asks.
struct DynamicSliceObj : Object {
  DynamicSliceObj(Obj start, int64_t size, int64_t stride, Obj dynamicSize = nullptr)
      : Object(Kind::DynamicSlice), start(std::move(start)), size(size), stride(stride),
        dynamicSize(std::move(dynamicSize)) {}
  PK_OBJECT_CLASSOF(DynamicSlice)
  Obj start; ///< IntObj or a scalar ArrayObj
  int64_t size;
  int64_t stride;
  Obj dynamicSize; ///< a scalar ArrayObj, or null
};

/// One entry of a block shape in the newer Pallas spelling:
/// pl.Element(n, padding), pl.Squeezed(), pl.Blocked(n), pl.BoundedSlice(n).
struct BlockDimObj : Object {
  enum class Which { Blocked, Squeezed, Element, BoundedSlice };
  BlockDimObj(Which which, int64_t size, int64_t low = 0, int64_t high = 0)
      : Object(Kind::BlockDim), which(which), size(size), low(low), high(high) {}
  PK_OBJECT_CLASSOF(BlockDim)
  Which which;
  int64_t size, low, high;
};

/// `pl.Blocked()` or `pl.Unblocked(padding)` passed as `indexing_mode`.
struct IndexingModeObj : Object {
  IndexingModeObj(bool unblocked, std::vector<std::pair<int64_t, int64_t>> padding)
      : Object(Kind::IndexingMode), unblocked(unblocked), padding(std::move(padding)) {}
  PK_OBJECT_CLASSOF(IndexingMode)
  bool unblocked;
  std::vector<std::pair<int64_t, int64_t>> padding; ///< empty: no padding
};

struct MemorySpaceObj : Object {
  explicit MemorySpaceObj(MemorySpace space) : Object(Kind::MemorySpace), space(space) {}
  PK_OBJECT_CLASSOF(MemorySpace)
  MemorySpace space;
};

struct BlockSpecObj : Object {
  BlockSpecObj() : Object(Kind::BlockSpec) {}
  PK_OBJECT_CLASSOF(BlockSpec)
  Obj blockShape;   ///< None, or a tuple of int | None | BlockDimObj
  Obj indexMap;     ///< None or a callable
  Obj indexingMode; ///< None or IndexingModeObj
  std::optional<MemorySpace> memorySpace;
  /// pipeline_mode=pl.Buffered(...): how many buffers the pipeline keeps
  /// for the block (0: not given), and its other options as given.
  int64_t bufferCount = 0;
  bool useLookahead = false;
  std::string revisit; ///< "immediate", "any", or empty
  SourceRange range; ///< where the BlockSpec was built
  /// plgpu.BlockSpec(..., transforms=, delay_release=, collective_axes=).
  bool mosaicGpu = false;
  std::vector<mlir::Attribute> transforms;
  int64_t delayRelease = 0;
  std::vector<std::string> collectiveAxes;
};

struct ShapeDtypeStructObj : Object {
  ShapeDtypeStructObj(std::vector<Dim> shape, DType dtype)
      : Object(Kind::ShapeDtypeStruct), shape(std::move(shape)), dtype(dtype) {}
  PK_OBJECT_CLASSOF(ShapeDtypeStruct)
  std::vector<Dim> shape;
  DType dtype;
};

/// A scratch buffer request: `pltpu.VMEM((8, 128), jnp.float32)`.
struct ScratchShapeObj : Object {
  ScratchShapeObj(std::vector<int64_t> shape, DType dtype, MemorySpace space)
      : Object(Kind::ScratchShape), shape(std::move(shape)), dtype(dtype), space(space) {}
  PK_OBJECT_CLASSOF(ScratchShape)
  std::vector<int64_t> shape;
  DType dtype;
  MemorySpace space;
};

/// Backend options: `pltpu.CompilerParams(...)`, `plgpu.CompilerParams(...)`.
struct CompilerParamsObj : Object {
  CompilerParamsObj(std::string backend) : Object(Kind::CompilerParams), backend(std::move(backend)) {}
  PK_OBJECT_CLASSOF(CompilerParams)
  std::string backend; ///< "tpu", "gpu" or "" (generic)
  std::vector<std::pair<std::string, Obj>> options;
};

/// `pl.GridSpec(grid, in_specs, out_specs, scratch_shapes)`.
struct GridSpecObj : Object {
  GridSpecObj() : Object(Kind::GridSpec) {}
  PK_OBJECT_CLASSOF(GridSpec)
  Obj grid, inSpecs, outSpecs, scratchShapes;
  int64_t numScalarPrefetch = 0; ///< pltpu.PrefetchScalarGridSpec
};

/// The callable `pl.pallas_call(kernel, ...)` returns.
struct PallasCallableObj : Object {
  PallasCallableObj() : Object(Kind::PallasCallable) {}
  PK_OBJECT_CLASSOF(PallasCallable)
  Obj kernel, outShape, grid, inSpecs, outSpecs, scratchShapes, aliases, compilerParams;
  Obj costEstimate; ///< pl.CostEstimate's fields as a dict, or None
  int64_t numScalarPrefetch = 0; ///< leading inputs that index maps can read
  std::string name;
  /// `backend=`: "triton", "mosaic_gpu", "mosaic_tpu", or "" (JAX's choice).
  std::string backend;
  SourceRange range;
  /// Where each argument was given, for messages.
  SourceRange kernelRange, outShapeRange, gridRange, inSpecsRange, outSpecsRange, scratchRange,
      aliasesRange;
};

/// `f32[N, 128]` in an export signature.
struct ArrayAnnotationObj : Object {
  ArrayAnnotationObj(DType dtype, std::vector<Dim> shape)
      : Object(Kind::ArrayAnnotation), dtype(dtype), shape(std::move(shape)) {}
  PK_OBJECT_CLASSOF(ArrayAnnotation)
  DType dtype;
  std::vector<Dim> shape;
};

/// `ValueError` and friends, for `raise ValueError("...")`.
struct ExceptionTypeObj : Object {
  explicit ExceptionTypeObj(std::string name) : Object(Kind::ExceptionType), name(std::move(name)) {}
  PK_OBJECT_CLASSOF(ExceptionType)
  std::string name;
  std::string message; ///< set once called: ValueError("message")
};

/// What a variable holds after a dynamic loop or branch assigned it in a
/// way that cannot be carried out of it; reading it reports why.
struct UndefinedObj : Object {
  explicit UndefinedObj(std::string why) : Object(Kind::Undefined), why(std::move(why)) {}
  PK_OBJECT_CLASSOF(Undefined)
  std::string why;
};

/// A class made by a `class` statement (or collections.namedtuple). Only
/// static Python: its instances hold configuration and helpers, evaluated
/// at compile time like everything else that is not a block value.
struct ClassObj : Object {
  ClassObj() : Object(Kind::Class) {}
  PK_OBJECT_CLASSOF(Class)
  std::string name;
  std::vector<std::shared_ptr<ClassObj>> bases;
  std::vector<std::pair<std::string, Obj>> attributes; ///< the class namespace, in order
  /// Names annotated in the class body, in order (dataclass and NamedTuple
  /// fields), with their defaults (null when none).
  struct Field {
    std::string name;
    Obj defaultValue;
    Obj defaultFactory;
    bool init = true;
    bool kwOnly = false;
    bool pytreeStatic = false; ///< field(metadata={"static": True})
  };
  std::vector<Field> annotated;
  /// Registered with jax.tree_util.register_dataclass: its instances are
  /// pytree nodes whose children are these fields (the rest is static).
  std::optional<std::vector<std::string>> pytreeDataFields;
  bool isNamedTuple = false;
  bool isDataclass = false;
  bool isEnum = false;
  bool isIntEnum = false; ///< an enum.IntEnum: its members are ints too
  bool frozen = false;
  bool kwOnlyFromHere = false; ///< a `_: KW_ONLY` line was seen in the body
  std::string builtinBase; ///< "Exception", "object", ... for builtin bases
  SourceRange range;

  /// The class, then its bases depth-first (Python's MRO for the
  /// single-inheritance and diamond-free hierarchies configs use).
  std::vector<const ClassObj *> mro() const;
  /// Looks `name` up along the MRO; null when absent.
  Obj lookup(const std::string &name, const ClassObj **owner = nullptr) const;
  void set(const std::string &name, Obj value);
  /// The fields of a dataclass or NamedTuple, inherited ones first.
  std::vector<Field> fields() const;
};

/// An instance of a user class.
struct InstanceObj : Object {
  explicit InstanceObj(std::shared_ptr<ClassObj> cls) : Object(Kind::Instance), cls(std::move(cls)) {}
  PK_OBJECT_CLASSOF(Instance)
  std::shared_ptr<ClassObj> cls;
  std::vector<std::pair<std::string, Obj>> attributes; ///< in assignment order
  bool initialized = false; ///< frozen dataclasses refuse assignments once set
  Obj get(const std::string &name) const;
  void set(const std::string &name, Obj value);
};

/// `super()` in a method: attributes are looked up on `self`'s class
/// after `owner`, the class whose body defined the method.
struct SuperObj : Object {
  SuperObj(Obj self, std::shared_ptr<ClassObj> owner)
      : Object(Kind::Super), self(std::move(self)), owner(std::move(owner)) {}
  PK_OBJECT_CLASSOF(Super)
  Obj self; ///< an instance, or a class in a classmethod
  std::shared_ptr<ClassObj> owner;
};

/// What `iter(x)` returns: x's items, taken one at a time by `next` and
/// by whatever iterates it after (the rest, once).
struct IteratorObj : Object {
  explicit IteratorObj(std::vector<Obj> items) : Object(Kind::Iterator), items(std::move(items)) {}
  PK_OBJECT_CLASSOF(Iterator)
  std::vector<Obj> items;
  size_t position = 0;
};

/// `@property`, `@classmethod`, `@staticmethod` and
/// `functools.cached_property` around a function in a class body.
struct DescriptorObj : Object {
  enum class Which { Property, ClassMethod, StaticMethod };
  DescriptorObj(Which which, Obj function)
      : Object(Kind::Descriptor), which(which), function(std::move(function)) {}
  PK_OBJECT_CLASSOF(Descriptor)
  Which which;
  Obj function;
};

/// How a statement ends: normally, or with a jump its enclosing code takes.
enum class Flow { Normal, Break, Continue, Return };

/// A context manager or decorator that only names things or changes
/// nothing pkc computes: `jax.named_scope("x")`, `contextlib.nullcontext()`.
/// `with` binds `value`; as a decorator it returns the function unchanged.
struct ContextManagerObj : Object {
  ContextManagerObj(std::string name, Obj value)
      : Object(Kind::ContextManager), name(std::move(name)), value(std::move(value)) {}
  PK_OBJECT_CLASSOF(ContextManager)
  std::string name;
  Obj value;
  /// Run when a `with` enters and leaves the context (leaving also when
  /// its body raises); empty for contexts that change nothing pkc computes.
  std::function<void(Elaborator &)> enter, exit;
  /// A context that runs the `with` body itself, handing it the `as`
  /// value (a @contextlib.contextmanager generator, at its yield); the
  /// body's flow is the result.
  std::function<Flow(Elaborator &, const std::function<Flow(const Obj &)> &body)> run;
};

/// `jax.custom_vjp(f)` / `jax.custom_jvp(f)`: calls run `function` (the
/// primal); the rules registered by defvjp / defjvp are kept so that they
/// can be called (and exported) as functions of their own.
struct CustomDerivativeObj : Object {
  CustomDerivativeObj(std::string name, Obj function)
      : Object(Kind::CustomDerivative), name(std::move(name)), function(std::move(function)) {}
  PK_OBJECT_CLASSOF(CustomDerivative)
  std::string name; ///< "custom_vjp" or "custom_jvp"
  Obj function;
  std::vector<int64_t> nondiffArgnums;
  Obj forward, backward; ///< defvjp's rules, or defjvp's rule in `forward`
};

/// A dtype JAX names but pkc cannot compute with (int4, the float8
/// variants, ...): it can be named, compared and asked for its itemsize,
/// and using it for values is an error at that line.
struct ExtendedDTypeObj : Object {
  ExtendedDTypeObj(std::string name, unsigned bits, char kind)
      : Object(Kind::ExtendedDType), name(std::move(name)), bits(bits), kind(kind) {}
  PK_OBJECT_CLASSOF(ExtendedDType)
  std::string name; ///< NumPy's name: "int4", "float8_e4m3fn"
  unsigned bits;
  char kind; ///< 'i', 'u', 'f' (NumPy's dtype.kind)
};

/// `x.at` on a value, then `x.at[index]`, waiting for `.set(v)`, `.add(v)`...
struct ArrayAtObj : Object {
  ArrayAtObj(Obj array, Obj index)
      : Object(Kind::ArrayAt), array(std::move(array)), index(std::move(index)) {}
  PK_OBJECT_CLASSOF(ArrayAt)
  Obj array;
  Obj index; ///< null before the subscript
};

#undef PK_OBJECT_CLASSOF

//===----------------------------------------------------------------------===//
// Constructors for the common cases
//===----------------------------------------------------------------------===//

Obj none();
Obj makeBool(bool v);
Obj makeInt(int64_t v);
/// The dtype of a NumPy scalar; none for anything else (Python numbers).
std::optional<DType> numpyScalarType(const Object &o);
Obj makeFloat(double v);
Obj makeStr(std::string v);
/// Static evaluation's memory budget counts what it builds: every item of
/// every list and tuple created or grown, and strings in 16-byte units (an
/// item's size). The constructors below count; code that grows a list in
/// place calls countStaticItems, and code about to build a large value
/// calls checkStaticItems first. Past the budget both throw
/// StaticBudgetExceeded, which Elaborator::eval reports at the expression.
/// The budget is per thread; an Elaborator sets it when it starts.
struct StaticBudgetExceeded {};
void countStaticItems(size_t items);
void checkStaticItems(size_t items);
void setStaticItemBudget(uint64_t items);
uint64_t staticItemBudget();
Obj makeTuple(std::vector<Obj> items);
Obj makeList(std::vector<Obj> items);
/// An IntObj when `e` is constant, a SymIntObj otherwise.
Obj makeSymbolic(mlir::AffineExpr e);
Obj makeDim(const Dim &d);

inline bool isNone(const Obj &o) { return o->kind() == Object::Kind::None; }
/// Python's callable(): functions, builtins, bound methods, partials,
/// classes, and instances of classes with __call__.
bool isCallable(const Obj &o);

/// Python's repr() of a static object, for messages and compile-time print().
std::string repr(const Object &o);

/// A symbolic size as Python would write it: `N // 4`, `pl.cdiv(N, 128)`.
/// Symbols print by the names given to setSymbolNames (s0, s1, ... when
/// there are none).
std::string symbolicText(mlir::AffineExpr e);
/// The names of the affine symbols, as the export being elaborated calls
/// them; the elaborator keeps this pointing at its own list.
void setSymbolNames(const std::vector<std::string> *names);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_OBJECT_H
