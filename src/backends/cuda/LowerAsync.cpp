//===- LowerAsync.cpp - The pk-gpu-lower-async pass -----------------------===//
//
// Lowers the pkgpu ops for Hopper's asynchronous units (TMA copies,
// warpgroup matrix multiplies) to NVVM with MLIR's conversion framework:
// the patterns of each family come from its populate function (Async.h),
// and the target says that none of the pkgpu async ops may remain.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Async.h"
#include "backends/cuda/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPULOWERASYNC
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

struct LowerAsyncPass : impl::PkGpuLowerAsyncBase<LowerAsyncPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    async::populateTmaToNVVMPatterns(patterns);
    async::populateWgmmaToNVVMPatterns(patterns);
    ConversionTarget target(*ctx);
    async::configureAsyncLoweringTarget(target);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

} // namespace pk::gpu
