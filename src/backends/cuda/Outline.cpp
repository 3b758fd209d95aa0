//===- Outline.cpp - Block materialization: pallas_call -> gpu.func -------===//
//
// Each pallas_call becomes a kernel. Its CTA first finds its program ids
// (from the CUDA block index for parallel axes, from a loop for the
// sequential ones), then, per program, computes each operand's block
// offset from the BlockSpec's index map exactly as Pallas's interpret mode
// does (a negative start counts from the end of the padded array, and the
// block is clamped inside it), binds the kernel's Refs to those blocks and
// runs a copy of the kernel body.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/BufferViews.h"
#include "backends/cuda/Storage.h"
#include "backends/cuda/LaunchPlan.h"
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Passes.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUOUTLINE
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// Rows of the grid a group of CTAs covers (swizzledProgramIds): Triton's
/// GROUP_SIZE_M.
constexpr int64_t kSwizzleRows = 8;

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, pk::PallasCallOp call, const LaunchPlan &plan)
      : b(b), call(call), plan(plan), loc(call.getLoc()),
        exportOp(call->getParentOfType<pk::ExportOp>()) {}

  ::mlir::gpu::GPUFuncOp build();
  /// Whether a size expression could not be expanded (MLIR's expander has
  /// reported why at the call).
  bool failed() const { return expansionFailed; }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value expand(AffineExpr e, ValueRange dims) {
    if (Value v = affine::expandAffineExpr(b, loc, e, dims, symbols))
      return v;
    expansionFailed = true;
    return index(0);
  }
  /// Program ids (index) for the parallel axes from the CUDA block index.
  void parallelProgramIds();
  /// Whether the CTAs of a two-axis grid take their program ids in
  /// groups of rows: kernels that multiply 16-bit floats, whose blocks
  /// other CTAs reuse.
  bool swizzlesGrid();
  void swizzledProgramIds();
  /// Ids (index) of `axes` from a row-major linear index over them.
  void unflatten(Value linear, ArrayRef<unsigned> axes);
  /// One program: Refs bound to this program's blocks, and the body.
  void program(ArrayRef<Value> scratch);
  /// Inlines `scopes` (pk.run_scoped ops, inner ones first), each of
  /// their buffers a shared-memory Ref of its own after the scratch.
  void inlineScopes(ArrayRef<pk::RunScopedOp> scopes);
  Value blockOffset(pk::BlockSpecAttr spec, unsigned d, Value blockIndex, Value size);
  void replaceGridQueries(ArrayRef<Operation *> body);

  OpBuilder &b;
  pk::PallasCallOp call;
  const LaunchPlan &plan;
  Location loc;
  pk::ExportOp exportOp;
  ::mlir::gpu::GPUFuncOp func;
  SmallVector<Value> symbols;   ///< index values of the export's symbols
  SmallVector<Value> gridSizes; ///< index, per grid axis
  SmallVector<Value> programIds; ///< index, per grid axis
  int64_t sharedEnd = 0;         ///< bytes of shared memory allocated so far
  bool expansionFailed = false;
};

} // namespace

::mlir::gpu::GPUFuncOp createKernelFunc(OpBuilder &b, Location loc, const LaunchPlan &plan,
                                        size_t numInputs, size_t numOutputs, unsigned numSymbols,
                                        ArrayRef<int64_t> aliases, ArrayRef<Type> extraParams,
                                        unsigned numWarps) {
  auto global = LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/1);
  SmallVector<Type> params(numInputs + numOutputs, global);
  params.append(numSymbols, b.getI64Type());
  params.append(extraParams.begin(), extraParams.end());
  auto func = ::mlir::gpu::GPUFuncOp::create(b, loc, plan.kernelName, b.getFunctionType(params, {}));
  func->setAttr(::mlir::gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({static_cast<int32_t>(plan.threadsPerBlock()), 1, 1}));
  func->setAttr("pkgpu.num_warps", b.getI64IntegerAttr(numWarps));
  // An aliased input and output are one buffer at run time.
  SmallVector<int64_t> aliasedParams;
  for (size_t a = 0; a + 1 < aliases.size(); a += 2) {
    aliasedParams.push_back(aliases[a]);
    aliasedParams.push_back(static_cast<int64_t>(numInputs) + aliases[a + 1]);
  }
  if (!aliasedParams.empty())
    func->setAttr("pkgpu.aliases", b.getDenseI64ArrayAttr(aliasedParams));
  return func;
}

