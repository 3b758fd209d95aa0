//===- Elaborator.h - The static interpreter behind pk IR ------*- C++ -*-===//
//
// Elaborator walks the AST like a Python interpreter. Static values are
// computed on the spot; operations on block values emit pk / arith / math /
// scf ops at the builder's insertion point. Its pieces live in separate
// files: expressions (ElabExpr.cpp), statements (ElabStmt.cpp), calls
// (ElabCall.cpp), operators (Operators.cpp), dynamic control flow
// (ControlFlow.cpp), indexing (Indexing.cpp), exports (Export.cpp),
// pallas_call (PallasCall.cpp), and the built-in namespaces (Builtins*.cpp).
//
// Errors are thrown as ElabError and caught once, in elaborate(): the
// elaborator is a deeply recursive interpreter and this keeps every helper
// free of error plumbing. Exceptions never cross MLIR frames: bodies of
// regions are built by moving the insertion point, not with callbacks.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_ELABORATOR_H
#define PK_FRONTEND_ELAB_ELABORATOR_H

#include "frontend/elab/ArrayOps.h"
#include "frontend/elab/Elaborate.h"
#include "frontend/elab/Object.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace pk {
class PallasCallOp;
} // namespace pk

namespace pk::elab {

struct MeshInfo;
struct StateRefScopes;

/// Unwinds the elaborator with a diagnostic. `exception` names the Python
/// exception when the error is one a program can catch (`raise`, a failed
/// import, a missing attribute); `try` / `except` match on it.
struct ElabError {
  Diagnostic diagnostic;
  std::string exception;
};

/// Thrown while an index map is traced as an affine function and turns out
/// not to be one; the caller then emits it as an index_map region instead.
struct NotAffine {
  SourceRange range;
};

/// The variables of one function activation (or of the module).
struct Frame {
  std::unordered_map<std::string, Obj> vars;
  std::shared_ptr<Frame> parent; ///< the defining frame, for closures
  /// Names local to this function (assigned somewhere in it); null for the
  /// module frame, whose variables are globals.
  const std::set<std::string> *locals = nullptr;
  std::set<std::string> nonlocals;
  std::set<std::string> globalNames; ///< `global x`: x is the module's
  Obj returnValue;
  unsigned loopDepth = 0; ///< enclosing loops in this function, for `break`
  ClassObj *classBody = nullptr; ///< set while a class body runs in this frame
  bool comprehension = false; ///< a comprehension's scope (`:=` assigns past it)
  const FunctionObj *function = nullptr; ///< the function this frame runs, if any
  /// In a generator run as a context manager: runs the `with` body at the
  /// `yield` (Generators.cpp). Null elsewhere, where `yield` is an error.
  const std::function<void(const Obj &, SourceRange)> *onYield = nullptr;
};

/// The arguments of one call, with their source ranges.
struct CallArgs {
  std::vector<Obj> positional;
  std::vector<SourceRange> positionalRanges;
  std::vector<std::pair<std::string, Obj>> keywords;
  std::vector<SourceRange> keywordRanges;
  SourceRange range; ///< the whole call expression
  std::string callee;

