//===- LowerMemory.cpp - Loads and stores through Refs --------------------===//
//
// A Ref is a block of an array in global memory (or a scratch buffer in
// shared memory). Each thread loads or stores the elements its layout
// gives it, one address each, with the semantics of the reference
// interpreter: a window's start is clamped (plain indexing) or the Ref is
// padded by the window (pl.load / pl.store); elements outside the Ref or
// outside the array read as padding (NaN, INT_MIN, False) and are never
// written; masked-off loads take `other`. Stores to memory that other
// accesses of the kernel may touch are fenced by barriers.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Async.h"
#include "backends/cuda/Distribute.h"
#include "backends/cuda/KnownBits.h"
#include "backends/cuda/LowerMosaicGpu.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// Row-major strides of `sizes`.
SmallVector<Value> stridesOf(Emitter &e, ArrayRef<Value> sizes) {
  SmallVector<Value> strides(sizes.size());
  Value stride = e.index(1);
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    if (d > 0)
      stride = e.mul(stride, sizes[d]);
  }
  return strides;
}

/// A window of a Ref, clamped as the interpreter clamps it.
struct Window {
  SmallVector<Value> start;         ///< per Ref dimension (index)
  SmallVector<int64_t> strides;     ///< per Ref dimension
  SmallVector<unsigned> valueDims;  ///< Ref dimension of each value dimension
  bool padded = false;
};

template <typename OpT>
Window windowOf(Emitter &e, OpT op, const RefInfo &ref) {
  Window w;
  w.padded = op.getPadded() || op.getMask();
  ArrayRef<int64_t> staticOffsets = op.getStaticOffsets();
  unsigned dynamic = 0;
  for (size_t j = 0; j < ref.refShape.size(); ++j) {
    int64_t size = op.getSizes()[j], stride = op.getStrides()[j];
    int64_t span = (size - 1) * stride + 1;
    int64_t extent = w.padded ? ref.refShape[j] + span : ref.refShape[j];
    w.strides.push_back(stride);
    if (!llvm::is_contained(op.getSqueeze(), static_cast<int64_t>(j)))
      w.valueDims.push_back(static_cast<unsigned>(j));
    if (!ShapedType::isDynamic(staticOffsets[j])) {
      int64_t start = staticOffsets[j];
      if (start < 0)
        start += extent;
      w.start.push_back(e.index(std::max<int64_t>(0, std::min(start, extent - span))));
      continue;
    }
    // lax.dynamic_slice: count a negative start from the end, then clamp.
    Value start = e.values.lookup(op.getOffsets()[dynamic++]);
    Value negative = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::slt, start, e.index(0));
    start = arith::SelectOp::create(e.b, e.loc, negative,
                                    arith::AddIOp::create(e.b, e.loc, start, e.index(extent)), start);
    start = arith::MaxSIOp::create(e.b, e.loc, e.index(0),
                                   arith::MinSIOp::create(e.b, e.loc, start, e.index(extent - span)));
    w.start.push_back(start);
  }
  return w;
}

/// Where an element of a Ref lives, and whether it may be touched.
struct Address {
  Value pointer;
  Value valid;  ///< null: always
  Value linear; ///< the element's index from the array's (or scratch's) start
  Value innermost; ///< its coordinate along the array's innermost dimension
};

/// The address of the element at `refCoordinate`, with `checkRef` when the
/// coordinate may lie past the Ref's end.
Address addressOf(Emitter &e, const RefInfo &ref, ArrayRef<Value> refCoordinate, bool checkRef) {
  Address a;
  for (size_t j = 0; j < refCoordinate.size() && checkRef; ++j)
    a.valid = e.andOf(a.valid, e.below(refCoordinate[j], e.index(ref.refShape[j])));
  SmallVector<Value> arrayCoordinate(ref.offsets.begin(), ref.offsets.end());
  for (size_t j = 0; j < refCoordinate.size(); ++j)
    arrayCoordinate[ref.refToArray[j]] = e.add(ref.offsets[ref.refToArray[j]], refCoordinate[j]);
  Value linear = e.index(0);
  for (size_t d = 0; d < arrayCoordinate.size(); ++d) {
    if (!ref.shared) // the block may overhang the array: outside is padding
      a.valid = e.andOf(a.valid, e.below(arrayCoordinate[d], ref.sizes[d]));
    linear = e.add(linear, e.mul(arrayCoordinate[d], ref.strides[d]));
  }
  a.linear = linear;
  a.innermost = arrayCoordinate.empty() ? Value() : arrayCoordinate.back();
  a.pointer = ref.shared && ref.strips >= 0 ? e.refPointer(ref, arrayCoordinate)
              : ref.shared ? e.sharedPointer(e.index(ref.sharedOffset), ref.element, linear)
                           : e.globalPointer(ref.base, ref.element, linear);
  return a;
}

/// How far along Ref dimension w.valueDims[i] a value element whose
/// coordinate there is `c` lies from the window's start.
Value windowStep(Emitter &e, const Window &w, size_t i, Value c) {
  return e.mul(c, e.index(w.strides[w.valueDims[i]]));
}

