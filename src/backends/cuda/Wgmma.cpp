//===- Wgmma.cpp - pkgpu.wgmma as wgmma.mma_async instructions ------------===//
//
// A pkgpu.wgmma over an m x n x k tile becomes, in every warpgroup, one
// wgmma.mma_async.m64nNkK per 64-row slice the warpgroup owns and per K
// step, between a wgmma.fence and a commit_group. The operands' matrix
// descriptors are computed once from the tiles' shared memory addresses
// and advanced by constants (and by the warpgroup's row offset for A).
// The accumulator's registers are the op's vector in the wgmma layout
// (Layout::wgmmaAccumulator), regrouped into the struct of one row
// slice's registers that the NVVM op takes.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Wgmma.h"

#include "backends/cuda/Async.h"
#include "backends/cuda/ir/PkGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::gpu {

using namespace mlir;

uint64_t encodeDescriptorField(uint64_t bytes) { return (bytes & 0x3FFFF) >> 4; }

uint64_t descriptorSwizzleMode(Swizzle s) {
  switch (s) {
  case Swizzle::None:
    return 0;
  case Swizzle::B128:
    return 1;
  case Swizzle::B64:
    return 2;
  case Swizzle::B32:
    return 3;
  }
  return 0;
}

uint64_t WgmmaOperandTile::leadingByteOffset() const {
  if (!mnMajor)
    return swizzle == Swizzle::None ? stripBytes() : 16; // encodes as 1
  return swizzle == Swizzle::None ? 8 * 16 : stripBytes();
}

uint64_t WgmmaOperandTile::strideByteOffset() const {
  if (!mnMajor)
    return 8 * span();
  return swizzle == Swizzle::None ? stripBytes() : 8 * span();
}

uint64_t WgmmaOperandTile::descriptorBits() const {
  return (encodeDescriptorField(leadingByteOffset()) << 16) |
         (encodeDescriptorField(strideByteOffset()) << 32) | (descriptorSwizzleMode(swizzle) << 62);
}

uint64_t WgmmaOperandTile::instructionOffset(int64_t mnStart, int64_t kStart) const {
  // Along a strip's width: the element's byte column; strips follow one
  // another.
  auto alongWidth = [&](int64_t element) {
    uint64_t byte = static_cast<uint64_t>(element) * elementBytes;
    return byte / span() * stripBytes() + byte % span();
  };
  if (!mnMajor)
    return static_cast<uint64_t>(mnStart) * span() + alongWidth(kStart);
  return static_cast<uint64_t>(kStart) * span() + alongWidth(mnStart);
}

//===----------------------------------------------------------------------===//
// The op's verifier
//===----------------------------------------------------------------------===//

namespace {

/// Bytes of a wgmma operand element type, or 0 if wgmma has none.
unsigned operandBytes(Type t) {
  if (t.isF16() || t.isBF16())
    return 2;
  if (t.isF32() || llvm::isa<FloatTF32Type>(t))
    return 4;
  if (llvm::isa<Float8E4M3FNType, Float8E5M2Type>(t))
    return 1;
  if (auto i = llvm::dyn_cast<IntegerType>(t))
    if (i.getWidth() == 8 && !i.isSignless())
      return 1;
  return 0;
}

bool isFp8(Type t) { return llvm::isa<Float8E4M3FNType, Float8E5M2Type>(t); }

NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF32() || llvm::isa<FloatTF32Type>(t))
    return NVVM::WGMMATypes::tf32;
  if (llvm::isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (llvm::isa<Float8E5M2Type>(t))
    return NVVM::WGMMATypes::e5m2;
  return llvm::cast<IntegerType>(t).isSigned() ? NVVM::WGMMATypes::s8 : NVVM::WGMMATypes::u8;
}

} // namespace

unsigned WgmmaOp::numWarps() {
  int64_t registers = getAccumulator().getType().getNumElements();
  return registers
             ? static_cast<unsigned>(getM() * paddedExtent(accumulatorColumns()) / (32 * registers))
             : 0;
}

