//===- Passes.td - The CUDA backend's stages ---------------*- tablegen -*-===//
//
// The CUDA backend's passes. Pipeline.cpp lists the stages that run them
// (with MLIR's own passes), in order; pk-opt runs each alone.
//
//===----------------------------------------------------------------------===//
#ifndef PK_CUDA_PASSES_TD
#define PK_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkGpuOutline : Pass<"pk-gpu-outline", "::mlir::ModuleOp"> {
  let summary = "Block materialization: each pallas_call becomes a gpu.func";
  let description = [{
    Outlines every `pk.pallas_call` into a `gpu.func` kernel of a
    `gpu.module`: its parameters are one global pointer per operand and one
    i64 per symbolic size. Grid axes that programs may run in parallel map
    to the CUDA grid; the others (those an output block revisits, or that
    `dimension_semantics` marks "arbitrary") become a loop inside the CTA
    that runs them in order. Program ids, grid sizes and symbolic sizes
    become values; BlockSpec index maps compute each operand's block
    offset, clamped as Pallas clamps it, and `pkgpu.global_ref` /
    `pkgpu.shared_ref` bind the kernel's Refs to memory. Every
    `pk.mesh_kernel` (plgpu.kernel) becomes a kernel too, one warpgroup
    per Pallas thread (OutlineMesh.h): its pipelines expanded into copies
    and loops, its scopes inlined with their scratch placed in shared
    memory, its TMA copies given tensor map parameters, its wgmma
    accumulators turned into values. The pk.exports are removed: the
    launch plan is kept in the manifest.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect", "::pk::gpu::PkGpuDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    // Cluster synchronization of Mosaic GPU kernels whose CTAs share memory.
    "::mlir::NVVM::NVVMDialect"
  ];
  let options = [
    Option<"defaultNumWarps", "default-num-warps", "unsigned", "4",
           "warps per CTA when compiler_params do not say">
  ];
}

def PkGpuWgmmaDots : Pass<"pk-gpu-wgmma-dots", "::mlir::ModuleOp"> {
  let summary = "Puts the dots of pallas_call kernels on Hopper's wgmma (sm_90a)";
  let description = [{
    Every `pk.dot` of an ordinary kernel (not a Mosaic GPU one) whose
    operands are f16 or bf16 and whose shape fits a warpgroup matrix
    multiply (M a multiple of 64 per warpgroup of the CTA, N a power of
    two from 16 to 256, K a multiple of 16, each operand's rows at least
    32 bytes) becomes: its operands stored into shared memory as wgmma
    reads them (`pkgpu.shared_ref ... strips`, swizzled), a fence for the
    async proxy (`pk.commit_smem`), `pkgpu.wgmma_tile` and a
    `pkgpu.wgmma_wait_tile`. An f32 accumulation `acc + dot` (either
    order) accumulates in place: `acc` is the wgmma's accumulator. A
    16-bit A the kernel computes (not a loaded window, not loop-invariant)
    stays in registers, which wgmma reads as its A fragments. The
    operand buffers of all dots of a kernel share one region after its
    scratch; a dot whose operands would not fit keeps mma.sync. Run only
    for sm_90a, whose architecture-specific wgmma this needs.
  }];
  let dependentDialects = [
    "::pk::gpu::PkGpuDialect", "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect"
  ];
}

def PkGpuPrefetchOperands : Pass<"pk-gpu-prefetch-operands", "::mlir::ModuleOp"> {
  let summary = "Copies the wgmma operands of a K loop stages ahead with cp.async";
  let description = [{
    After `pk-gpu-wgmma-dots`: in an `scf.for` whose body loads a window
    of a global Ref (offsets computed from the induction variable by pure
    arithmetic) only to store it into a wgmma operand buffer, each such
    buffer becomes a ring of `num_stages` slots (compiler_params, default
    3; fewer when shared memory is short) and the window of step
    j + num_stages - 1 is copied into its slot with `pkgpu.async_copy`
    (cp.async) while step j multiplies: the first num_stages - 1 steps
    are started before the loop, each step starts one more, commits it as
    a group and waits for its own (`nvvm.cp.async.wait.group
    num_stages-1`). A barrier at the top of each step keeps a slot from
    being refilled while a warpgroup still reads it. Other windows loaded
    only to be stored into a wgmma buffer are copied into it directly
    (cp.async, waited for at once), skipping the registers. Windows of
    arrays the kernel writes are left alone.
  }];
  let dependentDialects = [
    "::pk::gpu::PkGpuDialect", "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect"
  ];
}