/// The Ref coordinate of a value element whose coordinate is `c`.
SmallVector<Value> refCoordinate(Emitter &e, const Window &w, ArrayRef<Value> c) {
  SmallVector<Value> r(w.start.begin(), w.start.end());
  for (size_t i = 0; i < w.valueDims.size(); ++i) {
    unsigned j = w.valueDims[i];
    r[j] = e.add(w.start[j], windowStep(e, w, i, c[i]));
  }
  return r;
}

Value elementOf(Emitter &e, Value v, int64_t k) {
  return llvm::isa<VectorType>(v.getType()) ? e.extract(v, k) : v;
}

/// Every register of a value (one for a scalar) with its coordinate.
template <typename F>
void forEachElement(Emitter &e, Type type, F f) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    f(0, SmallVector<Value>{}, Value());
    return;
  }
  Layout layout = *layoutOf(tensor);
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    SmallVector<Value> coordinates = e.coordinates(layout, k);
    Value inShape = e.inShape(layout, tensor.getShape(), k);
    f(k, coordinates, inShape);
  }
}

/// Scalar stores happen in thread 0 only (lane 0 of each warp in
/// warp-level code); a block value's in its owners.
Value storingThread(Emitter &e, Type valueType) {
  if (auto layout = layoutOf(valueType))
    return e.isOwner(*layout);
  Value id = e.warpLevel ? e.laneId() : e.threadId();
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, id, e.index(0));
}

Value assembled(Emitter &e, Type type, ArrayRef<Value> elements) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return e.fromElements(e.vectorType(tensor), elements);
  return elements.front();
}

/// How many registers of a value in `layout` the window puts side by side
/// in memory, up to 16 bytes: the layout's first register bits must walk
/// the last value dimension, which must be the array's innermost one with
/// stride 1. 1 when there is nothing to vectorize.
int64_t vectorWidth(const Layout &layout, const RefInfo &ref, const Window &w, Type element) {
  if (element.isInteger(1) || w.valueDims.empty())
    return 1;
  unsigned lastValueDim = static_cast<unsigned>(w.valueDims.size() - 1);
  unsigned refDim = w.valueDims.back();
  if (refDim + 1 != ref.refShape.size() || ref.refToArray[refDim] + 1 != ref.sizes.size() ||
      w.strides[refDim] != 1)
    return 1;
  int64_t width = 1, limit = 16 / elementBytes(element);
  for (size_t r = 0; r < layout.regs.size() && width < limit; ++r) {
    if (layout.regs[r] != Basis{static_cast<int>(lastValueDim), static_cast<int>(r)})
      break;
    width *= 2;
  }
  return width;
}

/// Register k of a value in `layout`: where its element lives and
/// whether it may be touched.
struct Element {
  Address address;
  Value valid; ///< null: always
};

Element elementAt(Emitter &e, const RefInfo &ref, const Window &w, const Layout &layout,
                  RankedTensorType tensor, int64_t k) {
  Element element;
  element.address = addressOf(e, ref, refCoordinate(e, w, e.coordinates(layout, k)), w.padded);
  element.valid = e.andOf(e.inShape(layout, tensor.getShape(), k), element.address.valid);
  return element;
}

/// Whether `v` is a multiple of `width` (a power of two), as code.
Value isMultiple(Emitter &e, Value v, int64_t width) {
  return arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq,
                               arith::AndIOp::create(e.b, e.loc, v, e.index(width - 1)),
                               e.index(0));
}

/// Whether the array's row pitch is a multiple of `width` elements (every
/// outer stride is a multiple of it then): an element is `width`-aligned
/// exactly when its innermost coordinate is. Asked once per access, not
/// per group; null when known (scratch, a constant pitch).
Value pitchAligned(Emitter &e, const RefInfo &ref, int64_t width) {
  if (ref.strides.size() < 2 || knownMultipleOf(ref.strides[ref.strides.size() - 2], width))
    return Value();
  return isMultiple(e, ref.strides[ref.strides.size() - 2], width);
}

/// Registers k0 .. k0 + width - 1 of a value in `layout`, adjacent in
/// memory. The group may be accessed at once when every element is valid
/// (validity is a range test per dimension, so the first and last decide)
/// and the first is aligned to the group's size (buffers are 16-byte
/// aligned): `whole`, null when that is known while compiling. The other
/// elements' addresses are made only where they are used, by groupElement.
struct Group {
  Element first, last;
  Value whole;
};

Group groupAt(Emitter &e, const RefInfo &ref, const Window &w, const Layout &layout,
              RankedTensorType tensor, int64_t k0, int64_t width, Value pitchIsAligned) {
  Group g;
  g.first = elementAt(e, ref, w, layout, tensor, k0);
  g.last = elementAt(e, ref, w, layout, tensor, k0 + width - 1);
  Value innermost = g.first.address.innermost;
  Value aligned = knownMultipleOf(innermost, width) ? Value() : isMultiple(e, innermost, width);
  Value endsValid = e.andOf(g.first.valid, g.last.valid);
  g.whole = e.andOf(endsValid, e.andOf(pitchIsAligned, aligned));
  return g;
}