void setFloatSemantics(::mlir::gpu::GPUFuncOp func, DictionaryAttr compilerParams,
                       bool meshKernel) {
  auto gpu = compilerParams ? compilerParams.getAs<DictionaryAttr>("gpu") : DictionaryAttr();
  auto lowering = gpu ? gpu.getAs<StringAttr>("lowering") : StringAttr();
  auto approx = gpu ? gpu.getAs<IntegerAttr>("approx_math") : IntegerAttr();
  // JAX lowers a pallas_call through Triton unless its compiler_params are
  // Mosaic GPU's (which say so as `lowering`); a plgpu.kernel always
  // through Mosaic GPU.
  bool triton = !meshKernel && !(lowering && lowering.getValue() == "mosaic_gpu");
  if (triton || (approx && approx.getInt() != 0))
    func->setAttr(kFlushDenormalsAttr, UnitAttr::get(func.getContext()));
  if (triton) {
    func->setAttr(kContractFpAttr, UnitAttr::get(func.getContext()));
    func->setAttr(kFullRangeDivideAttr, UnitAttr::get(func.getContext()));
  }
}

namespace {

::mlir::gpu::GPUFuncOp KernelBuilder::build() {
  // After the symbols: a pointer to each grid bound's 0-d array.
  SmallVector<Type> boundParams(call.getGridBounds().size(),
                                LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/1));
  func = createKernelFunc(b, loc, plan, call.getInputs().size(), call.getOutputs().size(),
                          exportOp.getNumSymbols(), call.getInputOutputAliases(), boundParams,
                          plan.numWarps);
  if (plan.numStages)
    func->setAttr("pkgpu.num_stages", b.getI64IntegerAttr(*plan.numStages));
  if (call->hasAttr("pk.generated")) // array code outside a kernel, for messages
    func->setAttr("pkgpu.generated", b.getUnitAttr());
  setFloatSemantics(func, call.getCompilerParamsAttr(), /*meshKernel=*/false);

  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned firstSymbol = call.getInputs().size() + call.getOutputs().size();
  for (unsigned s = 0; s < exportOp.getNumSymbols(); ++s)
    symbols.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                 entry.getArgument(firstSymbol + s)));
  // Grid sizes computed from data: the grid's symbols after the export's,
  // read once by every thread.
  for (unsigned k = 0; k < call.getGridBounds().size(); ++k) {
    auto type = pk::RefType::get({1}, b.getI32Type());
    Value one = index(1), zero = index(0);
    Value ref = GlobalRefOp::create(
        b, loc, type, entry.getArgument(firstSymbol + exportOp.getNumSymbols() + k),
        ValueRange{one}, ValueRange{zero}, b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({}));
    Value bound =
        pk::LoadOp::create(b, loc, b.getI32Type(), ref, ValueRange{}, b.getDenseI64ArrayAttr({0}),
                           b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({1}),
                           b.getDenseI64ArrayAttr({0}), Value(), Value(), UnitAttr());
    // A negative bound runs no program, as an empty grid.
    Value size = arith::MaxSIOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), bound), index(0));
    symbols.push_back(size);
  }
  for (AffineExpr e : call.getGrid().getResults())
    gridSizes.push_back(expand(e, {}));
  programIds.assign(call.getGridRank(), Value());
  parallelProgramIds();

  // Scratch buffers live in shared memory for the CTA's lifetime.
  SmallVector<Value> scratch;
  int64_t offset = 0;
  for (Attribute t : call.getScratchTypes()) {
    auto ref = llvm::cast<pk::RefType>(llvm::cast<TypeAttr>(t).getValue());
    offset = (offset + 15) / 16 * 16;
    scratch.push_back(SharedRefOp::create(b, loc, ref, b.getI64IntegerAttr(offset), IntegerAttr(),
                                          IntegerAttr()));
    offset += ref.getNumElements() * elementBytes(ref.getElementType());
  }
  sharedEnd = offset;

  if (plan.sequentialAxes.empty()) {
    program(scratch);
  } else {
    // The sequential axes run in order; between two programs the CTA
    // synchronizes, since the next may read what the last one wrote.
    Value count = index(1);
    for (unsigned g : plan.sequentialAxes)
      count = arith::MulIOp::create(b, loc, count, gridSizes[g]);
    auto loop = scf::ForOp::create(b, loc, index(0), count, index(1));
    b.setInsertionPointToStart(loop.getBody());
    unflatten(loop.getInductionVar(), plan.sequentialAxes);
    program(scratch);
    ::mlir::gpu::BarrierOp::create(b, loc);
    b.setInsertionPointAfter(loop);
  }
  ::mlir::gpu::ReturnOp::create(b, loc);
  func->setAttr("pkgpu.scratch_bytes", b.getI64IntegerAttr((sharedEnd + 15) / 16 * 16));
  return func;
}

