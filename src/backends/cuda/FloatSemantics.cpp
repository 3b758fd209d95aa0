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
//   it emits `mul.rn` and `add.rn`, which ptxas may not fuse either);
// - Triton divides f32 with `div.full.f32` (a reciprocal and a multiply,
//   within 2 ulp, no slow path) where LLVM emits IEEE's `div.rn.f32` (a
//   check and a subroutine call for hard operands): each f32 `fdiv` of
//   such a kernel becomes `llvm.nvvm.div.full`. In a softmax over 8192-wide
//   rows that is 32 divisions a thread.
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

/// Rewrites the f32 divisions of `func` (scalars and vectors, element by
/// element) into Triton's `div.full.f32`.
void divideAsTriton(LLVM::LLVMFuncOp func) {
  SmallVector<LLVM::FDivOp> divisions;
  func.walk([&](LLVM::FDivOp div) {
    if (getElementTypeOrSelf(div.getType()).isF32())
      divisions.push_back(div);
  });
  for (LLVM::FDivOp div : divisions) {
    OpBuilder b(div);
    Location loc = div.getLoc();
    Type f32 = b.getF32Type();
    auto full = [&](Value lhs, Value rhs) -> Value {
      return LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr("llvm.nvvm.div.full"),
                                           ValueRange{lhs, rhs})
          .getResult(0);
    };
    auto vector = llvm::dyn_cast<VectorType>(div.getType());
    if (!vector) {
      div.replaceAllUsesWith(full(div.getLhs(), div.getRhs()));
      div.erase();
      continue;
    }
    Value result = LLVM::PoisonOp::create(b, loc, vector);
    for (int64_t i = 0; i < vector.getNumElements(); ++i) {
      Value position = LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(i));
      Value lhs = LLVM::ExtractElementOp::create(b, loc, div.getLhs(), position);
      Value rhs = LLVM::ExtractElementOp::create(b, loc, div.getRhs(), position);
      result = LLVM::InsertElementOp::create(b, loc, result, full(lhs, rhs), position);
    }
    div.replaceAllUsesWith(result);
    div.erase();
  }
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
      if (isKernel(func)) {
        if (func->hasAttr(kContractFpAttr))
          allowContraction(func);
        if (func->hasAttr(kFullRangeDivideAttr))
          divideAsTriton(func);
      }
  }
};

} // namespace

} // namespace pk::gpu
