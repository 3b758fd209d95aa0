// RUN: %pk-opt --split-input-file --verify-diagnostics %s
// The verifiers of the pkgpu async ops, one error each.

func.func @tma_map_type(%map: !llvm.ptr<1>, %c: i32, %smem: !llvm.ptr<3>) {
  // expected-error @below {{takes the tensor map as a generic !llvm.ptr (a kernel parameter), got '!llvm.ptr<1>'}}
  pkgpu.tma_load %map[%c], %smem, %smem : !llvm.ptr<1>, !llvm.ptr<3>, !llvm.ptr<3>
  return
}

// -----

func.func @tma_rank(%map: !llvm.ptr, %c: i32, %smem: !llvm.ptr<3>) {
  // expected-error @below {{takes 1 to 5 coordinates (TMA tensors have 1 to 5 dimensions), got 6}}
  pkgpu.tma_store %smem, %map[%c, %c, %c, %c, %c, %c] : !llvm.ptr<3>, !llvm.ptr
  return
}

// -----

func.func @tma_barrier(%map: !llvm.ptr, %c: i32, %smem: !llvm.ptr<3>, %bar: !llvm.ptr) {
  // expected-error @below {{completes on an mbarrier in shared memory (!llvm.ptr<3>), got '!llvm.ptr'}}
  pkgpu.tma_load %map[%c], %smem, %bar : !llvm.ptr, !llvm.ptr<3>, !llvm.ptr
  return
}

// -----

func.func @wgmma_types(%acc: vector<32xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{takes f16, bf16, tf32, f8E4M3FN/f8E5M2 or si8/ui8 operands of one kind, got 'f16' and 'bf16'}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 16, a_type = f16, b_type = bf16} : vector<32xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @wgmma_transpose(%acc: vector<32xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{transposes (MN-major) only 16-bit operands; 'f8E4M3FN' operands must be K-major}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 32, a_type = f8E4M3FN, b_type = f8E5M2, b_transposed} : vector<32xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @wgmma_k(%acc: vector<32xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{k must be a positive multiple of 8 for 'tf32', got 12}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 12, a_type = tf32, b_type = tf32} : vector<32xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @wgmma_n(%acc: vector<48xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{n must be a multiple of 8 from 8 to 256, got 100}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 100, k = 16, a_type = bf16, b_type = bf16} : vector<48xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<48xf32>
  return
}

// -----

func.func @wgmma_accumulator(%acc: vector<32xi32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{accumulates floats in f32, not in 'i32'}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 16, a_type = bf16, b_type = bf16} : vector<32xi32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<32xi32>
  return
}

// -----

func.func @wgmma_warpgroups(%acc: vector<64xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{an 64 x 64 accumulator of 64 registers per thread means 2 warps, which must be whole warpgroups each owning 64-row slices}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 16, a_type = bf16, b_type = bf16} : vector<64xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<64xf32>
  return
}

// -----

func.func @wgmma_registers(%acc: vector<32xf32>, %a: vector<16xbf16>, %s: !llvm.ptr<3>) {
  // expected-error @below {{an 64 x 16 A operand spreads over 4 warps as 8 registers per thread, not 16}}
  %d = pkgpu.wgmma %acc, %a, %s {m = 64, n = 64, k = 16, a_type = bf16, b_type = bf16} : vector<32xf32>, vector<16xbf16>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @wgmma_registers_type(%acc: vector<32xf32>, %a: vector<8xf16>, %s: !llvm.ptr<3>) {
  // expected-error @below {{reads A from registers as a vector of its 16-bit elements (f16 or bf16), got 'vector<8xf16>'}}
  %d = pkgpu.wgmma %acc, %a, %s {m = 64, n = 64, k = 16, a_type = bf16, b_type = bf16} : vector<32xf32>, vector<8xf16>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @wgmma_registers_transposed(%acc: vector<32xf32>, %a: vector<8xbf16>, %s: !llvm.ptr<3>) {
  // expected-error @below {{reads A from registers as they are: a_transposed applies to shared memory}}
  %d = pkgpu.wgmma %acc, %a, %s {m = 64, n = 64, k = 16, a_type = bf16, b_type = bf16, a_transposed} : vector<32xf32>, vector<8xbf16>, !llvm.ptr<3> -> vector<32xf32>
  return
}

// -----

func.func @async_copy_direction(%g: !pk.ref<64x64xbf16>, %s: !pk.ref<64x64xbf16, #pk.memory_space<shared>>) {
  // expected-error @below {{copies from global into shared memory}}
  pkgpu.async_copy %s [0, 0] into %g : !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16>
  return
}

// -----

func.func @async_copy_rows(%g: !pk.ref<64x64xbf16>, %s: !pk.ref<64x4xbf16, #pk.memory_space<shared>>) {
  // expected-error @below {{copies rows of a whole number of 16-byte pieces}}
  pkgpu.async_copy %g [0, 0] into %s : !pk.ref<64x64xbf16>, !pk.ref<64x4xbf16, #pk.memory_space<shared>>
  return
}

// -----

func.func @tma_copy_direction(%g: !pk.ref<64x64xbf16>, %s: !pk.ref<64x64xbf16, #pk.memory_space<shared>>, %b: !pk.barrier<[2], arrivals 1>, %i: index) {
  // expected-error @below {{copies from global into shared memory}}
  pkgpu.tma_copy %s [0, 0] into %g, %b[%i] tensor_map 0 boxes [array<i64: 0, 0, 0>] bytes 8192 : !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16>, !pk.barrier<[2], arrivals 1>
  return
}

// -----

func.func @tma_copy_barrier_index(%g: !pk.ref<64x64xbf16>, %s: !pk.ref<64x64xbf16, #pk.memory_space<shared>>, %b: !pk.barrier<[2], arrivals 1>) {
  // expected-error @below {{needs one index per dimension of its barrier array}}
  pkgpu.tma_copy %g [0, 0] into %s, %b tensor_map 0 boxes [array<i64: 0, 0, 0>] bytes 8192 : !pk.ref<64x64xbf16>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
  return
}

// -----

func.func @tma_copy_boxes(%g: !pk.ref<64x64xbf16>, %s: !pk.ref<64x64xbf16, #pk.memory_space<shared>>, %b: !pk.barrier<[2], arrivals 1>, %i: index) {
  // expected-error @below {{needs boxes, a byte count and a tensor map parameter}}
  pkgpu.tma_copy %g [0, 0] into %s, %b[%i] tensor_map 0 boxes [] bytes 8192 : !pk.ref<64x64xbf16>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
  return
}

// -----

func.func @wgmma_window(%acc: vector<64xf32>, %s: !llvm.ptr<3>) {
  // expected-error @below {{computes columns [96, 160) of an accumulator of 128 columns; both ends must be multiples of 8 within it}}
  %d = pkgpu.wgmma %acc, %s, %s {m = 64, n = 64, k = 16, a_type = f16, b_type = f16, acc_n = 128, acc_column = 96} : vector<64xf32>, !llvm.ptr<3>, !llvm.ptr<3> -> vector<64xf32>
  return
}
