//===- LaunchPlan.cpp -----------------------------------------------------===//
#include "backends/cuda/LaunchPlan.h"

#include "backends/cuda/BufferViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExprVisitor.h"

#include <algorithm>
#include <optional>
#include <set>

namespace pk::gpu {

using namespace mlir;

namespace {

/// Whether `e` involves grid axis `axis` only through additions and
/// multiplications by constants, so that distinct values of the axis give
/// distinct results (when the coefficient is not zero).
bool isLinearIn(AffineExpr e, unsigned axis) {
  if (!e.isFunctionOfDim(axis))
    return true;
  auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary)
    return true; // the dim itself
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return isLinearIn(binary.getLHS(), axis) && isLinearIn(binary.getRHS(), axis);
  case AffineExprKind::Mul:
    return (llvm::isa<AffineConstantExpr>(binary.getRHS()) &&
            llvm::cast<AffineConstantExpr>(binary.getRHS()).getValue() != 0 &&
            isLinearIn(binary.getLHS(), axis)) ||
           (llvm::isa<AffineConstantExpr>(binary.getLHS()) &&
            llvm::cast<AffineConstantExpr>(binary.getLHS()).getValue() != 0 &&
            isLinearIn(binary.getRHS(), axis));
  default:
    return false; // floordiv, ceildiv, mod: several programs share a block
  }
}

/// For a computed index map: whether the yielded value is the grid index
/// `axis` itself (possibly plus a constant).
bool yieldsAxis(Value v, Block &block, unsigned axis) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &block && arg.getArgNumber() == axis;
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return (yieldsAxis(add.getLhs(), block, axis) && add.getRhs().getDefiningOp<arith::ConstantOp>()) ||
           (yieldsAxis(add.getRhs(), block, axis) && add.getLhs().getDefiningOp<arith::ConstantOp>());
  return false;
}

/// Whether `v` depends on block argument `axis` of `block`.
bool dependsOn(Value v, Block &block, unsigned axis, std::set<Operation *> &seen) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &block && arg.getArgNumber() == axis;
  Operation *def = v.getDefiningOp();
  if (!def || !seen.insert(def).second)
    return false;
  for (Value operand : def->getOperands())
    if (dependsOn(operand, block, axis, seen))
      return true;
  bool nested = false;
  def->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (auto arg = llvm::dyn_cast<BlockArgument>(operand); arg && arg.getOwner() == &block &&
                                                              arg.getArgNumber() == axis)
        nested = true;
  });
  return nested;
}

/// How each result of an operand's index map uses the grid axes: for each
/// result, the axes it depends on, and whether each dependence is linear.
struct MapUse {
  std::vector<std::vector<std::pair<unsigned, bool>>> results;
};

MapUse mapUse(pk::PallasCallOp call, BlockSpecAttr spec, unsigned &computedIndex) {
  MapUse use;
  unsigned grid = call.getGridRank();
  if (AffineMap map = spec.getIndexMap()) {
    for (AffineExpr e : map.getResults()) {
      auto &r = use.results.emplace_back();
      for (unsigned g = 0; g < grid; ++g)
        if (e.isFunctionOfDim(g))
          r.push_back({g, isLinearIn(e, g)});
    }
    return use;
  }
  Block &block = call.getIndexMap().front();
  Operation *yield = block.getTerminator();
  for (int64_t d = 0; d < spec.getRank(); ++d) {
    Value v = yield->getOperand(computedIndex++);
    auto &r = use.results.emplace_back();
    for (unsigned g = 0; g < grid; ++g) {
      std::set<Operation *> seen;
      if (dependsOn(v, block, g, seen))
        r.push_back({g, yieldsAxis(v, block, g)});
    }
  }
  return use;
}

