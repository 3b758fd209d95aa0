//===- PkTypes.cpp - !pk.ref ----------------------------------------------===//
#include "ir/PkDialect.h"

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

LogicalResult RefType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType,
                              Attribute memorySpace) {
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "Ref dimensions must be positive, got " << d;
  if (!elementType.isIntOrFloat())
    return emitError() << "Ref element type must be an integer or float, got " << elementType;
  if (memorySpace && !llvm::isa<MemorySpaceAttr>(memorySpace))
    return emitError() << "Ref memory space must be a #pk.memory_space, got " << memorySpace;
  return success();
}

Type RefType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute memorySpace;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false, /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(memorySpace))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RefType>(parser.getContext(), shape, elementType, memorySpace);
}

void RefType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t d : getShape())
    printer << d << 'x';
  printer << getElementType();
  if (getMemorySpace())
    printer << ", " << getMemorySpace();
  printer << '>';
}

} // namespace pk