/// Element k0 + t of a group, made at the builder's insertion point.
Element groupElement(Emitter &e, const Group &g, const RefInfo &ref, const Window &w,
                     const Layout &layout, RankedTensorType tensor, int64_t k0, int64_t width,
                     int64_t t) {
  if (t == 0)
    return g.first;
  if (t == width - 1)
    return g.last;
  return elementAt(e, ref, w, layout, tensor, k0 + t);
}

} // namespace

LogicalResult recordGlobalRef(Emitter &e, GlobalRefOp op) {
  RefInfo ref;
  ref.base = e.values.lookup(op.getBase());
  auto type = llvm::cast<pk::RefType>(op.getType());
  ref.element = type.getElementType();
  ref.refShape.assign(type.getShape().begin(), type.getShape().end());
  for (Value v : op.getSizes())
    ref.sizes.push_back(e.values.lookup(v));
  for (Value v : op.getOffsets())
    ref.offsets.push_back(e.values.lookup(v));
  ref.block.assign(op.getBlock().begin(), op.getBlock().end());
  for (unsigned d = 0; d < ref.block.size(); ++d)
    if (!llvm::is_contained(op.getSqueeze(), static_cast<int64_t>(d)))
      ref.refToArray.push_back(d);
  ref.strides = stridesOf(e, ref.sizes);
  if (auto arg = llvm::dyn_cast<BlockArgument>(op.getBase()))
    ref.memoryClass = e.paramClass[arg.getArgNumber()];
  e.refs[op.getResult().getAsOpaquePointer()] = ref;
  return success();
}

LogicalResult recordSharedRef(Emitter &e, SharedRefOp op) {
  RefInfo ref;
  ref.shared = true;
  ref.sharedOffset = static_cast<int64_t>(op.getOffset());
  auto type = llvm::cast<pk::RefType>(op.getType());
  ref.element = type.getElementType();
  ref.refShape.assign(type.getShape().begin(), type.getShape().end());
  for (int64_t d : ref.refShape) {
    ref.sizes.push_back(e.index(d));
    ref.offsets.push_back(e.index(0));
    ref.block.push_back(d);
    ref.refToArray.push_back(static_cast<unsigned>(ref.refToArray.size()));
  }
  ref.strides = stridesOf(e, ref.sizes);
  ref.arrayShape = ref.refShape;
  if (std::optional<int64_t> strips = op.getStrips())
    ref.strips = *strips;
  ref.memoryClass = sharedMemoryClass(op);
  e.refs[op.getResult().getAsOpaquePointer()] = ref;
  return success();
}

