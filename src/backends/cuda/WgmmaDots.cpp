//===- WgmmaDots.cpp - pallas_call dots on wgmma (sm_90a) -----------------===//
//
// mma.sync multiplies operands a warp holds in registers, in fragments
// of 16x8x16; Hopper's wgmma multiplies operands in shared memory, a
// warpgroup at a time, in 64xNx16 steps issued asynchronously — what
// cuBLAS and Triton use on sm_90a. This pass gives the dots of ordinary
// kernels the second: each operand is stored into a shared buffer laid
// out as wgmma reads it (SharedLayout::strips, swizzled), made visible to
// the tensor cores (pk.commit_smem), multiplied by pkgpu.wgmma_tile and
// waited for. The ops are the ones Mosaic GPU kernels lower through
// (LowerMosaicGpu.cpp), so the rest of the pipeline, and the simulator,
// treat them alike.
//
// `acc + x @ y` with an f32 `acc` accumulates in place: `acc` is the
// accumulator the wgmma adds to, so a K loop carries it in the registers
// wgmma writes (the layout stage gives the loop value that layout).
//
// f32 dots that may use TF32 (pk.dot's allow_tf32: JAX's DEFAULT
// precision) run as tf32 wgmmas, which read both operands K-major only:
// an operand stored the other way round (B of `x @ y`) is transposed on
// its way into shared memory, through registers.
//
// An operand that is a transposed value (`q @ k.T`) is stored as it is
// and read through a transposed view: wgmma reads either majorness of
// 16-bit operands, and the window of `k` is then a plain load that
// pk-gpu-prefetch-operands can copy. An operand a loop does not change (the queries of a flash
// attention, read once before its loop over keys) is stored once, before
// the outermost such loop, into a buffer of its own.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/HardwareLimits.h"
#include "backends/cuda/MeshTma.h"
#include "backends/cuda/Passes.h"
#include "backends/cuda/Wgmma.h"

#include "ir/PkDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUWGMMADOTS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// The most shared memory a kernel's scratch and dot operands may take:
/// the rest of sm_90's 227 KiB is left for the staging of layout
/// conversions and reductions that come after them.
constexpr int64_t kOperandBudget = 160 * 1024;

/// The registers a thread needs beside a wgmma's accumulator: the
/// operands' descriptors, addresses, the loop's counters.
constexpr int64_t kWgmmaRegisterHeadroom = 32;

/// A dot this pass rewrites, with where its operands go.
struct WgmmaDot {
  pk::DotOp dot;
  /// `acc + dot` that the wgmma performs in place, if any. Its `acc` is
  /// read when the dot is rewritten: an earlier rewrite may replace it.
  arith::AddFOp accumulation;
  pk::RefType aType, bType;
  int64_t aSwizzle = 0, bSwizzle = 0;
  int64_t aBytes = 0, bBytes = 0;
  /// A is a 16-bit value the kernel computes (not a window it loads): it
  /// stays in registers, in wgmma's A fragments. Flash attention's
  /// `p.astype(bf16) @ v` then multiplies P where the first dot's
  /// accumulator left it, with no trip through shared memory.
  bool aInRegisters = false;
  /// A tf32 operand that is MN-major as the dot has it: stored transposed,
  /// and read through the other view, so that wgmma reads it K-major.
  bool aTransposedOnStore = false, bTransposedOnStore = false;
  /// For an operand the dot's loops do not change, the outermost such
  /// loop: the operand is stored once before it. Null: stored in place.
  Operation *aStoredBefore = nullptr, *bStoredBefore = nullptr;
};

/// The buffers of operands stored once before a loop, one per value and
/// loop, placed one after another.
struct OwnBuffers {
  /// The value, the loop it is stored before, and whether it is stored
  /// transposed.
  using Place = std::tuple<Value, Operation *, unsigned>;
  /// Each place's offset from the first buffer.
  llvm::DenseMap<Place, int64_t> offsets;
  /// The stores made so far.
  llvm::DenseMap<Place, Value> stored;
  int64_t bytes = 0;

  /// The bytes `place` adds: none when it has its buffer already.
  int64_t added(Place place, int64_t size) const {
    return offsets.count(place) ? 0
                                : static_cast<int64_t>(llvm::alignTo(size, kWgmmaOperandAlignment));
  }
  void add(Place place, int64_t size) {
    int64_t more = added(place, size);
    if (offsets.try_emplace(place, bytes).second)
      bytes += more;
  }
};

