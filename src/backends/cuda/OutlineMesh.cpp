//===- OutlineMesh.cpp - Mosaic GPU kernels -> gpu.func -------------------===//
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Storage.h"

#include "backends/cuda/Async.h"
#include "backends/cuda/MeshTma.h"
#include "backends/cuda/ir/PkGpuDialect.h"
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace pk::gpu {

using namespace mlir;

namespace {

class MeshKernelBuilder {
public:
  MeshKernelBuilder(OpBuilder &b, pk::MeshKernelOp kernel, const LaunchPlan &plan)
      : b(b), kernel(kernel), plan(plan), loc(kernel.getLoc()) {}

  ::mlir::gpu::GPUFuncOp build();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// Block and thread coordinates along every mesh axis (index).
  void meshCoordinates();
  /// Replaces axis and grid queries in the cloned body.
  void replaceAxisQueries(Block &body);
  /// Inlines the pk.run_scoped ops of `block`, allocating their scratch
  /// from byte `top` of shared memory and their tensor memory from column
  /// `columns`.
  void inlineScopes(Block &block, int64_t top, int64_t columns, bool topLevel);
  Value allocate(mlir::BlockArgument arg, int64_t &top, int64_t &columns);
  /// The buffer of a plgpu.RefUnion: each of its Refs (pk.ref_reinterpret)
  /// becomes a buffer at its place in it.
  void allocateUnion(mlir::BlockArgument arg, int64_t &top, int64_t &columns);
  /// A kernel with plgpu.TMEM buffers allocates the tensor memory they
  /// need when it starts and frees it at its end.
  void allocateTensorMemory(Block &entry);

  OpBuilder &b;
  pk::MeshKernelOp kernel;
  const LaunchPlan &plan;
  Location loc;
  ::mlir::gpu::GPUFuncOp func;
  SmallVector<Value> gridIds, clusterIds; ///< index
  Value threadAxis;                       ///< index
  Value warpInThread; ///< index: the warp's place in its warpgroup (pk.warp_map)
  int64_t scratchBytes = 0;
  Value tensorMemory; ///< the pkgpu.tmem_alloc's address, if any
  int64_t tensorMemoryColumns = 0;

public:
  bool failed_ = false;
};

::mlir::gpu::GPUFuncOp MeshKernelBuilder::build() {
  MLIRContext *ctx = b.getContext();
  auto exportOp = kernel->getParentOfType<pk::ExportOp>();
  MeshTmaPlan tma = planMeshTma(kernel);
  size_t numOperands = kernel.getInputs().size() + kernel.getOutputs().size();
  // Tensor maps are passed after the operands and the symbols.
  unsigned firstTensorMap = numOperands + exportOp.getNumSymbols();
  SmallVector<Type> tensorMaps(tma.tensorMaps.size(), LLVM::LLVMPointerType::get(ctx));
  // Block values belong to one Pallas thread: a warpgroup's 4 warps.
  func = createKernelFunc(b, loc, plan, kernel.getInputs().size(), kernel.getOutputs().size(),
                          exportOp.getNumSymbols(), kernel.getInputOutputAliases(), tensorMaps,
                          /*numWarps=*/4);
  func->setAttr(kWarpgroupsAttr, b.getI64IntegerAttr(plan.warpgroups));
  setFloatSemantics(func, kernel.getCompilerParamsAttr(), /*meshKernel=*/true);
  SmallVector<int64_t> tensorMapParams;
  for (size_t t = 0; t < tensorMaps.size(); ++t)
    tensorMapParams.push_back(firstTensorMap + t);
  if (!tensorMapParams.empty())
    func->setAttr(kTensorMapParamsAttr, b.getDenseI64ArrayAttr(tensorMapParams));

  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  meshCoordinates();

  // The kernel's Refs: whole arrays.
  Block &body = kernel.getBodyBlock();
  IRMapping mapping;
  for (unsigned i = 0; i < numOperands; ++i) {
    auto ref = llvm::cast<pk::RefType>(body.getArgument(i).getType());
    SmallVector<Value> sizes, offsets;
    for (int64_t d : ref.getShape()) {
      sizes.push_back(index(d));
      offsets.push_back(index(0));
    }
    Value bound = GlobalRefOp::create(b, loc, ref, entry.getArgument(i), sizes, offsets,
                                      b.getDenseI64ArrayAttr(ref.getShape()),
                                      b.getDenseI64ArrayAttr({}));
    mapping.map(body.getArgument(i), bound);
  }
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  ::mlir::gpu::ReturnOp::create(b, loc);

  // Copies TMA carries know their tensor map.
  for (auto &[op, copy] : tma.copies) {
    Operation *cloned = mapping.lookupOrNull(op);
    cloned->setAttr(kTmaParamAttr, b.getI64IntegerAttr(firstTensorMap + copy.tensorMap));
    SmallVector<Attribute> boxes;
    for (const MeshTmaCopy::Box &box : copy.boxes) {
      SmallVector<int64_t> fields(box.start.begin(), box.start.end());
      fields.push_back(box.sharedByte);
      boxes.push_back(b.getDenseI64ArrayAttr(fields));
    }
    cloned->setAttr(kTmaBoxesAttr, b.getArrayAttr(boxes));
    cloned->setAttr(kTmaBytesAttr, b.getI64IntegerAttr(static_cast<int64_t>(copy.bytes)));
    if (copy.multicast) {
      SmallVector<int64_t> fields{copy.multicast->dimension, copy.multicast->rows,
                                  copy.multicast->bytes};
      fields.append(copy.multicast->axes.begin(), copy.multicast->axes.end());
      cloned->setAttr(kTmaMulticastAttr, b.getDenseI64ArrayAttr(fields));
    }
  }
  // A collective copy TMA does not multicast is loaded by every CTA
  // itself (MeshTma.h); outside the mesh its axes mean nothing.
  func.walk([&](pk::CopyGmemToSmemOp copy) { copy.setCollectiveAxesAttr(b.getStrArrayAttr({})); });
  bool crossesCtas = llvm::any_of(
      tma.copies, [](const auto &entry) { return entry.second.multicast.has_value(); });
  kernel.walk([&](pk::RunScopedOp scope) {
    for (Type t : scope.getBodyBlock().getArgumentTypes())
      if (auto barrier = llvm::dyn_cast<pk::BarrierType>(t); barrier && barrier.isClusterBarrier())
        crossesCtas = true;
  });
  // A cancel request's answer is multicast to the cluster's CTAs; a query
  // maps the cancelled CTA to grid indices.
  func.walk([&](pk::QueryClusterCancelOp query) {
    query->setAttr(kMeshGridAttr, b.getDenseI64ArrayAttr(kernel.getGrid()));
    query->setAttr(kMeshClusterSizeAttr, b.getI64IntegerAttr(kernel.getClusterSize()));
  });
  if (func.walk([](pk::TryClusterCancelOp) { return WalkResult::interrupt(); }).wasInterrupted())
    crossesCtas = true;
  if (crossesCtas && kernel.getClusterSize() > 1) {
    func->setAttr(kClusterShapeAttr, b.getDenseI64ArrayAttr(kernel.getCluster()));
    func->setAttr(kClusterNamesAttr, kernel.getClusterNamesAttr());
  }
  replaceAxisQueries(entry);
  allocateTensorMemory(entry);
  if (failed(promoteAccumulators(func)))
    failed_ = true;
  func->setAttr("pkgpu.scratch_bytes", b.getI64IntegerAttr(llvm::alignTo(scratchBytes, 16)));
  return func;
}

void MeshKernelBuilder::meshCoordinates() {
  // CTAs are numbered row-major over (grid axes, cluster axes) on x.
  Value cta = ::mlir::gpu::BlockIdOp::create(b, loc, ::mlir::gpu::Dimension::x);
  Value clusterSize = index(kernel.getClusterSize());
  Value rank = arith::RemUIOp::create(b, loc, cta, clusterSize);
  Value cluster = arith::DivUIOp::create(b, loc, cta, clusterSize);
  auto unflatten = [&](Value linear, ArrayRef<int64_t> sizes, SmallVector<Value> &ids) {
    ids.assign(sizes.size(), Value());
    for (size_t i = sizes.size(); i-- > 0;) {
      if (i == 0) {
        ids[i] = linear;
        break;
      }
      ids[i] = arith::RemUIOp::create(b, loc, linear, index(sizes[i]));
      linear = arith::DivUIOp::create(b, loc, linear, index(sizes[i]));
    }
  };
  unflatten(cluster, kernel.getGrid(), gridIds);
  unflatten(rank, kernel.getCluster(), clusterIds);
  Value tid = ::mlir::gpu::ThreadIdOp::create(b, loc, ::mlir::gpu::Dimension::x);
  threadAxis = arith::DivUIOp::create(b, loc, tid, index(128));
  if (kernel.walk([](pk::WarpMapOp) { return WalkResult::interrupt(); }).wasInterrupted())
    warpInThread =
        arith::RemUIOp::create(b, loc, arith::DivUIOp::create(b, loc, tid, index(32)), index(4));
}

void MeshKernelBuilder::replaceAxisQueries(Block &body) {
  SmallVector<Operation *> queries;
  body.walk([&](Operation *op) {
    if (llvm::isa<pk::AxisIndexOp, pk::ProgramIdOp, pk::NumProgramsOp>(op))
      queries.push_back(op);
  });
  for (Operation *op : queries) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op);
    Value v;
    auto warps = op->getParentOfType<pk::WarpMapOp>();
    if (auto axis = llvm::dyn_cast<pk::AxisIndexOp>(op);
        axis && warps && warps.getAxisName() == axis.getAxis()) {
      v = warpInThread;
    } else if (auto axis = llvm::dyn_cast<pk::AxisIndexOp>(op)) {
      auto [kind, position] = *kernel.findAxis(axis.getAxis());
      v = kind == 0 ? gridIds[position] : kind == 1 ? clusterIds[position] : threadAxis;
    } else if (auto id = llvm::dyn_cast<pk::ProgramIdOp>(op)) {
      v = gridIds[id.getAxis()];
    } else {
      v = index(kernel.getGrid()[llvm::cast<pk::NumProgramsOp>(op).getAxis()]);
    }
    v = arith::IndexCastOp::create(b, op->getLoc(), op->getResult(0).getType(), v);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
}

void MeshKernelBuilder::allocateTensorMemory(Block &entry) {
  bool usesTensorMemory = false;
  kernel.walk([&](pk::RunScopedOp scope) {
    for (Type t : scope.getBodyBlock().getArgumentTypes())
      if (auto ref = llvm::dyn_cast<pk::RefType>(t))
        usesTensorMemory |= ref.getSpace() == pk::MemorySpace::GPUTensorMemory;
  });
  if (!usesTensorMemory) {
    inlineScopes(entry, 0, 0, /*topLevel=*/true);
    return;
  }
  // tcgen05.alloc writes the address into the first 4 bytes of shared
  // memory; scratch comes after.
  b.setInsertionPointToStart(&entry);
  auto alloc =
      TmemAllocOp::create(b, loc, b.getI32Type(), b.getI64IntegerAttr(0), b.getI64IntegerAttr(32));
  tensorMemory = alloc.getAddress();
  inlineScopes(entry, 16, 0, /*topLevel=*/true);
  scratchBytes = std::max<int64_t>(scratchBytes, 16);
  constexpr int64_t kColumns = 512;
  if (tensorMemoryColumns > kColumns) {
    kernel.emitError() << "this kernel's plgpu.TMEM buffers need " << tensorMemoryColumns
                       << " columns of tensor memory at once; an SM has " << kColumns;
    failed_ = true;
  }
  int64_t columns = pk::tmemAllocatedColumns(tensorMemoryColumns);
  alloc.setColumns(columns);
  b.setInsertionPoint(entry.getTerminator());
  TmemDeallocOp::create(b, loc, tensorMemory, b.getI64IntegerAttr(columns));
  func->setAttr(kTensorMemoryAttr, b.getUnitAttr());
}

Value MeshKernelBuilder::allocate(BlockArgument arg, int64_t &top, int64_t &columns) {
  Type type = arg.getType();
  if (auto barrier = llvm::dyn_cast<pk::BarrierType>(type)) {
    BarrierAllocOp::Placement at =
        BarrierAllocOp::place(top, barrier.getNumBarriers(), plan.threadsPerBlock() / 32);
    top = at.end;
    return BarrierAllocOp::create(b, loc, type, b.getI64IntegerAttr(at.offset),
                                  b.getI64IntegerAttr(at.parity));
  }
  if (auto semaphore = llvm::dyn_cast<pk::SemaphoreType>(type)) {
    // A 32-bit counter each (pkgpu.semaphore_alloc).
    int64_t offset = llvm::alignTo(top, 4);
    top = offset + 4 * semaphore.getNumElements();
    return SemaphoreAllocOp::create(b, loc, type, b.getI64IntegerAttr(offset));
  }
  auto ref = llvm::cast<pk::RefType>(type);
  if (ref.getSpace() == pk::MemorySpace::GPUTensorMemory) {
    // Columns aligned as Mosaic GPU aligns them (TMEM_COL_ALIGNMENT).
    int64_t column = llvm::alignTo(columns, 4);
    columns = column + pk::tmemColumns(ref.getShape());
    tensorMemoryColumns = std::max(tensorMemoryColumns, columns);
    return TmemRefOp::create(b, loc, ref, tensorMemory, b.getI64IntegerAttr(column));
  }
  if (ref.getSpace() == pk::MemorySpace::GPUAccumulator)
    return AccumulatorOp::create(b, arg.getOwner()->getParentOp()->getLoc(), ref);
  if (ref.getRank() >= 2 && feedsWgmma(arg)) {
    // Stored as wgmma reads it, at a multiple of the swizzle's period.
    int64_t swizzle = wgmmaOperandSwizzle(ref);
    int64_t offset = llvm::alignTo(top, std::max<int64_t>(kMeshSmemAlignment, 8 * swizzle));
    top = offset + ref.getNumElements() * elementBytes(ref.getElementType());
    return SharedRefOp::create(b, loc, ref, b.getI64IntegerAttr(offset),
                               b.getI64IntegerAttr(swizzle), IntegerAttr());
  }
  int64_t offset = llvm::alignTo(top, kMeshSmemAlignment);
  top = offset + ref.getNumElements() * elementBytes(ref.getElementType());
  return SharedRefOp::create(b, loc, ref, b.getI64IntegerAttr(offset), IntegerAttr(),
                             IntegerAttr());
}

void MeshKernelBuilder::allocateUnion(BlockArgument arg, int64_t &top, int64_t &columns) {
  auto buffer = llvm::cast<pk::RefType>(arg.getType());
  bool tensorMemoryUnion = buffer.getSpace() == pk::MemorySpace::GPUTensorMemory;
  int64_t base;
  if (tensorMemoryUnion) {
    base = llvm::alignTo(columns, 4);
    columns = base + buffer.getShape()[1];
    tensorMemoryColumns = std::max(tensorMemoryColumns, columns);
  } else {
    // The Refs of a union lie at multiples of 1024 bytes from its start
    // (as in JAX): any swizzle's period divides that.
    base = llvm::alignTo(top, 1024);
    top = base + buffer.getNumElements();
  }
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    auto member = llvm::cast<pk::RefReinterpretOp>(user);
    auto type = llvm::cast<pk::RefType>(member.getType());
    int64_t at = base + static_cast<int64_t>(member.getOffset());
    Value ref;
    if (tensorMemoryUnion) {
      ref = TmemRefOp::create(b, loc, type, tensorMemory, b.getI64IntegerAttr(at));
    } else {
      IntegerAttr strips;
      if (type.getRank() >= 2 && feedsWgmma(member.getResult()))
        strips = b.getI64IntegerAttr(wgmmaOperandSwizzle(type));
      ref = SharedRefOp::create(b, loc, type, b.getI64IntegerAttr(at), strips,
                                b.getI64IntegerAttr(base));
    }
    member.replaceAllUsesWith(ref);
    member.erase();
  }
}