  SourceRange rangeOf(size_t i) const {
    return i < positionalRanges.size() ? positionalRanges[i] : range;
  }
  SourceRange rangeOfKeyword(const std::string &name) const;
  /// Removes the keyword argument `name` and returns its value (null when
  /// it was not given): a wrapper that handles it before the call it makes.
  Obj takeKeyword(const std::string &name);
  void addPositional(Obj value, SourceRange r) {
    positional.push_back(std::move(value));
    positionalRanges.push_back(r);
  }
};

/// One parameter of a built-in function. A null `defaultValue` marks a
/// required parameter, unless `optional` is set: then an argument left out
/// binds to null (Python's "no default given", as in getattr(o, name)).
struct Param {
  const char *name;
  Obj defaultValue = nullptr;
  bool keywordOnly = false;
  bool optional = false;
};

/// A parameter that may be left out, binding to null.
inline Param optionalParam(const char *name) {
  Param p{name};
  p.optional = true;
  return p;
}

/// Built-in arguments after binding, each with the range to blame.
struct BoundArgs {
  std::vector<Obj> values;
  std::vector<SourceRange> ranges;
  const Obj &operator[](size_t i) const { return values[i]; }
  SourceRange range(size_t i) const { return ranges[i]; }
};

/// What the builder is currently emitting into.
enum class EmitMode {
  Module,          ///< top level: no IR is emitted
  Export,          ///< an export's body: pallas_calls
  Kernel,          ///< a kernel body: block values and Refs
  IndexMapAffine,  ///< tracing an index map: grid indices are affine dims
  IndexMapRegion,  ///< an index_map region: grid indices are i32 values
};

class Elaborator {
public:
  Elaborator(const ast::Module &module, const ElaborationOptions &options,
             DiagnosticEngine &diagnostics, mlir::MLIRContext &context);
  ~Elaborator();

  mlir::OwningOpRef<mlir::ModuleOp> run();
  /// The device kind the program sees (ElaborationOptions::deviceKind).
  const std::string &deviceKind() const { return options.deviceKind; }
  /// The platform the program sees (ElaborationOptions::platform).
  const std::string &platform() const { return options.platform; }
  /// Array code is tiled for TPU blocks (ElaborationOptions::tpuTiles).
  bool tpuTiles() const { return options.tpuTiles; }

  //===--------------------------------------------------------------------===//
  // Errors
  //===--------------------------------------------------------------------===//

  /// Reports an error at `range`, with notes for the active call stack.
  [[noreturn]] void fail(SourceRange range, const std::string &message);
  /// Raises the Python exception `type` ("ValueError") with `message`: an
  /// error that `try` / `except` can catch, reported as "type: message"
  /// (or as `message` alone when `named` is false).
  [[noreturn]] void raise(SourceRange range, const std::string &type, const std::string &message,
                          bool named = true);
  /// Reports a use of something from a module pkc does not have.
  [[noreturn]] void failOpaque(const NamespaceObj &opaque, SourceRange range);
  /// Fails (failOpaque) if `o` is opaque.
  void checkNotOpaque(const Obj &o, SourceRange range) {
    if (const NamespaceObj *ns = asOpaque(o))
      failOpaque(*ns, range);
  }
  void warn(SourceRange range, const std::string &message);
  /// Reports a note (compile-time print()).
  void note(const Diagnostic &diagnostic);
  /// Fails with "not affine" when tracing an index map, else like fail().
  [[noreturn]] void failNotAffine(SourceRange range, const std::string &message);

  //===--------------------------------------------------------------------===//
  // Evaluation
  //===--------------------------------------------------------------------===//

  Obj eval(const ast::Expr &expr);
  /// Reports that static values outgrew their budget (countStaticItems).
  [[noreturn]] void failStaticBudget(SourceRange range);
  Flow exec(const ast::StmtList &body);
  Flow exec(const ast::Stmt &stmt);
  Obj call(const Obj &callee, CallArgs &args);
  /// Binds a built-in's arguments the way Python binds a def's.
  BoundArgs bind(CallArgs &args, llvm::ArrayRef<Param> params);
  /// Assigns to a target expression (name, tuple, subscript, attribute).
  void assign(const ast::Expr &target, const Obj &value);
  /// Reads a variable; fails with NameError semantics.
  Obj lookup(const std::string &name, SourceRange range);
  void setVariable(const std::string &name, Obj value);
  /// The frame of the module `f` runs in: where `global` names live.
  static Frame &moduleFrameOf(Frame &f);
  bool isDefined(const std::string &name);

  /// Runs code in another frame (a call, a comprehension) until destroyed.
  class FrameSwitch {
  public:
    FrameSwitch(Elaborator &el, std::shared_ptr<Frame> next);
    ~FrameSwitch();

  private:
    Elaborator &el;
    std::shared_ptr<Frame> saved;
  };

