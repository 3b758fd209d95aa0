//===- MosaicGpuTensorMemory.cpp - Blackwell's TMEM and tcgen05 MMA -------===//
//
// The plgpu builtins of Blackwell's fifth-generation tensor cores:
// tcgen05_mma into a plgpu.TMEM accumulator, tcgen05_commit_arrive, and the
// loads and stores between tensor memory and registers. Operands are
// checked with the rules the op verifiers use (ir/MosaicGpuRules.h), so a
// misuse is reported at the user's line. What Mosaic GPU has and pkc does
// not yet (collective MMA, block scaling, sparsity, A in tensor memory on
// the GPU) is rejected by name.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/MosaicGpu.h"
#include "ir/MosaicGpuRules.h"
#include "support/ShapeText.h"

namespace pk::elab {

namespace {

mlir::Value tmemRef(Elaborator &el, const Obj &o, SourceRange r, const std::string &what) {
  mlir::Value ref = materializeRef(el, refArg(el, o, r, what), r);
  auto type = llvm::cast<pk::RefType>(ref.getType());
  if (type.getSpace() != MemorySpace::GPUTensorMemory)
    el.fail(r, what + " must be a plgpu.TMEM Ref, got " + pk::typeText(type));
  return ref;
}

/// A barrier the tensor core arrives at: plgpu.Barrier(...,
/// orders_tensor_core=True), one of them.
SyncRefObj &tensorCoreBarrier(Elaborator &el, const Obj &o, SourceRange r) {
  SyncRefObj &barrier = syncArg(el, o, r, true, "the barrier");
  auto type = llvm::cast<pk::BarrierType>(barrier.value.getType());
  if (type.isClusterBarrier())
    el.fail(r, "the tensor core arrives at a plgpu.Barrier of its own CTA; plgpu.ClusterBarrier "
               "belongs to collective MMA, which is not supported yet");
  if (!type.getOrdersTensorCore())
    el.fail(r, "the tensor core arrives at this barrier, so it must be allocated with "
               "plgpu.Barrier(..., orders_tensor_core=True)");
  return barrier;
}

void rejectCollective(Elaborator &el, const Obj &axis, SourceRange r) {
  if (!isNone(axis))
    el.fail(r, "collective MMA (collective_axis=, a pair of CTAs sharing one MMA) is not "
               "supported yet");
}

Obj tcgen05Mma(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"acc"},
                               {"a"},
                               {"b"},
                               {"barrier", none()},
                               {"a_scale", none(), true},
                               {"b_scale", none(), true},
                               {"a_sparse_metadata", none(), true},
                               {"accumulate", makeBool(true), true},
                               {"collective_axis", none(), true}});
  requireMesh(el, args.range, "plgpu.tcgen05_mma");
  for (size_t i : {4, 5})
    if (!isNone(a[i]))
      el.fail(a.range(i), "block-scaled MMA (a_scale=, b_scale=) is not supported yet");
  if (!isNone(a[6]))
    el.fail(a.range(6), "sparse MMA (a_sparse_metadata=) is not supported yet");
  rejectCollective(el, a[8], a.range(8));
  mlir::Value acc = tmemRef(el, a[0], a.range(0), "the accumulator");
  mlir::Value lhs = materializeRef(el, refArg(el, a[1], a.range(1), "the A operand"), a.range(1));
  mlir::Value rhs = materializeRef(el, refArg(el, a[2], a.range(2), "the B operand"), a.range(2));
  std::string why = pk::tcgen05MmaProblem(llvm::cast<pk::RefType>(acc.getType()),
                                          llvm::cast<pk::RefType>(lhs.getType()),
                                          llvm::cast<pk::RefType>(rhs.getType()));
  if (!why.empty())
    el.fail(args.range, "plgpu.tcgen05_mma: " + why);
  mlir::Value barrier;
  std::vector<mlir::Value> indices;
  if (!isNone(a[3])) {
    SyncRefObj &b = tensorCoreBarrier(el, a[3], a.range(3));
    barrier = b.value;
    indices = b.indices;
  }
  // accumulate: a Python bool, or a traced scalar (ki > 0).
  mlir::Value accumulate;
  auto *known = llvm::dyn_cast<BoolObj>(a[7].get());
  if (!known || !known->value) {
    ArrayPtr flag = el.arrays().toArray(a[7], a.range(7));
    if (flag->rank() != 0)
      el.fail(a.range(7), "accumulate must be a boolean scalar");
    accumulate = el.arrays().cast(flag, DType::Bool, a.range(7))->value;
  }
  pk::Tcgen05MmaOp::create(el.builder(), el.loc(args.range), acc, lhs, rhs, barrier, indices,
                           accumulate);
  return none();
}

