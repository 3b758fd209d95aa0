//===- ScalarArrayCode.cpp - pk-tpu-scalar-array-code ---------------------===//
//
// Array code at export level (jnp code around pallas_calls) becomes
// generated pallas_calls. Mosaic's vector unit computes on (8, 128) tiles
// of 2-D values; 0-d values, short 1-D ones and strided slices of them are
// what a TPU kernel computes on its scalar core, from SMEM. That is the
// size of MoE routing's and megablox's group metadata: cumsum, repeat and
// histograms over a few dozen int32s feeding a grouped matmul.
//
// This pass moves such a generated call onto the scalar core, as a Pallas
// kernel with `pltpu.SMEM` operands computes: its operands go to SMEM and
// every value it computes is stored element by element in SMEM scratch
// (one buffer per element type: i32, with bools as 0 / 1, and f32), each
// op a loop over its result's elements. Splats (constants, broadcasts of
// scalars) and scalars stay SSA values. What runs this way is plain scalar
// code the TPU lowering already handles: scf.for, arith on i32 / f32 /
// i1, and pk.load / pk.store of single elements of SMEM Refs.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/Passes.h"

#include "ir/DTypeMapping.h"
#include "ir/Reductions.h"
#include "ir/WholeRef.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace pk::backends::tpu {

#define GEN_PASS_DEF_PKTPUSCALARARRAYCODE
#include "backends/tpu/Passes.h.inc"

using namespace mlir;

namespace {

/// The largest operand or result the scalar core takes: larger arrays are
/// left to the vector unit.
constexpr int64_t kMaxArrayElements = 4096;
/// SMEM words one call may use, operands and scratch together: half of
/// the 1 MiB of SMEM TPU v4 and later have.
constexpr int64_t kMaxSmemWords = 128 * 1024;

bool isScalarElement(Type t) {
  return t.isInteger(1) || t.isInteger(32) || t.isF32() || t.isIndex();
}

/// A value's shape: [] for a scalar.
ArrayRef<int64_t> shapeOf(Type t) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(t))
    return tensor.getShape();
  return {};
}

/// A shape's element count, saturated past what SMEM could hold (a
/// static shape may multiply past int64).
int64_t elementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > kMaxSmemWords || n * d > kMaxSmemWords)
      return kMaxSmemWords + 1;
    n *= d;
  }
  return n;
}

bool isScalarValueType(Type t) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(t))
    return tensor.hasStaticShape() && isScalarElement(tensor.getElementType()) &&
           elementsOf(tensor.getShape()) <= kMaxSmemWords;
  return isScalarElement(t);
}

/// Whether the scalar core can run `op` of a generated kernel body.
bool scalarizable(Operation &op) {
  for (Type t : llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()))
    if (!llvm::isa<pk::RefType>(t) && !isScalarValueType(t))
      return false;
  if (op.getNumRegions() != 0)
    return false;
  if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
    return !load.getMask() && !load.getOther() && !load.getPadded() &&
           llvm::isa<BlockArgument>(load.getRef());
  if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
    return !store.getMask() && !store.getPadded() && llvm::isa<BlockArgument>(store.getRef());
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
    return !dense || dense.isSplat() || dense.getNumElements() <= kMaxArrayElements;
  }
  if (op.getDialect() && op.getDialect()->getNamespace() == "arith")
    return op.hasTrait<OpTrait::Elementwise>() || op.getNumOperands() == 0 ||
           llvm::none_of(op.getOperandTypes(), [](Type t) { return llvm::isa<ShapedType>(t); });
  // Of math's ops only absolute values: the scalar core has no
  // transcendental functions.
  if (llvm::isa<math::AbsIOp, math::AbsFOp>(op))
    return true;
  return llvm::isa<pk::ReshapeOp, pk::SliceOp, pk::ConcatenateOp, pk::BroadcastInDimOp, pk::IotaOp,
                   pk::TransposeOp, pk::ReduceOp, pk::YieldOp>(op);
}

