//===- AssignLayouts.cpp - A distributed layout for every block value -----===//
//
// Walks each kernel in order and gives every tensor a #pkgpu.layout
// encoding. Sources (loads, iota, constants) take the blocked layout of
// their shape; ops that only relabel elements (reductions, transposes,
// regrouping reshapes, broadcasts of a reduced value) derive their
// result's layout from the operand's, so that data stays in registers;
// element-wise ops follow their first operand whose layout was chosen
// for a reason. Where an op needs an operand in another layout, a
// pkgpu.convert_layout goes in front of it (constants are re-created
// instead, and so are values made only of iotas, splats and constants,
// such as a causal mask: rematerialize). Ops that move data through
// shared memory anyway (slices, concatenations, dots, irregular
// reshapes) leave their operands alone.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/HardwareLimits.h"
#include "backends/cuda/Passes.h"
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUASSIGNLAYOUTS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

} // namespace

std::optional<Layout::Mma> mmaLayouts(pk::DotOp dot, unsigned numWarps) {
  auto lhs = llvm::cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(dot.getRhs().getType());
  auto result = llvm::cast<RankedTensorType>(dot.getType());
  Type in = lhs.getElementType();
  if (in != rhs.getElementType() || !(in.isF16() || in.isBF16()) ||
      !llvm::isa<FloatType>(result.getElementType()))
    return std::nullopt;
  int64_t m = paddedExtent(result.getShape()[0]), n = paddedExtent(result.getShape()[1]);
  int64_t k = paddedExtent(lhs.getShape()[dot.getTransposeLhs() ? 0 : 1]);
  if (m < 16 || n < 8 || k < 16)
    return std::nullopt;
  return Layout::mma(m, n, k, numWarps);
}

namespace {

class LayoutAssigner {
public:
  LayoutAssigner(unsigned numWarps, unsigned contiguous)
      : numWarps(numWarps), contiguous(contiguous) {}

  LogicalResult assign(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block))
      if (failed(assign(&op)))
        return failure();
    return success();
  }