LogicalResult WgmmaOp::verify() {
  Type a = getAType(), b = getBType();
  unsigned bytes = operandBytes(a);
  if (!bytes || operandBytes(b) != bytes || (a != b && !(isFp8(a) && isFp8(b))))
    return emitOpError(
               "takes f16, bf16, tf32, f8E4M3FN/f8E5M2 or si8/ui8 operands of one kind, got ")
           << a << " and " << b;
  Type acc = getAccumulator().getType().getElementType();
  bool integer = llvm::isa<IntegerType>(a);
  if (integer != acc.isInteger(32) || (!integer && !acc.isF32()))
    return emitOpError("accumulates ")
           << (integer ? "8-bit integers in i32" : "floats in f32") << ", not in " << acc;
  if (bytes != 2 && (getATransposed() || getBTransposed()))
    return emitOpError("transposes (MN-major) only 16-bit operands; ")
           << a << " operands must be K-major";
  for (int64_t swizzle : {getASwizzle(), getBSwizzle()})
    if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
      return emitOpError("swizzle must be 0, 32, 64 or 128 bytes, got ") << swizzle;
  auto aRegisters = llvm::dyn_cast<VectorType>(getA().getType());
  auto aPointer = llvm::dyn_cast<LLVM::LLVMPointerType>(getA().getType());
  if (!aRegisters && (!aPointer || aPointer.getAddressSpace() != 3))
    return emitOpError("reads A from shared memory (!llvm.ptr<3>) or from registers (a vector)");
  if (aRegisters && (aRegisters.getRank() != 1 || aRegisters.getElementType() != a || bytes != 2))
    return emitOpError("reads A from registers as a vector of its 16-bit elements (f16 or bf16), "
                       "got ")
           << aRegisters;
  if (aRegisters && getATransposed())
    return emitOpError("reads A from registers as they are: a_transposed applies to shared memory");
  if (!llvm::isa<LLVM::LLVMPointerType>(getB().getType()) ||
      llvm::cast<LLVM::LLVMPointerType>(getB().getType()).getAddressSpace() != 3)
    return emitOpError("reads B from shared memory (!llvm.ptr<3>)");
  int64_t m = getM(), n = getN(), k = getK();
  if (n < 8 || n > 256 || n % 8)
    return emitOpError("n must be a multiple of 8 from 8 to 256, got ") << n;
  // The registers hold the accumulator padded to a power of two of
  // columns (Layout's sizes): n = 192 has a 256-column layout.
  int64_t accN = accumulatorColumns(), column = getAccColumn();
  if (accN < 8 || accN > 256 || accN % 8 || column < 0 || column % 8 || column + n > accN)
    return emitOpError("computes columns [")
           << column << ", " << column + n << ") of an accumulator of " << accN
           << " columns; both ends must be multiples of 8 within it";
  int64_t paddedN = paddedExtent(accN);
  int64_t instructionK = wgmmaInstructionK(bytes);
  if (k <= 0 || k % instructionK)
    return emitOpError("k must be a positive multiple of ")
           << instructionK << " for " << a << ", got " << k;
  int64_t registers = getAccumulator().getType().getNumElements();
  if (registers <= 0 || (m * paddedN) % (32 * registers))
    return emitOpError("an ") << m << " x " << paddedN << " accumulator does not spread evenly as "
                              << registers << " registers per thread";
  unsigned warps = numWarps();
  if (warps % 4 || m % (64 * (warps / 4)))
    return emitOpError("an ") << m << " x " << n << " accumulator of " << registers
                              << " registers per thread means " << warps
                              << " warps, which must be whole warpgroups each owning 64-row slices";
  if (aRegisters && aRegisters.getNumElements() * 32 * warps != m * k)
    return emitOpError("an ") << m << " x " << k << " A operand spreads over " << warps
                              << " warps as " << m * k / (32 * warps)
                              << " registers per thread, not " << aRegisters.getNumElements();
  if (getResult().getType() != getAccumulator().getType())
    return emitOpError("result type must be the accumulator's");
  return success();
}

