// RUN: %pk-opt --pk-gpu-split-kernel-modules %s | FileCheck %s
// Each kernel of a gpu.module gets a module of its own, named after it,
// with copies of the declarations and internal globals, so that the rest
// of the CUDA backend compiles the kernels side by side; a module with a
// device function (a second definition at link time) stays whole.

module {
  gpu.module @pk_kernels {
    llvm.mlir.global external @pk_shared_memory() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal constant @format("x = %d\0A\00") {addr_space = 0 : i32}
    llvm.func @__nv_expf(f32) -> f32
    gpu.func @first(%arg0: !llvm.ptr<1>) kernel {
      gpu.return
    }
    gpu.func @second(%arg0: !llvm.ptr<1>) kernel {
      gpu.return
    }
  }
  gpu.module @with_device_function {
    gpu.func @helper() {
      gpu.return
    }
    gpu.func @third() kernel {
      gpu.return
    }
    gpu.func @fourth() kernel {
      gpu.return
    }
  }
}

// CHECK-NOT:  gpu.module @pk_kernels
// CHECK:      gpu.module @first {
// CHECK-NEXT:   llvm.mlir.global external @pk_shared_memory()
// CHECK-NEXT:   llvm.mlir.global internal constant @format
// CHECK-NEXT:   llvm.func @__nv_expf(f32) -> f32
// CHECK-NEXT:   gpu.func @first
// CHECK-NOT:    gpu.func @second
// CHECK:      gpu.module @second {
// CHECK-NEXT:   llvm.mlir.global external @pk_shared_memory()
// CHECK-NEXT:   llvm.mlir.global internal constant @format
// CHECK-NEXT:   llvm.func @__nv_expf(f32) -> f32
// CHECK-NEXT:   gpu.func @second
// CHECK:      gpu.module @with_device_function {
// CHECK-NEXT:   gpu.func @helper()
// CHECK:        gpu.func @third() kernel
// CHECK:        gpu.func @fourth() kernel
