//===- PkMosaicGpuOps.cpp - Verifiers of the Mosaic GPU ops ---------------===//
#include "ir/MosaicGpuRules.h"
#include "ir/PkDialect.h"
#include "ir/SmemTransforms.h"
#include "support/ShapeText.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace pk {

std::string typeText(Type t) {
  if (auto ref = llvm::dyn_cast<RefType>(t)) {
    std::string where;
    switch (ref.getSpace().value_or(MemorySpace::Any)) {
    case MemorySpace::GPUGlobal:
      where = " in plgpu.GMEM";
      break;
    case MemorySpace::GPUShared:
      where = " in plgpu.SMEM";
      break;
    case MemorySpace::GPUAccumulator:
      where = " (plgpu.ACC)";
      break;
    case MemorySpace::GPUTensorMemory:
      where = " in plgpu.TMEM";
      break;
    default:
      break;
    }
    return "a " + elementName(ref.getElementType()) + " Ref of shape " + shapeText(ref.getShape()) +
           where;
  }
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(t))
    return "a " + elementName(tensor.getElementType()) + " value of shape " +
           shapeText(tensor.getShape());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::string elementName(Type t) {
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (auto i = llvm::dyn_cast<IntegerType>(t))
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(i.getWidth());
  return typeText(t);
}

namespace {

bool inSpace(RefType ref, MemorySpace space) { return ref.getSpace() == space; }

/// The enclosing mesh kernel, or null.
MeshKernelOp enclosingMesh(Operation *op) { return op->getParentOfType<MeshKernelOp>(); }

} // namespace

LogicalResult verifyElementIndices(Operation *op, ArrayRef<int64_t> shape, size_t numIndices,
                                   StringRef what) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (numIndices == shape.size() || (numIndices == 0 && count == 1))
    return success();
  if (numIndices == 0)
    return op->emitOpError() << "needs one " << what << " of the " << count
                             << " in the array; index it (" << what << ".at[i])";
  return op->emitOpError() << "takes " << shape.size() << " indices for a " << what
                           << " array of rank " << shape.size() << ", got " << numIndices;
}


//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult TileTransformAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        ArrayRef<int64_t> tiling) {
  if (tiling.empty())
    return emitError() << "a tiling needs at least one dimension";
  for (int64_t t : tiling)
    if (t <= 0)
      return emitError() << "tile sizes must be positive, got " << t;
  return success();
}

LogicalResult SwizzleTransformAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                           int64_t swizzle) {
  if (swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 32, 64 or 128 bytes, got " << swizzle;
  return success();
}

LogicalResult TransposeTransformAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                             ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> sorted(permutation);
  llvm::sort(sorted);
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return emitError() << "transpose " << shapeText(permutation) << " is not a permutation";
  return success();
}

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