LogicalResult lowerLoad(Emitter &e, pk::LoadOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  Window w = windowOf(e, op, ref);
  Type valueType = llvm::isa<RankedTensorType>(op.getType())
                       ? llvm::cast<RankedTensorType>(op.getType()).getElementType()
                       : op.getType();
  Value mask = op.getMask() ? e.values.lookup(op.getMask()) : Value();
  Value other = op.getOther() ? e.values.lookup(op.getOther()) : Value();
  Value padding = e.paddingValue(ref.element, valueType);
  auto tensor = llvm::dyn_cast<RankedTensorType>(op.getType());
  int64_t width = tensor && !mask && ref.element == valueType
                      ? vectorWidth(*layoutOf(tensor), ref, w, valueType)
                      : 1;
  if (width > 1) {
    // Adjacent registers as one vector load where the group is whole, one
    // guarded load per element where it is not (at the array's edges).
    Layout layout = *layoutOf(tensor);
    auto groupType = VectorType::get({width}, valueType);
    unsigned alignment = static_cast<unsigned>(width * elementBytes(valueType));
    Value pitchIsAligned = pitchAligned(e, ref, width);
    SmallVector<Value> elements;
    for (int64_t k0 = 0; k0 < layout.numRegisters(); k0 += width) {
      Group group = groupAt(e, ref, w, layout, tensor, k0, width, pitchIsAligned);
      auto wholeLoad = [&] {
        return LLVM::LoadOp::create(e.b, e.loc, groupType, group.first.address.pointer, alignment)
            .getResult();
      };
      Value loaded;
      if (!group.whole) {
        loaded = wholeLoad();
      } else {
        auto branch = scf::IfOp::create(e.b, e.loc, TypeRange{groupType}, group.whole,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(e.b);
        e.b.setInsertionPointToStart(branch.thenBlock());
        scf::YieldOp::create(e.b, e.loc, wholeLoad());
        e.b.setInsertionPointToStart(branch.elseBlock());
        SmallVector<Value> scalars;
        for (int64_t t = 0; t < width; ++t) {
          Element element = groupElement(e, group, ref, w, layout, tensor, k0, width, t);
          scalars.push_back(e.guardedValue(
              element.valid, valueType,
              [&] { return e.loadValue(element.address.pointer, ref.element, valueType); },
              padding));
        }
        scf::YieldOp::create(e.b, e.loc, e.fromElements(groupType, scalars));
        loaded = branch.getResult(0);
      }
      for (int64_t t = 0; t < width; ++t)
        elements.push_back(e.extract(loaded, t));
    }
    e.values.map(op.getResult(), assembled(e, op.getType(), elements));
    return success();
  }
  SmallVector<Value> elements;
  forEachElement(e, op.getType(), [&](int64_t k, ArrayRef<Value> c, Value inside) {
    Value selected = mask ? elementOf(e, mask, k) : Value();
    Address a = addressOf(e, ref, refCoordinate(e, w, c), w.padded);
    Value fallback = padding;
    if (selected && other)
      fallback = arith::SelectOp::create(e.b, e.loc, selected, padding, elementOf(e, other, k));
    Value valid = e.andOf(e.andOf(inside, selected), a.valid);
    elements.push_back(e.guardedValue(
        valid, valueType, [&] { return e.loadValue(a.pointer, ref.element, valueType); }, fallback));
  });
  e.values.map(op.getResult(), assembled(e, op.getType(), elements));
  return success();
}

namespace {

/// What windowOf reads of a load, for an async copy (cp.async or TMA):
/// the window has the destination's shape, unit strides, no squeezed
/// dimensions.
template <typename CopyOp> struct CopyWindow {
  CopyOp op;
  SmallVector<int64_t> sizes, strides;
  bool getPadded() { return op.getPadded(); }
  Value getMask() const { return Value(); }
  ArrayRef<int64_t> getStaticOffsets() { return op.getStaticOffsets(); }
  ArrayRef<int64_t> getSizes() const { return sizes; }
  ArrayRef<int64_t> getStrides() const { return strides; }
  ArrayRef<int64_t> getSqueeze() const { return {}; }
  OperandRange getOffsets() { return op.getOffsets(); }
};

} // namespace

namespace {

/// The threads copy `op`'s window with cp.async (pkgpu.async_copy; the
/// fallback of a pkgpu.tma_copy).
template <typename CopyOp> LogicalResult copyByCpAsync(Emitter &e, CopyOp op) {
  const RefInfo &src = refOf(e, op.getSrc()), &dst = refOf(e, op.getDst());
  auto type = llvm::cast<pk::RefType>(op.getDst().getType());
  if (type.getRank() != 2 || src.shared || !dst.shared)
    return e.fail(op, "the CUDA backend copies 2-D windows of global Refs into shared memory "
                      "asynchronously; this copy is not one");
  CopyWindow<CopyOp> spec{op, SmallVector<int64_t>(type.getShape()), SmallVector<int64_t>(2, 1)};
  Window w = windowOf(e, spec, src);
  Type element = type.getElementType();
  int64_t bytes = elementBytes(element), perPiece = 16 / bytes;
  int64_t rows = type.getShape()[0], piecesPerRow = type.getShape()[1] / perPiece;
  int64_t pieces = rows * piecesPerRow, threads = static_cast<int64_t>(e.numWarps) * 32;
  unsigned rank = static_cast<unsigned>(src.sizes.size());
  unsigned columnDim = src.refToArray.back();
  Value zero = e.constant(element, 0);

  // The window's first element, where a copy in a K loop moves from step
  // to step: its address is computed once a copy, and each piece adds its
  // place in the window, which depends on the thread alone (LLVM hoists
  // it out of the loop). Computed whole for every piece, the address
  // cost six 64-bit instructions a piece (LLVM cannot carry it from step
  // to step: it does not know the loop index's arithmetic never wraps).
  SmallVector<Value> windowStart(src.offsets.begin(), src.offsets.end());
  Value windowLinear = e.index(0);
  for (size_t j = 0; j < w.start.size(); ++j)
    windowStart[src.refToArray[j]] = e.add(src.offsets[src.refToArray[j]], w.start[j]);
  for (unsigned d = 0; d < rank; ++d)
    windowLinear = e.add(windowLinear, e.mul(windowStart[d], src.strides[d]));
  Value windowBase = e.globalPointer(src.base, element, windowLinear);

  // Each thread copies 16-byte pieces of rows; consecutive threads take
  // consecutive pieces of a row (coalesced reads). `fast`: one cp.async a
  // piece, all 16 bytes or (outside the array) none, zero-filled; else
  // element by element.
  auto rowOf = [&](Value piece) {
    return arith::DivUIOp::create(e.b, e.loc, piece, e.index(piecesPerRow));
  };
  auto columnOf = [&](Value piece) {
    return arith::MulIOp::create(e.b, e.loc,
                                 arith::RemUIOp::create(e.b, e.loc, piece, e.index(piecesPerRow)),
                                 e.index(perPiece));
  };
  // `from`, when given, is the piece's source address (else computed).
  // Returns it, for the next piece to start from.
  auto copyPiece = [&](Value row, Value column, Value from, bool fast) -> Value {
    // The piece's element coordinate in the window, per array dimension.
    SmallVector<Value> step(rank, e.index(0));
    Value c[2] = {row, column};
    for (size_t i = 0; i < w.valueDims.size(); ++i)
      step[src.refToArray[w.valueDims[i]]] = windowStep(e, w, i, c[i]);
    // The piece's row is in the array (every dimension but the
    // columns'); how many of its elements are, if any. (addressOf's validity
    // would fold the first column in: the same values, but ptxas then
    // gives the benchmark matmul 249 registers instead of 204.)
    Value rowInside, pieceLinear = e.index(0), remaining;
    for (unsigned d = 0; d < rank; ++d) {
      Value at = e.add(windowStart[d], step[d]);
      if (d != columnDim)
        rowInside = e.andOf(rowInside, e.below(at, src.sizes[d]));
      else
        remaining = arith::SubIOp::create(e.b, e.loc, src.sizes[d], at);
      if (!from)
        pieceLinear = e.add(pieceLinear, e.mul(step[d], src.strides[d]));
    }
    if (!from)
      from = e.globalPointer(windowBase, element, pieceLinear);
    Value to = addressOf(e, dst, {row, column}, false).pointer;
    if (fast) {
      // The fast path's pieces are whole: inside the array or wholly
      // outside it (the array's rows are whole pieces too), the latter
      // copying nothing and zero-filling all 16 bytes. cp.async then
      // reads nothing from its address (as Triton's masked copies do),
      // which is left as computed: choosing a safe one cost two selects
      // a piece, and a source size other than 0 or 16 a piece's worth
      // of address arithmetic in ptxas's code.
      Value inside = e.andOf(rowInside, arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::sgt,
                                                              remaining, e.index(0)));
      Value count = arith::SelectOp::create(e.b, e.loc, inside, e.index(perPiece), e.index(0));
      Value size = arith::IndexCastOp::create(
          e.b, e.loc, e.b.getI32Type(), arith::MulIOp::create(e.b, e.loc, count, e.index(bytes)));
      NVVM::CpAsyncOp::create(e.b, e.loc, to, from, e.b.getI32IntegerAttr(16),
                              NVVM::LoadCacheModifierKindAttr::get(e.b.getContext(),
                                                                   NVVM::LoadCacheModifierKind::CG),
                              size);
      return from;
    }
    for (int64_t t = 0; t < perPiece; ++t) {
      Value inside = e.andOf(rowInside, arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::slt,
                                                              e.index(t), remaining));
      // A piece is 16 contiguous bytes on both sides (a swizzle moves
      // whole pieces): element t is t elements past the first.
      Value at = t ? e.globalPointer(from, element, e.index(t)) : from;
      Value v = e.guardedValue(inside, element, [&] { return e.loadValue(at, element, element); }, zero);
      e.storeValue(v, t ? e.globalPointer(to, element, e.index(t)) : to, element);
    }
    return from;
  };
  auto copyPieces = [&](bool fast) {
    if (!fast) {
      // Rare (rows not 16-byte aligned): a loop over the thread's pieces,
      // not unrolled, keeps the code (and the compile time) small.
      auto loop = scf::ForOp::create(e.b, e.loc, e.index(0), e.index(pieces), e.index(threads));
      OpBuilder::InsertionGuard guard(e.b);
      e.b.setInsertionPoint(loop.getBody()->getTerminator());
      Value piece = arith::AddIOp::create(e.b, e.loc, e.ctaThreadId(), loop.getInductionVar());
      Value inRange = pieces % threads == 0
                          ? Value()
                          : arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ult, piece,
                                                  e.index(pieces)).getResult();
      e.guarded(inRange, [&] {
        Value row = rowOf(piece);
        Value column = columnOf(piece);
        copyPiece(row, column, Value(), false);
      });
      return;
    }
    // When the CTA's threads span whole rows, a thread's next piece is in
    // the same column, `rowsApart` rows down: its address is the last
    // one's plus a constant (one 64-bit add, not an address from scratch).
    bool sameColumn = threads % piecesPerRow == 0 && w.valueDims.size() == 2;
    int64_t rowsApart = threads / piecesPerRow;
    Value rowStride;
    if (sameColumn) {
      unsigned rowRefDim = w.valueDims[0];
      rowStride = arith::MulIOp::create(e.b, e.loc, src.strides[src.refToArray[rowRefDim]],
                                        e.index(rowsApart * w.strides[rowRefDim]));
    }
    Value row = rowOf(e.ctaThreadId()), column = columnOf(e.ctaThreadId()), from;
    for (int64_t first = 0; first < pieces; first += threads) {
      Value piece = arith::AddIOp::create(e.b, e.loc, e.ctaThreadId(), e.index(first));
      if (first && sameColumn) {
        row = arith::AddIOp::create(e.b, e.loc, row, e.index(rowsApart));
        from = e.globalPointer(from, element, rowStride);
      } else if (first) {
        row = rowOf(piece);
        column = columnOf(piece);
        from = Value();
      }
      Value inRange = first + threads <= pieces
                          ? Value()
                          : arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::ult, piece,
                                                  e.index(pieces)).getResult();
      // Only the last round can be guarded (pieces run out in it), and
      // its address does not leave its branch.
      if (inRange)
        e.guarded(inRange, [&] { copyPiece(row, column, from, true); });
      else
        from = copyPiece(row, column, from, true);
    }
  };

  // Pieces are contiguous in the array when the window's rows run along
  // its innermost dimension, and 16-byte aligned when the window's first
  // element and the row pitch are whole pieces (the runtime passes
  // 16-byte aligned arrays); whole (inside the array or out of it) when
  // the array's rows are whole pieces too, which a contiguous array's
  // aligned pitch makes them. A condition of the whole copy, tested once.
  if (columnDim != rank - 1) {
    copyPieces(false);
    return success();
  }
  Value pitch = src.strides[src.refToArray.front()];
  Value misalignment = arith::OrIOp::create(
      e.b, e.loc, arith::OrIOp::create(e.b, e.loc, windowLinear, pitch), src.sizes[columnDim]);
  Value aligned = arith::CmpIOp::create(
      e.b, e.loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(e.b, e.loc, misalignment, e.index(perPiece - 1)), e.index(0));
  auto branch = scf::IfOp::create(e.b, e.loc, TypeRange{}, aligned, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(e.b);
  e.b.setInsertionPointToStart(branch.thenBlock());
  copyPieces(true);
  e.b.setInsertionPointToStart(branch.elseBlock());
  copyPieces(false);
  return success();
}

} // namespace

