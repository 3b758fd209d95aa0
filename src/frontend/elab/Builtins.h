//===- Builtins.h - Python builtins and the jax / Pallas namespaces -*- C++ -*-===//
//
// The names a .pk program can use without defining them: Python builtins
// (range, len, min, ...) and the namespaces `import` binds (jax, jax.numpy,
// jax.lax, jax.nn, jax.experimental.pallas and its tpu / triton / gpu
// parts, functools, math, numpy). Each namespace is built in its own file.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_BUILTINS_H
#define PK_FRONTEND_ELAB_BUILTINS_H

#include "frontend/elab/Object.h"

#include <map>
#include <set>
#include <unordered_map>

namespace pk::elab {

class Elaborator;

/// Adds a builtin function `name` to a namespace.
void define(NamespaceObj &ns, const std::string &name, BuiltinObj::Fn fn);
/// A function implemented by the elaborator, named `name` in messages.
Obj builtin(const std::string &name, BuiltinObj::Fn fn);
/// `f(*positional, **keywords)`, every argument at `r`: how builtins call
/// the user's functions (kernel bodies, loop bodies) and each other.
Obj callAt(Elaborator &el, const Obj &f, const std::vector<Obj> &positional,
           const std::vector<std::pair<std::string, Obj>> &keywords, SourceRange r,
           const std::string &callee = "");

/// jnp.logaddexp (or logaddexp2 when `base2`) as JAX computes it, on
/// arrays or static numbers.
Obj logAddExp(Elaborator &el, const Obj &x1, const Obj &x2, bool base2, SourceRange r);

/// jax._src.random.prng and .threefry2x32: JAX's PRNG registry and the
/// threefry hash its TPU PRNG kernels call (BuiltinsRandom.cpp).
std::shared_ptr<NamespaceObj> makeJaxPrngNamespace();
std::shared_ptr<NamespaceObj> makeJaxThreefryNamespace(const std::shared_ptr<NamespaceObj> &prng);

/// jax.experimental.checkify (BuiltinsCheckify.cpp).
std::shared_ptr<NamespaceObj> makeCheckifyNamespace();

/// The size of `ds`, which must be static here: a traced size is only
/// meaningful as the index of a pl.BoundedSlice block dimension.
int64_t staticDsSize(Elaborator &el, const DynamicSliceObj &ds, SourceRange r);

void installPythonBuiltins(Elaborator &el, std::unordered_map<std::string, Obj> &builtins);
std::shared_ptr<NamespaceObj> makeNumpyNamespace(Elaborator &el, const std::string &name);
std::shared_ptr<NamespaceObj> makeMathNamespace(Elaborator &el);
std::shared_ptr<NamespaceObj> makeLaxNamespace(Elaborator &el);
std::shared_ptr<NamespaceObj> makeNnNamespace(Elaborator &el);
/// Every importable module, by dotted name.
std::map<std::string, Obj> makeModules(Elaborator &el);
/// dataclasses, typing, collections, enum, ... (BuiltinsStdlib.cpp); extends
/// `functools` and `math` already in `modules`.
void addStdlibModules(Elaborator &el, std::map<std::string, Obj> &modules);
/// cumsum, associative_scan, tile, pad, roll, diagonal, take, batched
/// dot_general, einsum, lax.switch, ... (BuiltinsArrays.cpp).
void defineArrayFunctions(Elaborator &el, NamespaceObj &jnp, NamespaceObj &lax);
/// jnp / lax functions defined as calls of others (BuiltinsAliases.cpp);
/// after every other jnp and lax function.
void defineAliases(Elaborator &el, NamespaceObj &jnp, NamespaceObj &lax);
/// lax.exp_p and its kin: `.name` and `.bind(*operands, **params)`.
void defineLaxPrimitives(NamespaceObj &lax);
/// Python's re module on static strings (BuiltinsRegex.cpp).
std::shared_ptr<NamespaceObj> makeRegexModule();
/// An array argument of a function on block values (`what` names it in
/// messages): refuses a Ref (read it first) and anything not numeric.
std::shared_ptr<ArrayObj> valueOperand(Elaborator &el, const Obj &o, SourceRange r,
                                       const char *what);
/// jnp.sort / argsort, lax.sort / sort_key_val / top_k (BuiltinsSort.cpp).
void defineSortFunctions(NamespaceObj &jnp, NamespaceObj &lax);
/// pltpu.roll and pltpu.repeat (BuiltinsArrays.cpp).
void defineTpuArrayFunctions(Elaborator &el, NamespaceObj &tpu);
/// The dtype of a semaphore Ref of `kind` (pl.semaphore,
/// pltpu.dma_semaphore, pl.barrier_semaphore): a dtype jnp.issubdtype
/// answers for and no array holds (BuiltinsPallas.cpp).
Obj semaphoreDType(pk::SemaphoreKind kind);
/// A context manager that changes nothing pkc computes, made by calling
/// `name(...)` with any arguments (jax.named_scope, ...; BuiltinsJax.cpp).
Obj namingContext(const std::string &name);
/// jax.empty_ref, jax.new_ref and jax.freeze: buffers a kernel makes
/// (JaxRefs.cpp).
void defineJaxRefs(NamespaceObj &jax);
/// JAX's interpret-mode parameters and switches (pltpu.InterpretParams,
/// force_tpu_interpret_mode, the GPU interpreter's module), accepted and
/// unused (BuiltinsInterpret.cpp).
void defineInterpretModes(NamespaceObj &tpu, std::map<std::string, Obj> &modules);
/// pl.program_id(axis) and pl.num_programs(axis) (BuiltinsPallas.cpp).
Obj programId(Elaborator &el, CallArgs &args);
Obj numPrograms(Elaborator &el, CallArgs &args);
/// jax._src's Pallas modules (core, primitives, mosaic_gpu.pipeline, ...),
/// each the public namespace that exports its names.
void addInternalPallasModules(std::map<std::string, Obj> &modules,
                              const std::shared_ptr<NamespaceObj> &pl,
                              const std::shared_ptr<NamespaceObj> &tpu,
                              const std::shared_ptr<NamespaceObj> &mosaicGpu);
/// pl.program_id or pl.num_programs (`query`) of grid axis `axis`: what
/// lax.axis_index and axis_size answer for a named grid's axis.
Obj gridAxisQuery(Elaborator &el, Obj (*query)(Elaborator &, CallArgs &), size_t axis,
                  SourceRange r);
/// pltpu.get_tpu_info, get_tpu_info_for_chip, is_tpu_device, ChipVersion
/// (TpuInfo.cpp).
void defineTpuInfo(NamespaceObj &tpu);
/// The TensorCores of the TPU device `deviceKind` names, as JAX's
/// Device.num_cores says (2 for v4 and v5p megacore devices); 0 when it
/// is not a TPU.
int64_t tpuCoresOfDevice(const std::string &deviceKind);
/// A CUDA device's compute capability as JAX's Device reports it ("9.0"),
/// for the device kinds pkc names for CUDA targets; "" for others.
std::string computeCapabilityOfDevice(const std::string &deviceKind);
/// The numbers of a compute capability ("9.0" -> {9, 0}), to compare as
/// JAX's helpers do; a part that is not an int raises Python's ValueError
/// at `r`.
std::vector<int64_t> computeCapabilityParts(Elaborator &el, const std::string &text, SourceRange r);
/// jax._src.test_util: its device queries (JAX's tests branch on them),
/// answered through `defaultBackend` (jax.default_backend); opaque else.
std::shared_ptr<NamespaceObj> makeTestUtilNamespace(Elaborator &el, const Obj &defaultBackend);
/// pltpu.SemaphoreType, make_async_copy, async_copy, sync_copy and the
/// semaphore ops' pltpu names (TpuMemory.cpp).
void defineTpuMemory(Elaborator &el, NamespaceObj &tpu, NamespaceObj &pl);
/// `x[index]` on a value with indices computed in the kernel (dynamic
/// ints, pl.ds, one integer array).
Obj indexValueDynamic(Elaborator &el, const std::shared_ptr<ArrayObj> &value, const Obj &index,
                      SourceRange r);
/// `x.at[index].method(args)` on a value.
Obj arrayAtUpdate(Elaborator &el, const Obj &array, const Obj &index, const std::string &method,
                  CallArgs &args);
/// lax.dot_general: contracting and batch axes (normalized) of each side.
Obj generalDot(Elaborator &el, const Obj &lhs, const Obj &rhs, std::vector<int64_t> lhsContract,
               std::vector<int64_t> rhsContract, std::vector<int64_t> lhsBatch,
               std::vector<int64_t> rhsBatch, const Obj &preferred, const Obj &precision,
               SourceRange r);
/// jnp.matmul and `@`: jnp.dot for operands of one and two axes; more axes
/// are a batch, broadcast between the operands as NumPy's matmul does.
Obj matmulBuiltin(Elaborator &el, const Obj &a, const Obj &b, const Obj &preferred,
                  const Obj &precision, SourceRange r);
/// `self.name` as a method implemented by `fn` (which gets `self` first).
Obj method(const Obj &self, const std::string &name, BuiltinObj::Fn fn);
/// `shape`, `dtype`, `ndim` and `size` of a static-shape block value, Ref
/// or static array; null for other names.
Obj shapeAttribute(const std::string &name, const std::vector<int64_t> &shape, DType dtype);
/// Python's sorted(): `items` ordered by `key` (None: the items), stably,
/// also with `reverse`.
std::vector<Obj> sortItems(Elaborator &el, std::vector<Obj> items, const Obj &key, bool reverse,
                           SourceRange r);
/// Methods of str (`s.endswith(...)`) and int (`n.bit_length()`)
/// (StrMethods.cpp).
Obj strMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);
Obj intMethod(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);
/// pltpu.create_tensorcore_mesh (TpuKernel.cpp).
void defineTensorCoreMesh(NamespaceObj &tpu);
/// Whether `mesh` is a TensorCore mesh.
bool isTensorCoreMesh(const Obj &mesh);
/// pl.kernel over a TensorCore mesh: `body` (or, when None, a decorator
/// for it) as a callable that runs it once per core on whole-array Refs.
Obj tensorCoreKernel(Elaborator &el, const Obj &mesh, const Obj &body, const Obj &outType,
                     const Obj &scratch, const Obj &compilerParams, const Obj &name, SourceRange r);