int64_t elementBytes(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

std::string wgmmaProblem(RefType acc, Type a, RefType b) {
  if (!inSpace(acc, MemorySpace::GPUAccumulator))
    return "the accumulator must be a plgpu.ACC Ref (allocate it with pl.run_scoped(..., "
           "plgpu.ACC((m, n), jnp.float32)) or pl.run_state(...)(plgpu.ACC.init(x))), got " +
           typeText(acc);
  if (!inSpace(b, MemorySpace::GPUShared))
    return "the B operand must be a Ref in shared memory (plgpu.SMEM), got " + typeText(b);
  auto aRef = llvm::dyn_cast<RefType>(a);
  auto aValue = llvm::dyn_cast<RankedTensorType>(a);
  if (aRef && !inSpace(aRef, MemorySpace::GPUShared))
    return "the A operand must be a Ref in shared memory or a value in registers, got " +
           typeText(a);
  if (!aRef && !aValue)
    return "the A operand must be a Ref in shared memory or a 2-D value, got " + typeText(a);
  ArrayRef<int64_t> accShape = acc.getShape(), bShape = b.getShape();
  ArrayRef<int64_t> aShape = aRef ? aRef.getShape() : aValue.getShape();
  if (accShape.size() != 2 || aShape.size() != 2 || bShape.size() != 2)
    return "wgmma needs 2-D operands, got acc " + shapeText(accShape) + ", a " + shapeText(aShape) +
           ", b " + shapeText(bShape);
  int64_t m = accShape[0], n = accShape[1], k = aShape[1];
  if (aShape[0] != m || bShape[0] != k || bShape[1] != n)
    return "incompatible shapes: a " + shapeText(aShape) + " @ b " + shapeText(bShape) +
           " does not accumulate into acc " + shapeText(accShape);
  Type element = aRef ? aRef.getElementType() : aValue.getElementType();
  if (element != b.getElementType())
    return "A and B must have the same dtype, got " + elementName(element) + " and " +
           elementName(b.getElementType());
  Type accElement = acc.getElementType();
  bool f16 = element.isF16(), bf16 = element.isBF16(), f32 = element.isF32();
  bool i8 = element.isInteger(8);
  if (!f16 && !bf16 && !f32 && !i8)
    return "wgmma supports float16, bfloat16 and float32 operands (and int8), got " +
           elementName(element);
  if (i8 && !accElement.isInteger(32))
    return "int8 wgmma accumulates in int32, got a " + elementName(accElement) + " accumulator";
  if ((bf16 || f32) && !accElement.isF32())
    return elementName(element) + " wgmma needs a float32 accumulator, got " +
           elementName(accElement);
  if (f16 && !accElement.isF32() && !accElement.isF16())
    return "float16 wgmma needs a float32 or float16 accumulator, got " + elementName(accElement);
  if (aValue && f32)
    return "an A operand in registers must be 16-bit (float16 or bfloat16) or int8, got float32";
  if (m % 64)
    return "M (the accumulator's rows) must be a multiple of 64, got " + std::to_string(m);
  if (n % 8 || n > 256)
    return "N (the accumulator's columns) must be a multiple of 8 and at most 256, got " +
           std::to_string(n);
  // Transforms: both operands tiled (8, swizzle elements) and swizzled
  // alike; Refs without transforms get them from the lowering.
  int64_t width = elementBytes(element);
  int64_t swizzle = 0;
  auto checkOperand = [&](RefType ref, const char *name) -> std::string {
    if (!ref || !ref.hasTransforms())
      return "";
    int64_t s = swizzleOf(ref.getTransforms());
    std::vector<int64_t> tiling = tilingOf(ref.getTransforms());
    std::vector<int64_t> transpose = transposeOf(ref.getTransforms());
    if (!s)
      return std::string("the ") + name + " operand must be swizzled (plgpu.SwizzleTransform)";
    int64_t elems = s / width;
    if (tiling.size() != 2 || tiling[0] != 8 || tiling[1] != elems)
      return std::string("the ") + name + " operand's tiling " + shapeText(tiling) +
             " does not fit its swizzle: a " + std::to_string(s) + "-byte swizzle of " +
             elementName(element) + " needs TilingTransform((8, " + std::to_string(elems) + "))";
    // The tensor cores read 32- and 8-bit operands K-major only: A as
    // stored (M x K), B transposed (a K x N view of an N x K buffer).
    bool isB = llvm::StringRef(name) == "B";
    if (width != 2 && transpose.empty() == isB)
      return isB ? std::string("a ") + elementName(element) +
                       " B operand must be K-major: pass plgpu.transpose_ref of an N x K "
                       "buffer (the tensor cores transpose only 16-bit operands)"
                 : std::string("only 16-bit operands can be transposed, but the A operand is ") +
                       elementName(element);
    if (swizzle && s != swizzle)
      return "A and B must have the same swizzle, got " + std::to_string(swizzle) + " and " +
             std::to_string(s);
    swizzle = s;
    return "";
  };
  if (std::string why = checkOperand(aRef, "A"); !why.empty())
    return why;
  if (std::string why = checkOperand(b, "B"); !why.empty())
    return why;
  if (swizzle) {
    int64_t kGroup = swizzle / width;
    if (k % kGroup)
      return "K must be a multiple of the swizzle in elements (" + std::to_string(swizzle) +
             " bytes of " + elementName(element) + " = " + std::to_string(kGroup) + "), got " +
             std::to_string(k);
  }
  return "";
}

std::string asyncCopyProblem(RefType src, RefType dst, bool toShared) {
  MemorySpace from = toShared ? MemorySpace::GPUGlobal : MemorySpace::GPUShared;
  MemorySpace to = toShared ? MemorySpace::GPUShared : MemorySpace::GPUGlobal;
  const char *fromName = toShared ? "global memory (GMEM)" : "shared memory (SMEM)";
  const char *toName = toShared ? "shared memory (SMEM)" : "global memory (GMEM)";
  if (!inSpace(src, from))
    return std::string("the source must be a Ref in ") + fromName + ", got " + typeText(src);
  if (!inSpace(dst, to))
    return std::string("the destination must be a Ref in ") + toName + ", got " + typeText(dst);
  if (src.getShape() != dst.getShape())
    return "the source " + shapeText(src.getShape()) + " and destination " +
           shapeText(dst.getShape()) + " must have the same shape";
  if (src.getElementType() != dst.getElementType())
    return "the source (" + elementName(src.getElementType()) + ") and destination (" +
           elementName(dst.getElementType()) + ") must have the same dtype";
  RefType shared = toShared ? dst : src;
  std::vector<int64_t> transpose = transposeOf(shared.getTransforms());
  if (!transpose.empty() && transpose.back() != static_cast<int64_t>(transpose.size()) - 1)
    return "TMA cannot transpose the minor dimension: the shared-memory Ref's transforms move "
           "it";
  return "";
}

//===----------------------------------------------------------------------===//
// MeshKernelOp
//===----------------------------------------------------------------------===//

int64_t MeshKernelOp::getClusterSize() {
  int64_t n = 1;
  for (int64_t c : getCluster())
    n *= c;
  return n;
}

std::optional<std::pair<unsigned, unsigned>> MeshKernelOp::findAxis(StringRef name) {
  for (auto [i, a] : llvm::enumerate(getGridNames()))
    if (llvm::cast<StringAttr>(a).getValue() == name)
      return std::make_pair(0u, static_cast<unsigned>(i));
  for (auto [i, a] : llvm::enumerate(getClusterNames()))
    if (llvm::cast<StringAttr>(a).getValue() == name)
      return std::make_pair(1u, static_cast<unsigned>(i));
  if (getThreadName() && *getThreadName() == name)
    return std::make_pair(2u, 0u);
  return std::nullopt;
}

LogicalResult MeshKernelOp::verify() {
  if (getGrid().size() != getGridNames().size())
    return emitOpError() << "needs one name per grid axis";
  if (getCluster().size() != getClusterNames().size())
    return emitOpError() << "needs one name per cluster axis";
  if (getCluster().size() > 3)
    return emitOpError() << "a cluster has at most 3 axes";
  for (int64_t g : getGrid())
    if (g <= 0)
      return emitOpError() << "grid sizes must be positive";
  for (int64_t c : getCluster())
    if (c <= 0)
      return emitOpError() << "cluster sizes must be positive";
  if (getNumThreads() > 16)
    return emitOpError() << "at most 16 Pallas threads (2048 CUDA threads) per CTA, got "
                         << getNumThreads();
  llvm::StringSet<> names;
  auto unique = [&](StringRef n) { return !n.empty() && names.insert(n).second; };
  for (Attribute a : getGridNames())
    if (!unique(llvm::cast<StringAttr>(a).getValue()))
      return emitOpError() << "mesh axis names must be unique and non-empty";
  for (Attribute a : getClusterNames())
    if (!unique(llvm::cast<StringAttr>(a).getValue()))
      return emitOpError() << "mesh axis names must be unique and non-empty";
  if (getThreadName() && !unique(*getThreadName()))
    return emitOpError() << "mesh axis names must be unique and non-empty";
  for (Value v : getInputs())
    if (!llvm::cast<RankedTensorType>(v.getType()).hasStaticShape())
      return emitOpError() << "operands must have static shapes";
  for (Value v : getOutputs())
    if (!llvm::cast<RankedTensorType>(v.getType()).hasStaticShape())
      return emitOpError() << "results must have static shapes";
  ArrayRef<int64_t> aliases = getInputOutputAliases();
  if (aliases.size() % 2)
    return emitOpError() << "input_output_aliases must hold (input, output) pairs";
  for (size_t i = 0; i < aliases.size(); i += 2) {
    int64_t in = aliases[i], out = aliases[i + 1];
    if (in < 0 || in >= static_cast<int64_t>(getInputs().size()) || out < 0 ||
        out >= static_cast<int64_t>(getOutputs().size()))
      return emitOpError() << "alias (" << in << ", " << out << ") is out of range";
    if (getInputs()[in].getType() != getOutputs()[out].getType())
      return emitOpError() << "aliased input " << in << " and output " << out
                           << " must have the same type";
  }
  return success();
}

LogicalResult MeshKernelOp::verifyRegions() {
  Block &body = getBodyBlock();
  size_t expected = getInputs().size() + getOutputs().size();
  if (body.getNumArguments() != expected)
    return emitOpError() << "body takes " << body.getNumArguments() << " Refs but the kernel has "
                         << expected << " inputs and outputs";
  for (size_t i = 0; i < expected; ++i) {
    Type operand = i < getInputs().size() ? getInputs()[i].getType()
                                          : getOutputs()[i - getInputs().size()].getType();
    auto tensor = llvm::cast<RankedTensorType>(operand);
    auto ref = llvm::dyn_cast<RefType>(body.getArgument(i).getType());
    if (!ref || ref.getShape() != tensor.getShape() ||
        ref.getElementType() != tensor.getElementType() || !inSpace(ref, MemorySpace::GPUGlobal))
      return emitOpError() << "body argument " << i << " must be a global-memory Ref of " << tensor;
  }
  if (body.getTerminator()->getNumOperands() != 0)
    return emitOpError() << "body must end in a pk.scope_yield of no values";
  return success();
}

LogicalResult AxisIndexOp::verify() {
  MeshKernelOp mesh = enclosingMesh(*this);
  if (!mesh)
    return emitOpError() << "must be inside a pk.mesh_kernel";
  for (auto warps = (*this)->getParentOfType<WarpMapOp>(); warps;
       warps = warps->getParentOfType<WarpMapOp>())
    if (warps.getAxisName() == getAxis())
      return success();
  if (!mesh.findAxis(getAxis()))
    return emitOpError() << "names no axis of the enclosing mesh: '" << getAxis() << "'";
  return success();
}

LogicalResult WarpMapOp::verify() {
  // Inside a pk.mesh_kernel, or the kernel the CUDA backend outlined
  // from one (which lowers it with the rest of the body).
  if ((*this)->getParentOfType<WarpMapOp>())
    return emitOpError() << "cannot be nested in another pk.warp_map";
  return success();
}

//===----------------------------------------------------------------------===//
// RunScopedOp
//===----------------------------------------------------------------------===//

void RunScopedOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  std::optional<ArrayAttr> names = getArgNames();
  if (!names || region.empty())
    return;
  for (auto [arg, name] : llvm::zip(region.front().getArguments(), *names))
    if (auto s = llvm::cast<StringAttr>(name); !s.getValue().empty())
      setNameFn(arg, s.getValue());
}

