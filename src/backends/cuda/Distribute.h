//===- Distribute.h - Thread-level code for block values --------*- C++ -*-===//
//
// The pk-gpu-distribute stage rewrites each kernel from block values
// (tensors with #pkgpu.layout encodings) to what one thread computes: a
// tensor becomes the vector of the elements its layout gives the running
// thread (element k is register k). The Emitter holds what every lowering
// needs: thread indices, the coordinates a layout assigns to a register,
// shared memory, barriers and the Refs' memory. The lowerings of each
// family of ops live in Lower*.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_DISTRIBUTE_H
#define PK_BACKENDS_CUDA_DISTRIBUTE_H

#include "backends/cuda/Layout.h"
#include "backends/cuda/Storage.h"
#include "backends/cuda/ir/PkGpuDialect.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <map>
#include <set>

namespace pk::gpu {

/// A kernel Ref and the memory behind it.
struct RefInfo {
  bool shared = false;      ///< a scratch buffer in shared memory
  mlir::Value base;         ///< global: the array's !llvm.ptr<1>
  int64_t sharedOffset = 0; ///< shared: byte offset in dynamic shared memory
  mlir::Type element;       ///< storage element type (signed/unsigned, i1 for bool)
  llvm::SmallVector<int64_t> refShape;
  /// Per array dimension: size, block offset (index values) and strides.
  llvm::SmallVector<mlir::Value> sizes, offsets, strides;
  llvm::SmallVector<int64_t> block;
  /// The array dimension of each Ref dimension (squeezed ones have none).
  llvm::SmallVector<unsigned> refToArray;
  /// Identifies the memory: Refs of one class may overlap.
  unsigned memoryClass = 0;
  /// Shared: -1 for row-major; else each 2-D tile (the last two array
  /// dimensions) is stored as wgmma operand strips with this swizzle
  /// (bytes), tiles one after another (pkgpu.shared_ref's `strips`).
  int64_t strips = -1;
  /// Shared: the buffer's shape (per array dimension).
  llvm::SmallVector<int64_t> arrayShape;
  /// A plgpu.TMEM buffer (pkgpu.tmem_ref): its tensor memory address (i32,
  /// lane << 16 | column); offsets move it (rows: lanes, columns).
  bool tensorMemory = false;
  mlir::Value tensorMemoryAddress;
};

/// An array of mbarriers (pkgpu.barrier_alloc).
struct BarrierInfo {
  int64_t offset = 0;       ///< byte offset of the first mbarrier
  int64_t parityOffset = 0; ///< byte offset of the warps' parity words
  llvm::SmallVector<int64_t> shape;
  int64_t ctaWarps = 0;
};

/// An array of semaphores: 32-bit counters in the CTA's shared memory
/// (pkgpu.semaphore_alloc) or in a global buffer (pkgpu.semaphore_view).
struct SemaphoreInfo {
  int64_t sharedOffset = -1; ///< byte offset in shared memory, or -1
  void *buffer = nullptr;    ///< the global buffer's Ref (as in refs)
  int64_t wordOffset = 0;    ///< the first counter's word in the buffer
  llvm::SmallVector<int64_t> shape;
};

class Emitter {
public:
  Emitter(mlir::gpu::GPUFuncOp func, mlir::Block &body);

  mlir::OpBuilder b;
  mlir::Location loc;
  mlir::gpu::GPUFuncOp func;
  unsigned numWarps;
  /// The values of the kernel being translated: old -> new.
  mlir::IRMapping values;
  std::map<void *, RefInfo> refs; ///< keyed by the old Ref value's impl
  std::map<void *, BarrierInfo> barriers; ///< likewise, for barrier values
  std::map<void *, SemaphoreInfo> semaphores; ///< likewise, for semaphore values
  mlir::LogicalResult status = mlir::success();

  // Constants and thread indices (index type).
  mlir::Value index(int64_t v);
  mlir::Value i32(int64_t v);
  mlir::Value constant(mlir::Type type, double value);
  /// a + c and a * c of index values, folded where an operand is a
  /// constant (0, 1, or both): addresses are sums of products with many
  /// zero offsets and unit strides, and ops not made need no folding.
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, mlir::Value c);
  /// The thread's index among those that hold block values: the CTA, or
  /// in a Mosaic GPU kernel with several Pallas threads, its warpgroup.
  mlir::Value threadId() const { return tid; }
  /// The thread's index in the CTA.
  mlir::Value ctaThreadId() const { return ctaTid; }
  /// The running warpgroup (index), in kernels with several; else null.
  mlir::Value warpgroup() const { return group; }
  /// Pallas threads per CTA of a Mosaic GPU kernel (0: a pallas_call).
  unsigned warpgroups = 0;
  /// In the body of a pk.warp_map: each warp of the Pallas thread runs it
  /// on its own, so what a Pallas thread does once (isFirstThread) each
  /// warp does once, and barrier() synchronizes the warp.
  bool warpLevel = false;
  mlir::Value laneId() const { return lane; }
  mlir::Value warpId() const { return warp; }

