//===- KernelCodegen.cpp - Each kernel to PTX on its own thread -----------===//
#include "backends/cuda/KernelCodegen.h"

#include "backends/cuda/Passes.h"
#include "backends/cuda/PtxasWorkarounds.h"
#include "backends/cuda/ShortLiveRanges.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"

#include <mutex>

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUSPLITKERNELMODULES
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether a copy of `op` in every kernel's module still links: a
/// declaration, or a definition no other file can see.
bool copiesLink(Operation &op) {
  if (auto func = llvm::dyn_cast<LLVM::LLVMFuncOp>(op))
    return func.isExternal() || func.getLinkage() == LLVM::Linkage::Internal ||
           func.getLinkage() == LLVM::Linkage::Private;
  if (auto global = llvm::dyn_cast<LLVM::GlobalOp>(op))
    return global.getLinkage() == LLVM::Linkage::Internal ||
           global.getLinkage() == LLVM::Linkage::Private ||
           (!global.getValueOrNull() && global.getInitializerRegion().empty());
  return false;
}

void splitKernelModules(ModuleOp module) {
  SmallVector<::mlir::gpu::GPUModuleOp> modules(module.getOps<::mlir::gpu::GPUModuleOp>());
  for (::mlir::gpu::GPUModuleOp whole : modules) {
    SmallVector<::mlir::gpu::GPUFuncOp> kernels;
    bool splittable = true;
    for (Operation &op : whole.getBody()->getOperations()) {
      auto func = llvm::dyn_cast<::mlir::gpu::GPUFuncOp>(op);
      if (func && func.isKernel())
        kernels.push_back(func);
      else if (!copiesLink(op))
        splittable = false;
    }
    if (!splittable || kernels.size() < 2)
      continue;
    OpBuilder b(whole);
    for (::mlir::gpu::GPUFuncOp kernel : kernels) {
      Operation *part = whole->cloneWithoutRegions();
      part->setAttr(SymbolTable::getSymbolAttrName(), kernel.getNameAttr());
      Block *body = new Block();
      part->getRegion(0).push_back(body);
      OpBuilder inside = OpBuilder::atBlockEnd(body);
      for (Operation &op : whole.getBody()->getOperations()) {
        auto func = llvm::dyn_cast<::mlir::gpu::GPUFuncOp>(op);
        if (!func || !func.isKernel() || func == kernel)
          inside.clone(op);
      }
      b.insert(part);
    }
    whole->erase();
  }
}

struct SplitKernelModulesPass : impl::PkGpuSplitKernelModulesBase<SplitKernelModulesPass> {
  void runOnOperation() override { splitKernelModules(getOperation()); }
};

} // namespace

FailureOr<std::vector<std::string>> kernelsToPtx(ModuleOp module, const Toolkit &toolkit) {
  SmallVector<::mlir::gpu::GPUModuleOp> modules(module.getOps<::mlir::gpu::GPUModuleOp>());
  std::vector<std::string> ptx(modules.size());
  MLIRContext *ctx = module.getContext();
  // MLIR's NVVM serializer always tries to link libdevice and reports a
  // missing one as an error, yet carries on; kernels without math calls
  // (checked by the caller) do not need it, so that report is not the
  // user's. What the threads report is passed on once they are done.
  std::vector<Diagnostic> reports;
  LogicalResult done = success();
  {
    std::mutex reportsLock;
    ScopedDiagnosticHandler collect(ctx, [&](Diagnostic &d) {
      if (toolkit.libdeviceRoot.empty() && d.str().find("LibDevice path") == 0)
        return success();
      std::lock_guard<std::mutex> guard(reportsLock);
      reports.push_back(std::move(d));
      return success();
    });
    std::string toolkitPath = toolkit.libdeviceRoot.empty() ? toolkit.root : toolkit.libdeviceRoot;
    done = failableParallelForEachN(ctx, 0, modules.size(), [&](size_t i) {
      ::mlir::gpu::GPUModuleOp kernels = modules[i];
      ArrayAttr targets = kernels.getTargetsAttr();
      auto target = targets && targets.size() == 1
                        ? llvm::dyn_cast<::mlir::gpu::TargetAttrInterface>(targets[0])
                        : ::mlir::gpu::TargetAttrInterface();
      if (!target)
        return LogicalResult(
            kernels.emitError("internal error: a kernel module without its target"));
      ::mlir::gpu::TargetOptions options(toolkitPath, {}, {}, {},
                                         ::mlir::gpu::CompilationTarget::Assembly, {}, {}, {},
                                         /*optimizedLlvmIRCallback=*/shortenLiveRangesInLongBlocks);
      std::optional<SmallVector<char, 0>> object = target.serializeToObject(kernels, options);
      if (!object)
        return LogicalResult(
            kernels.emitError("internal error: LLVM's NVPTX back end made no PTX for this module"));
      ptx[i].assign(object->begin(), object->end());
      while (!ptx[i].empty() && ptx[i].back() == '\0')
        ptx[i].pop_back();
      ptx[i] = avoidPtxasMiscompiles(ptx[i]);
      return success();
    });
  }
  for (Diagnostic &d : reports)
    ctx->getDiagEngine().emit(std::move(d));
  if (failed(done))
    return failure();
  return ptx;
}

} // namespace pk::gpu