  /// Marks the body of a loop, where `break` and `continue` are allowed.
  class LoopScope {
  public:
    explicit LoopScope(Elaborator &el) : frame(*el.frame) { ++frame.loopDepth; }
    ~LoopScope() { --frame.loopDepth; }

  private:
    Frame &frame;
  };

  //===--------------------------------------------------------------------===//
  // Conversions of static values
  //===--------------------------------------------------------------------===//

  int64_t toInt(const Obj &o, SourceRange r, const std::string &what);
  std::optional<int64_t> staticInt(const Obj &o);
  double toDouble(const Obj &o, SourceRange r, const std::string &what);
  /// int(v) for a float: fails on NaN, infinity and values beyond 64 bits.
  int64_t floatToInt(double v, SourceRange r);
  /// Python truthiness of a static value.
  bool truthy(const Obj &o, SourceRange r);
  DType toDType(const Obj &o, SourceRange r, const std::string &what);
  std::string toStr(const Obj &o, SourceRange r, const std::string &what);
  /// The elements of an iterable static value (tuple, list, dict, str).
  std::vector<Obj> iterate(const Obj &o, SourceRange r);
  /// A static shape: an int or a sequence of ints.
  std::vector<int64_t> toShape(const Obj &o, SourceRange r, const std::string &what);
  /// A shape that may hold symbolic sizes.
  std::vector<Dim> toDims(const Obj &o, SourceRange r, const std::string &what);
  Dim toDim(const Obj &o, SourceRange r, const std::string &what);
  /// Normalizes a possibly negative axis and checks its range.
  int64_t normalizeAxis(const Obj &axis, int64_t rank, SourceRange r);
  std::vector<int64_t> normalizeAxes(const Obj &axes, int64_t rank, SourceRange r);
  bool staticEquals(const Obj &a, const Obj &b);

  //===--------------------------------------------------------------------===//
  // Emission
  //===--------------------------------------------------------------------===//

  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext &context() { return *ctx; }
  mlir::Location loc(SourceRange range);
  EmitMode mode() const { return emitMode; }
  bool inKernel() const { return emitMode == EmitMode::Kernel || emitMode == EmitMode::IndexMapRegion; }
  /// Fails unless block values can be computed here.
  void requireKernel(SourceRange range, const std::string &what);
  ArrayOps &arrays() { return *arrayOps; }
  /// Whether f32 dots without a `precision` may use TF32, as JAX's
  /// default matmul precision (DEFAULT) does on GPUs; changed inside
  /// `with jax.default_matmul_precision(...)`.
  bool tf32ByDefault = true;

  /// Switches the emission mode and insertion point; restores both when
  /// the guard dies.
  class ModeGuard {
  public:
    ModeGuard(Elaborator &el, EmitMode mode);
    ~ModeGuard();

  private:
    Elaborator &el;
    EmitMode saved;
    mlir::OpBuilder::InsertionGuard insertion;
  };

  //===--------------------------------------------------------------------===//
  // Symbolic sizes
  //===--------------------------------------------------------------------===//

  /// The export's symbolic sizes, in symbol order.
  const std::vector<std::string> &symbols() const { return symbolNames; }
  /// The affine symbol for a name, creating it while a signature is read.
  mlir::AffineExpr symbolFor(const std::string &name);
  /// Binary arithmetic on SymInt / int operands, or null when the result
  /// would not be affine.
  std::optional<mlir::AffineExpr> affineBinary(ast::BinaryOp op, mlir::AffineExpr a,
                                               mlir::AffineExpr b);
  /// Emits pk.symbolic_size for `expr` (i32) in a kernel or index map.
  mlir::Value materializeSymbolic(mlir::AffineExpr expr, SourceRange r);
  /// The grid of the pallas_call being elaborated, for pl.num_programs.
  std::vector<Dim> &currentGrid() { return grid; }
  /// The grid axis a named grid (`grid=(("i", 2),)`) calls `name`, for
  /// lax.axis_index / axis_size / psum in its kernel.
  std::optional<size_t> namedGridAxis(const Obj &name) const;
  bool isDynamicGridAxis(size_t axis) const {
    return axis < dynamicGridAxes.size() && dynamicGridAxes[axis];
  }