  // Layouts.
  /// The coordinate along `dim` of register k (index).
  mlir::Value coordinate(const Layout &layout, int64_t k, unsigned dim);
  /// All coordinates of register k.
  llvm::SmallVector<mlir::Value> coordinates(const Layout &layout, int64_t k);
  /// True in one thread of each group holding the same elements (i1).
  mlir::Value isOwner(const Layout &layout);
  /// Whether register k lies inside `logical` (not in the padding); null
  /// when it always does.
  mlir::Value inShape(const Layout &layout, llvm::ArrayRef<int64_t> logical, int64_t k);
  /// Row-major linear index of a coordinate over `shape`.
  mlir::Value linearIndex(llvm::ArrayRef<mlir::Value> coordinate, llvm::ArrayRef<int64_t> shape);

  // Vectors: a thread's part of a block value.
  mlir::VectorType vectorType(mlir::Type tensorType);
  mlir::Value extract(mlir::Value vector, int64_t k);
  mlir::Value fromElements(mlir::VectorType type, llvm::ArrayRef<mlir::Value> elements);
  mlir::Value splat(mlir::VectorType type, mlir::Value scalar);

  /// The value `v` (an integer or float of up to 64 bits) of the lane
  /// whose id is this lane's xor `laneMask` (a warp shuffle).
  mlir::Value shuffleXor(mlir::Value v, unsigned laneMask);

  // Logic on i1 values that may be null (= true).
  mlir::Value andOf(mlir::Value a, mlir::Value c);
  /// Whether `value < limit` (unsigned), as an i1; null when the
  /// arithmetic defining both already proves it (knownBelow).
  mlir::Value below(mlir::Value value, mlir::Value limit);

  // Memory.
  mlir::Value sharedPointer(mlir::Value byteOffset, mlir::Type element, mlir::Value elementIndex);
  mlir::Value globalPointer(mlir::Value base, mlir::Type element, mlir::Value elementIndex);
  /// The address of the element of `ref`'s memory at `arrayCoordinate`
  /// (index values, one per array dimension), whatever its layout.
  mlir::Value refPointer(const RefInfo &ref, llvm::ArrayRef<mlir::Value> arrayCoordinate);
  /// A load of `storage` memory converted to the signless value type
  /// (i8 -> i1 for bools).
  mlir::Value loadValue(mlir::Value pointer, mlir::Type storage, mlir::Type value);
  void storeValue(mlir::Value v, mlir::Value pointer, mlir::Type storage);
  /// `then` inside `if (condition)` (no if when null).
  void guarded(mlir::Value condition, llvm::function_ref<void()> then);
  /// The value of `then()` when `condition` holds, else `otherwise`.
  mlir::Value guardedValue(mlir::Value condition, mlir::Type type,
                           llvm::function_ref<mlir::Value()> then, mlir::Value otherwise);
  /// What uninitialized memory reads as in Pallas interpret mode: NaN,
  /// the smallest signed integer, 0 for unsigned, False.
  mlir::Value paddingValue(mlir::Type storage, mlir::Type value);

  /// Shared memory for a temporary: the CTA synchronizes first (the last
  /// user may still be reading), then gets the byte offset of a region of
  /// `bytes`.
  int64_t beginSharedTemporary(int64_t bytes);
  /// A temporary through which threads exchange block values
  /// (writeShared, then readShared): `elements` of `element`, and with
  /// `ownSlots`, past them one slot per thread, where a thread's padding
  /// registers go (see writeShared).
  struct Exchange {
    int64_t offset;   ///< byte offset of the region
    int64_t elements; ///< where the threads' own slots begin
    bool ownSlots;
  };
  Exchange beginSharedExchange(int64_t elements, mlir::Type element, bool ownSlots);
  /// Synchronizes the threads that share block values: the CTA, or the
  /// running warpgroup (a named barrier) when there are several.
  void barrier();
  int64_t sharedMemoryBytes() const;
  /// Bytes of the kernel's scratch buffers (temporaries come after them).
  int64_t scratchSize() const { return scratchBytes; }

  mlir::LogicalResult fail(mlir::Operation *op, const llvm::Twine &message);
  /// Memory classes accessed more than once: stores to them are fenced by
  /// barriers, since other threads may read or write the same elements.
  std::set<unsigned> sharedAccessClasses;
  /// The memory class of each kernel parameter (aliases share one).
  std::map<unsigned, unsigned> paramClass;
  /// Removes the prologue marker; call once the body is translated.
  void finish();
  /// The value `key` names, made once by `make` in the kernel's prologue
  /// (every thread runs it, before any branch): loop-invariant indices
  /// that many ops ask for.
  mlir::Value cached(const std::string &key, llvm::function_ref<mlir::Value(mlir::OpBuilder &)> make);

private:
  mlir::Value threadPart(const Layout &layout, unsigned dim);

  mlir::OpBuilder prologue; ///< inserts at the kernel's start
  mlir::Operation *prologueEnd = nullptr;
  mlir::Value tid, lane, warp, ctaTid, group;
  /// Several warpgroups: each one's temporaries start temporaryShift
  /// bytes later (group x temporaryStride, a constant set by finish()).
  mlir::Value temporaryStride, temporaryShift;
  std::map<std::string, mlir::Value> cache;
  int64_t scratchBytes = 0, temporaryBytes = 0;
};

