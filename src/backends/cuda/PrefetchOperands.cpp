//===- PrefetchOperands.cpp - wgmma operands copied stages ahead ----------===//
//
// After pk-gpu-wgmma-dots, a K loop (`fori_loop` over K steps of
// `acc + x_ref[:, k] @ y_ref[k, :]`) loads each step's operand windows
// into registers, stores them into their wgmma buffers and multiplies:
// the tensor cores wait for every load. This pass gives each such
// operand a ring of `num_stages` buffers and copies the window of step
// j + D into its slot with cp.async while step j multiplies, as
// Triton's software pipeliner does:
//
//   before the loop:  barrier; copy steps 0 .. D-1 into slots 0 .. D-1
//                     (one group each)
//   step j:           wait until step j's group landed
//                     fence + barrier (pk.commit_smem): every warpgroup is
//                       done with the slots earlier steps' wgmmas read
//                     copy step j+D into slot (j+D) % S; commit
//                     wgmma on slot j % S
//
// D is S-1 when each wgmma is waited for in its step. When the loop's
// only wgmma accumulates into a loop-carried value, step j waits for all
// but its latest wgmma group (step j-1's is done, step j's runs on into
// step j+1, as in Triton and CUTLASS), so a slot stays busy a step
// longer: D is S-2, and S defaults to one more stage (4).
//
// The windows of later steps come from cloning the (pure) index
// arithmetic of the load's offsets with the induction variable advanced.
// Windows loaded only for a wgmma outside such loops are copied the same
// way, waited for at once: they skip the registers, not the latency.
// A window of an array the kernel writes keeps its load and store.
//
// On sm_90a a window TMA can carry (the window of a kernel operand whose
// row pitches are whole 16-byte units for every size the operand may
// have) is copied by TMA instead, in boxes one swizzle strip wide, as
// Mosaic GPU copies its operands: the CTA's first thread issues the
// boxes, which complete on the slot's mbarrier, and every thread waits for
// that barrier's phase where it would have waited for its cp.async group.
// The threads issue no copies and compute no addresses; the kernel gets a
// tensor map parameter per (operand, box), which it lists in
// `pkgpu.operand_tensor_maps` for the host program (HostProgram.cpp) to
// describe in the manifest.
//
// A window that reaches its buffer transposed (a TF32 B, which wgmma
// reads K-major only, loaded N-major) is *staged*: its ring holds the
// window as loaded, row-major, and each step reads its slot back into
// registers (after a barrier: other threads copied it) in place of the
// global load, then transposes and stores it as before. The global
// latency is hidden; the trip through registers stays.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"

#include "backends/cuda/Async.h"
#include "backends/cuda/Distribute.h"
#include "backends/cuda/HardwareLimits.h"
#include "backends/cuda/MeshTma.h"
#include "backends/cuda/Wgmma.h"
#include "ir/PkDialect.h"
#include "runtime/TensorMap.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <tuple>

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUPREFETCHOPERANDS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// What a kernel's scratch, dot operands and rings may take of sm_90's
/// 227 KiB; the rest stays for the staging of layout conversions.
constexpr int64_t kRingBudget = 192 * 1024;

/// Stages when compiler_params do not say (Triton's default, Pallas's).
constexpr int64_t kDefaultStages = 3;

/// The bytes of the kernel's largest block value: as much staging as a
/// layout conversion through shared memory can take.
int64_t largestBlockBytes(::mlir::gpu::GPUFuncOp func) {
  int64_t largest = 0;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
        largest = std::max<int64_t>(largest, tensor.getNumElements() *
                                                 elementBytes(tensor.getElementType()));
  });
  return largest;
}

/// Bytes of one slot of a ring of `buffer`s: the buffer, whole periods.
int64_t slotBytes(pk::RefType buffer) {
  return llvm::alignTo(buffer.getNumElements() * elementBytes(buffer.getElementType()),
                       kWgmmaOperandAlignment);
}

/// How TMA copies a window: the tensor map (a box over the whole kernel
/// operand, the buffer's swizzle) and the boxes that fill the buffer.
struct TmaWindow {
  unsigned operand = 0; ///< the kernel parameter of the array
  std::vector<int64_t> box;
  int64_t swizzle = 0;
  std::vector<MeshTmaCopy::Box> boxes;
  int64_t bytes = 0; ///< of the whole window
  /// Whether some size the encoding depends on is symbolic: then the
  /// runtime encodes the tensor map only for the sizes it can, and the
  /// kernel copies by cp.async for the others (tmaUsable).
  bool optional = false;
};