LogicalResult lowerAsyncCopy(Emitter &e, AsyncCopyOp op) { return copyByCpAsync(e, op); }

LogicalResult lowerStore(Emitter &e, pk::StoreOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  bool fenced = e.sharedAccessClasses.count(ref.memoryClass) > 0;
  if (fenced)
    e.barrier();
  Window w = windowOf(e, op, ref);
  Value value = e.values.lookup(op.getValue());
  Value mask = op.getMask() ? e.values.lookup(op.getMask()) : Value();
  Value owner = storingThread(e, op.getValue().getType());
  auto tensor = llvm::dyn_cast<RankedTensorType>(op.getValue().getType());
  int64_t width = tensor && !mask && ref.element == tensor.getElementType()
                      ? vectorWidth(*layoutOf(tensor), ref, w, ref.element)
                      : 1;
  if (width > 1) {
    // As loads: one vector store per whole group, else element by element.
    Layout layout = *layoutOf(tensor);
    auto groupType = VectorType::get({width}, ref.element);
    unsigned alignment = static_cast<unsigned>(width * elementBytes(ref.element));
    Value pitchIsAligned = pitchAligned(e, ref, width);
    for (int64_t k0 = 0; k0 < layout.numRegisters(); k0 += width) {
      SmallVector<Value> scalars;
      for (int64_t k = k0; k < k0 + width; ++k)
        scalars.push_back(e.extract(value, k));
      e.guarded(owner, [&] {
        Group group = groupAt(e, ref, w, layout, tensor, k0, width, pitchIsAligned);
        auto wholeStore = [&] {
          LLVM::StoreOp::create(e.b, e.loc, e.fromElements(groupType, scalars),
                                group.first.address.pointer, alignment);
        };
        if (!group.whole) {
          wholeStore();
          return;
        }
        auto branch = scf::IfOp::create(e.b, e.loc, group.whole, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(e.b);
        e.b.setInsertionPointToStart(branch.thenBlock());
        wholeStore();
        e.b.setInsertionPointToStart(branch.elseBlock());
        for (int64_t t = 0; t < width; ++t) {
          Element element = groupElement(e, group, ref, w, layout, tensor, k0, width, t);
          e.guarded(element.valid,
                    [&] { e.storeValue(scalars[t], element.address.pointer, ref.element); });
        }
      });
    }
  } else {
    forEachElement(e, op.getValue().getType(), [&](int64_t k, ArrayRef<Value> c, Value inside) {
      Value selected = mask ? elementOf(e, mask, k) : Value();
      Address a = addressOf(e, ref, refCoordinate(e, w, c), w.padded);
      Value valid = e.andOf(e.andOf(e.andOf(owner, inside), selected), a.valid);
      e.guarded(valid, [&] { e.storeValue(elementOf(e, value, k), a.pointer, ref.element); });
    });
  }
  if (fenced)
    e.barrier();
  return success();
}

namespace {

/// The Ref coordinate of element k of a gather / scatter (i32 indices).
SmallVector<Value> gatheredCoordinate(Emitter &e, ValueRange indices, int64_t k, const RefInfo &ref,
                                      bool clamp, Value &inRef) {
  SmallVector<Value> r;
  for (size_t j = 0; j < indices.size(); ++j) {
    Value c = arith::IndexCastOp::create(e.b, e.loc, e.b.getIndexType(),
                                         elementOf(e, e.values.lookup(indices[j]), k));
    if (clamp) {
      c = arith::MaxSIOp::create(e.b, e.loc, e.index(0),
                                 arith::MinSIOp::create(e.b, e.loc, c, e.index(ref.refShape[j] - 1)));
    } else {
      inRef = e.andOf(inRef, e.below(c, e.index(ref.refShape[j])));
    }
    r.push_back(c);
  }
  return r;
}

} // namespace

LogicalResult lowerTmaCopy(Emitter &e, TmaCopyOp op) {
  const RefInfo &src = refOf(e, op.getSrc()), &dst = refOf(e, op.getDst());
  auto type = llvm::cast<pk::RefType>(op.getDst().getType());
  CopyWindow<TmaCopyOp> spec{op, SmallVector<int64_t>(type.getShape()), SmallVector<int64_t>(2, 1)};
  Window w = windowOf(e, spec, src);
  // The window as a Ref of its own: its offsets are its first element's
  // array coordinates, where the boxes count from.
  RefInfo window = src;
  for (size_t j = 0; j < w.start.size(); ++j)
    window.offsets[src.refToArray[j]] = e.add(src.offsets[src.refToArray[j]], w.start[j]);
  TmaBoxes boxes = tmaBoxes(e, op.getTensorMap(), op.getBoxes(), window, dst);
  Value barrier = barrierAt(e, op.getBarrier(), op.getBarrierIndices()).barrier;
  Value first = isFirstCtaThread(e);
  auto byTma = [&] {
    e.guarded(first, [&] {
      async::mbarrierArriveExpectTx(e.b, e.loc, barrier, e.i32(op.getBytes()));
      for (size_t i = 0; i < boxes.shared.size(); ++i)
        TmaLoadOp::create(e.b, e.loc, boxes.tensorMap, boxes.coordinates[i], boxes.shared[i],
                          barrier, Value());
    });
  };
  if (!op.getUsable()) {
    byTma();
    return success();
  }
  // Where the tensor map cannot be encoded (the runtime passed zeros), the
  // threads copy; the first one still arrives, so that every phase of
  // the barrier counts the same arrivals.
  auto choice =
      scf::IfOp::create(e.b, e.loc, e.values.lookup(op.getUsable()), /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(e.b);
  e.b.setInsertionPointToStart(choice.thenBlock());
  byTma();
  e.b.setInsertionPointToStart(choice.elseBlock());
  if (failed(copyByCpAsync(e, op)))
    return failure();
  e.guarded(first, [&] { async::mbarrierArrive(e.b, e.loc, barrier); });
  return success();
}

LogicalResult lowerGather(Emitter &e, pk::GatherOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  auto type = llvm::cast<RankedTensorType>(op.getType());
  Type valueType = type.getElementType();
  Value mask = op.getMask() ? e.values.lookup(op.getMask()) : Value();
  Value other = op.getOther() ? e.values.lookup(op.getOther()) : Value();
  Value padding = e.paddingValue(ref.element, valueType);
  SmallVector<Value> elements;
  forEachElement(e, type, [&](int64_t k, ArrayRef<Value>, Value inside) {
    Value selected = mask ? elementOf(e, mask, k) : Value();
    Value inRef;
    Address a = addressOf(e, ref, gatheredCoordinate(e, op.getIndices(), k, ref, /*clamp=*/true, inRef),
                          /*checkRef=*/false);
    Value fallback = padding;
    if (selected && other)
      fallback = arith::SelectOp::create(e.b, e.loc, selected, padding, elementOf(e, other, k));
    Value valid = e.andOf(e.andOf(inside, selected), a.valid);
    elements.push_back(e.guardedValue(
        valid, valueType, [&] { return e.loadValue(a.pointer, ref.element, valueType); }, fallback));
  });
  e.values.map(op.getResult(), assembled(e, type, elements));
  return success();
}

LogicalResult lowerScatter(Emitter &e, pk::ScatterOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  bool fenced = e.sharedAccessClasses.count(ref.memoryClass) > 0;
  if (fenced)
    e.barrier();
  Value value = e.values.lookup(op.getValue());
  Value mask = op.getMask() ? e.values.lookup(op.getMask()) : Value();
  Value owner = storingThread(e, op.getValue().getType());
  forEachElement(e, op.getValue().getType(), [&](int64_t k, ArrayRef<Value>, Value inside) {
    Value selected = mask ? elementOf(e, mask, k) : Value();
    Value inRef;
    SmallVector<Value> r = gatheredCoordinate(e, op.getIndices(), k, ref, /*clamp=*/false, inRef);
    Address a = addressOf(e, ref, r, /*checkRef=*/false);
    Value valid = e.andOf(e.andOf(e.andOf(e.andOf(owner, inside), selected), inRef), a.valid);
    e.guarded(valid, [&] { e.storeValue(elementOf(e, value, k), a.pointer, ref.element); });
  });
  if (fenced)
    e.barrier();
  return success();
}

namespace {

LLVM::AtomicBinOp atomicBinOp(pk::AtomicKind kind, Type element) {
  bool isFloat = llvm::isa<FloatType>(element);
  switch (kind) {
  case pk::AtomicKind::Xchg:
    return LLVM::AtomicBinOp::xchg;
  case pk::AtomicKind::Add:
    return isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case pk::AtomicKind::Max: // floats: NaN wins, as jnp.maximum
    return isFloat ? LLVM::AtomicBinOp::fmaximum : LLVM::AtomicBinOp::max;
  case pk::AtomicKind::Min:
    return isFloat ? LLVM::AtomicBinOp::fminimum : LLVM::AtomicBinOp::min;
  case pk::AtomicKind::MaxU:
    return LLVM::AtomicBinOp::umax;
  case pk::AtomicKind::MinU:
    return LLVM::AtomicBinOp::umin;
  case pk::AtomicKind::And:
    return LLVM::AtomicBinOp::_and;
  case pk::AtomicKind::Or:
    return LLVM::AtomicBinOp::_or;
  case pk::AtomicKind::Xor:
    return LLVM::AtomicBinOp::_xor;
  }
  return LLVM::AtomicBinOp::xchg;
}

// Atomics order like Triton's: acquire-release, visible device-wide.
constexpr LLVM::AtomicOrdering kOrdering = LLVM::AtomicOrdering::acq_rel;
constexpr const char *kScope = "device";

/// Only owners performed an atomic; threads holding copies of the same
/// elements get the old values through shared memory.
Value shareWithCopies(Emitter &e, Value result, Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type)) {
    Layout layout = *layoutOf(tensor);
    if (!e.isOwner(layout))
      return result;
    Type element = tensor.getElementType();
    Emitter::Exchange exchange = e.beginSharedExchange(tensor.getNumElements(), element,
                                                       hasPadding(layout, tensor.getShape()));
    auto rowMajor = [&](ArrayRef<Value> c) { return e.linearIndex(c, tensor.getShape()); };
    writeShared(e, result, layout, tensor.getShape(), rowMajor, exchange, element);
    e.barrier();
    return readShared(e, e.vectorType(tensor), layout, tensor.getShape(), rowMajor,
                      exchange.offset);
  }
  int64_t offset = e.beginSharedTemporary(elementBytes(type));
  Value first = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.threadId(), e.index(0));
  e.guarded(first, [&] { e.storeValue(result, e.sharedPointer(e.index(offset), type, e.index(0)), type); });
  e.barrier();
  return e.loadValue(e.sharedPointer(e.index(offset), type, e.index(0)), type, type);
}

} // namespace