uint32_t tcgen05InstructionDescriptor(int64_t m, int64_t n, bool bf16, bool aMnMajor,
                                      bool bMnMajor) {
  uint32_t d = 0;
  d |= 1u << 4;                             // D: f32
  d |= (bf16 ? 1u : 0u) << 7;               // A: f16 / bf16
  d |= (bf16 ? 1u : 0u) << 10;              // B: f16 / bf16
  d |= (aMnMajor ? 1u : 0u) << 15;          // A transposed (MN-major)
  d |= (bMnMajor ? 1u : 0u) << 16;          // B transposed (MN-major)
  d |= static_cast<uint32_t>(n >> 3) << 17; // N / 8
  d |= static_cast<uint32_t>(m >> 4) << 24; // M / 16
  return d;
}

namespace async {

namespace {

Value i64Constant(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(v), 64);
}

} // namespace

Value matrixDescriptor(OpBuilder &b, Location loc, Value pointer, uint64_t bits) {
  Value address = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointer);
  Value masked = arith::AndIOp::create(b, loc, address, i64Constant(b, loc, 0x3FFFF));
  Value encoded = arith::ShRUIOp::create(b, loc, masked, i64Constant(b, loc, 4));
  return arith::OrIOp::create(b, loc, encoded, i64Constant(b, loc, bits));
}

Value advanceDescriptor(OpBuilder &b, Location loc, Value descriptor, uint64_t bytes) {
  if (!bytes)
    return descriptor;
  return arith::AddIOp::create(b, loc, descriptor, i64Constant(b, loc, bytes >> 4));
}

namespace {

/// Constraints of `count` outputs of kind `kind` ("f", "r") each tied to
/// the input at the same position: "=f,=f,...,0,1,...".
std::string tiedConstraints(size_t count, const char *kind) {
  std::string constraints;
  for (size_t i = 0; i < count; ++i)
    constraints += std::string(i ? ",=" : "=") + kind;
  for (size_t i = 0; i < count; ++i)
    constraints += "," + std::to_string(i);
  return constraints;
}

/// Inline assembly LLVM must keep in place and in order with the other
/// side effects (the fence, the wgmma ops, their commit and wait).
Value orderedAsm(OpBuilder &b, Location loc, Type result, ValueRange operands, StringRef text,
                 StringRef constraints) {
  return LLVM::InlineAsmOp::create(b, loc, result, operands, text, constraints,
                                   /*has_side_effects=*/true, /*is_align_stack=*/false,
                                   LLVM::tailcallkind::TailCallKind::None,
                                   /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
      .getRes();
}

/// `registers` (all f32 or all 32-bit integers) passed through an empty
/// inline asm that ties each to a result: LLVM cannot move a read of the
/// results above the asm or a write of them below it (what CUTLASS's
/// warpgroup_fence_operand does).
SmallVector<Value> tieRegisters(OpBuilder &b, Location loc, ArrayRef<Value> registers) {
  size_t count = registers.size();
  Type element = registers.front().getType();
  auto structType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(count, element));
  Value tied = orderedAsm(b, loc, structType, registers, "",
                          tiedConstraints(count, element.isF32() ? "f" : "r"));
  SmallVector<Value> results;
  for (size_t i = 0; i < count; ++i)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, tied, i));
  return results;
}

/// One wgmma.mma_async with A in registers, which the NVVM dialect has no
/// op for: inline PTX as CUTLASS writes it (SM90_64xNx16_F32BF16BF16_RS).
/// `fragments` are the thread's four 32-bit registers of A's 64 x 16
/// slice, each two 16-bit elements, low half first (PTX ISA, "Register
/// fragment wgmma A"); the accumulator's registers are tied in and out.
/// The simulator decodes this text (sim/Decode.cpp).
Value wgmmaRegisterA(OpBuilder &b, Location loc, LLVM::LLVMStructType sliceType, Value slice,
                     ArrayRef<Value> fragments, Value descB, int64_t n, StringRef type,
                     bool scaleD, bool bTransposed) {
  int64_t count = static_cast<int64_t>(sliceType.getBody().size());
  SmallVector<Value> operands;
  for (int64_t r = 0; r < count; ++r)
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, slice, r));
  llvm::append_range(operands, fragments);
  operands.push_back(descB);
  auto list = [](int64_t first, int64_t size) {
    std::string s = "{";
    for (int64_t i = 0; i < size; ++i)
      s += (i ? ", $" : "$") + std::to_string(first + i);
    return s + "}";
  };
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::to_string(scaleD ? 1 : 0) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." +
                     type.str() + "." + type.str() + " " + list(0, count) + ", " +
                     list(2 * count, 4) + ", $" + std::to_string(2 * count + 4) + ", p, 1, 1, " +
                     (bTransposed ? "1" : "0") + ";\n}";
  return orderedAsm(b, loc, sliceType, operands, text,
                    tiedConstraints(static_cast<size_t>(count), "f") + ",r,r,r,r,l");
}

