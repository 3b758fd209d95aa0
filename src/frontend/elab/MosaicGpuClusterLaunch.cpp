//===- MosaicGpuClusterLaunch.cpp - Blackwell's dynamic work scheduling ---===//
//
// plgpu.try_cluster_cancel / query_cluster_cancel (cluster launch control,
// sm_100a) and plgpu.dynamic_scheduling_loop, which JAX's helpers.py
// builds from them: a CTA does its own grid point, then the work of
// clusters whose launch it cancelled, until no launch is left to cancel.
// The loop is composed here exactly as helpers.py composes it (two answer
// slots, a barrier each for the answers and for their reuse), so its
// behaviour, barriers included, is JAX's.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/MosaicGpu.h"
#include "frontend/elab/Operators.h"
#include "ir/MosaicGpuRules.h"

namespace pk::elab {

namespace {

/// Answer slots of dynamic_scheduling_loop (helpers.py's num_slots).
constexpr int64_t kAnswerSlots = 2;

/// plgpu.TryClusterCancelResult(num_buffers=None): 16 bytes of shared
/// memory per answer.
Obj answerAllocation(Elaborator &el, std::optional<int64_t> buffers, SourceRange r) {
  std::vector<int64_t> shape{16};
  if (buffers)
    shape.insert(shape.begin(), *buffers);
  auto type =
      pk::RefType::get(shape, mlir::IntegerType::get(&el.context(), 8),
                       pk::MemorySpaceAttr::get(&el.context(), MemorySpace::GPUShared), nullptr);
  auto alloc = std::make_shared<AllocationObj>(AllocationObj::What::Ref, type);
  alloc->range = r;
  return alloc;
}

mlir::Value answerRef(Elaborator &el, const Obj &o, SourceRange r) {
  mlir::Value ref = materializeRef(el, refArg(el, o, r, "the answer buffer"), r);
  std::string why = pk::clusterCancelResultProblem(llvm::cast<pk::RefType>(ref.getType()));
  if (!why.empty())
    el.fail(r, why);
  return ref;
}

/// The grid positions of `names`, each a grid axis of the kernel.
std::vector<int64_t> gridAxes(Elaborator &el, const MeshInfo &mesh, const Obj &names,
                              SourceRange r) {
  std::vector<int64_t> axes;
  for (const std::string &name : axisNames(el, names, r, "grid axis")) {
    auto axis = mesh.find(name);
    if (!axis || axis->first != 0)
      el.fail(r, "'" + name + "' is not a grid axis of this kernel");
    axes.push_back(axis->second);
  }
  return axes;
}

Obj tryClusterCancel(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"result_ref"}, {"barrier"}});
  requireMesh(el, args.range, "plgpu.try_cluster_cancel");
  mlir::Value result = answerRef(el, a[0], a.range(0));
  SyncRefObj &barrier = syncArg(el, a[1], a.range(1), true, "the barrier");
  if (llvm::cast<pk::BarrierType>(barrier.value.getType()).isClusterBarrier())
    el.fail(a.range(1), "the answer arrives at a plgpu.Barrier of the CTA, not a "
                        "plgpu.ClusterBarrier");
  pk::TryClusterCancelOp::create(el.builder(), el.loc(args.range), result, barrier.value,
                                 barrier.indices);
  return none();
}

/// (indices along `names`, cancelled): what query_cluster_cancel returns.
Obj queryClusterCancel(Elaborator &el, const Obj &resultObj, const Obj &names, SourceRange r,
                       SourceRange resultRange, SourceRange namesRange) {
  const MeshInfo &mesh = requireMesh(el, r, "plgpu.query_cluster_cancel");
  mlir::Value result = answerRef(el, resultObj, resultRange);
  std::vector<int64_t> axes = gridAxes(el, mesh, names, namesRange);
  mlir::OpBuilder &b = el.builder();
  std::vector<mlir::Type> types(axes.size(), b.getI32Type());
  auto op = pk::QueryClusterCancelOp::create(b, el.loc(r), types, b.getI1Type(), result,
                                             b.getDenseI64ArrayAttr(axes));
  std::vector<Obj> indices;
  for (mlir::Value v : op.getIndices())
    indices.push_back(el.arrays().wrap(v, {}, DType::I32));
  return makeTuple({makeTuple(indices), el.arrays().wrap(op.getCanceled(), {}, DType::Bool)});
}