pk::RefType sharedBuffer(RankedTensorType value) {
  return pk::RefType::get(value.getShape(), value.getElementType(),
                          pk::MemorySpaceAttr::get(value.getContext(), pk::MemorySpace::GPUShared));
}

/// `type` with its two dimensions swapped.
RankedTensorType transposed(RankedTensorType type) {
  return RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
}

/// The outermost loop around `user` that `v` is defined outside of, or
/// null: where a value the loop does not change is best stored once.
Operation *outermostInvariantLoop(Value v, Operation *user) {
  Operation *scope = v.getDefiningOp();
  if (!scope)
    scope = v.getParentBlock()->getParentOp();
  Operation *outermost = nullptr;
  for (Operation *p = user->getParentOp(); p && !p->isAncestor(scope); p = p->getParentOp())
    if (llvm::isa<scf::ForOp, scf::WhileOp>(p))
      outermost = p;
  return outermost;
}

/// The dot as wgmma runs it, or nullopt when wgmma cannot: 16-bit float
/// operands of one type or f32 ones that may be TF32, a float result,
/// whole warpgroups over M, N a power of two wgmma has, K whole
/// instructions, rows of at least one 32-byte swizzle span in both
/// stored operands.
std::optional<WgmmaDot> asWgmma(pk::DotOp dot, unsigned numWarps, DominanceInfo &dominance) {
  auto lhs = llvm::cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(dot.getRhs().getType());
  auto result = llvm::cast<RankedTensorType>(dot.getType());
  Type element = lhs.getElementType();
  bool tf32 = element.isF32() && dot.getAllowTf32();
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || !(element.isF16() || element.isBF16() || tf32) ||
      rhs.getElementType() != element || !llvm::isa<FloatType>(result.getElementType()) ||
      result.getElementType().isF64())
    return std::nullopt;
  unsigned bytes = tf32 ? 4 : 2;
  int64_t m = result.getDimSize(0), n = result.getDimSize(1);
  int64_t k = lhs.getDimSize(dot.getTransposeLhs() ? 0 : 1);
  if (numWarps % 4 != 0 || m % (64 * (numWarps / 4)) != 0 || n < 8 || n > 256 || (n & (n - 1)) ||
      k % wgmmaInstructionK(bytes) != 0)
    return std::nullopt;
  // The accumulator lives in registers, one f32 element a register (a
  // 16-bit result is rounded from it after), and one wgmma names all of
  // its warpgroup's share: unlike the per-thread code of other dots,
  // which ptxas spills, a wgmma whose registers do not fit the thread's
  // share of the register file does not assemble (a 256 x 256 f32 block
  // at 16 warps: 128 registers, all a thread may have).
  int64_t threads = static_cast<int64_t>(numWarps) * 32;
  int64_t threadRegisters =
      std::min<int64_t>(kMaxRegistersPerThread, kRegistersPerMultiprocessor / threads);
  if (m * n / threads + kWgmmaRegisterHeadroom > threadRegisters)
    return std::nullopt;
  WgmmaDot w;
  w.dot = dot;
  // K-major: A as M x K, B as N x K (a transposed B).
  w.aTransposedOnStore = tf32 && dot.getTransposeLhs();
  w.bTransposedOnStore = tf32 && !dot.getTransposeRhs();
  w.aType = sharedBuffer(w.aTransposedOnStore ? transposed(lhs) : lhs);
  w.bType = sharedBuffer(w.bTransposedOnStore ? transposed(rhs) : rhs);
  w.aSwizzle = wgmmaOperandSwizzle(w.aType);
  w.bSwizzle = wgmmaOperandSwizzle(w.bType);
  // The simulator models swizzled operands only, and strips of 16 bytes
  // would be as slow as mma.sync's fragments anyway.
  if (!w.aSwizzle || !w.bSwizzle)
    return std::nullopt;
  w.aBytes = lhs.getNumElements() * bytes;
  w.bBytes = rhs.getNumElements() * bytes;
  // Loaded windows go through shared memory, where they are copied ahead;
  // a value the dot's loops do not change is stored there once (in
  // registers it would hold them for the whole loop). So an A in
  // registers is neither stored once nor read through a transposed view.
  w.aInRegisters = !tf32 && !dot.getTransposeLhs() && k >= 16 && llvm::isPowerOf2_64(k) &&
                   !dot.getLhs().getDefiningOp<pk::LoadOp>() &&
                   !outermostInvariantLoop(dot.getLhs(), dot);
  if (w.aInRegisters)
    w.aBytes = 0;
  if (result.getElementType().isF32() && dot->hasOneUse())
    if (auto add = llvm::dyn_cast<arith::AddFOp>(*dot->getUsers().begin())) {
      Value acc = add.getLhs() == dot.getResult() ? add.getRhs() : add.getLhs();
      // The wgmma replaces the dot, so the accumulator must exist there.
      if (acc != dot.getResult() && dominance.properlyDominates(acc, dot))
        w.accumulation = add;
    }
  return w;
}

