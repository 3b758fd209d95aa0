//===- KernelPlan.h - What each pallas_call becomes on a TPU ----*- C++ -*-===//
//
// Everything about a pallas_call's Mosaic kernel that does not depend on
// its body: names, the kernel function's signature, the grid, dimension
// semantics and one Window per blocked operand. The lowering builds the
// module from it and the manifest describes the kernel from it, so the two
// always agree.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TPU_KERNELPLAN_H
#define PK_BACKENDS_TPU_KERNELPLAN_H

#include "backends/tpu/ir/MosaicDialect.h"
#include "ir/PkDialect.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace pk::backends::tpu {

/// One blocked operand (an input past the scalar-prefetch ones, or an
/// output) as the kernel function receives it.
struct Window {
  bool isOutput = false;
  unsigned index = 0;      ///< in the pallas_call's inputs or outputs
  unsigned specIndex = 0;  ///< in getAllSpecs(): transform_<specIndex>
  pk::BlockSpecAttr spec;
  mlir::AffineMap arrayShape;  ///< ()[export symbols] -> the full array's dims
  mlir::MemRefType memref;     ///< the kernel argument: the block, squeezed axes kept as 1
  /// Pallas's window_bounds: the block shape with squeezed axes as 1.
  llvm::SmallVector<int64_t> windowBounds;
  mosaic::MemorySpace memorySpace = mosaic::MemorySpace::VMEM;
  /// ANY and HBM operands are not windowed: their window_params entry is
  /// empty and they get no transform function.
  bool windowed = true;
  /// The block is the whole array and the index map is all zeros: Pallas
  /// gives such VMEM windows one buffer (pipeline_mode synchronous).
  bool trivial = false;
  bool elementWindow = false; ///< any pl.Element axis: #tpu.element_window
  /// A whole-array window of a kernel over a TensorCore mesh (pl.kernel,
  /// pl.core_map; the pallas_call is marked pk.core_map): Pallas lowers
  /// those through mpmd_map, which gives the window an affine map of
  /// zeros as transform_indices and nothing else.
  bool meshWhole = false;
  /// The BlockSpec's pipeline_mode=pl.Buffered(n): n, or 0 when not given.
  int64_t bufferCount = 0;

  /// The buffers Pallas gives the window (Mosaic's pipeline_mode): one for
  /// a trivial VMEM window whatever the program asked, else what it asked
  /// (0: Mosaic's default).
  int64_t pipelineBuffers() const {
    return trivial && memorySpace == mosaic::MemorySpace::VMEM ? 1 : bufferCount;
  }
};

/// The pipeline_mode a BlockSpec of `call` asked for (pl.Buffered), as the
/// front end recorded it: {buffer_count, use_lookahead?, revisit?}, or
/// null when it asked none.
mlir::DictionaryAttr pipelineModeOf(pk::PallasCallOp call, unsigned specIndex);

struct KernelPlan {
  // Op handles are references; MLIR's accessors are not const.
  mutable pk::PallasCallOp call;
  mutable pk::ExportOp exportOp;
  unsigned callIndex = 0;   ///< among the export's pallas_calls
  std::string moduleName;   ///< "add", or "add.1" when an export makes several calls
  std::string kernelName;   ///< the kernel function (and tpu_custom_call kernel_name)
  /// Grid sizes over the export's symbols; iteration bounds are the
  /// constant ones, ShapedType::kDynamic for the others.
  llvm::SmallVector<mlir::AffineExpr> grid;
  llvm::SmallVector<int64_t> iterationBounds;
  llvm::SmallVector<mosaic::DimensionSemantics> semantics;
  /// Export symbols the kernel or its index maps read at run time, in
  /// symbol order. When any, the kernel's first scalar-prefetch operand is
  /// an i32 SMEM array of their values (the "symbol table").
  llvm::SmallVector<unsigned> symbols;
  /// The scalar-prefetch memrefs: the symbol table (if any), then the
  /// call's scalar-prefetch inputs.
  llvm::SmallVector<mlir::MemRefType> prefetchTypes;
  std::vector<Window> windows; ///< windowed inputs, then outputs
  llvm::SmallVector<mlir::MemRefType> scratchTypes;

  bool hasGrid() const { return !grid.empty(); }
  bool hasSymbolTable() const { return !symbols.empty(); }
  /// The kernel function's type: grid indices, prefetch, windows, scratch.
  mlir::FunctionType kernelType(mlir::MLIRContext *ctx) const;
};

/// Plans every pallas_call of `module`, in order.
std::vector<KernelPlan> planKernels(mlir::ModuleOp module);
/// Plans one pallas_call (inside a pk.export).
KernelPlan planKernel(pk::PallasCallOp call);

/// The Mosaic memref type of a pk Ref: signless elements, bools stored as
/// i32 (Mosaic keeps i1 in mask registers only), the memory space mapped.
mlir::MemRefType memrefTypeFor(llvm::ArrayRef<int64_t> shape, mlir::Type element,
                               mosaic::MemorySpace space);
/// The Mosaic memref of a whole pk Ref (its memory space mapped).
mlir::MemRefType memrefTypeOf(pk::RefType ref);
/// The Mosaic memref of a semaphore array: `memref<2x!tpu.dma_semaphore,
/// #tpu.memory_space<semaphore_mem>>`.
mlir::MemRefType semaphoreMemRefType(pk::SemaphoreType type);
/// Mosaic's memory space for a pk one (VMEM when absent).
mosaic::MemorySpace mosaicMemorySpace(mlir::Attribute pkMemorySpace);
/// The full array's symbolic shape for a pallas_call operand or result.
mlir::AffineMap symbolicShapeOf(mlir::Value array);
/// `name` made a valid function name the way JAX does (mlir.sanitize_name).
std::string sanitizeName(llvm::StringRef name);
/// The dimension semantics for a call's grid: its compiler_params' (tpu)
/// `dimension_semantics` ("arbitrary" for each of the kernel's axes when
/// absent), with "parallel" prepended for leading axes it does not cover
/// (jax.vmap's batch axes, counted by `pk.vmap_axes`), as Pallas does.
/// Nullopt, with `error` set, for an unknown name or a list longer than
/// the grid.
std::optional<llvm::SmallVector<mosaic::DimensionSemantics>>
dimensionSemantics(pk::PallasCallOp call, std::string &error);

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_KERNELPLAN_H