/// One operand window a loop step loads and stores into a wgmma buffer.
struct Prefetched {
  pk::LoadOp load;
  pk::StoreOp store;
  SharedRefOp buffer;
  /// The ops of the loop body the load's Ref and offsets are computed
  /// by, in order (each pure, reading the induction variable, values from
  /// outside the loop or earlier ops of the slice).
  SmallVector<Operation *> slice;
  Value ring;
  /// Whether the window is stored transposed: its ring then holds the
  /// window as loaded, and the buffer stays.
  bool staged = false;
  /// Set when TMA copies the window.
  std::optional<TmaWindow> tma;

  /// The type of one slot of the ring.
  pk::RefType slotType() {
    auto type = llvm::cast<pk::RefType>(buffer.getType());
    if (!staged)
      return type;
    auto window = llvm::cast<RankedTensorType>(load.getType());
    return pk::RefType::get(window.getShape(), window.getElementType(), type.getMemorySpace());
  }
};

bool definedOutside(Value v, scf::ForOp loop) {
  return !loop->isAncestor(v.getParentRegion()->getParentOp()) && v.getParentRegion() != &loop.getRegion();
}

/// The slice computing `v` inside the loop's body, or failure when it
/// needs anything but pure region-free ops.
LogicalResult collectSlice(Value v, scf::ForOp loop, llvm::SetVector<Operation *> &slice) {
  if (v == loop.getInductionVar() || definedOutside(v, loop))
    return success();
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() || !isPure(def))
    return failure();
  if (slice.contains(def))
    return success();
  for (Value operand : def->getOperands())
    if (failed(collectSlice(operand, loop, slice)))
      return failure();
  slice.insert(def);
  return success();
}

/// Whether every element of the boolean block value `mask` is true,
/// as far as its definition shows: a true splat, broadcasts, reshapes and
/// conjunctions of such, and `iota < c` along an axis of at most c
/// elements (the head-dimension mask `jnp.arange(d_padded) < d` of JAX's
/// attention ops where d fills the padded size).
bool alwaysTrue(Value mask) {
  Operation *def = mask.getDefiningOp();
  if (!def)
    return false;
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(def)) {
    auto dense = llvm::dyn_cast<DenseIntElementsAttr>(constant.getValue());
    return dense && dense.isSplat() && dense.getSplatValue<bool>();
  }
  if (llvm::isa<pk::BroadcastInDimOp, pk::ReshapeOp>(def))
    return alwaysTrue(def->getOperand(0));
  if (auto both = llvm::dyn_cast<arith::AndIOp>(def))
    return alwaysTrue(both.getLhs()) && alwaysTrue(both.getRhs());
  auto compare = llvm::dyn_cast<arith::CmpIOp>(def);
  if (!compare || (compare.getPredicate() != arith::CmpIPredicate::slt &&
                   compare.getPredicate() != arith::CmpIPredicate::ult))
    return false;
  auto iota = compare.getLhs().getDefiningOp<pk::IotaOp>();
  APInt bound;
  if (!iota || !matchPattern(compare.getRhs(), m_ConstantInt(&bound)))
    return false;
  int64_t count = llvm::cast<RankedTensorType>(iota.getType()).getDimSize(iota.getDimension());
  return bound.isNonNegative() && bound.sge(count);
}