  /// The `@export` decorator: queues a function to become a pk.export.
  void registerExport(std::shared_ptr<FunctionObj> function, SourceRange range);
  /// `@autotune(configs=...)`: the configurations `pkc tune` tries for
  /// `function`, recorded on its pk.export (Autotune.cpp).
  void registerAutotune(std::shared_ptr<FunctionObj> function, mlir::ArrayAttr configs,
                        SourceRange range);
  /// Whether the file being compiled assigns `name` at module level: the
  /// constants -D (and so a tuning configuration) replaces.
  bool assignsModuleConstant(const std::string &name);
  /// Elaborates one export, after the whole module has run.
  void elaborateExport(const FunctionObj &function, SourceRange range);
  /// `pallas_call(...)(args)` at export level.
  Obj applyPallasCall(const PallasCallableObj &callable, CallArgs &args);
  /// `jax.vmap(fun, in_axes, out_axes, axis_size=)(args)` (Vmap.cpp).
  Obj applyVmap(const Obj &fun, const Obj &inAxes, const Obj &outAxes, const Obj &axisSize,
                SourceRange vmapRange, CallArgs &args);
  /// Where code is being built: in which kernel (the nearest pallas_call
  /// or Mosaic GPU kernel around the insertion point; none at export
  /// level, whose loop and branch bodies elaborate in kernel mode too),
  /// and whether in its body rather than in a pallas_call's index map.
  struct KernelSite {
    mlir::Operation *kernel = nullptr; ///< a pk::PallasCallOp or pk::MeshKernelOp
    bool inBody = false;
    /// The pallas_call whose body is being built; null elsewhere.
    pk::PallasCallOp pallasCallBody() const;
  };
  KernelSite kernelSite();
  /// Whether code is being built in a kernel (a pallas_call's body or
  /// index maps, or a Mosaic GPU kernel's body), not at export level.
  bool inKernelCode() { return kernelSite().kernel != nullptr; }
  /// Fails: a kernel uses `array`, a whole array of the export, which it
  /// can only reach through a Ref.
  [[noreturn]] void failCapturedArray(const GlobalArrayObj &array, SourceRange r);

  /// Array code at export level (ExportArrays.cpp): runs `compute` on block
  /// values standing for the whole arrays among `inputs` (GlobalArray
  /// leaves of pytrees; other values pass as they are) in a generated
  /// pallas_call, and returns its result with each block value replaced by
  /// a whole array. `what` ("jax.numpy.exp") names the operation in
  /// messages and the kernel.
  /// Symbolic dimensions of the arrays run one program per index (the
  /// code must compute element-wise along them); symbolic sizes equal to
  /// one of them in sequences among `inputs` (shapes), or anywhere in them
  /// with `sizesAtTopLevel` (`x.reshape(B, 8)`), read as that one index.
  Obj arrayCodeAtExport(const std::string &what, SourceRange r, std::vector<Obj> inputs,
                        const std::function<Obj(std::vector<Obj> &)> &compute,
                        bool sizesAtTopLevel = false);
  /// arrayCodeAtExport over a call: the `leading` values, then `args`'
  /// positional and keyword values, may be whole arrays; `call` receives the
  /// leading ones and `args` with the others replaced by block values.
  Obj arrayCodeCall(const std::string &what, CallArgs &args, std::vector<Obj> leading,
                    const std::function<Obj(std::vector<Obj> &, CallArgs &)> &call,
                    bool sizesAtTopLevel = false);
  /// Whether `o` holds a whole array (a GlobalArray leaf) anywhere.
  static bool holdsGlobalArray(const Obj &o);
  /// Whether calling the builtin `builtinName` with `args` here is array
  /// code to run as a generated kernel: a jnp / lax / jax.nn function
  /// applied to whole arrays, or making one, in an export's body.
  bool tracesAtExport(const std::string &builtinName, const CallArgs &args) const;
  /// Replaces the NumPy arrays known at compile time (StaticArray.h) among
  /// `args` of the array function `builtinName` with the arrays JAX would
  /// make of them; other builtins take them as they are.
  void materializeStaticArguments(const std::string &builtinName, CallArgs &args);
  /// Calls `fn` with `args` as array code at export level.
  Obj callAtExport(const std::string &builtinName, const BuiltinObj::Fn &fn, CallArgs &args);
  /// A generated kernel's block past this many elements is tiled where the
  /// code allows it (ArrayCodeTracer.cpp).
  static constexpr int64_t kArrayCodeBlockElements = 16384;
  /// jnp.matmul or `@` (`matmul`) on large whole arrays with batch axes,
  /// as jax.vmap over those axes; nothing where that does not apply.
  std::optional<Obj> vmapBatchedMatmul(const BuiltinObj::Fn &matmul, CallArgs &args);
  /// jnp.einsum of two large whole arrays with a batch index (in both
  /// operands and the result), as jax.vmap over it; else nothing.
  std::optional<Obj> vmapBatchedEinsum(const BuiltinObj::Fn &einsum, CallArgs &args);
  /// While pl.estimate_cost traces: the ops made by functions JAX defines
  /// with custom_jvp (jax.nn.relu, relu6, user @jax.custom_jvp), which
  /// Pallas's cost rules do not count (CostEstimate.cpp); else null.
  llvm::DenseSet<mlir::Operation *> *uncountedOps = nullptr;
  /// Calls `callee` with `args`, adding the ops it makes to uncountedOps.
  Obj callUncounted(const Obj &callee, CallArgs &args);