LogicalResult lowerAtomicRmw(Emitter &e, pk::AtomicRmwOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  bool fenced = e.sharedAccessClasses.count(ref.memoryClass) > 0;
  if (fenced)
    e.barrier();
  Window w = windowOf(e, op, ref);
  Value value = e.values.lookup(op.getValue());
  Value mask = op.getMask() ? e.values.lookup(op.getMask()) : Value();
  Type valueType = getElementTypeOrSelf(op.getValue().getType());
  Value owner = storingThread(e, op.getValue().getType());
  Value padding = e.paddingValue(ref.element, valueType);
  LLVM::AtomicBinOp binOp = atomicBinOp(op.getKind(), valueType);
  SmallVector<Value> old;
  forEachElement(e, op.getValue().getType(), [&](int64_t k, ArrayRef<Value> c, Value inside) {
    Value selected = mask ? elementOf(e, mask, k) : Value();
    Address a = addressOf(e, ref, refCoordinate(e, w, c), /*checkRef=*/true);
    Value valid = e.andOf(e.andOf(e.andOf(owner, inside), selected), a.valid);
    old.push_back(e.guardedValue(
        valid, valueType,
        [&]() -> Value {
          return LLVM::AtomicRMWOp::create(e.b, e.loc, binOp, a.pointer, elementOf(e, value, k),
                                           kOrdering, kScope);
        },
        padding));
  });
  Value result = assembled(e, op.getType(), old);
  if (!op.getResult().use_empty())
    result = shareWithCopies(e, result, op.getType());
  e.values.map(op.getResult(), result);
  if (fenced)
    e.barrier();
  return success();
}