/// Whether `call` is array code the scalar core should run: generated,
/// without a grid, over 0-d and 1-D arrays of 32-bit elements (or bools)
/// that fit SMEM, made of ops it can run.
bool runsOnScalarCore(pk::PallasCallOp call) {
  if (!call->hasAttr("pk.generated") || call.getGrid().getNumResults() != 0 ||
      call.getNumScalarPrefetch() != 0 || !call.getScratchTypes().empty())
    return false;
  int64_t words = 0;
  for (Type t : llvm::concat<Type>(call->getOperandTypes(), call->getResultTypes())) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape() || tensor.getRank() > 1 ||
        !isScalarElement(tensor.getElementType()) || tensor.getElementType().isIndex() ||
        elementsOf(tensor.getShape()) > kMaxArrayElements)
      return false;
    words += elementsOf(tensor.getShape());
  }
  Block &body = call.getKernelBlock();
  for (Operation &op : body) {
    // Every operand is the body's own: a Ref argument or a value it computed.
    bool own = llvm::all_of(op.getOperands(), [&](Value v) {
      return v.getParentBlock() == &body;
    });
    if (!own || !scalarizable(op))
      return false;
    for (Type t : op.getResultTypes())
      words += elementsOf(shapeOf(t));
  }
  return words <= kMaxSmemWords;
}

/// A value of the original body in scalar code: either one scalar that is
/// every element (a scalar, a splat), or its elements in row-major order
/// in a scratch buffer from `offset`.
struct Elements {
  Value splat;
  Value buffer;
  int64_t offset = 0;
  SmallVector<int64_t> shape;
  Type element; ///< the value's element type (i1 is stored as i32)
};

class Scalarizer {
public:
  Scalarizer(pk::PallasCallOp call) : call(call), b(call.getContext()) {}