/// dimension_semantics from compiler_params, if given: true = parallel.
std::optional<std::vector<bool>> declaredSemantics(pk::PallasCallOp call) {
  DictionaryAttr params = call.getCompilerParamsAttr();
  if (!params)
    return std::nullopt;
  for (StringRef backend : {"gpu", "tpu", "common"}) {
    auto inner = params.getAs<DictionaryAttr>(backend);
    auto list = inner ? inner.getAs<ArrayAttr>("dimension_semantics") : ArrayAttr();
    if (!list)
      continue;
    std::vector<bool> parallel;
    for (Attribute a : list) {
      auto s = llvm::dyn_cast<StringAttr>(a);
      // "sequential" is Mosaic GPU's spelling of TPU's "arbitrary".
      parallel.push_back(!s || (s.getValue() != "arbitrary" && s.getValue() != "sequential"));
    }
    // jax.vmap prepends grid axes that dimension_semantics does not list:
    // they are parallel.
    unsigned grid = call.getGridRank();
    if (parallel.size() < grid)
      parallel.insert(parallel.begin(), grid - parallel.size(), true);
    parallel.resize(grid);
    return parallel;
  }
  return std::nullopt;
}

/// Whether `store` writes every element of its Ref.
bool writesWholeRef(pk::StoreOp store) {
  if (store.getMask() || !store.getOffsets().empty())
    return false;
  ArrayRef<int64_t> shape = store.getRefType().getShape();
  return llvm::all_of(store.getStaticOffsets(), [](int64_t o) { return o == 0; }) &&
         llvm::all_of(store.getStrides(), [](int64_t s) { return s == 1; }) &&
         store.getSizes() == shape;
}

/// The grid axis `a` when `condition` is `program_id(a) == 0`.
std::optional<unsigned> firstProgramTest(Value condition) {
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  for (auto [id, zero] : {std::pair(cmp.getLhs(), cmp.getRhs()), std::pair(cmp.getRhs(), cmp.getLhs())}) {
    auto program = id.getDefiningOp<pk::ProgramIdOp>();
    auto constant = zero.getDefiningOp<arith::ConstantIntOp>();
    if (program && constant && constant.value() == 0)
      return static_cast<unsigned>(program.getAxis());
  }
  return std::nullopt;
}

/// Scratch buffers persist from one program to the next (the grid runs in
/// order, as on TPU), so a kernel may carry state in them. The first axis
/// across which scratch `ref` may carry state: the grid rank when the
/// kernel first overwrites all of it unconditionally, `a` when it does so
/// under `pl.when(program_id(a) == 0)` (the state then lives while axes a
/// and later advance, and restarts whenever an earlier one does), 0 when
/// it reads what an earlier program left.
unsigned firstCarryingAxis(Block &kernel, Value ref, unsigned gridRank) {
  for (Operation &op : kernel) {
    bool touches = false;
    op.walk([&](Operation *inner) { touches |= llvm::is_contained(inner->getOperands(), ref); });
    if (!touches)
      continue;
    if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
      return store.getRef() == ref && writesWholeRef(store) ? gridRank : 0;
    auto branch = llvm::dyn_cast<scf::IfOp>(op);
    std::optional<unsigned> axis = branch ? firstProgramTest(branch.getCondition()) : std::nullopt;
    if (!axis)
      return 0;
    for (Operation &inner : branch.getThenRegion().front()) {
      auto store = llvm::dyn_cast<pk::StoreOp>(inner);
      if (store && store.getRef() == ref && writesWholeRef(store))
        return *axis;
      bool reads = false;
      inner.walk([&](Operation *nested) { reads |= llvm::is_contained(nested->getOperands(), ref); });
      if (reads)
        return 0;
    }
    return 0;
  }
  return gridRank; // never used
}

/// An integer the program's GPU compiler_params give (`num_warps`,
/// `num_stages`), if any.
std::optional<unsigned> declaredParam(pk::PallasCallOp call, StringRef name) {
  DictionaryAttr params = call.getCompilerParamsAttr();
  if (!params)
    return std::nullopt;
  for (StringRef backend : {"gpu", "common"})
    if (auto inner = params.getAs<DictionaryAttr>(backend))
      if (auto n = inner.getAs<IntegerAttr>(name))
        return static_cast<unsigned>(n.getInt());
  return std::nullopt;
}

/// The bits of the largest block value the kernel computes with.
int64_t largestValueBits(pk::PallasCallOp call) {
  int64_t largest = 0;
  call.getKernelBlock().walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto tensor = llvm::dyn_cast<RankedTensorType>(type); tensor && tensor.hasStaticShape())
        largest = std::max(largest, tensor.getNumElements() *
                                        std::max<int64_t>(8, tensor.getElementTypeBitWidth()));
  });
  return largest;
}

