//===- BodyLowering.h - pk kernel bodies to Mosaic, op by op ----*- C++ -*-===//
//
// Lowers the ops of a pallas_call's kernel (or index_map) region into a
// Mosaic function, the way Pallas lowers a kernel jaxpr: one rule per op
// kind, emitting at the builder's insertion point and mapping each pk value
// to its Mosaic value. Block values (static tensors) become vectors of the
// same shape; scalars stay scalars; Refs become memrefs (RefBinding says
// how their axes line up). The rules live one family per file and are
// looked up by op kind; upstream arith, math and scf ops not listed are
// rebuilt generically with vector types.
//
// Preconditions: the module passed pk-tpu-check. Rules still fail with an
// error (never assert) when an op cannot be lowered.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TPU_BODYLOWERING_H
#define PK_BACKENDS_TPU_BODYLOWERING_H

#include "backends/tpu/KernelPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <functional>

namespace pk::backends::tpu {

/// A pk Ref as the Mosaic function holds it.
struct RefBinding {
  mlir::Value memref;
  /// Per memref axis: the pk Ref axis it holds, or -1 for a squeezed block
  /// axis (Mosaic keeps it with size 1; the Ref does not have it).
  llvm::SmallVector<int> refAxis;
  /// A bool Ref: Mosaic stores bools as i32.
  bool boolAsI32 = false;
};

class BodyLowering;
using Rule = mlir::LogicalResult (*)(mlir::Operation *op, BodyLowering &lowering);
using RuleTable = llvm::DenseMap<mlir::TypeID, Rule>;

class BodyLowering {
public:
  BodyLowering(mlir::OpBuilder &builder, const KernelPlan &plan,
               llvm::ArrayRef<mlir::Value> gridIndices, mlir::Value symbolTable)
      : b(builder), kernelPlan(plan), grid(gridIndices.begin(), gridIndices.end()),
        symbols(symbolTable) {}

  /// Lowers every op of `block`, its terminator included, at the insertion
  /// point.
  mlir::LogicalResult lowerOps(mlir::Block &block);
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  /// Rebuilds `op` with mapped operands, vector result types and lowered
  /// regions: the rule for upstream element-wise and scf ops.
  mlir::LogicalResult lowerStructurally(mlir::Operation *op);

  /// What pk.yield becomes (the kernel returns; an index map returns its
  /// window's indices).
  std::function<mlir::LogicalResult(pk::YieldOp)> onYield;

  void map(mlir::Value pkValue, mlir::Value value) { values.map(pkValue, value); }
  mlir::Value lookup(mlir::Value pkValue) const { return values.lookupOrNull(pkValue); }
  void bindRef(mlir::Value pkRef, RefBinding binding) { refs[pkRef] = std::move(binding); }
  /// A Ref view (pk.ref_view) is taken where it is used, once per use, as
  /// Pallas applies a Ref's transforms in each primitive that reads them.
  void deferView(mlir::Value pkRef, mlir::Operation *view) { views[pkRef] = view; }
  /// The memref a pk Ref is, emitting its view's slices at the insertion
  /// point for a view; null (after an error) when there is none.
  const RefBinding *ref(mlir::Value pkRef);

  mlir::OpBuilder &builder() { return b; }
  const KernelPlan &plan() const { return kernelPlan; }
  mlir::Value gridIndex(unsigned axis) const { return grid[axis]; }
  /// The value of export symbol `symbol` (read from the symbol table).
  mlir::Value symbolValue(unsigned symbol, mlir::Location loc);
  /// `expr` over the grid indices (dims) and the export's symbols, as i32
  /// arithmetic with Python's rounding for floordiv, ceildiv and mod.
  mlir::Value affineValue(mlir::AffineExpr expr, mlir::ValueRange dims, mlir::Location loc);

  mlir::Value indexConstant(int64_t value, mlir::Location loc);
  mlir::Value i32Constant(int64_t value, mlir::Location loc);

  /// tensor<SxT> -> vector<SxT>; scalars and other types unchanged.
  static mlir::Type convertType(mlir::Type type);

private:
  mlir::OpBuilder &b;
  const KernelPlan &kernelPlan;
  llvm::SmallVector<mlir::Value> grid;
  mlir::Value symbols;
  mlir::IRMapping values;
  llvm::DenseMap<mlir::Value, RefBinding> refs;
  llvm::DenseMap<mlir::Value, mlir::Operation *> views;
  std::deque<RefBinding> viewBindings; ///< one per use of a view
};

/// `memref` holding all of pk Ref type `ref`, axis for axis.
RefBinding wholeRefBinding(mlir::Value memref, pk::RefType ref);

/// tpu.memref_slice of `base` from `starts` (i32, one per axis) with
/// `shape`, then tpu.memref_squeeze to `kept` when that drops unit axes:
/// how Pallas takes a Ref window (and one semaphore of an array).
/// `dynamicSizes` (i32) give the dynamic dimensions of `shape`, in order.
mlir::Value sliceMemref(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                        mlir::ValueRange starts, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> kept, mlir::ValueRange dynamicSizes = {});

/// The binding of a Ref view (pk.ref_view `view`) at the insertion point:
/// tpu.memref_slice / memref_squeeze of its base (LowerDma.cpp).
mlir::FailureOr<RefBinding> lowerRefViewHere(mlir::Operation *view, BodyLowering &lowering);

// The rule families, one file each.
void addGridRules(RuleTable &rules);        // LowerGrid.cpp
void addMemoryRules(RuleTable &rules);      // LowerMemory.cpp
void addShapeRules(RuleTable &rules);       // LowerShape.cpp
void addReduceRules(RuleTable &rules);      // LowerReduce.cpp
void addDotRules(RuleTable &rules);         // LowerDot.cpp
void addElementwiseRules(RuleTable &rules); // LowerElementwise.cpp
void addDmaRules(RuleTable &rules);         // LowerDma.cpp
void addPipelineRules(RuleTable &rules);    // LowerPipeline.cpp

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_BODYLOWERING_H
