//===- PkGpuDialect.cpp ---------------------------------------------------===//
#include "backends/cuda/ir/PkGpuDialect.h"

#include "ir/PkDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/TypeSwitch.h"

#include "backends/cuda/ir/PkGpuDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "backends/cuda/ir/PkGpuAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "backends/cuda/ir/PkGpuOps.cpp.inc"

namespace pk::gpu {

using namespace mlir;

namespace {

/// Prints layouts once, at the top, as #layout, #layout1, ...: they are
/// long and a kernel uses a handful.
struct PkGpuAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (llvm::isa<LayoutAttr>(attr)) {
      os << "layout";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};

} // namespace

void PkGpuDialect::initialize() {
  addInterfaces<PkGpuAsmInterface>();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "backends/cuda/ir/PkGpuOps.cpp.inc"
      >();
}

void PkGpuDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "backends/cuda/ir/PkGpuAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

namespace {

std::vector<int64_t> encode(const std::vector<Basis> &bases) {
  std::vector<int64_t> out;
  for (const Basis &b : bases)
    out.push_back(b.encode());
  return out;
}

std::vector<Basis> decode(ArrayRef<int64_t> values) {
  std::vector<Basis> out;
  for (int64_t v : values)
    out.push_back(Basis::decode(v));
  return out;
}

/// `[d.b, *, ...]`
ParseResult parseBases(AsmParser &parser, SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalStar())) {
      out.push_back(-1);
      return success();
    }
    // d<dim>b<bit>: bit <bit> of coordinate <dim>.
    StringRef word;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&word))
      return failure();
    int64_t dim, bit;
    size_t b = word.find('b');
    if (!word.starts_with("d") || b == StringRef::npos || word.substr(1, b - 1).getAsInteger(10, dim) ||
        word.substr(b + 1).getAsInteger(10, bit) || bit >= 32)
      return parser.emitError(at, "expected d<dim>b<bit> (as in d1b2) or *");
    out.push_back(dim * 32 + bit);
    return success();
  });
}

void printBases(AsmPrinter &printer, ArrayRef<int64_t> bases) {
  printer << '[';
  llvm::interleaveComma(bases, printer, [&](int64_t v) {
    Basis b = Basis::decode(v);
    if (b.isNone())
      printer << '*';
    else
      printer << 'd' << b.dim << 'b' << b.bit;
  });
  printer << ']';
}

} // namespace

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> shape, regs, lanes, warps;
  auto keyword = [&](StringRef name, SmallVectorImpl<int64_t> &out) -> ParseResult {
    if (parser.parseComma() || parser.parseKeyword(name) || parser.parseEqual())
      return failure();
    return parseBases(parser, out);
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        return parser.parseInteger(shape.emplace_back());
      }) ||
      keyword("regs", regs) || keyword("lanes", lanes) || keyword("warps", warps) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(parser.getContext(), shape, regs, lanes, warps);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getShape(), printer);
  printer << "], regs = ";
  printBases(printer, getRegs());
  printer << ", lanes = ";
  printBases(printer, getLanes());
  printer << ", warps = ";
  printBases(printer, getWarps());
  printer << '>';
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, ArrayRef<int64_t> regs,
                                 ArrayRef<int64_t> lanes, ArrayRef<int64_t> warps) {
  Layout l{std::vector<int64_t>(shape), decode(regs), decode(lanes), decode(warps)};
  std::string why;
  if (!l.isValid(&why))
    return emitError() << "invalid layout: " << why;
  return success();
}

LayoutAttr toAttr(MLIRContext *ctx, const Layout &l) {
  return LayoutAttr::get(ctx, l.shape, encode(l.regs), encode(l.lanes), encode(l.warps));
}

Layout fromAttr(LayoutAttr attr) {
  return Layout{std::vector<int64_t>(attr.getShape()), decode(attr.getRegs()),
                decode(attr.getLanes()), decode(attr.getWarps())};
}

std::optional<Layout> layoutOf(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  if (auto attr = llvm::dyn_cast_or_null<LayoutAttr>(tensor.getEncoding()))
    return fromAttr(attr);
  return std::nullopt;
}

RankedTensorType withLayout(RankedTensorType type, const Layout &layout) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               toAttr(type.getContext(), layout));
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult GlobalRefOp::verify() {
  if (!llvm::isa<LLVM::LLVMPointerType>(getBase().getType()))
    return emitOpError() << "base must be an !llvm.ptr";
  auto ref = llvm::dyn_cast<pk::RefType>(getRef().getType());
  if (!ref)
    return emitOpError() << "must produce a !pk.ref";
  size_t rank = getBlock().size();
  if (getSizes().size() != rank || getOffsets().size() != rank)
    return emitOpError() << "needs one size and one offset per block dimension";
  SmallVector<int64_t> kept;
  for (size_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(getSqueeze(), static_cast<int64_t>(d)))
      kept.push_back(getBlock()[d]);
  if (ArrayRef<int64_t>(kept) != ref.getShape())
    return emitOpError() << "the block without its squeezed dimensions must be the Ref's shape";
  return success();
}