  /// Where each jax.vmap level puts its axis in an output of `rank` dims:
  /// innermost first, each at its out_axes position among the axes outside
  /// it, so that leaving the vmap finds it where out_axes asks.
  std::vector<BatchAxis> outputBatchAxes(size_t rank, const std::string &what);

  /// One active jax.vmap call: each pallas_call under it gets a leading
  /// grid axis of `size` that its kernel does not see.
  struct VmapLevel {
    unsigned id;
    Dim size;
    std::optional<int64_t> outAxis; ///< where results put the axis, when one int
    SourceRange range;
  };
  const std::vector<VmapLevel> &activeVmaps() const { return vmapLevels; }
  /// Leading grid axes of the current pallas_call added by jax.vmap;
  /// pl.program_id(i) reads grid axis i + this.
  size_t hiddenGridAxes() const { return hiddenGrid; }

  /// The tensor type of a full array (symbolic dims become `?`).
  mlir::RankedTensorType globalType(const std::vector<Dim> &dims, DType dtype);
  /// ()[symbols] -> (dims) for a full array's shape.
  mlir::AffineMap symbolicShape(const std::vector<Dim> &dims);
  mlir::ArrayAttr symbolsAttr();
  /// "N, 128" with symbols by name.
  std::string describeDims(const std::vector<Dim> &dims);

  /// What `import dottedName` binds: a built-in namespace (jax,
  /// jax.numpy, functools, ...) or another .pk file's module (Imports.cpp).
  Obj importModule(const std::string &dottedName, SourceRange range);
  /// Whether the top level of an imported module is running.
  bool importing() const { return importStack.size() > 1; }

  /// Static evaluation budget: each statement and call spends one unit, so
  /// that `while True: pass` ends in a diagnostic instead of a hang.
  void spendFuel(SourceRange range);

  const SourceManager &sources() const { return diagnostics.sourceManager(); }

private:
  friend class ModeGuard;
  friend class CallScope;
  friend class ArrayCodeTracer; // ExportArrays.cpp