/// pl.core_map(mesh, compiler_params=, name=) over a TensorCore mesh: a
/// decorator that runs its function once per core on the Refs made
/// outside kernels (StateRefs.h).
Obj tensorCoreMap(Elaborator &el, const Obj &mesh, const Obj &compilerParams, const Obj &name,
                  SourceRange r);
/// lax.axis_index / lax.axis_size of the TensorCore mesh's axis, when
/// `names` is it inside such a kernel; null otherwise.
Obj tensorCoreAxisIndex(Elaborator &el, const Obj &names);
/// The jax.sharding namespace, jax.make_mesh and jax.shard_map over one
/// device, and lax's collectives over its axes (Sharding.cpp).
void defineSharding(Elaborator &el, NamespaceObj &jax, NamespaceObj &lax);
/// lax.axis_index / axis_size of names that are all jax.shard_map mesh
/// axes: 0 and 1; null / nullopt otherwise.
Obj deviceAxisIndex(Elaborator &el, const Obj &names, SourceRange r);
std::optional<int64_t> deviceAxisSize(Elaborator &el, const Obj &names);
std::optional<int64_t> tensorCoreAxisSize(Elaborator &el, const Obj &names);
/// pl.debug_print / jax.debug.print (`what` names it in messages).
Obj debugPrint(Elaborator &el, CallArgs &args, const char *what);
/// jit in every form, named_scope, custom_vjp / custom_jvp, tree_util, ...
/// (BuiltinsJax.cpp).
void extendJaxNamespace(Elaborator &el, NamespaceObj &jax);
/// int4, float8_*, complex64, ...: names for dtypes pkc does not compute with.
void addExtendedDTypes(NamespaceObj &numpy);
/// The extended dtype named `name` ("int4"), or null.
Obj dtypeByExtendedName(const std::string &name);
/// property, classmethod, staticmethod, object, type and more exceptions.
void installClassBuiltins(Elaborator &el, std::unordered_map<std::string, Obj> &builtins);