LogicalResult RunScopedOp::verifyRegions() {
  Block &body = getBodyBlock();
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    if (!llvm::isa<RefType, BarrierType, SemaphoreType>(arg.getType()))
      return emitOpError() << "allocation " << i << " must be a !pk.ref, !pk.barrier or "
                           << "!pk.semaphore, got " << arg.getType();
  if (TypeRange(body.getTerminator()->getOperandTypes()) != getResultTypes())
    return emitOpError() << "body must yield values of the result types";
  if (MeshKernelOp mesh = enclosingMesh(*this))
    for (Attribute a : getCollectiveAxes())
      if (!mesh.findAxis(llvm::cast<StringAttr>(a).getValue()))
        return emitOpError() << "collective axis '" << llvm::cast<StringAttr>(a).getValue()
                             << "' is not an axis of the enclosing mesh";
  return success();
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

LogicalResult RefViewOp::verify() {
  RefType ref = getRefType();
  int64_t rank = ref.getRank();
  ArrayRef<int64_t> offsets = getStaticOffsets(), sizes = getSizes(), strides = getStrides();
  if (static_cast<int64_t>(offsets.size()) != rank || static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOpError() << "needs one offset, size and stride per Ref axis (rank " << rank << ")";
  if (static_cast<size_t>(llvm::count_if(offsets, ShapedType::isDynamic)) != getOffsets().size())
    return emitOpError() << "has " << getOffsets().size() << " dynamic offsets but "
                         << llvm::count_if(offsets, ShapedType::isDynamic) << " dynamic markers";
  if (static_cast<size_t>(llvm::count_if(sizes, ShapedType::isDynamic)) != getDynamicSizes().size())
    return emitOpError() << "has " << getDynamicSizes().size() << " dynamic sizes but "
                         << llvm::count_if(sizes, ShapedType::isDynamic) << " dynamic markers";
  if (hasDynamicSizes()) {
    if (ref.hasTransforms())
      return emitOpError() << "cannot take a window of dynamic size of a transformed Ref";
    // What a ragged window can be used for; everything else reads its
    // shape statically.
    for (Operation *user : getResult().getUsers())
      if (!llvm::isa<DmaStartOp, DmaWaitOp>(user))
        return emitOpError() << "has a dynamic size, so its only uses are async copies "
                                "(pk.dma_start, pk.dma_wait), not '"
                             << user->getName() << "'";
  }
  SmallVector<int64_t> shape;
  int64_t previous = -1;
  for (int64_t d : getSqueeze()) {
    if (d <= previous || d >= rank || sizes[d] != 1)
      return emitOpError() << "squeezed axes must be increasing, in range and of size 1";
    previous = d;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (ShapedType::isDynamic(sizes[d])) {
      if (strides[d] != 1)
        return emitOpError() << "a dynamic size needs stride 1 (axis " << d << ")";
      if (!ShapedType::isDynamic(offsets[d]) && (offsets[d] < 0 || offsets[d] > ref.getShape()[d]))
        return emitOpError() << "window is out of bounds for axis " << d << " of size "
                             << ref.getShape()[d];
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (sizes[d] <= 0 || strides[d] <= 0)
      return emitOpError() << "sizes and strides must be positive (axis " << d << ")";
    if ((sizes[d] - 1) * strides[d] + 1 > ref.getShape()[d] ||
        (!ShapedType::isDynamic(offsets[d]) &&
         (offsets[d] < 0 || offsets[d] + (sizes[d] - 1) * strides[d] >= ref.getShape()[d])))
      return emitOpError() << "window is out of bounds for axis " << d << " of size "
                           << ref.getShape()[d];
    if (!llvm::is_contained(getSqueeze(), d))
      shape.push_back(sizes[d]);
  }
  if (ref.hasTransforms()) {
    std::string why =
        checkSmemWindow(ref.getShape(), ref.getTransforms(), offsets, sizes, strides, getSqueeze());
    if (!why.empty())
      return emitOpError() << "cannot take this window of a transformed Ref: " << why;
  }
  ArrayAttr transforms =
      windowTransforms(getContext(), ref.getTransforms(), getSqueeze(), static_cast<size_t>(rank));
  auto expected =
      RefType::get(getContext(), shape, ref.getElementType(), ref.getMemorySpace(), transforms);
  if (getResult().getType() != expected)
    return emitOpError() << "result type must be " << expected;
  return success();
}

LogicalResult RefReshapeOp::verify() {
  auto from = llvm::cast<RefType>(getRef().getType());
  auto to = llvm::cast<RefType>(getResult().getType());
  if (from.hasTransforms() || to.hasTransforms())
    return emitOpError() << "reshapes untransformed Refs only";
  if (from.getElementType() != to.getElementType() || from.getMemorySpace() != to.getMemorySpace())
    return emitOpError() << "result " << to << " must keep the element type and memory space of "
                         << from;
  if (ShapedType::getNumElements(from.getShape()) != ShapedType::getNumElements(to.getShape()))
    return emitOpError() << "cannot view " << from << " as " << to << ": the element counts differ";
  return success();
}

LogicalResult RefTransposeOp::verify() {
  auto ref = llvm::cast<RefType>(getRef().getType());
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != static_cast<size_t>(ref.getRank()))
      return emitOpError() << "permutation " << shapeText(perm) << " is not a permutation of the "
                           << ref.getRank() << " axes";
  if (sorted.size() != static_cast<size_t>(ref.getRank()))
    return emitOpError() << "permutation must have one entry per axis";
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(ref.getShape()[d]);
  ArrayAttr transforms =
      ref.hasTransforms() ? transposeTransforms(getContext(), ref.getTransforms(), perm) : nullptr;
  auto expected =
      RefType::get(getContext(), shape, ref.getElementType(), ref.getMemorySpace(), transforms);
  if (getResult().getType() != expected)
    return emitOpError() << "result type must be " << expected;
  return success();
}

LogicalResult RefReinterpretOp::verify() {
  auto buffer = llvm::cast<RefType>(getBuffer().getType());
  auto result = llvm::cast<RefType>(getResult().getType());
  int64_t offset = static_cast<int64_t>(getOffset());
  if (buffer.getSpace() != result.getSpace())
    return emitOpError() << "the result must be in the buffer's memory space";
  if (offset < 0)
    return emitOpError() << "offset must not be negative";
  if (inSpace(buffer, MemorySpace::GPUShared)) {
    if (buffer.getRank() != 1 || !buffer.getElementType().isInteger(8) || buffer.hasTransforms())
      return emitOpError() << "a shared-memory union buffer is a 1-D buffer of i8";
    int64_t bytes = result.getNumElements() * elementBytes(result.getElementType());
    if (offset + bytes > buffer.getNumElements())
      return emitOpError() << "bytes [" << offset << ", " << offset + bytes
                           << ") of the result lie outside the " << buffer.getNumElements()
                           << "-byte buffer";
    return success();
  }
  if (inSpace(buffer, MemorySpace::GPUTensorMemory)) {
    if (buffer.getRank() != 2 || buffer.getShape()[0] != 128 ||
        !buffer.getElementType().isInteger(32))
      return emitOpError() << "a tensor-memory union buffer is (128, columns) of i32";
    if (result.getRank() != 2 || result.getShape()[0] != 128 ||
        elementBytes(result.getElementType()) > 4)
      return emitOpError() << "a tensor-memory result is (128, columns) of elements of at most "
                              "32 bits";
    if (offset + result.getShape()[1] > buffer.getShape()[1])
      return emitOpError() << "columns [" << offset << ", " << offset + result.getShape()[1]
                           << ") of the result lie outside the buffer's " << buffer.getShape()[1];
    return success();
  }
  return emitOpError() << "union buffers are in shared or tensor memory";
}

//===----------------------------------------------------------------------===//
// Barriers, copies, tensor cores, semaphores
//===----------------------------------------------------------------------===//

LogicalResult BarrierArriveOp::verify() {
  auto type = llvm::cast<BarrierType>(getBarrier().getType());
  return verifyElementIndices(*this, type.getShape(), getIndices().size(), "barrier");
}

LogicalResult BarrierWaitOp::verify() {
  auto type = llvm::cast<BarrierType>(getBarrier().getType());
  return verifyElementIndices(*this, type.getShape(), getIndices().size(), "barrier");
}

LogicalResult BarrierTestOp::verify() {
  auto type = llvm::cast<BarrierType>(getBarrier().getType());
  if (type.isClusterBarrier())
    return emitOpError() << "tests a barrier of this CTA, not a cluster barrier";
  return verifyElementIndices(*this, type.getShape(), getIndices().size(), "barrier");
}

LogicalResult CopyGmemToSmemOp::verify() {
  auto type = llvm::cast<BarrierType>(getBarrier().getType());
  if (failed(verifyElementIndices(*this, type.getShape(), getBarrierIndices().size(), "barrier")))
    return failure();
  if (type.isClusterBarrier())
    return emitOpError() << "completes on a barrier of this CTA, not a cluster barrier";
  std::string why = asyncCopyProblem(llvm::cast<RefType>(getSrc().getType()),
                                     llvm::cast<RefType>(getDst().getType()), true);
  if (!why.empty())
    return emitOpError() << why;
  if (!getCollectiveAxes().empty()) {
    MeshKernelOp mesh = enclosingMesh(*this);
    for (Attribute a : getCollectiveAxes()) {
      StringRef name = llvm::cast<StringAttr>(a).getValue();
      auto axis = mesh ? mesh.findAxis(name) : std::nullopt;
      if (!axis || axis->first != 1)
        return emitOpError() << "collective axis '" << name
                             << "' is not a cluster axis of the enclosing mesh";
    }
  }
  return success();
}

LogicalResult CopySmemToGmemOp::verify() {
  std::string why = asyncCopyProblem(llvm::cast<RefType>(getSrc().getType()),
                                     llvm::cast<RefType>(getDst().getType()), false);
  if (!why.empty())
    return emitOpError() << why;
  return success();
}

LogicalResult WgmmaOp::verify() {
  std::string why = wgmmaProblem(llvm::cast<RefType>(getAcc().getType()), getA().getType(),
                                 llvm::cast<RefType>(getB().getType()));
  if (!why.empty())
    return emitOpError() << why;
  return success();
}

std::string namedBarrierProblem(int64_t id, int64_t threads) {
  if (id < 0 || id > 15)
    return "named barrier id " + std::to_string(id) +
           " is out of range: a CTA has named barriers 0 to 15";
  if (threads <= 0 || threads % 32 != 0 || threads > 1024)
    return "a named barrier's thread count must be a positive multiple of 32 up to 1024, got " +
           std::to_string(threads);
  return "";
}

LogicalResult NamedBarrierOp::verify() {
  // Constant operands are checked here; others where they run (a valid
  // stand-in for the one not known).
  std::optional<int64_t> id = getConstantIntValue(getId()), n = getConstantIntValue(getThreads());
  std::string why = namedBarrierProblem(id.value_or(0), n.value_or(32));
  if (!why.empty())
    return emitOpError() << why;
  return success();
}

LogicalResult SetMaxRegistersOp::verify() {
  int64_t n = getCount();
  if (n < 24 || n > 256 || n % 8)
    return emitOpError() << "the register count must be a multiple of 8 between 24 and 256, got "
                         << n;
  return success();
}

LogicalResult SemaphoreSignalOp::verify() {
  auto type = llvm::cast<SemaphoreType>(getSemaphore().getType());
  if (type.isDma())
    return emitOpError() << "signals regular semaphores; a DMA semaphore is signalled by the "
                            "copies that name it";
  return verifyElementIndices(*this, type.getShape(), getIndices().size(), "semaphore");
}

LogicalResult SemaphoreWaitOp::verify() {
  auto type = llvm::cast<SemaphoreType>(getSemaphore().getType());
  if (type.isDma())
    return emitOpError() << "waits on regular semaphores; wait for a copy with pk.dma_wait";
  return verifyElementIndices(*this, type.getShape(), getIndices().size(), "semaphore");
}

//===----------------------------------------------------------------------===//
// PipelineOp
//===----------------------------------------------------------------------===//

bool PipelineOp::isPipelined(unsigned i) {
  Attribute space = getSpec(i).getMemorySpace();
  auto s = llvm::dyn_cast_or_null<MemorySpaceAttr>(space);
  return !s || (s.getValue() != MemorySpace::GPUGlobal && s.getValue() != MemorySpace::Any &&
                s.getValue() != MemorySpace::HBM);
}

namespace {

/// Whether a value computed in the index_map region depends on the grid
/// indices (its block arguments).
bool dependsOnGrid(Value v, Block &block, llvm::DenseMap<Value, bool> &memo) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &block;
  Operation *def = v.getDefiningOp();
  if (!def || !block.getParent()->isAncestor(def->getParentRegion()))
    return false; // defined outside the pipeline: a kernel value
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  bool depends = def->getNumRegions() > 0;
  for (Value operand : def->getOperands())
    depends = depends || dependsOnGrid(operand, block, memo);
  memo[v] = depends;
  return depends;
}

} // namespace

bool PipelineOp::isIndexInvariant(unsigned i) {
  Block &map = getIndexMap().front();
  Operation *yield = map.getTerminator();
  size_t at = 0;
  for (unsigned j = 0; j < i; ++j)
    at += getSpec(j).getNumIndexValues();
  llvm::DenseMap<Value, bool> memo;
  for (int64_t d = 0; d < getSpec(i).getNumIndexValues(); ++d)
    if (dependsOnGrid(yield->getOperand(at + d), map, memo))
      return false;
  return true;
}

bool PipelineOp::isTpu() {
  if (!getRefs().empty())
    return !inSpace(llvm::cast<RefType>(getRefs()[0].getType()), MemorySpace::GPUGlobal);
  // No operands: where it runs tells which pipeline it is. Mosaic GPU's
  // run in plgpu.kernel bodies and in Mosaic GPU pallas_calls.
  if ((*this)->getParentOfType<MeshKernelOp>())
    return false;
  auto call = (*this)->getParentOfType<PallasCallOp>();
  DictionaryAttr params = call ? call.getCompilerParamsAttr() : nullptr;
  auto gpu = params ? params.getAs<DictionaryAttr>("gpu") : nullptr;
  auto lowering = gpu ? gpu.getAs<StringAttr>("lowering") : nullptr;
  return !(lowering && lowering.getValue() == "mosaic_gpu");
}

BarrierType PipelineOp::consumedBarrierType() {
  return BarrierType::get(getContext(), {1}, getNumComputeWgs().value_or(1),
                          ArrayAttr::get(getContext(), {}), false);
}

OpFoldResult PipelineOp::getGridExtent(unsigned d) {
  ArrayRef<int64_t> grid = getGrid();
  if (!ShapedType::isDynamic(grid[d]))
    return IntegerAttr::get(IndexType::get(getContext()), grid[d]);
  return getDynamicGrid()[llvm::count_if(grid.take_front(d), ShapedType::isDynamic)];
}

std::optional<int64_t> PipelineOp::getStaticSteps() {
  int64_t steps = 1;
  for (int64_t g : getGrid()) {
    if (ShapedType::isDynamic(g))
      return std::nullopt;
    steps *= g;
  }
  return steps;
}

LogicalResult PipelineOp::verify() {
  size_t numSpecs = getInSpecs().size() + getOutSpecs().size();
  if (numSpecs != getRefs().size())
    return emitOpError() << "has " << getRefs().size() << " operands but " << numSpecs
                         << " block specs";
  if (getDelayRelease().size() != getInSpecs().size())
    return emitOpError() << "needs one delay_release per input";
  if (std::optional<ArrayAttr> collective = getCollectiveAxes()) {
    if (collective->size() != getInSpecs().size())
      return emitOpError() << "needs one list of collective_axes per input";
    if (!getWarpSpecialized())
      return emitOpError() << "has collective_axes but is not warp-specialized";
  }
  for (int64_t d : getDelayRelease())
    if (d < 0 || d >= static_cast<int64_t>(getMaxConcurrentSteps()))
      return emitOpError() << "delay_release must be below max_concurrent_steps ("
                           << getMaxConcurrentSteps() << "), got " << d;
  for (int64_t g : getGrid())
    if (g <= 0 && !ShapedType::isDynamic(g))
      return emitOpError() << "pipeline grid sizes must be positive";
  if (static_cast<size_t>(llvm::count_if(getGrid(), ShapedType::isDynamic)) !=
      getDynamicGrid().size())
    return emitOpError() << "needs one dynamic_grid operand per dynamic grid extent";
  for (unsigned i = 0; i < numSpecs; ++i) {
    auto ref = llvm::cast<RefType>(getRefs()[i].getType());
    BlockSpecAttr spec = getSpec(i);
    if (inSpace(ref, MemorySpace::GPUGlobal) == isTpu())
      return emitOpError() << "operand " << i
                           << (isTpu() ? " must be a TPU Ref, as the first one is"
                                       : " must be a Ref in global memory");
    if (isTpu() && getWarpSpecialized())
      return emitOpError() << "TPU pipelines are not warp-specialized";
    if (spec.getRank() != ref.getRank())
      return emitOpError() << "operand " << i << " has rank " << ref.getRank()
                           << " but its block spec has rank " << spec.getRank();
    if (spec.getIndexMap())
      return emitOpError() << "block specs compute their indices in the index_map region";
    if (!isTpu() && llvm::is_contained(spec.getDimKinds(), BlockDimKind::Bounded))
      return emitOpError() << "bounded block dimensions are for TPU pipelines";
  }
  if (getWarpSpecialized() && (!getWgAxis() || !getNumComputeWgs() || !getMemoryThread()))
    return emitOpError() << "a warp-specialized pipeline needs wg_axis, num_compute_wgs and "
                            "memory_thread";
  if (getManualConsumedBarriers() && !getWarpSpecialized())
    return emitOpError() << "manual_consumed_barriers belongs to warp-specialized pipelines";
  if (TypeRange(getInits().getTypes()) != getResultTypes())
    return emitOpError() << "results must have the types of the initial carry";
  return success();
}

LogicalResult PipelineOp::verifyRegions() {
  size_t gridRank = getGrid().size();
  Block &map = getIndexMap().front();
  if (map.getNumArguments() != gridRank ||
      llvm::any_of(map.getArgumentTypes(), [](Type t) { return !t.isInteger(32); }))
    return emitOpError() << "index_map must take one i32 per grid dimension";
  size_t indices = 0;
  for (unsigned i = 0; i < getRefs().size(); ++i)
    indices += getSpec(i).getNumIndexValues();
  Operation *mapYield = map.getTerminator();
  if (mapYield->getNumOperands() != indices ||
      llvm::any_of(mapYield->getOperandTypes(), [](Type t) { return !t.isInteger(32); }))
    return emitOpError() << "index_map must yield " << indices
                         << " i32 block indices (a start and a size for each bounded axis)";
  Block &body = getBody().front();
  size_t consumed = getNumConsumedBarriers();
  size_t expected = gridRank + getRefs().size() + consumed + getInits().size();
  if (body.getNumArguments() != expected)
    return emitOpError() << "body takes " << body.getNumArguments() << " arguments, expected "
                         << expected
                         << " (grid indices, one Ref per operand, the inputs' consumed barriers "
                            "with manual_consumed_barriers, the carry)";
  for (size_t c = 0; c < consumed; ++c)
    if (body.getArgument(gridRank + getRefs().size() + c).getType() != consumedBarrierType())
      return emitOpError() << "body's consumed barriers must be " << consumedBarrierType();
  for (size_t g = 0; g < gridRank; ++g)
    if (!body.getArgument(g).getType().isInteger(32))
      return emitOpError() << "body's first arguments must be the i32 grid indices";
  for (unsigned i = 0; i < getRefs().size(); ++i) {
    auto ref = llvm::dyn_cast<RefType>(body.getArgument(gridRank + i).getType());
    auto operand = llvm::cast<RefType>(getRefs()[i].getType());
    if (!isPipelined(i)) {
      if (ref != operand)
        return emitOpError() << "body argument for operand " << i
                             << " must be the global Ref itself";
      continue;
    }
    bool bufferSpace =
        ref && (isTpu() ? (inSpace(ref, MemorySpace::VMEM) || inSpace(ref, MemorySpace::SMEM))
                        : inSpace(ref, MemorySpace::GPUShared));
    if (!bufferSpace || ref.getShape() != ArrayRef<int64_t>(getSpec(i).getKernelShape()) ||
        ref.getElementType() != operand.getElementType())
      return emitOpError() << "body argument for operand " << i << " must be a "
                           << (isTpu() ? "VMEM or SMEM" : "shared-memory")
                           << " Ref of its block";
  }
  for (size_t c = 0; c < getInits().size(); ++c)
    if (body.getArgument(gridRank + getRefs().size() + consumed + c).getType() !=
        getInits()[c].getType())
      return emitOpError() << "body's carry arguments must have the carry's types";
  if (TypeRange(body.getTerminator()->getOperandTypes()) != getResultTypes())
    return emitOpError() << "body must yield the next carry";
  return success();
}

} // namespace pk

#define GET_OP_CLASSES
#include "ir/PkMosaicGpuOps.cpp.inc"
