//===- RefBitcast.cpp - pltpu.bitcast and Ref.bitcast views ----------------===//
//
// pltpu.bitcast(x, ty) reinterprets bits; between element widths it packs
// consecutive rows of the second-minor axis into rows of the wider type
// (pk.bitcast), as Pallas does on a TPU. `x_ref.bitcast(ty)` is a view of
// a Ref with the same reinterpretation: reading a window of it reads the
// rows of the Ref that hold those bits and bitcasts them; writing bitcasts
// the value back. Views of it (`.at[...]`) are bitcast views of the
// matching window of the Ref. On a TPU Pallas reads such a view through
// tpu.memref_bitcast; pkc reads the Ref and bitcasts the value, which
// moves the same bits.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/RefBitcast.h"

#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "ir/DTypeMapping.h"
#include "support/ShapeText.h"

namespace pk::elab {

namespace {

/// How the second-minor axis of a bitcast view maps onto its Ref's: each
/// view row is `packing` Ref rows (a narrower Ref), or each Ref row is
/// `unpacking` view rows (a wider one); both 1 at one width.
struct RowScale {
  int64_t packing = 1, unpacking = 1;
};

RowScale rowScale(DType ref, DType view) {
  int64_t from = bitWidth(ref), to = bitWidth(view);
  return from <= to ? RowScale{to / from, 1} : RowScale{1, from / to};
}

/// The Ref a bitcast view reinterprets.
const RefObj &baseOf(const RefObj &view) { return *view.view->bitcastOf; }

Obj multiply(Elaborator &el, const Obj &a, int64_t b, SourceRange r) {
  return b == 1 ? a : binaryOperator(el, ast::BinaryOp::Mul, a, makeInt(b), r);
}

/// The view rows a window of the view reads, as Ref rows to read (`start`,
/// `count`) and where the window then starts in the bitcast rows (`skip`).
struct RowWindow {
  Obj start;
  int64_t count = 1, skip = 0;
};

RowWindow refRows(Elaborator &el, const AxisWindow &w, RowScale scale, SourceRange r,
                  const char *access) {
  int64_t span = (w.count - 1) * w.step + 1; // view rows from the first to the last
  if (scale.unpacking == 1)
    return {multiply(el, w.start, scale.packing, r), span * scale.packing, 0};
  std::optional<int64_t> start = el.staticInt(w.start);
  if (!start)
    el.fail(r, std::string("a ") + access + " of a Ref.bitcast view to a narrower type needs a " +
                   "static start on the second-minor axis: each row of the Ref holds " +
                   std::to_string(scale.unpacking) + " rows of the view");
  int64_t first = *start / scale.unpacking;
  int64_t last = (*start + span - 1) / scale.unpacking;
  return {makeInt(first), last - first + 1, *start - first * scale.unpacking};
}

Obj contiguous(const RowWindow &rows) {
  return std::make_shared<DynamicSliceObj>(rows.start, rows.count, 1);
}

/// The unsigned integer type of a width: what bits are shifted as.
DType unsignedOfWidth(int64_t bits) {
  switch (bits) {
  case 8:
    return DType::U8;
  case 16:
    return DType::U16;
  case 32:
    return DType::U32;
  default:
    return DType::U64;
  }
}

/// The index of the Ref for `windows` of the view with `rows` on the
/// second-minor axis, the last two axes kept (an integer index there reads
/// one row or column, squeezed later).
Obj refIndex(const std::vector<AxisWindow> &windows, const Obj &rows) {
  std::vector<Obj> entries;
  size_t rank = windows.size();
  for (size_t d = 0; d < rank; ++d) {
    const AxisWindow &w = windows[d];
    if (d == rank - 2)
      entries.push_back(rows);
    else if (w.squeezed && d < rank - 2)
      entries.push_back(w.start);
    else
      entries.push_back(std::make_shared<DynamicSliceObj>(w.start, w.count, w.step));
  }
  return makeTuple(entries);
}

/// The shape of the window with the last two axes kept, and with squeezed
/// axes dropped (what the reader sees).
std::pair<std::vector<int64_t>, std::vector<int64_t>>
windowShapes(const std::vector<AxisWindow> &windows) {
  std::vector<int64_t> kept, seen;
  for (size_t d = 0; d < windows.size(); ++d) {
    if (!windows[d].squeezed || d + 2 >= windows.size())
      kept.push_back(windows[d].count);
    if (!windows[d].squeezed)
      seen.push_back(windows[d].count);
  }
  return {kept, seen};
}

/// `shape` (of `what`, holding `from` elements) with its second-minor
/// axis packed into, or unpacked from, rows of `to`.
std::vector<int64_t> packedShape(Elaborator &el, std::vector<int64_t> shape, DType from, DType to,
                                 SourceRange r, const std::string &op, const char *what) {
  if (shape.size() < 2)
    el.fail(r, op +
                   " between element widths needs at least 2 dimensions (it packs rows of the "
                   "second-minor axis), got rank " +
                   std::to_string(shape.size()));
  int64_t fromWidth = bitWidth(from), toWidth = bitWidth(to);
  int64_t &rows = shape[shape.size() - 2];
  if (rows * fromWidth % toWidth != 0)
    el.fail(r, op + " from " + numpyName(from) + " to " + numpyName(to) + " packs " +
                   std::to_string(toWidth / fromWidth) + " rows into one, but " + what + " has " +
                   std::to_string(rows) + " rows (shape " + shapeText(shape) + ")");
  rows = rows * fromWidth / toWidth;
  return shape;
}

} // namespace

ArrayPtr packingBitcast(Elaborator &el, const ArrayPtr &x, DType to, SourceRange r) {
  if (bitWidth(x->dtype) == bitWidth(to) && x->dtype != DType::Bool && to != DType::Bool)
    return el.arrays().bitcast(x, to, r);
  if (x->dtype == DType::Bool || to == DType::Bool)
    el.fail(r, std::string("pltpu.bitcast reinterprets integers and floats, not bool (") +
                   numpyName(x->dtype) + " to " + numpyName(to) + ")");
  std::vector<int64_t> shape =
      packedShape(el, x->shape, x->dtype, to, r, "pltpu.bitcast", "the value");
  mlir::Type type = el.arrays().valueType(shape, to);
  mlir::Value v = pk::BitcastOp::create(el.builder(), el.loc(r), type, x->value);
  return el.arrays().wrap(v, shape, to);
}

std::shared_ptr<RefObj> bitcastRefView(Elaborator &el, const std::shared_ptr<RefObj> &ref, DType to,
                                       SourceRange r) {
  rejectRaggedView(el, *ref, r);
  // A bitcast of a bitcast view reinterprets the same bits once more.
  std::shared_ptr<const RefObj> base = ref->isBitcast() ? ref->view->bitcastOf : ref;
  if (to == DType::Bool || base->dtype == DType::Bool)
    el.fail(r, std::string("Ref.bitcast reinterprets integers and floats, not bool (") +
                   numpyName(ref->dtype) + " to " + numpyName(to) + ")");
  std::vector<int64_t> shape =
      bitWidth(base->dtype) == bitWidth(to)
          ? base->shape
          : packedShape(el, base->shape, base->dtype, to, r, "Ref.bitcast", "the Ref");
  auto view = std::make_shared<RefView>();
  view->bitcastOf = base;
  return std::make_shared<RefObj>(base->value, shape, to, view);
}

Obj loadBitcastView(Elaborator &el, const RefObj &view, const Obj &index, SourceRange r) {
  const RefObj &base = baseOf(view);
  std::vector<AxisWindow> windows = axisWindows(el, view.shape, index, r, "a Ref.bitcast view");
  if (view.shape.size() < 2) // one width: nothing moves between rows
    return el.arrays().bitcast(
        el.arrays().toArray(loadRef(el, base, index, nullptr, nullptr, r), r), view.dtype, r);
  size_t rank = windows.size();
  const AxisWindow &w = windows[rank - 2];
  RowScale scale = rowScale(base.dtype, view.dtype);
  auto read = [&](const Obj &start, int64_t count, int64_t step) {
    Obj rows = std::make_shared<DynamicSliceObj>(start, count, step);
    return el.arrays().toArray(loadRef(el, base, refIndex(windows, rows), nullptr, nullptr, r), r);
  };
  ArrayPtr value;
  if (scale.packing == 1 && scale.unpacking == 1) {
    value = el.arrays().bitcast(read(w.start, w.count, w.step), view.dtype, r);
  } else if (w.step == 1) {
    // Whole rows of the Ref, contiguous; a narrower view's rows start
    // `skip` rows into the first.
    RowWindow rows = refRows(el, w, scale, r, "read");
    value = packingBitcast(el, read(rows.start, rows.count, 1), view.dtype, r);
    size_t rowAxis = value->shape.size() - 2; // leading axes may be squeezed
    if (value->shape[rowAxis] != w.count) {
      std::vector<Obj> entries(rowAxis, std::make_shared<SliceObj>(none(), none(), none()));
      entries.push_back(
          std::make_shared<SliceObj>(makeInt(rows.skip), makeInt(rows.skip + w.count), none()));
      value = el.arrays().toArray(subscript(el, value, makeTuple(entries), r), r);
    }
  } else if (scale.packing > 1) {
    // Strided rows of a wider view (ragged paged attention's K/V split):
    // part k of each view row is every (step * packing)-th Ref row from
    // row start * packing + k; the parts or-ed together at their bits.
    int64_t width = bitWidth(base.dtype);
    DType narrow = unsignedOfWidth(width), wide = unsignedOfWidth(bitWidth(view.dtype));
    Obj first = multiply(el, w.start, scale.packing, r);
    Obj bits;
    for (int64_t k = 0; k < scale.packing; ++k) {
      Obj start = k ? binaryOperator(el, ast::BinaryOp::Add, first, makeInt(k), r) : first;
      ArrayPtr part = el.arrays().cast(
          el.arrays().bitcast(read(start, w.count, w.step * scale.packing), narrow, r), wide, r);
      Obj shifted =
          k ? binaryOperator(el, ast::BinaryOp::LShift, part, makeInt(k * width), r) : Obj(part);
      bits = k ? binaryOperator(el, ast::BinaryOp::BitOr, bits, shifted, r) : shifted;
    }
    value = el.arrays().bitcast(el.arrays().toArray(bits, r), view.dtype, r);
  } else {
    // Strided rows of a narrower view: every one the same part of its Ref
    // row when the step is whole Ref rows.
    std::optional<int64_t> start = el.staticInt(w.start);
    if (!start || w.step % scale.unpacking != 0)
      el.fail(r, "a strided read of a Ref.bitcast view to a narrower type needs a static start "
                 "and a step that is a multiple of " +
                     std::to_string(scale.unpacking) + " (whole rows of the Ref)");
    int64_t width = bitWidth(view.dtype);
    ArrayPtr words = el.arrays().bitcast(
        read(makeInt(*start / scale.unpacking), w.count, w.step / scale.unpacking),
        unsignedOfWidth(bitWidth(base.dtype)), r);
    Obj part = binaryOperator(el, ast::BinaryOp::RShift, words,
                              makeInt((*start % scale.unpacking) * width), r);
    value = el.arrays().bitcast(
        el.arrays().cast(el.arrays().toArray(part, r), unsignedOfWidth(width), r), view.dtype, r);
  }
  return el.arrays().reshape(value, windowShapes(windows).second, r);
}

void storeBitcastView(Elaborator &el, const RefObj &view, const Obj &index, const Obj &value,
                      SourceRange r) {
  const RefObj &base = baseOf(view);
  std::vector<AxisWindow> windows = axisWindows(el, view.shape, index, r, "a Ref.bitcast view");
  auto [kept, seen] = windowShapes(windows);
  ArrayPtr v = storedValue(el, view, value, seen, r);
  if (view.shape.size() < 2) {
    storeRef(el, base, index, el.arrays().bitcast(v, base.dtype, r), nullptr, r);
    return;
  }
  size_t rank = windows.size();
  const AxisWindow &w = windows[rank - 2];
  RowScale scale = rowScale(base.dtype, view.dtype);
  RowWindow rows = refRows(el, w, scale, r, "write");
  if (w.step != 1)
    el.fail(r, "a write through a Ref.bitcast view cannot be strided on the second-minor axis");
  if (rows.skip != 0 || w.count % scale.unpacking != 0)
    el.fail(r, "a write through a Ref.bitcast view to a narrower type must cover whole rows of "
               "the Ref: each holds " +
                   std::to_string(scale.unpacking) +
                   " rows of the view, so the window must start and end at a multiple of " +
                   std::to_string(scale.unpacking));
  ArrayPtr bits = packingBitcast(el, el.arrays().reshape(v, kept, r), base.dtype, r);
  storeRef(el, base, refIndex(windows, contiguous(rows)), bits, nullptr, r);
}

std::shared_ptr<RefObj> viewOfBitcastView(Elaborator &el, const RefObj &view, const Obj &index,
                                          SourceRange r) {
  const RefObj &base = baseOf(view);
  if (view.shape.size() < 2) // one width: a window of the Ref, reinterpreted
    return bitcastRefView(el, refView(el, base, index, r), view.dtype, r);
  std::vector<AxisWindow> windows = axisWindows(el, view.shape, index, r, "a Ref.bitcast view");
  size_t rank = windows.size();
  if (windows[rank - 1].squeezed || windows[rank - 2].squeezed)
    el.fail(r, "a view of a Ref.bitcast view must keep its last two axes (index the leading "
               "axes, or read the view and index the value)");
  const AxisWindow &w = windows[rank - 2];
  RowScale scale = rowScale(base.dtype, view.dtype);
  RowWindow rows = refRows(el, w, scale, r, "view");
  if (w.step != 1 || rows.skip != 0 || w.count % scale.unpacking != 0)
    el.fail(r, "a view of a Ref.bitcast view takes whole rows of the Ref on the second-minor "
               "axis, unstrided");
  std::shared_ptr<RefObj> window = refView(el, base, refIndex(windows, contiguous(rows)), r);
  return bitcastRefView(el, window, view.dtype, r);
}

std::shared_ptr<RefObj> reshapeBitcastView(Elaborator &el, const RefObj &view,
                                           const std::vector<int64_t> &shape, SourceRange r) {
  const RefObj &base = baseOf(view);
  RowScale scale = rowScale(base.dtype, view.dtype);
  if (scale.packing == 1 && scale.unpacking == 1)
    return bitcastRefView(el, reshapedRef(el, base, shape, r), view.dtype, r);
  // Rows pack along the flattened leading axes: view row F (counting all
  // axes but the last) is Ref rows F * packing .. + packing - 1, so a
  // reshape that keeps the last axis is the Ref's reshape with the
  // second-minor axis scaled.
  if (shape.size() < 2 || shape.back() != view.shape.back())
    el.fail(r, "a reshape of a Ref.bitcast view between widths must keep the last axis (" +
                   std::to_string(view.shape.back()) + "), got shape " + shapeText(shape));
  std::vector<int64_t> baseShape = shape;
  int64_t &rows = baseShape[shape.size() - 2];
  if (rows % scale.unpacking != 0)
    el.fail(r, "a reshape of a Ref.bitcast view to a narrower type needs a second-minor axis "
               "that is a multiple of " +
                   std::to_string(scale.unpacking) + " (whole rows of the Ref), got shape " +
                   shapeText(shape));
  rows = rows * scale.packing / scale.unpacking;
  return bitcastRefView(el, reshapedRef(el, base, baseShape, r), view.dtype, r);
}

} // namespace pk::elab