/// The mma.sync layouts of a dot that can use tensor cores, or nullopt.
std::optional<Layout::Mma> mmaLayouts(pk::DotOp dot, unsigned numWarps);


// The lowerings; each emits at e.b's insertion point and maps the op's
// results in e.values.
mlir::LogicalResult lowerElementwise(Emitter &e, mlir::Operation *op);
mlir::LogicalResult lowerConstant(Emitter &e, mlir::arith::ConstantOp op);
mlir::LogicalResult lowerIota(Emitter &e, pk::IotaOp op);
mlir::LogicalResult lowerBroadcast(Emitter &e, pk::BroadcastInDimOp op);
mlir::LogicalResult lowerTranspose(Emitter &e, pk::TransposeOp op);
mlir::LogicalResult lowerReshape(Emitter &e, pk::ReshapeOp op);
mlir::LogicalResult lowerConvertLayout(Emitter &e, ConvertLayoutOp op);
mlir::LogicalResult lowerSlice(Emitter &e, pk::SliceOp op);
mlir::LogicalResult lowerConcatenate(Emitter &e, pk::ConcatenateOp op);
mlir::LogicalResult lowerButterfly(Emitter &e, pk::ButterflyOp op);
mlir::LogicalResult lowerReduce(Emitter &e, pk::ReduceOp op);
mlir::LogicalResult lowerArgReduce(Emitter &e, pk::ArgReduceOp op);
mlir::LogicalResult lowerDot(Emitter &e, pk::DotOp op);
mlir::LogicalResult recordGlobalRef(Emitter &e, GlobalRefOp op);
mlir::LogicalResult recordSharedRef(Emitter &e, SharedRefOp op);
/// The memory class of a shared buffer: its offset, or its union's (the
/// Refs of a plgpu.RefUnion share memory).
inline unsigned sharedMemoryClass(SharedRefOp op) {
  return 1'000'000u + static_cast<unsigned>(op.getUnionBase().value_or(op.getOffset()));
}
mlir::LogicalResult lowerLoad(Emitter &e, pk::LoadOp op);
mlir::LogicalResult lowerStore(Emitter &e, pk::StoreOp op);
mlir::LogicalResult lowerAsyncCopy(Emitter &e, AsyncCopyOp op);
mlir::LogicalResult lowerTmaCopy(Emitter &e, TmaCopyOp op);
mlir::LogicalResult lowerGather(Emitter &e, pk::GatherOp op);
mlir::LogicalResult lowerScatter(Emitter &e, pk::ScatterOp op);
mlir::LogicalResult lowerAtomicRmw(Emitter &e, pk::AtomicRmwOp op);
mlir::LogicalResult lowerAtomicCas(Emitter &e, pk::AtomicCasOp op);
mlir::LogicalResult lowerDebugPrint(Emitter &e, pk::DebugPrintOp op);
/// Initializes the barriers and records them (LowerMosaicGpu.cpp).
mlir::LogicalResult recordBarrierAlloc(Emitter &e, BarrierAllocOp op);
/// The Mosaic GPU ops that take no block values: Ref views, barriers,
/// async copies and their groups, fences, hints. None for other ops.
std::optional<mlir::LogicalResult> lowerMosaicGpuOp(Emitter &e, mlir::Operation *op);

/// Element index in shared memory for a coordinate, or null to skip it.
using IndexFn = llvm::function_ref<mlir::Value(llvm::ArrayRef<mlir::Value>)>;
/// Whether a value of `layout` holding `shape` has padding registers
/// (the layout's power-of-two shape exceeds the value's).
bool hasPadding(const Layout &layout, llvm::ArrayRef<int64_t> shape);
/// Whether `v` is a constant whose elements are all one value (a
/// concatenation of a value and such constants, jnp.pad's padding after an
/// axis, keeps the value's layout and is filled in place).
bool isSplatConstant(mlir::Value v);
/// Each owner thread writes its elements inside `shape` (the value's
/// logical shape) at `index(coordinate)` of `exchange`, which has its own
/// slots if the layout has padding.
void writeShared(Emitter &e, mlir::Value vector, const Layout &layout,
                 llvm::ArrayRef<int64_t> shape, IndexFn index, Emitter::Exchange exchange,
                 mlir::Type element);
/// Each thread reads its elements inside `shape` from `index(coordinate)`;
/// padding registers are zero.
mlir::Value readShared(Emitter &e, mlir::VectorType type, const Layout &layout,
                       llvm::ArrayRef<int64_t> shape, IndexFn index, int64_t offset);
/// A block value moved to another layout through shared memory, its
/// elements addressed row-major over `shape` on both sides.
mlir::Value relayout(Emitter &e, mlir::Value vector, const Layout &from, const Layout &to,
                     llvm::ArrayRef<int64_t> shape, mlir::Type element);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_DISTRIBUTE_H
