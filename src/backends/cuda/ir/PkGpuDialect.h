//===- PkGpuDialect.h - The pkgpu dialect -----------------------*- C++ -*-===//
#ifndef PK_BACKENDS_CUDA_IR_PKGPUDIALECT_H
#define PK_BACKENDS_CUDA_IR_PKGPUDIALECT_H

#include "backends/cuda/Layout.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/BasicPtxBuilderInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "backends/cuda/ir/PkGpuDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "backends/cuda/ir/PkGpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "backends/cuda/ir/PkGpuOps.h.inc"

namespace pk::gpu {

LayoutAttr toAttr(mlir::MLIRContext *ctx, const Layout &layout);
Layout fromAttr(LayoutAttr attr);
/// The layout a tensor type carries as its encoding, if any.
std::optional<Layout> layoutOf(mlir::Type type);
/// `type` with `layout` as its encoding.
mlir::RankedTensorType withLayout(mlir::RankedTensorType type, const Layout &layout);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_IR_PKGPUDIALECT_H
