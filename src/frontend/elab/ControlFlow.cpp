//===- ControlFlow.cpp - Loops and branches that run in the kernel --------===//
//
// A `for` over a range with dynamic bounds, an `if` or `while` on a dynamic
// condition, lax.fori_loop / while_loop / cond and pl.when become scf ops.
// Python variables (and lax carries) live across them as SSA values: the
// elaborator runs the body, sees which leaves of which variables changed
// and to what type, and re-runs it with those leaves carried until the
// types settle, the way JAX traces a loop body.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Tree.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace pk::elab {

using namespace ast;

namespace {

constexpr int kMaxTypeRounds = 6;

/// The type a loop-carried or branch-merged leaf has as an SSA value.
struct Slot {
  JaxType type;
  std::vector<int64_t> shape;
};

Slot slotOf(Elaborator &el, const Obj &leaf, SourceRange r) {
  if (auto *a = llvm::dyn_cast<ArrayObj>(leaf.get()))
    return {{a->dtype, a->weak}, a->shape};
  return {el.arrays().typeOf(leaf, r), {}};
}

/// True when two leaves are the same value, so nothing needs carrying.
bool sameLeaf(const Obj &a, const Obj &b) {
  if (a.get() == b.get())
    return true;
  auto *x = llvm::dyn_cast<ArrayObj>(a.get());
  auto *y = llvm::dyn_cast<ArrayObj>(b.get());
  if (x || y)
    return x && y && x->value == y->value && x->dtype == y->dtype && x->weak == y->weak;
  return a->kind() == b->kind() && staticEqual(a, b);
}

/// Widens `slot` so that `leaf` fits, the way JAX lets a weakly typed value
/// take the type of the other side. Shapes and strong dtypes must agree.
Slot unify(Elaborator &el, const Slot &slot, const Obj &leaf, const std::string &what,
           SourceRange r) {
  Slot other = slotOf(el, leaf, r);
  if (other.shape != slot.shape)
    el.fail(r, what + " changes shape from " + shapeText(slot.shape) + " to " +
                   shapeText(other.shape) +
                   "; give it its final shape before, e.g. with jnp.zeros(shape, dtype)");
  if (other.type == slot.type)
    return slot;
  JaxType joined = promoteTypes(slot.type, other.type);
  bool compatible = slot.type.weak || other.type.weak || slot.type.dtype == other.type.dtype;
  if (!compatible)
    el.fail(r, what + " changes dtype from " + numpyName(slot.type.dtype) + " to " +
                   numpyName(other.type.dtype) + "; convert it with .astype(...)");
  return {joined, slot.shape};
}

mlir::Value materialize(Elaborator &el, const Obj &leaf, const Slot &slot, SourceRange r) {
  ArrayPtr a = el.arrays().toArray(leaf, r, slot.type);
  if (a->shape != slot.shape)
    a = el.arrays().broadcastTo(a, slot.shape, r);
  return a->value;
}

Obj wrapSlot(Elaborator &el, mlir::Value v, const Slot &slot) {
  return el.arrays().wrap(v, slot.shape, slot.type.dtype, slot.type.weak);
}

/// A scalar condition as i1.
mlir::Value conditionValue(Elaborator &el, const Obj &condition, SourceRange r) {
  ArrayPtr c = el.arrays().toArray(condition, r);
  if (c->rank() != 0)
    el.fail(r, "a condition must be a scalar, got a value of shape " + shapeText(c->shape) +
                   "; reduce it with jnp.any / jnp.all");
  return el.arrays().cast(c, DType::Bool, r)->value;
}

mlir::Value loopBound(Elaborator &el, const Obj &bound, SourceRange r) {
  ArrayPtr b = el.arrays().toArray(bound, r);
  if (b->rank() != 0 || isFloat(b->dtype) || b->dtype == DType::Bool)
    el.fail(r, "loop bounds must be integer scalars");
  return el.arrays().cast(b, DType::I32, r)->value;
}

/// The variables a dynamic region may change: their values before it,
/// flattened into leaves.
struct Variables {
  std::vector<std::string> names;
  std::vector<Obj> before;       ///< null when undefined before the region
  std::vector<TreeDef> defs;     ///< structure before (when defined)
  std::vector<size_t> firstLeaf; ///< index of each name's first leaf
  std::vector<Obj> leaves;
};

Variables captureVariables(Elaborator &el, const std::set<std::string> &names) {
  Variables v;
  for (const std::string &name : names) {
    v.names.push_back(name);
    auto it = el.currentFrame().vars.find(name);
    Obj before = it == el.currentFrame().vars.end() ? nullptr : it->second;
    if (before && llvm::isa<UndefinedObj>(before.get()))
      before = nullptr;
    v.before.push_back(before);
    v.firstLeaf.push_back(v.leaves.size());
    v.defs.push_back(before ? flatten(before, v.leaves) : TreeDef{});
  }
  return v;
}

void restoreVariables(Elaborator &el, const Variables &v) {
  for (size_t i = 0; i < v.names.size(); ++i) {
    if (v.before[i])
      el.currentFrame().vars[v.names[i]] = v.before[i];
    else
      el.currentFrame().vars.erase(v.names[i]);
  }
}

/// Binds the variables to `leaves` (same layout as v.leaves).
void bindVariables(Elaborator &el, const Variables &v, const std::vector<Obj> &leaves) {
  restoreVariables(el, v);
  size_t next = 0;
  for (size_t i = 0; i < v.names.size(); ++i)
    if (v.before[i])
      el.currentFrame().vars[v.names[i]] = unflatten(v.defs[i], leaves, next);
}

/// Reads the variables' new leaves after a region body, checking that each
/// kept its structure.
std::vector<Obj> readVariables(Elaborator &el, const Variables &v, const char *where,
                               SourceRange r) {
  std::vector<Obj> leaves;
  for (size_t i = 0; i < v.names.size(); ++i) {
    if (!v.before[i])
      continue;
    auto it = el.currentFrame().vars.find(v.names[i]);
    if (it == el.currentFrame().vars.end() || llvm::isa<UndefinedObj>(it->second.get()))
      el.fail(r, "variable '" + v.names[i] + "' is no longer defined after " + where);
    TreeDef def = flatten(it->second, leaves);
    if (!sameStructure(def, v.defs[i]))
      el.fail(r, "variable '" + v.names[i] + "' changes from " + repr(*v.before[i]) + " to " +
                     repr(*it->second) + " in " + where +
                     "; only array and number values can change there");
  }
  return leaves;
}

std::string leafName(const Variables &v, size_t leaf) {
  for (size_t i = v.names.size(); i-- > 0;)
    if (v.before[i] && v.firstLeaf[i] <= leaf)
      return "variable '" + v.names[i] + "'";
  return "a loop-carried value";
}

/// Marks variables first assigned inside a region as unavailable after it.
void poisonNewVariables(Elaborator &el, const Variables &v, const std::string &why) {
  for (size_t i = 0; i < v.names.size(); ++i)
    if (!v.before[i])
      el.currentFrame().vars[v.names[i]] = std::make_shared<UndefinedObj>(
          "variable '" + v.names[i] + "' " + why);
}

Flow checkRegionFlow(Elaborator &el, Flow flow, const char *where, SourceRange r) {
  // Blame the statement itself, not the region it tries to leave.
  SourceRange at = el.lastJumpRange().isValid() ? el.lastJumpRange() : r;
  if (flow == Flow::Return) {
    const Obj &value = el.currentFrame().returnValue;
    el.fail(at, std::string("'return' inside ") + where + " is not supported; " +
                    (!value || isNone(value)
                         ? "put the statements that follow it under an 'else' instead"
                         : "assign a variable and return after it"));
  }
  if (flow == Flow::Break || flow == Flow::Continue)
    el.fail(at, flow == Flow::Break
                    ? std::string("'break' is not supported inside ") + where +
                          "; make the exit test part of a 'while' condition instead"
                    : std::string("'continue' is not supported inside ") + where +
                          "; put the rest of the loop body under an 'if' instead");
  return flow;
}

using ForBody = std::function<std::vector<Obj>(const Obj &index, const std::vector<Obj> &leaves)>;

/// Emits scf.for over [lower, upper) by `step`, carrying the leaves that
/// the body changes (or all of them when `carryAll`). The index is int32,
/// weakly typed when `weakIndex`.
std::vector<Obj> emitFor(Elaborator &el, mlir::Value lower, mlir::Value upper, mlir::Value step,
                         const std::vector<Obj> &init, bool carryAll,
                         const std::function<std::string(size_t)> &describe, const ForBody &body,
                         SourceRange r, bool weakIndex = false) {
  mlir::OpBuilder &b = el.builder();
  size_t n = init.size();
  std::vector<bool> carried(n, carryAll);
  std::vector<Slot> slots;
  for (const Obj &leaf : init)
    slots.push_back(slotOf(el, leaf, r));
  for (int round = 0; round < kMaxTypeRounds; ++round) {
    std::vector<mlir::Value> inits;
    for (size_t i = 0; i < n; ++i)
      if (carried[i])
        inits.push_back(materialize(el, init[i], slots[i], r));
    auto forOp = mlir::scf::ForOp::create(b, el.loc(r), lower, upper, step, inits);
    std::vector<Obj> out;
    bool changed = false;
    {
      mlir::OpBuilder::InsertionGuard guard(b);
      mlir::Block *block = forOp.getBody();
      if (!block->empty())
        block->getTerminator()->erase();
      b.setInsertionPointToEnd(block);
      std::vector<Obj> in = init;
      size_t arg = 0;
      for (size_t i = 0; i < n; ++i)
        if (carried[i])
          in[i] = wrapSlot(el, forOp.getRegionIterArgs()[arg++], slots[i]);
      Obj index = el.arrays().wrap(forOp.getInductionVar(), {}, DType::I32, weakIndex);
      out = body(index, in);
      for (size_t i = 0; i < n; ++i) {
        if (carried[i]) {
          Slot widened = unify(el, slots[i], out[i], describe(i), r);
          changed |= !(widened.type == slots[i].type);
          slots[i] = widened;
        } else if (!sameLeaf(out[i], init[i])) {
          carried[i] = true;
          slots[i] = unify(el, slots[i], out[i], describe(i), r);
          changed = true;
        }
      }
      if (!changed) {
        std::vector<mlir::Value> yields;
        for (size_t i = 0; i < n; ++i)
          if (carried[i])
            yields.push_back(materialize(el, out[i], slots[i], r));
        mlir::scf::YieldOp::create(b, el.loc(r), yields);
      }
    }
    if (changed) {
      forOp.erase(); // the types changed: trace the body again
      continue;
    }
    std::vector<Obj> after(init);
    size_t result = 0;
    for (size_t i = 0; i < n; ++i)
      if (carried[i])
        after[i] = wrapSlot(el, forOp.getResult(result++), slots[i]);
    return after;
  }
  el.fail(r, "the types of the values carried by this loop do not settle");
}

using WhileCond = std::function<mlir::Value(const std::vector<Obj> &leaves)>;
using WhileBody = std::function<std::vector<Obj>(const std::vector<Obj> &leaves)>;

/// Emits scf.while: `cond` runs in the before region, `body` in the after
/// region, carrying what the body changes.
std::vector<Obj> emitWhile(Elaborator &el, const std::vector<Obj> &init, bool carryAll,
                           const std::function<std::string(size_t)> &describe,
                           const WhileCond &cond, const WhileBody &body, SourceRange r) {
  mlir::OpBuilder &b = el.builder();
  size_t n = init.size();
  std::vector<bool> carried(n, carryAll);
  std::vector<Slot> slots;
  for (const Obj &leaf : init)
    slots.push_back(slotOf(el, leaf, r));
  for (int round = 0; round < kMaxTypeRounds; ++round) {
    std::vector<mlir::Value> inits;
    std::vector<mlir::Type> types;
    for (size_t i = 0; i < n; ++i)
      if (carried[i]) {
        inits.push_back(materialize(el, init[i], slots[i], r));
        types.push_back(inits.back().getType());
      }
    auto whileOp = mlir::scf::WhileOp::create(b, el.loc(r), types, inits);
    std::vector<mlir::Location> locs(types.size(), el.loc(r));
    mlir::Block *before, *afterBlock;
    {
      mlir::OpBuilder::InsertionGuard guard(b); // createBlock moves the insertion point
      before = b.createBlock(&whileOp.getBefore(), {}, types, locs);
      afterBlock = b.createBlock(&whileOp.getAfter(), {}, types, locs);
    }
    auto bindArgs = [&](mlir::Block *block) {
      std::vector<Obj> in = init;
      size_t arg = 0;
      for (size_t i = 0; i < n; ++i)
        if (carried[i])
          in[i] = wrapSlot(el, block->getArgument(arg++), slots[i]);
      return in;
    };
    bool changed = false;
    {
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(before);
      mlir::Value c = cond(bindArgs(before));
      mlir::scf::ConditionOp::create(b, el.loc(r), c, before->getArguments());
      b.setInsertionPointToEnd(afterBlock);
      std::vector<Obj> out = body(bindArgs(afterBlock));
      for (size_t i = 0; i < n; ++i) {
        if (carried[i]) {
          Slot widened = unify(el, slots[i], out[i], describe(i), r);
          changed |= !(widened.type == slots[i].type);
          slots[i] = widened;
        } else if (!sameLeaf(out[i], init[i])) {
          carried[i] = true;
          slots[i] = unify(el, slots[i], out[i], describe(i), r);
          changed = true;
        }
      }
      if (!changed) {
        std::vector<mlir::Value> yields;
        for (size_t i = 0; i < n; ++i)
          if (carried[i])
            yields.push_back(materialize(el, out[i], slots[i], r));
        mlir::scf::YieldOp::create(b, el.loc(r), yields);
      }
    }
    if (changed) {
      whileOp.erase();
      continue;
    }
    std::vector<Obj> after(init);
    size_t result = 0;
    for (size_t i = 0; i < n; ++i)
      if (carried[i])
        after[i] = wrapSlot(el, whileOp.getResult(result++), slots[i]);
    return after;
  }
  el.fail(r, "the types of the values carried by this loop do not settle");
}

/// Emits scf.if. Each branch produces a list of items (values, or null when
/// a branch leaves one undefined). Items whose structure agrees in both
/// branches are merged: leaves that differ become results of the scf.if.
/// Items that cannot be merged come back null.
std::vector<Obj> emitIf(Elaborator &el, mlir::Value condition,
                        const std::function<std::vector<Obj>()> &thenBranch,
                        const std::function<std::vector<Obj>()> &elseBranch,
                        const std::function<std::string(size_t)> &describe, SourceRange r) {
  mlir::OpBuilder &b = el.builder();
  auto ifOp = mlir::scf::IfOp::create(b, el.loc(r), mlir::TypeRange{}, condition,
                                      /*withElseRegion=*/true);
  std::vector<Obj> thenItems, elseItems;
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    thenItems = thenBranch();
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    elseItems = elseBranch();
  }
  size_t count = thenItems.size();
  std::vector<TreeDef> defs(count);
  std::vector<bool> mergeable(count, false);
  std::vector<Obj> thenLeaves, elseLeaves;
  std::vector<size_t> owner; // item of each leaf
  for (size_t i = 0; i < count; ++i) {
    if (!thenItems[i] || !elseItems[i])
      continue;
    std::vector<Obj> t, e;
    TreeDef dt = flatten(thenItems[i], t), de = flatten(elseItems[i], e);
    if (!sameStructure(dt, de))
      continue;
    mergeable[i] = true;
    defs[i] = dt;
    thenLeaves.insert(thenLeaves.end(), t.begin(), t.end());
    elseLeaves.insert(elseLeaves.end(), e.begin(), e.end());
    owner.insert(owner.end(), t.size(), i);
  }
  std::vector<Slot> slots;
  std::vector<size_t> merged;
  for (size_t k = 0; k < thenLeaves.size(); ++k) {
    if (sameLeaf(thenLeaves[k], elseLeaves[k]))
      continue;
    merged.push_back(k);
    slots.push_back(unify(el, slotOf(el, thenLeaves[k], r), elseLeaves[k], describe(owner[k]), r));
  }
  std::vector<Obj> leaves = thenLeaves;
  if (!merged.empty()) {
    auto yieldIn = [&](mlir::Block *block, const std::vector<Obj> &branchLeaves) {
      mlir::OpBuilder::InsertionGuard guard(b);
      mlir::Operation *terminator = block->getTerminator();
      b.setInsertionPoint(terminator);
      std::vector<mlir::Value> values;
      for (size_t j = 0; j < merged.size(); ++j)
        values.push_back(materialize(el, branchLeaves[merged[j]], slots[j], r));
      mlir::scf::YieldOp::create(b, el.loc(r), values);
      terminator->erase();
    };
    yieldIn(ifOp.thenBlock(), thenLeaves);
    yieldIn(ifOp.elseBlock(), elseLeaves);
    std::vector<mlir::Type> types;
    for (const Slot &slot : slots)
      types.push_back(el.arrays().valueType(slot.shape, slot.type.dtype));
    auto withResults =
        mlir::scf::IfOp::create(b, el.loc(r), types, condition, /*withElseRegion=*/true);
    withResults.getThenRegion().takeBody(ifOp.getThenRegion());
    withResults.getElseRegion().takeBody(ifOp.getElseRegion());
    ifOp.erase();
    for (size_t j = 0; j < merged.size(); ++j)
      leaves[merged[j]] = wrapSlot(el, withResults.getResult(j), slots[j]);
  }
  std::vector<Obj> items(count);
  size_t next = 0;
  for (size_t i = 0; i < count; ++i)
    if (mergeable[i])
      items[i] = unflatten(defs[i], leaves, next);
  return items;
}