private:
  Layout blocked(Type type) {
    return Layout::blocked(llvm::cast<RankedTensorType>(type).getShape(), numWarps, contiguous);
  }

  static bool isTensor(Value v) { return llvm::isa<RankedTensorType>(v.getType()); }

  static void setLayout(Value v, const Layout &layout) {
    v.setType(withLayout(llvm::cast<RankedTensorType>(v.getType()), layout));
  }

  /// `v` in `layout`, converted in front of `user` if need be.
  Value convert(Value v, const Layout &layout, Operation *user, unsigned depth = 0) {
    std::optional<Layout> current = layoutOf(v.getType());
    if (current && *current == layout)
      return v;
    auto type = withLayout(llvm::cast<RankedTensorType>(v.getType()), layout);
    OpBuilder b(user);
    if (auto constant = v.getDefiningOp<arith::ConstantOp>())
      if (auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue()))
        return arith::ConstantOp::create(b, constant.getLoc(), type, dense.reshape(type));
    if (provisional.count(v))
      if (Value again = rematerialize(v, layout, user, depth))
        return again;
    return ConvertLayoutOp::create(b, user->getLoc(), type, v);
  }

  /// The ops rematerialize made, in order, with the value each repeats.
  SmallVector<std::pair<Operation *, Value>> rematerialized;

  /// `v`, a value computed from indices and constants only (a causal
  /// mask's `span_q[:, None] >= span_k[None, :]`), computed again in
  /// `layout` in front of `user` rather than moved through shared memory:
  /// iotas and element-wise ops are made anew in the layout, and
  /// broadcasts convert their small sources. Null where `v` is made
  /// otherwise, or too far back.
  Value rematerialize(Value v, const Layout &layout, Operation *user, unsigned depth) {
    Operation *def = v.getDefiningOp();
    if (!def || depth > 6 || def->getNumResults() != 1 || def->getNumRegions())
      return {};
    auto type = llvm::cast<RankedTensorType>(v.getType());
    auto broadcast = llvm::dyn_cast<pk::BroadcastInDimOp>(def);
    bool elementwise = llvm::isa<arith::ArithDialect, math::MathDialect>(def->getDialect()) &&
                       llvm::all_of(def->getOperands(), [&](Value operand) {
                         auto t = llvm::dyn_cast<RankedTensorType>(operand.getType());
                         return !t || t.getShape() == type.getShape();
                       });
    // A reshape that only regroups bits is made from its source in the
    // layout that regroups into `layout`.
    auto reshape = llvm::dyn_cast<pk::ReshapeOp>(def);
    std::optional<Layout> reshapeSource;
    if (reshape)
      if (auto from = llvm::dyn_cast<RankedTensorType>(reshape.getOperand().getType()))
        reshapeSource = layout.reshaped(type.getShape(), from.getShape());
    if (!llvm::isa<pk::IotaOp>(def) && !broadcast && !elementwise && !reshapeSource)
      return {};
    OpBuilder b(user);
    Operation *clone = b.clone(*def);
    clone->getResult(0).setType(withLayout(type, layout));
    rematerialized.push_back({clone, v});
    provisional.insert(clone->getResult(0));
    // What an earlier user converted is taken from before the conversion.
    auto unconverted = [](Value v) {
      auto c = v.getDefiningOp<ConvertLayoutOp>();
      return c ? c.getSource() : v;
    };
    if (broadcast) {
      if (auto source = llvm::dyn_cast<RankedTensorType>(broadcast.getOperand().getType()))
        clone->setOperand(0, convert(unconverted(broadcast.getOperand()),
                                     layout.broadcastSource(source.getShape(),
                                                            broadcast.getBroadcastDimensions()),
                                     clone, depth + 1));
    } else if (reshapeSource) {
      clone->setOperand(
          0, convert(unconverted(reshape.getOperand()), *reshapeSource, clone, depth + 1));
    } else if (elementwise) {
      for (OpOperand &operand : clone->getOpOperands())
        if (isTensor(operand.get()))
          operand.set(convert(operand.get(), layout, clone, depth + 1));
    }
    return clone->getResult(0);
  }

  /// Undoes the conversions and rematerializations assignment put in
  /// `block`, so that it can run again with other layouts for the block's
  /// arguments.
  void stripConversions(Block &block) {
    SmallVector<ConvertLayoutOp> conversions;
    block.walk([&](ConvertLayoutOp c) { conversions.push_back(c); });
    for (ConvertLayoutOp c : conversions) {
      c.getResult().replaceAllUsesWith(c.getOperand());
      c.erase();
    }
    // Latest first: a clone may repeat an earlier clone, whose users then
    // move on to what that one repeats.
    SmallVector<Operation *> undone;
    for (auto [clone, original] : llvm::reverse(rematerialized))
      if (block.getParentOp()->isAncestor(clone)) {
        clone->getResult(0).replaceAllUsesWith(original);
        undone.push_back(clone);
      }
    for (Operation *clone : undone) {
      provisional.erase(clone->getResult(0));
      clone->erase();
    }
    llvm::erase_if(rematerialized,
                   [&](auto &entry) { return llvm::is_contained(undone, entry.first); });
  }

  void convertOperand(Operation *op, unsigned index, const Layout &layout) {
    op->setOperand(index, convert(op->getOperand(index), layout, op));
  }

  /// Layout::tensorMemoryRows for a (128, n) value on one warpgroup, n a
  /// power of two (the lowering reports other shapes).
  std::optional<Layout> tensorMemoryRows(RankedTensorType type) const {
    if (numWarps != 4 || type.getRank() != 2 || type.getDimSize(0) != 128)
      return std::nullopt;
    int64_t n = type.getDimSize(1);
    if (n < 1 || n > 512 || (n & (n - 1)))
      return std::nullopt;
    return Layout::tensorMemoryRows(n);
  }

  /// Whether `type` can be a wgmma accumulator of this kernel's warps
  /// (wgmmaLayout): M x N with M a power of two of at least 64 (a
  /// Layout's row tiles; wgmma itself also takes 192), N a multiple of 8
  /// from 8 to 256, whole warpgroups.
  bool fitsWgmmaAccumulator(RankedTensorType type) const {
    if (type.getRank() != 2)
      return false;
    int64_t m = type.getDimSize(0), n = type.getDimSize(1);
    return m >= 64 && (m & (m - 1)) == 0 && n >= 8 && n <= 256 && n % 8 == 0 && numWarps % 4 == 0;
  }
  /// The wgmma accumulator layout of an M x N tile: N that is not a power
  /// of two (192) is laid out as the next one, as every Layout pads; the
  /// padding columns' registers are never written by wgmma nor stored.
  Layout wgmmaLayout(int64_t m, int64_t n) const {
    return Layout::wgmmaAccumulator(m, paddedExtent(n), numWarps);
  }

  /// The layout plgpu.Layout `kind` names for a value of `type`, where
  /// pkc places it: WGMMA, an accumulator tile; WGMMA_ROW and WGMMA_COL,
  /// a row or column vector of one, as the accumulator's reductions leave
  /// it (`acc.max(axis=1)` is WGMMA_ROW), so that a flash attention's
  /// running max and sum meet the reductions and broadcasts of the tile
  /// without moving. None for the others, and where the shape does not
  /// fit an accumulator.
  std::optional<Layout> wgmmaFamilyLayout(pk::GpuLayout kind, RankedTensorType type) const {
    auto tile = [&](int64_t m, int64_t n) -> std::optional<Layout> {
      auto accumulator = RankedTensorType::get({m, n}, type.getElementType());
      if (!fitsWgmmaAccumulator(accumulator))
        return std::nullopt;
      return wgmmaLayout(m, n);
    };
    if (kind == pk::GpuLayout::WGMMA && type.getRank() == 2)
      return tile(type.getDimSize(0), type.getDimSize(1));
    if (type.getRank() != 1)
      return std::nullopt;
    // Any accumulator width leaves the same rows (and any height the
    // same columns): the other dimension's bits are registers and
    // replicating lanes, which the reduction drops.
    if (kind == pk::GpuLayout::WGMMARow)
      if (std::optional<Layout> l = tile(type.getDimSize(0), 8))
        return l->reduced({1});
    if (kind == pk::GpuLayout::WGMMACol)
      if (std::optional<Layout> l = tile(64 * (numWarps / 4), type.getDimSize(0)))
        return l->reduced({0});
    return std::nullopt;
  }

  LogicalResult assign(Operation *op);
  std::optional<Layout> consumersLayout(Value v);
  std::optional<Layout> loadedWgmmaOperand(pk::LoadOp load);
  std::optional<Layout> registerOperandA(RankedTensorType a, RankedTensorType acc) const;
  LogicalResult assignElementwise(Operation *op);
  LogicalResult assignFor(scf::ForOp op);
  LogicalResult assignWhile(scf::WhileOp op);
  LogicalResult assignIf(scf::IfOp op);

  unsigned numWarps;
  /// Elements per register group along the last dimension in the default
  /// layout (contiguousElements).
  unsigned contiguous;
  /// Values whose layout is only a default: loop-carried values that
  /// start as constants, and what is computed from them and constants.
  llvm::DenseSet<Value> provisional;
};

