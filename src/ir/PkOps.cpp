//===- PkOps.cpp - Verifiers, folders and custom syntax of pk ops ---------===//
#include "ir/PkDialect.h"
#include "support/DType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace pk {
namespace {

/// The shape of a block value type: a tensor's shape, or {} for a scalar.
ArrayRef<int64_t> valueShape(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

Type valueElementType(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

Type signless(Type type) {
  if (auto integer = llvm::dyn_cast<IntegerType>(type))
    return IntegerType::get(type.getContext(), integer.getWidth());
  return type;
}

/// Checks a symbolic shape map: no dims, the export's symbols, one result
/// per axis, and constant results exactly where the type is static.
LogicalResult verifySymbolicShape(Operation *op, StringRef what, AffineMap map,
                                  RankedTensorType type, unsigned numSymbols) {
  if (!map)
    return op->emitOpError() << what << " has no symbolic shape";
  if (map.getNumDims() != 0 || map.getNumSymbols() != numSymbols)
    return op->emitOpError() << what << " shape " << AffineMapAttr::get(map) << " must take no dims and "
                             << numSymbols << " symbols";
  if (map.getNumResults() != type.getRank())
    return op->emitOpError() << what << " shape " << AffineMapAttr::get(map) << " has "
                             << map.getNumResults() << " dims but the type has rank "
                             << type.getRank();
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    auto constant = llvm::dyn_cast<AffineConstantExpr>(expr);
    int64_t dim = type.getDimSize(i);
    if (constant && dim != constant.getValue())
      return op->emitOpError() << what << " dim " << i << " is " << constant.getValue()
                               << " in its shape but " << dim << " in its type";
    if (!constant && !ShapedType::isDynamic(dim))
      return op->emitOpError() << what << " dim " << i
                               << " is symbolic in its shape but static in its type";
  }
  return success();
}

AffineMap shapeFromAttrs(DictionaryAttr attrs) {
  if (!attrs)
    return {};
  if (auto map = attrs.getAs<AffineMapAttr>(ExportOp::kShapeAttr))
    return map.getValue();
  return {};
}

unsigned enclosingSymbolCount(Operation *op, bool &known) {
  ExportOp exportOp = getEnclosingExport(op);
  known = static_cast<bool>(exportOp);
  return exportOp ? exportOp.getNumSymbols() : 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// ExportOp
//===----------------------------------------------------------------------===//

AffineMap ExportOp::getArgShape(unsigned i) {
  return shapeFromAttrs(getArgAttrDict(i));
}

AffineMap ExportOp::getResultShape(unsigned i) {
  return shapeFromAttrs(getResultAttrDict(i));
}

StringRef ExportOp::getArgName(unsigned i) {
  if (DictionaryAttr attrs = getArgAttrDict(i))
    if (auto name = attrs.getAs<StringAttr>(kNameAttr))
      return name.getValue();
  return "";
}

void ExportOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  for (auto [i, arg] : llvm::enumerate(region.getArguments())) {
    StringRef name = getArgName(i);
    if (!name.empty())
      setNameFn(arg, name);
  }
}

ParseResult ExportOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void ExportOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(printer, *this, /*isVariadic=*/false,
                                           getFunctionTypeAttrName(), getArgAttrsAttrName(),
                                           getResAttrsAttrName());
}

LogicalResult ExportOp::verify() {
  unsigned numSymbols = getNumSymbols();
  llvm::StringSet<> seen;
  for (Attribute a : getSymbols()) {
    StringRef name = llvm::cast<StringAttr>(a).getValue();
    if (name.empty() || !seen.insert(name).second)
      return emitOpError() << "symbol names must be unique and non-empty, got '" << name << "'";
  }
  ArrayRef<Type> inputs = getArgumentTypes();
  SmallVector<bool> bound(numSymbols, false);
  for (unsigned i = 0; i < inputs.size(); ++i) {
    auto type = llvm::dyn_cast<RankedTensorType>(inputs[i]);
    if (!type)
      return emitOpError() << "argument " << i << " must be a ranked tensor";
    AffineMap shape = getArgShape(i);
    if (failed(verifySymbolicShape(*this, "argument " + std::to_string(i), shape, type,
                                   numSymbols)))
      return failure();
    for (AffineExpr e : shape.getResults())
      if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(e))
        bound[symbol.getPosition()] = true;
  }
  for (unsigned s = 0; s < numSymbols; ++s)
    if (!bound[s])
      return emitOpError() << "symbol '" << llvm::cast<StringAttr>(getSymbols()[s]).getValue()
                           << "' is not a dimension of any argument, so it cannot be bound";
  ArrayRef<Type> results = getResultTypes();
  for (unsigned i = 0; i < results.size(); ++i) {
    auto type = llvm::dyn_cast<RankedTensorType>(results[i]);
    if (!type)
      return emitOpError() << "result " << i << " must be a ranked tensor";
    if (failed(verifySymbolicShape(*this, "result " + std::to_string(i), getResultShape(i), type,
                                   numSymbols)))
      return failure();
  }
  Block &entry = getBody().front();
  if (entry.getArgumentTypes() != inputs)
    return emitOpError() << "entry block arguments must match the function type";
  return success();
}