/// `value.name`: namespace members, array attributes and methods, ...
Obj getAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);
/// `isinstance(value, type)`; `type` may be a tuple of types.
bool isInstanceOf(Elaborator &el, const Obj &value, const Obj &type, SourceRange r);
/// `x.name` on a whole array at export level other than its shape and
/// dtype: a method (`x.reshape`) or property (`x.T`) that runs as array
/// code in a generated kernel (ExportArrays.cpp).
Obj globalArrayMember(Elaborator &el, const Obj &array, const std::string &name, SourceRange r);
/// `pl.CostEstimate(...)`: an object with the four fields as attributes.
Obj makeCostEstimate(int64_t flops, int64_t transcendentals, int64_t bytesAccessed,
                     int64_t remoteBytes);
bool isCostEstimate(const Obj &o);
/// `pl.estimate_cost(fun, *args, **kwargs)` (CostEstimate.cpp).
Obj estimateCost(Elaborator &el, CallArgs &args);
/// A dtype called as a function: `jnp.float32(x)`.
Obj castToDType(Elaborator &el, DType dtype, CallArgs &args);

/// Names assigned in a statement list (not inside nested functions).
void collectAssignedNames(const ast::StmtList &body, std::set<std::string> &out);

/// `autotune(configs=[...])`, the decorator factory (Autotune.cpp).
Obj autotuneBuiltin(Elaborator &el, CallArgs &args);