void KernelBuilder::parallelProgramIds() {
  const ::mlir::gpu::Dimension dims[3] = {::mlir::gpu::Dimension::x, ::mlir::gpu::Dimension::y,
                                          ::mlir::gpu::Dimension::z};
  if (swizzlesGrid()) {
    swizzledProgramIds();
    return;
  }
  for (unsigned c = 0; c < 3; ++c)
    if (!plan.cudaAxes[c].empty())
      unflatten(::mlir::gpu::BlockIdOp::create(b, loc, dims[c]), plan.cudaAxes[c]);
}

bool KernelBuilder::swizzlesGrid() {
  if (plan.cudaAxes[0].size() != 1 || plan.cudaAxes[1].size() != 1 || !plan.cudaAxes[2].empty())
    return false;
  // Dots of 16-bit floats: on tensor cores, multiplying outpaces memory
  // and L2 reuse pays. (The FMA path's per-thread code is unrolled over
  // the block: opaque program ids double LLVM's straight-line strength
  // reduction time there, for a kernel memory does not limit.)
  bool tensorCores = false;
  call.getKernelBlock().walk([&](pk::DotOp dot) {
    Type element = llvm::cast<ShapedType>(dot.getLhs().getType()).getElementType();
    tensorCores |= element.isF16() || element.isBF16();
  });
  return tensorCores;
}

void KernelBuilder::swizzledProgramIds() {
  // The GPU starts CTAs in order of y * nx + x. Taken row by row, the CTAs
  // resident at once span a few rows (i) and every column (j) of the
  // output: each reads all of the right operand. In groups of
  // kSwizzleRows rows, column by column within a group (the grouped order
  // of Triton's matmul tutorial, the Mosaic GPU guide's program-id
  // swizzle), they share a few row and column blocks in L2. Parallel
  // programs have no order, so any bijection keeps the kernel's meaning.
  unsigned i = plan.cudaAxes[1].front(), j = plan.cudaAxes[0].front();
  Value nx = gridSizes[j], ny = gridSizes[i];
  // (Each op is built in a statement of its own: the order of a call's
  // arguments is the compiler's, and the IR must not depend on it.)
  Value rowBlocks = arith::MulIOp::create(
      b, loc, ::mlir::gpu::BlockIdOp::create(b, loc, ::mlir::gpu::Dimension::y), nx);
  Value linear = arith::AddIOp::create(
      b, loc, rowBlocks, ::mlir::gpu::BlockIdOp::create(b, loc, ::mlir::gpu::Dimension::x));
  Value span = arith::MulIOp::create(b, loc, nx, index(kSwizzleRows));
  Value group = arith::DivUIOp::create(b, loc, linear, span);
  Value firstRow = arith::MulIOp::create(b, loc, group, index(kSwizzleRows));
  Value rowsLeft = arith::SubIOp::create(b, loc, ny, firstRow);
  Value rows = arith::MinUIOp::create(b, loc, rowsLeft, index(kSwizzleRows));
  Value inGroup = arith::SubIOp::create(b, loc, linear, arith::MulIOp::create(b, loc, group, span));
  programIds[i] = arith::AddIOp::create(b, loc, firstRow, arith::RemUIOp::create(b, loc, inGroup, rows));
  programIds[j] = arith::DivUIOp::create(b, loc, inGroup, rows);
}

void KernelBuilder::unflatten(Value linear, ArrayRef<unsigned> axes) {
  for (size_t i = axes.size(); i-- > 0;) {
    unsigned g = axes[i];
    if (i == 0) {
      programIds[g] = linear;
      break;
    }
    programIds[g] = arith::RemUIOp::create(b, loc, linear, gridSizes[g]);
    linear = arith::DivUIOp::create(b, loc, linear, gridSizes[g]);
  }
}

