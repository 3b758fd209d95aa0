//===- ShortLiveRanges.h - Long blocks computed value by value ---*- C++ -*-===//
//
// pkc's per-thread code computes a block value op by op over the thread's
// whole fragment: `y = exp(x) * 2` is every element's exp, then every
// element's product. In a kernel over TPU-sized blocks (hundreds of
// elements a thread, dozens of ops) every element of every intermediate is
// then live at once, and ptxas, handed tens of thousands of live values,
// spills kilobytes and takes minutes over it (the PRNG kernels of
// tests/pallas/real: 65 KB of spills, 40 s of ptxas).
//
// For such blocks only, the LLVM IR after -O3 is split into 64-bit pieces
// of vectors and reordered so that each pure instruction comes right before
// the first instruction that needs it: each piece's chain runs through to
// its store before the next starts (philox: no spills, 3.6 s in all;
// threefry: 45 KB of spills and 14 s before, none and 1 s after).
// Memory accesses, calls and everything else with an effect keep their
// order, and so does every block of ordinary size: ptxas schedules for
// latency itself, and on ordinary kernels the IR's order serves it better
// (LLVM's register-pressure scheduler, tried for every kernel, doubled the
// spills of the TPU flash attention).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SHORTLIVERANGES_H
#define PK_BACKENDS_CUDA_SHORTLIVERANGES_H

namespace llvm {
class BasicBlock;
class Module;
} // namespace llvm

namespace pk::gpu {

/// Blocks with at least this many instructions, counting each element of a
/// vector result, are reordered.
constexpr unsigned kLongBlockInstructions = 8192;

/// Reorders `block` (vectors as they are) as above, whatever its length.
/// Returns whether any instruction moved.
bool shortenLiveRanges(llvm::BasicBlock &block);

/// shortenLiveRanges on every block of `module` with at least
/// kLongBlockInstructions instructions.
void shortenLiveRangesInLongBlocks(llvm::Module &module);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_SHORTLIVERANGES_H
