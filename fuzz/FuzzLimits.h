//===- FuzzLimits.h - Static evaluation's limits for fuzzing ----*- C++ -*-===//
//
// The front end stops endless static loops and lists that grow forever at
// its step and item limits, with a located error; at pkc's limits such an
// input takes 1-3 s, and a fuzzer mutating one spends its run there. The
// harnesses elaborate with limits 20 and 32 times lower: the same code
// paths and the same errors, sooner. (A program within the lower limits
// elaborates as under pkc's.)
//
//===----------------------------------------------------------------------===//
#ifndef PK_FUZZ_FUZZLIMITS_H
#define PK_FUZZ_FUZZLIMITS_H

#include "frontend/elab/Elaborate.h"

namespace pk::fuzz {

inline ElaborationOptions elaborationOptions() {
  ElaborationOptions options;
  options.stepLimit = 100'000;
  options.staticItemLimit = uint64_t(1) << 20;
  return options;
}

} // namespace pk::fuzz

#endif // PK_FUZZ_FUZZLIMITS_H