Value KernelBuilder::blockOffset(pk::BlockSpecAttr spec, unsigned d, Value blockIndex, Value size) {
  int64_t block = spec.getBlockShape()[d];
  int64_t low = spec.getPaddingLow()[d], high = spec.getPaddingHigh()[d];
  Value start = spec.getDimKinds()[d] == pk::BlockDimKind::Blocked
                    ? arith::MulIOp::create(b, loc, blockIndex, index(block)).getResult()
                    : blockIndex;
  // The padded array Pallas slices: Element padding, then whole blocks.
  Value extent = arith::AddIOp::create(b, loc, size, index(low + high));
  Value blocks = arith::CeilDivSIOp::create(b, loc, extent, index(block));
  Value padded = arith::MaxSIOp::create(b, loc, index(block),
                                        arith::MulIOp::create(b, loc, blocks, index(block)));
  // lax.dynamic_slice: a negative start counts from the end, then the
  // window is clamped to fit.
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, start, index(0));
  start = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, start, padded),
                                  start);
  Value last = arith::SubIOp::create(b, loc, padded, index(block));
  start = arith::MaxSIOp::create(b, loc, index(0), arith::MinSIOp::create(b, loc, start, last));
  return arith::SubIOp::create(b, loc, start, index(low));
}

void KernelBuilder::program(ArrayRef<Value> scratch) {
  Block &kernel = call.getKernelBlock();
  size_t prefetch = call.getNumScalarPrefetch();
  size_t numInputs = call.getInputs().size();
  SmallVector<Value> i32Ids;
  for (Value id : programIds)
    i32Ids.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), id));

  // Scalar-prefetch operands: whole arrays.
  IRMapping mapping;
  SmallVector<Value> prefetchRefs;
  for (size_t i = 0; i < prefetch; ++i) {
    auto type = llvm::cast<RankedTensorType>(call.getInputs()[i].getType());
    SmallVector<Value> sizes, offsets;
    for (int64_t d : type.getShape()) {
      sizes.push_back(index(d));
      offsets.push_back(index(0));
    }
    Value ref = GlobalRefOp::create(b, loc, kernel.getArgument(i).getType(), func.getArgument(i),
                                    sizes, offsets, b.getDenseI64ArrayAttr(type.getShape()),
                                    b.getDenseI64ArrayAttr({}));
    prefetchRefs.push_back(ref);
    mapping.map(kernel.getArgument(i), ref);
  }

  // Computed index maps: a copy of the index_map region for this program.
  SmallVector<Value> computed;
  if (!call.getIndexMap().empty()) {
    Block &block = call.getIndexMap().front();
    IRMapping regionMapping;
    for (unsigned g = 0; g < call.getGridRank(); ++g)
      regionMapping.map(block.getArgument(g), i32Ids[g]);
    for (size_t p = 0; p < prefetch; ++p)
      regionMapping.map(block.getArgument(call.getGridRank() + p), prefetchRefs[p]);
    SmallVector<Operation *> indexMapOps;
    for (Operation &op : block.without_terminator())
      indexMapOps.push_back(b.clone(op, regionMapping));
    for (Value v : block.getTerminator()->getOperands())
      computed.push_back(
          arith::IndexCastOp::create(b, loc, b.getIndexType(), regionMapping.lookup(v)));
    // Index maps may read sizes (nb - 1) and program ids too (after the
    // casts above, which then read the replacements: a query the map
    // returns as it is is erased here).
    replaceGridQueries(indexMapOps);
  }

  // Windowed operands: the block this program sees.
  SmallVector<pk::BlockSpecAttr> specs = call.getAllSpecs();
  unsigned nextComputed = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    pk::BlockSpecAttr spec = specs[i];
    size_t operand = prefetch + i; // kernel argument and function parameter
    Value array = operand < numInputs ? call.getInputs()[operand]
                                      : call.getOutputs()[operand - numInputs];
    AffineMap shape = symbolicShapeOf(array);
    SmallVector<Value> sizes, offsets;
    SmallVector<int64_t> squeeze;
    for (unsigned d = 0; d < spec.getRank(); ++d) {
      Value size = expand(shape.getResult(d), {});
      Value blockIndex = spec.getIndexMap() ? expand(spec.getIndexMap().getResult(d), programIds)
                                            : computed[nextComputed++];
      sizes.push_back(size);
      offsets.push_back(blockOffset(spec, d, blockIndex, size));
      if (spec.getDimKinds()[d] == pk::BlockDimKind::Squeezed)
        squeeze.push_back(d);
    }
    Value ref = GlobalRefOp::create(b, loc, kernel.getArgument(operand).getType(),
                                    func.getArgument(operand), sizes, offsets,
                                    b.getDenseI64ArrayAttr(spec.getBlockShape()),
                                    b.getDenseI64ArrayAttr(squeeze));
    mapping.map(kernel.getArgument(operand), ref);
  }
  for (size_t s = 0; s < scratch.size(); ++s)
    mapping.map(kernel.getArgument(prefetch + specs.size() + s), scratch[s]);

  // The kernel body.
  SmallVector<Operation *> body;
  for (Operation &op : kernel.without_terminator())
    body.push_back(b.clone(op, mapping));
  // Before replaceGridQueries, which erases some of `body`.
  SmallVector<pk::RunScopedOp> scopes;
  for (Operation *root : body)
    root->walk([&](pk::RunScopedOp scoped) { scopes.push_back(scoped); });
  replaceGridQueries(body);
  inlineScopes(scopes);
}

