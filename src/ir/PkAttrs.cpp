//===- PkAttrs.cpp - #pk.block_spec ---------------------------------------===//
#include "ir/PkDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

#define GET_ATTRDEF_CLASSES
#include "ir/PkAttrs.cpp.inc"

using namespace mlir;

namespace pk {

void PkDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/PkAttrs.cpp.inc"
      >();
}

SmallVector<int64_t> BlockSpecAttr::getKernelShape() const {
  SmallVector<int64_t> shape;
  for (auto [size, kind] : llvm::zip(getBlockShape(), getDimKinds()))
    if (kind != BlockDimKind::Squeezed)
      shape.push_back(size);
  return shape;
}

int64_t BlockSpecAttr::getNumIndexValues() const {
  return getRank() + llvm::count(getDimKinds(), BlockDimKind::Bounded);
}

LogicalResult BlockSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> blockShape, ArrayRef<BlockDimKind> dimKinds,
                                    ArrayRef<int64_t> paddingLow, ArrayRef<int64_t> paddingHigh,
                                    AffineMap indexMap, Attribute memorySpace) {
  size_t rank = blockShape.size();
  if (dimKinds.size() != rank || paddingLow.size() != rank || paddingHigh.size() != rank)
    return emitError() << "block spec arrays must all have one entry per axis";
  for (size_t i = 0; i < rank; ++i) {
    if (blockShape[i] <= 0)
      return emitError() << "block dimension " << i << " must be positive, got " << blockShape[i];
    if (dimKinds[i] == BlockDimKind::Squeezed && blockShape[i] != 1)
      return emitError() << "squeezed block dimension " << i << " must have size 1";
    if (paddingLow[i] < 0 || paddingHigh[i] < 0)
      return emitError() << "padding of block dimension " << i << " must not be negative";
    if (dimKinds[i] != BlockDimKind::Element && (paddingLow[i] || paddingHigh[i]))
      return emitError() << "only element dimensions may be padded (dimension " << i << ")";
  }
  if (indexMap && llvm::is_contained(dimKinds, BlockDimKind::Bounded))
    return emitError() << "bounded block dimensions take their start and size from a computed "
                          "index map";
  if (indexMap && indexMap.getNumResults() != rank)
    return emitError() << "index map returns " << indexMap.getNumResults()
                       << " indices for a block of rank " << rank;
  if (memorySpace && !llvm::isa<MemorySpaceAttr>(memorySpace))
    return emitError() << "memory space must be a #pk.memory_space";
  return success();
}

Attribute BlockSpecAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> shape, low, high;
  SmallVector<BlockDimKind> kinds;
  auto parseDim = [&]() -> ParseResult {
    int64_t size = 1, lo = 0, hi = 0;
    BlockDimKind kind = BlockDimKind::Blocked;
    if (succeeded(parser.parseOptionalKeyword("squeezed"))) {
      kind = BlockDimKind::Squeezed;
    } else if (succeeded(parser.parseOptionalKeyword("bounded"))) {
      kind = BlockDimKind::Bounded;
      if (parser.parseInteger(size))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("element"))) {
      kind = BlockDimKind::Element;
      if (parser.parseInteger(size))
        return failure();
      if (succeeded(parser.parseOptionalKeyword("pad")) &&
          (parser.parseInteger(lo) || parser.parseInteger(hi)))
        return failure();
    } else if (parser.parseInteger(size)) {
      return failure();
    }
    shape.push_back(size);
    kinds.push_back(kind);
    low.push_back(lo);
    high.push_back(hi);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma())
    return {};
  AffineMap map;
  if (failed(parser.parseOptionalKeyword("computed"))) {
    AffineMapAttr mapAttr;
    if (parser.parseAttribute(mapAttr))
      return {};
    map = mapAttr.getValue();
  }
  Attribute memorySpace;
  if (succeeded(parser.parseOptionalComma())) {
    MemorySpace space;
    StringRef keyword;
    if (parser.parseKeyword("memory_space") || parser.parseEqual() ||
        parser.parseKeyword(&keyword))
      return {};
    std::optional<MemorySpace> parsed = symbolizeMemorySpace(keyword);
    if (!parsed) {
      parser.emitError(parser.getCurrentLocation(), "unknown memory space '") << keyword << "'";
      return {};
    }
    space = *parsed;
    memorySpace = MemorySpaceAttr::get(parser.getContext(), space);
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BlockSpecAttr>(parser.getContext(), shape, kinds, low, high, map,
                                          memorySpace);
}

void BlockSpecAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  for (size_t i = 0; i < getBlockShape().size(); ++i) {
    if (i)
      printer << ", ";
    switch (getDimKinds()[i]) {
    case BlockDimKind::Blocked:
      printer << getBlockShape()[i];
      break;
    case BlockDimKind::Squeezed:
      printer << "squeezed";
      break;
    case BlockDimKind::Bounded:
      printer << "bounded " << getBlockShape()[i];
      break;
    case BlockDimKind::Element:
      printer << "element " << getBlockShape()[i];
      if (getPaddingLow()[i] || getPaddingHigh()[i])
        printer << " pad " << getPaddingLow()[i] << ' ' << getPaddingHigh()[i];
      break;
    }
  }
  printer << "], ";
  if (getIndexMap())
    printer << AffineMapAttr::get(getIndexMap());
  else
    printer << "computed";
  if (auto space = llvm::dyn_cast_or_null<MemorySpaceAttr>(getMemorySpace()))
    printer << ", memory_space = " << stringifyMemorySpace(space.getValue());
  printer << '>';
}

} // namespace pk
