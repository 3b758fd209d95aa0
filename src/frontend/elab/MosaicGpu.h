//===- MosaicGpu.h - The Mosaic GPU language (plgpu) ------------*- C++ -*-===//
//
// What the elaborator knows of `from jax.experimental.pallas import
// mosaic_gpu as plgpu`: the objects a program builds (allocation requests,
// transforms, layouts, meshes, barrier and semaphore Refs) and the entry
// points the rest of the elaborator calls. The pieces live in
// BuiltinsMosaicGpu.cpp (the namespace), MosaicGpuKernel.cpp (plgpu.kernel,
// core_map, run_state, run_scoped, axis_index), MosaicGpuMemory.cpp (views,
// barriers, async copies, wgmma, semaphores) and MosaicGpuPipeline.cpp
// (emit_pipeline, nd_loop).
//
// All of these objects have Object::Kind::MosaicGpu and a `which` tag.
//
//===----------------------------------------------------------------------===//
#ifndef PK_FRONTEND_ELAB_MOSAICGPU_H
#define PK_FRONTEND_ELAB_MOSAICGPU_H

#include "frontend/elab/Object.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <functional>
#include <map>

namespace pk::elab {

class Elaborator;

struct MgpuObject : Object {
  enum class Which {
    Transform,    ///< plgpu.TilingTransform / SwizzleTransform / TransposeTransform
    Allocation,   ///< plgpu.SMEM(...), plgpu.Barrier(...), plgpu.ACC(...), ...
    BarrierRef,   ///< a barrier array (or one barrier) inside a kernel
    SemaphoreRef, ///< a semaphore array (or one semaphore) inside a kernel
    Layout,       ///< plgpu.Layout.WGMMA, ...
    Mesh,         ///< plgpu.Mesh(...)
    KernelCall,   ///< what plgpu.kernel(body, ...) returns
    SyncAt,       ///< `barrier.at`, waiting for its `[...]`
    Callable,     ///< a callable with attributes: plgpu.ACC (and ACC.init)
    WarpMesh,     ///< plgpu.WarpMesh(axis_name=)
    RefUnion,     ///< plgpu.RefUnion(...), before it is allocated
  };
  explicit MgpuObject(Which which) : Object(Kind::MosaicGpu), which(which) {}
  static bool classof(const Object *o) { return o->kind() == Kind::MosaicGpu; }
  Which which;
};

#define PK_MGPU_CLASSOF(W)                                                                         \
  static bool classof(const Object *o) {                                                           \
    return MgpuObject::classof(o) && static_cast<const MgpuObject *>(o)->which == Which::W;        \
  }

/// One SMEM transform; `attr` is its #pk.tile / #pk.swizzle / #pk.transpose.
struct TransformObj : MgpuObject {
  explicit TransformObj(mlir::Attribute attr) : MgpuObject(Which::Transform), attr(attr) {}
  PK_MGPU_CLASSOF(Transform)
  mlir::Attribute attr;
};

/// A request for memory or synchronization, made by scratch_shapes,
/// pl.run_scoped or emit_pipeline: its IR type says what it is.
struct AllocationObj : MgpuObject {
  enum class What { Ref, Barrier, Semaphore, Accumulator };
  AllocationObj(What what, mlir::Type type)
      : MgpuObject(Which::Allocation), what(what), type(type) {}
  PK_MGPU_CLASSOF(Allocation)
  What what;
  mlir::Type type;   ///< !pk.ref, !pk.barrier or !pk.semaphore
  Obj initialValue;  ///< plgpu.ACC.init(x): the array it starts with
  SourceRange range; ///< where it was requested
};

/// `plgpu.RefUnion(*groups)`: groups (pytrees of plgpu.SMEM, or of
/// plgpu.TMEM, allocations) that may share memory. Allocated, it is one
/// buffer holding every group from its start, and Python sees the tuple of
/// the groups' Refs.
struct RefUnionObj : MgpuObject {
  RefUnionObj() : MgpuObject(Which::RefUnion) {}
  PK_MGPU_CLASSOF(RefUnion)
  std::vector<Obj> groups;
  MemorySpace space = MemorySpace::GPUShared;
  SourceRange range;
};

/// A barrier or semaphore Ref in a kernel: the array, and the element
/// `barrier.at[i]` selected (index values, one per axis), if any.
struct SyncRefObj : MgpuObject {
  SyncRefObj(Which which, mlir::Value value, std::vector<mlir::Value> indices = {})
      : MgpuObject(which), value(value), indices(std::move(indices)) {}
  static bool classof(const Object *o) {
    return MgpuObject::classof(o) &&
           (static_cast<const MgpuObject *>(o)->which == Which::BarrierRef ||
            static_cast<const MgpuObject *>(o)->which == Which::SemaphoreRef);
  }
  bool isBarrier() const { return which == Which::BarrierRef; }
  /// The shape seen from Python: the window's, or the array's.
  std::vector<int64_t> shape() const;
  /// How many barriers (or semaphores) it names: 1 for one element.
  int64_t size() const;
  mlir::Value value;
  std::vector<mlir::Value> indices; ///< empty: the whole array (or the window)
  /// `barrier.at[2:4]`: a window of the array, its first element along
  /// each array axis (an int or an i32 scalar) and the array axes it
  /// keeps with their sizes (an integer index drops its axis). Empty:
  /// the whole array.
  std::vector<Obj> windowStart;
  std::vector<std::pair<size_t, int64_t>> windowAxes;
};

/// `barrier.at`: subscripting it selects one barrier (or semaphore).
struct SyncAtObj : MgpuObject {
  explicit SyncAtObj(std::shared_ptr<SyncRefObj> ref)
      : MgpuObject(Which::SyncAt), ref(std::move(ref)) {}
  PK_MGPU_CLASSOF(SyncAt)
  std::shared_ptr<SyncRefObj> ref;
};

/// A callable that also has attributes (plgpu.ACC and plgpu.ACC.init).
struct CallableObj : MgpuObject {
  CallableObj(std::string name, BuiltinObj::Fn fn)
      : MgpuObject(Which::Callable), name(std::move(name)), fn(std::move(fn)) {}
  PK_MGPU_CLASSOF(Callable)
  std::string name;
  BuiltinObj::Fn fn;
  std::map<std::string, Obj> members;
};

/// plgpu.Layout.X (or one of its reductions).
struct LayoutObj : MgpuObject {
  explicit LayoutObj(mlir::Attribute attr, std::string name)
      : MgpuObject(Which::Layout), attr(attr), name(std::move(name)) {}
  PK_MGPU_CLASSOF(Layout)
  mlir::Attribute attr; ///< #pk.layout<...>
  std::string name;
};

/// A mesh of CTAs and Pallas threads: plgpu.Mesh, or plgpu.kernel's.
struct MeshObj : MgpuObject {
  MeshObj() : MgpuObject(Which::Mesh) {}
  PK_MGPU_CLASSOF(Mesh)
  std::vector<int64_t> grid, cluster;
  std::vector<std::string> gridNames, clusterNames;
  int64_t numThreads = 1;
  std::string threadName; ///< empty when the mesh has no thread axis
  std::string kernelName;
  SourceRange range;
};

/// plgpu.WarpMesh(axis_name=): the 4 warps of a Pallas thread.
struct WarpMeshObj : MgpuObject {
  explicit WarpMeshObj(std::string axisName)
      : MgpuObject(Which::WarpMesh), axisName(std::move(axisName)) {}
  PK_MGPU_CLASSOF(WarpMesh)
  std::string axisName;
};

/// plgpu.kernel(body, out_shape=..., scratch_shapes=..., ...).
struct KernelCallObj : MgpuObject {
  KernelCallObj() : MgpuObject(Which::KernelCall) {}
  PK_MGPU_CLASSOF(KernelCall)
  Obj body, outShape, scratch, compilerParams;
  std::shared_ptr<MeshObj> mesh;
  std::string name;
  SourceRange range, outShapeRange, scratchRange;
};

#undef PK_MGPU_CLASSOF

/// The mesh of the pk.mesh_kernel being elaborated.
struct MeshInfo {
  std::shared_ptr<MeshObj> mesh;
  /// In the body of a core_map over a plgpu.WarpMesh: its axis name.
  std::string warpAxis;
  /// The axis an axis name refers to: 0 grid, 1 cluster, 2 thread, 3 the
  /// warp axis.
  std::optional<std::pair<unsigned, unsigned>> find(const std::string &name) const;
  int64_t sizeOf(const std::pair<unsigned, unsigned> &axis) const;
};

/// The Python type name of a Mosaic GPU object, for messages.
std::string mosaicGpuTypeName(const Object &o);

/// Hooks for the generic elaborator: calling a Mosaic GPU object,
/// reading its attributes, subscripting it.
Obj callMosaicGpu(Elaborator &el, const Obj &callee, CallArgs &args);
Obj mosaicGpuAttribute(Elaborator &el, const Obj &value, const std::string &name, SourceRange r);
Obj mosaicGpuSubscript(Elaborator &el, const Obj &container, const Obj &index, SourceRange r);
/// dataclasses.replace(x, **changes) of a Mosaic GPU object (plgpu.Barrier).
Obj replaceMosaicGpu(Elaborator &el, const Obj &target, CallArgs &args);
/// plgpu.SMEM(shape, dtype, transforms=) and plgpu.GMEM(...): an allocation.
Obj allocateGpuMemory(Elaborator &el, MemorySpace space, CallArgs &args);
/// plgpu.RefUnion(*groups).
Obj refUnion(Elaborator &el, CallArgs &args);
/// pltpu/plgpu.SemaphoreType.X: a request for semaphores of a kind.
Obj semaphoreAllocation(Elaborator &el, std::vector<int64_t> shape, pk::SemaphoreKind kind,
                        SourceRange r);
/// pl.program_id / pl.num_programs in a mesh kernel: its grid axes.
Obj meshProgramId(Elaborator &el, int64_t axis, SourceRange r);
Obj meshNumPrograms(Elaborator &el, int64_t axis, SourceRange r);

/// Builds `jax.experimental.pallas.mosaic_gpu` and adds the Mosaic GPU
/// members of `pl` (core_map, run_state, run_scoped, get_global,
/// semaphores) and `lax` (axis_index, axis_size).
std::shared_ptr<NamespaceObj> makeMosaicGpuNamespace(Elaborator &el, NamespaceObj &pl,
                                                     NamespaceObj &lax);

//===----------------------------------------------------------------------===//
// Used across the Mosaic GPU files
//===----------------------------------------------------------------------===//

/// `kernel(*arrays)` for a plgpu.kernel at export level.
Obj applyKernelCall(Elaborator &el, const KernelCallObj &kernel, CallArgs &args);
/// pl.core_map(mesh)(body) at export level, inside pl.run_state.
Obj coreMap(Elaborator &el, const std::shared_ptr<MeshObj> &mesh, const Obj &body, SourceRange r);
/// pl.run_state(f)(initial) at export level or in a kernel.
Obj runState(Elaborator &el, const Obj &f, const Obj &initial, SourceRange r);
/// Emits a pk.run_scoped holding `allocations` (a pytree of allocation
/// requests) and runs `body` on the pytree of their Refs inside it; what
/// body returns comes out of the scope (its block values as results).
Obj scoped(Elaborator &el, const Obj &allocations, const std::vector<std::string> &collective,
           SourceRange r, const std::function<Obj(const Obj &)> &body,
           const std::vector<std::string> &argNames = {});
/// pl.run_scoped(f, *types, collective_axes=, **kwtypes) in a kernel.
Obj runScoped(Elaborator &el, CallArgs &args);
/// `x_ref.T` / `x_ref.transpose(perm)`: plgpu.transpose_ref's view.
Obj transposedRef(Elaborator &el, const Obj &ref, const std::vector<int64_t> &permutation,
                  SourceRange r);
/// plgpu.emit_pipeline(body, grid=, in_specs=, out_specs=, ...): the
/// function that runs the pipeline over the GMEM Refs it is called with.
Obj emitMosaicGpuPipeline(Elaborator &el, CallArgs &args);
/// Whether JAX would hand this pallas_call to Mosaic GPU and its kernel
/// needs Mosaic GPU's memory (plgpu scratch, transformed blocks), which
/// only the pipelined lowering below gives it.
bool isMosaicGpuPallasCall(const PallasCallableObj &call);
/// `pallas_call(...)(*arrays)` lowered as Mosaic GPU lowers it: a
/// plgpu.kernel over the parallel grid axes running an emit_pipeline over
/// the sequential ones (MosaicGpuPallasCall.cpp).
Obj applyMosaicGpuPallasCall(Elaborator &el, const PallasCallableObj &call, CallArgs &args);
/// lax.axis_index(name or names) in a kernel: an i32 value.
Obj axisIndex(Elaborator &el, const Obj &names, SourceRange r);
/// lax.axis_size(name or names): a static int.
int64_t axisSize(Elaborator &el, const Obj &names, SourceRange r);
/// Fails unless elaboration is inside a pk.mesh_kernel body.
const MeshInfo &requireMesh(Elaborator &el, SourceRange r, const std::string &what);

/// The Ref value an op can take for `ref` (a view becomes pk.ref_view).
/// A ragged view (a size known only at run time) is refused unless
/// `allowRagged`: only async copies take one.
mlir::Value materializeRef(Elaborator &el, const RefObj &ref, SourceRange r,
                           bool allowRagged = false);
/// The IR type of a Ref object as ops see it.
mlir::Type refTypeOf(Elaborator &el, const RefObj &ref, SourceRange r);
/// A scalar index as an `index` value.
mlir::Value indexValue(Elaborator &el, const Obj &o, SourceRange r);
/// The collective axes argument (None, a name or a tuple of names).
std::vector<std::string> axisNames(Elaborator &el, const Obj &o, SourceRange r, const char *what);

/// The Ref argument `what` of a builtin (fails at `r` otherwise).
RefObj &refArg(Elaborator &el, const Obj &o, SourceRange r, const std::string &what);
/// Checks that `mode` (the argument `what`) is a plgpu.OOBFillMode. Every
/// mode reads zeros past the source's array in pkc, as ZEROS (the
/// default) does: what UNDEFINED allows and PROMISE_IN_BOUNDS never sees.
void checkOobFillMode(Elaborator &el, const Obj &mode, SourceRange r, const char *what);
/// One barrier (`barrier` set) or semaphore: an array of several must be
/// indexed (`barrier.at[i]`).
SyncRefObj &syncArg(Elaborator &el, const Obj &o, SourceRange r, bool barrier,
                    const std::string &what);

/// pl.core_map(plgpu.WarpMesh(axis_name))(body) in a kernel: `body`
/// (no arguments, or the warp index with `passIndex`) in a pk.warp_map.
Obj warpMap(Elaborator &el, const std::string &axisName, const Obj &body, bool passIndex,
            SourceRange r);

/// Defines the memory, synchronization and tensor-core builtins.
void defineMosaicGpuMemory(Elaborator &el, NamespaceObj &plgpu, NamespaceObj &pl);
/// Defines Blackwell's tensor memory builtins (tcgen05_mma, TMEM loads
/// and stores).
void defineMosaicGpuTensorMemory(Elaborator &el, NamespaceObj &plgpu);
/// Defines Blackwell's cluster launch control (try_cluster_cancel,
/// query_cluster_cancel, dynamic_scheduling_loop).
void defineMosaicGpuClusterLaunch(Elaborator &el, NamespaceObj &plgpu);
/// Defines emit_pipeline, emit_pipeline_warp_specialized, nd_loop.
void defineMosaicGpuPipelines(Elaborator &el, NamespaceObj &plgpu);
/// Defines plgpu.inline_mgpu (MosaicGpuInline.cpp).
void defineInlineMgpu(NamespaceObj &plgpu);
/// Adds JAX's MLIR Python bindings (jaxlib.mlir, jax._src.lib.mlir) as far
/// as inline_mgpu bodies use them, and Mosaic GPU's own module, opaque.
void addMlirBindingModules(std::map<std::string, Obj> &modules);
/// A plgpu.NDLoopInfo (a frozen dataclass) of these fields.
Obj ndLoopInfo(Elaborator &el, const Obj &index, const Obj &localIndex, const Obj &numLocalSteps,
               SourceRange r);
/// Defines pltpu.emit_pipeline (the same pk.pipeline over TPU Refs).
void defineTpuPipelines(Elaborator &el, NamespaceObj &pltpu);

} // namespace pk::elab

#endif // PK_FRONTEND_ELAB_MOSAICGPU_H
