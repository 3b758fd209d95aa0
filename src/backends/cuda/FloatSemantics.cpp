//===- FloatSemantics.cpp - The pk-gpu-float-semantics pass ---------------===//
//
// A kernel's floats behave as in the compiler JAX hands it to. JAX
// compiles a pallas_call for the GPU through Triton, which links libdevice
// in its flush-to-zero mode (nvvm-reflect-ftz) and lets multiplies and
// adds fuse into FMAs (enable_fp_fusion); Mosaic GPU (a plgpu.kernel, or
// a pallas_call with Mosaic GPU's compiler_params) does neither, except
// that `approx_math` computes exp2 with `ex2.approx.ftz`. The outliners
// mark each kernel (setFloatSemantics); this pass, after the lowering to the
// LLVM dialect, turns the marks into what LLVM reads:
//
// - libdevice's mode is a module flag, so a module gets it only where all
//   of its kernels flush (after pk-gpu-split-kernel-modules, each kernel
//   has a module of its own; `--emit=ptx` shows them in one);
// - contraction is the `contract` fast-math flag of each multiply, add and
//   subtract, which LLVM's NVPTX back end fuses into `fma.rn` (without it,
//   it emits `mul.rn` and `add.rn`, which ptxas may not fuse either).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Passes.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUFLOATSEMANTICS
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

bool isKernel(LLVM::LLVMFuncOp func) {
  return func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName());
}

/// Whether every kernel of `module` (one at least) flushes denormals.
bool kernelsFlushDenormals(::mlir::gpu::GPUModuleOp module) {
  bool any = false, all = true;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (isKernel(func)) {
      any = true;
      all &= func->hasAttr(kFlushDenormalsAttr);
    }
  return any && all;
}

/// Marks the float multiplies, adds and subtracts of `func` contractible.
void allowContraction(LLVM::LLVMFuncOp func) {
  func.walk([](Operation *op) {
    if (!llvm::isa<LLVM::FMulOp, LLVM::FAddOp, LLVM::FSubOp>(op))
      return;
    auto fastmath = llvm::cast<LLVM::FastmathFlagsInterface>(op);
    LLVM::FastmathFlags flags =
        fastmath.getFastmathAttr().getValue() | LLVM::FastmathFlags::contract;
    op->setAttr(fastmath.getFastmathAttrName(),
                LLVM::FastmathFlagsAttr::get(op->getContext(), flags));
  });
}

struct FloatSemanticsPass : impl::PkGpuFloatSemanticsBase<FloatSemanticsPass> {
  void runOnOperation() override {
    ::mlir::gpu::GPUModuleOp module = getOperation();
    if (kernelsFlushDenormals(module)) {
      MLIRContext *ctx = module.getContext();
      auto ftz = LLVM::ModuleFlagAttr::get(ctx, LLVM::ModFlagBehavior::Override,
                                           StringAttr::get(ctx, "nvvm-reflect-ftz"),
                                           IntegerAttr::get(IntegerType::get(ctx, 32), 1));
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      LLVM::ModuleFlagsOp::create(b, module.getLoc(), b.getArrayAttr({ftz}));
    }
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (isKernel(func) && func->hasAttr(kContractFpAttr))
        allowContraction(func);
  }
};

} // namespace

} // namespace pk::gpu