LogicalResult SharedRefOp::verify() {
  auto ref = llvm::dyn_cast<pk::RefType>(getRef().getType());
  if (!ref)
    return emitOpError() << "must produce a !pk.ref";
  if (static_cast<int64_t>(getOffset()) < 0)
    return emitOpError() << "offset must not be negative";
  if (std::optional<int64_t> strips = getStrips()) {
    if (*strips != 0 && *strips != 32 && *strips != 64 && *strips != 128)
      return emitOpError() << "strips must be a swizzle of 0, 32, 64 or 128 bytes, got " << *strips;
    if (ref.getRank() < 2)
      return emitOpError() << "strips lay out 2-D tiles; the Ref has rank " << ref.getRank();
    int64_t period = *strips ? 8 * *strips : 16;
    if (static_cast<int64_t>(getOffset()) % period != 0)
      return emitOpError() << "a buffer stored as " << *strips
                           << "-byte swizzled strips starts at a multiple of " << period;
  }
  return success();
}

namespace {

/// What pkgpu.async_copy and pkgpu.tma_copy share: a window of a global
/// Ref, one offset per dimension, into a shared buffer of its element
/// type and rank, no larger than the source unless padded.
template <typename CopyOp> LogicalResult verifyWindowCopy(CopyOp op) {
  auto src = llvm::dyn_cast<pk::RefType>(op.getSrc().getType());
  auto dst = llvm::dyn_cast<pk::RefType>(op.getDst().getType());
  if (!src || !dst)
    return op.emitOpError() << "copies between !pk.ref values";
  if (src.getSpace() == pk::MemorySpace::GPUShared || dst.getSpace() != pk::MemorySpace::GPUShared)
    return op.emitOpError() << "copies from global into shared memory";
  if (src.getElementType() != dst.getElementType())
    return op.emitOpError() << "copies " << src.getElementType() << " elements into a buffer of "
                            << dst.getElementType();
  if (src.getRank() != dst.getRank() ||
      static_cast<int64_t>(op.getStaticOffsets().size()) != src.getRank())
    return op.emitOpError()
           << "needs one offset per dimension of a source of the destination's rank";
  for (int64_t d = 0; d < src.getRank() && !op.getPadded(); ++d)
    if (dst.getShape()[d] > src.getShape()[d])
      return op.emitOpError() << "copies a window larger than its source (only a padded copy may)";
  return success();
}

} // namespace

LogicalResult AsyncCopyOp::verify() {
  if (failed(verifyWindowCopy(*this)))
    return failure();
  auto dst = llvm::cast<pk::RefType>(getDst().getType());
  unsigned bits = dst.getElementType().getIntOrFloatBitWidth();
  if (bits < 8 || (dst.getShape().back() * bits / 8) % 16 != 0)
    return emitOpError() << "copies rows of a whole number of 16-byte pieces";
  return success();
}

LogicalResult TmaCopyOp::verify() {
  if (failed(verifyWindowCopy(*this)))
    return failure();
  auto barrier = llvm::dyn_cast<pk::BarrierType>(getBarrier().getType());
  if (!barrier)
    return emitOpError() << "completes on a !pk.barrier";
  if (llvm::cast<pk::RefType>(getDst().getType()).getRank() != 2)
    return emitOpError() << "copies a 2-D window into a 2-D buffer";
  if (static_cast<int64_t>(getBarrierIndices().size()) != barrier.getRank())
    return emitOpError() << "needs one index per dimension of its barrier array";
  if (getBoxes().empty() || getBytes() <= 0 || getTensorMap() < 0)
    return emitOpError() << "needs boxes, a byte count and a tensor map parameter";
  for (Attribute box : getBoxes()) {
    auto fields = llvm::dyn_cast<DenseI64ArrayAttr>(box);
    if (!fields || fields.size() < 3)
      return emitOpError() << "describes each box as array<i64: start per array dimension..., "
                              "shared byte>";
  }
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto from = llvm::cast<RankedTensorType>(getSource().getType());
  auto to = llvm::cast<RankedTensorType>(getResult().getType());
  if (from.getShape() != to.getShape() || from.getElementType() != to.getElementType())
    return emitOpError() << "only changes the layout: shapes and element types must match";
  if (!layoutOf(to))
    return emitOpError() << "result must carry a #pkgpu.layout";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getResult().getType())
    return getSource();
  return {};
}

} // namespace pk::gpu
