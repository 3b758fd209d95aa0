//===- Emitter.cpp - Thread indices, coordinates, memory ------------------===//
#include "backends/cuda/Distribute.h"
#include "backends/cuda/KnownRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace pk::gpu {

using namespace mlir;

namespace {

constexpr const char *kSharedMemorySymbol = "pk_shared_memory";

/// The dynamic shared memory the kernel addresses: one external array per
/// gpu.module, sized at launch. 1024-byte aligned: the period of the
/// 128-byte swizzle, so that swizzled buffers at multiples of 1024 see the
/// pattern TMA and wgmma assume (the dynamic window starts that aligned).
LLVM::GlobalOp sharedMemoryGlobal(::mlir::gpu::GPUFuncOp func) {
  auto module = func->getParentOfType<::mlir::gpu::GPUModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::GlobalOp>(kSharedMemorySymbol))
    return existing;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/false,
                                       LLVM::Linkage::External, kSharedMemorySymbol, Attribute(),
                                       /*alignment=*/1024, /*addrSpace=*/3);
  return global;
}

} // namespace

int64_t elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

Emitter::Emitter(::mlir::gpu::GPUFuncOp func, Block &body)
    : b(func.getContext()), loc(func.getLoc()), func(func), prologue(func.getContext()) {
  numWarps = 4;
  if (auto n = func->getAttrOfType<IntegerAttr>("pkgpu.num_warps"))
    numWarps = static_cast<unsigned>(n.getInt());
  if (auto n = func->getAttrOfType<IntegerAttr>("pkgpu.scratch_bytes"))
    scratchBytes = n.getInt();
  if (auto n = func->getAttrOfType<IntegerAttr>("pkgpu.warpgroups"))
    warpgroups = static_cast<unsigned>(n.getInt());
  b.setInsertionPointToStart(&body);
  tid = ::mlir::gpu::ThreadIdOp::create(b, loc, ::mlir::gpu::Dimension::x);
  ctaTid = tid;
  if (warpgroups > 1) {
    // Block values belong to the running thread's warpgroup: positions in
    // layouts count from its first thread.
    Value c128 = arith::ConstantIndexOp::create(b, loc, 128);
    group = arith::DivUIOp::create(b, loc, tid, c128);
    tid = arith::RemUIOp::create(b, loc, tid, c128);
    // Each warpgroup stages its data movement in its own shared memory,
    // after the scratch; the stride is known once the body is translated.
    temporaryStride = arith::ConstantIndexOp::create(b, loc, 0);
    temporaryShift = arith::MulIOp::create(b, loc, group, temporaryStride);
  }
  Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
  lane = arith::RemUIOp::create(b, loc, tid, c32);
  warp = arith::DivUIOp::create(b, loc, tid, c32);
  // Values every lowering may reuse go in front of this marker, so that
  // they dominate the whole body.
  prologueEnd = arith::ConstantIndexOp::create(b, loc, 0);
  prologue.setInsertionPoint(prologueEnd);
  b.setInsertionPointToEnd(&body);
}

void Emitter::finish() {
  if (temporaryStride)
    temporaryStride.getDefiningOp()->setAttr(
        "value", b.getIndexAttr((temporaryBytes + 127) / 128 * 128));
  if (prologueEnd && prologueEnd->use_empty())
    prologueEnd->erase();
  prologueEnd = nullptr;
}

Value Emitter::cached(const std::string &key, function_ref<Value(OpBuilder &)> make) {
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  Value v = make(prologue);
  cache[key] = v;
  return v;
}

Value Emitter::index(int64_t v) {
  return cached("index:" + std::to_string(v),
                [&](OpBuilder &p) { return arith::ConstantIndexOp::create(p, loc, v); });
}

Value Emitter::add(Value a, Value c) {
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return index(*x + *y);
  if (x && *x == 0)
    return c;
  if (y && *y == 0)
    return a;
  return arith::AddIOp::create(b, loc, a, c);
}

Value Emitter::mul(Value a, Value c) {
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return index(*x * *y);
  if ((x && *x == 0) || (y && *y == 0))
    return index(0);
  if (x && *x == 1)
    return c;
  if (y && *y == 1)
    return a;
  return arith::MulIOp::create(b, loc, a, c);
}

Value Emitter::i32(int64_t v) {
  return cached("i32:" + std::to_string(v), [&](OpBuilder &p) {
    return arith::ConstantIntOp::create(p, loc, p.getI32Type(), v);
  });
}