/// A whole-buffer store into a wgmma operand buffer (a strips shared_ref
/// of the store's block read only by wgmma_tile, directly or transposed)
/// of a plain load, in that block, from a global Ref (in a loop, also of
/// the load transposed: staged). With a `loop` (whose body the block is),
/// the Ref and the load's offsets come from outside it or from a slice of
/// pure ops on its index. Windows of arrays the kernel `written` do not
/// qualify.
std::optional<Prefetched> match(pk::StoreOp store, scf::ForOp loop, const llvm::DenseSet<Value> &written) {
  Block *block = store->getBlock();
  auto buffer = store.getRef().getDefiningOp<SharedRefOp>();
  // The window, or (staged, in a loop) the window transposed.
  auto transpose = store.getValue().getDefiningOp<pk::TransposeOp>();
  bool staged = loop && transpose && transpose->hasOneUse() && transpose->getBlock() == block &&
                transpose.getPermutation() == ArrayRef<int64_t>{1, 0};
  auto load = (staged ? transpose.getOperand() : store.getValue()).getDefiningOp<pk::LoadOp>();
  if (!buffer || !buffer.getStrips() || !load || !load->hasOneUse() || buffer->getBlock() != block ||
      load->getBlock() != block || store.getMask() || store.getPadded() || !store.getOffsets().empty())
    return std::nullopt;
  auto type = llvm::cast<pk::RefType>(buffer.getType());
  if (type.getRank() != 2 || llvm::any_of(store.getStaticOffsets(), [](int64_t o) { return o != 0; }) ||
      store.getSizes() != type.getShape())
    return std::nullopt;
  SmallVector<int64_t> windowShape(type.getShape());
  if (staged)
    std::swap(windowShape[0], windowShape[1]);
  for (Operation *user : buffer->getUsers())
    if (user != store && !llvm::isa<WgmmaTileOp, pk::RefTransposeOp>(user))
      return std::nullopt;
  // A padded window is copied padded; a mask that keeps everything only
  // says the load is padded.
  if ((load.getMask() && !alwaysTrue(load.getMask())) || !load.getSqueeze().empty() ||
      llvm::any_of(load.getStrides(), [](int64_t s) { return s != 1; }) ||
      load.getSizes() != ArrayRef<int64_t>(windowShape) ||
      !load.getRef().getDefiningOp<GlobalRefOp>() ||
      written.contains(load.getRef().getDefiningOp<GlobalRefOp>().getBase()))
    return std::nullopt;
  Prefetched p{load, store, buffer, {}, Value(), staged};
  if (!loop)
    return p;
  // The Ref itself may be made in the loop: the loop over a sequential
  // grid axis computes each step's block offsets from its index.
  llvm::SetVector<Operation *> slice;
  if (failed(collectSlice(load.getRef(), loop, slice)))
    return std::nullopt;
  for (Value offset : load.getOffsets())
    if (failed(collectSlice(offset, loop, slice)))
      return std::nullopt;
  p.slice.assign(slice.begin(), slice.end());
  llvm::sort(p.slice, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return p;
}

/// The shared buffer a wgmma operand reads: `ref`, or what a transposed
/// view of it views.
Value viewedBuffer(Value ref) {
  if (auto transpose = ref.getDefiningOp<pk::RefTransposeOp>())
    return transpose.getRef();
  return ref;
}

/// Whether `load`'s window is padded (a masked load's is).
bool isPadded(pk::LoadOp load) { return load.getPadded() || load.getMask(); }

/// The largest dimension TMA copies here take: cuTensorMapEncodeTiled
/// allows 2^32, but box coordinates are signed 32-bit, and a box may
/// start up to a block past the array's last element.
constexpr int64_t kTmaMaxDimension = (int64_t(1) << 31) - 512;
/// cuTensorMapEncodeTiled's limit on a pitch.
constexpr int64_t kTmaMaxPitch = int64_t(1) << 40;

/// The TMA copy of `p`'s window, when TMA can carry it: a window of a
/// kernel operand of at most 5 dimensions whose columns run along the
/// array's innermost dimension, the buffer cut into strip boxes. The
/// array's dimensions and row pitches must be within TMA's rules
/// (pitches whole multiples of 16 bytes): for constant sizes here, for
/// symbolic ones when the kernel runs (`optional`).
std::optional<TmaWindow> planTma(Prefetched &p) {
  if (p.staged)
    return std::nullopt;
  auto global = p.load.getRef().getDefiningOp<GlobalRefOp>();
  auto operand = global ? llvm::dyn_cast<BlockArgument>(global.getBase()) : BlockArgument();
  if (!operand || !llvm::isa<::mlir::gpu::GPUFuncOp>(operand.getOwner()->getParentOp()))
    return std::nullopt;
  auto buffer = llvm::cast<pk::RefType>(p.buffer.getType());
  Type element = buffer.getElementType();
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return std::nullopt;
  int64_t bytes = bits / 8;
  size_t rank = global.getSizes().size();
  if (rank < 2 || rank > rt::kMaxTensorMapRank)
    return std::nullopt;
  SmallVector<unsigned> refToArray;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(global.getSqueeze(), static_cast<int64_t>(d)))
      refToArray.push_back(d);
  if (refToArray.size() != 2 || refToArray[1] != rank - 1)
    return std::nullopt;
  TmaWindow tma;
  // Each pitch is the element size times the sizes of the dimensions
  // inside it.
  int64_t pitch = bytes;
  for (size_t d = rank; d-- > 0;) {
    std::optional<int64_t> size = getConstantIntValue(global.getSizes()[d]);
    if (size && (*size < 1 || *size > kTmaMaxDimension))
      return std::nullopt;
    if (!size)
      tma.optional = true;
    if (d > 0 && !tma.optional) {
      // (Checked before multiplying: absurd constant sizes must not
      // overflow.)
      if (*size >= kTmaMaxPitch / pitch)
        return std::nullopt;
      pitch *= *size;
      if (pitch % 16 != 0)
        return std::nullopt;
    }
  }
  tma.operand = operand.getArgNumber();
  tma.swizzle = p.buffer.getStrips() ? static_cast<int64_t>(*p.buffer.getStrips()) : 0;
  std::optional<std::vector<MeshTmaCopy::Box>> boxes = wgmmaStripBoxes(
      rank, refToArray[0], buffer.getShape()[0], buffer.getShape()[1], bytes, tma.swizzle, tma.box);
  if (!boxes)
    return std::nullopt;
  tma.boxes = std::move(*boxes);
  tma.bytes = buffer.getNumElements() * bytes;
  return tma;
}