def PkGpuDefineArith : Pass<"pk-gpu-define-arith", "::mlir::ModuleOp"> {
  let summary = "Gives arith ops the language's results where LLVM's are undefined";
  let description = [{
    Integer division and remainder by zero (and MIN / -1), shifts by the
    width or more, and float-to-int conversions of NaN or of values out of
    range are defined in pk IR (docs/language.md) but undefined behaviour
    or poison in LLVM. Each such op gets operands in its defined range, and
    a select supplies the language's answer for the others. Integer powers
    (`math.ipowi`), which LLVM has no lowering for, become a loop of
    multiplications.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def PkGpuAssignLayouts : Pass<"pk-gpu-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Chooses a distributed layout for every block value";
  let description = [{
    Gives every tensor in the kernels a `#pkgpu.layout` encoding: loads and
    constants take the default blocked layout of their shape, reductions
    the sliced layout of their operand, transposes the permuted one, and
    element-wise ops their first operand's; `pkgpu.convert_layout` is
    inserted where an op needs another layout than its operand has.
  }];
  let dependentDialects = ["::pk::gpu::PkGpuDialect"];
}

def PkGpuDistribute : Pass<"pk-gpu-distribute", "::mlir::ModuleOp"> {
  let summary = "Lowers block values to per-thread registers";
  let description = [{
    Replaces every tensor by the vector of elements the running thread
    holds under its layout, and every op by thread-level code: element-wise
    ops on vectors, loads and stores with per-element addresses and masks,
    reductions with register, warp-shuffle and shared-memory steps, layout
    conversions and data movement through shared memory, and dots on the
    tensor cores (mma.sync) or with FMAs. What remains is arith, math,
    scf, vector, gpu and llvm ops.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"
  ];
}

def PkGpuLowerAsync : Pass<"pk-gpu-lower-async", "::mlir::ModuleOp"> {
  let summary = "Lowers TMA copies and warpgroup matrix multiplies to NVVM";
  let description = [{
    Rewrites the pkgpu ops for Hopper's asynchronous units with MLIR's
    conversion framework, one family of patterns each (Async.h):
    `pkgpu.tma_load` / `pkgpu.tma_store` become
    `nvvm.cp.async.bulk.tensor` copies (coordinates innermost first, the
    destination in the cluster's shared window, multicast masks), and
    `pkgpu.wgmma` / `pkgpu.wgmma_wait` become `nvvm.wgmma.*` instructions
    over matrix descriptors, one per 64-row slice and K step, with the
    accumulator's registers regrouped for each. What remains is stage 03:
    what the simulator runs and convert-gpu-to-nvvm takes.
  }];
  let dependentDialects = [
    "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect", "::mlir::gpu::GPUDialect"
  ];
}

def PkGpuCanonicalizeBlocks : Pass<"pk-gpu-canonicalize-blocks"> {
  let summary = "Canonicalizes and folds block by block";
  let description = [{
    The canonicalizer's patterns and folds, applied to one block at a time
    with the block's region as the greedy driver's scope, in sweeps (outer
    blocks first) until one changes nothing, then region simplification
    once. The canonicalizer re-queues every ancestor of a changed op and
    walks each dequeued region op's body to see whether it is dead: on
    distributed per-thread code (tens of thousands of ops in one loop
    body) that is quadratic.
  }];
}

def PkGpuLowerControlFlow : Pass<"pk-gpu-lower-control-flow"> {
  let summary = "Lowers SCF ops to branches, in time linear in the code";
  let description = [{
    SCFToControlFlow's patterns, applied once per op with a plain
    rewriter: parents before the ops inside them, and within a block the
    last op first, so that the block splits that lowering an `scf.if` or
    a loop makes move each op a bounded number of times. The dialect
    conversion driver lowers a block's ifs top to bottom and records every
    op each split moves: quadratic in per-thread code with thousands of
    guarded loads in one block.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
}

def PkGpuMergeBarriers : Pass<"pk-gpu-merge-barriers", "::mlir::ModuleOp"> {
  let summary = "Erases a CTA barrier that the next one makes redundant";
  let description = [{
    Lowering puts a `gpu.barrier` wherever the threads of one op must be
    done before the next op begins: around stores to shared memory, after
    `commit_smem`'s proxy fence, after barrier initialization. Op by op
    each is needed; when two follow each other in a block with nothing in
    between that touches memory (address arithmetic, proxy and mbarrier
    initialization fences), the first orders nothing the second does not,
    and it is erased. Each `bar.sync` stalls every warp of the CTA.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PkGpuSplitKernelModules : Pass<"pk-gpu-split-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Gives each kernel a gpu.module of its own, for parallel code generation";
  let description = [{
    MLIR lowers a gpu.module to NVVM, and LLVM a module to PTX, one
    function after another. Each kernel of a gpu.module of several (a
    file's exports, a template instantiated three times) moves to a
    gpu.module named after it, with a copy of everything else the module
    holds (declarations, internal globals), so that the passes after it
    and the PTX generation (KernelCodegen.h) run the kernels side by side;
    ptxas links their PTX into one cubin. A module holding something a
    copy would define twice at link time (a device function, an external
    global with a value) stays whole.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect"];
}

def PkGpuKernelAbi : Pass<"pk-gpu-kernel-abi", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Passes a kernel's tensor maps by value, as __grid_constant__ parameters";
  let description = [{
    After convert-gpu-to-nvvm: the parameters an llvm.func kernel lists in
    its `pkgpu.tensor_map_params` attribute become `ptr byval([128 x i8])
    align 64` with `nvvm.grid_constant`: the 128-byte CUtensorMap the
    runtime encodes at launch, read in place in the parameter space.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

def PkGpuFloatSemantics : Pass<"pk-gpu-float-semantics", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Float semantics of the compiler JAX hands each kernel to: denormals in "
                "libdevice, FMA contraction";
  let description = [{
    After convert-gpu-to-nvvm, on the llvm.func kernels. JAX compiles a
    `pallas_call` for the GPU through Triton, which links libdevice in its
    flush-to-zero mode and lets multiplies and adds fuse into FMAs; Mosaic
    GPU (a `plgpu.kernel`, or a `pallas_call` with Mosaic GPU's
    `compiler_params`) does neither, except that its `approx_math`
    computes exp2 with `ex2.approx.ftz`. The outliners mark kernels
    accordingly (`pkgpu.flush_denormals`, `pkgpu.contract_fp`):

    - a module whose kernels all flush denormals gets the
      `nvvm-reflect-ftz` module flag, libdevice's flush-to-zero mode
      (`exp2` is then one `ex2.approx.ftz.f32`);
    - the f32/f16/bf16 multiplies, adds and subtracts of a kernel that
      contracts get LLVM's `contract` flag, so that `x * s - m` becomes one
      FMA (more exact, and one instruction fewer).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

#endif // PK_CUDA_PASSES_TD