/// An int32 scalar (jnp.int32(v)): the loop's counters are traced.
Obj int32(Elaborator &el, int64_t v, SourceRange r) {
  return el.arrays().constantInt(v, DType::I32, {}, r);
}

Obj at(Elaborator &el, const Obj &o, const Obj &index, SourceRange r) {
  return subscript(el, getAttribute(el, o, "at", r), index, r);
}

/// The loop body of dynamic_scheduling_loop, as helpers.py's
/// try_cancel_body: (grid index, success, wave step, user carry) -> next.
Obj loopStep(Elaborator &el, NamespaceObj &plgpu, const Obj &body, const Obj &carry,
             const Obj &answers, const Obj &answered, const Obj &released, const Obj &gridNames,
             bool carried, SourceRange r) {
  auto &items = llvm::cast<SequenceObj>(*carry).items;
  Obj index = items[0], waveStep = items[2], userCarry = items[3];
  Obj slot = binaryOperator(el, ast::BinaryOp::Mod, waveStep, makeInt(kAnswerSlots), r);
  // The slot's answer is read again only after every thread has read the
  // last one.
  Obj wait = plgpu.members.at("barrier_wait");
  auto waitReleased = std::make_shared<BuiltinObj>("wait", [=](Elaborator &el, CallArgs &) -> Obj {
    callAt(el, wait, {at(el, released, slot, r)}, {}, r);
    return none();
  });
  el.when(compareOperator(el, ast::CompareOp::Ge, waveStep, makeInt(kAnswerSlots), r), waitReleased,
          r);
  callAt(el, plgpu.members.at("try_cluster_cancel"),
         {at(el, answers, slot, r), at(el, answered, slot, r)}, {}, r);
  Obj info = ndLoopInfo(el, index, waveStep, none(), r);
  Obj nextCarry = userCarry;
  if (carried)
    nextCarry = callAt(el, body, {info}, {{"carry", userCarry}}, r);
  else
    callAt(el, body, {info}, {}, r);
  callAt(el, wait, {at(el, answered, slot, r)}, {}, r);
  Obj query = queryClusterCancel(el, at(el, answers, slot, r), gridNames, r, r, r);
  auto &parts = llvm::cast<SequenceObj>(*query).items;
  callAt(el, plgpu.members.at("barrier_arrive"), {at(el, released, slot, r)}, {}, r);
  Obj next = binaryOperator(el, ast::BinaryOp::Add, waveStep, int32(el, 1, r), r);
  return makeTuple({parts[0], parts[1], next, nextCarry});
}