  // Expressions (ElabExpr.cpp).
  Obj evalExpression(const ast::Expr &expr); ///< eval without the budget's catch
  Obj evalName(const ast::NameExpr &e);
  Obj evalAttribute(const ast::AttributeExpr &e);
  Obj evalSubscript(const ast::SubscriptExpr &e);
  /// The index of `x[...]`: one entry, or a tuple (starred items spread,
  /// as PEP 646 has it, on either side of an assignment).
  Obj evalSubscriptIndex(const ast::SubscriptExpr &e);
  Obj evalCall(const ast::CallExpr &e);
  Obj evalLambda(const ast::LambdaExpr &e);
  Obj evalComprehension(const ast::ComprehensionExpr &e);
  Obj evalBoolOp(const ast::BoolOpExpr &e);
  Obj evalCompare(const ast::CompareExpr &e);
  Obj evalConditional(const ast::ConditionalExpr &e);
  Obj evalSequence(const ast::SequenceExpr &e);
  Obj evalDict(const ast::DictExpr &e);
  Obj evalIndex(const ast::Expr &e); ///< one subscript entry (slices allowed)

  // Statements (ElabStmt.cpp).
  Flow execIf(const ast::IfStmt &s);
  Flow execFor(const ast::ForStmt &s);
  Flow execWhile(const ast::WhileStmt &s);
  void execFunctionDef(const ast::FunctionDefStmt &s);
  void execImport(const ast::ImportStmt &s);
  void execClassDef(const ast::ClassDefStmt &s);
  /// A def's or class's decorators applied to what it defined.
  Obj applyDecorators(const std::vector<ast::ExprPtr> &decorators, Obj defined,
                      SourceRange nameRange);
  /// Records `name: type [= value]` in a class body as a field.
  void recordClassAnnotation(const ast::AnnAssignStmt &s, const Obj &value);
  Flow execWith(const ast::WithStmt &s);
  /// The `with` items from `item` on, then the body (each item's context
  /// wraps the rest).
  Flow execWithItems(const ast::WithStmt &s, size_t item);
  Flow execYield(const ast::YieldStmt &s);
  /// A `try` statement's body, handlers and `else` (its `finally` is
  /// execTry's).
  Flow execTryClauses(const ast::TryStmt &s);
  Flow execTry(const ast::TryStmt &s);
  Flow execMatch(const ast::MatchStmt &s); // ElabMatch.cpp
  void execImportFrom(const ast::ImportFromStmt &s);

  // Imports of .pk files (Imports.cpp).
  /// Runs the .pk module `dottedName` (once) and returns its namespace;
  /// null when the import path has no such file.
  Obj importPkModule(const std::string &dottedName, SourceRange range);
  /// `from .common import x`: the module `level` dots up from the file
  /// holding `range`; fails when there is none.
  Obj importRelative(unsigned level, const std::string &dottedName, SourceRange range);
  /// Runs what the loader found (once) and returns its namespace.
  Obj runPkModule(const ImportLoader::Result &found, const std::string &shownName,
                  SourceRange range);
  /// `import a.b.c` without `as`: binds `a` to a package namespace
  /// holding `b`, which holds the module `c`.
  void bindPackagePath(const std::string &dottedName, const Obj &module);
  void execAssert(const ast::AssertStmt &s);
  void execRaise(const ast::RaiseStmt &s);
  void execAugAssign(const ast::AugAssignStmt &s);
  void assignSubscript(const ast::SubscriptExpr &target, const Obj &value);

  // Calls (ElabCall.cpp).
  Obj callFunction(const FunctionObj &f, CallArgs &args, bool noteCallSite = true);
  void bindParameters(const FunctionObj &f, CallArgs &args, Frame &frame);
  const std::set<std::string> &localsOf(const FunctionObj &f);

public:
  /// Whether `f` is a generator function (it has a `yield`).
  bool isGenerator(const FunctionObj &f);
  /// Runs the generator function `f(*args)` as a context manager: `body`
  /// (the `with` body, given what the generator yields) runs at its yield.
  /// The body's flow (a `return` from the caller, ...) is the result.
  Flow runContextGenerator(const FunctionObj &f, CallArgs &args,
                           const std::function<Flow(const Obj &)> &body);

private:
  bool skipsDefinedAssignment(const ast::Expr &target);