Value Emitter::constant(Type type, double value) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "const:" << type << ":" << value;
  return cached(key, [&](OpBuilder &p) -> Value {
    if (auto f = llvm::dyn_cast<FloatType>(type))
      return arith::ConstantOp::create(p, loc, type, p.getFloatAttr(f, value));
    return arith::ConstantOp::create(p, loc, type,
                                     p.getIntegerAttr(type, static_cast<int64_t>(value)));
  });
}

Value Emitter::threadPart(const Layout &layout, unsigned dim) {
  return cached("thread:" + layout.str() + ":" + std::to_string(dim), [&](OpBuilder &p) -> Value {
    Value sum;
    auto addBits = [&](const std::vector<Basis> &bases, Value id) {
      for (size_t i = 0; i < bases.size(); ++i) {
        if (bases[i].isNone() || bases[i].dim != static_cast<int>(dim))
          continue;
        Value bit = arith::AndIOp::create(p, loc, id, arith::ConstantIndexOp::create(p, loc, 1 << i));
        int shift = bases[i].bit - static_cast<int>(i);
        if (shift > 0)
          bit = arith::ShLIOp::create(p, loc, bit, arith::ConstantIndexOp::create(p, loc, shift));
        else if (shift < 0)
          bit = arith::ShRUIOp::create(p, loc, bit, arith::ConstantIndexOp::create(p, loc, -shift));
        sum = sum ? arith::OrIOp::create(p, loc, sum, bit).getResult() : bit;
      }
    };
    addBits(layout.lanes, lane);
    addBits(layout.warps, warp);
    return sum;
  });
}

Value Emitter::coordinate(const Layout &layout, int64_t k, unsigned dim) {
  int64_t fixed = layout.registerCoordinate(k)[dim];
  Value thread = threadPart(layout, dim);
  if (!thread)
    return index(fixed);
  if (fixed == 0)
    return thread;
  // The register bits and the thread bits are disjoint: + is |.
  return arith::AddIOp::create(b, loc, thread, index(fixed));
}

SmallVector<Value> Emitter::coordinates(const Layout &layout, int64_t k) {
  SmallVector<Value> c;
  for (unsigned d = 0; d < layout.rank(); ++d)
    c.push_back(coordinate(layout, k, d));
  return c;
}

Value Emitter::isOwner(const Layout &layout) {
  int64_t laneMask = 0, warpMask = 0;
  for (size_t i = 0; i < layout.lanes.size(); ++i)
    if (layout.lanes[i].isNone())
      laneMask |= int64_t(1) << i;
  for (size_t i = 0; i < layout.warps.size(); ++i)
    if (layout.warps[i].isNone())
      warpMask |= int64_t(1) << i;
  if (!laneMask && !warpMask)
    return {};
  return cached("owner:" + std::to_string(laneMask) + ":" + std::to_string(warpMask),
                [&](OpBuilder &p) -> Value {
                  Value zero = arith::ConstantIndexOp::create(p, loc, 0);
                  auto clear = [&](Value id, int64_t mask) {
                    Value bits = arith::AndIOp::create(p, loc, id, arith::ConstantIndexOp::create(p, loc, mask));
                    return arith::CmpIOp::create(p, loc, arith::CmpIPredicate::eq, bits, zero);
                  };
                  if (!warpMask)
                    return clear(lane, laneMask);
                  if (!laneMask)
                    return clear(warp, warpMask);
                  Value laneClear = clear(lane, laneMask), warpClear = clear(warp, warpMask);
                  return arith::AndIOp::create(p, loc, laneClear, warpClear);
                });
}

Value Emitter::inShape(const Layout &layout, ArrayRef<int64_t> logical, int64_t k) {
  Value result;
  for (unsigned d = 0; d < layout.rank(); ++d) {
    if (logical[d] >= layout.shape[d])
      continue;
    Value c = coordinate(layout, k, d);
    Value inside;
    if (auto fixed = getConstantIntValue(c)) {
      if (*fixed < logical[d])
        continue;
      inside = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    } else {
      inside = below(c, index(logical[d]));
    }
    result = andOf(result, inside);
  }
  return result;
}

Value Emitter::linearIndex(ArrayRef<Value> coordinate, ArrayRef<int64_t> shape) {
  Value linear = index(0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    linear = add(linear, mul(coordinate[d], index(stride)));
    stride *= shape[d];
  }
  return linear;
}