/// Whether `ref` is (a view of) a buffer in the CTA's shared memory.
bool isSharedBuffer(Value ref) { return pk::viewedRef(ref).getDefiningOp<SharedRefOp>() != nullptr; }

/// A wgmma accumulator read from a scratch buffer (`acc_ref[...] += x @ y`
/// with the accumulator in VMEM/SMEM scratch), or an A operand read from
/// shared memory into registers, is loaded straight into the registers
/// wgmma reads: shared memory does not care which thread reads which
/// element, and the value would otherwise go through shared memory a
/// second time to change its layout.
std::optional<Layout> LayoutAssigner::loadedWgmmaOperand(pk::LoadOp load) {
  auto type = llvm::cast<RankedTensorType>(load.getType());
  if (!load->hasOneUse() || load.getMask() || type.getRank() != 2 || !isSharedBuffer(load.getRef()))
    return std::nullopt;
  OpOperand &use = *load->getUses().begin();
  auto wgmma = llvm::dyn_cast<WgmmaTileOp>(use.getOwner());
  if (!wgmma || use.getOperandNumber() > 1)
    return std::nullopt;
  if (use.getOperandNumber() == 1)
    return registerOperandA(type, wgmma.getType());
  // Here no wgmma says it must fit: also every warpgroup's share of rows.
  if (!fitsWgmmaAccumulator(type) || type.getDimSize(0) % (64 * (numWarps / 4)) != 0)
    return std::nullopt;
  return wgmmaLayout(type.getDimSize(0), type.getDimSize(1));
}

/// The registers wgmma reads an A operand of type `a` from, for an
/// accumulator of type `acc` (Layout::wgmmaOperandA), when A fits them:
/// M x K of f16 or bf16, M the accumulator's, K a power of two >= 16.
std::optional<Layout> LayoutAssigner::registerOperandA(RankedTensorType a,
                                                       RankedTensorType acc) const {
  Type element = a.getElementType();
  if (a.getRank() != 2 || !(element.isF16() || element.isBF16()) || !fitsWgmmaAccumulator(acc) ||
      acc.getDimSize(0) % (64 * (numWarps / 4)) != 0 || a.getDimSize(0) != acc.getDimSize(0))
    return std::nullopt;
  int64_t k = a.getDimSize(1);
  if (k < 16 || (k & (k - 1)))
    return std::nullopt;
  return Layout::wgmmaOperandA(a.getDimSize(0), k, numWarps);
}