/// Whether the runtime encoded the tensor map of an array of `sizes`
/// (i1), when the sizes say so only at run time: every dimension 1 to
/// kTmaMaxDimension, every pitch a multiple of 16 bytes below 2^40 (what
/// cuTensorMapEncodeTiled requires, and the runtime checks, or less). The
/// same in every thread and every copy through the map.
Value tmaUsable(OpBuilder &b, Location loc, ValueRange sizes, int64_t bytes) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  auto both = [&](Value a, Value c) {
    return a ? arith::AndIOp::create(b, loc, a, c).getResult() : c;
  };
  Value usable;
  Value pitch = index(bytes);
  for (size_t d = sizes.size(); d-- > 0;) {
    Value size = sizes[d];
    if (!getConstantIntValue(size)) {
      usable =
          both(usable, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, index(1)));
      usable = both(usable, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, size,
                                                  index(kTmaMaxDimension)));
    }
    if (d == 0)
      break;
    pitch = arith::MulIOp::create(b, loc, pitch, size);
    Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        arith::RemSIOp::create(b, loc, pitch, index(16)), index(0));
    Value small =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, pitch, index(kTmaMaxPitch));
    usable = both(usable, both(whole, small));
  }
  return usable;
}

struct PrefetchOperandsPass : impl::PkGpuPrefetchOperandsBase<PrefetchOperandsPass> {
  void runOnOperation() override {
    getOperation().walk([&](::mlir::gpu::GPUFuncOp func) {
      if (!func->hasAttr("pkgpu.warpgroups"))
        run(func);
    });
  }

  /// The kernel parameters it writes (through stores, scatters or
  /// atomics), with the parameters aliased to them: a window of those may
  /// change between the copy and the step that reads it.
  static llvm::DenseSet<Value> writtenParams(::mlir::gpu::GPUFuncOp func) {
    llvm::DenseSet<Value> written;
    auto note = [&](Value ref) {
      if (auto global = pk::viewedRef(ref).getDefiningOp<GlobalRefOp>())
        written.insert(global.getBase());
    };
    func.walk([&](Operation *op) {
      if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
        note(store.getRef());
      else if (auto scatter = llvm::dyn_cast<pk::ScatterOp>(op))
        note(scatter.getRef());
      else if (auto atomic = llvm::dyn_cast<pk::AtomicRmwOp>(op))
        note(atomic.getRef());
      else if (auto cas = llvm::dyn_cast<pk::AtomicCasOp>(op))
        note(cas.getRef());
    });
    if (auto aliases = func->getAttrOfType<DenseI64ArrayAttr>("pkgpu.aliases"))
      for (size_t i = 0; i + 1 < static_cast<size_t>(aliases.size()); i += 2) {
        Value in = func.getArgument(aliases[i]), out = func.getArgument(aliases[i + 1]);
        if (written.contains(in) || written.contains(out)) {
          written.insert(in);
          written.insert(out);
        }
      }
    return written;
  }

  /// The kernel's warps, each of which keeps barrier parity words
  /// (pkgpu.barrier_alloc).
  static int64_t ctaWarps(::mlir::gpu::GPUFuncOp func) {
    return func->getAttrOfType<IntegerAttr>("pkgpu.num_warps").getInt();
  }

  /// The kernel parameter of the tensor map `tma` copies through: a new
  /// one, appended to the kernel's parameters, listed in
  /// pkgpu.tensor_map_params and described in pkgpu.operand_tensor_maps
  /// (operand, swizzle, whether optional, box), unless the kernel has it
  /// already.
  static int64_t tensorMapParam(::mlir::gpu::GPUFuncOp func, const TmaWindow &tma) {
    Builder b(func.getContext());
    SmallVector<int64_t> fields{tma.operand, tma.swizzle, tma.optional};
    fields.append(tma.box.begin(), tma.box.end());
    Attribute described = b.getDenseI64ArrayAttr(fields);
    SmallVector<Attribute> maps;
    if (auto known = func->getAttrOfType<ArrayAttr>(kOperandTensorMapsAttr))
      maps.assign(known.begin(), known.end());
    SmallVector<int64_t> params;
    if (auto known = func->getAttrOfType<DenseI64ArrayAttr>(kTensorMapParamsAttr))
      params.assign(known.asArrayRef().begin(), known.asArrayRef().end());
    for (auto [map, param] : llvm::zip(maps, params))
      if (map == described)
        return param;
    int64_t param = func.getNumArguments();
    (void)func.insertArgument(static_cast<unsigned>(param),
                              LLVM::LLVMPointerType::get(b.getContext()), DictionaryAttr(),
                              func.getLoc());
    maps.push_back(described);
    params.push_back(param);
    func->setAttr(kOperandTensorMapsAttr, b.getArrayAttr(maps));
    func->setAttr(kTensorMapParamsAttr, b.getDenseI64ArrayAttr(params));
    return param;
  }