/// `x.T` as a dot operand becomes the dot's transpose flag on `x`.
void absorbTransposes(pk::DotOp dot) {
  auto untransposed = [](Value v) -> Value {
    auto transpose = v.getDefiningOp<pk::TransposeOp>();
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return {};
    return transpose.getOperand();
  };
  if (Value x = untransposed(dot.getLhs())) {
    dot.getLhsMutable().assign(x);
    dot.setTransposeLhs(!dot.getTransposeLhs());
  }
  if (Value x = untransposed(dot.getRhs())) {
    dot.getRhsMutable().assign(x);
    dot.setTransposeRhs(!dot.getTransposeRhs());
  }
  // The window's load must have the store as its only user to be copied.
  for (Value operand : {dot.getLhs(), dot.getRhs()})
    for (Operation *user : llvm::make_early_inc_range(operand.getUsers()))
      if (llvm::isa<pk::TransposeOp>(user) && user->use_empty())
        user->erase();
}

/// The shared memory each window of a dot split along K (`splitAlongK`:
/// its operands do not fit kOperandBudget) takes at most: few enough
/// registers per window that the accumulator stays in registers beside
/// it (f32 128 x 256 with 8 warps: 128 registers, 96 more for a window).
constexpr int64_t kDotPieceBudget = 48 * 1024;

/// Whether an op between `from` and `to` (one block) may write memory:
/// moving a load past it could read another value.
bool writesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    if (llvm::isa<pk::LoadOp>(op)) // reads only (it declares no effects)
      continue;
    auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects ? !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || op->getNumRegions()
                 : effects.hasEffect<MemoryEffects::Write>())
      return true;
  }
  return false;
}

/// The load that gives the dot `operand`, if its window can be read in
/// pieces along dimension `kDim`: a plain load of a static window of a
/// Ref read only by the dot, with nothing written between it and the dot.
pk::LoadOp splittableLoad(Value operand, unsigned kDim, pk::DotOp dot) {
  auto load = operand.getDefiningOp<pk::LoadOp>();
  if (!load || !load->hasOneUse() || load->getBlock() != dot->getBlock() || load.getMask() ||
      !load.getSqueeze().empty() ||
      llvm::any_of(load.getStrides(), [](int64_t s) { return s != 1; }))
    return {};
  auto ref = llvm::cast<pk::RefType>(load.getRef().getType());
  int64_t offset = load.getStaticOffsets()[kDim];
  if (ref.getRank() != 2 || ShapedType::isDynamic(offset) ||
      offset + load.getSizes()[kDim] > ref.getShape()[kDim] || writesBetween(load, dot))
    return {};
  return load;
}

