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
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/MeshTma.h"
#include "backends/cuda/Passes.h"
#include "backends/cuda/Wgmma.h"

#include "ir/PkDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
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

/// A dot this pass rewrites, with where its operands go.
struct WgmmaDot {
  pk::DotOp dot;
  /// `acc + dot` that the wgmma performs in place, if any. Its `acc` is
  /// read when the dot is rewritten: an earlier rewrite may replace it.
  arith::AddFOp accumulation;
  pk::RefType aType, bType;
  int64_t aSwizzle = 0, bSwizzle = 0;
  int64_t aBytes = 0, bBytes = 0;
};

pk::RefType sharedBuffer(RankedTensorType value) {
  return pk::RefType::get(value.getShape(), value.getElementType(),
                          pk::MemorySpaceAttr::get(value.getContext(), pk::MemorySpace::GPUShared));
}

/// The dot as wgmma runs it, or nullopt when wgmma cannot: 16-bit float
/// operands of one type, a float result, whole warpgroups over M, N a
/// power of two wgmma has, K whole instructions, rows of at least one
/// 32-byte swizzle span in both stored operands.
std::optional<WgmmaDot> asWgmma(pk::DotOp dot, unsigned numWarps, DominanceInfo &dominance) {
  auto lhs = llvm::cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(dot.getRhs().getType());
  auto result = llvm::cast<RankedTensorType>(dot.getType());
  Type element = lhs.getElementType();
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || !(element.isF16() || element.isBF16()) ||
      rhs.getElementType() != element || !llvm::isa<FloatType>(result.getElementType()) ||
      result.getElementType().isF64())
    return std::nullopt;
  int64_t m = result.getDimSize(0), n = result.getDimSize(1);
  int64_t k = lhs.getDimSize(dot.getTransposeLhs() ? 0 : 1);
  if (numWarps % 4 != 0 || m % (64 * (numWarps / 4)) != 0 || n < 8 || n > 256 || (n & (n - 1)) ||
      k % wgmmaInstructionK(2) != 0)
    return std::nullopt;
  WgmmaDot w;
  w.dot = dot;
  w.aType = sharedBuffer(lhs);
  w.bType = sharedBuffer(rhs);
  w.aSwizzle = wgmmaOperandSwizzle(w.aType);
  w.bSwizzle = wgmmaOperandSwizzle(w.bType);
  // The simulator models swizzled operands only, and strips of 16 bytes
  // would be as slow as mma.sync's fragments anyway.
  if (!w.aSwizzle || !w.bSwizzle)
    return std::nullopt;
  w.aBytes = lhs.getNumElements() * 2;
  w.bBytes = rhs.getNumElements() * 2;
  if (result.getElementType().isF32() && dot->hasOneUse())
    if (auto add = llvm::dyn_cast<arith::AddFOp>(*dot->getUsers().begin())) {
      Value acc = add.getLhs() == dot.getResult() ? add.getRhs() : add.getLhs();
      // The wgmma replaces the dot, so the accumulator must exist there.
      if (acc != dot.getResult() && dominance.properlyDominates(acc, dot))
        w.accumulation = add;
    }
  return w;
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
    int64_t region = 0;
    DominanceInfo dominance(func);
    func.walk([&](pk::DotOp dot) {
      std::optional<WgmmaDot> w = asWgmma(dot, static_cast<unsigned>(warps.getInt()), dominance);
      if (!w)
        return;
      int64_t bytes = llvm::alignTo(w->aBytes, kWgmmaOperandAlignment) + w->bBytes;
      if (base + bytes > kOperandBudget)
        return;
      region = std::max(region, bytes);
      dots.push_back(*w);
    });
    if (dots.empty())
      return;
    // Every dot waits for its wgmma before the next one's stores (which a
    // barrier precedes in a loop: Distribute fences a buffer stored more
    // than once), so all of them can use the same buffers.
    for (WgmmaDot &w : dots)
      rewrite(w, base);
    func->setAttr("pkgpu.scratch_bytes",
                  IntegerAttr::get(scratch.getType(), llvm::alignTo(base + region, 16)));
  }

  void rewrite(WgmmaDot &w, int64_t base) {
    pk::DotOp dot = w.dot;
    Location loc = dot.getLoc();
    OpBuilder b(dot);
    auto store = [&](Value value, pk::RefType type, int64_t offset, int64_t swizzle) -> Value {
      Value ref = SharedRefOp::create(b, loc, type, b.getI64IntegerAttr(offset),
                                      b.getI64IntegerAttr(swizzle));
      int64_t rank = type.getRank();
      pk::StoreOp::create(b, loc, value, ref, ValueRange{}, SmallVector<int64_t>(rank, 0),
                          type.getShape(), SmallVector<int64_t>(rank, 1), ArrayRef<int64_t>{},
                          /*mask=*/Value(), /*padded=*/false);
      return ref;
    };
    Value a = store(dot.getLhs(), w.aType, base, w.aSwizzle);
    Value bRef = store(dot.getRhs(), w.bType, base + llvm::alignTo(w.aBytes, kWgmmaOperandAlignment),
                       w.bSwizzle);
    pk::CommitSmemOp::create(b, loc);
    // An operand the dot transposes is read through a transposed view,
    // which wgmma takes as the other majorness.
    auto transposed = [&](Value ref, bool flip) -> Value {
      if (!flip)
        return ref;
      auto type = llvm::cast<pk::RefType>(ref.getType());
      auto view = pk::RefType::get({type.getShape()[1], type.getShape()[0]}, type.getElementType(),
                                   type.getMemorySpace());
      return pk::RefTransposeOp::create(b, loc, view, ref, b.getDenseI64ArrayAttr({1, 0}));
    };
    a = transposed(a, dot.getTransposeLhs());
    bRef = transposed(bRef, dot.getTransposeRhs());

    auto result = llvm::cast<RankedTensorType>(dot.getType());
    auto accType = RankedTensorType::get(result.getShape(), b.getF32Type());
    Value accumulator;
    if (w.accumulation)
      accumulator = w.accumulation.getLhs() == dot.getResult() ? w.accumulation.getRhs()
                                                               : w.accumulation.getLhs();
    else
      accumulator = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(accType, b.getFloatAttr(b.getF32Type(), 0.0)));
    Value product = WgmmaTileOp::create(b, loc, accType, accumulator, a, bRef);
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