void KernelBuilder::inlineScopes(ArrayRef<pk::RunScopedOp> scopes) {
  // Post-order: inner scopes first, so each is inlined into its parent's
  // body before the parent moves. Every buffer gets memory of its own (no
  // reuse between scopes), so no two Refs alias and the barriers placed
  // for scratch buffers cover these too.
  for (pk::RunScopedOp scoped : scopes) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(scoped);
    Block &scope = scoped.getBodyBlock();
    for (BlockArgument arg : scope.getArguments()) {
      auto ref = llvm::cast<pk::RefType>(arg.getType()); // rejectMosaicGpuOps checked
      sharedEnd = (sharedEnd + 15) / 16 * 16;
      arg.replaceAllUsesWith(SharedRefOp::create(
          b, scoped.getLoc(), ref, b.getI64IntegerAttr(sharedEnd), IntegerAttr(), IntegerAttr()));
      sharedEnd += ref.getNumElements() * elementBytes(ref.getElementType());
    }
    auto yield = llvm::cast<pk::ScopeYieldOp>(scope.getTerminator());
    scoped->replaceAllUsesWith(yield.getValues());
    yield->erase();
    scoped->getBlock()->getOperations().splice(scoped->getIterator(), scope.getOperations());
    scoped->erase();
  }
}

void KernelBuilder::replaceGridQueries(ArrayRef<Operation *> body) {
  SmallVector<Operation *> queries;
  for (Operation *root : body)
    root->walk([&](Operation *op) {
      if (llvm::isa<pk::ProgramIdOp, pk::NumProgramsOp, pk::SymbolicSizeOp>(op))
        queries.push_back(op);
    });
  for (Operation *op : queries) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op);
    Value v;
    if (auto id = llvm::dyn_cast<pk::ProgramIdOp>(op))
      v = programIds[id.getAxis()];
    else if (auto n = llvm::dyn_cast<pk::NumProgramsOp>(op))
      v = gridSizes[n.getAxis()];
    else
      v = expand(llvm::cast<pk::SymbolicSizeOp>(op).getExpr().getResult(0), {});
    v = arith::IndexCastOp::create(b, op->getLoc(), op->getResult(0).getType(), v);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
}

struct OutlinePass : impl::PkGpuOutlineBase<OutlinePass> {
  using PkGpuOutlineBase::PkGpuOutlineBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(expandPipelines(module)))
      return signalPassFailure();
    materializeGlobalSemaphores(module);
    OpBuilder b(module.getContext());
    std::map<Operation *, LaunchPlan> plans = planLaunches(module, defaultNumWarps);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = ::mlir::gpu::GPUModuleOp::create(b, module.getLoc(), "pk_kernels");
    module->setAttr(::mlir::gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    SmallVector<Operation *> exports;
    bool failed = false;
    for (auto exportOp : module.getOps<pk::ExportOp>()) {
      exports.push_back(exportOp);
      exportOp.walk([&](Operation *op) {
        b.setInsertionPointToEnd(kernels.getBody());
        if (auto call = llvm::dyn_cast<pk::PallasCallOp>(op)) {
          if (!isBufferView(call)) {
            KernelBuilder kernel(b, call, plans.at(op));
            kernel.build();
            failed |= kernel.failed();
          }
        }
        else if (auto mesh = llvm::dyn_cast<pk::MeshKernelOp>(op))
          failed |= !outlineMeshKernel(b, mesh, plans.at(op));
      });
    }
    for (Operation *op : exports)
      op->erase();
    if (failed)
      signalPassFailure();
  }
};

} // namespace

} // namespace pk::gpu
