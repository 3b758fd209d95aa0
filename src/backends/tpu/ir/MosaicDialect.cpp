//===- MosaicDialect.cpp - Registration and verifiers -----------------------===//
//
// The verifiers check the invariants pkc's lowering relies on and that a
// hand-written test could break; Mosaic re-verifies everything with its own
// rules when JAX parses the module.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/ir/MosaicDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/DialectRegistry.h"

#include "llvm/ADT/TypeSwitch.h"

#include "backends/tpu/ir/MosaicDialect.cpp.inc"
#include "backends/tpu/ir/MosaicEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "backends/tpu/ir/MosaicTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "backends/tpu/ir/MosaicAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "backends/tpu/ir/MosaicOps.cpp.inc"

namespace pk::mosaic {

void MosaicDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "backends/tpu/ir/MosaicTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "backends/tpu/ir/MosaicAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "backends/tpu/ir/MosaicOps.cpp.inc"
      >();
}

void registerMosaicDialects(mlir::DialectRegistry &registry) {
  registry.insert<MosaicDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::vector::VectorDialect>();
}

namespace {

/// `type`'s memory space, when it is a `#tpu.memory_space`.
std::optional<MemorySpace> memorySpaceOf(mlir::MemRefType type) {
  if (auto space = llvm::dyn_cast_or_null<MemorySpaceAttr>(type.getMemorySpace()))
    return space.getValue();
  return std::nullopt;
}

/// Loads and stores of vectors reach VMEM only (SMEM holds scalars, other
/// spaces are reached by DMA).
mlir::LogicalResult verifyVectorAccess(mlir::Operation *op, mlir::MemRefType base,
                                       size_t numIndices, mlir::VectorType value) {
  if (std::optional<MemorySpace> space = memorySpaceOf(base); space && *space != MemorySpace::VMEM)
    return op->emitOpError("expects a memref in VMEM, got ") << base;
  if (static_cast<int64_t>(numIndices) != base.getRank())
    return op->emitOpError("expects ") << base.getRank() << " indices, got " << numIndices;
  if (value.getElementType() != base.getElementType())
    return op->emitOpError("expects the vector's element type to be the memref's (")
           << base.getElementType() << "), got " << value.getElementType();
  return mlir::success();
}

mlir::LogicalResult verifyStrides(mlir::Operation *op, mlir::MemRefType base,
                                  mlir::VectorType value, llvm::ArrayRef<int32_t> strides) {
  if (static_cast<int64_t>(strides.size()) != base.getRank())
    return op->emitOpError("expects one stride per memref dimension (")
           << base.getRank() << "), got " << strides.size();
  if (value.getRank() != base.getRank())
    return op->emitOpError("expects a vector of the memref's rank (") << base.getRank()
           << "), got " << value;
  for (int32_t s : strides)
    if (s < 1)
      return op->emitOpError("expects strides of at least 1, got ") << s;
  return mlir::success();
}

} // namespace

mlir::LogicalResult VectorStoreOp::verify() {
  if (!getStrides().empty())
    return emitOpError("expects empty strides (strided stores are tpu.strided_store)");
  if (mlir::failed(verifyVectorAccess(*this, getBase().getType(), getIndices().size(),
                                      getValueToStore().getType())))
    return mlir::failure();
  if (mlir::Value mask = getMask()) {
    auto maskType = llvm::cast<mlir::VectorType>(mask.getType());
    if (maskType.getShape() != getValueToStore().getType().getShape() ||
        !maskType.getElementType().isInteger(1))
      return emitOpError("expects an i1 mask of the value's shape, got ") << maskType;
    if (getValueToStore().getType().getElementTypeBitWidth() != 32)
      return emitOpError("masks only 32-bit stores");
  }
  return mlir::success();
}

mlir::LogicalResult StridedLoadOp::verify() {
  if (mlir::failed(verifyVectorAccess(*this, getBase().getType(), getIndices().size(), getType())))
    return mlir::failure();
  return verifyStrides(*this, getBase().getType(), getType(), getStrides());
}

mlir::LogicalResult StridedStoreOp::verify() {
  mlir::VectorType value = getValueToStore().getType();
  if (mlir::failed(verifyVectorAccess(*this, getBase().getType(), getIndices().size(), value)))
    return mlir::failure();
  return verifyStrides(*this, getBase().getType(), value, getStrides());
}

mlir::LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  llvm::SmallVector<bool> seen(rank, false);
  for (int32_t dim : getDimensions()) {
    if (dim < 0 || dim >= rank)
      return emitOpError("dimension ") << dim << " is out of range for " << getType();
    if (seen[dim])
      return emitOpError("lists dimension ") << dim << " twice";
    seen[dim] = true;
  }
  return mlir::success();
}

