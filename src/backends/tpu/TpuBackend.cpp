//===- TpuBackend.cpp - The TPU pipeline ----------------------------------===//
//
// pk IR -> Mosaic TPU MLIR, as one readable list of stages:
//
//   0. clone                     the pk module may serve other targets too
//   1. pk-expand-butterflies     sorts' exchanges as slices and concatenations
//      pk-tpu-scalar-array-code  small 0-d / 1-D array code to the scalar core
//   2. pk-tpu-check              the TPU rules, errors at the user's lines
//   3. plan                      one KernelPlan per pallas_call (names, windows)
//   4. pk-tpu-lower-to-mosaic    one Mosaic module per pallas_call (on a
//                                second clone: the plans point into the first)
//   5. verify                    MLIR's verifiers, Mosaic ops included
//   6. print                     the artifact (.mlir text) and the manifest
//
// --emit=mlir returns the printed module; --dump-dir gets each stage.
//
//===----------------------------------------------------------------------===//
#include "backends/MosaicGpuSupport.h"
#include "backends/tpu/TpuBackend.h"

#include "backends/tpu/KernelPlan.h"
#include "backends/tpu/Passes.h"
#include "backends/tpu/Rules.h"
#include "backends/tpu/TpuManifest.h"
#include "transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  os << "\n";
  return text;
}

void dump(const BackendOptions &options, llvm::StringRef name, Operation *op) {
  if (options.dumpDir.empty())
    return;
  llvm::sys::fs::create_directories(options.dumpDir);
  llvm::SmallString<256> path(options.dumpDir);
  llvm::sys::path::append(path, name);
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (!error)
    os << print(op);
}

} // namespace

std::optional<BackendOutput> compile(ModuleOp module, const BackendOptions &options) {
  if (!options.emit.empty() && options.emit != "mlir") {
    emitError(module.getLoc()) << "the TPU backend has no stage '" << options.emit
                               << "'; --emit=mlir prints the Mosaic module";
    return std::nullopt;
  }
  MLIRContext *ctx = module.getContext();
  // Errors point at the user's line; the op's IR would only confuse.
  bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  llvm::scope_exit restore([&] { ctx->printOpOnDiagnostic(printOp); });
  if (failed(rejectMosaicGpuOps(module, options.target)))
    return std::nullopt;
  DialectRegistry registry;
  registerTpuDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();
  dump(options, "0-pk.mlir", module);

  // 0-1. Array code for the scalar core, on a copy.
  OwningOpRef<ModuleOp> tpuModule = module.clone();
  PassManager scalar(ctx);
  scalar.addPass(pk::createPkExpandButterflies()); // Mosaic has no such exchange
  scalar.addPass(createPkTpuScalarArrayCode());
  TimingScope scalarTiming = timeStage(options, "1-scalar-array-code");
  if (options.timing)
    scalar.enableTiming(scalarTiming);
  if (failed(scalar.run(*tpuModule)))
    return std::nullopt;
  dump(options, "1-scalar-array-code.mlir", *tpuModule);
  scalarTiming.stop();
  // 2. The rules.
  TimingScope checking = timeStage(options, "rules and kernel plans");
  if (!checkModule(*tpuModule))
    return std::nullopt;
  // 3. The plans (the manifest is written from them).
  std::vector<KernelPlan> plans = planKernels(*tpuModule);
  checking.stop();
  // 4. Lowering, on a copy.
  OwningOpRef<ModuleOp> mosaic = tpuModule->clone();
  PassManager pm(ctx);
  pm.addPass(createPkTpuLowerToMosaic());
  TimingScope lowering = timeStage(options, "2-mosaic");
  if (options.timing)
    pm.enableTiming(lowering);
  if (failed(pm.run(*mosaic)))
    return std::nullopt;
  lowering.stop();
  dump(options, "2-mosaic.mlir", *mosaic);
  // 5. Verification (a failure here is a pkc bug, reported at the op).
  TimingScope verifying = timeStage(options, "verification");
  if (failed(verify(*mosaic)))
    return std::nullopt;
  verifying.stop();

  BackendOutput out;
  out.artifact = print(*mosaic);
  out.format = "mosaic";
  out.extension = ".mlir";
  if (options.emit == "mlir")
    out.emitted = out.artifact;
  out.otherPrograms = manifestPrograms(*tpuModule, plans);
  return out;
}

} // namespace pk::backends::tpu
