//===- CudaBackend.cpp - The stages from pk IR to a cubin -----------------===//
//
// Runs the stages of Pipeline.h one after another, writing each stage's IR
// to --dump-dir, then LLVM's NVPTX back end (libdevice linked for math)
// and ptxas (ptxas.log: registers, spills), and fills in the launch
// manifest's figures: shared memory per kernel after stage 03, registers
// and spills from ptxas.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/CudaBackend.h"

#include "backends/MosaicGpuSupport.h"
#include "backends/cuda/HardwareLimits.h"
#include "backends/cuda/HostProgram.h"
#include "backends/cuda/KernelCodegen.h"
#include "backends/cuda/LaunchPlan.h"
#include "backends/cuda/OutlineMesh.h"
#include "backends/cuda/Passes.h"
#include "backends/cuda/Pipeline.h"
#include "backends/cuda/Toolkit.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::backends::cuda {

using namespace mlir;

namespace {

void registerEverything(MLIRContext *ctx) {
  DialectRegistry registry;
  gpu::registerCudaDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);
  for (StringRef name : {"pkgpu", "gpu", "llvm", "nvvm", "vector", "cf", "affine"})
    ctx->getOrLoadDialect(name);
}

/// Writes each stage's IR to --dump-dir.
class Dumper {
public:
  explicit Dumper(const std::string &dir) : dir(dir) {
    if (!dir.empty())
      llvm::sys::fs::create_directories(dir);
  }
  void text(const std::string &name, const std::string &contents) {
    if (dir.empty())
      return;
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    if (!error)
      out << contents;
  }
  void ir(const std::string &name, Operation *op) {
    if (dir.empty())
      return;
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os);
    text(name, s);
  }

private:
  std::string dir;
};

std::string printed(Operation *op, bool withLocations = false) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  // Located, in the generic form: locations print as aliases defined at
  // the end, which some ops' custom parsers (nvvm.barrier's) cannot
  // resolve forward; the generic form defers them all.
  if (withLocations) {
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    flags.printGenericOpForm();
  }
  op->print(os, flags);
  return s;
}

/// wgmma is sm_90a's: an architecture-specific feature of compute
/// capability 9.0.
bool hasWgmma(const Target &target) {
  return target.computeCapability() == 90 && target.archSpecific();
}

LogicalResult runStage(ModuleOp module, const BackendOptions &options, Dumper &dump,
                       const std::string &name, llvm::function_ref<void(PassManager &)> populate) {
  PassManager pm(module.getContext());
  populate(pm);
  TimingScope timing = timeStage(options, name);
  if (options.timing)
    pm.enableTiming(timing);
  if (failed(pm.run(module)))
    return failure();
  dump.ir(name + ".mlir", module);
  return success();
}

/// Threads for the backend's stages: the front end runs on one (its work
/// is small and sequential), the backend's per-kernel work in parallel.
class BackendThreads {
public:
  explicit BackendThreads(MLIRContext *ctx) : ctx(ctx), wasEnabled(ctx->isMultithreadingEnabled()) {
    if (!wasEnabled)
      ctx->enableMultithreading(true);
  }
  ~BackendThreads() {
    if (!wasEnabled)
      ctx->enableMultithreading(false);
  }

private:
  MLIRContext *ctx;
  bool wasEnabled;
};

} // namespace