LogicalResult ReturnOp::verify() {
  auto exportOp = (*this)->getParentOfType<ExportOp>();
  if (getResults().getTypes() != exportOp.getResultTypes())
    return emitOpError() << "returns " << getResults().getTypes() << " but the export returns "
                         << exportOp.getResultTypes();
  return success();
}

//===----------------------------------------------------------------------===//
// PallasCallOp
//===----------------------------------------------------------------------===//

SmallVector<BlockSpecAttr> PallasCallOp::getAllSpecs() {
  SmallVector<BlockSpecAttr> specs;
  for (Attribute a : getInSpecs())
    specs.push_back(llvm::cast<BlockSpecAttr>(a));
  for (Attribute a : getOutSpecs())
    specs.push_back(llvm::cast<BlockSpecAttr>(a));
  return specs;
}

void PallasCallOp::getAsmBlockArgumentNames(Region &region, OpAsmSetValueNameFn setNameFn) {
  // Name the kernel's Refs after the kernel function's parameters.
  ArrayAttr names = getKernelArgNamesAttr();
  if (&region != &getKernel() || !names || region.empty())
    return;
  for (auto [arg, name] : llvm::zip(region.getArguments(), names))
    if (!llvm::cast<StringAttr>(name).getValue().empty())
      setNameFn(arg, llvm::cast<StringAttr>(name).getValue());
}

