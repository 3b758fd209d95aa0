//===- LowerDot.cpp - Matrix products -------------------------------------===//
//
// pk.dot is tpu.matmul from a zero accumulator, with dimension numbers
// saying which axes contract (a transposed operand contracts its other
// axis; nothing is transposed explicitly), as Pallas lowers dot_general;
// an f32 dot at HIGHEST precision (no allow_tf32) contracts in fp32.
// Mosaic accumulates in 32 bits only: a narrower result (bf16 x bf16 ->
// bf16, which Pallas rejects) accumulates in f32 / i32 and is rounded
// after, as XLA computes such a dot.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

LogicalResult lowerDot(Operation *op, BodyLowering &l) {
  auto dot = llvm::cast<pk::DotOp>(op);
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  auto result = llvm::cast<VectorType>(BodyLowering::convertType(dot.getType()));
  Type element = result.getElementType();
  bool isFloat = llvm::isa<FloatType>(element);
  Type accElement = element.getIntOrFloatBitWidth() == 32 ? element
                    : isFloat                             ? Type(b.getF32Type())
                                                          : Type(b.getI32Type());
  auto accType = result.clone(accElement);
  Value acc = arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType));

  int64_t lhsContracting = dot.getTransposeLhs() ? 0 : 1;
  int64_t rhsContracting = dot.getTransposeRhs() ? 1 : 0;
  int64_t lhsFree = 1 - lhsContracting, rhsFree = 1 - rhsContracting;
  // An f32 dot that may not use reduced precision (JAX's HIGHEST) asks
  // Mosaic for f32 contraction, as Pallas's lowering does; DEFAULT leaves
  // Mosaic's default.
  mosaic::ContractPrecisionAttr precision;
  if (llvm::cast<ShapedType>(dot.getLhs().getType()).getElementType().isF32() &&
      !dot.getAllowTf32())
    precision = mosaic::ContractPrecisionAttr::get(b.getContext(), mosaic::ContractPrecision::FP32);
  auto dims = mosaic::DotDimensionNumbersAttr::get(
      b.getContext(), {lhsContracting}, {rhsContracting}, {lhsFree}, {rhsFree},
      {0, lhsFree, 1, rhsFree}, {}, {});
  Value product =
      mosaic::MatmulOp::create(b, loc, accType, l.lookup(dot.getLhs()), l.lookup(dot.getRhs()), acc,
                               /*transpose_lhs=*/b.getBoolAttr(false),
                               /*transpose_rhs=*/b.getBoolAttr(false), precision, dims,
                               /*transpose_lhs_hint=*/b.getBoolAttr(false));
  if (accElement != element)
    product = isFloat ? arith::TruncFOp::create(b, loc, result, product).getResult()
                      : arith::TruncIOp::create(b, loc, result, product).getResult();
  l.map(dot.getResult(), product);
  return success();
}

} // namespace

void addDotRules(RuleTable &rules) { rules[TypeID::get<pk::DotOp>()] = lowerDot; }

} // namespace pk::backends::tpu
