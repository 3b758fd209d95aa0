//===- PkTensorMemoryOps.cpp - Blackwell's tensor memory and tcgen05 MMA --===//
//
// The rules of plgpu.TMEM allocations and tcgen05_mma (as Mosaic GPU's
// tcgen05.py checks them) and the verifiers of the tensor memory ops.
//
//===----------------------------------------------------------------------===//
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"
#include "ir/SmemTransforms.h"
#include "support/ShapeText.h"

using namespace mlir;

namespace pk {

namespace {

constexpr int64_t kTmemLanes = 128;
constexpr int64_t kTmemColumns = 512;

bool inSpace(RefType ref, MemorySpace space) { return ref.getSpace() == space; }

/// The signless type a value read from `element` storage has.
Type valueElement(Type element) {
  if (auto i = llvm::dyn_cast<IntegerType>(element))
    return IntegerType::get(element.getContext(), i.getWidth());
  return element;
}

/// Why a shared-memory operand's transforms do not fit tcgen05, or "";
/// `swizzle` collects the operands' common swizzle.
std::string operandTransformsProblem(RefType ref, const char *name, int64_t &swizzle) {
  int64_t width = ref.getElementType().getIntOrFloatBitWidth() / 8;
  if (!ref.hasTransforms())
    return "";
  int64_t s = swizzleOf(ref.getTransforms());
  std::vector<int64_t> tiling = tilingOf(ref.getTransforms());
  if (!s)
    return std::string("the ") + name +
           " operand must be swizzled (plgpu.SwizzleTransform of 32, 64 or 128 bytes)";
  int64_t elems = s / width;
  if (tiling.size() != 2 || tiling[0] != 8 || tiling[1] != elems)
    return std::string("the ") + name + " operand's tiling " + shapeText(tiling) +
           " does not fit its swizzle: a " + std::to_string(s) + "-byte swizzle of " +
           elementName(ref.getElementType()) + " needs TilingTransform((8, " +
           std::to_string(elems) + "))";
  if (swizzle && s != swizzle)
    return "A and B must have the same swizzle, got " + std::to_string(swizzle) + " and " +
           std::to_string(s);
  swizzle = s;
  return "";
}

} // namespace

int64_t tmemColumns(ArrayRef<int64_t> shape) { return shape.size() == 2 ? shape[1] : 0; }

int64_t tmemAllocatedColumns(int64_t columns) {
  int64_t allocated = 32;
  while (allocated < columns)
    allocated *= 2;
  return allocated;
}

std::string tmemAllocationProblem(ArrayRef<int64_t> shape, Type element) {
  if (shape.size() != 2 || shape[0] != kTmemLanes)
    return "a plgpu.TMEM buffer is (128, columns): one row per tensor memory lane (Mosaic GPU's "
           "other layouts, for M = 64 and collective MMA, are not supported), got " +
           shapeText(shape);
  if (!element.isF32() && !element.isInteger(32))
    return "a plgpu.TMEM buffer holds 32-bit elements (float32 accumulators, int32) in pkc; "
           "packed 16-bit and 8-bit tensor memory is not supported yet, got " +
           elementName(element);
  if (shape[1] < 1 || shape[1] > kTmemColumns)
    return "tensor memory has " + std::to_string(kTmemColumns) + " columns per SM, got " +
           std::to_string(shape[1]);
  return "";
}

std::string tcgen05MmaProblem(RefType acc, RefType a, RefType b) {
  if (!inSpace(acc, MemorySpace::GPUTensorMemory))
    return "the accumulator must be a plgpu.TMEM Ref, got " + typeText(acc);
  if (!inSpace(a, MemorySpace::GPUShared) && !inSpace(a, MemorySpace::GPUTensorMemory))
    return "the A operand must be a Ref in shared memory (plgpu.SMEM) or tensor memory "
           "(plgpu.TMEM), got " +
           typeText(a);
  if (!inSpace(b, MemorySpace::GPUShared))
    return "the B operand must be a Ref in shared memory (plgpu.SMEM), got " + typeText(b);
  ArrayRef<int64_t> accShape = acc.getShape(), aShape = a.getShape(), bShape = b.getShape();
  if (accShape.size() != 2 || aShape.size() != 2 || bShape.size() != 2)
    return "tcgen05_mma needs 2-D operands, got acc " + shapeText(accShape) + ", a " +
           shapeText(aShape) + ", b " + shapeText(bShape);
  int64_t m = accShape[0], n = accShape[1], k = aShape[1];
  if (aShape[0] != m || bShape[0] != k || bShape[1] != n)
    return "incompatible shapes: a " + shapeText(aShape) + " @ b " + shapeText(bShape) +
           " does not accumulate into acc " + shapeText(accShape);
  Type element = a.getElementType(), accElement = acc.getElementType();
  if (element != b.getElementType())
    return "A and B must have the same dtype, got " + elementName(element) + " and " +
           elementName(b.getElementType());
  if (!element.isF16() && !element.isBF16())
    return "pkc's tcgen05_mma multiplies float16 and bfloat16 operands (Mosaic GPU's float8, "
           "int8 and block-scaled kinds are not supported yet), got " +
           elementName(element);
  if (!accElement.isF32())
    return elementName(element) + " tcgen05_mma accumulates in float32 here, got a " +
           elementName(accElement) + " accumulator";
  if (m != kTmemLanes)
    return "M (the accumulator's rows) must be 128, got " + std::to_string(m);
  if (n % 8 || n > 256)
    return "N (the accumulator's columns) must be a multiple of 8 and at most 256, got " +
           std::to_string(n);
  int64_t swizzle = 0;
  if (inSpace(a, MemorySpace::GPUShared))
    if (std::string why = operandTransformsProblem(a, "A", swizzle); !why.empty())
      return why;
  if (std::string why = operandTransformsProblem(b, "B", swizzle); !why.empty())
    return why;
  if (swizzle && k % (swizzle / 2))
    return "K must be a multiple of the swizzle in elements (" + std::to_string(swizzle) +
           " bytes of " + elementName(element) + " = " + std::to_string(swizzle / 2) + "), got " +
           std::to_string(k);
  return "";
}

namespace {

LogicalResult verifyTensorCoreBarrier(Operation *op, BarrierType type, size_t numIndices) {
  if (!type.getOrdersTensorCore())
    return op->emitOpError() << "arrives when tensor core work is done: its barrier needs "
                                "orders_tensor_core, got "
                             << type;
  return verifyElementIndices(op, type.getShape(), numIndices, "barrier");
}

LogicalResult verifyTmemValue(Operation *op, RefType ref, Type value) {
  if (!inSpace(ref, MemorySpace::GPUTensorMemory))
    return op->emitOpError() << "needs a Ref in tensor memory, got " << ref;
  auto tensor = llvm::cast<RankedTensorType>(value);
  if (tensor.getShape() != ref.getShape() ||
      tensor.getElementType() != valueElement(ref.getElementType()))
    return op->emitOpError() << "value " << value << " does not match the Ref " << ref;
  return success();
}

} // namespace

LogicalResult Tcgen05MmaOp::verify() {
  std::string why = tcgen05MmaProblem(getAcc().getType(), getA().getType(), getB().getType());
  if (!why.empty())
    return emitOpError() << why;
  if (Value barrier = getBarrier())
    return verifyTensorCoreBarrier(*this, llvm::cast<BarrierType>(barrier.getType()),
                                   getBarrierIndices().size());
  if (!getBarrierIndices().empty())
    return emitOpError() << "has barrier indices but no barrier";
  return success();
}

LogicalResult Tcgen05CommitArriveOp::verify() {
  return verifyTensorCoreBarrier(*this, llvm::cast<BarrierType>(getBarrier().getType()),
                                 getIndices().size());
}

LogicalResult AsyncLoadTmemOp::verify() {
  return verifyTmemValue(*this, getRef().getType(), getResult().getType());
}

LogicalResult AsyncStoreTmemOp::verify() {
  return verifyTmemValue(*this, getRef().getType(), getValue().getType());
}

} // namespace pk