/// Warps for a kernel that does not say: `fallback`, doubled (up to 16, a
/// 512-thread CTA) while the largest block value would take more than 128
/// of a thread's 255 registers. Triton would spill such a block; pkc
/// spreads it over more threads instead (a 128x256 f32 block: 8 warps).
/// Kernels pkc generates for array code outside kernels (no dots: their
/// warps are the tensor cores' choice) get more threads sooner, from 32
/// registers of a block a thread, as Triton's element-wise and softmax
/// kernels do: a 16384-element f32 block runs on 16 warps, each thread's
/// code four times shorter than on 4 and its loads more in flight.
unsigned chooseNumWarps(pk::PallasCallOp call, unsigned fallback) {
  constexpr int64_t kMaxWarps = 16;
  bool generated = call->hasAttr("pk.generated");
  bool dots = generated && call.getKernelBlock()
                               .walk([](pk::DotOp) { return WalkResult::interrupt(); })
                               .wasInterrupted();
  int64_t budget = generated && !dots ? 32 : 128;
  int64_t bits = largestValueBits(call);
  unsigned warps = fallback;
  while (warps < kMaxWarps && bits > int64_t(warps) * 32 * budget * 32)
    warps *= 2;
  return warps;
}

std::string sanitize(StringRef name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

LaunchPlan plan(pk::PallasCallOp call, unsigned defaultNumWarps) {
  LaunchPlan p;
  p.numWarps = declaredParam(call, "num_warps").value_or(chooseNumWarps(call, defaultNumWarps));
  p.numStages = declaredParam(call, "num_stages");
  unsigned grid = call.getGridRank();
  AffineMap sizes = call.getGrid();

  std::vector<bool> parallel(grid, true);
  if (std::optional<std::vector<bool>> declared = declaredSemantics(call)) {
    parallel = *declared;
  } else {
    // Operands the kernel writes: outputs, and inputs it stores into.
    Block &kernel = call.getKernelBlock();
    size_t prefetch = call.getNumScalarPrefetch();
    SmallVector<BlockSpecAttr> specs = call.getAllSpecs();
    unsigned computed = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      MapUse use = mapUse(call, specs[i], computed);
      // Plain writes from several programs to one block need an order;
      // atomic updates do not.
      bool written = false;
      for (Operation *user : kernel.getArgument(prefetch + i).getUsers())
        written |= llvm::isa<pk::StoreOp, pk::ScatterOp>(user);
      if (!written)
        continue;
      // Programs differing in a parallel axis must write different blocks:
      // the axis must set one result linearly, alone among the parallel
      // axes there. Otherwise it runs in order.
      for (unsigned g = 0; g < grid; ++g) {
        bool linearAlone = false;
        for (auto &result : use.results) {
          unsigned parallelHere = 0;
          bool linear = false;
          for (auto [axis, isLinear] : result) {
            if (parallel[axis])
              ++parallelHere;
            if (axis == g)
              linear = isLinear;
          }
          bool uses = llvm::any_of(result, [&](auto &pair) { return pair.first == g; });
          if (uses && linear && parallelHere == 1)
            linearAlone = true;
        }
        if (!linearAlone)
          parallel[g] = false;
      }
    }
    // Scratch that carries state between programs orders the axes it
    // crosses. jax.vmap's batch axes stay parallel: each batch element is
    // its own pallas_call.
    unsigned batch = 0;
    if (auto axes = call->getAttrOfType<IntegerAttr>("pk.vmap_axes"))
      batch = static_cast<unsigned>(axes.getInt());
    unsigned scratchBegin = prefetch + specs.size();
    for (unsigned s = scratchBegin; s < kernel.getNumArguments(); ++s)
      for (unsigned g = std::max(batch, firstCarryingAxis(kernel, kernel.getArgument(s), grid)); g < grid;
           ++g)
        parallel[g] = false;
  }
  // An axis whose size is computed from data runs in order: the CTA reads
  // its size from the grid bound's buffer, where the launch could not.
  for (unsigned g = 0; g < grid; ++g)
    if (call.isDynamicGridAxis(g))
      parallel[g] = false;
  // A grid axis of size 1 costs nothing either way.
  std::vector<unsigned> parallelAxes;
  for (unsigned g = 0; g < grid; ++g) {
    auto c = llvm::dyn_cast<AffineConstantExpr>(sizes.getResult(g));
    if (parallel[g] || (c && c.getValue() == 1))
      parallelAxes.push_back(g);
    else
      p.sequentialAxes.push_back(g);
  }
  // At most three CUDA grid dimensions: merge leading groups whose product
  // stays affine (one of them static), or run them in order.
  std::vector<std::vector<unsigned>> groups;
  for (unsigned g : parallelAxes)
    groups.push_back({g});
  auto groupSize = [&](const std::vector<unsigned> &group) {
    AffineExpr size = getAffineConstantExpr(1, call.getContext());
    for (unsigned g : group)
      size = size * sizes.getResult(g);
    return size;
  };
  while (groups.size() > 3) {
    bool constant0 = llvm::isa<AffineConstantExpr>(groupSize(groups[0]));
    bool constant1 = llvm::isa<AffineConstantExpr>(groupSize(groups[1]));
    if (constant0 || constant1) {
      groups[0].insert(groups[0].end(), groups[1].begin(), groups[1].end());
      groups.erase(groups.begin() + 1);
    } else {
      p.sequentialAxes.insert(p.sequentialAxes.end(), groups[0].begin(), groups[0].end());
      groups.erase(groups.begin());
    }
  }
  llvm::sort(p.sequentialAxes);
  // The fastest-varying group on x: x allows 2^31 - 1 blocks, y and z 65535.
  for (unsigned c = 0; c < 3; ++c) {
    p.cudaSize[c] = getAffineConstantExpr(1, call.getContext());
    if (c < groups.size()) {
      p.cudaAxes[c] = groups[groups.size() - 1 - c];
      p.cudaSize[c] = groupSize(p.cudaAxes[c]);
    }
  }
  return p;
}

} // namespace