LogicalResult PallasCallOp::verify() {
  bool known = false;
  unsigned numSymbols = enclosingSymbolCount(*this, known);
  AffineMap grid = getGrid();
  unsigned numBounds = getGridBounds().size();
  if (grid.getNumDims() != 0 || grid.getNumSymbols() < numBounds ||
      (known && grid.getNumSymbols() != numSymbols + numBounds))
    return emitOpError() << "grid " << AffineMapAttr::get(grid)
                         << " must take no dims, the export's " << numSymbols
                         << " symbols and one per grid bound (" << numBounds << ")";
  unsigned exportSymbols = grid.getNumSymbols() - numBounds;
  // A bound is a whole axis's size (backends launch or loop on it as it is).
  for (AffineExpr e : grid.getResults())
    for (unsigned s = exportSymbols; s < grid.getNumSymbols(); ++s)
      if (e.isFunctionOfSymbol(s) && e != getAffineSymbolExpr(s, getContext()))
        return emitOpError() << "grid bound " << s - exportSymbols
                             << " must be an axis's size by itself, not part of "
                             << AffineMapAttr::get(grid);
  for (AffineExpr e : grid.getResults())
    if (auto c = llvm::dyn_cast<AffineConstantExpr>(e); c && c.getValue() < 0)
      return emitOpError() << "grid sizes must not be negative";
  uint64_t prefetch = getNumScalarPrefetch();
  if (prefetch > getInputs().size())
    return emitOpError() << "has " << prefetch << " scalar-prefetch operands but only "
                         << getInputs().size() << " inputs";
  if (getInSpecs().size() != getWindowedInputs().size())
    return emitOpError() << "has " << getWindowedInputs().size()
                         << " inputs after the scalar-prefetch ones but " << getInSpecs().size()
                         << " in_specs";
  for (Value input : getInputs().take_front(prefetch))
    if (!llvm::cast<RankedTensorType>(input.getType()).hasStaticShape())
      return emitOpError() << "scalar-prefetch operands must have static shapes";
  if (getOutSpecs().size() != getOutputs().size() || getOutShapes().size() != getOutputs().size())
    return emitOpError() << "needs one out_spec and one out_shape per output";

  auto checkSpec = [&](BlockSpecAttr spec, Type type, StringRef what) -> LogicalResult {
    auto tensor = llvm::cast<RankedTensorType>(type);
    if (spec.getRank() != tensor.getRank())
      return emitOpError() << what << " has rank " << tensor.getRank()
                           << " but its block spec has rank " << spec.getRank();
    if (AffineMap map = spec.getIndexMap()) {
      if (map.getNumDims() != grid.getNumResults() || map.getNumSymbols() != exportSymbols)
        return emitOpError() << what << " index map " << AffineMapAttr::get(map)
                             << " must take the " << grid.getNumResults() << " grid indices and "
                             << exportSymbols << " symbols";
    }
    return success();
  };
  for (auto [i, input] : llvm::enumerate(getWindowedInputs()))
    if (failed(checkSpec(getInSpec(i), input.getType(), "input " + std::to_string(i + prefetch))))
      return failure();
  for (auto [i, output] : llvm::enumerate(getOutputs())) {
    if (failed(checkSpec(getOutSpec(i), output.getType(), "output " + std::to_string(i))))
      return failure();
    if (failed(verifySymbolicShape(*this, "output " + std::to_string(i), getOutShape(i),
                                   llvm::cast<RankedTensorType>(output.getType()), exportSymbols)))
      return failure();
  }
  for (Attribute t : getScratchTypes())
    if (!llvm::isa<RefType, SemaphoreType>(llvm::cast<TypeAttr>(t).getValue()))
      return emitOpError() << "scratch types must be !pk.ref or !pk.semaphore types";

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

LogicalResult PallasCallOp::verifyRegions() {
  Block &kernel = getKernelBlock();
  size_t numIn = getInputs().size(), numOut = getOutputs().size();
  size_t expected = numIn + numOut + getScratchTypes().size();
  if (kernel.getNumArguments() != expected)
    return emitOpError() << "kernel takes " << kernel.getNumArguments()
                         << " Refs but the call has " << expected
                         << " operands (inputs, outputs, scratch)";
  SmallVector<BlockSpecAttr> specs = getAllSpecs();
  size_t prefetch = getNumScalarPrefetch();
  for (size_t i = 0; i < expected; ++i) {
    if (i >= numIn + numOut) {
      Type scratch = llvm::cast<TypeAttr>(getScratchTypes()[i - numIn - numOut]).getValue();
      if (scratch != kernel.getArgument(i).getType())
        return emitOpError() << "kernel argument " << i << " has type "
                             << kernel.getArgument(i).getType() << " but scratch buffer is "
                             << scratch;
      continue;
    }
    auto ref = llvm::dyn_cast<RefType>(kernel.getArgument(i).getType());
    if (!ref)
      return emitOpError() << "kernel argument " << i << " must be a !pk.ref";
    if (i < prefetch) {
      auto array = llvm::cast<RankedTensorType>(getInputs()[i].getType());
      if (ref.getShape() != array.getShape() || ref.getElementType() != array.getElementType())
        return emitOpError() << "kernel argument " << i << " has type " << ref
                             << " but scalar-prefetch operand " << i << " is " << array;
      continue;
    }
    Type operand = i < numIn ? getInputs()[i].getType() : getOutputs()[i - numIn].getType();
    Type element = llvm::cast<RankedTensorType>(operand).getElementType();
    BlockSpecAttr spec = specs[i - prefetch];
    if (llvm::is_contained(spec.getDimKinds(), BlockDimKind::Bounded))
      return emitOpError() << "operand " << i
                           << " has a bounded block dimension, which only pipelines take";
    if (ref.getShape() != ArrayRef<int64_t>(spec.getKernelShape()) ||
        ref.getElementType() != element || ref.getMemorySpace() != spec.getMemorySpace())
      return emitOpError() << "kernel argument " << i << " has type " << ref
                           << " but its block spec and operand give shape ("
                           << spec.getKernelShape() << ") of " << element;
  }
  if (!llvm::isa<YieldOp>(kernel.getTerminator()) ||
      kernel.getTerminator()->getNumOperands() != 0)
    return emitOpError() << "kernel must end with a pk.yield of no values";

  unsigned computed = 0;
  for (BlockSpecAttr spec : specs)
    if (!spec.hasAffineIndexMap())
      computed += spec.getRank();
  bool anyComputed = llvm::any_of(specs, [](BlockSpecAttr s) { return !s.hasAffineIndexMap(); });
  Region &indexMap = getIndexMap();
  if (!anyComputed) {
    if (!indexMap.empty())
      return emitOpError() << "has an index_map region but every block spec is affine";
    return success();
  }
  if (indexMap.empty() || !indexMap.hasOneBlock())
    return emitOpError() << "needs a one-block index_map region for its computed block specs";
  Block &block = indexMap.front();
  TypeRange argTypes = block.getArgumentTypes();
  if (argTypes.size() != getGridRank() + prefetch ||
      llvm::any_of(argTypes.take_front(getGridRank()), [](Type t) { return !t.isInteger(32); }) ||
      argTypes.drop_front(getGridRank()) != TypeRange(kernel.getArgumentTypes()).take_front(prefetch))
    return emitOpError() << "index_map region must take one i32 per grid dimension, then the "
                            "kernel's scalar-prefetch Refs";
  auto yield = llvm::dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().size() != computed)
    return emitOpError() << "index_map region must yield " << computed << " block indices";
  return success();
}

