// RUN: %pk-opt --pass-pipeline='builtin.module(gpu.module(pk-gpu-float-semantics))' --split-input-file %s | FileCheck %s
// Kernels that flush denormals (pallas_calls, as Triton compiles them;
// Mosaic GPU kernels with approx_math) put libdevice in its flush-to-zero
// mode for their module; kernels that contract (pallas_calls) let their
// float multiplies, adds and subtracts fuse into FMAs; kernels that divide
// as Triton does (pallas_calls) divide f32 with div.full.f32.

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

// -----

// Triton's division: f32 scalars and vectors (element by element) become
// llvm.nvvm.div.full; f64 stays IEEE's, as in Triton.
// CHECK-LABEL: gpu.module @divide
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.extractelement
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK: llvm.insertelement
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"
// CHECK: llvm.insertelement
// CHECK-NOT: llvm.call_intrinsic
// CHECK: llvm.fdiv %{{.*}}, %{{.*}} : f64
// CHECK-NOT: llvm.fdiv %{{.*}} : f32
// CHECK-LABEL: llvm.func @exact
// CHECK: llvm.fdiv %{{.*}}, %{{.*}} : f32
gpu.module @divide {
  llvm.func @k(%x: f32, %y: f32, %v: vector<2xf32>, %w: vector<2xf32>, %d: f64) attributes {nvvm.kernel, pkgpu.div_full} {
    %0 = llvm.fdiv %x, %y : f32
    %1 = llvm.fdiv %v, %w : vector<2xf32>
    %2 = llvm.fdiv %d, %d : f64
    llvm.return
  }
  llvm.func @exact(%x: f32) attributes {nvvm.kernel} {
    %0 = llvm.fdiv %x, %x : f32
    llvm.return
  }
}