std::set<std::string> assignedIn(const StmtList &a, const StmtList &b = {}) {
  std::set<std::string> names;
  collectAssignedNames(a, names);
  collectAssignedNames(b, names);
  return names;
}

} // namespace

//===----------------------------------------------------------------------===//
// Python statements over dynamic values
//===----------------------------------------------------------------------===//

Flow Elaborator::execDynamicIf(const IfStmt &s, const Obj &conditionObj) {
  SourceRange r = s.condition->range();
  requireKernel(r, "an 'if' on a value computed in the kernel");
  mlir::Value condition = conditionValue(*this, conditionObj, r);
  Variables v = captureVariables(*this, assignedIn(s.body, s.orelse));
  // Each branch reports the value of every candidate variable afterwards.
  auto runBranch = [&](const StmtList &body) {
    restoreVariables(*this, v);
    checkRegionFlow(*this, exec(body), "an 'if' on a dynamic condition", s.range());
    std::vector<Obj> items;
    for (const std::string &name : v.names) {
      auto it = currentFrame().vars.find(name);
      bool defined = it != currentFrame().vars.end() && !llvm::isa<UndefinedObj>(it->second.get());
      items.push_back(defined ? it->second : nullptr);
    }
    return items;
  };
  std::vector<Obj> items = emitIf(
      *this, condition, [&] { return runBranch(s.body); }, [&] { return runBranch(s.orelse); },
      [&](size_t item) { return "variable '" + v.names[item] + "'"; }, s.range());
  restoreVariables(*this, v);
  for (size_t i = 0; i < v.names.size(); ++i) {
    if (items[i])
      currentFrame().vars[v.names[i]] = items[i];
    else
      currentFrame().vars[v.names[i]] = std::make_shared<UndefinedObj>(
          "variable '" + v.names[i] +
          "' is not defined the same way in both branches of an 'if' on a dynamic condition; "
          "give it a value of the same kind in both branches (or before the 'if')");
  }
  return Flow::Normal;
}