mlir::LogicalResult TransposeOp::verify() {
  auto source = llvm::cast<mlir::VectorType>(getVector().getType());
  auto result = llvm::cast<mlir::VectorType>(getResult().getType());
  llvm::ArrayRef<int64_t> perm = getPermutation();
  if (source.getElementType() != result.getElementType())
    return emitOpError("expects the result's element type to be the operand's");
  if (static_cast<int64_t>(perm.size()) != source.getRank() || result.getRank() != source.getRank())
    return emitOpError("expects a permutation of the operand's ") << source.getRank() << " axes";
  llvm::SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= source.getRank() || seen[p])
      return emitOpError("permutation is not a permutation of 0..") << source.getRank() - 1;
    seen[p] = true;
    if (result.getDimSize(i) != source.getDimSize(p))
      return emitOpError("result axis ") << i << " has size " << result.getDimSize(i)
                                         << " but operand axis " << p << " has size "
                                         << source.getDimSize(p);
  }
  return mlir::success();
}

mlir::LogicalResult ConcatenateOp::verify() {
  auto result = llvm::cast<mlir::VectorType>(getOutput().getType());
  int64_t dim = getDimension();
  if (getSources().empty())
    return emitOpError("expects at least one source");
  if (dim < 0 || dim >= result.getRank())
    return emitOpError("dimension ") << dim << " is out of range for " << result;
  int64_t total = 0;
  for (mlir::Value source : getSources()) {
    auto type = llvm::cast<mlir::VectorType>(source.getType());
    if (type.getRank() != result.getRank() || type.getElementType() != result.getElementType())
      return emitOpError("expects sources of the result's rank and element type, got ") << type;
    for (int64_t i = 0; i < result.getRank(); ++i)
      if (i != dim && type.getDimSize(i) != result.getDimSize(i))
        return emitOpError("source ") << type << " differs from the result off dimension " << dim;
    total += type.getDimSize(dim);
  }
  if (total != result.getDimSize(dim))
    return emitOpError("sources add up to ") << total << " along dimension " << dim
                                             << ", the result has " << result.getDimSize(dim);
  return mlir::success();
}

mlir::LogicalResult BitcastOp::verify() {
  auto in = llvm::cast<mlir::VectorType>(getInput().getType());
  auto out = llvm::cast<mlir::VectorType>(getOutput().getType());
  // Between widths the second-minor dimension scales (rows pack), as in
  // Mosaic; everything else stays.
  int64_t from = in.getElementTypeBitWidth(), to = out.getElementTypeBitWidth();
  llvm::SmallVector<int64_t> expected(in.getShape());
  if (from != to) {
    if (in.getRank() < 2 || (expected[in.getRank() - 2] * from) % to != 0)
      return emitOpError("between bit widths needs rows that pack evenly, got ")
             << in << " -> " << out;
    expected[in.getRank() - 2] = expected[in.getRank() - 2] * from / to;
  }
  if (out.getShape() != llvm::ArrayRef<int64_t>(expected))
    return emitOpError("expects the shape ")
           << (from == to ? "unchanged" : "with rows packed") << ", got " << in << " -> " << out;
  return mlir::success();
}

mlir::LogicalResult MatmulOp::verify() {
  auto lhs = llvm::cast<mlir::VectorType>(getLhs().getType());
  auto rhs = llvm::cast<mlir::VectorType>(getRhs().getType());
  auto acc = llvm::cast<mlir::VectorType>(getAcc().getType());
  if (acc != getResult().getType())
    return emitOpError("expects the accumulator's type to be the result's");
  if (acc.getElementTypeBitWidth() != 32)
    return emitOpError("expects a 32-bit accumulator, got ") << acc;
  std::optional<DotDimensionNumbersAttr> dims = getDimensionNumbers();
  if (!dims)
    return mlir::success();
  if (dims->getLhsContractingDims().size() != 1 || dims->getRhsContractingDims().size() != 1)
    return emitOpError("expects one contracting dimension per operand");
  int64_t lhsDim = dims->getLhsContractingDims()[0], rhsDim = dims->getRhsContractingDims()[0];
  if (lhsDim < 0 || lhsDim >= lhs.getRank() || rhsDim < 0 || rhsDim >= rhs.getRank())
    return emitOpError("contracting dimension out of range");
  if (lhs.getDimSize(lhsDim) != rhs.getDimSize(rhsDim))
    return emitOpError("contracts lhs axis ") << lhsDim << " (size " << lhs.getDimSize(lhsDim)
                                              << ") with rhs axis " << rhsDim << " (size "
                                              << rhs.getDimSize(rhsDim) << ")";
  // The result is [lhs batch, lhs non-contracting, rhs non-contracting].
  llvm::ArrayRef<int64_t> order = dims->getOutputDimOrder();
  if (order.size() % 2 != 0 || static_cast<int64_t>(order.size() / 2) != acc.getRank())
    return emitOpError("output_dim_order must name one (operand, axis) pair per result axis");
  for (size_t i = 0; i < order.size(); i += 2) {
    mlir::VectorType operand = order[i] == 0 ? lhs : rhs;
    if ((order[i] != 0 && order[i] != 1) || order[i + 1] < 0 || order[i + 1] >= operand.getRank())
      return emitOpError("output_dim_order pair ") << i / 2 << " is not an operand axis";
    if (operand.getDimSize(order[i + 1]) != acc.getDimSize(i / 2))
      return emitOpError("result axis ") << i / 2 << " has size " << acc.getDimSize(i / 2)
                                         << ", its operand axis has "
                                         << operand.getDimSize(order[i + 1]);
  }
  return mlir::success();
}