LogicalResult lowerAtomicCas(Emitter &e, pk::AtomicCasOp op) {
  const RefInfo &ref = refOf(e, op.getRef());
  bool fenced = e.sharedAccessClasses.count(ref.memoryClass) > 0;
  if (fenced)
    e.barrier();
  SmallVector<Value> coordinate;
  for (Value v : op.getOffsets())
    coordinate.push_back(e.values.lookup(v));
  Address a = addressOf(e, ref, coordinate, /*checkRef=*/false);
  Type type = op.getType();
  // cmpxchg compares bits: floats go through integers of their width.
  Type bits = llvm::isa<FloatType>(type) ? Type(e.b.getIntegerType(type.getIntOrFloatBitWidth())) : type;
  auto asBits = [&](Value v) {
    return v.getType() == bits ? v : arith::BitcastOp::create(e.b, e.loc, bits, v).getResult();
  };
  Value first = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq, e.threadId(), e.index(0));
  Value old = e.guardedValue(
      e.andOf(first, a.valid), type,
      [&]() -> Value {
        Value expected = asBits(e.values.lookup(op.getCmp()));
        Value desired = asBits(e.values.lookup(op.getValue()));
        auto exchange =
            LLVM::AtomicCmpXchgOp::create(e.b, e.loc, a.pointer, expected, desired, kOrdering,
                                          LLVM::AtomicOrdering::acquire, kScope);
        Value previous = LLVM::ExtractValueOp::create(e.b, e.loc, exchange, ArrayRef<int64_t>{0});
        return previous.getType() == type
                   ? previous
                   : arith::BitcastOp::create(e.b, e.loc, type, previous).getResult();
      },
      e.paddingValue(ref.element, type));
  if (!op.getResult().use_empty())
    old = shareWithCopies(e, old, type);
  e.values.map(op.getResult(), old);
  if (fenced)
    e.barrier();
  return success();
}

} // namespace pk::gpu