/// Shared implementations that several namespaces expose.
Obj reductionBuiltin(Elaborator &el, CallArgs &args, int kind);
/// lax.div / lax.rem: rounding toward zero.
Obj truncatedDivision(Elaborator &el, bool remainder, const Obj &x, const Obj &y, SourceRange r);
/// fmax, fmin, fmod, hypot, isclose, ... (BuiltinsNumpyComposite.cpp).
void defineNumpyComposites(NamespaceObj &numpy);
/// `a` reversed along `axis` (jnp.flip's; BuiltinsArrays.cpp).
std::shared_ptr<ArrayObj> reverseAxis(Elaborator &el, const std::shared_ptr<ArrayObj> &a,
                                      int64_t axis, SourceRange r);
/// jnp.linalg: the vector and Frobenius norms (BuiltinsNumpyComposite.cpp).
std::shared_ptr<NamespaceObj> makeLinalgNamespace();
/// Whether a dot's `precision` (None, a lax.Precision or its name, or a
/// pair of them) lets f32 operands be multiplied as TF32 on GPUs: DEFAULT
/// and HIGH do, as Pallas's GPU lowering has it; None means the
/// program's default matmul precision.
bool tf32Allowed(Elaborator &el, const Obj &precision, SourceRange r);
/// The matrix product of jnp.dot, jnp.matmul, lax.dot, dot_general, einsum.
Obj dotBuiltin(Elaborator &el, const Obj &a, const Obj &b, bool transposeA, bool transposeB,
               const Obj &preferred, const Obj &precision, SourceRange r);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_BUILTINS_H