/// Splits a dot whose operands do not fit kOperandBudget of shared memory
/// into a loop over K windows of `piece`, each loaded from the operands'
/// Refs in the loop (so that only a window of each operand is live in
/// registers) and accumulated: `acc + x @ y` becomes a loop carrying
/// `acc + x_i @ y_i`, which accumulates in place.
/// The templated matmul of the Pallas design doc multiplies 128 x 128 by
/// 128 x 256 f32 blocks: 192 KiB as TF32 operands, 48 KiB a window of 32.
void splitAlongK(pk::DotOp dot, const WgmmaDot &w) {
  auto lhsType = llvm::cast<RankedTensorType>(dot.getLhs().getType());
  unsigned aK = dot.getTransposeLhs() ? 0 : 1, bK = dot.getTransposeRhs() ? 1 : 0;
  int64_t k = lhsType.getDimSize(aK);
  int64_t bytes = elementBytes(lhsType.getElementType());
  int64_t piece = k;
  while (piece % 2 == 0 && (w.aBytes + w.bBytes) / (k / piece) > kDotPieceBudget &&
         (piece / 2) % wgmmaInstructionK(static_cast<unsigned>(bytes)) == 0 &&
         (piece / 2) * bytes >= 128)
    piece /= 2;
  if (piece == k || !llvm::cast<RankedTensorType>(dot.getType()).getElementType().isF32())
    return;
  pk::LoadOp a = splittableLoad(dot.getLhs(), aK, dot), b = splittableLoad(dot.getRhs(), bK, dot);
  if (!a || !b)
    return;
  OpBuilder builder(dot);
  Location loc = dot.getLoc();
  // The window of `load` starting `start` further along `kDim`.
  auto window = [&](OpBuilder &at, pk::LoadOp load, unsigned kDim, Value start) -> Value {
    SmallVector<int64_t> staticOffsets(load.getStaticOffsets()), sizes(load.getSizes());
    SmallVector<Value> offsets;
    auto dynamic = load.getOffsets().begin();
    for (size_t d = 0; d < staticOffsets.size(); ++d) {
      bool isDynamic = ShapedType::isDynamic(staticOffsets[d]);
      if (d == kDim)
        offsets.push_back(arith::AddIOp::create(
            at, loc, start, arith::ConstantIndexOp::create(at, loc, staticOffsets[d])));
      else if (isDynamic)
        offsets.push_back(*dynamic);
      if (isDynamic)
        ++dynamic;
    }
    staticOffsets[kDim] = ShapedType::kDynamic;
    sizes[kDim] = piece;
    auto type = llvm::cast<RankedTensorType>(load.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[kDim] = piece;
    return pk::LoadOp::create(at, loc, RankedTensorType::get(shape, type.getElementType()),
                              load.getRef(), offsets, staticOffsets, sizes, load.getStrides(),
                              load.getSqueeze(), /*mask=*/Value(), /*other=*/Value(),
                              load.getPadded())
        .getResult();
  };
  auto add =
      dot->hasOneUse() ? llvm::dyn_cast<arith::AddFOp>(*dot->getUsers().begin()) : arith::AddFOp();
  Value init = add ? (add.getLhs() == dot.getResult() ? add.getRhs() : add.getLhs()) : Value();
  // The pieces accumulate into `acc` only if it exists before the dot.
  if (add && !DominanceInfo(dot->getParentOp()).properlyDominates(init, dot)) {
    add = {};
    init = {};
  }
  auto resultType = llvm::cast<RankedTensorType>(dot.getType());
  if (!init)
    init = arith::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(resultType, builder.getFloatAttr(resultType.getElementType(), 0.0)));
  // A loop over the windows, so that the code has one piece whatever K is
  // (and pk-gpu-prefetch-operands copies its windows ahead).
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value end = arith::ConstantIndexOp::create(builder, loc, k);
  Value step = arith::ConstantIndexOp::create(builder, loc, piece);
  auto loop = scf::ForOp::create(builder, loc, zero, end, step, ValueRange{init});
  {
    OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
    Value start = loop.getInductionVar();
    Value lhs = window(body, a, aK, start), rhs = window(body, b, bK, start);
    auto product = llvm::cast<pk::DotOp>(body.clone(*dot));
    product.getLhsMutable().assign(lhs);
    product.getRhsMutable().assign(rhs);
    product.getResult().setType(resultType);
    Value sum = arith::AddFOp::create(body, loc, loop.getRegionIterArgs()[0], product.getResult());
    scf::YieldOp::create(body, loc, sum);
  }
  if (add) {
    add.getResult().replaceAllUsesWith(loop.getResult(0));
    add.erase();
  } else {
    dot.getResult().replaceAllUsesWith(loop.getResult(0));
  }
  dot.erase();
  a.erase();
  b.erase();
}

struct WgmmaDotsPass : impl::PkGpuWgmmaDotsBase<WgmmaDotsPass> {
  void runOnOperation() override {
    getOperation().walk([&](::mlir::gpu::GPUFuncOp func) { rewrite(func); });
  }