std::optional<BackendOutput> compile(ModuleOp pkModule, const BackendOptions &options) {
  MLIRContext *ctx = pkModule.getContext();
  BackendThreads threads(ctx);
  registerEverything(ctx);
  // Diagnostics are for the kernel's author: the line, not an IR dump.
  ctx->printOpOnDiagnostic(false);
  const Target &target = options.target;
  if (failed(rejectMosaicGpuOps(pkModule, target)))
    return std::nullopt;
  Dumper dump(options.dumpDir);
  dump.ir("00-pk.mlir", pkModule);

  // Pipelines become copies and loops first: the host program's tensor
  // maps come from those copies.
  OwningOpRef<ModuleOp> module = pkModule.clone();
  TimingScope planning = timeStage(options, "host programs: pipelines, launch plans");
  if (failed(gpu::expandPipelines(*module)))
    return std::nullopt;
  gpu::materializeGlobalSemaphores(*module);
  std::map<Operation *, gpu::LaunchPlan> plans = gpu::planLaunches(*module, gpu::kDefaultNumWarps);
  gpu::HostPrograms host = gpu::buildHostPrograms(*module, plans);
  std::vector<CudaProgram> &programs = host.programs;
  planning.stop();

  if (failed(runStage(*module, options, dump, "01-outlined",
                      [&](PassManager &pm) {
                        gpu::buildOutlineStage(pm, gpu::kDefaultNumWarps, hasWgmma(target));
                      })) ||
      failed(gpu::addOperandTensorMaps(*module, host)) ||
      failed(runStage(*module, options, dump, "02-layouts",
                      [&](PassManager &pm) { gpu::buildLayoutStage(pm); })) ||
      failed(runStage(*module, options, dump, "03-gpu",
                      [&](PassManager &pm) { gpu::buildDistributeStage(pm); })))
    return std::nullopt;

  // Shared memory per kernel, for the manifest and against the target's
  // limit.
  std::map<std::string, int64_t> sharedBytes;
  bool tooLarge = false;
  module->walk([&](::mlir::gpu::GPUFuncOp func) {
    int64_t bytes = 0;
    if (auto attr = func->getAttrOfType<IntegerAttr>("pkgpu.shared_memory_bytes"))
      bytes = attr.getInt();
    sharedBytes[func.getName().str()] = bytes;
    int64_t limit = gpu::sharedMemoryLimit(target.computeCapability());
    if (bytes > limit) {
      // Array code outside a kernel has blocks pkc chose, not the user.
      if (func->hasAttr("pkgpu.generated"))
        func.emitError() << "this array code outside a kernel needs " << bytes
                         << " bytes of shared memory to move its data, more than the " << limit
                         << " a CTA can have on " << target.arch
                         << ": pkc runs it as a generated kernel whose blocks are whole along the "
                         << "axes the code reads across; do this work in a kernel with blocks "
                         << "of your own";
      else
        func.emitError() << "this kernel needs " << bytes << " bytes of shared memory (scratch "
                         << "buffers and staging for data movement), more than the " << limit
                         << " a CTA can have on " << target.arch
                         << "; use smaller blocks or scratch buffers";
      tooLarge = true;
    }
  });
  if (tooLarge)
    return std::nullopt;
  for (CudaProgram &p : programs)
    for (auto &step : p.steps)
      if (auto *launch = std::get_if<CudaLaunch>(&step))
        launch->dynamicSharedMemory = static_cast<uint64_t>(sharedBytes[launch->kernel]);

  BackendOutput output;
  if (options.emit == "gpu") {
    output.emitted = printed(*module);
    if (options.emitLocations)
      output.emittedWithLocations = printed(*module, /*withLocations=*/true);
    output.cudaPrograms = programs; // the simulator runs stage 03 with them
    return output;
  }

  // MLIR's lowering to NVVM and LLVM, then the NVPTX back end: for a
  // cubin, each kernel on its own (in parallel); --emit=llvm and ptx
  // show one module.
  bool perKernel = options.emit != "llvm" && options.emit != "ptx";
  gpu::Toolkit toolkit = gpu::findToolkit();
  module->walk([&](::mlir::gpu::GPUModuleOp kernels) {
    kernels.setTargetsAttr(
        ArrayAttr::get(ctx, {NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda",
                                                       target.arch, target.ptxFeatures())}));
  });
  if (failed(runStage(*module, options, dump, "04-nvvm", [&](PassManager &pm) {
        if (perKernel)
          pm.addPass(gpu::createPkGpuSplitKernelModules());
        gpu::buildNvvmStage(pm);
      })))
    return std::nullopt;

  if (options.emit == "llvm") {
    // The kernels' LLVM IR, before libdevice is linked and PTX is made.
    OwningOpRef<ModuleOp> llvmModule = ModuleOp::create(UnknownLoc::get(ctx));
    module->walk([&](::mlir::gpu::GPUModuleOp kernels) {
      for (Operation &op : kernels.getBody()->getOperations())
        llvmModule->getBody()->push_back(op.clone());
    });
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> translated = translateModuleToLLVMIR(*llvmModule, llvmContext);
    if (!translated) {
      emitError(pkModule.getLoc()) << "internal error: translating the kernels to LLVM IR failed";
      return std::nullopt;
    }
    llvm::raw_string_ostream os(output.emitted);
    translated->print(os, nullptr);
    return output;
  }

  // Math functions are calls into libdevice; without it there is no PTX.
  if (toolkit.libdeviceRoot.empty()) {
    LLVM::CallOp needsLibdevice;
    module->walk([&](LLVM::CallOp call) {
      if (!needsLibdevice && call.getCallee() && call.getCallee()->starts_with("__nv_"))
        needsLibdevice = call;
    });
    if (needsLibdevice) {
      emitError(needsLibdevice.getLoc())
          << "this math function comes from the CUDA toolkit's libdevice "
             "(nvvm/libdevice/libdevice.10.bc), which was not found: install the CUDA toolkit or "
             "point PK_CUDA_PATH at it";
      return std::nullopt;
    }
  }
  TimingScope codegen = timeStage(options, "PTX: LLVM with libdevice, -O3, NVPTX");
  FailureOr<std::vector<std::string>> made = gpu::kernelsToPtx(*module, toolkit);
  codegen.stop();
  if (failed(made))
    return std::nullopt;
  std::vector<std::string> ptx = std::move(*made);
  size_t part = 0;
  for (auto kernels : module->getOps<::mlir::gpu::GPUModuleOp>())
    dump.text(ptx.size() == 1 ? "kernels.ptx" : kernels.getName().str() + ".ptx", ptx[part++]);
  if (options.emit == "ptx") {
    output.emitted = ptx.empty() ? std::string() : ptx.front();
    output.artifact = output.emitted;
    output.format = "ptx";
    output.extension = ".ptx";
    output.cudaPrograms = programs;
    return output;
  }

  TimingScope assembling = timeStage(options, "ptxas");
  gpu::PtxasResult assembled = gpu::runPtxas(toolkit, ptx, target.arch);
  assembling.stop();
  dump.text("ptxas.log", assembled.command + "\n" + assembled.log);
  if (!assembled.error.empty()) {
    emitError(UnknownLoc::get(ctx)) // about the toolkit, not a line
        << assembled.error;
    return std::nullopt;
  }
  dump.text("kernels.cubin", assembled.cubin);
  for (CudaProgram &p : programs)
    for (auto &step : p.steps)
      if (auto *launch = std::get_if<CudaLaunch>(&step))
        if (std::optional<gpu::KernelResources> r = gpu::kernelResources(assembled.log, launch->kernel)) {
          launch->registers = r->registers;
          launch->spillStores = r->spillStores;
          launch->spillLoads = r->spillLoads;
          launch->localMemory = r->stackFrame;
          launch->staticSharedMemory = r->sharedStatic;
        }
  output.ptxasNotes = gpu::performanceNotes(assembled.log);
  output.artifact = std::move(assembled.cubin);
  output.format = "cubin";
  output.extension = ".cubin";
  output.emitted = options.emit == "cubin" ? output.artifact : std::string();
  output.cudaPrograms = std::move(programs);
  return output;
}

} // namespace pk::backends::cuda