//===----------------------------------------------------------------------===//
// Grid and sizes
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, int64_t axis) {
  auto call = op->getParentOfType<PallasCallOp>();
  if (!call)
    return op->emitOpError() << "must be inside a pk.pallas_call";
  if (axis >= call.getGridRank())
    return op->emitOpError() << "axis " << axis << " is out of range for a grid of rank "
                             << call.getGridRank();
  return success();
}

LogicalResult DebugPrintOp::verify() {
  if (getDtypes().size() != getValues().size())
    return emitOpError() << "needs one dtype per value (" << getValues().size() << " values, "
                         << getDtypes().size() << " dtypes)";
  // Count the replacement fields: `{` not doubled, up to its `}`.
  llvm::StringRef format = getFormat();
  size_t fields = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 1 < format.size() && format[i + 1] == '{') {
      ++i;
      continue;
    }
    if (format[i] == '}' && i + 1 < format.size() && format[i + 1] == '}') {
      ++i;
      continue;
    }
    if (format[i] == '{') {
      size_t close = format.find('}', i);
      if (close == llvm::StringRef::npos)
        return emitOpError() << "has an unterminated '{' in its format";
      if (close > i + 1 && format[i + 1] != ':')
        return emitOpError() << "fields must be '{}' or '{:spec}', found '"
                             << format.substr(i, close - i + 1) << "'";
      ++fields;
      i = close;
    } else if (format[i] == '}') {
      return emitOpError() << "has a single '}' in its format";
    }
  }
  if (fields != getValues().size())
    return emitOpError() << "format has " << fields << " fields but there are "
                         << getValues().size() << " values";
  for (mlir::Attribute d : getDtypes())
    if (!parseDType(llvm::cast<StringAttr>(d).getValue()))
      return emitOpError() << "unknown dtype " << d;
  return success();
}

LogicalResult ProgramIdOp::verify() { return verifyAxis(*this, getAxis()); }
LogicalResult NumProgramsOp::verify() { return verifyAxis(*this, getAxis()); }

