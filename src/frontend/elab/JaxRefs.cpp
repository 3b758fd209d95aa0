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
#include "frontend/elab/StateRefs.h"
#include "ir/DTypeMapping.h"

namespace pk::elab {

namespace {

/// The pallas_call whose kernel is being elaborated, or null (outside
/// kernels, and in Mosaic GPU kernels, whose scratch Mosaic GPU allocates).
pk::PallasCallOp enclosingPallasCall(Elaborator &el) {
  mlir::Block *block = el.builder().getInsertionBlock();
  for (mlir::Operation *op = block ? block->getParentOp() : nullptr; op; op = op->getParentOp()) {
    if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op))
      return call;
    if (llvm::isa<pk::MeshKernelOp>(op))
      return nullptr;
  }
  return nullptr;
}

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
  pk::PallasCallOp call = enclosingPallasCall(el);
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

/// Whether `what` makes a Ref of a whole array: in an export, outside
/// kernels. Its memory space must be one whole arrays live in.
bool makesStateRef(Elaborator &el, const char *what, const Obj &space, SourceRange r) {
  if (el.mode() != EmitMode::Export || enclosingPallasCall(el))
    return false;
  if (isNone(space))
    return true;
  auto *s = llvm::dyn_cast<MemorySpaceObj>(space.get());
  if (!s || (s->space != MemorySpace::Any && s->space != MemorySpace::HBM &&
             s->space != MemorySpace::GPUGlobal))
    el.fail(r, std::string(what) +
                   " outside kernels makes a Ref of a whole array, which lives "
                   "in pl.ANY, pltpu.HBM or plgpu.GMEM, got " +
                   (s ? "memory space '" + pk::stringifyMemorySpace(s->space).str() + "'"
                      : repr(*space)));
  return true;
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

} // namespace

void defineJaxRefs(NamespaceObj &jax) {
  define(jax, "empty_ref", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"ty"}, {"memory_space", none()}});
    std::vector<int64_t> shape =
        el.toShape(getAttribute(el, a[0], "shape", a.range(0)), a.range(0), "the Ref's shape");
    DType dtype = el.toDType(getAttribute(el, a[0], "dtype", a.range(0)), a.range(0), "dtype");
    if (makesStateRef(el, "jax.empty_ref", a[1], a.range(1))) {
      std::vector<Obj> dims;
      for (int64_t d : shape)
        dims.push_back(makeInt(d));
      return newExportRef(el,
                          exportArray(el, "empty",
                                      {makeTuple(dims), std::make_shared<DTypeObj>(dtype)},
                                      args.range),
                          args.range);
    }
    return kernelBuffer(el, "jax.empty_ref", shape, dtype, memorySpaceArg(el, a[1], a.range(1)),
                        args.range);
  });
  define(jax, "new_ref", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a =
        el.bind(args, {{"init_val"}, {"memory_space", none(), true}, {"kind", none(), true}});
    if (makesStateRef(el, "jax.new_ref", a[1], a.range(1))) {
      auto array = std::dynamic_pointer_cast<GlobalArrayObj>(a[0]);
      if (!array)
        array = exportArray(el, "asarray", {a[0]}, a.range(0));
      return newExportRef(el, array, args.range);
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
}

} // namespace pk::elab