/// Whether `arg` is the buffer of a plgpu.RefUnion (used only by its Refs).
bool isUnionBuffer(BlockArgument arg) {
  return !arg.use_empty() && llvm::all_of(arg.getUsers(), [](Operation *user) {
    return llvm::isa<pk::RefReinterpretOp>(user);
  });
}

void MeshKernelBuilder::inlineScopes(Block &block, int64_t top, int64_t columns, bool topLevel) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto scoped = llvm::dyn_cast<pk::RunScopedOp>(op);
    if (!scoped) {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          inlineScopes(inner, top, columns, /*topLevel=*/false);
      continue;
    }
    Block &scope = scoped.getBodyBlock();
    int64_t inner = top, innerColumns = columns;
    b.setInsertionPoint(scoped);
    for (BlockArgument arg : scope.getArguments()) {
      if (isUnionBuffer(arg))
        allocateUnion(arg, inner, innerColumns);
      else
        arg.replaceAllUsesWith(allocate(arg, inner, innerColumns));
    }
    scratchBytes = std::max(scratchBytes, inner);
    inlineScopes(scope, inner, innerColumns, /*topLevel=*/false);
    auto yield = llvm::cast<pk::ScopeYieldOp>(scope.getTerminator());
    scoped->replaceAllUsesWith(yield.getValues());
    yield->erase();
    block.getOperations().splice(scoped->getIterator(), scope.getOperations());
    // The next scope reuses this one's memory (and may initialize barriers
    // in it): every thread must be done with it, and in a kernel whose
    // CTAs signal each other's barriers or multicast into each other's
    // memory, every thread of the cluster; likewise its tensor memory
    // columns. Accumulators are registers.
    if (!topLevel && (inner > top || innerColumns > columns)) {
      b.setInsertionPoint(scoped); // the nested scopes moved the builder
      if (func->hasAttr(kClusterShapeAttr)) {
        async::clusterSync(b, loc);
      } else {
        ::mlir::gpu::BarrierOp::create(b, loc);
      }
    }
    scoped->erase();
  }
}

} // namespace

::mlir::gpu::GPUFuncOp outlineMeshKernel(OpBuilder &b, pk::MeshKernelOp kernel, const LaunchPlan &plan) {
  MeshKernelBuilder builder(b, kernel, plan);
  ::mlir::gpu::GPUFuncOp func = builder.build();
  return builder.failed_ ? ::mlir::gpu::GPUFuncOp() : func;
}

} // namespace pk::gpu
