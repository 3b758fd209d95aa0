//===- LowerShape.cpp - Iota and shape changes ----------------------------===//
//
// Each as Pallas lowers the matching lax primitive: broadcast_in_dim is a
// shape_cast that inserts the new unit axes then a vector.broadcast;
// reshape a shape_cast (broadcast from a scalar, extract to one);
// transpose tpu.transpose; slice vector.extract_strided_slice; concatenate
// tpu.concatenate; a 1-D iota is a (1, N) tpu.iota over dimension 1 and a
// shape_cast.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

LogicalResult lowerIota(Operation *op, BodyLowering &l) {
  auto iota = llvm::cast<pk::IotaOp>(op);
  OpBuilder &b = l.builder();
  auto resultType = llvm::cast<VectorType>(BodyLowering::convertType(iota.getType()));
  // tpu.iota makes integers; a float iota converts from i32, as jnp does.
  bool isFloat = llvm::isa<FloatType>(resultType.getElementType());
  auto type = isFloat ? resultType.clone(b.getI32Type()) : resultType;
  Value v;
  if (type.getRank() == 1) {
    auto twoD = VectorType::get({1, type.getDimSize(0)}, type.getElementType());
    v = mosaic::IotaOp::create(b, op->getLoc(), twoD, b.getDenseI32ArrayAttr({1}));
    v = vector::ShapeCastOp::create(b, op->getLoc(), type, v);
  } else {
    v = mosaic::IotaOp::create(b, op->getLoc(), type,
                               b.getDenseI32ArrayAttr({static_cast<int32_t>(iota.getDimension())}));
  }
  if (isFloat)
    v = arith::SIToFPOp::create(b, op->getLoc(), resultType, v);
  l.map(iota.getResult(), v);
  return success();
}

LogicalResult lowerBroadcastInDim(Operation *op, BodyLowering &l) {
  auto bcast = llvm::cast<pk::BroadcastInDimOp>(op);
  OpBuilder &b = l.builder();
  Value v = l.lookup(bcast.getOperand());
  auto result = llvm::cast<VectorType>(BodyLowering::convertType(bcast.getType()));
  if (auto in = llvm::dyn_cast<VectorType>(v.getType())) {
    if (in.getShape() == result.getShape()) {
      l.map(bcast.getResult(), v);
      return success();
    }
    // Put the operand's axes where they go, size 1 elsewhere.
    SmallVector<int64_t> placed(result.getRank(), 1);
    for (auto [i, d] : llvm::enumerate(bcast.getBroadcastDimensions()))
      placed[d] = in.getDimSize(i);
    if (ArrayRef<int64_t>(placed) != in.getShape())
      v = vector::ShapeCastOp::create(b, op->getLoc(),
                                      VectorType::get(placed, result.getElementType()), v);
    if (ArrayRef<int64_t>(placed) == result.getShape()) {
      l.map(bcast.getResult(), v);
      return success();
    }
  }
  l.map(bcast.getResult(), vector::BroadcastOp::create(b, op->getLoc(), result, v));
  return success();
}

LogicalResult lowerReshape(Operation *op, BodyLowering &l) {
  auto reshape = llvm::cast<pk::ReshapeOp>(op);
  OpBuilder &b = l.builder();
  Value v = l.lookup(reshape.getOperand());
  Type result = BodyLowering::convertType(reshape.getType());
  auto in = llvm::dyn_cast<VectorType>(v.getType());
  auto out = llvm::dyn_cast<VectorType>(result);
  if (in && out)
    v = in == out ? v : vector::ShapeCastOp::create(b, op->getLoc(), out, v).getResult();
  else if (out)
    v = vector::BroadcastOp::create(b, op->getLoc(), out, v);
  else if (in)
    v = vector::ExtractOp::create(b, op->getLoc(), v, SmallVector<int64_t>(in.getRank(), 0));
  l.map(reshape.getResult(), v);
  return success();
}

LogicalResult lowerTranspose(Operation *op, BodyLowering &l) {
  auto transpose = llvm::cast<pk::TransposeOp>(op);
  Type result = BodyLowering::convertType(transpose.getType());
  l.map(transpose.getResult(),
        mosaic::TransposeOp::create(l.builder(), op->getLoc(), result,
                                    l.lookup(transpose.getOperand()),
                                    l.builder().getDenseI64ArrayAttr(transpose.getPermutation())));
  return success();
}

LogicalResult lowerSlice(Operation *op, BodyLowering &l) {
  auto slice = llvm::cast<pk::SliceOp>(op);
  auto result = llvm::cast<VectorType>(BodyLowering::convertType(slice.getType()));
  // pk-tpu-check allows unit strides only (vector.extract_strided_slice has
  // no others).
  SmallVector<int64_t> sizes;
  for (auto [start, limit] : llvm::zip(slice.getStartIndices(), slice.getLimitIndices()))
    sizes.push_back(limit - start);
  Value v = vector::ExtractStridedSliceOp::create(l.builder(), op->getLoc(), result,
                                                  l.lookup(slice.getOperand()),
                                                  l.builder().getI64ArrayAttr(slice.getStartIndices()),
                                                  l.builder().getI64ArrayAttr(sizes),
                                                  l.builder().getI64ArrayAttr(slice.getStrides()));
  l.map(slice.getResult(), v);
  return success();
}

LogicalResult lowerConcatenate(Operation *op, BodyLowering &l) {
  auto concat = llvm::cast<pk::ConcatenateOp>(op);
  SmallVector<Value> sources;
  for (Value v : concat.getOperands())
    sources.push_back(l.lookup(v));
  Type result = BodyLowering::convertType(concat.getType());
  l.map(concat.getResult(),
        mosaic::ConcatenateOp::create(l.builder(), op->getLoc(), result, sources,
                                      static_cast<uint32_t>(concat.getDimension())));
  return success();
}

} // namespace

void addShapeRules(RuleTable &rules) {
  rules[TypeID::get<pk::IotaOp>()] = lowerIota;
  rules[TypeID::get<pk::BroadcastInDimOp>()] = lowerBroadcastInDim;
  rules[TypeID::get<pk::ReshapeOp>()] = lowerReshape;
  rules[TypeID::get<pk::TransposeOp>()] = lowerTranspose;
  rules[TypeID::get<pk::SliceOp>()] = lowerSlice;
  rules[TypeID::get<pk::ConcatenateOp>()] = lowerConcatenate;
}

} // namespace pk::backends::tpu
