//===- LowerTensorMemory.cpp - Blackwell's tensor memory and tcgen05 MMA --===//
//
// The thread-level code of a Blackwell kernel's tensor memory (sm_100a),
// as Mosaic GPU's tcgen05.py writes it. The kernel's TMEM is allocated
// once by warp 0 (pkgpu.tmem_alloc) and freed when it ends; a TMEM Ref is
// a base address (lane << 16 | column) and, like a shared buffer's Ref,
// offsets that views move. A tcgen05_mma is issued by the Pallas thread's
// first thread: one tcgen05.mma.cta_group::1.kind::f16 per 32 bytes of K,
// reading A and B through shared memory descriptors (those of wgmma, with
// the tcgen05 version bit) and accumulating into the TMEM columns of the
// accumulator; tcgen05.commit makes an mbarrier track them. Loads and
// stores move a (128, n) buffer one row per thread (tcgen05.ld/st
// .32x32b: warp w of the warpgroup reaches lanes 32w to 32w + 31), so the
// value's layout is Layout::tensorMemoryRows.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/LowerMosaicGpu.h"
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Wgmma.h"
#include "ir/MosaicGpuRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// The most columns one tcgen05.ld / tcgen05.st .32x32b moves (.x128).
constexpr int64_t kMaxColumnsPerAccess = 128;

Value isFirstWarp(Emitter &e) {
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ult, e.ctaThreadId(), e.index(32));
}

/// A tensor memory address (i32) as the pointer NVVM's tcgen05 ops take.
Value tmemPointer(Emitter &e, Value address) {
  return LLVM::IntToPtrOp::create(e.b, e.loc, LLVM::LLVMPointerType::get(e.b.getContext(), 6),
                                  address);
}