/// A Mosaic GPU kernel: every CTA runs concurrently with the others (its
/// body synchronizes as it needs), each Pallas thread is a warpgroup.
LaunchPlan plan(pk::MeshKernelOp kernel) {
  LaunchPlan p;
  p.warpgroups = static_cast<unsigned>(kernel.getNumThreads());
  p.numWarps = 4 * p.warpgroups;
  int64_t ctas = kernel.getClusterSize();
  for (int64_t g : kernel.getGrid())
    ctas *= g;
  p.clusterSize = static_cast<unsigned>(kernel.getClusterSize());
  p.cudaSize[0] = getAffineConstantExpr(ctas, kernel.getContext());
  for (unsigned c = 1; c < 3; ++c)
    p.cudaSize[c] = getAffineConstantExpr(1, kernel.getContext());
  return p;
}

std::map<Operation *, LaunchPlan> planLaunches(ModuleOp module, unsigned defaultNumWarps) {
  std::map<Operation *, LaunchPlan> plans;
  std::set<std::string> names;
  auto add = [&](Operation *op, StringRef kernelName, LaunchPlan p) {
    auto exportOp = op->getParentOfType<pk::ExportOp>();
    std::string base = sanitize(exportOp.getSymName()) + "_" + sanitize(kernelName);
    std::string name = base;
    for (unsigned n = 1; !names.insert(name).second; ++n)
      name = base + "_" + std::to_string(n);
    p.kernelName = name;
    plans[op] = p;
  };
  module.walk([&](Operation *op) {
    if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op)) {
      if (!isBufferView(call)) // no kernel: the host program renames a buffer
        add(op, call.getName(), plan(call, defaultNumWarps));
    }
    else if (auto kernel = llvm::dyn_cast<pk::MeshKernelOp>(op))
      add(op, kernel.getName(), plan(kernel));
  });
  return plans;
}

AffineMap symbolicShapeOf(Value array) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(array)) {
    auto exportOp = llvm::cast<pk::ExportOp>(arg.getOwner()->getParentOp());
    return exportOp.getArgShape(arg.getArgNumber());
  }
  if (auto call = array.getDefiningOp<pk::PallasCallOp>())
    return call.getOutShape(llvm::cast<OpResult>(array).getResultNumber());
  // Mosaic GPU kernels work on whole arrays of static shape.
  SmallVector<AffineExpr> sizes;
  for (int64_t d : llvm::cast<RankedTensorType>(array.getType()).getShape())
    sizes.push_back(getAffineConstantExpr(d, array.getContext()));
  return AffineMap::get(0, 0, sizes, array.getContext());
}

} // namespace pk::gpu