/// The layout an element-wise user of `v` will compute in, where one of
/// its other operands already has a layout chosen for a reason (element-
/// wise ops follow such an operand). A broadcast made in that layout
/// feeds its user directly, and what moves to fit is its small source:
/// `s - m[:, None]` on a wgmma accumulator broadcasts the row maxima in
/// the accumulator's layout instead of converting a whole tile through
/// shared memory.
std::optional<Layout> LayoutAssigner::consumersLayout(Value v) {
  for (Operation *user : v.getUsers()) {
    if (!llvm::isa<arith::ArithDialect, math::MathDialect>(user->getDialect()) ||
        llvm::isa<arith::ConstantOp>(user))
      continue;
    for (Value other : user->getOperands())
      if (other != v && isTensor(other) && !other.getDefiningOp<arith::ConstantOp>() &&
          !provisional.count(other))
        if (std::optional<Layout> l = layoutOf(other.getType()))
          return l;
  }
  return std::nullopt;
}

LogicalResult LayoutAssigner::assign(Operation *op) {
  bool tensors = llvm::any_of(op->getOperands(), isTensor) || llvm::any_of(op->getResults(), isTensor);
  if (auto forOp = llvm::dyn_cast<scf::ForOp>(op))
    return assignFor(forOp);
  if (auto whileOp = llvm::dyn_cast<scf::WhileOp>(op))
    return assignWhile(whileOp);
  if (auto ifOp = llvm::dyn_cast<scf::IfOp>(op))
    return assignIf(ifOp);
  if (!tensors) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (failed(assign(block)))
          return failure();
    return success();
  }

  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    auto type = withLayout(llvm::cast<RankedTensorType>(constant.getType()), blocked(constant.getType()));
    auto dense = llvm::cast<DenseElementsAttr>(constant.getValue());
    // Constants of distinct elements become tables in global memory
    // (lowerConstant), which ptxas keeps in the cubin's data; past a MiB
    // that is a slow compile and a large artifact for what an argument
    // carries better.
    constexpr int64_t kMaxTableBytes = 1 << 20;
    int64_t bytes = dense.getNumElements() * elementBytes(dense.getElementType());
    if (!dense.isSplat() && bytes > kMaxTableBytes)
      return op->emitError() << "a constant array of " << dense.getNumElements() << " elements ("
                             << bytes
                             << " bytes; a NumPy array made at compile time) is more than the CUDA "
                                "backend builds into a kernel (at most "
                             << kMaxTableBytes
                             << " bytes); pass it to the export as an argument instead";
    constant.setValueAttr(dense.reshape(type));
    constant.getResult().setType(type);
    return success();
  }
  if (llvm::isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return assignElementwise(op);

  if (auto load = llvm::dyn_cast<pk::LoadOp>(op)) {
    if (!isTensor(load.getResult()))
      return success();
    Layout l = loadedWgmmaOperand(load).value_or(blocked(load.getType()));
    setLayout(load.getResult(), l);
    if (load.getMask())
      convertOperand(op, load.getMaskMutable()[0].getOperandNumber(), l);
    if (load.getOther() && isTensor(load.getOther()))
      convertOperand(op, load.getOtherMutable()[0].getOperandNumber(), l);
    return success();
  }
  if (auto store = llvm::dyn_cast<pk::StoreOp>(op)) {
    if (store.getMask() && isTensor(store.getValue()))
      convertOperand(op, store.getMaskMutable()[0].getOperandNumber(), *layoutOf(store.getValue().getType()));
    return success();
  }
  if (auto atomic = llvm::dyn_cast<pk::AtomicRmwOp>(op)) {
    // The old values come back where the new ones went.
    if (!isTensor(atomic.getValue()))
      return success();
    Layout l = *layoutOf(atomic.getValue().getType());
    setLayout(atomic.getResult(), l);
    if (atomic.getMask())
      convertOperand(op, atomic.getMaskMutable()[0].getOperandNumber(), l);
    return success();
  }
  if (auto gather = llvm::dyn_cast<pk::GatherOp>(op)) {
    Layout l = blocked(gather.getType());
    setLayout(gather.getResult(), l);
    for (OpOperand &index : gather.getIndicesMutable())
      convertOperand(op, index.getOperandNumber(), l);
    if (gather.getMask())
      convertOperand(op, gather.getMaskMutable()[0].getOperandNumber(), l);
    if (gather.getOther() && isTensor(gather.getOther()))
      convertOperand(op, gather.getOtherMutable()[0].getOperandNumber(), l);
    return success();
  }
  if (auto scatter = llvm::dyn_cast<pk::ScatterOp>(op)) {
    Layout l = *layoutOf(scatter.getValue().getType());
    for (OpOperand &index : scatter.getIndicesMutable())
      convertOperand(op, index.getOperandNumber(), l);
    if (scatter.getMask())
      convertOperand(op, scatter.getMaskMutable()[0].getOperandNumber(), l);
    return success();
  }
  if (auto iota = llvm::dyn_cast<pk::IotaOp>(op)) {
    // Indices are made in whatever layout meets them (rematerialize).
    setLayout(iota.getResult(), blocked(iota.getType()));
    provisional.insert(iota.getResult());
    return success();
  }
  if (auto broadcast = llvm::dyn_cast<pk::BroadcastInDimOp>(op)) {
    Layout l = consumersLayout(broadcast.getResult()).value_or(blocked(broadcast.getType()));
    setLayout(broadcast.getResult(), l);
    // A scalar splat, like an index's, is as cheap to make anew as a
    // constant.
    if (!isTensor(broadcast.getOperand()) || provisional.count(broadcast.getOperand()))
      provisional.insert(broadcast.getResult());
    if (auto source = llvm::dyn_cast<RankedTensorType>(broadcast.getOperand().getType()))
      convertOperand(op, 0, l.broadcastSource(source.getShape(), broadcast.getBroadcastDimensions()));
    return success();
  }
  if (auto reduce = llvm::dyn_cast<pk::ReduceOp>(op)) {
    if (isTensor(reduce.getResult()))
      setLayout(reduce.getResult(), layoutOf(reduce.getOperand().getType())->reduced(reduce.getAxes()));
    return success();
  }
  if (auto argReduce = llvm::dyn_cast<pk::ArgReduceOp>(op)) {
    if (isTensor(argReduce.getResult()))
      setLayout(argReduce.getResult(), layoutOf(argReduce.getOperand().getType())
                                           ->reduced({static_cast<int64_t>(argReduce.getAxis())}));
    return success();
  }
  if (auto butterfly = llvm::dyn_cast<pk::ButterflyOp>(op)) {
    // Pairs exchange in place: the result keeps the operand's layout.
    setLayout(butterfly.getResult(), *layoutOf(butterfly.getOperand().getType()));
    return success();
  }
  if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op)) {
    setLayout(transpose.getResult(),
              layoutOf(transpose.getOperand().getType())->transposed(transpose.getPermutation()));
    return success();
  }
  if (auto reshape = llvm::dyn_cast<pk::ReshapeOp>(op)) {
    auto to = llvm::dyn_cast<RankedTensorType>(reshape.getType());
    if (!to)
      return success(); // to a scalar: the one element
    auto from = llvm::dyn_cast<RankedTensorType>(reshape.getOperand().getType());
    std::optional<Layout> l;
    if (from)
      l = layoutOf(from)->reshaped(from.getShape(), to.getShape());
    setLayout(reshape.getResult(), l ? *l : blocked(to));
    if (provisional.count(reshape.getOperand()))
      provisional.insert(reshape.getResult());
    return success();
  }
  if (auto dot = llvm::dyn_cast<pk::DotOp>(op)) {
    // Tensor cores when the shapes and types allow: the operands move to
    // the mma fragment layouts and the result stays in the accumulator's.
    if (std::optional<Layout::Mma> mma = mmaLayouts(dot, numWarps)) {
      convertOperand(op, 0, dot.getTransposeLhs() ? mma->a.transposed({1, 0}) : mma->a);
      convertOperand(op, 1, dot.getTransposeRhs() ? mma->b.transposed({1, 0}) : mma->b);
      setLayout(dot.getResult(), mma->c);
      return success();
    }
    setLayout(dot.getResult(), blocked(dot.getType()));
    return success();
  }
  if (auto wgmma = llvm::dyn_cast<WgmmaTileOp>(op)) {
    // The accumulator lives in the registers wgmma writes.
    auto type = llvm::cast<RankedTensorType>(wgmma.getType());
    if (!fitsWgmmaAccumulator(type))
      return op->emitError() << "plgpu.wgmma needs an M x N accumulator with M a power of two "
                                "of at least 64 and N a multiple of 8 from 8 to 256 (the CUDA "
                                "backend does not lay out other shapes, such as M = 192, yet); "
                                "got "
                             << type;
    Layout l = wgmmaLayout(type.getDimSize(0), type.getDimSize(1));
    convertOperand(op, 0, l);
    // A in registers moves to wgmma's A fragments; for 16-bit A that is
    // the accumulator's own layout, so `p.astype(bf16)` of an earlier
    // wgmma's result feeds the next one where it is (flash attention's
    // P @ V).
    if (auto a = llvm::dyn_cast<RankedTensorType>(wgmma.getA().getType())) {
      std::optional<Layout> fragments = registerOperandA(a, type);
      if (!fragments)
        return op->emitError() << "the CUDA backend lowers plgpu.wgmma with A in registers for an "
                                  "M x K float16 or bfloat16 value (M the accumulator's rows, K a "
                                  "power of two from 16); got "
                               << pk::elementName(a.getElementType()) << " A of shape "
                               << shapeText(a.getShape()) << ", accumulating into "
                               << pk::elementName(type.getElementType()) << " of shape "
                               << shapeText(type.getShape());
      convertOperand(op, 1, *fragments);
    }
    setLayout(wgmma.getResult(), l);
    return success();
  }
  // Tensor memory moves (128, n) values one row per thread.
  if (auto load = llvm::dyn_cast<pk::AsyncLoadTmemOp>(op)) {
    auto type = llvm::cast<RankedTensorType>(load.getType());
    setLayout(load.getResult(), tensorMemoryRows(type).value_or(blocked(type)));
    return success();
  }
  if (auto store = llvm::dyn_cast<pk::AsyncStoreTmemOp>(op)) {
    if (std::optional<Layout> rows =
            tensorMemoryRows(llvm::cast<RankedTensorType>(store.getValue().getType())))
      convertOperand(op, 1, *rows);
    return success();
  }
  if (auto cast = llvm::dyn_cast<pk::LayoutCastOp>(op)) {
    // plgpu.layout_cast: the WGMMA layout where it applies (an accumulator
    // tile), else the operand's; the value moves there.
    auto type = llvm::dyn_cast<RankedTensorType>(cast.getType());
    if (!type)
      return success();
    std::optional<Layout> l = layoutOf(cast.getValue().getType());
    if (std::optional<Layout> wgmma = wgmmaFamilyLayout(cast.getLayout(), type))
      l = wgmma;
    if (!l)
      l = blocked(type);
    convertOperand(op, 0, *l);
    setLayout(cast.getResult(), *l);
    return success();
  }
  if (auto wait = llvm::dyn_cast<WgmmaWaitTileOp>(op)) {
    for (auto [operand, result] : llvm::zip(wait.getAccumulators(), wait.getResults()))
      setLayout(result, *layoutOf(operand.getType()));
    return success();
  }
  if (auto slice = llvm::dyn_cast<pk::SliceOp>(op)) {
    // A slice that picks whole registers (a 64 x 64 epilogue tile of a
    // wgmma accumulator) keeps them where they are.
    auto from = llvm::cast<RankedTensorType>(slice.getOperand().getType());
    auto to = llvm::cast<RankedTensorType>(slice.getType());
    if (llvm::all_of(slice.getStrides(), [](int64_t s) { return s == 1; }))
      if (std::optional<Layout> picked = layoutOf(from)->registerSlice(
              slice.getStartIndices(), to.getShape(), from.getShape())) {
        setLayout(slice.getResult(), *picked);
        return success();
      }
    setLayout(slice.getResult(), blocked(to));
    return success();
  }
  if (auto concat = llvm::dyn_cast<pk::ConcatenateOp>(op)) {
    // jnp.pad's padding after an axis (constants after an operand): where
    // the first operand's layout already spans the result's shape, the
    // result keeps it, and the lowering fills the constants in place.
    auto type = llvm::cast<RankedTensorType>(concat.getType());
    std::optional<Layout> first = layoutOf(concat.getOperands().front().getType());
    bool spans = first && llvm::all_of(llvm::seq<unsigned>(0, type.getRank()), [&](unsigned d) {
      return first->shape[d] >= type.getDimSize(d);
    });
    if (spans && llvm::all_of(concat.getOperands().drop_front(), isSplatConstant)) {
      setLayout(concat.getResult(), *first);
      return success();
    }
    setLayout(op->getResult(0), blocked(op->getResult(0).getType()));
    return success();
  }
  // Terminators: the op that owns the region converts what they yield.
  if (llvm::isa<ConvertLayoutOp, scf::YieldOp, scf::ConditionOp>(op))
    return success();
  return op->emitError() << "the CUDA backend does not support '" << op->getName()
                         << "' on block values yet";
}