  void rewrite(::mlir::gpu::GPUFuncOp func) {
    // Mosaic GPU kernels (several Pallas threads, block values per
    // warpgroup) use wgmma as the program says.
    if (func->hasAttr("pkgpu.warpgroups"))
      return;
    auto warps = func->getAttrOfType<IntegerAttr>("pkgpu.num_warps");
    auto scratch = func->getAttrOfType<IntegerAttr>("pkgpu.scratch_bytes");
    if (!warps || !scratch)
      return;
    int64_t base = llvm::alignTo(scratch.getInt(), kWgmmaOperandAlignment);
    SmallVector<WgmmaDot> dots;
    // The buffers of loop-invariant operands, and after them the region
    // every dot's stored-in-place operands share.
    OwnBuffers own;
    int64_t region = 0;
    {
      DominanceInfo dominance(func);
      SmallVector<std::pair<pk::DotOp, WgmmaDot>> large;
      func.walk([&](pk::DotOp dot) {
        absorbTransposes(dot);
        if (std::optional<WgmmaDot> w =
                asWgmma(dot, static_cast<unsigned>(warps.getInt()), dominance))
          if (base + w->aBytes + w->bBytes > kOperandBudget)
            large.push_back({dot, *w});
      });
      for (auto &[dot, w] : large)
        splitAlongK(dot, w);
    }
    DominanceInfo dominance(func);
    func.walk([&](pk::DotOp dot) {
      std::optional<WgmmaDot> w = asWgmma(dot, static_cast<unsigned>(warps.getInt()), dominance);
      if (!w)
        return;
      w->aStoredBefore = outermostInvariantLoop(dot.getLhs(), dot);
      w->bStoredBefore = outermostInvariantLoop(dot.getRhs(), dot);
      OwnBuffers::Place aPlace{dot.getLhs(), w->aStoredBefore, w->aTransposedOnStore},
          bPlace{dot.getRhs(), w->bStoredBefore, w->bTransposedOnStore};
      auto inPlace = [&] {
        return (w->aStoredBefore ? 0 : llvm::alignTo(w->aBytes, kWgmmaOperandAlignment)) +
               (w->bStoredBefore ? 0 : w->bBytes);
      };
      auto ownBytes = [&] {
        int64_t bytes = w->aStoredBefore ? own.added(aPlace, w->aBytes) : 0;
        if (w->bStoredBefore && !(w->aStoredBefore && bPlace == aPlace))
          bytes += own.added(bPlace, w->bBytes);
        return bytes;
      };
      auto fits = [&] {
        return base + llvm::alignTo(std::max<int64_t>(region, inPlace()), kWgmmaOperandAlignment) +
                   own.bytes + ownBytes() <=
               kOperandBudget;
      };
      // Stored in place, the operands fit where a buffer of their own may
      // not: then the loop stores them every step, as before.
      if ((w->aStoredBefore || w->bStoredBefore) && !fits())
        w->aStoredBefore = w->bStoredBefore = nullptr;
      if (!fits())
        return;
      region = std::max<int64_t>(region, inPlace());
      if (w->aStoredBefore)
        own.add(aPlace, w->aBytes);
      if (w->bStoredBefore)
        own.add(bPlace, w->bBytes);
      dots.push_back(*w);
    });
    if (dots.empty())
      return;
    // Every dot waits for its wgmma before the next one's stores (which a
    // barrier precedes in a loop: Distribute fences a buffer stored more
    // than once), so all of them can use the same buffers. The region
    // comes last: the operand rings of pk-gpu-prefetch-operands replace
    // buffers in it and start where the buffers that stay end.
    int64_t regionBase = base + own.bytes;
    for (WgmmaDot &w : dots)
      rewrite(w, regionBase, base, own);
    func->setAttr("pkgpu.scratch_bytes",
                  IntegerAttr::get(scratch.getType(), llvm::alignTo(regionBase + region, 16)));
  }

