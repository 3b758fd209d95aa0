//===- Kernel.h - A gpu.func decoded for the SIMT simulator -----*- C++ -*-===//
//
// The simulator does not walk MLIR while it runs: each gpu.func of the
// stage-03 module is decoded once into instructions over numbered value
// slots. A slot holds one value for every thread of the CTA (a vector
// value: `width` words per thread). Structured control flow keeps its
// shape: scf.for / scf.if / scf.while instructions name the blocks of
// their regions, and a block lists the slots its terminator yields.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_SIM_KERNEL_H
#define PK_BACKENDS_CUDA_SIM_KERNEL_H

#include "backends/cuda/sim/Types.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class Operation;
namespace gpu {
class GPUFuncOp;
}
} // namespace mlir

namespace pk::sim {

// clang-format off: the opcodes stay grouped by family, several a line.
enum class Op : uint16_t {
  // Integers: element-wise on scalars or vectors.
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  CeilDivSI,
  CeilDivUI,
  FloorDivSI,
  AndI,
  OrI,
  XOrI,
  ShLI,
  ShRSI,
  ShRUI,
  MaxSI,
  MaxUI,
  MinSI,
  MinUI,
  MulSIExtended,
  MulUIExtended,
  AddUIExtended,
  AbsI,
  CtLz,
  CtTz,
  CtPop,
  IPowI,
  // Floats.
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  PowF,
  Atan2,
  CopySign,
  NegF,
  AbsF,
  Exp,
  Exp2,
  ExpM1,
  Log,
  Log1p,
  Log2,
  Log10,
  Sqrt,
  Rsqrt,
  Cbrt,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sinh,
  Cosh,
  Asin,
  Acos,
  Atan,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Erfc,
  Floor,
  Ceil,
  Trunc,
  Round,
  RoundEven,
  Fma,
  FPowI,
  IsNaN,
  IsInf,
  IsFinite,
  // Comparisons, selection, casts.
  CmpI,
  CmpF,
  Select,
  ExtSI,
  ExtUI,
  TruncI,
  ExtF,
  TruncF,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  IndexCast,
  IndexCastUI,
  Bitcast,
  Repack,
  // Vectors (1-D): a thread's registers.
  VExtract,
  VInsert,
  VFromElements,
  VBroadcast,
  VShuffle,
  // Threads.
  ThreadId,
  BlockId,
  BlockDim,
  GridDim,
  LaneId,
  Barrier,
  Shuffle,
  // Tensor cores: one warp's mma.sync; one warpgroup's wgmma (done when
  // issued, EvalWgmma.cpp). SharedAddress: a shared pointer as the
  // integer address descriptors hold (its offset in shared memory).
  Mma,
  Wgmma,
  SharedAddress,
  // Hopper's asynchronous machinery (EvalAsync.cpp): mbarriers, TMA
  // loads (done at once when issued), TMA stores (done when their bulk
  // group is waited for: BulkCommit, BulkWait), named barriers, and what
  // has no effect on values here (fences, setmaxnreg): Nop. PtrCast
  // passes a pointer on unchanged (llvm.addrspacecast).
  MbarInit,
  MbarArrive,
  MbarArriveExpectTx,
  MbarTryWait,
  MbarTestWait,
  TmaLoad,
  TmaStore,
  BulkCommit,
  BulkWait,
  NamedBarrier,       ///< bar.sync id, threads
  NamedBarrierArrive, ///< bar.arrive id, threads
  Nop,
  PtrCast,
  // Clusters (EvalAsync.cpp): the CTAs of a cluster run together; mapa
  // names a peer's shared memory (a pointer into its allocation), and
  // barrier.cluster's arrive and wait synchronize them all.
  Mapa,
  ClusterArrive,
  ClusterWait,
  // Semaphores of Mosaic GPU kernels (EvalAtomic.cpp): a signal adds
  // atomically; a wait blocks its worker until the counter reaches the
  // value, then (imm 0) subtracts it.
  SemSignal,
  SemWait,
  AtomicLoad, ///< an i32 read as an atomic (pl.semaphore_read), any address space
  // Ampere's cp.async (EvalAsync.cpp): a thread's copies land when it
  // waits for their group, not before; until then the destination holds
  // poison.
  CpAsync,
  CpAsyncCommit,
  CpAsyncWait,
  // wgmma's groups (EvalWgmma.cpp): a wgmma computes when issued, and the
  // shared memory it read must still hold the same values when the
  // wait_group that retires it returns (the hardware may read it as late).
  WgmmaCommit,
  WgmmaWait,
  // Blackwell (EvalTensorMemory.cpp): the CTA's tensor memory (allocated
  // by tcgen05.alloc, read and written a warp's 32 lanes at a time by
  // tcgen05.ld / st .32x32b), tcgen05.mma into it (done when issued) and
  // the commit that arrives at an mbarrier; cluster launch control's
  // request (its answer always "not cancelled") and query.
  TmemAlloc,
  TmemLoad,
  TmemStore,
  Tcgen05Mma,
  Tcgen05Commit,
  ClcTryCancel,
  ClcQuery,
  // Memory.
  AddressOf,
  GEP,
  Load,
  Store,
  AtomicRMW,
  CmpXchg,
  // Structured control flow.
  For,
  If,
  While,
  ExecuteRegion,
  // gpu.printf: each active thread prints a line.
  Printf,
};
// clang-format on

/// A value slot: kind and lanes of the value, and where its words start in
/// the register file (nthreads * width words).
struct Slot {
  Kind kind = Kind::I64;
  uint32_t width = 1;
  uint64_t offset = 0;
};

struct Instr {
  Op op;
  Kind kind = Kind::I64;       ///< the operands' element kind (a cast's source)
  Kind resultKind = Kind::I64; ///< the result's element kind
  uint32_t width = 1;          ///< lanes per thread of the result
  uint32_t id = 0;             ///< index in Kernel::ops, for messages
  /// Op-specific: a comparison predicate, a dimension, a shuffle mode, a
  /// vector position (-1: dynamic), a load's byte count, flags.
  int64_t imm = 0;
  /// Op-specific: a load's or store's alignment; the address space.
  int64_t imm2 = 0;
  /// Loads and stores: the pointer's address space (1 global, 3 shared).
  unsigned addressSpace = 0;
  llvm::SmallVector<int32_t, 4> in, out;
  /// vector.shuffle's mask; a GEP's indices as (slot or -1, constant,
  /// scale in bytes) triples.
  std::vector<int64_t> list;
  llvm::SmallVector<uint32_t, 2> regions; ///< block ids
};

struct Block {
  std::vector<int32_t> args;
  std::vector<Instr> body; ///< without the terminator
  /// The terminator's operands (scf.yield, scf.condition's values).
  std::vector<int32_t> yields;
  int32_t condition = -1; ///< scf.condition's flag
};

struct Kernel {
  std::string name;
  unsigned blockSize[3] = {1, 1, 1};
  unsigned threads() const { return blockSize[0] * blockSize[1] * blockSize[2]; }
  /// Pallas threads (warpgroups of 128 threads) of a Mosaic GPU kernel,
  /// which run concurrently (Executor.h); 0 for other kernels.
  unsigned warpgroups = 0;
  /// CTAs wait for one another through global memory (semaphores): the
  /// whole grid runs together (Device.cpp).
  bool ctasWaitForEachOther = false;
  std::vector<Slot> slots;
  std::vector<Block> blocks; ///< blocks[0]: the body
  std::vector<int32_t> params;
  std::vector<ValueType> paramTypes;
  /// Constant slots and their values per lane (the same in every thread).
  std::vector<std::pair<int32_t, std::vector<uint64_t>>> constants;
  uint64_t wordsPerThread = 0;
  /// The op each instruction came from (for messages).
  std::vector<mlir::Operation *> ops;
  bool usesSharedMemory = false;
  /// Constant tables (LLVM globals in address space 1): each launch puts
  /// their bytes in global memory; an AddressOf's imm is 1 + the index.
  struct ConstantTable {
    std::string name;
    std::vector<uint8_t> bytes;
  };
  std::vector<ConstantTable> constantTables;
  /// gpu.printf formats, indexed by the instruction's imm.
  std::vector<std::string> strings;
};

/// Decodes a stage-03 gpu.func; on failure returns false and sets `error`
/// (an op the simulator does not know, or a type it cannot hold).
bool decodeKernel(mlir::gpu::GPUFuncOp func, Kernel &kernel, std::string &error);

/// "03-gpu.mlir:12:5: `%3 = llvm.load %2 : !llvm.ptr<1> -> f32`": where
/// an op is and what it says (regions elided).
std::string describeOp(mlir::Operation *op);

} // namespace pk::sim

#endif // PK_BACKENDS_CUDA_SIM_KERNEL_H