LogicalResult LayoutAssigner::assignElementwise(Operation *op) {
  // Follow the first operand whose layout was chosen for a reason; values
  // that only come from constants (including loop-carried ones, which may
  // change layout yet) follow the others.
  std::optional<Layout> layout;
  for (Value v : op->getOperands())
    if (isTensor(v) && !v.getDefiningOp<arith::ConstantOp>() && !provisional.count(v))
      if ((layout = layoutOf(v.getType())))
        break;
  if (!layout)
    for (Value v : op->getResults())
      provisional.insert(v);
  if (!layout)
    for (Value v : op->getOperands())
      if (isTensor(v) && (layout = layoutOf(v.getType())))
        break;
  if (!layout)
    layout = blocked(op->getResult(0).getType());
  for (OpOperand &operand : op->getOpOperands())
    if (isTensor(operand.get()))
      convertOperand(op, operand.getOperandNumber(), *layout);
  for (Value result : op->getResults())
    if (isTensor(result))
      setLayout(result, *layout);
  return success();
}

LogicalResult LayoutAssigner::assignFor(scf::ForOp op) {
  for (auto [init, arg] : llvm::zip(op.getInitArgs(), op.getRegionIterArgs()))
    if (isTensor(init)) {
      arg.setType(init.getType());
      if (init.getDefiningOp<arith::ConstantOp>())
        provisional.insert(arg);
    }
  if (failed(assign(*op.getBody())))
    return failure();
  // A carried value that starts as a constant (an accumulator's zeros)
  // takes the layout the body yields it in, so that it does not go through
  // shared memory every iteration: the constant is made in that layout.
  Operation *yield = op.getBody()->getTerminator();
  bool changed = false;
  for (auto [i, init, arg] : llvm::enumerate(op.getInitArgs(), op.getRegionIterArgs())) {
    Value yielded = yield->getOperand(i);
    if (isTensor(arg) && init.getDefiningOp<arith::ConstantOp>() && yielded.getType() != arg.getType()) {
      arg.setType(yielded.getType());
      changed = true;
    }
  }
  if (changed) {
    // The carried values now have the layout the body computes them in,
    // a layout chosen for a reason: what meets them (`alpha[:, None] *
    // acc`) follows it. What was provisional because of them is decided
    // again.
    stripConversions(*op.getBody());
    for (auto [init, arg] : llvm::zip(op.getInitArgs(), op.getRegionIterArgs()))
      if (isTensor(arg) && init.getDefiningOp<arith::ConstantOp>())
        provisional.erase(arg);
    op.getBody()->walk([&](Operation *inner) {
      for (Value result : inner->getResults())
        provisional.erase(result);
    });
    if (failed(assign(*op.getBody())))
      return failure();
  }
  for (auto [i, arg, result] : llvm::enumerate(op.getRegionIterArgs(), op.getResults()))
    if (isTensor(arg)) {
      result.setType(arg.getType());
      convertOperand(op, op.getTiedLoopInit(arg)->getOperandNumber(), *layoutOf(arg.getType()));
      convertOperand(yield, i, *layoutOf(arg.getType()));
    }
  return success();
}