  /// Stores the operands of `w`'s dot in place at `base` or into their
  /// own buffers (from `ownBase`), and multiplies them with wgmma.
  void rewrite(WgmmaDot &w, int64_t base, int64_t ownBase, OwnBuffers &own) {
    pk::DotOp dot = w.dot;
    Location loc = dot.getLoc();
    OpBuilder b(dot);
    auto storeAt = [&](OpBuilder &at, Value value, bool transpose, pk::RefType type, int64_t offset,
                       int64_t swizzle) -> Value {
      if (transpose)
        value = pk::TransposeOp::create(at, loc,
                                        transposed(llvm::cast<RankedTensorType>(value.getType())),
                                        value, at.getDenseI64ArrayAttr({1, 0}));
      Value ref = SharedRefOp::create(at, loc, type, at.getI64IntegerAttr(offset),
                                      at.getI64IntegerAttr(swizzle), IntegerAttr());
      int64_t rank = type.getRank();
      pk::StoreOp::create(at, loc, value, ref, ValueRange{}, SmallVector<int64_t>(rank, 0),
                          type.getShape(), SmallVector<int64_t>(rank, 1), ArrayRef<int64_t>{},
                          /*mask=*/Value(), /*padded=*/false);
      return ref;
    };
    // Before the loop, made visible to the tensor cores there.
    auto storeOnce = [&](Value value, bool transpose, Operation *loop, pk::RefType type,
                         int64_t swizzle) -> Value {
      OwnBuffers::Place place{value, loop, transpose};
      Value &ref = own.stored[place];
      if (!ref) {
        OpBuilder before(loop);
        ref = storeAt(before, value, transpose, type, ownBase + own.offsets.lookup(place), swizzle);
        pk::CommitSmemOp::create(before, loc);
      }
      return ref;
    };
    Value a =
        w.aInRegisters ? dot.getLhs()
        : w.aStoredBefore
            ? storeOnce(dot.getLhs(), w.aTransposedOnStore, w.aStoredBefore, w.aType, w.aSwizzle)
            : storeAt(b, dot.getLhs(), w.aTransposedOnStore, w.aType, base, w.aSwizzle);
    int64_t bOffset =
        w.aStoredBefore ? base : base + llvm::alignTo(w.aBytes, kWgmmaOperandAlignment);
    Value bRef =
        w.bStoredBefore
            ? storeOnce(dot.getRhs(), w.bTransposedOnStore, w.bStoredBefore, w.bType, w.bSwizzle)
            : storeAt(b, dot.getRhs(), w.bTransposedOnStore, w.bType, bOffset, w.bSwizzle);
    pk::CommitSmemOp::create(b, loc);
    // An operand the dot transposes is read through a transposed view,
    // which wgmma takes as the other majorness.
    auto viewed = [&](Value ref, bool flip) -> Value {
      if (!flip)
        return ref;
      auto type = llvm::cast<pk::RefType>(ref.getType());
      auto view = pk::RefType::get({type.getShape()[1], type.getShape()[0]}, type.getElementType(),
                                   type.getMemorySpace());
      return pk::RefTransposeOp::create(b, loc, view, ref, b.getDenseI64ArrayAttr({1, 0}));
    };
    a = viewed(a, dot.getTransposeLhs() != w.aTransposedOnStore);
    bRef = viewed(bRef, dot.getTransposeRhs() != w.bTransposedOnStore);

    auto result = llvm::cast<RankedTensorType>(dot.getType());
    auto accType = RankedTensorType::get(result.getShape(), b.getF32Type());
    Value accumulator;
    if (w.accumulation)
      accumulator = w.accumulation.getLhs() == dot.getResult() ? w.accumulation.getRhs()
                                                               : w.accumulation.getLhs();
    else
      accumulator = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(accType, b.getFloatAttr(b.getF32Type(), 0.0)));
    Value product = WgmmaTileOp::create(b, loc, accType, accumulator, a, bRef, DenseI64ArrayAttr());
    Value done = WgmmaWaitTileOp::create(b, loc, TypeRange{accType}, b.getI64IntegerAttr(0),
                                         ValueRange{product})
                     .getResult(0);
    if (w.accumulation) {
      // The sum is the wgmma's result; the dot has no other use.
      w.accumulation.getResult().replaceAllUsesWith(done);
      w.accumulation.erase();
    } else {
      if (result.getElementType() != accType.getElementType())
        done = arith::TruncFOp::create(b, loc, result, done);
      dot.getResult().replaceAllUsesWith(done);
    }
    dot.erase();
  }
};

} // namespace

} // namespace pk::gpu
