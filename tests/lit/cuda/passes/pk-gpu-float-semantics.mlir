// RUN: %pk-opt --pass-pipeline='builtin.module(gpu.module(pk-gpu-float-semantics))' --split-input-file %s | FileCheck %s
// Kernels that flush denormals (pallas_calls, as Triton compiles them;
// Mosaic GPU kernels with approx_math) put libdevice in its flush-to-zero
// mode for their module; kernels that contract (pallas_calls) let their
// float multiplies, adds and subtracts fuse into FMAs.

// CHECK-LABEL: gpu.module @pallas
// CHECK-NEXT: llvm.module_flags [#llvm.mlir.module_flag<override, "nvvm-reflect-ftz", 1 : i32>]
// CHECK: llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: llvm.fsub %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<nnan, contract>} : f32
gpu.module @pallas {
  llvm.func @k(%x: f32, %m: f32) attributes {nvvm.kernel, pkgpu.flush_denormals, pkgpu.contract_fp} {
    %0 = llvm.fmul %x, %x : f32
    %1 = llvm.fsub %0, %m : f32
    %2 = llvm.fadd %1, %x {fastmathFlags = #llvm.fastmath<nnan>} : f32
    llvm.return
  }
}

// -----

// A Mosaic GPU kernel with approx_math flushes but keeps every rounding.
// CHECK-LABEL: gpu.module @approx
// CHECK-NEXT: llvm.module_flags
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : f32
gpu.module @approx {
  llvm.func @k(%x: f32) attributes {nvvm.kernel, pkgpu.flush_denormals} {
    %0 = llvm.fmul %x, %x : f32
    llvm.return
  }
}

// -----

// One kernel that keeps denormals keeps them for its module.
// CHECK-LABEL: gpu.module @mixed
// CHECK-NOT: llvm.module_flags
gpu.module @mixed {
  llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel, pkgpu.flush_denormals} {
    llvm.return
  }
  llvm.func @exact(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}