Flow Elaborator::execDynamicFor(const ForStmt &s, const Obj &lower, const Obj &upper,
                                const Obj &step) {
  SourceRange r = s.iterable->range();
  requireKernel(r, "a loop with bounds computed in the kernel");
  if (std::optional<int64_t> st = staticInt(step); st && *st <= 0)
    fail(r, "loops with dynamic bounds need a positive step");
  mlir::Value lb = loopBound(*this, lower, r), ub = loopBound(*this, upper, r),
              stepValue = loopBound(*this, step, r);
  std::set<std::string> names = assignedIn(s.body);
  if (auto *target = llvm::dyn_cast<NameExpr>(s.target.get()))
    names.erase(target->name);
  else
    fail(s.target->range(), "the target of a loop with dynamic bounds must be a single name");
  Variables v = captureVariables(*this, names);
  ForBody body = [&](const Obj &index, const std::vector<Obj> &leaves) {
    bindVariables(*this, v, leaves);
    assign(*s.target, index);
    LoopScope loop(*this);
    checkRegionFlow(*this, exec(s.body), "a loop with dynamic bounds", s.range());
    return readVariables(*this, v, "a loop with dynamic bounds", s.range());
  };
  std::vector<Obj> after = emitFor(*this, lb, ub, stepValue, v.leaves, /*carryAll=*/false,
                                   [&](size_t leaf) { return leafName(v, leaf); }, body, s.range());
  bindVariables(*this, v, after);
  poisonNewVariables(*this, v, "is assigned inside a loop with dynamic bounds; assign it before "
                               "the loop to carry it out");
  assign(*s.target, std::make_shared<UndefinedObj>(
                        "the index of a loop with dynamic bounds is not defined after the loop"));
  return Flow::Normal;
}