LogicalResult SymbolicSizeOp::verify() {
  AffineMap expr = getExpr();
  if (expr.getNumDims() != 0 || expr.getNumResults() != 1)
    return emitOpError() << "expression " << AffineMapAttr::get(expr) << " must take no dims and have one result";
  bool known = false;
  unsigned numSymbols = enclosingSymbolCount(*this, known);
  if (known && expr.getNumSymbols() != numSymbols)
    return emitOpError() << "expression must take the export's " << numSymbols << " symbols";
  return success();
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

namespace {

/// Shared checks of a Ref window; returns the window's value shape.
FailureOr<SmallVector<int64_t>> verifyWindow(Operation *op, RefType ref, size_t numDynamic,
                                             ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                                             ArrayRef<int64_t> strides,
                                             ArrayRef<int64_t> squeeze) {
  int64_t rank = ref.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank || static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank) {
    op->emitOpError() << "needs one offset, size and stride per Ref axis (rank " << rank << ")";
    return failure();
  }
  size_t dynamic = llvm::count_if(offsets, ShapedType::isDynamic);
  if (dynamic != numDynamic) {
    op->emitOpError() << "has " << numDynamic << " dynamic offsets but " << dynamic
                      << " dynamic markers";
    return failure();
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] <= 0 || strides[d] <= 0) {
      op->emitOpError() << "sizes and strides must be positive (axis " << d << ")";
      return failure();
    }
    if (!ShapedType::isDynamic(offsets[d]) &&
        (offsets[d] < 0 || offsets[d] + (sizes[d] - 1) * strides[d] >= ref.getShape()[d])) {
      op->emitOpError() << "window [" << offsets[d] << ", size " << sizes[d] << ", stride "
                        << strides[d] << "] is out of bounds for axis " << d << " of size "
                        << ref.getShape()[d];
      return failure();
    }
  }
  int64_t previous = -1;
  for (int64_t d : squeeze) {
    if (d <= previous || d >= rank || sizes[d] != 1) {
      op->emitOpError() << "squeezed axes must be increasing, in range and of size 1";
      return failure();
    }
    previous = d;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(squeeze, d))
      shape.push_back(sizes[d]);
  return shape;
}

LogicalResult verifyMask(Operation *op, Value mask, ArrayRef<int64_t> shape) {
  if (!mask)
    return success();
  if (valueShape(mask.getType()) != shape || !valueElementType(mask.getType()).isInteger(1))
    return op->emitOpError() << "mask must be i1 of the window's shape";
  return success();
}

SmallVector<OpFoldResult> mixedOffsets(OperandRange dynamic, ArrayRef<int64_t> offsets,
                                       MLIRContext *context) {
  SmallVector<OpFoldResult> mixed;
  unsigned next = 0;
  Builder b(context);
  for (int64_t o : offsets) {
    if (ShapedType::isDynamic(o))
      mixed.push_back(dynamic[next++]);
    else
      mixed.push_back(b.getIndexAttr(o));
  }
  return mixed;
}


/// The window of a load or store, checked against the value's type (a
/// scalar for a window with every axis squeezed); its shape on success.
template <typename WindowOp>
FailureOr<SmallVector<int64_t>> verifyWindowValue(WindowOp op, Type type, StringRef what) {
  RefType ref = op.getRefType();
  FailureOr<SmallVector<int64_t>> shape =
      verifyWindow(op, ref, op.getOffsets().size(), op.getStaticOffsets(), op.getSizes(),
                   op.getStrides(), op.getSqueeze());
  if (failed(shape))
    return failure();
  if (valueShape(type) != ArrayRef<int64_t>(*shape) ||
      valueElementType(type) != signless(ref.getElementType()) ||
      (shape->empty() && llvm::isa<RankedTensorType>(type)))
    return op.emitOpError() << what << " " << type << " does not match the window (" << *shape
                            << ") of " << signless(ref.getElementType());
  if (failed(verifyMask(op, op.getMask(), *shape)))
    return failure();
  return shape;
}

} // namespace

SmallVector<OpFoldResult> LoadOp::getMixedOffsets() {
  return mixedOffsets(getOffsets(), getStaticOffsets(), getContext());
}

SmallVector<OpFoldResult> StoreOp::getMixedOffsets() {
  return mixedOffsets(getOffsets(), getStaticOffsets(), getContext());
}

LogicalResult LoadOp::verify() {
  Type type = getResult().getType();
  if (failed(verifyWindowValue(*this, type, "result type")))
    return failure();
  if (Value other = getOther()) {
    if (!getMask())
      return emitOpError() << "'other' needs a mask";
    Type otherType = other.getType();
    if (otherType != type && otherType != valueElementType(type))
      return emitOpError() << "'other' must be a scalar or a value of the result type";
  }
  return success();
}

