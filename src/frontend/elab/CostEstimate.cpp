//===- CostEstimate.cpp - pl.CostEstimate and pl.estimate_cost -----------===//
//
// pl.estimate_cost(fun, *args, **kwargs) counts what `fun` computes as
// Pallas does (jax/_src/pallas/cost_estimate.py): it traces `fun` on values
// of the arguments' shapes, then adds up, over the ops the trace made at
// its top level, one flop per result element of an element-wise binary op
// (add, sub, mul, div, min, max, and, or, xor) and per element of neg,
// floor, ceil and round; one transcendental per element of exp, log, sqrt,
// tanh, logistic and the trigonometric functions; 2*M*N*K flops per
// matrix product. Loops are not counted (Pallas has no rule for them);
// bytes_accessed is the arguments' and results' bytes. What functions JAX
// defines with custom_jvp compute (jax.nn.relu, jax.nn.relu6, a user's
// @jax.custom_jvp) is not counted: Pallas has no rule for those calls.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Tree.h"
#include "ir/DTypeMapping.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace pk::elab {

namespace {

int64_t elementsOf(mlir::Type t) {
  if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(t))
    return shaped.getNumElements();
  return 1;
}

struct Counts {
  int64_t flops = 0, transcendentals = 0;
};

void count(mlir::Operation &op, Counts &c) {
  if (llvm::isa<mlir::arith::AddFOp, mlir::arith::AddIOp, mlir::arith::SubFOp, mlir::arith::SubIOp,
                mlir::arith::MulFOp, mlir::arith::MulIOp, mlir::arith::DivFOp, mlir::arith::DivSIOp,
                mlir::arith::DivUIOp, mlir::arith::MinimumFOp, mlir::arith::MaximumFOp,
                mlir::arith::MinNumFOp, mlir::arith::MaxNumFOp, mlir::arith::MinSIOp,
                mlir::arith::MaxSIOp, mlir::arith::MinUIOp, mlir::arith::MaxUIOp, mlir::arith::AndIOp,
                mlir::arith::OrIOp, mlir::arith::XOrIOp, mlir::arith::NegFOp, mlir::math::FloorOp,
                mlir::math::CeilOp, mlir::math::RoundOp, mlir::math::RoundEvenOp>(op)) {
    c.flops += elementsOf(op.getResult(0).getType());
    return;
  }
  if (llvm::isa<mlir::math::CosOp, mlir::math::SinOp, mlir::math::TanOp, mlir::math::SinhOp,
                mlir::math::CoshOp, mlir::math::TanhOp, mlir::math::AcosOp, mlir::math::AsinOp,
                mlir::math::AtanOp, mlir::math::ExpOp, mlir::math::LogOp, mlir::math::SqrtOp>(op)) {
    c.transcendentals += elementsOf(op.getResult(0).getType());
    return;
  }
  if (auto dot = llvm::dyn_cast<pk::DotOp>(op)) {
    auto lhs = llvm::cast<mlir::ShapedType>(dot.getLhs().getType());
    int64_t k = lhs.getShape()[dot.getTransposeLhs() ? 0 : 1];
    c.flops += 2 * k * elementsOf(dot.getType());
  }
}

int64_t bytesOf(const std::vector<int64_t> &shape, DType dtype) {
  int64_t n = byteWidth(dtype);
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

Obj makeCostEstimate(int64_t flops, int64_t transcendentals, int64_t bytesAccessed,
                     int64_t remoteBytes) {
  auto estimate = std::make_shared<NamespaceObj>("pl.CostEstimate");
  estimate->members["flops"] = makeInt(flops);
  estimate->members["transcendentals"] = makeInt(transcendentals);
  estimate->members["bytes_accessed"] = makeInt(bytesAccessed);
  estimate->members["remote_bytes_transferred"] = makeInt(remoteBytes);
  return estimate;
}

bool isCostEstimate(const Obj &o) {
  auto *ns = llvm::dyn_cast<NamespaceObj>(o.get());
  return ns && ns->name == "pl.CostEstimate";
}

Obj estimateCost(Elaborator &el, CallArgs &args) {
  if (args.positional.empty())
    el.fail(args.range, "pl.estimate_cost(fun, *args, **kwargs) needs the function to estimate");

  // The arguments' bytes; their shapes must be static (the counts are ints).
  int64_t bytes = 0;
  auto visit = [&](const Obj &o) {
    std::vector<Dim> dims;
    DType dtype;
    if (auto *g = llvm::dyn_cast<GlobalArrayObj>(o.get())) {
      dims = g->shape;
      dtype = g->dtype;
    } else if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(o.get())) {
      dims = s->shape;
      dtype = s->dtype;
    } else {
      return;
    }
    std::vector<int64_t> shape;
    for (const Dim &d : dims) {
      if (!d.isStatic())
        el.fail(args.range, "pl.estimate_cost counts with static shapes, but an argument has the "
                            "shape (" + el.describeDims(dims) + "); fix the size with -D");
      shape.push_back(d.value);
    }
    bytes += bytesOf(shape, dtype);
  };
  for (size_t i = 1; i < args.positional.size(); ++i)
    forEachLeaf(args.positional[i], visit);
  for (const auto &[name, value] : args.keywords)
    forEachLeaf(value, visit);

  // Array code may trace `fun` more than once (whole, then tiled): each
  // trace counts afresh.
  Counts counts;
  int64_t resultBytes = 0;
  el.arrayCodeCall(
      "pl.estimate_cost", args, {}, [&](std::vector<Obj> &, CallArgs &call) -> Obj {
        counts = Counts();
        resultBytes = 0;
        Obj fun = call.positional[0];
        call.positional.erase(call.positional.begin());
        call.positionalRanges.erase(call.positionalRanges.begin());
        // jax.ShapeDtypeStruct arguments stand for arrays of their shape.
        auto standIn = [&](Obj &v) {
          if (auto *s = llvm::dyn_cast<ShapeDtypeStructObj>(v.get())) {
            std::vector<int64_t> shape;
            for (const Dim &d : s->shape)
              shape.push_back(d.value);
            v = el.arrays().full(shape, makeInt(0), s->dtype, args.range);
          }
        };
        for (Obj &v : call.positional)
          standIn(v);
        for (auto &[name, v] : call.keywords)
          standIn(v);
        mlir::Block *block = el.builder().getInsertionBlock();
        mlir::Operation *before = block->empty() ? nullptr : &block->back();
        llvm::DenseSet<mlir::Operation *> uncounted;
        el.uncountedOps = &uncounted;
        Obj result;
        try {
          result = el.call(fun, call);
        } catch (...) {
          el.uncountedOps = nullptr;
          throw;
        }
        el.uncountedOps = nullptr;
        for (auto it = before ? std::next(before->getIterator()) : block->begin();
             it != block->end(); ++it)
          if (!uncounted.contains(&*it))
            count(*it, counts);
        forEachLeaf(result, [&](const Obj &leaf) {
          if (auto *a = llvm::dyn_cast<ArrayObj>(leaf.get()))
            resultBytes += bytesOf(a->shape, a->dtype);
        });
        return makeInt(0); // no arrays: the trace is discarded
      });
  return makeCostEstimate(counts.flops, counts.transcendentals, bytes + resultBytes, 0);
}

} // namespace pk::elab
