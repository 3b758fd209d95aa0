//===- pk-opt.cpp - Runs passes on pk IR, for lit tests -------------------===//
//
// mlir-opt with the pk dialects and pkc's passes registered: every pass is
// testable alone (`pk-opt --canonicalize file.mlir | FileCheck file.mlir`),
// `--verify-diagnostics` checks the verifiers' messages, and the CUDA
// backend's stages replay as pipelines (`--pk-cuda-distribute-stage`,
// backends/cuda/Pipeline.h).
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"
#include "backends/cuda/Pipeline.h"
#include "backends/tpu/Passes.h"
#include "ir/PkDialect.h"
#include "transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  pk::registerPkDialects(registry);
  registry.insert<mlir::func::FuncDialect>(); // for tests of ops outside exports
  pk::gpu::registerCudaDialects(registry);
  pk::backends::tpu::registerTpuDialects(registry);
  mlir::registerTransformsPasses();
  pk::gpu::registerPkGpuPasses();
  pk::gpu::registerCudaPipelines();
  pk::backends::tpu::registerPkTpuPasses();
  pk::registerPkTransformsPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pk-opt: runs passes on pk IR\n", registry));
}