struct WgmmaLowering : OpRewritePattern<WgmmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    unsigned bytes = operandBytes(op.getAType());
    int64_t m = op.getM(), n = op.getN(), k = op.getK();
    unsigned warpgroups = op.numWarps() / 4;
    int64_t rowTiles = m / (64 * warpgroups), kStep = wgmmaInstructionK(bytes);
    WgmmaOperandTile a{m, k, bytes, static_cast<Swizzle>(op.getASwizzle()), op.getATransposed()};
    WgmmaOperandTile b{n, k, bytes, static_cast<Swizzle>(op.getBSwizzle()), op.getBTransposed()};

    // A in registers: the thread's A fragments as 32-bit words; those of
    // row slice t and K step s are words [4 (t k / 16 + s), + 4)
    // (Layout::wgmmaOperandA's register order).
    Value aWords, descA;
    if (auto registers = llvm::dyn_cast<VectorType>(op.getA().getType())) {
      auto words = VectorType::get({registers.getNumElements() / 2}, rewriter.getI32Type());
      aWords = LLVM::BitcastOp::create(rewriter, loc, words, op.getA());
    } else {
      // A warpgroup's rows: slice t of warpgroup g starts at row
      // 64 (warpgroups t + g) (Layout::wgmmaAccumulator). The warpgroups
      // sharing the tile are consecutive: in a Mosaic GPU kernel each one
      // multiplies a tile of its own (warpgroups is 1, g 0).
      Value id = warpgroupId(rewriter, loc);
      if (warpgroups == 1)
        id = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
      else
        id = arith::RemUIOp::create(rewriter, loc, id,
                                    arith::ConstantIntOp::create(rewriter, loc, warpgroups, 32));
      Value g = arith::ExtUIOp::create(rewriter, loc, rewriter.getI64Type(), id);
      Value rowStep = i64Constant(rewriter, loc, a.instructionOffset(64, 0) >> 4);
      Value base = matrixDescriptor(rewriter, loc, op.getA(), a.descriptorBits());
      descA = arith::AddIOp::create(rewriter, loc, base,
                                    arith::MulIOp::create(rewriter, loc, g, rowStep));
    }
    Value descB = matrixDescriptor(rewriter, loc, op.getB(), b.descriptorBits());

    Type element = op.getAccumulator().getType().getElementType();
    // Each thread holds n / 2 of a row tile's accumulator registers, at
    // [t * stride, t * stride + n / 2) of the vector: an n that is not a
    // power of two is laid out as the next one (Layout::wgmmaAccumulator),
    // whose last registers wgmma leaves alone.
    int64_t perSlice = n / 2, stride = paddedExtent(op.accumulatorColumns()) / 2;
    int64_t first = op.getAccColumn() / 2; // column c is in registers from c / 2
    auto sliceType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(perSlice, element));
    NVVM::WGMMATypesAttr typeA = NVVM::WGMMATypesAttr::get(ctx, wgmmaType(op.getAType()));
    NVVM::WGMMATypesAttr typeB = NVVM::WGMMATypesAttr::get(ctx, wgmmaType(op.getBType()));
    NVVM::WGMMATypesAttr typeD = NVVM::WGMMATypesAttr::get(
        ctx, element.isF32() ? NVVM::WGMMATypes::f32 : NVVM::WGMMATypes::s32);
    auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
    auto layoutA =
        NVVM::MMALayoutAttr::get(ctx, a.mnMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row);
    auto layoutB =
        NVVM::MMALayoutAttr::get(ctx, b.mnMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col);
    auto shape = NVVM::MMAShapeAttr::get(ctx, 64, static_cast<int>(n), static_cast<int>(kStep));

    // The accumulator's registers (and A's, in registers) are tied in
    // place before the fence: LLVM copies a tied asm input that lives on
    // into a register of its own right before the asm, and a register
    // written between the fence and a wgmma makes ptxas add a warpgroup
    // arrive and serialize every wgmma of the kernel (C7520).
    // The padding registers are read here too, before the fence, and
    // pass through to the result.
    int64_t registers = op.getAccumulator().getType().getNumElements();
    SmallVector<Value> results, accumulator, aFragments;
    for (int64_t r = 0; r < registers; ++r)
      results.push_back(vector::ExtractOp::create(rewriter, loc, op.getAccumulator(), r));
    for (int64_t t = 0; t < rowTiles; ++t)
      for (int64_t r = 0; r < perSlice; ++r)
        accumulator.push_back(results[t * stride + first + r]);
    if (aWords) {
      int64_t words = llvm::cast<VectorType>(aWords.getType()).getNumElements();
      for (int64_t i = 0; i < words; ++i)
        aFragments.push_back(vector::ExtractOp::create(rewriter, loc, aWords, i));
      aFragments = tieRegisters(rewriter, loc, aFragments);
    }
    accumulator = tieRegisters(rewriter, loc, accumulator);
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    for (int64_t t = 0; t < rowTiles; ++t) {
      Value slice = LLVM::UndefOp::create(rewriter, loc, sliceType);
      for (int64_t r = 0; r < perSlice; ++r)
        slice = LLVM::InsertValueOp::create(rewriter, loc, slice, accumulator[t * perSlice + r], r);
      uint64_t rowOffset = a.instructionOffset(64 * warpgroups * t, 0);
      for (int64_t s = 0; s < k / kStep; ++s) {
        bool accumulate = s != 0 || op.getAccumulate();
        Value da = aWords ? Value()
                          : advanceDescriptor(rewriter, loc, descA,
                                              rowOffset + a.instructionOffset(0, s * kStep));
        Value db = advanceDescriptor(rewriter, loc, descB, b.instructionOffset(0, s * kStep));
        if (aWords) {
          ArrayRef<Value> fragments = ArrayRef<Value>(aFragments).slice(4 * (t * (k / kStep) + s), 4);
          slice = wgmmaRegisterA(rewriter, loc, sliceType, slice, fragments, db, n,
                                 op.getAType().isBF16() ? "bf16" : "f16", accumulate, b.mnMajor);
          continue;
        }
        auto scaleD = NVVM::WGMMAScaleOutAttr::get(
            ctx, accumulate ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero);
        slice = NVVM::WgmmaMmaAsyncOp::create(rewriter, loc, sliceType, slice, da, db, shape, typeA,
                                              typeB, typeD, scaleD, one, one, layoutA, layoutB,
                                              /*satfinite=*/nullptr);
      }
      for (int64_t r = 0; r < perSlice; ++r)
        results[t * stride + first + r] = LLVM::ExtractValueOp::create(rewriter, loc, slice, r);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, op.getAccumulator().getType(), results);
    return success();
  }
};

struct WgmmaWaitLowering : OpRewritePattern<WgmmaWaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaWaitOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(op.getPending()));
    // The registers pass through an empty asm tied to them, so that LLVM
    // reads them only after the wait.
    SmallVector<Value> results;
    for (Value v : op.getAccumulators()) {
      auto type = llvm::cast<VectorType>(v.getType());
      SmallVector<Value> registers;
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        registers.push_back(vector::ExtractOp::create(rewriter, loc, v, i));
      results.push_back(
          vector::FromElementsOp::create(rewriter, loc, type, tieRegisters(rewriter, loc, registers)));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateWgmmaToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<WgmmaLowering, WgmmaWaitLowering>(patterns.getContext());
}

} // namespace async
} // namespace pk::gpu