LogicalResult AtomicRmwOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = verifyWindowValue(*this, getValue().getType(), "value");
  if (failed(shape))
    return failure();
  if (getResult().getType() != getValue().getType())
    return emitOpError() << "returns the old values: its type must be the value's";
  Type element = getRefType().getElementType();
  bool isFloat = llvm::isa<FloatType>(element);
  switch (getKind()) {
  case AtomicKind::And:
  case AtomicKind::Or:
  case AtomicKind::Xor:
  case AtomicKind::MaxU:
  case AtomicKind::MinU:
    if (isFloat)
      return emitOpError() << "'" << stringifyAtomicKind(getKind()) << "' needs an integer Ref";
    break;
  default:
    break;
  }
  return success();
}

LogicalResult AtomicCasOp::verify() {
  RefType ref = getRefType();
  if (static_cast<int64_t>(getOffsets().size()) != ref.getRank())
    return emitOpError() << "needs one index per Ref dimension";
  Type element = signless(ref.getElementType());
  if (getCmp().getType() != element || getValue().getType() != element ||
      getResult().getType() != element)
    return emitOpError() << "compares and swaps values of the Ref's element type " << element;
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyWindowValue(*this, getValue().getType(), "stored value");
}

namespace {

/// Shared checks of gather / scatter coordinates; `shape` is the values'.
LogicalResult verifyCoordinates(Operation *op, RefType ref, OperandRange indices,
                                ArrayRef<int64_t> shape) {
  if (static_cast<int64_t>(indices.size()) != ref.getRank())
    return op->emitOpError() << "needs one index tensor per Ref axis (rank " << ref.getRank()
                             << "), got " << indices.size();
  for (Value index : indices) {
    auto type = llvm::cast<RankedTensorType>(index.getType());
    if (type.getShape() != shape || !type.getElementType().isInteger(32))
      return op->emitOpError() << "index tensors must be i32 of the values' shape (" << shape
                               << "), got " << type;
  }
  return success();
}

} // namespace

LogicalResult GatherOp::verify() {
  auto result = llvm::cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != signless(getRefType().getElementType()))
    return emitOpError() << "result element type must be the Ref's, signless";
  if (failed(verifyCoordinates(*this, getRefType(), getIndices(), result.getShape())) ||
      failed(verifyMask(*this, getMask(), result.getShape())))
    return failure();
  if (Value other = getOther()) {
    if (!getMask())
      return emitOpError() << "'other' needs a mask";
    if (other.getType() != result && other.getType() != result.getElementType())
      return emitOpError() << "'other' must be a scalar or a value of the result type";
  }
  return success();
}

LogicalResult ScatterOp::verify() {
  auto value = llvm::cast<RankedTensorType>(getValue().getType());
  if (value.getElementType() != signless(getRefType().getElementType()))
    return emitOpError() << "stored element type must be the Ref's, signless";
  if (failed(verifyCoordinates(*this, getRefType(), getIndices(), value.getShape())))
    return failure();
  return verifyMask(*this, getMask(), value.getShape());
}

//===----------------------------------------------------------------------===//
// Array structure
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  auto type = llvm::cast<RankedTensorType>(getResult().getType());
  if (static_cast<int64_t>(getDimension()) >= type.getRank())
    return emitOpError() << "dimension " << getDimension() << " is out of range for rank "
                         << type.getRank();
  if (!type.getElementType().isIntOrFloat())
    return emitOpError() << "result must have an integer or float element type";
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  ArrayRef<int64_t> in = valueShape(getOperand().getType());
  auto result = llvm::cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> dims = getBroadcastDimensions();
  if (valueElementType(getOperand().getType()) != result.getElementType())
    return emitOpError() << "operand and result element types differ";
  if (dims.size() != in.size())
    return emitOpError() << "needs one broadcast dimension per operand axis";
  int64_t previous = -1;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d <= previous || d >= result.getRank())
      return emitOpError() << "broadcast dimensions must be increasing and in range";
    if (in[i] != 1 && in[i] != result.getDimSize(d))
      return emitOpError() << "operand axis " << i << " of size " << in[i]
                           << " cannot broadcast to size " << result.getDimSize(d);
    previous = d;
  }
  return success();
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  return {};
}

