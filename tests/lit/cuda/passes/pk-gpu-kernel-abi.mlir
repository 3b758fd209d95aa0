// RUN: %pk-opt --pass-pipeline='builtin.module(gpu.module(pk-gpu-kernel-abi))' --split-input-file --verify-diagnostics %s | FileCheck %s
// Tensor-map parameters become 128-byte, 64-byte-aligned by-value
// parameters in the parameter space: `const __grid_constant__ CUtensorMap`.

gpu.module @kernels {
  // CHECK-LABEL: llvm.func @k(
  // CHECK-SAME: %arg0: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
  // CHECK-SAME: %arg1: !llvm.ptr<1>,
  // CHECK-SAME: %arg2: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
  llvm.func @k(%map: !llvm.ptr, %out: !llvm.ptr<1>, %map2: !llvm.ptr) attributes {nvvm.kernel, pkgpu.tensor_map_params = array<i64: 0, 2>} {
    llvm.return
  }
  // Kernels without tensor maps keep their parameters.
  // CHECK-LABEL: llvm.func @plain(%arg0: !llvm.ptr<1>)
  llvm.func @plain(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{kernel parameter 0 is listed as a tensor map but is not a pointer parameter}}
  llvm.func @bad(%n: i64) attributes {nvvm.kernel, pkgpu.tensor_map_params = array<i64: 0>} {
    llvm.return
  }
}