void fence(Emitter &e, bool beforeSync) {
  NVVM::Tcgen05FenceOp::create(e.b, e.loc,
                               beforeSync ? NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC
                                          : NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

/// A CTA-wide barrier that orders the tensor core's work on both sides.
void ctaBarrierOrderingTensorCore(Emitter &e) {
  fence(e, /*beforeSync=*/true);
  ::mlir::gpu::BarrierOp::create(e.b, e.loc);
  fence(e, /*beforeSync=*/false);
}

LogicalResult lowerTmemAlloc(Emitter &e, TmemAllocOp op) {
  Value slot =
      e.sharedPointer(e.index(static_cast<int64_t>(op.getSlot())), e.b.getI32Type(), e.index(0));
  Value columns = e.i32(static_cast<int64_t>(op.getColumns()));
  // tcgen05.alloc is .sync.aligned: the whole warp issues it.
  e.guarded(isFirstWarp(e), [&] {
    NVVM::Tcgen05AllocOp::create(e.b, e.loc, slot, columns);
    NVVM::Tcgen05RelinquishAllocPermitOp::create(e.b, e.loc);
  });
  ctaBarrierOrderingTensorCore(e);
  e.values.map(op.getAddress(), LLVM::LoadOp::create(e.b, e.loc, e.b.getI32Type(), slot));
  return success();
}

LogicalResult lowerTmemDealloc(Emitter &e, TmemDeallocOp op) {
  Value address = e.values.lookup(op.getAddress());
  ctaBarrierOrderingTensorCore(e);
  e.guarded(isFirstWarp(e), [&] {
    Value pointer = tmemPointer(e, address);
    NVVM::Tcgen05DeallocOp::create(e.b, e.loc, pointer,
                                   e.i32(static_cast<int64_t>(op.getColumns())));
  });
  return success();
}

LogicalResult recordTmemRef(Emitter &e, TmemRefOp op) {
  auto type = llvm::cast<pk::RefType>(op.getType());
  RefInfo ref;
  ref.tensorMemory = true;
  ref.tensorMemoryAddress = arith::AddIOp::create(e.b, e.loc, e.values.lookup(op.getAddress()),
                                                  e.i32(static_cast<int64_t>(op.getColumn())));
  ref.element = type.getElementType();
  ref.refShape.assign(type.getShape().begin(), type.getShape().end());
  ref.arrayShape = ref.refShape;
  ref.block = ref.refShape;
  for (size_t d = 0; d < ref.refShape.size(); ++d) {
    ref.sizes.push_back(e.index(ref.refShape[d]));
    ref.offsets.push_back(e.index(0));
    ref.refToArray.push_back(static_cast<unsigned>(d));
  }
  e.refs[op.getResult().getAsOpaquePointer()] = ref;
  return success();
}

/// The address of column 0 of the rows the executing warp reaches in a
/// (128, n) view of tensor memory, or null (after reporting) when the view
/// is not one.
Value warpRowsAddress(Emitter &e, Operation *op, const RefInfo &ref, const char *what) {
  if (ref.refShape.size() != 2 || ref.refShape[0] != 128 || ref.refToArray[0] != 0) {
    (void)e.fail(op, std::string(what) + " moves whole (128, n) views of tensor memory, one row "
                                         "per thread of the warpgroup");
    return Value();
  }
  // A view along the columns moves the column; lane 32 w is warp w's.
  Value column = i32Of(e, ref.offsets[1]);
  Value lane = arith::MulIOp::create(e.b, e.loc, i32Of(e, e.warpId()), e.i32(32 << 16));
  return arith::AddIOp::create(
      e.b, e.loc, arith::AddIOp::create(e.b, e.loc, ref.tensorMemoryAddress, column), lane);
}

/// Checks a (128, n) value moved one row per thread: n a power of two.
bool rowsFit(Emitter &e, Operation *op, int64_t n, const char *what) {
  if (n >= 1 && (n & (n - 1)) == 0 && n <= 512)
    return true;
  (void)e.fail(op, std::string(what) +
                       " moves a power-of-two number of columns at once (one "
                       "register per column and thread), got " +
                       std::to_string(n));
  return false;
}

/// What a TMEM load or store of a (128, n) view moves: the executing
/// warp's address, n, and the access shape; nullopt after reporting.
struct RowsAccess {
  Value address;
  int64_t n;
  NVVM::Tcgen05LdStShapeAttr shape;
};

std::optional<RowsAccess> rowsAccess(Emitter &e, Operation *op, Value refValue, const char *what) {
  const RefInfo &ref = refOf(e, refValue);
  Value address = warpRowsAddress(e, op, ref, what);
  int64_t n = ref.refShape.size() == 2 ? ref.refShape[1] : 0;
  if (!address || !rowsFit(e, op, n, what))
    return std::nullopt;
  return RowsAccess{
      address, n,
      NVVM::Tcgen05LdStShapeAttr::get(e.b.getContext(), NVVM::Tcgen05LdStShape::SHAPE_32X32B)};
}

LogicalResult lowerAsyncLoadTmem(Emitter &e, pk::AsyncLoadTmemOp op) {
  std::optional<RowsAccess> access = rowsAccess(e, op, op.getRef(), "plgpu.async_load_tmem");
  if (!access)
    return failure();
  auto [address, n, shape] = *access;
  SmallVector<Value> words;
  for (int64_t c = 0; c < n; c += kMaxColumnsPerAccess) {
    int64_t count = std::min(n - c, kMaxColumnsPerAccess);
    Value at = arith::AddIOp::create(e.b, e.loc, address, e.i32(c));
    Type result = count == 1 ? Type(e.b.getI32Type()) : VectorType::get({count}, e.b.getI32Type());
    Value loaded = NVVM::Tcgen05LdOp::create(e.b, e.loc, result, /*pack=*/nullptr, shape,
                                             tmemPointer(e, at), /*offset=*/Value());
    if (count == 1) {
      words.push_back(loaded);
      continue;
    }
    for (int64_t i = 0; i < count; ++i)
      words.push_back(vector::ExtractOp::create(e.b, e.loc, loaded, i));
  }
  // The registers are the thread's only once the loads are done.
  NVVM::Tcgen05WaitOp::create(e.b, e.loc, NVVM::Tcgen05WaitKind::LOAD);
  VectorType type = e.vectorType(op.getType());
  SmallVector<Value> elements;
  for (Value w : words)
    elements.push_back(LLVM::BitcastOp::create(e.b, e.loc, type.getElementType(), w));
  e.values.map(op.getResult(), e.fromElements(type, elements));
  return success();
}

LogicalResult lowerAsyncStoreTmem(Emitter &e, pk::AsyncStoreTmemOp op) {
  std::optional<RowsAccess> access = rowsAccess(e, op, op.getRef(), "plgpu.async_store_tmem");
  if (!access)
    return failure();
  auto [address, n, shape] = *access;
  Value value = e.values.lookup(op.getValue());
  for (int64_t c = 0; c < n; c += kMaxColumnsPerAccess) {
    int64_t count = std::min(n - c, kMaxColumnsPerAccess);
    SmallVector<Value> words;
    for (int64_t i = 0; i < count; ++i)
      words.push_back(
          LLVM::BitcastOp::create(e.b, e.loc, e.b.getI32Type(), e.extract(value, c + i)));
    Value stored = count == 1 ? words.front()
                              : e.fromElements(VectorType::get({count}, e.b.getI32Type()), words);
    Value at = arith::AddIOp::create(e.b, e.loc, address, e.i32(c));
    NVVM::Tcgen05StOp::create(e.b, e.loc, /*unpack=*/nullptr, shape, tmemPointer(e, at), stored,
                              /*offset=*/Value());
  }
  return success();
}

/// A tcgen05_mma operand in shared memory: a tile stored as strips with a
/// swizzle, starting on a strip and a group of 8 rows; nullopt (after
/// reporting) otherwise.
std::optional<WgmmaOperandTile> operandTile(Emitter &e, Operation *op, Value operand, bool kIsFirst,
                                            const char *name) {
  auto it = e.refs.find(operand.getAsOpaquePointer());
  const RefInfo *r = it == e.refs.end() ? nullptr : &it->second;
  if (!r || !r->shared || r->strips <= 0) {
    (void)e.fail(op, std::string("plgpu.tcgen05_mma reads its ") + name +
                         " operand from a swizzled plgpu.SMEM buffer of the kernel's scratch "
                         "(SwizzleTransform of 32, 64 or 128 bytes)" +
                         (r && r->tensorMemory ? "; an A operand in tensor memory is not "
                                                 "supported by the CUDA backend yet"
                                               : ""));
    return std::nullopt;
  }
  unsigned bytes = elementBytes(r->element);
  size_t rank = r->arrayShape.size();
  int64_t width = r->strips / bytes;
  if (!isMultipleOf(r->offsets[rank - 1], width) || !isMultipleOf(r->offsets[rank - 2], 8)) {
    (void)e.fail(op, "plgpu.tcgen05_mma reads a window of a shared buffer whose columns do not "
                     "start at a multiple of " +
                         std::to_string(width) +
                         " elements (one swizzled strip) or whose rows do not start at a "
                         "multiple of 8");
    return std::nullopt;
  }
  // Stored with its first dimension as rows (refToArray in order) or
  // transposed (plgpu.transpose_ref). A (M x K) with K first is
  // MN-major; B (K x N) with K first is MN-major too.
  bool rowsFirst = r->refToArray[0] < r->refToArray[1];
  bool mnMajor = kIsFirst ? rowsFirst : !rowsFirst;
  int64_t k = kIsFirst ? r->refShape[0] : r->refShape[1];
  int64_t mn = kIsFirst ? r->refShape[1] : r->refShape[0];
  return WgmmaOperandTile{mn, k, bytes, static_cast<Swizzle>(r->strips), mnMajor};
}

LogicalResult lowerTcgen05Mma(Emitter &e, pk::Tcgen05MmaOp op) {
  const RefInfo &acc = refOf(e, op.getAcc());
  if (!acc.tensorMemory || acc.refShape.size() != 2 || acc.refShape[0] != 128)
    return e.fail(op, "plgpu.tcgen05_mma accumulates into a (128, n) view of a plgpu.TMEM buffer");
  std::optional<WgmmaOperandTile> a = operandTile(e, op, op.getA(), /*kIsFirst=*/false, "A");
  if (!a)
    return failure();
  std::optional<WgmmaOperandTile> b = operandTile(e, op, op.getB(), /*kIsFirst=*/true, "B");
  if (!b)
    return failure();
  int64_t m = acc.refShape[0], n = acc.refShape[1], k = a->k;
  int64_t kStep = wgmmaInstructionK(a->elementBytes);
  if (k % kStep)
    return e.fail(op, "plgpu.tcgen05_mma needs K a multiple of " + std::to_string(kStep));
  bool bf16 = refOf(e, op.getA()).element.isBF16();
  uint32_t instruction = tcgen05InstructionDescriptor(m, n, bf16, a->mnMajor, b->mnMajor);
  SmallVector<Value> zeros(2, e.index(0));
  Value aPointer = pointerAt(e, refOf(e, op.getA()), zeros);
  Value bPointer = pointerAt(e, refOf(e, op.getB()), zeros);
  Value accAddress =
      arith::AddIOp::create(e.b, e.loc, acc.tensorMemoryAddress, i32Of(e, acc.offsets[1]));
  Value accumulate = op.getAccumulate()
                         ? e.values.lookup(op.getAccumulate())
                         : arith::ConstantIntOp::create(e.b, e.loc, e.b.getI1Type(), 1).getResult();
  Value barrier;
  if (op.getBarrier())
    barrier = barrierAt(e, op.getBarrier(), op.getBarrierIndices()).barrier;
  MLIRContext *ctx = e.b.getContext();
  e.guarded(isFirstThread(e), [&] {
    Value descA = async::matrixDescriptor(e.b, e.loc, aPointer,
                                          a->descriptorBits() | kTcgen05DescriptorVersion);
    Value descB = async::matrixDescriptor(e.b, e.loc, bPointer,
                                          b->descriptorBits() | kTcgen05DescriptorVersion);
    Value idesc = e.i32(static_cast<int64_t>(instruction));
    Value d = tmemPointer(e, accAddress);
    Value always = arith::ConstantIntOp::create(e.b, e.loc, e.b.getI1Type(), 1);
    for (int64_t s = 0; s < k / kStep; ++s) {
      Value da = async::advanceDescriptor(e.b, e.loc, descA, a->instructionOffset(0, s * kStep));
      Value db = async::advanceDescriptor(e.b, e.loc, descB, b->instructionOffset(0, s * kStep));
      NVVM::Tcgen05MMAOp::create(
          e.b, e.loc, NVVM::Tcgen05MMAKindAttr::get(ctx, NVVM::Tcgen05MMAKind::F16),
          NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1),
          NVVM::Tcgen05MMACollectorOpAttr::get(ctx, NVVM::Tcgen05MMACollectorOp::DISCARD),
          /*aShift=*/nullptr, d, da, db, idesc, s == 0 ? accumulate : always,
          /*scaleInputD=*/Value(), /*disableOutputLane=*/Value());
    }
    if (barrier)
      NVVM::Tcgen05CommitOp::create(e.b, e.loc, barrier, /*multicastMask=*/Value());
  });
  return success();
}

LogicalResult lowerCommitArrive(Emitter &e, pk::Tcgen05CommitArriveOp op) {
  Value barrier = barrierAt(e, op.getBarrier(), op.getIndices()).barrier;
  e.guarded(isFirstThread(e),
            [&] { NVVM::Tcgen05CommitOp::create(e.b, e.loc, barrier, /*multicastMask=*/Value()); });
  return success();
}

} // namespace