VectorType Emitter::vectorType(Type tensorType) {
  auto tensor = llvm::cast<RankedTensorType>(tensorType);
  Layout layout = *layoutOf(tensor);
  return VectorType::get({layout.numRegisters()}, tensor.getElementType());
}

Value Emitter::extract(Value vector, int64_t k) {
  return vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{k});
}

Value Emitter::fromElements(VectorType type, ArrayRef<Value> elements) {
  return vector::FromElementsOp::create(b, loc, type, elements);
}

Value Emitter::splat(VectorType type, Value scalar) {
  return vector::BroadcastOp::create(b, loc, type, scalar);
}

Value Emitter::andOf(Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

Value Emitter::shuffleXor(Value v, unsigned laneMask) {
  Type type = v.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto shuffle32 = [&](Value x) {
    return ::mlir::gpu::ShuffleOp::create(b, loc, x, this->i32(laneMask), this->i32(kWarpSize),
                                          ::mlir::gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32)
    return shuffle32(v);
  // Other widths as integers of theirs: narrower ones ride in the low bits
  // of one word, 64-bit ones as two.
  Type word = b.getIntegerType(bits);
  Value asWord = type == word ? v : arith::BitcastOp::create(b, loc, word, v).getResult();
  Value moved;
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, asWord);
    moved = arith::TruncIOp::create(b, loc, word, shuffle32(wide));
  } else {
    Value low = shuffle32(arith::TruncIOp::create(b, loc, i32, asWord));
    Value high = shuffle32(arith::TruncIOp::create(
        b, loc, i32, arith::ShRUIOp::create(b, loc, asWord, constant(i64, 32))));
    Value highBits =
        arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, high), constant(i64, 32));
    moved = arith::OrIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, low), highBits);
  }
  return type == word ? moved : arith::BitcastOp::create(b, loc, type, moved).getResult();
}

Value Emitter::below(Value value, Value limit) {
  if (knownBelow(value, limit))
    return Value();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, value, limit);
}

Value Emitter::sharedPointer(Value byteOffset, Type element, Value elementIndex) {
  LLVM::GlobalOp global = sharedMemoryGlobal(func);
  Value base = cached("shared-base", [&](OpBuilder &p) -> Value {
    return LLVM::AddressOfOp::create(p, loc, LLVM::LLVMPointerType::get(p.getContext(), 3),
                                     global.getSymName());
  });
  std::optional<int64_t> fixed = getConstantIntValue(byteOffset);
  if (temporaryShift && fixed && *fixed >= scratchBytes)
    byteOffset = arith::AddIOp::create(b, loc, byteOffset, temporaryShift);
  Value bytes = arith::AddIOp::create(
      b, loc, byteOffset, arith::MulIOp::create(b, loc, elementIndex, index(elementBytes(element))));
  Value offset64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base, ValueRange{offset64});
}

Value Emitter::globalPointer(Value base, Type element, Value elementIndex) {
  Type memory = element.isInteger(1) ? b.getI8Type()
                                     : element.isInteger() ? b.getIntegerType(element.getIntOrFloatBitWidth())
                                                           : element;
  Value offset64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), elementIndex);
  return LLVM::GEPOp::create(b, loc, base.getType(), memory, base, ValueRange{offset64});
}

Value Emitter::refPointer(const RefInfo &ref, ArrayRef<Value> c) {
  if (!ref.shared || ref.strips < 0) {
    Value linear = index(0);
    for (size_t d = 0; d < c.size(); ++d)
      linear = add(linear, mul(c[d], ref.strides[d]));
    return ref.shared ? sharedPointer(index(ref.sharedOffset), ref.element, linear)
                      : globalPointer(ref.base, ref.element, linear);
  }
  // Strips (SharedLayout::strips): within a tile of R x C elements, column
  // c's bytes lie in strip (c * bytes) / span, each strip R rows of span
  // bytes; then the swizzle permutes 16-byte chunks within each span:
  // address bits [4, 4 + s) ^= bits [7, 7 + s), s = log2(span / 16).
  size_t rank = c.size();
  int64_t rows = ref.arrayShape[rank - 2], columns = ref.arrayShape[rank - 1];
  int64_t bytes = elementBytes(ref.element);
  int64_t span = ref.strips ? ref.strips : 16;
  Value tile = index(0);
  int64_t tileStride = 1;
  for (size_t d = rank - 2; d-- > 0;) {
    tile = add(tile, mul(c[d], index(tileStride)));
    tileStride *= ref.arrayShape[d];
  }
  Value column = arith::MulIOp::create(b, loc, c[rank - 1], index(bytes));
  Value strip = arith::DivUIOp::create(b, loc, column, index(span));
  Value within = arith::RemUIOp::create(b, loc, column, index(span));
  Value tileOffset = arith::MulIOp::create(b, loc, tile, index(rows * columns * bytes));
  Value stripOffset = arith::MulIOp::create(b, loc, strip, index(rows * span));
  Value rowOffset = arith::MulIOp::create(b, loc, c[rank - 2], index(span));
  Value inStrip = arith::AddIOp::create(b, loc, rowOffset, within);
  Value offset = arith::AddIOp::create(b, loc, tileOffset,
                                       arith::AddIOp::create(b, loc, stripOffset, inStrip));
  if (ref.strips) {
    int64_t mask = span / 16 - 1;
    Value line = arith::ShRUIOp::create(b, loc, offset, index(7));
    Value chunk = arith::AndIOp::create(b, loc, line, index(mask));
    offset = arith::XOrIOp::create(b, loc, offset, arith::ShLIOp::create(b, loc, chunk, index(4)));
  }
  return sharedPointer(index(ref.sharedOffset), b.getI8Type(), offset);
}