LogicalResult LayoutAssigner::assignWhile(scf::WhileOp op) {
  for (auto [init, arg] : llvm::zip(op.getInits(), op.getBeforeArguments()))
    if (isTensor(init))
      arg.setType(init.getType());
  if (failed(assign(op.getBefore().front())))
    return failure();
  scf::ConditionOp condition = op.getConditionOp();
  for (auto [forwarded, arg, result] :
       llvm::zip(condition.getArgs(), op.getAfterArguments(), op.getResults()))
    if (isTensor(forwarded)) {
      arg.setType(forwarded.getType());
      result.setType(forwarded.getType());
    }
  if (failed(assign(op.getAfter().front())))
    return failure();
  Operation *yield = op.getAfter().front().getTerminator();
  for (auto [i, arg] : llvm::enumerate(op.getBeforeArguments()))
    if (isTensor(arg))
      convertOperand(yield, i, *layoutOf(arg.getType()));
  return success();
}

LogicalResult LayoutAssigner::assignIf(scf::IfOp op) {
  if (failed(assign(op.getThenRegion().front())))
    return failure();
  if (!op.getElseRegion().empty() && failed(assign(op.getElseRegion().front())))
    return failure();
  Operation *thenYield = op.thenYield();
  for (auto [i, result] : llvm::enumerate(op.getResults())) {
    if (!isTensor(result))
      continue;
    Layout l = *layoutOf(thenYield->getOperand(i).getType());
    result.setType(thenYield->getOperand(i).getType());
    if (!op.getElseRegion().empty())
      convertOperand(op.elseYield(), i, l);
  }
  return success();
}