void tensorCoreFence(Emitter &e, Value barrier, bool beforeSync) {
  auto type = llvm::cast<pk::BarrierType>(barrier.getType());
  if (type.getOrdersTensorCore() && e.func->hasAttr(kTensorMemoryAttr))
    fence(e, beforeSync);
}

std::optional<LogicalResult> lowerTensorMemoryOp(Emitter &e, Operation *op) {
  if (auto alloc = llvm::dyn_cast<TmemAllocOp>(op))
    return lowerTmemAlloc(e, alloc);
  if (auto dealloc = llvm::dyn_cast<TmemDeallocOp>(op))
    return lowerTmemDealloc(e, dealloc);
  if (auto ref = llvm::dyn_cast<TmemRefOp>(op))
    return recordTmemRef(e, ref);
  if (auto mma = llvm::dyn_cast<pk::Tcgen05MmaOp>(op))
    return lowerTcgen05Mma(e, mma);
  if (auto commit = llvm::dyn_cast<pk::Tcgen05CommitArriveOp>(op))
    return lowerCommitArrive(e, commit);
  if (auto load = llvm::dyn_cast<pk::AsyncLoadTmemOp>(op))
    return lowerAsyncLoadTmem(e, load);
  if (auto store = llvm::dyn_cast<pk::AsyncStoreTmemOp>(op))
    return lowerAsyncStoreTmem(e, store);
  if (llvm::isa<pk::WaitLoadTmemOp, pk::CommitTmemOp>(op)) {
    // The thread's loads (stores) are done, then the warpgroup syncs, the
    // fences ordering them with tcgen05 work other threads issue after
    // (an MMA overwriting what was read, or reading what was stored).
    NVVM::Tcgen05WaitOp::create(e.b, e.loc,
                                llvm::isa<pk::WaitLoadTmemOp>(op) ? NVVM::Tcgen05WaitKind::LOAD
                                                                  : NVVM::Tcgen05WaitKind::STORE);
    fence(e, /*beforeSync=*/true);
    e.barrier();
    fence(e, /*beforeSync=*/false);
    return success();
  }
  return std::nullopt;
}

} // namespace pk::gpu