Flow Elaborator::execDynamicWhile(const WhileStmt &s) {
  SourceRange r = s.condition->range();
  requireKernel(r, "a 'while' on a dynamic condition");
  Variables v = captureVariables(*this, assignedIn(s.body));
  WhileCond cond = [&](const std::vector<Obj> &leaves) {
    bindVariables(*this, v, leaves);
    return conditionValue(*this, eval(*s.condition), r);
  };
  WhileBody body = [&](const std::vector<Obj> &leaves) {
    bindVariables(*this, v, leaves);
    LoopScope loop(*this);
    checkRegionFlow(*this, exec(s.body), "a 'while' on a dynamic condition", s.range());
    return readVariables(*this, v, "a 'while' on a dynamic condition", s.range());
  };
  std::vector<Obj> after = emitWhile(*this, v.leaves, /*carryAll=*/false,
                                     [&](size_t leaf) { return leafName(v, leaf); }, cond, body,
                                     s.range());
  bindVariables(*this, v, after);
  poisonNewVariables(*this, v, "is assigned inside a 'while' on a dynamic condition; assign it "
                               "before the loop to carry it out");
  return Flow::Normal;
}

//===----------------------------------------------------------------------===//
// lax and pl control flow
//===----------------------------------------------------------------------===//

Obj Elaborator::foriLoop(const Obj &lower, const Obj &upper, const Obj &bodyFn, const Obj &init,
                         SourceRange r, const Obj &unroll) {
  requireKernel(r, "lax.fori_loop");
  // Fully unrolled, as JAX's scan lowers unroll=True (or an unroll of at
  // least the trip count): the body once per index, each a weakly typed
  // int32 constant as the scan's index would be.
  std::optional<int64_t> first = staticInt(lower), last = staticInt(upper);
  if (unroll && first && last && !llvm::isa<BoolObj>(lower.get()) &&
      !llvm::isa<BoolObj>(upper.get())) {
    bool full = false;
    if (auto *b = llvm::dyn_cast<BoolObj>(unroll.get()))
      full = b->value;
    else if (std::optional<int64_t> factor = staticInt(unroll))
      full = *factor > 1 && *factor >= *last - *first;
    if (full) {
      Obj carry = init;
      for (int64_t i = *first; i < *last; ++i) {
        CallArgs args;
        args.range = r;
        args.callee = "body_fun";
        args.addPositional(arrays().constantInt(i, DType::I32, {}, r, /*weak=*/true), r);
        args.addPositional(carry, r);
        Obj result = call(bodyFn, args);
        std::vector<Obj> in, out;
        if (!sameStructure(flatten(result, out), flatten(carry, in)))
          fail(r, "lax.fori_loop: body_fun must return a value with the same structure as "
                  "init_val (got " +
                      repr(*result) + " for " + repr(*init) + ")");
        carry = result;
      }
      return carry;
    }
  }
  mlir::Value lb = loopBound(*this, lower, r), ub = loopBound(*this, upper, r);
  mlir::Value one = arrays().constantInt(1, DType::I32, {}, r)->value;
  std::vector<Obj> leaves;
  TreeDef def = flatten(init, leaves);
  ForBody body = [&](const Obj &index, const std::vector<Obj> &in) {
    size_t next = 0;
    CallArgs args;
    args.range = r;
    args.callee = "body_fun";
    args.addPositional(index, r);
    args.addPositional(unflatten(def, in, next), r);
    Obj result = call(bodyFn, args);
    std::vector<Obj> out;
    TreeDef resultDef = flatten(result, out);
    if (!sameStructure(resultDef, def))
      fail(r, "lax.fori_loop: body_fun must return a value with the same structure as init_val "
              "(got " + repr(*result) + " for " + repr(*init) + ")");
    return out;
  };
  // With bounds known at trace time JAX runs the loop as a scan whose index
  // starts from the Python int `lower`: a weakly typed int32 (so that
  // `int8_value + i` stays int8). Traced bounds give the bounds' type.
  auto known = [](const Obj &bound) { return llvm::isa<IntObj, BoolObj, SymIntObj>(bound.get()); };
  std::vector<Obj> after = emitFor(*this, lb, ub, one, leaves, /*carryAll=*/true,
                                   [](size_t leaf) { return "carry element " + std::to_string(leaf); },
                                   body, r, /*weakIndex=*/known(lower) && known(upper));
  size_t next = 0;
  return unflatten(def, after, next);
}