Value Emitter::loadValue(Value pointer, Type storage, Type value) {
  if (storage.isInteger(1)) {
    Value byte = LLVM::LoadOp::create(b, loc, b.getI8Type(), pointer);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, byte,
                                 arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0));
  }
  return LLVM::LoadOp::create(b, loc, value, pointer);
}

void Emitter::storeValue(Value v, Value pointer, Type storage) {
  if (storage.isInteger(1))
    v = arith::ExtUIOp::create(b, loc, b.getI8Type(), v);
  LLVM::StoreOp::create(b, loc, v, pointer);
}

void Emitter::guarded(Value condition, function_ref<void()> then) {
  if (!condition) {
    then();
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  then();
}

Value Emitter::guardedValue(Value condition, Type type, function_ref<Value()> then, Value otherwise) {
  if (!condition)
    return then();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, condition, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, then());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, otherwise);
  }
  return ifOp.getResult(0);
}

Value Emitter::paddingValue(Type storage, Type value) {
  if (llvm::isa<FloatType>(value))
    return constant(value, std::numeric_limits<double>::quiet_NaN());
  unsigned bits = value.getIntOrFloatBitWidth();
  if (bits == 1 || storage.isUnsignedInteger())
    return constant(value, 0);
  return cached("min:" + std::to_string(bits), [&](OpBuilder &p) -> Value {
    return arith::ConstantOp::create(p, loc, value,
                                     p.getIntegerAttr(value, APInt::getSignedMinValue(bits)));
  });
}

int64_t Emitter::beginSharedTemporary(int64_t bytes) {
  barrier();
  temporaryBytes = std::max(temporaryBytes, (bytes + 15) / 16 * 16);
  return scratchBytes;
}

Emitter::Exchange Emitter::beginSharedExchange(int64_t elements, Type element, bool ownSlots) {
  // Every thread of the CTA gets a slot: threadId() counts within a
  // warpgroup when there are several, so the CTA's count bounds it.
  int64_t slots = ownSlots ? int64_t(numWarps) * 32 : 0;
  return {beginSharedTemporary((elements + slots) * elementBytes(element)), elements, ownSlots};
}

void Emitter::barrier() {
  if (warpLevel) {
    // Warp-level code (pk.warp_map): each warp on its own.
    NVVM::SyncWarpOp::create(b, loc, i32(-1));
    return;
  }
  if (warpgroups <= 1) {
    ::mlir::gpu::BarrierOp::create(b, loc);
    return;
  }
  // Only the running warpgroup: bar.sync 1 + group, 128 (barrier 0 is the
  // CTA's).
  Value id = cached("warpgroup-barrier", [&](OpBuilder &p) -> Value {
    Value g = arith::IndexCastUIOp::create(p, loc, p.getI32Type(), group);
    return arith::AddIOp::create(p, loc, g, arith::ConstantIntOp::create(p, loc, p.getI32Type(), 1));
  });
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32(128), {}, Value());
}

int64_t Emitter::sharedMemoryBytes() const {
  int64_t temporaries = temporaryBytes;
  if (warpgroups > 1)
    temporaries = (temporaryBytes + 127) / 128 * 128 * warpgroups;
  return scratchBytes + temporaries;
}

LogicalResult Emitter::fail(Operation *op, const Twine &message) {
  op->emitError(message);
  status = failure();
  return failure();
}

} // namespace pk::gpu
