//===- CheckPass.cpp - pk-tpu-check -------------------------------------===//
#include "backends/tpu/Passes.h"
#include "backends/tpu/Rules.h"

namespace pk::backends::tpu {

#define GEN_PASS_DEF_PKTPUCHECK
#include "backends/tpu/Passes.h.inc"

namespace {

struct CheckPass : impl::PkTpuCheckBase<CheckPass> {
  void runOnOperation() override {
    if (!checkModule(getOperation()))
      signalPassFailure();
  }
};

} // namespace

} // namespace pk::backends::tpu