  /// pkgpu.tma_copy's boxes: per box its start per array dimension, then
  /// its first byte in the buffer.
  static ArrayAttr boxesAttr(OpBuilder &b, const TmaWindow &tma) {
    SmallVector<Attribute> boxes;
    for (const MeshTmaCopy::Box &box : tma.boxes) {
      SmallVector<int64_t> fields(box.start.begin(), box.start.end());
      fields.push_back(box.sharedByte);
      boxes.push_back(b.getDenseI64ArrayAttr(fields));
    }
    return b.getArrayAttr(boxes);
  }

  void run(::mlir::gpu::GPUFuncOp func) {
    llvm::DenseSet<Value> written = writtenParams(func);
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (!step || *step <= 0)
        continue;
      SmallVector<Prefetched> operands;
      for (auto store : loop.getBody()->getOps<pk::StoreOp>())
        if (std::optional<Prefetched> p = match(store, loop, written))
          operands.push_back(std::move(*p));
      if (!operands.empty())
        pipeline(func, loop, *step, operands);
    }
    // Elsewhere (a dot outside a loop, a loop this does not pipeline),
    // the window still goes straight to its buffer, not through registers.
    SmallVector<pk::StoreOp> stores;
    func.walk([&](pk::StoreOp store) { stores.push_back(store); });
    for (pk::StoreOp store : stores)
      if (std::optional<Prefetched> p = match(store, scf::ForOp(), written))
        copyDirectly(*p);
  }

  /// The load and store of `p` become a copy the threads wait for at
  /// once. The barrier before it keeps it from overwriting the buffer
  /// while a warpgroup still multiplies from it (a loop's previous step).
  static void copyDirectly(Prefetched &p) {
    OpBuilder b(p.store);
    Location loc = p.store.getLoc();
    ::mlir::gpu::BarrierOp::create(b, loc);
    AsyncCopyOp::create(b, loc, p.load.getRef(), p.load.getOffsets(), p.load.getStaticOffsetsAttr(),
                        p.buffer.getResult(), isPadded(p.load));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
    p.store.erase();
    p.load.erase();
  }

  /// The loop's only wgmma, when it accumulates into a loop-carried value
  /// that nothing else reads: `acc' = wait 0 (wgmma acc, a, b)`, yielded
  /// as the next step's `acc`. Waiting for all but the latest group (1)
  /// there lets step j's wgmma run on while step j+1 starts; the loop's
  /// result is waited for after it.
  static WgmmaWaitTileOp overlappableWait(scf::ForOp loop) {
    SmallVector<WgmmaTileOp> tiles;
    loop.getBody()->walk([&](WgmmaTileOp tile) { tiles.push_back(tile); });
    if (tiles.size() != 1 || tiles[0]->getBlock() != loop.getBody())
      return {};
    WgmmaTileOp tile = tiles[0];
    auto carried = llvm::dyn_cast<BlockArgument>(tile.getAccumulator());
    if (!carried || carried.getOwner() != loop.getBody() || carried.getArgNumber() == 0 ||
        !carried.hasOneUse() || !tile->hasOneUse())
      return {};
    auto wait = llvm::dyn_cast<WgmmaWaitTileOp>(*tile->getUsers().begin());
    if (!wait || wait.getPending() != 0 || wait.getAccumulators().size() != 1 || !wait->hasOneUse())
      return {};
    OpOperand &use = *wait->getUses().begin();
    if (use.getOwner() != loop.getBody()->getTerminator() ||
        use.getOperandNumber() != carried.getArgNumber() - 1)
      return {};
    return wait;
  }

  /// The pk.commit_smem (fence + barrier) right before the first wgmma of
  /// the loop's body that reads one of `buffers`: after it, every
  /// warpgroup is done with what the previous step's wgmmas read.
  static pk::CommitSmemOp commitBeforeWgmma(scf::ForOp loop, const llvm::SmallPtrSetImpl<Value> &buffers) {
    auto reads = [&](Value ref) { return buffers.contains(viewedBuffer(ref)); };
    for (Operation &op : *loop.getBody()) {
      auto tile = llvm::dyn_cast<WgmmaTileOp>(op);
      if (!tile || !(reads(tile.getA()) || reads(tile.getB())))
        continue;
      for (Operation *before = tile->getPrevNode(); before; before = before->getPrevNode())
        if (auto commit = llvm::dyn_cast<pk::CommitSmemOp>(before))
          return commit;
      return {};
    }
    return {};
  }

  void pipeline(::mlir::gpu::GPUFuncOp func, scf::ForOp loop, int64_t step,
                SmallVector<Prefetched> &operands) {
    auto scratch = func->getAttrOfType<IntegerAttr>("pkgpu.scratch_bytes");
    // The wgmma buffers, and those that become ring slots (a staged
    // operand's buffer stays, stored every step).
    llvm::SmallPtrSet<Value, 4> buffers, slotted;
    bool anyStaged = false;
    for (Prefetched &p : operands) {
      buffers.insert(p.buffer.getResult());
      if (!p.staged)
        slotted.insert(p.buffer.getResult());
      anyStaged |= p.staged;
    }
    pk::CommitSmemOp commit = commitBeforeWgmma(loop, buffers);
    if (!commit)
      return;
    WgmmaWaitTileOp overlapped = overlappableWait(loop);
    // Overlapping is safe only if no step writes what the wgmma in flight
    // reads: each operand is a ring slot or stored before the loop (an
    // operand stored from registers every step, such as a tf32 B
    // transposed on its way in, is not).
    if (overlapped) {
      auto tile = overlapped.getAccumulators()[0].getDefiningOp<WgmmaTileOp>();
      for (Value operand : {tile.getA(), tile.getB()}) {
        Value ref = viewedBuffer(operand);
        Operation *def = ref.getDefiningOp();
        if (!slotted.contains(ref) && (!def || loop->isAncestor(def)))
          overlapped = {};
      }
    }
    // The rings go after every shared buffer that stays: the buffers they
    // replace (pk-gpu-wgmma-dots placed them after the scratch) are free.
    llvm::SmallPtrSet<Operation *, 4> replaced;
    for (Prefetched &p : operands)
      if (!p.staged)
        replaced.insert(p.buffer);
    int64_t end = 0;
    func.walk([&](SharedRefOp ref) {
      if (replaced.contains(ref))
        return;
      auto type = llvm::cast<pk::RefType>(ref.getType());
      end = std::max<int64_t>(end, static_cast<int64_t>(ref.getOffset()) +
                                       type.getNumElements() * elementBytes(type.getElementType()));
    });
    func.walk([&](BarrierAllocOp barriers) { // an earlier loop's
      end = std::max<int64_t>(
          end, static_cast<int64_t>(barriers.getParityOffset()) +
                   BarrierAllocOp::parityBytes(
                       llvm::cast<pk::BarrierType>(barriers.getType()).getNumBarriers(),
                       ctaWarps(func)));
    });
    int64_t base = llvm::alignTo(end, kWgmmaOperandAlignment);
    int64_t perStage = 0;
    for (Prefetched &p : operands)
      perStage += slotBytes(p.slotType());
    // An overlapped wgmma still reads its slot during the next step, so
    // copies run one step less ahead: a stage more keeps the distance.
    int64_t stages = overlapped ? kDefaultStages + 1 : kDefaultStages;
    if (auto declared = func->getAttrOfType<IntegerAttr>("pkgpu.num_stages"))
      stages = std::max<int64_t>(2, declared.getInt());
    while (stages > 2 && base + stages * perStage > kRingBudget)
      --stages;
    if (base + stages * perStage > kRingBudget)
      return;
    // A staged operand's ring comes on top of its buffer, which stays:
    // it is worth the shared memory only where the later staging of
    // layout conversions surely still fits sm_90's. Else the other
    // operands are pipelined without it.
    if (anyStaged && base + stages * perStage + largestBlockBytes(func) > sharedMemoryLimit(90)) {
      SmallVector<Prefetched> unstaged;
      for (Prefetched &p : operands)
        if (!p.staged)
          unstaged.push_back(p);
      if (!unstaged.empty())
        pipeline(func, loop, step, unstaged);
      return;
    }
    // With one or two stages ahead only, waiting for the wgmma is cheaper
    // than waiting for memory.
    if (stages < kDefaultStages + 1)
      overlapped = {};
    // How many steps ahead a step's copies run: a slot is free once every
    // warpgroup is past the barrier of the step after the last wgmma that
    // read it (two steps after, when wgmmas overlap the next step).
    int64_t distance = overlapped ? stages - 2 : stages - 1;

    // Which windows TMA copies; the others go by cp.async.
    int64_t tmaCopies = 0;
    bool anyCpAsync = false;
    for (Prefetched &p : operands) {
      p.tma = planTma(p);
      tmaCopies += p.tma.has_value();
      anyCpAsync |= !p.tma || p.tma->optional;
    }

    // The rings, at the kernel's start, and the mbarriers TMA copies
    // complete on: one a slot, expecting an arrival of each such copy.
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    int64_t offset = base;
    for (Prefetched &p : operands) {
      pk::RefType type = p.slotType();
      SmallVector<int64_t> shape{stages};
      shape.append(type.getShape().begin(), type.getShape().end());
      auto ringType = pk::RefType::get(shape, type.getElementType(), type.getMemorySpace());
      // A staged window is row-major, as loaded.
      p.ring =
          SharedRefOp::create(b, p.buffer.getLoc(), ringType, b.getI64IntegerAttr(offset),
                              p.staged ? IntegerAttr() : p.buffer.getStripsAttr(), IntegerAttr());
      offset += stages * slotBytes(type);
    }
    Value landed;
    if (tmaCopies) {
      auto type =
          pk::BarrierType::get(b.getContext(), {stages}, tmaCopies, b.getArrayAttr({}), false);
      BarrierAllocOp::Placement at = BarrierAllocOp::place(offset, stages, ctaWarps(func));
      landed = BarrierAllocOp::create(b, loop.getLoc(), type, b.getI64IntegerAttr(at.offset),
                                      b.getI64IntegerAttr(at.parity));
      offset = at.end;
    }
    func->setAttr("pkgpu.scratch_bytes", IntegerAttr::get(scratch.getType(), llvm::alignTo(offset, 16)));

    Location loc = loop.getLoc();
    Value iv = loop.getInductionVar();
    Type ivType = iv.getType();
    auto constant = [&](OpBuilder &at, int64_t v) -> Value {
      if (ivType.isIndex())
        return arith::ConstantIndexOp::create(at, loc, v);
      return arith::ConstantIntOp::create(at, loc, ivType, v);
    };
    auto toIndex = [&](OpBuilder &at, Value v) -> Value {
      return ivType.isIndex() ? v : arith::IndexCastOp::create(at, loc, at.getIndexType(), v).getResult();
    };
    // Whether the runtime encoded each optional tensor map: the same in
    // every step, so tested once before the loop (below) unless the sizes
    // are only known in it.
    SmallVector<Value> usable(operands.size());
    auto usableFor = [&](OpBuilder &at, Prefetched &p, Value src) {
      return tmaUsable(
          at, loc, src.getDefiningOp<GlobalRefOp>().getSizes(),
          elementBytes(llvm::cast<RankedTensorType>(p.load.getType()).getElementType()));
    };
    // Starts the copies of the step whose induction variable is `stepIv`
    // into slot `slot` of every ring.
    auto copyStep = [&](OpBuilder &at, Value stepIv, Value slot) {
      for (auto [p, usableMap] : llvm::zip_equal(operands, usable)) {
        IRMapping map;
        map.map(iv, stepIv);
        for (Operation *op : p.slice)
          at.clone(*op, map);
        SmallVector<Value> offsets;
        for (Value o : p.load.getOffsets())
          offsets.push_back(map.lookupOrDefault(o));
        Value view = slotView(at, loc, p.ring, p.slotType(), slot);
        Value src = map.lookupOrDefault(p.load.getRef());
        if (p.tma)
          TmaCopyOp::create(at, loc, src, offsets, p.load.getStaticOffsetsAttr(), view, landed,
                            ValueRange{slot}, at.getI64IntegerAttr(tensorMapParam(func, *p.tma)),
                            boxesAttr(at, *p.tma), at.getI64IntegerAttr(p.tma->bytes),
                            isPadded(p.load) ? at.getUnitAttr() : UnitAttr(),
                            !p.tma->optional ? Value()
                            : usableMap      ? usableMap
                                             : usableFor(at, p, src));
        else
          AsyncCopyOp::create(at, loc, map.lookupOrDefault(p.load.getRef()), offsets,
                              p.load.getStaticOffsetsAttr(), view, isPadded(p.load));
      }
    };

    // Before the loop: steps 0 .. distance-1, a group each (empty past
    // the end). The slots may still be read by a warpgroup finishing an
    // earlier run of the loop (an outer loop around it): everyone arrives
    // first.
    b.setInsertionPoint(loop);
    for (auto [p, usableMap] : llvm::zip_equal(operands, usable))
      if (p.tma && p.tma->optional &&
          llvm::all_of(p.load.getRef().getDefiningOp<GlobalRefOp>().getSizes(),
                       [&](Value size) { return loop.isDefinedOutsideOfLoop(size); }))
        usableMap = usableFor(b, p, p.load.getRef());
    ::mlir::gpu::BarrierOp::create(b, loc);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
    Value stepValue = constant(b, step);
    Value steps = arith::DivSIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), constant(b, step - 1)),
        stepValue);
    for (int64_t s = 0; s < distance; ++s) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, constant(b, s), steps);
      auto guard = scf::IfOp::create(b, loc, TypeRange{}, inRange, /*withElseRegion=*/false);
      OpBuilder inside = OpBuilder::atBlockBegin(guard.thenBlock());
      inside.setInsertionPoint(guard.thenBlock()->getTerminator());
      Value stepIv = arith::AddIOp::create(inside, loc, lb, constant(inside, s * step));
      copyStep(inside, stepIv, arith::ConstantIndexOp::create(inside, loc, s));
      if (anyCpAsync)
        NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }

    // Each step waits for its own copies (the later steps' distance-1
    // groups may still be in flight); the fence and barrier before its
    // wgmma publish every thread's copies, and after that barrier the
    // step `distance` ahead is copied into the slot no wgmma reads any
    // more.
    b.setInsertionPointToStart(loop.getBody());
    Value j = arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), stepValue);
    if (anyCpAsync)
      NVVM::CpAsyncWaitGroupOp::create(b, loc,
                                       b.getI32IntegerAttr(static_cast<int32_t>(distance - 1)));
    // Staged windows are read by threads other than those that copied
    // them, before the barrier of pk.commit_smem.
    if (anyStaged)
      ::mlir::gpu::BarrierOp::create(b, loc);
    Value current = toIndex(b, arith::RemSIOp::create(b, loc, j, constant(b, stages)));
    if (landed)
      pk::BarrierWaitOp::create(b, loc, landed, ValueRange{current});
    b.setInsertionPointAfter(commit);
    Value ahead = arith::AddIOp::create(b, loc, j, constant(b, distance));
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, steps);
    auto guard = scf::IfOp::create(b, loc, TypeRange{}, inRange, /*withElseRegion=*/false);
    {
      OpBuilder inside = OpBuilder::atBlockBegin(guard.thenBlock());
      inside.setInsertionPoint(guard.thenBlock()->getTerminator());
      Value aheadIv = arith::AddIOp::create(inside, loc, iv, constant(inside, distance * step));
      Value slot = toIndex(inside, arith::RemSIOp::create(inside, loc, ahead, constant(inside, stages)));
      copyStep(inside, aheadIv, slot);
    }
    if (anyCpAsync)
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    b.setInsertionPointAfterValue(current);
    for (Prefetched &p : operands) {
      if (p.staged) {
        readStagedWindow(p, current);
        continue;
      }
      Value view = slotView(b, loc, p.ring, p.slotType(), current);
      p.store.erase();
      p.load.erase();
      p.buffer.getResult().replaceAllUsesWith(view);
      p.buffer.erase();
    }
    if (overlapped)
      overlap(loop, overlapped);
  }

  /// The global load of a staged window becomes a load of its slot
  /// `slot` of the ring (landed and published at the step's start).
  static void readStagedWindow(Prefetched &p, Value slot) {
    OpBuilder b(p.load);
    Location loc = p.load.getLoc();
    pk::RefType type = p.slotType();
    Value view = slotView(b, loc, p.ring, type, slot);
    int64_t rank = type.getRank();
    auto read = pk::LoadOp::create(b, loc, p.load.getType(), view, ValueRange{},
                                   SmallVector<int64_t>(rank, 0), type.getShape(),
                                   SmallVector<int64_t>(rank, 1), ArrayRef<int64_t>{},
                                   /*mask=*/Value(), /*other=*/Value(), /*padded=*/false);
    p.load.getResult().replaceAllUsesWith(read.getResult());
    p.load.erase();
  }

  /// The wgmma of step j is waited for in step j+1 (all but the latest
  /// group), and the last one after the loop.
  static void overlap(scf::ForOp loop, WgmmaWaitTileOp wait) {
    OpBuilder b(wait);
    wait.setPending(1);
    unsigned position = wait->getUses().begin()->getOperandNumber();
    Value result = loop.getResult(position);
    b.setInsertionPointAfter(loop);
    auto last = WgmmaWaitTileOp::create(b, wait.getLoc(), TypeRange{result.getType()}, b.getI64IntegerAttr(0),
                                        ValueRange{result});
    result.replaceAllUsesExcept(last.getResult(0), last);
  }

  /// Slot `slot` of `ring` as a Ref of the buffer's type.
  static Value slotView(OpBuilder &b, Location loc, Value ring, pk::RefType type, Value slot) {
    int64_t rank = type.getRank();
    SmallVector<int64_t> staticOffsets(rank + 1, 0), sizes{1}, strides(rank + 1, 1);
    staticOffsets[0] = ShapedType::kDynamic;
    sizes.append(type.getShape().begin(), type.getShape().end());
    return pk::RefViewOp::create(b, loc, type, ring, ValueRange{slot}, b.getDenseI64ArrayAttr(staticOffsets),
                                 b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides),
                                 b.getDenseI64ArrayAttr({0}));
  }
};

} // namespace

} // namespace pk::gpu