Obj commitArrive(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"barrier"}, {"collective_axis", none(), true}});
  requireMesh(el, args.range, "plgpu.tcgen05_commit_arrive");
  rejectCollective(el, a[1], a.range(1));
  SyncRefObj &barrier = tensorCoreBarrier(el, a[0], a.range(0));
  pk::Tcgen05CommitArriveOp::create(el.builder(), el.loc(args.range), barrier.value,
                                    barrier.indices);
  return none();
}

Obj asyncLoadTmem(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"src"}, {"layout", none(), true}});
  requireMesh(el, args.range, "plgpu.async_load_tmem");
  // A TCGEN05 layout is a hint: pkc moves rows one per thread anyway.
  if (auto *layout = llvm::dyn_cast<LayoutObj>(a[1].get()); layout && !layout->attr) {
  } else if (!isNone(a[1])) {
    el.fail(a.range(1), "layout= of a TMEM load takes a plgpu.Layout.TCGEN05 layout (a hint: "
                        "pkc chooses the register layout), got " +
                            (llvm::isa<LayoutObj>(a[1].get()) ? llvm::cast<LayoutObj>(*a[1]).name
                                                              : typeName(*a[1])));
  }
  mlir::Value ref = tmemRef(el, a[0], a.range(0), "plgpu.async_load_tmem's source");
  RefObj &obj = llvm::cast<RefObj>(*a[0]);
  mlir::Type type = el.arrays().valueType(obj.shape, obj.dtype);
  mlir::Value v = pk::AsyncLoadTmemOp::create(el.builder(), el.loc(args.range), type, ref);
  return el.arrays().wrap(v, obj.shape, obj.dtype);
}

Obj asyncStoreTmem(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"ref"}, {"value"}});
  requireMesh(el, args.range, "plgpu.async_store_tmem");
  mlir::Value ref = tmemRef(el, a[0], a.range(0), "plgpu.async_store_tmem's destination");
  RefObj &obj = llvm::cast<RefObj>(*a[0]);
  ArrayPtr value = el.arrays().toArray(a[1], a.range(1), JaxType{obj.dtype, false});
  if (value->rank() == 0)
    value = el.arrays().broadcastTo(value, obj.shape, a.range(1));
  if (value->shape != obj.shape)
    el.fail(a.range(1), "cannot store a value of shape " + shapeText(value->shape) +
                            " into a TMEM Ref of shape " + shapeText(obj.shape));
  if (value->dtype != obj.dtype)
    value = el.arrays().cast(value, obj.dtype, a.range(1));
  pk::AsyncStoreTmemOp::create(el.builder(), el.loc(args.range), ref, value->value);
  return none();
}

} // namespace

void defineMosaicGpuTensorMemory(Elaborator &el, NamespaceObj &n) {
  (void)el;
  define(n, "tcgen05_mma", tcgen05Mma);
  define(n, "tcgen05_commit_arrive", commitArrive);
  define(n, "async_load_tmem", asyncLoadTmem);
  define(n, "async_store_tmem", asyncStoreTmem);
  define(n, "wait_load_tmem", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    requireMesh(el, args.range, "plgpu.wait_load_tmem");
    pk::WaitLoadTmemOp::create(el.builder(), el.loc(args.range));
    return none();
  });
  define(n, "commit_tmem", [](Elaborator &el, CallArgs &args) -> Obj {
    el.bind(args, {});
    requireMesh(el, args.range, "plgpu.commit_tmem");
    pk::CommitTmemOp::create(el.builder(), el.loc(args.range));
    return none();
  });
}

} // namespace pk::elab