  // pallas_call pieces (PallasCall.cpp).
  /// An operand axis that jax.vmap maps over, and the grid axis that
  /// enumerates it.
  struct VmappedAxis {
    size_t axis;
    unsigned gridAxis;
  };
  /// The BlockSpec of one operand. `dims` and `spec` are as the program
  /// sees them; `vmapped` axes become squeezed block dims indexed by the
  /// leading grid axes, which the user's index map does not see.
  mlir::Attribute buildBlockSpec(pk::PallasCallOp op, const std::string &what,
                                 const std::vector<Dim> &dims, const Obj &spec,
                                 const std::vector<Dim> &gridDims, SourceRange callRange,
                                 llvm::ArrayRef<VmappedAxis> vmapped = {});
  mlir::Block *indexMapBlock(pk::PallasCallOp op, size_t gridRank);
  /// A scalar-prefetch Ref for an index map (a null value while tracing an
  /// affine map: reading it makes the map computed).
  Obj prefetchRef(mlir::Value value, mlir::Type type);
  /// Gives an index map the scalar-prefetch inputs: `leaves` (one per
  /// Ref) in the structure each input was passed in.
  void addPrefetchArguments(CallArgs &mapArgs, const std::vector<Obj> &leaves, SourceRange r);
  void finishIndexMapRegion(pk::PallasCallOp op, SourceRange r);

  // Dynamic control flow (ControlFlow.cpp).
  Flow execDynamicIf(const ast::IfStmt &s, const Obj &condition);
  Flow execDynamicFor(const ast::ForStmt &s, const Obj &lower, const Obj &upper,
                      const Obj &step);
  Flow execDynamicWhile(const ast::WhileStmt &s);

public:
  // Loops and branches over dynamic values used by builtins (ControlFlow.cpp).
  /// lax.fori_loop; `unroll` (True, or at least the trip count, with
  /// static bounds) repeats the body once per index, as JAX's scan does.
  Obj foriLoop(const Obj &lower, const Obj &upper, const Obj &body, const Obj &init,
               SourceRange range, const Obj &unroll = nullptr);
  Obj whileLoop(const Obj &cond, const Obj &body, const Obj &init, SourceRange range);
  Obj cond(const Obj &predicate, const Obj &trueFn, const Obj &falseFn,
           std::vector<Obj> operands, SourceRange range);
  void when(const Obj &condition, const Obj &body, SourceRange range);

  /// The mesh of the pk.mesh_kernel being elaborated (plgpu.kernel,
  /// pl.core_map), or null (MosaicGpuKernel.cpp).
  const MeshInfo *activeMesh = nullptr;
  /// In a pltpu.emit_pipeline body, pl.program_id and pl.num_programs
  /// name the pipeline's step (its indices, a core's share offset added)
  /// and its grid, as Pallas's pipeline sets its grid environment.
  struct PipelineGrid {
    std::vector<Obj> indices, extents;
  };
  const PipelineGrid *activePipelineGrid = nullptr;
  /// `trace()` with `grid` as the pipeline grid pl.program_id and
  /// pl.num_programs answer from (restored after, also on errors).
  Obj withPipelineGrid(const PipelineGrid *grid, llvm::function_ref<Obj()> trace);
  /// The Refs of whole arrays made outside kernels in this export
  /// (StateRefs.cpp).
  std::shared_ptr<StateRefScopes> stateRefs;
  /// In the body of pl.kernel over a TensorCore mesh: the mesh's axis, its
  /// size, and this program's index along it (TpuKernel.cpp).
  struct TpuCoreAxis {
    std::string name;
    int64_t size = 1;
    Obj index;
  };
  std::optional<TpuCoreAxis> tpuCoreAxis;
  /// The axis names of the one-device meshes of the jax.shard_map calls
  /// being elaborated, innermost last (Sharding.cpp).
  std::vector<std::vector<std::string>> deviceMeshAxes;

  // Module-level state.
  Frame &currentFrame() { return *frame; }
  /// The `return`, `break` or `continue` statement executed last, to blame
  /// when its flow is not allowed where it ends up.
  SourceRange lastJumpRange() const { return lastJump; }

private:
  void defineBuiltins();
  void applyDefines();
  Obj defineValue(const ElaborationOptions::Define &define);