LogicalResult ReshapeOp::verify() {
  auto count = [](Type t) {
    int64_t n = 1;
    for (int64_t d : valueShape(t))
      n *= d;
    return n;
  };
  if (valueElementType(getOperand().getType()) != valueElementType(getResult().getType()))
    return emitOpError() << "operand and result element types differ";
  if (count(getOperand().getType()) != count(getResult().getType()))
    return emitOpError() << "cannot reshape " << getOperand().getType() << " to "
                         << getResult().getType() << ": element counts differ";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  // A reshape of a reshape is one reshape (`x[0, None]` squeezes, then
  // adds an axis).
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    if (getOperand().getType() != getResult().getType())
      return getResult();
  }
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  return {};
}

LogicalResult BitcastOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  Type from = in.getElementType(), to = out.getElementType();
  if (!from.isIntOrFloat() || !to.isIntOrFloat() || from.isInteger(1) || to.isInteger(1))
    return emitOpError() << "reinterprets integers and floats (not i1), got " << from << " and "
                         << to;
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth)
    return emitOpError() << "is between element widths; " << from << " and " << to << " are both "
                         << fromWidth << " bits (use arith.bitcast)";
  if (std::max(fromWidth, toWidth) % std::min(fromWidth, toWidth) != 0)
    return emitOpError() << "needs one width to be a multiple of the other, got " << fromWidth
                         << " and " << toWidth << " bits";
  if (in.getRank() < 2 || in.getRank() != out.getRank())
    return emitOpError() << "needs an operand and result of one rank, at least 2";
  SmallVector<int64_t> expected(in.getShape());
  int64_t &rows = expected[in.getRank() - 2];
  if (rows * fromWidth % toWidth != 0)
    return emitOpError() << "cannot pack " << rows << " rows of " << fromWidth
                         << "-bit elements into whole " << toWidth << "-bit rows";
  rows = rows * fromWidth / toWidth;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be " << RankedTensorType::get(expected, to);
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError() << "permutation must have one entry per axis";
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError() << "permutation is not a permutation of the axes";
    seen[p] = true;
    if (out.getDimSize(i) != in.getDimSize(p))
      return emitOpError() << "result axis " << i << " must have the size of operand axis " << p;
  }
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "operand and result element types differ";
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (llvm::equal(getPermutation(), llvm::seq<int64_t>(0, getPermutation().size())))
    return getOperand();
  return {};
}

LogicalResult SliceOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> start = getStartIndices(), limit = getLimitIndices(), stride = getStrides();
  if (static_cast<int64_t>(start.size()) != in.getRank() || limit.size() != start.size() ||
      stride.size() != start.size() || out.getRank() != in.getRank())
    return emitOpError() << "needs one start, limit and stride per axis";
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (start[d] < 0 || limit[d] > in.getDimSize(d) || start[d] >= limit[d] || stride[d] <= 0)
      return emitOpError() << "invalid window on axis " << d;
    if (out.getDimSize(d) != (limit[d] - start[d] + stride[d] - 1) / stride[d])
      return emitOpError() << "result axis " << d << " has the wrong size";
  }
  return success();
}

LogicalResult ConcatenateOp::verify() {
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  int64_t dim = getDimension();
  if (dim >= out.getRank())
    return emitOpError() << "dimension out of range";
  int64_t total = 0;
  for (Value v : getOperands()) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getRank() != out.getRank() || t.getElementType() != out.getElementType())
      return emitOpError() << "operands must match the result's rank and element type";
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (d != dim && t.getDimSize(d) != out.getDimSize(d))
        return emitOpError() << "operands differ on axis " << d;
    total += t.getDimSize(dim);
  }
  if (total != out.getDimSize(dim))
    return emitOpError() << "result axis " << dim << " must be the sum of the operands'";
  return success();
}

