//===- PkTypes.cpp - !pk.ref ----------------------------------------------===//
#include "ir/PkDialect.h"

#include "ir/SmemTransforms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

#define GET_TYPEDEF_CLASSES
#include "ir/PkTypes.cpp.inc"

using namespace mlir;

namespace pk {

void PkDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/PkTypes.cpp.inc"
      >();
}

int64_t RefType::getNumElements() const {
  assert(!hasDynamicShape() && "the element count of a ragged copy's view is a run-time value");
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

Type RefType::getValueType() const {
  Type element = getElementType();
  // Values are signless; the Ref keeps signedness for I/O.
  if (auto integer = llvm::dyn_cast<IntegerType>(element))
    element = IntegerType::get(getContext(), integer.getWidth());
  if (getShape().empty())
    return element;
  return RankedTensorType::get(getShape(), element);
}

std::optional<MemorySpace> RefType::getSpace() const {
  if (auto space = llvm::dyn_cast_or_null<MemorySpaceAttr>(getMemorySpace()))
    return space.getValue();
  return std::nullopt;
}

LogicalResult RefType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType,
                              Attribute memorySpace, ArrayAttr transforms) {
  for (int64_t d : shape)
    if (d <= 0 && !ShapedType::isDynamic(d))
      return emitError() << "Ref dimensions must be positive, got " << d;
  if (!elementType.isIntOrFloat())
    return emitError() << "Ref element type must be an integer or float, got " << elementType;
  if (memorySpace && !llvm::isa<MemorySpaceAttr>(memorySpace))
    return emitError() << "Ref memory space must be a #pk.memory_space, got " << memorySpace;
  if (transforms && !transforms.empty()) {
    auto space = llvm::dyn_cast_or_null<MemorySpaceAttr>(memorySpace);
    if (!space || space.getValue() != MemorySpace::GPUShared)
      return emitError() << "only shared-memory Refs (#pk.memory_space<shared>) have transforms";
    if (llvm::any_of(shape, ShapedType::isDynamic))
      return emitError() << "a transformed Ref has a static shape";
    std::string why = checkSmemTransforms(shape, elementType, transforms);
    if (!why.empty())
      return emitError() << "invalid transforms " << transforms << ": " << why;
  }
  return success();
}

Type RefType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute memorySpace;
  ArrayAttr transforms;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true, /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(memorySpace))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(transforms))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RefType>(parser.getContext(), shape, elementType, memorySpace,
                                    transforms);
}

void RefType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t d : getShape()) {
    if (ShapedType::isDynamic(d))
      printer << '?';
    else
      printer << d;
    printer << 'x';
  }
  printer << getElementType();
  if (getMemorySpace())
    printer << ", " << getMemorySpace();
  if (hasTransforms())
    printer << ", " << getTransforms();
  printer << '>';
}

//===----------------------------------------------------------------------===//
// !pk.barrier and !pk.semaphore
//===----------------------------------------------------------------------===//

namespace {

ParseResult parseShapeList(AsmParser &parser, SmallVectorImpl<int64_t> &shape) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    int64_t d;
    if (parser.parseInteger(d))
      return failure();
    shape.push_back(d);
    return success();
  });
}

void printShapeList(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  printer << '[';
  llvm::interleaveComma(shape, printer);
  printer << ']';
}

LogicalResult verifyShape(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                          StringRef what) {
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << what << " dimensions must be positive, got " << d;
  return success();
}

} // namespace

int64_t BarrierType::getNumBarriers() const {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

LogicalResult BarrierType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> shape, int64_t numArrivals,
                                  ArrayAttr clusterAxes, bool ordersTensorCore) {
  if (failed(verifyShape(emitError, shape, "barrier array")))
    return failure();
  if (numArrivals < 1)
    return emitError() << "a barrier needs at least one arrival, got " << numArrivals;
  if (clusterAxes)
    for (Attribute a : clusterAxes)
      if (!llvm::isa<StringAttr>(a))
        return emitError() << "cluster axes must be axis names (strings)";
  return success();
}

Type BarrierType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  int64_t arrivals = 1;
  ArrayAttr cluster;
  bool ordersTensorCore = false;
  if (parser.parseLess() || parseShapeList(parser, shape) || parser.parseComma() ||
      parser.parseKeyword("arrivals") || parser.parseInteger(arrivals))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("orders_tensor_core"))) {
      ordersTensorCore = true;
      continue;
    }
    if (parser.parseKeyword("cluster") || parser.parseAttribute(cluster))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BarrierType>(parser.getContext(), shape, arrivals,
                                        cluster ? cluster : ArrayAttr::get(parser.getContext(), {}),
                                        ordersTensorCore);
}

void BarrierType::print(AsmPrinter &printer) const {
  printer << '<';
  printShapeList(printer, getShape());
  printer << ", arrivals " << getNumArrivals();
  if (isClusterBarrier())
    printer << ", cluster " << getClusterAxes();
  if (getOrdersTensorCore())
    printer << ", orders_tensor_core";
  printer << '>';
}

int64_t SemaphoreType::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

LogicalResult SemaphoreType::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> shape, SemaphoreKind) {
  return verifyShape(emitError, shape, "semaphore array");
}

Type SemaphoreType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  SemaphoreKind kind = SemaphoreKind::Regular;
  if (parser.parseLess() || parseShapeList(parser, shape))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef word;
    if (parser.parseKeyword(&word))
      return {};
    std::optional<SemaphoreKind> k = symbolizeSemaphoreKind(word);
    if (!k || *k == SemaphoreKind::Regular) {
      parser.emitError(at, "expected 'barrier' or 'dma'");
      return {};
    }
    kind = *k;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<SemaphoreType>(parser.getContext(), shape, kind);
}

void SemaphoreType::print(AsmPrinter &printer) const {
  printer << '<';
  printShapeList(printer, getShape());
  if (getKind() != SemaphoreKind::Regular)
    printer << ", " << stringifySemaphoreKind(getKind());
  printer << '>';
}

} // namespace pk