Obj Elaborator::whileLoop(const Obj &condFn, const Obj &bodyFn, const Obj &init, SourceRange r) {
  requireKernel(r, "lax.while_loop");
  std::vector<Obj> leaves;
  TreeDef def = flatten(init, leaves);
  auto callWith = [&](const Obj &fn, const std::vector<Obj> &in, const char *name) {
    size_t next = 0;
    CallArgs args;
    args.range = r;
    args.callee = name;
    args.addPositional(unflatten(def, in, next), r);
    return call(fn, args);
  };
  WhileCond cond = [&](const std::vector<Obj> &in) {
    return conditionValue(*this, callWith(condFn, in, "cond_fun"), r);
  };
  WhileBody body = [&](const std::vector<Obj> &in) {
    Obj result = callWith(bodyFn, in, "body_fun");
    std::vector<Obj> out;
    if (!sameStructure(flatten(result, out), def))
      fail(r, "lax.while_loop: body_fun must return a value with the same structure as init_val");
    return out;
  };
  std::vector<Obj> after = emitWhile(*this, leaves, /*carryAll=*/true,
                                     [](size_t leaf) { return "carry element " + std::to_string(leaf); },
                                     cond, body, r);
  size_t next = 0;
  return unflatten(def, after, next);
}

Obj Elaborator::cond(const Obj &predicate, const Obj &trueFn, const Obj &falseFn,
                     std::vector<Obj> operands, SourceRange r) {
  // Export-level array code traces the cond as a kernel over its
  // operands: an array a branch computes from arrays it closes over is
  // no value of that kernel (what a failed merge of the results is then).
  std::string closedOver;
  auto callBranch = [&](const Obj &fn, const char *name) {
    CallArgs args;
    args.range = r;
    args.callee = name;
    for (const Obj &o : operands)
      args.addPositional(o, r);
    Obj result = call(fn, args);
    forEachLeaf(result, [&](const Obj &leaf) {
      if (auto *g = llvm::dyn_cast<GlobalArrayObj>(leaf.get()); g && closedOver.empty())
        closedOver = std::string(name) + " returns an array (" + g->name + ")";
    });
    return result;
  };
  if (!llvm::isa<ArrayObj>(predicate.get()))
    return truthy(predicate, r) ? callBranch(trueFn, "true_fun") : callBranch(falseFn, "false_fun");
  mlir::Value condition = conditionValue(*this, predicate, r);
  std::vector<Obj> items = emitIf(
      *this, condition, [&] { return std::vector<Obj>{callBranch(trueFn, "true_fun")}; },
      [&] { return std::vector<Obj>{callBranch(falseFn, "false_fun")}; },
      [](size_t) { return std::string("the result of lax.cond"); }, r);
  if (!items[0] && !closedOver.empty())
    fail(r, "lax.cond: " + closedOver +
                ", computed from whole arrays it closes over; at export level pass the arrays "
                "the branches use as operands (lax.cond(pred, lambda x: x * 2, lambda x: x + 1, "
                "x))");
  if (!items[0])
    fail(r, "lax.cond: true_fun and false_fun must return values of the same structure");
  return items[0];
}

void Elaborator::when(const Obj &condition, const Obj &body, SourceRange r) {
  auto run = [&] {
    CallArgs args;
    args.range = r;
    args.callee = "pl.when body";
    call(body, args);
    return std::vector<Obj>{};
  };
  if (!llvm::isa<ArrayObj>(condition.get())) {
    if (truthy(condition, r))
      run();
    return;
  }
  mlir::Value c = conditionValue(*this, condition, r);
  emitIf(*this, c, run, [] { return std::vector<Obj>{}; },
         [](size_t) { return std::string(); }, r);
}

} // namespace pk::elab