LogicalResult ButterflyOp::verify() {
  auto type = llvm::cast<RankedTensorType>(getType());
  int64_t dim = getDimension(), distance = getDistance();
  if (dim >= type.getRank())
    return emitOpError() << "dimension out of range";
  if (!llvm::isPowerOf2_64(static_cast<uint64_t>(distance)))
    return emitOpError() << "distance must be a power of two";
  if (type.getDimSize(dim) % (2 * distance) != 0)
    return emitOpError() << "axis " << dim << " (" << type.getDimSize(dim)
                         << ") must be a multiple of twice the distance";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

namespace {

bool kindAccepts(ReductionKind kind, Type element) {
  bool isFloat = llvm::isa<FloatType>(element);
  switch (kind) {
  case ReductionKind::Add:
  case ReductionKind::Mul:
    return true;
  case ReductionKind::MaxF:
  case ReductionKind::MinF:
    return isFloat;
  default:
    return !isFloat;
  }
}

LogicalResult verifyReducedType(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
                                Type result, Type expectedElement) {
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(in[d]);
  if (valueShape(result) != ArrayRef<int64_t>(shape) ||
      valueElementType(result) != expectedElement ||
      (shape.empty() && llvm::isa<RankedTensorType>(result)))
    return op->emitOpError() << "result type " << result << " does not match the reduced shape ("
                             << shape << ") of " << expectedElement;
  return success();
}

} // namespace

LogicalResult ReduceOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  int64_t previous = -1;
  for (int64_t a : getAxes()) {
    if (a <= previous || a >= in.getRank())
      return emitOpError() << "axes must be increasing and in range";
    previous = a;
  }
  if (!kindAccepts(getKind(), in.getElementType()))
    return emitOpError() << "reduction kind '" << stringifyReductionKind(getKind())
                         << "' does not apply to " << in.getElementType();
  return verifyReducedType(*this, in.getShape(), getAxes(), getResult().getType(),
                           in.getElementType());
}

LogicalResult ArgReduceOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getOperand().getType());
  if (static_cast<int64_t>(getAxis()) >= in.getRank())
    return emitOpError() << "axis out of range";
  switch (getKind()) {
  case ReductionKind::MaxF:
  case ReductionKind::MinF:
  case ReductionKind::MaxSI:
  case ReductionKind::MinSI:
  case ReductionKind::MaxUI:
  case ReductionKind::MinUI:
    break;
  default:
    return emitOpError() << "arg_reduce needs a max or min kind";
  }
  if (!kindAccepts(getKind(), in.getElementType()))
    return emitOpError() << "kind does not apply to " << in.getElementType();
  int64_t axis = getAxis();
  return verifyReducedType(*this, in.getShape(), ArrayRef<int64_t>(axis), getResult().getType(),
                           IntegerType::get(getContext(), 32));
}

LogicalResult DotOp::verify() {
  auto lhs = llvm::cast<RankedTensorType>(getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(getRhs().getType());
  auto out = llvm::cast<RankedTensorType>(getResult().getType());
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || out.getRank() != 2)
    return emitOpError() << "operands and result must be 2-D";
  int64_t m = lhs.getDimSize(getTransposeLhs() ? 1 : 0);
  int64_t k = lhs.getDimSize(getTransposeLhs() ? 0 : 1);
  int64_t k2 = rhs.getDimSize(getTransposeRhs() ? 1 : 0);
  int64_t n = rhs.getDimSize(getTransposeRhs() ? 0 : 1);
  if (k != k2)
    return emitOpError() << "contracting dimensions differ: " << k << " vs " << k2;
  if (out.getDimSize(0) != m || out.getDimSize(1) != n)
    return emitOpError() << "result must be " << m << "x" << n;
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError() << "operands must have the same element type";
  if (llvm::isa<FloatType>(lhs.getElementType()) != llvm::isa<FloatType>(out.getElementType()))
    return emitOpError() << "float operands need a float result, integer operands an integer one";
  if (getUnsignedOperands() && !lhs.getElementType().isSignlessInteger())
    return emitOpError() << "unsigned_operands needs integer operands";
  if (getAllowTf32() && !lhs.getElementType().isF32())
    return emitOpError() << "allow_tf32 needs f32 operands";
  return success();
}

} // namespace pk

#define GET_OP_CLASSES
#include "ir/PkOps.cpp.inc"
