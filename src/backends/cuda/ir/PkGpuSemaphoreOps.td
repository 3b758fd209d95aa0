//===- PkGpuSemaphoreOps.td - Semaphores of Mosaic GPU kernels -*- tablegen -*-===//
//
// pl.semaphore_signal / pl.semaphore_wait on a GPU: 32-bit counters that
// one thread of a warpgroup updates with atomics (Mosaic GPU's
// SemaphoreRef). Where they live comes first (shared memory for a
// kernel's scoped semaphores, global memory for pl.get_global's); the
// thread-level signal and wait stay ops until stage 04 so that the
// simulator sees a wait as a wait, and convert-nvvm-to-llvm turns them
// into PTX (BasicPtxBuilderOpInterface).
//
//===----------------------------------------------------------------------===//
#ifndef PKGPU_SEMAPHORE_OPS_TD
#define PKGPU_SEMAPHORE_OPS_TD

include "backends/cuda/ir/PkGpuBase.td"
include "mlir/Dialect/LLVMIR/BasicPtxBuilderInterface.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def PkGpu_SemaphoreAllocOp : PkGpu_Op<"semaphore_alloc", []> {
  let summary = "an array of semaphores in the CTA's shared memory, zeroed";
  let description = [{
    A scoped `plgpu.SemaphoreType.REGULAR` allocation of a Mosaic GPU
    kernel: one 32-bit counter per semaphore at byte `offset` of the
    kernel's dynamic shared memory. Mosaic GPU places them in global memory
    so that another device may signal them; pkc compiles for one device,
    where only the CTA's own Pallas threads can reach them, and shared
    memory is the same to them. Every thread of the CTA reaches the op:
    thread 0 zeroes the counters and the CTA synchronizes before any use.

    ```mlir
    %s = pkgpu.semaphore_alloc offset 256 : !pk.semaphore<[2]>
    ```
  }];
  let arguments = (ins I64Attr:$offset);
  let results = (outs AnyType:$semaphore);
  let assemblyFormat = "`offset` $offset attr-dict `:` qualified(type($semaphore))";
}

def PkGpu_SemaphoreViewOp : PkGpu_Op<"semaphore_view", [Pure]> {
  let summary = "semaphores in words of a global i32 buffer";
  let description = [{
    `pl.get_global(plgpu.SemaphoreType.REGULAR)`: the semaphores that
    start at word `offset` of `buffer`, a kernel operand of i32 counters
    that the program zeroes before the launch (pk-gpu-outline's global
    semaphores: GlobalSemaphores.cpp). Every CTA of the launch reaches the
    same counters.

    ```mlir
    %s = pkgpu.semaphore_view %buffer offset 0 : !pk.ref<1xi32, #pk.memory_space<gmem>> -> !pk.semaphore<[]>
    ```
  }];
  let arguments = (ins AnyType:$buffer, I64Attr:$offset);
  let results = (outs AnyType:$semaphore);
  let assemblyFormat = [{
    $buffer `offset` $offset attr-dict `:` qualified(type($buffer)) `->` qualified(type($semaphore))
  }];
}

def PkGpu_SemaphoreSignalOp : PkGpu_Op<"semaphore_signal",
    [DeclareOpInterfaceMethods<BasicPtxBuilderOpInterface>]> {
  let summary = "one thread adds to a semaphore, releasing its writes";
  let description = [{
    Atomically adds `increment` to the 32-bit counter at `semaphore` (a
    generic pointer), with release semantics at GPU scope: what the
    thread (and, through the barrier its warpgroup passed before, every
    thread of its warpgroup) wrote before is visible to a thread whose
    wait sees the addition. Executed by one thread.

    ```mlir
    pkgpu.semaphore_signal %ptr, %one : !llvm.ptr
    ```
  }];
  let arguments = (ins LLVM_AnyPointer:$semaphore, I32:$increment);
  let assemblyFormat = "$semaphore `,` $increment attr-dict `:` qualified(type($semaphore))";
  let extraClassDefinition = [{
    std::string $cppClass::getPtx() { return "red.release.gpu.add.u32 [%0], %1;"; }
  }];
}

def PkGpu_SemaphoreWaitOp : PkGpu_Op<"semaphore_wait",
    [DeclareOpInterfaceMethods<BasicPtxBuilderOpInterface>]> {
  let summary = "one thread waits until a semaphore reaches a value";
  let description = [{
    Blocks the thread until the 32-bit counter at `semaphore` (a generic
    pointer) is at least `value`; then, unless `no_decrement`, subtracts
    `value` from it atomically (a compare-and-swap loop, as Mosaic GPU's),
    and acquires at GPU scope what the signals it saw released. Executed
    by one thread; its warpgroup synchronizes after it.

    ```mlir
    pkgpu.semaphore_wait %ptr, %one : !llvm.ptr
    ```
  }];
  let arguments = (ins LLVM_AnyPointer:$semaphore, I32:$value, UnitAttr:$no_decrement);
  let assemblyFormat = [{
    $semaphore `,` $value (`no_decrement` $no_decrement^)? attr-dict `:` qualified(type($semaphore))
  }];
  let extraClassDefinition = [{
    std::string $cppClass::getPtx() {
      if (getNoDecrement())
        return "{\n"
               ".reg .pred p;\n"
               ".reg .b32 seen;\n"
               "WAIT:\n"
               "ld.relaxed.gpu.b32 seen, [%0];\n"
               "setp.lt.u32 p, seen, %1;\n"
               "@p bra WAIT;\n"
               "fence.acq_rel.gpu;\n"
               "}";
      // Expect the value itself first; a failed swap says what is there.
      return "{\n"
             ".reg .pred p;\n"
             ".reg .b32 expected, seen, desired;\n"
             "mov.b32 expected, %1;\n"
             "WAIT:\n"
             "sub.u32 desired, expected, %1;\n"
             "atom.relaxed.gpu.cas.b32 seen, [%0], expected, desired;\n"
             "setp.ne.u32 p, seen, expected;\n"
             "max.u32 expected, seen, %1;\n"
             "@p bra WAIT;\n"
             "fence.acq_rel.gpu;\n"
             "}";
    }
  }];
}

#endif // PKGPU_SEMAPHORE_OPS_TD
