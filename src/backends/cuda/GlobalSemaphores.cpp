//===- GlobalSemaphores.cpp - pl.get_global's counters in global memory ---===//
//
// Every CTA of a launch reaches the semaphores of `pl.get_global`, and each
// launch starts them at zero (JAX hands Mosaic GPU a zeroed buffer per
// call). Here that buffer is an array the export computes: a Mosaic GPU
// kernel with a `pk.get_global` gets one more input, an i32 array with a
// word per semaphore that a small generated kernel zeroes just before it,
// and each `pk.get_global` becomes a `pkgpu.semaphore_view` of its words.
// The host program then allocates the array as a temporary and launches
// both kernels in order, as for any array passed between kernels, and
// readers of the manifest need nothing new.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/ir/PkGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace pk::gpu {

using namespace mlir;

namespace {

/// The counters' buffer as the kernels see it: a Ref in global memory.
Type countersRefType(OpBuilder &b, int64_t words) {
  auto gmem = pk::MemorySpaceAttr::get(b.getContext(), MemorySpace::GPUGlobal);
  return pk::RefType::get({words}, b.getI32Type(), gmem);
}

int64_t countersOf(pk::GetGlobalOp g) {
  return llvm::cast<pk::SemaphoreType>(g.getType()).getNumElements();
}

/// A Mosaic GPU kernel of one warpgroup that writes zeros into its only
/// output, an i32 array of `words` elements.
pk::MeshKernelOp zeroingKernel(OpBuilder &b, Location loc, StringRef name, int64_t words) {
  auto type = RankedTensorType::get({words}, b.getI32Type());
  auto op = pk::MeshKernelOp::create(
      b, loc, TypeRange{type}, ValueRange{}, b.getStringAttr(name), b.getDenseI64ArrayAttr({}),
      b.getStrArrayAttr({}), b.getDenseI64ArrayAttr({}), b.getStrArrayAttr({}),
      b.getI64IntegerAttr(1), nullptr, b.getDenseI64ArrayAttr({}), nullptr);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&op.getBody(), {}, {countersRefType(b, words)}, {loc});
  Value zeros =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
  pk::StoreOp::create(b, loc, zeros, body->getArgument(0), ValueRange{},
                      b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({words}),
                      b.getDenseI64ArrayAttr({1}), b.getDenseI64ArrayAttr({}), Value());
  pk::ScopeYieldOp::create(b, loc);
  return op;
}

void materialize(pk::MeshKernelOp kernel, ArrayRef<pk::GetGlobalOp> globals) {
  int64_t words = 0;
  for (pk::GetGlobalOp g : globals)
    words += countersOf(g);
  OpBuilder b(kernel);
  pk::MeshKernelOp zero =
      zeroingKernel(b, kernel.getLoc(), (kernel.getName() + "_semaphores").str(), words);
  // The counters come after the kernel's inputs (before its outputs).
  unsigned position = kernel.getInputs().size();
  kernel.getInputsMutable().append(zero.getResult(0));
  Block &body = kernel.getBodyBlock();
  BlockArgument buffer = body.insertArgument(position, countersRefType(b, words), kernel.getLoc());
  int64_t offset = 0;
  for (pk::GetGlobalOp g : globals) {
    b.setInsertionPoint(g);
    Value view =
        SemaphoreViewOp::create(b, g.getLoc(), g.getType(), buffer, b.getI64IntegerAttr(offset));
    offset += countersOf(g);
    g.getResult().replaceAllUsesWith(view);
    g->erase();
  }
}

} // namespace

void materializeGlobalSemaphores(ModuleOp module) {
  module.walk([](pk::MeshKernelOp kernel) {
    SmallVector<pk::GetGlobalOp> globals;
    kernel.getBody().walk([&](pk::GetGlobalOp g) { globals.push_back(g); });
    if (!globals.empty())
      materialize(kernel, globals);
  });
}

} // namespace pk::gpu