mlir::LogicalResult ReduceIndexOp::verify() {
  auto in = llvm::cast<mlir::VectorType>(getInput().getType());
  auto out = llvm::cast<mlir::VectorType>(getOutput().getType());
  int64_t axis = getAxis();
  if (getKind() != ReductionKind::ArgMax && getKind() != ReductionKind::ArgMin)
    return emitOpError("expects kind arg_max or arg_min");
  if (axis < 0 || axis >= in.getRank())
    return emitOpError("axis ") << axis << " is out of range for " << in;
  llvm::SmallVector<int64_t> expected(in.getShape());
  expected.erase(expected.begin() + axis);
  if (out.getShape() != llvm::ArrayRef<int64_t>(expected))
    return emitOpError("expects the input's shape without axis ") << axis << ", got " << out;
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// Memref views, DMAs
//===----------------------------------------------------------------------===//

mlir::LogicalResult MemRefSliceOp::verify() {
  auto source = llvm::cast<mlir::MemRefType>(getMemRef().getType());
  auto result = llvm::cast<mlir::MemRefType>(getResult().getType());
  if (static_cast<int64_t>(getBaseIdx().size()) != source.getRank())
    return emitOpError("expects one base index per dimension (")
           << source.getRank() << "), got " << getBaseIdx().size();
  if (result.getRank() != source.getRank() ||
      result.getElementType() != source.getElementType() ||
      result.getMemorySpace() != source.getMemorySpace())
    return emitOpError("expects a window of the memref's rank, element type and memory space, "
                       "got ")
           << result;
  for (int64_t d = 0; d < source.getRank(); ++d)
    if (result.getShape()[d] > source.getShape()[d])
      return emitOpError("expects a window no larger than the memref, got ") << result;
  if (getDynamicSizes().size() != result.getNumDynamicDims())
    return emitOpError("expects one dynamic size per dynamic dimension of the result (")
           << result.getNumDynamicDims() << "), got " << getDynamicSizes().size();
  return mlir::success();
}

mlir::LogicalResult MemRefSqueezeOp::verify() {
  auto source = llvm::cast<mlir::MemRefType>(getInput().getType());
  auto result = llvm::cast<mlir::MemRefType>(getResult().getType());
  // The result keeps the source's dimensions in order, less some 1s.
  size_t r = 0;
  for (int64_t d : source.getShape()) {
    if (r < static_cast<size_t>(result.getRank()) && result.getShape()[r] == d)
      ++r;
    else if (d != 1)
      return emitOpError("can only drop unit dimensions, got ") << source << " -> " << result;
  }
  if (r != static_cast<size_t>(result.getRank()) ||
      result.getElementType() != source.getElementType())
    return emitOpError("can only drop unit dimensions, got ") << source << " -> " << result;
  return mlir::success();
}

namespace {

bool isDmaSemaphore(mlir::Value sem) {
  auto type = llvm::cast<mlir::MemRefType>(sem.getType());
  return type.getRank() == 0 && llvm::isa<DMASemaphoreType>(type.getElementType());
}

mlir::LogicalResult verifyDma(mlir::Operation *op, mlir::Value src, mlir::Value dst,
                              mlir::Value sem) {
  auto from = llvm::cast<mlir::MemRefType>(src.getType());
  auto to = llvm::cast<mlir::MemRefType>(dst.getType());
  if (from.getShape() != to.getShape() || from.getElementType() != to.getElementType())
    return op->emitOpError("copies between memrefs of the same shape and element type, got ")
           << from << " and " << to;
  if (sem && !isDmaSemaphore(sem))
    return op->emitOpError("expects one DMA semaphore, got ") << sem.getType();
  return mlir::success();
}

} // namespace

mlir::LogicalResult EnqueueDMAOp::verify() {
  return verifyDma(*this, getSource(), getTarget(), getTargetSemaphore());
}

mlir::LogicalResult WaitDMA2Op::verify() {
  return verifyDma(*this, getSrc(), getDst(), getSemaphore());
}

} // namespace pk::mosaic