/// The 32-bit registers each thread needs for its part of `type`.
int64_t registersPerThread(RankedTensorType type, const Layout &layout) {
  int64_t bits = std::max<int64_t>(8, type.getElementType().getIntOrFloatBitWidth());
  return (layout.numRegisters() * bits + 31) / 32;
}

/// Where to report a problem with `op`'s result: its own location, or,
/// for ops the folder made without one (splat constants hoisted and merged
/// by canonicalization get an unknown location), the first user's, so the
/// error still points at the user's line.
Location reportLocation(Operation *op) {
  if (!llvm::isa<UnknownLoc>(op->getLoc()))
    return op->getLoc();
  for (Operation *user : op->getUsers())
    if (!llvm::isa<UnknownLoc>(user->getLoc()))
      return user->getLoc();
  for (Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp())
    if (!llvm::isa<UnknownLoc>(parent->getLoc()))
      return parent->getLoc();
  return op->getLoc();
}

/// Refuses a block value whose share of one thread is larger than a
/// thread's whole register file. Such a value can only live in local
/// memory, element by element, and the distributed code grows with it:
/// a 2^20-element block took minutes and gigabytes in the NVPTX back end
/// before failing or spilling everything. The samples and tests need at
/// most 128 registers per value.
LogicalResult checkRegisterDemand(::mlir::gpu::GPUFuncOp func, unsigned numWarps) {
  WalkResult result = func.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      std::optional<Layout> layout = layoutOf(v.getType());
      if (!layout)
        continue;
      auto type = llvm::cast<RankedTensorType>(v.getType());
      int64_t registers = registersPerThread(type, *layout);
      if (registers <= kMaxRegistersPerThread)
        continue;
      std::string shape;
      for (int64_t d : type.getShape())
        shape += std::to_string(d) + "x";
      std::string element;
      llvm::raw_string_ostream(element) << type.getElementType();
      bool mesh = func->hasAttr("pkgpu.warpgroups");
      bool generated = func->hasAttr("pkgpu.generated");
      if (generated)
        mlir::emitError(reportLocation(op))
            << "this array code outside a kernel computes a block of " << shape << element
            << " at once, which needs " << registers << " registers in each of the "
            << numWarps * kWarpSize << " threads that hold it, more than the "
            << kMaxRegistersPerThread << " a thread has: pkc runs array code around "
            << "pallas_call as generated kernels split along the axes it computes "
            << "element-wise, and this code reads across too many of them; do this work in a "
            << "kernel with blocks of your own";
      else
        mlir::emitError(reportLocation(op))
            << "this block value (" << shape << element << ") needs " << registers
            << " registers in each of the " << numWarps * kWarpSize << " threads that hold it ("
            << (mesh ? "a Pallas thread's " : "") << numWarps << " warps), more than the "
            << kMaxRegistersPerThread << " a thread has; "
            << (mesh ? "use smaller tiles, or split the work between Pallas threads (num_threads=)"
                     : "use smaller blocks (more grid steps), or more warps "
                       "(compiler_params=plgpu.CompilerParams(num_warps=...))");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// How many contiguous elements a thread holds per register group in
/// `func`'s default layout: 16 bytes of its narrowest block loads and
/// stores (8 for bf16, 16 for int8), so that each is one 16-byte access,
/// and at least 4. One count for the whole kernel: values of different
/// widths computed together keep one layout, with no conversions between.
/// Wider groups only where the largest block gives every thread of the
/// CTA a whole group: an i8[8, 32] block in 16-element groups would leave
/// 7 of every 8 threads holding copies, each doing 16 elements' work (a
/// scan over it compiled in 3.8 s to 255 registers and spills; 1.9 s with
/// groups of 4).
unsigned contiguousElements(::mlir::gpu::GPUFuncOp func, unsigned numWarps) {
  unsigned narrowest = 32;
  int64_t largest = 0;
  auto visit = [&](Type type) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.getElementType().isIntOrFloat())
      return;
    unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
    if (bits >= 8)
      narrowest = std::min(narrowest, bits);
    if (tensor.hasStaticShape())
      largest = std::max(largest, tensor.getNumElements());
  };
  func.walk([&](Operation *op) {
    if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
      visit(load.getType());
    else if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
      visit(store.getValue().getType());
  });
  unsigned contiguous = 128 / narrowest;
  int64_t threads = int64_t{32} * numWarps;
  while (contiguous > 4 && largest < int64_t{contiguous} * threads)
    contiguous /= 2;
  return contiguous;
}

struct AssignLayoutsPass : impl::PkGpuAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](::mlir::gpu::GPUFuncOp func) {
      unsigned numWarps = 4;
      if (auto n = func->getAttrOfType<IntegerAttr>("pkgpu.num_warps"))
        numWarps = static_cast<unsigned>(n.getInt());
      LayoutAssigner assigner(numWarps, contiguousElements(func, numWarps));
      if (failed(assigner.assign(func.getBody().front())) ||
          failed(checkRegisterDemand(func, numWarps)))
        signalPassFailure();
    });
  }
};

} // namespace

} // namespace pk::gpu