  const ast::Module &module;
  const ElaborationOptions &options;
  DiagnosticEngine &diagnostics;
  mlir::MLIRContext *ctx;
  mlir::OpBuilder b;
  mlir::OwningOpRef<mlir::ModuleOp> irModule;
  std::unique_ptr<ArrayOps> arrayOps;

  std::shared_ptr<Frame> globals;
  std::shared_ptr<Frame> frame;
  /// The frame a function or lambda defined here closes over (class bodies
  /// are not enclosing scopes). Recorded: a frame holds its functions and
  /// they hold it, a cycle shared_ptr never frees, so ~Elaborator empties
  /// every such frame that is still alive.
  std::shared_ptr<Frame> closureFrame();
  std::vector<std::weak_ptr<Frame>> closureFrames;
  /// Classes the program defined: their attributes (enum members, methods'
  /// defaults) may hold the class itself; ~Elaborator empties them too.
  std::vector<std::weak_ptr<ClassObj>> definedClasses;
  std::unordered_map<std::string, Obj> builtins;
  std::map<std::string, Obj> modules; ///< importable namespaces by dotted name
  /// Imported .pk modules' namespaces, each run once.
  std::map<const ast::Module *, Obj> pkModules;
  /// The module being elaborated, then the imports now running (cycles),
  /// with the frames their top levels run in (the first: null).
  std::vector<const ast::Module *> importStack;
  std::vector<std::shared_ptr<Frame>> importFrames;

  EmitMode emitMode = EmitMode::Module;
  std::vector<std::string> symbolNames;
  std::vector<SourceRange> symbolRanges; ///< where each symbol first appears
  bool creatingSymbols = false; ///< unknown names become symbols (signatures)
  std::vector<Dim> grid;
  /// Per axis of `grid`: whether its size is read from data (a grid bound),
  /// so that no symbolic size stands for it.
  std::vector<bool> dynamicGridAxes;
  std::vector<std::string> gridNames; ///< per grid axis: its name, or ""
  size_t hiddenGrid = 0;
  std::vector<VmapLevel> vmapLevels;
  unsigned nextVmapLevel = 0;

  struct CallSite {
    SourceRange range;
    std::string callee;
  };
  std::vector<CallSite> callStack;
  std::map<const void *, std::set<std::string>> localsCache;
  std::map<const void *, bool> generatorCache; ///< isGenerator, by function body
  /// The exceptions the `except` clauses running now handle, innermost
  /// last: what a bare `raise` raises again.
  std::vector<ElabError> handledExceptions;
  std::set<std::string> definedNames; ///< -D names, to warn when unused
  std::set<std::string> usedDefines;
  uint64_t fuel = 0;
  SourceRange lastJump;
  std::string currentExport;
  std::vector<std::pair<std::shared_ptr<FunctionObj>, SourceRange>> pendingExports;
  struct Autotuned {
    std::shared_ptr<FunctionObj> function;
    mlir::ArrayAttr configs;
    SourceRange range;
  };
  std::vector<Autotuned> autotuned;
  std::set<std::string> moduleAssignments;              ///< what -D replaces (applyDefines)
  std::vector<std::unique_ptr<ast::Expr>> definedExprs; ///< parsed -D values
  /// -D values for names the module assigns, evaluated at that assignment.
  std::map<std::string, const ElaborationOptions::Define *> deferredDefines;
  std::vector<mlir::Value> computedIndices; ///< index_map region results so far
  std::vector<mlir::Type> indexMapRefTypes; ///< scalar-prefetch Refs index maps receive
  /// The scalar-prefetch inputs as passed (pytrees whose leaves are those Refs).
  std::vector<Obj> indexMapPrefetchTrees;
};

/// Pushes a user-level call onto the elaborator's call stack.
class CallScope {
public:
  CallScope(Elaborator &el, SourceRange site, const std::string &callee);
  ~CallScope();

private:
  Elaborator &el;
};

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_ELABORATOR_H
