//===- JaxRefs.cpp - jax.empty_ref, jax.new_ref and jax.freeze ------------===//
//
// JAX's mutable arrays. In a Pallas kernel, `jax.empty_ref(ty,
// memory_space=pltpu.VMEM)` allocates a buffer that lives while the
// kernel runs, as a scratch buffer does; pkc makes it one: a scratch
// operand appended to the pallas_call. `jax.new_ref(x)` is such a buffer
// holding x, and `jax.freeze(ref)` reads it. In an export they make Refs
// of whole arrays that kernels then run on (pl.core_map over a mesh;
// StateRefs.h), and `jax.freeze(ref)` is the array the Ref holds.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/StateRefs.h"
#include "ir/DTypeMapping.h"

namespace pk::elab {

namespace {

MemorySpace memorySpaceArg(Elaborator &el, const Obj &o, SourceRange r) {
  if (isNone(o))
    return MemorySpace::VMEM; // Pallas's default for a kernel's buffers
  auto *space = llvm::dyn_cast<MemorySpaceObj>(o.get());
  if (!space || (space->space != MemorySpace::VMEM && space->space != MemorySpace::SMEM))
    el.fail(r, "a Ref made in a kernel lives in pltpu.VMEM or pltpu.SMEM, got " + repr(*o));
  return space->space;
}

/// The pallas_call that gets the buffer `what` makes; an error where
/// there is none.
pk::PallasCallOp requireBufferSite(Elaborator &el, const char *what, SourceRange r) {
  pk::PallasCallOp call = el.kernelSite().pallasCallBody();
  if (!call && (el.mode() == EmitMode::IndexMapAffine || el.mode() == EmitMode::IndexMapRegion))
    el.fail(r, std::string(what) + " in an index map is not supported: an index map computes "
                                   "block indices; make buffers in the kernel");
  if (!call)
    el.fail(r, std::string(what) +
                   (el.inKernel() ? " in a Mosaic GPU kernel is not supported: allocate with "
                                    "scratch_shapes or pl.run_scoped"
                                  : " outside a kernel is not supported yet: pkc makes Refs of "
                                    "whole arrays with pl.pallas_call and pl.kernel, which pass "
                                    "them to the kernel"));
  return call;
}

/// A buffer of `shape` and `dtype` for the rest of the kernel.
std::shared_ptr<RefObj> kernelBuffer(Elaborator &el, const char *what,
                                     const std::vector<int64_t> &shape, DType dtype,
                                     MemorySpace space, SourceRange r) {
  pk::PallasCallOp call = requireBufferSite(el, what, r);
  for (int64_t d : shape)
    if (d <= 0)
      el.fail(r, std::string(what) + ": a buffer's dimensions must be positive");
  mlir::MLIRContext *ctx = &el.context();
  auto type =
      pk::RefType::get(shape, storageType(ctx, dtype), pk::MemorySpaceAttr::get(ctx, space));
  mlir::Value buffer = call.getKernelBlock().addArgument(type, el.loc(r));
  llvm::SmallVector<mlir::Attribute> scratch(call.getScratchTypes().begin(),
                                             call.getScratchTypes().end());
  scratch.push_back(mlir::TypeAttr::get(type));
  call.setScratchTypesAttr(mlir::ArrayAttr::get(ctx, scratch));
  return std::make_shared<RefObj>(buffer, shape, dtype);
}

/// Where the Ref `what` makes lives when it is a Ref of a whole array
/// (made in an export, outside kernels); nullopt otherwise. Such a Ref
/// lives in pl.ANY (HBM, GMEM), or on a TPU in VMEM or SMEM.
std::optional<MemorySpace> stateRefSpace(Elaborator &el, const char *what, const Obj &space,
                                         SourceRange r) {
  if (el.mode() != EmitMode::Export || el.inKernelCode())
    return std::nullopt;
  if (isNone(space))
    return MemorySpace::Any;
  auto *s = llvm::dyn_cast<MemorySpaceObj>(space.get());
  if (s && (s->space == MemorySpace::Any || s->space == MemorySpace::GPUGlobal))
    return MemorySpace::Any;
  if (s && (s->space == MemorySpace::HBM || s->space == MemorySpace::VMEM ||
            s->space == MemorySpace::SMEM))
    return s->space;
  el.fail(r, std::string(what) +
                 " outside kernels makes a Ref of a whole array, which lives in "
                 "pl.ANY, pltpu.HBM, plgpu.GMEM or (on a TPU) pltpu.VMEM or "
                 "pltpu.SMEM, got " +
                 (s ? "memory space '" + pk::stringifyMemorySpace(s->space).str() + "'"
                    : repr(*space)));
}

/// `jnp.NAME(args...)` traced in the export.
std::shared_ptr<GlobalArrayObj> exportArray(Elaborator &el, const char *name,
                                            std::vector<Obj> positional, SourceRange r) {
  CallArgs args;
  args.range = r;
  for (Obj &o : positional)
    args.addPositional(std::move(o), r);
  Obj array = el.call(getAttribute(el, el.importModule("jax.numpy", r), name, r), args);
  auto global = std::dynamic_pointer_cast<GlobalArrayObj>(array);
  if (!global)
    el.fail(r, "a Ref of a whole array holds an array, got " + repr(*array));
  return global;
}

/// The memory space of a Ref: where the kernel's buffer is, or where a
/// Ref of a whole array lives.
MemorySpace memorySpaceOf(Elaborator &el, const RefObj &ref) {
  if (ref.value)
    if (auto type = llvm::dyn_cast<pk::RefType>(ref.value.getType()))
      return type.getSpace().value_or(MemorySpace::Any);
  if (StateRef *state = findStateRef(el, ref))
    return state->space;
  return MemorySpace::Any;
}

/// jax.typeof(x): x's abstract value, a ShapedArray (shape, dtype, ndim,
/// size, weak_type) or, for a Ref, an AbstractRef (those, memory_space
/// and inner_aval).
Obj typeOf(Elaborator &el, const Obj &x, SourceRange r) {
  auto aval = std::make_shared<NamespaceObj>("ShapedArray");
  bool weak = llvm::isa<IntObj, FloatObj, BoolObj>(x.get());
  if (weak) {
    DType dtype = llvm::isa<BoolObj>(x.get())  ? DType::Bool
                  : llvm::isa<IntObj>(x.get()) ? DType::I32
                                               : DType::F32;
    aval->members["shape"] = makeTuple({});
    aval->members["dtype"] = std::make_shared<DTypeObj>(dtype);
  } else {
    aval->members["shape"] = getAttribute(el, x, "shape", r);
    aval->members["dtype"] = getAttribute(el, x, "dtype", r);
  }
  int64_t size = 1;
  std::vector<Obj> dims = el.iterate(aval->members["shape"], r);
  for (const Obj &d : dims)
    if (auto *i = llvm::dyn_cast<IntObj>(d.get()))
      size *= i->value;
  aval->members["ndim"] = makeInt(static_cast<int64_t>(dims.size()));
  aval->members["size"] = makeInt(size);
  aval->members["weak_type"] = makeBool(weak);
  auto *ref = llvm::dyn_cast<RefObj>(x.get());
  if (!ref)
    return aval;
  auto abstractRef = std::make_shared<NamespaceObj>("AbstractRef");
  abstractRef->members = aval->members;
  abstractRef->members["memory_space"] = std::make_shared<MemorySpaceObj>(memorySpaceOf(el, *ref));
  abstractRef->members["inner_aval"] = aval;
  return abstractRef;
}

} // namespace

void defineJaxRefs(NamespaceObj &jax) {
  define(jax, "empty_ref", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ty"}, {"memory_space", none()}});
    std::vector<int64_t> shape =
        el.toShape(getAttribute(el, a[0], "shape", a.range(0)), a.range(0), "the Ref's shape");
    DType dtype = el.toDType(getAttribute(el, a[0], "dtype", a.range(0)), a.range(0), "dtype");
    if (std::optional<MemorySpace> space = stateRefSpace(el, "jax.empty_ref", a[1], a.range(1))) {
      std::vector<Obj> dims;
      for (int64_t d : shape)
        dims.push_back(makeInt(d));
      return newExportRef(el,
                          exportArray(el, "empty",
                                      {makeTuple(dims), std::make_shared<DTypeObj>(dtype)},
                                      args.range),
                          *space, args.range);
    }
    return kernelBuffer(el, "jax.empty_ref", shape, dtype, memorySpaceArg(el, a[1], a.range(1)),
                        args.range);
  });
  define(jax, "new_ref", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"init_val"}, {"memory_space", none(), true}, {"kind", none(), true}});
    if (std::optional<MemorySpace> space = stateRefSpace(el, "jax.new_ref", a[1], a.range(1))) {
      auto array = std::dynamic_pointer_cast<GlobalArrayObj>(a[0]);
      if (!array)
        array = exportArray(el, "asarray", {a[0]}, a.range(0));
      return newExportRef(el, array, *space, args.range);
    }
    requireBufferSite(el, "jax.new_ref", args.range);
    ArrayPtr init = el.arrays().toArray(a[0], a.range(0));
    std::shared_ptr<RefObj> ref = kernelBuffer(el, "jax.new_ref", init->shape, init->dtype,
                                               memorySpaceArg(el, a[1], a.range(1)), args.range);
    storeRef(el, *ref, std::make_shared<EllipsisObj>(), init, nullptr, args.range);
    return ref;
  });
  define(jax, "freeze", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}});
    auto *ref = llvm::dyn_cast<RefObj>(a[0].get());
    if (!ref)
      el.fail(a.range(0), "jax.freeze takes a Ref, got " + typeName(*a[0]));
    if (StateRef *state = findStateRef(el, *ref))
      if (!state->ref->value) // not in a kernel running on it
        return state->array;
    return loadRef(el, *ref, std::make_shared<EllipsisObj>(), nullptr, nullptr, args.range);
  });
  define(jax, "typeof", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return typeOf(el, a[0], a.range(0));
  });

  // jax.ref: the same functions, and Ref reads and writes as functions
  // (get(ref, idx) is ref[idx]; an empty idx is the whole Ref).
  auto ref = std::make_shared<NamespaceObj>("jax.ref");
  for (const char *name : {"new_ref", "empty_ref", "freeze"})
    ref->members[name] = jax.members.at(name);
  auto refArg = [](Elaborator &el, const Obj &o, SourceRange r, const char *what) -> RefObj & {
    auto *ref = llvm::dyn_cast<RefObj>(o.get());
    if (!ref)
      el.fail(r, std::string(what) + " takes a Ref, got " + typeName(*o));
    return *ref;
  };
  auto wholeIfEmpty = [](const Obj &idx) -> Obj {
    auto *seq = llvm::dyn_cast<SequenceObj>(idx.get());
    return seq && seq->items.empty() ? std::make_shared<EllipsisObj>() : idx;
  };
  define(*ref, "get", [=](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"idx", makeTuple({})}});
    return loadRef(el, refArg(el, a[0], a.range(0), "jax.ref.get"), wholeIfEmpty(a[1]), nullptr,
                   nullptr, args.range);
  });
  define(*ref, "set", [=](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"idx"}, {"value"}});
    storeRef(el, refArg(el, a[0], a.range(0), "jax.ref.set"), wholeIfEmpty(a[1]), a[2], nullptr,
             args.range);
    return none();
  });
  define(*ref, "swap", [=](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"idx"}, {"value"}});
    RefObj &target = refArg(el, a[0], a.range(0), "jax.ref.swap");
    Obj old = loadRef(el, target, wholeIfEmpty(a[1]), nullptr, nullptr, args.range);
    storeRef(el, target, wholeIfEmpty(a[1]), a[2], nullptr, args.range);
    return old;
  });
  define(*ref, "addupdate", [=](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ref"}, {"idx"}, {"value"}});
    RefObj &target = refArg(el, a[0], a.range(0), "jax.ref.addupdate");
    Obj index = wholeIfEmpty(a[1]);
    Obj sum =
        binaryOperator(el, ast::BinaryOp::Add,
                       loadRef(el, target, index, nullptr, nullptr, args.range), a[2], args.range);
    storeRef(el, target, index, sum, nullptr, args.range);
    return none();
  });
  jax.members["ref"] = ref;
  // The name older JAX gave jax.new_ref.
  if (auto *experimental = llvm::dyn_cast_or_null<NamespaceObj>(jax.members["experimental"].get()))
    experimental->members["mutable_array"] = jax.members.at("new_ref");
}

} // namespace pk::elab