  void run() {
    MLIRContext *ctx = call.getContext();
    smem = pk::MemorySpaceAttr::get(ctx, pk::MemorySpace::SMEM);
    Block &body = call.getKernelBlock();
    // Operands and results move to SMEM.
    auto toSmem = [&](ArrayAttr specs) {
      SmallVector<Attribute> moved;
      for (Attribute a : specs) {
        auto spec = llvm::cast<pk::BlockSpecAttr>(a);
        moved.push_back(pk::BlockSpecAttr::get(ctx, spec.getBlockShape(), spec.getDimKinds(),
                                               spec.getPaddingLow(), spec.getPaddingHigh(),
                                               spec.getIndexMap(), smem));
      }
      return ArrayAttr::get(ctx, moved);
    };
    call.setInSpecsAttr(toSmem(call.getInSpecs()));
    call.setOutSpecsAttr(toSmem(call.getOutSpecs()));
    for (BlockArgument arg : body.getArguments()) {
      auto ref = llvm::cast<pk::RefType>(arg.getType());
      arg.setType(pk::RefType::get(ref.getShape(), ref.getElementType(), smem));
    }

    SmallVector<Operation *> old;
    for (Operation &op : body.without_terminator())
      old.push_back(&op);
    for (Operation *op : old) {
      b.setInsertionPoint(op);
      loc = op->getLoc();
      lower(op);
    }
    for (Operation *op : llvm::reverse(old))
      op->erase();
    // Index arithmetic a folded expression no longer uses.
    SmallVector<Operation *> created;
    body.walk([&](Operation *op) { created.push_back(op); });
    for (Operation *op : llvm::reverse(created))
      if (isOpTriviallyDead(op))
        op->erase();

    // The scratch buffers (in the order they were added), now that their
    // sizes are known.
    SmallVector<Attribute> scratch;
    for (BlockArgument arg :
         body.getArguments().drop_front(call->getNumOperands() + call->getNumResults())) {
      auto type = llvm::cast<pk::RefType>(arg.getType());
      int64_t words = arg == i32Buffer ? i32Words : f32Words;
      auto sized = pk::RefType::get({std::max<int64_t>(words, 1)}, type.getElementType(), smem);
      arg.setType(sized);
      scratch.push_back(TypeAttr::get(sized));
    }
    call.setScratchTypesAttr(ArrayAttr::get(ctx, scratch));
  }

private:
  pk::PallasCallOp call;
  OpBuilder b;
  Location loc = UnknownLoc::get(call.getContext());
  Attribute smem;
  Value i32Buffer, f32Buffer;
  int64_t i32Words = 0, f32Words = 0;
  DenseMap<Value, Elements> values;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v); }
  Value index(Value v) { return arith::IndexCastOp::create(b, loc, b.getIndexType(), v); }

  Elements allocate(Type type) {
    Elements e;
    e.shape.assign(shapeOf(type).begin(), shapeOf(type).end());
    e.element = getElementTypeOrSelf(type);
    bool isFloat = e.element.isF32();
    Value &buffer = isFloat ? f32Buffer : i32Buffer;
    int64_t &words = isFloat ? f32Words : i32Words;
    if (!buffer)
      buffer = call.getKernelBlock().addArgument(
          pk::RefType::get({1}, isFloat ? Type(b.getF32Type()) : Type(b.getI32Type()), smem),
          call.getLoc());
    e.buffer = buffer;
    e.offset = words;
    words += elementsOf(e.shape);
    return e;
  }

  Elements splat(Value scalar, Type type) {
    Elements e;
    e.splat = scalar;
    e.shape.assign(shapeOf(type).begin(), shapeOf(type).end());
    e.element = getElementTypeOrSelf(type);
    return e;
  }

  /// The window of one element of a Ref at `indices` (i32): index
  /// offsets, every axis squeezed.
  struct ElementWindow {
    SmallVector<Value> offsets;
    SmallVector<int64_t> dynamic, ones, squeeze;
  };
  ElementWindow elementWindow(ArrayRef<Value> indices) {
    ElementWindow w;
    for (Value i : indices) {
      w.squeeze.push_back(w.offsets.size());
      w.offsets.push_back(index(i));
      w.dynamic.push_back(ShapedType::kDynamic);
      w.ones.push_back(1);
    }
    return w;
  }

  /// The element type of values read from `ref`: signless (a u32 Ref
  /// holds ui32, and reads give i32).
  Type valueElement(pk::RefType ref) {
    return pk::signlessType(b.getContext(), *pk::dtypeOf(ref.getElementType()));
  }

  Value loadRef(Value ref, ArrayRef<Value> indices) {
    ElementWindow w = elementWindow(indices);
    Type element = valueElement(llvm::cast<pk::RefType>(ref.getType()));
    return pk::LoadOp::create(b, loc, element, ref, w.offsets, w.dynamic, w.ones, w.ones, w.squeeze,
                              /*mask=*/Value(), /*other=*/Value(), /*padded=*/false);
  }

  void storeRef(Value value, Value ref, ArrayRef<Value> indices) {
    ElementWindow w = elementWindow(indices);
    pk::StoreOp::create(b, loc, value, ref, w.offsets, w.dynamic, w.ones, w.ones, w.squeeze,
                        /*mask=*/Value(), /*padded=*/false);
  }

  /// Element `linear` (i32, row-major) of `e`.
  Value element(const Elements &e, Value linear) {
    if (e.splat)
      return e.splat;
    Value at = b.createOrFold<arith::AddIOp>(loc, linear, i32(e.offset));
    Value v = loadRef(e.buffer, {at});
    if (e.element.isInteger(1))
      v = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, i32(0));
    return v;
  }

  void setElement(const Elements &e, Value linear, Value v) {
    if (v.getType().isInteger(1))
      v = arith::ExtUIOp::create(b, loc, b.getI32Type(), v);
    storeRef(v, e.buffer, {b.createOrFold<arith::AddIOp>(loc, linear, i32(e.offset))});
  }

  /// Calls `body` with each i32 in [0, n), as an scf.for unless n is 1.
  void forEach(int64_t n, llvm::function_ref<void(Value)> body) {
    if (n == 1)
      return body(i32(0));
    // Declarators are built in order; a call's arguments are not.
    Value lower = i32(0), upper = i32(n), step = i32(1);
    auto loop = scf::ForOp::create(b, loc, lower, upper, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }

  /// The multi-index of row-major position `linear` in `shape`.
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> shape) {
    SmallVector<Value> indices(shape.size());
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] == 1) {
        indices[d] = i32(0);
        continue;
      }
      Value size = i32(shape[d]);
      indices[d] = d == 0 ? linear : b.createOrFold<arith::RemSIOp>(loc, linear, size);
      if (d > 0)
        linear = b.createOrFold<arith::DivSIOp>(loc, linear, size);
    }
    return indices;
  }

  Value linearize(ArrayRef<Value> indices, ArrayRef<int64_t> shape) {
    if (shape.empty())
      return i32(0);
    Value linear = indices[0];
    for (size_t d = 1; d < shape.size(); ++d)
      linear = b.createOrFold<arith::AddIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, linear, i32(shape[d])), indices[d]);
    return linear;
  }

  /// The window offsets of a pk.load / pk.store as i32, with
  /// lax.dynamic_slice's rule for dynamic ones: negative counts from the
  /// end, then clamped so that the window fits.
  SmallVector<Value> windowOffsets(pk::RefType ref, ArrayRef<OpFoldResult> mixed,
                                   ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
    SmallVector<Value> offsets;
    for (size_t d = 0; d < mixed.size(); ++d) {
      if (auto attr = llvm::dyn_cast<Attribute>(mixed[d])) {
        offsets.push_back(i32(llvm::cast<IntegerAttr>(attr).getInt()));
        continue;
      }
      // The offset is a scalar the body computed: its rewritten value.
      Value o = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                           values.lookup(llvm::cast<Value>(mixed[d])).splat);
      int64_t dim = ref.getShape()[d];
      Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, o, i32(0));
      o = arith::SelectOp::create(b, loc, negative, b.createOrFold<arith::AddIOp>(loc, o, i32(dim)),
                                  o);
      int64_t last = dim - ((sizes[d] - 1) * strides[d] + 1);
      o = arith::MaxSIOp::create(b, loc, o, i32(0));
      o = arith::MinSIOp::create(b, loc, o, i32(std::max<int64_t>(last, 0)));
      offsets.push_back(o);
    }
    return offsets;
  }

  /// The Ref indices of element `indices` of a window (squeezed axes take
  /// their offset).
  SmallVector<Value> refIndices(ArrayRef<Value> offsets, ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> squeeze, ArrayRef<Value> indices) {
    SmallVector<Value> at;
    size_t next = 0;
    for (size_t d = 0; d < offsets.size(); ++d) {
      if (llvm::is_contained(squeeze, static_cast<int64_t>(d))) {
        at.push_back(offsets[d]);
        continue;
      }
      Value i = indices[next++];
      if (strides[d] != 1)
        i = b.createOrFold<arith::MulIOp>(loc, i, i32(strides[d]));
      at.push_back(b.createOrFold<arith::AddIOp>(loc, offsets[d], i));
    }
    return at;
  }

  /// Fills a new buffer for `result` element by element.
  void compute(Value result, llvm::function_ref<Value(Value, ArrayRef<Value>)> elementAt) {
    Elements out = allocate(result.getType());
    forEach(elementsOf(out.shape),
            [&](Value l) { setElement(out, l, elementAt(l, delinearize(l, out.shape))); });
    values[result] = out;
  }

  void lower(Operation *op) {
    if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op))
      return lowerConstant(constant);
    if (auto load = llvm::dyn_cast<pk::LoadOp>(op))
      return lowerLoad(load);
    if (auto store = llvm::dyn_cast<pk::StoreOp>(op))
      return lowerStore(store);
    if (auto reshape = llvm::dyn_cast<pk::ReshapeOp>(op)) {
      Elements e = values.lookup(reshape.getOperand());
      e.shape.assign(shapeOf(reshape.getType()).begin(), shapeOf(reshape.getType()).end());
      if (!llvm::isa<RankedTensorType>(reshape.getType()) && !e.splat)
        e = splat(element(e, i32(0)), reshape.getType());
      values[reshape.getResult()] = e;
      return;
    }
    if (auto slice = llvm::dyn_cast<pk::SliceOp>(op))
      return lowerSlice(slice);
    if (auto concat = llvm::dyn_cast<pk::ConcatenateOp>(op))
      return lowerConcatenate(concat);
    if (auto broadcast = llvm::dyn_cast<pk::BroadcastInDimOp>(op))
      return lowerBroadcast(broadcast);
    if (auto iota = llvm::dyn_cast<pk::IotaOp>(op)) {
      Type element = getElementTypeOrSelf(iota.getType());
      int64_t dim = iota.getDimension();
      return compute(iota.getResult(), [&](Value, ArrayRef<Value> at) -> Value {
        if (element.isF32())
          return arith::SIToFPOp::create(b, loc, element, at[dim]);
        return at[dim];
      });
    }
    if (auto transpose = llvm::dyn_cast<pk::TransposeOp>(op)) {
      Elements in = values.lookup(transpose.getOperand());
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      return compute(transpose.getResult(), [&](Value, ArrayRef<Value> at) {
        SmallVector<Value> from(at.size());
        for (size_t i = 0; i < at.size(); ++i)
          from[permutation[i]] = at[i];
        return element(in, linearize(from, in.shape));
      });
    }
    if (auto reduce = llvm::dyn_cast<pk::ReduceOp>(op))
      return lowerReduce(reduce);
    lowerElementwise(op);
  }

  void lowerConstant(arith::ConstantOp constant) {
    auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense) {
      values[constant.getResult()] = splat(b.clone(*constant)->getResult(0), constant.getType());
      return;
    }
    Type element = dense.getElementType();
    if (dense.isSplat()) {
      Value v = arith::ConstantOp::create(b, loc, dense.getSplatValue<TypedAttr>());
      values[constant.getResult()] = splat(v, constant.getType());
      return;
    }
    Elements out = allocate(constant.getType());
    int64_t i = 0;
    for (Attribute a : dense.getValues<Attribute>()) {
      Value v = arith::ConstantOp::create(b, loc, element, llvm::cast<TypedAttr>(a));
      setElement(out, i32(i++), v);
    }
    values[constant.getResult()] = out;
  }

  void lowerLoad(pk::LoadOp load) {
    pk::RefType ref = load.getRefType();
    SmallVector<Value> offsets =
        windowOffsets(ref, load.getMixedOffsets(), load.getSizes(), load.getStrides());
    ArrayRef<int64_t> strides = load.getStrides(), squeeze = load.getSqueeze();
    auto arg = llvm::cast<BlockArgument>(load.getRef());
    if (readsWholeRef(load) && ref.getRank() == 1 && !ref.getElementType().isInteger(1) &&
        arg.getArgNumber() < call.getInputs().size()) {
      // An input nothing writes: its elements are read where they are used.
      Elements e;
      e.buffer = load.getRef();
      e.shape.assign(ref.getShape().begin(), ref.getShape().end());
      e.element = valueElement(ref);
      values[load.getResult()] = e;
      return;
    }
    if (!llvm::isa<RankedTensorType>(load.getType())) {
      values[load.getResult()] =
          splat(loadRef(load.getRef(), refIndices(offsets, strides, squeeze, {})), load.getType());
      return;
    }
    compute(load.getResult(), [&](Value, ArrayRef<Value> at) {
      return loadRef(load.getRef(), refIndices(offsets, strides, squeeze, at));
    });
  }

  void lowerStore(pk::StoreOp store) {
    pk::RefType ref = store.getRefType();
    SmallVector<Value> offsets =
        windowOffsets(ref, store.getMixedOffsets(), store.getSizes(), store.getStrides());
    ArrayRef<int64_t> strides = store.getStrides(), squeeze = store.getSqueeze();
    Elements value = values.lookup(store.getValue());
    forEach(elementsOf(value.shape), [&](Value l) {
      SmallVector<Value> at = delinearize(l, value.shape);
      storeRef(element(value, l), store.getRef(), refIndices(offsets, strides, squeeze, at));
    });
  }

  void lowerSlice(pk::SliceOp slice) {
    Elements in = values.lookup(slice.getOperand());
    if (in.splat) {
      values[slice.getResult()] = splat(in.splat, slice.getType());
      return;
    }
    ArrayRef<int64_t> start = slice.getStartIndices(), strides = slice.getStrides();
    compute(slice.getResult(), [&](Value, ArrayRef<Value> at) {
      SmallVector<Value> from;
      for (size_t d = 0; d < at.size(); ++d) {
        Value first = i32(start[d]);
        Value stepped = b.createOrFold<arith::MulIOp>(loc, at[d], i32(strides[d]));
        from.push_back(b.createOrFold<arith::AddIOp>(loc, first, stepped));
      }
      return element(in, linearize(from, in.shape));
    });
  }

  void lowerConcatenate(pk::ConcatenateOp concat) {
    Elements out = allocate(concat.getType());
    int64_t dim = concat.getDimension();
    int64_t offset = 0;
    for (Value operand : concat.getOperands()) {
      Elements in = values.lookup(operand);
      forEach(elementsOf(in.shape), [&](Value l) {
        SmallVector<Value> at = delinearize(l, in.shape);
        at[dim] = b.createOrFold<arith::AddIOp>(loc, at[dim], i32(offset));
        Value to = linearize(at, out.shape);
        setElement(out, to, element(in, l));
      });
      offset += in.shape[dim];
    }
    values[concat.getResult()] = out;
  }

  void lowerBroadcast(pk::BroadcastInDimOp broadcast) {
    Elements in = values.lookup(broadcast.getOperand());
    if (in.splat || elementsOf(in.shape) == 1) {
      Value v = in.splat ? in.splat : element(in, i32(0));
      values[broadcast.getResult()] = splat(v, broadcast.getType());
      return;
    }
    ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
    compute(broadcast.getResult(), [&](Value, ArrayRef<Value> at) {
      SmallVector<Value> from;
      for (size_t j = 0; j < dims.size(); ++j)
        from.push_back(in.shape[j] == 1 ? i32(0) : at[dims[j]]);
      return element(in, linearize(from, in.shape));
    });
  }

  void lowerReduce(pk::ReduceOp reduce) {
    Elements in = values.lookup(reduce.getOperand());
    pk::ReductionKind kind = reduce.getKind();
    Type element = getElementTypeOrSelf(reduce.getType());
    Value identity = arith::ConstantOp::create(b, loc, pk::reductionIdentity(kind, element));
    ArrayRef<int64_t> axes = reduce.getAxes();
    if (!llvm::isa<RankedTensorType>(reduce.getType())) {
      // To one scalar: a loop carrying it.
      int64_t n = elementsOf(in.shape);
      Value lower = i32(0), upper = i32(n), step = i32(1);
      auto loop = scf::ForOp::create(
          b, loc, lower, upper, step, ValueRange{identity},
          [&](OpBuilder &body, Location, Value i, ValueRange carried) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(body.getInsertionBlock(), body.getInsertionPoint());
            scf::YieldOp::create(
                b, loc, pk::combineReduction(b, loc, kind, carried[0], this->element(in, i)));
          });
      values[reduce.getResult()] = splat(loop.getResult(0), reduce.getType());
      return;
    }
    Elements out = allocate(reduce.getType());
    forEach(elementsOf(out.shape), [&](Value l) { setElement(out, l, identity); });
    forEach(elementsOf(in.shape), [&](Value l) {
      SmallVector<Value> at = delinearize(l, in.shape), kept;
      for (size_t d = 0; d < at.size(); ++d)
        if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
          kept.push_back(at[d]);
      Value to = linearize(kept, out.shape);
      Value sofar = this->element(out, to), next = this->element(in, l);
      setElement(out, to, pk::combineReduction(b, loc, kind, sofar, next));
    });
    values[reduce.getResult()] = out;
  }

  /// An arith op (or math.absi / absf), element by element (once, when every operand is a splat).
  void lowerElementwise(Operation *op) {
    auto scalarOp = [&](ArrayRef<Value> operands) {
      OperationState state(loc, op->getName());
      state.addOperands(operands);
      for (Type t : op->getResultTypes())
        state.addTypes(getElementTypeOrSelf(t));
      state.addAttributes(op->getAttrs());
      return b.create(state)->getResult(0);
    };
    SmallVector<Elements> operands;
    for (Value v : op->getOperands())
      operands.push_back(values.lookup(v));
    Value result = op->getResult(0);
    if (llvm::all_of(operands, [](const Elements &e) { return static_cast<bool>(e.splat); })) {
      SmallVector<Value> scalars;
      for (const Elements &e : operands)
        scalars.push_back(e.splat);
      values[result] = splat(scalarOp(scalars), result.getType());
      return;
    }
    compute(result, [&](Value l, ArrayRef<Value>) {
      SmallVector<Value> scalars;
      for (const Elements &e : operands)
        scalars.push_back(element(e, l));
      return scalarOp(scalars);
    });
  }
};

struct ScalarArrayCodePass : impl::PkTpuScalarArrayCodeBase<ScalarArrayCodePass> {
  void runOnOperation() override {
    SmallVector<pk::PallasCallOp> calls;
    getOperation().walk([&](pk::PallasCallOp call) {
      if (runsOnScalarCore(call))
        calls.push_back(call);
    });
    for (pk::PallasCallOp call : calls)
      Scalarizer(call).run();
  }
};

} // namespace

} // namespace pk::backends::tpu
