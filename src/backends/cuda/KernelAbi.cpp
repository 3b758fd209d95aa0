//===- KernelAbi.cpp - The pk-gpu-kernel-abi pass -------------------------===//
//
// Runs after MLIR's GPU-to-NVVM lowering, on the llvm.func kernels it
// made: the parameters a kernel lists in `pkgpu.tensor_map_params` are
// CUtensorMaps passed by value, as `const __grid_constant__ CUtensorMap`
// is in CUDA C++: `ptr byval([128 x i8]) align 64` marked
// `nvvm.grid_constant`, so that PTX takes the parameter's address in the
// parameter space (cvta.param) for the TMA instructions instead of copying
// it to local memory. (The GPU-to-NVVM lowering drops such attributes from
// gpu.func arguments, hence a function attribute and this pass.)
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Async.h"
#include "backends/cuda/Passes.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUKERNELABI
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// The bytes of a CUtensorMap (cuda.h: CU_TENSOR_MAP_NUM_QWORDS = 16).
constexpr unsigned kTensorMapBytes = 128;

struct KernelAbiPass : impl::PkGpuKernelAbiBase<KernelAbiPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto params = func->getAttrOfType<DenseI64ArrayAttr>(kTensorMapParamsAttr);
      if (!params)
        return;
      MLIRContext *ctx = func.getContext();
      auto byval = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
      for (int64_t index : params.asArrayRef()) {
        if (index < 0 || index >= static_cast<int64_t>(func.getNumArguments()) ||
            !llvm::isa<LLVM::LLVMPointerType>(func.getArgument(index).getType())) {
          func.emitError() << "kernel parameter " << index
                           << " is listed as a tensor map but is not a pointer parameter";
          return signalPassFailure();
        }
        unsigned i = static_cast<unsigned>(index);
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), TypeAttr::get(byval));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        IntegerAttr::get(IntegerType::get(ctx, 64), 64));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(), UnitAttr::get(ctx));
      }
    });
  }
};

} // namespace

} // namespace pk::gpu