Obj dynamicSchedulingLoop(Elaborator &el, NamespaceObj &plgpu, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"grid_names"},
                               {"thread_axis", none(), true},
                               {"cluster_axes", makeTuple({}), true},
                               {"init_carry", none(), true}});
  const MeshInfo &mesh = requireMesh(el, args.range, "plgpu.dynamic_scheduling_loop");
  gridAxes(el, mesh, a[0], a.range(0));
  Obj gridNames = a[0];
  std::vector<std::string> collective;
  int64_t threads = 1;
  if (!isNone(a[1])) {
    collective.push_back(el.toStr(a[1], a.range(1), "thread_axis"));
    threads = axisSize(el, a[1], a.range(1));
  }
  std::vector<std::string> clusterAxes = axisNames(el, a[2], a.range(2), "cluster axis");
  Obj clusterAxesObj = a[2];
  Obj init = a[3];
  bool carried = !isNone(init);
  SourceRange r = args.range;
  NamespaceObj *ns = &plgpu;
  return std::make_shared<BuiltinObj>(
      "plgpu.dynamic_scheduling_loop(...)", [=](Elaborator &el, CallArgs &inner) -> Obj {
        if (inner.positional.size() != 1)
          el.fail(inner.range, "plgpu.dynamic_scheduling_loop(...) decorates a loop body");
        Obj body = inner.positional[0];
        NamespaceObj &plgpu = *ns;
        std::vector<std::pair<std::string, Obj>> barrier{{"num_arrivals", makeInt(threads)},
                                                         {"num_barriers", makeInt(kAnswerSlots)}};
        Obj answered = callAt(el, plgpu.members.at("Barrier"), {}, barrier, r);
        Obj released = clusterAxes.empty() ? callAt(el, plgpu.members.at("Barrier"), {}, barrier, r)
                                           : callAt(el, plgpu.members.at("ClusterBarrier"), {},
                                                    {{"collective_axes", clusterAxesObj},
                                                     {"num_arrivals", makeInt(threads)},
                                                     {"num_barriers", makeInt(kAnswerSlots)}},
                                                    r);
        Obj allocations = makeTuple({answerAllocation(el, kAnswerSlots, r), answered, released});
        return scoped(el, allocations, collective, r, [&](const Obj &refs) -> Obj {
          auto &items = llvm::cast<SequenceObj>(*refs).items;
          Obj answers = items[0], answeredRef = items[1], releasedRef = items[2];
          std::vector<Obj> start;
          for (const std::string &name : axisNames(el, gridNames, r, "grid axis"))
            start.push_back(axisIndex(el, makeStr(name), r));
          Obj first = makeTuple(
              {makeTuple(start), makeBool(true), int32(el, 0, r), carried ? init : makeTuple({})});
          auto cond = std::make_shared<BuiltinObj>(
              "dynamic_scheduling_loop cond", [](Elaborator &, CallArgs &c) -> Obj {
                return llvm::cast<SequenceObj>(*c.positional[0]).items[1];
              });
          auto step = std::make_shared<BuiltinObj>(
              "dynamic_scheduling_loop body", [=](Elaborator &el, CallArgs &c) -> Obj {
                return loopStep(el, *ns, body, c.positional[0], answers, answeredRef, releasedRef,
                                gridNames, carried, r);
              });
          Obj last = el.whileLoop(cond, step, first, r);
          auto &parts = llvm::cast<SequenceObj>(*last).items;
          // Every slot used was released once more than it was waited
          // for: wait for those phases (min(steps, slots) of them), so
          // that the barriers end where they began.
          Obj steps = parts[2];
          for (int64_t used = 0; used < kAnswerSlots; ++used) {
            auto drain = std::make_shared<BuiltinObj>(
                "dynamic_scheduling_loop drain", [=](Elaborator &el, CallArgs &) -> Obj {
                  callAt(el, ns->members.at("barrier_wait"),
                         {at(el, releasedRef, makeInt(used), r)}, {}, r);
                  return none();
                });
            el.when(compareOperator(el, ast::CompareOp::Gt, steps, makeInt(used), r), drain, r);
          }
          return carried ? parts[3] : none();
        });
      });
}

} // namespace

void defineMosaicGpuClusterLaunch(Elaborator &el, NamespaceObj &n) {
  (void)el;
  define(n, "TryClusterCancelResult", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"num_buffers", none()}});
    std::optional<int64_t> buffers;
    if (!isNone(a[0])) {
      buffers = el.toInt(a[0], a.range(0), "num_buffers");
      if (*buffers < 1)
        el.fail(a.range(0), "num_buffers must be positive");
    }
    return answerAllocation(el, buffers, args.range);
  });
  define(n, "try_cluster_cancel", tryClusterCancel);
  define(n, "query_cluster_cancel", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"result_ref"}, {"grid_names"}});
    return queryClusterCancel(el, a[0], a[1], args.range, a.range(0), a.range(1));
  });
  NamespaceObj *ns = &n;
  define(n, "dynamic_scheduling_loop",
         [ns](Elaborator &el, CallArgs &args) { return dynamicSchedulingLoop(el, *ns, args); });
}

} // namespace pk::elab
