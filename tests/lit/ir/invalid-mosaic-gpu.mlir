// The verifiers of the Mosaic GPU ops and types reject malformed IR with a
// message naming the problem.
// RUN: %pk-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{invalid transforms [#pk.tile<8, 64>, #pk.swizzle<64>]: SwizzleTransform(64) needs the minor dimension of the tile to be 64 bytes (32 elements), but the tiled shape is (8, 1, 8, 64)}}
func.func private @f(!pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<64>]>)

// -----

// expected-error @+1 {{invalid transforms [#pk.tile<8, 48>]: TilingTransform(8, 48) does not divide shape (64, 64)}}
func.func private @f(!pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 48>]>)

// -----

// expected-error @+1 {{only shared-memory Refs (#pk.memory_space<shared>) have transforms}}
func.func private @f(!pk.ref<64x64xf16, #pk.memory_space<gmem>, [#pk.swizzle<128>]>)

// -----

// expected-error @+1 {{swizzle must be 32, 64 or 128 bytes, got 16}}
func.func private @f(!pk.ref<64x8xf16, #pk.memory_space<shared>, [#pk.swizzle<16>]>)

// -----

// expected-error @+1 {{a barrier needs at least one arrival, got 0}}
func.func private @f(!pk.barrier<[2], arrivals 0>)

// -----

pk.export @e(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  // expected-error @+1 {{body argument 1 must be a global-memory Ref of 'tensor<8xf32>'}}
  %0 = pk.mesh_kernel "k"(%x) grid [] [] cluster [] [] threads 1
      {input_output_aliases = array<i64>} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: !pk.ref<8xf32, #pk.memory_space<gmem>>, %b: !pk.ref<8xf32, #pk.memory_space<shared>>):
    pk.scope_yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

pk.export @e(%x: tensor<8xf32> {pk.name = "x", pk.shape = affine_map<() -> (8)>})
    -> (tensor<8xf32> {pk.shape = affine_map<() -> (8)>}) attributes {symbols = []} {
  %0 = pk.mesh_kernel "k"(%x) grid [2] ["i"] cluster [] [] threads 1
      {input_output_aliases = array<i64>} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: !pk.ref<8xf32, #pk.memory_space<gmem>>, %b: !pk.ref<8xf32, #pk.memory_space<gmem>>):
    // expected-error @+1 {{names no axis of the enclosing mesh: 'j'}}
    %j = pk.axis_index "j" : i32
    pk.scope_yield
  }
  pk.return %0 : tensor<8xf32>
}

// -----

func.func @f(%acc: !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>,
             %a: !pk.ref<64x32xf16, #pk.memory_space<shared>, [#pk.tile<8, 32>, #pk.swizzle<64>]>,
             %b: !pk.ref<32x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>) {
  // expected-error @+1 {{A and B must have the same swizzle, got 64 and 128}}
  pk.wgmma %acc, %a, %b : !pk.ref<64x64xf32, #pk.memory_space<wgmma_acc>>,
      !pk.ref<64x32xf16, #pk.memory_space<shared>, [#pk.tile<8, 32>, #pk.swizzle<64>]>,
      !pk.ref<32x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
  return
}

// -----

func.func @f(%acc: !pk.ref<32x64xf32, #pk.memory_space<wgmma_acc>>,
             %a: !pk.ref<32x64xf16, #pk.memory_space<shared>>,
             %b: !pk.ref<64x64xf16, #pk.memory_space<shared>>) {
  // expected-error @+1 {{M (the accumulator's rows) must be a multiple of 64, got 32}}
  pk.wgmma %acc, %a, %b : !pk.ref<32x64xf32, #pk.memory_space<wgmma_acc>>,
      !pk.ref<32x64xf16, #pk.memory_space<shared>>, !pk.ref<64x64xf16, #pk.memory_space<shared>>
  return
}

// -----

func.func @f(%acc: !pk.ref<64x64xf16, #pk.memory_space<wgmma_acc>>,
             %a: !pk.ref<64x64xbf16, #pk.memory_space<shared>>,
             %b: !pk.ref<64x64xbf16, #pk.memory_space<shared>>) {
  // expected-error @+1 {{bfloat16 wgmma needs a float32 accumulator, got float16}}
  pk.wgmma %acc, %a, %b : !pk.ref<64x64xf16, #pk.memory_space<wgmma_acc>>,
      !pk.ref<64x64xbf16, #pk.memory_space<shared>>, !pk.ref<64x64xbf16, #pk.memory_space<shared>>
  return
}

// -----

func.func @f(%src: !pk.ref<64xf32, #pk.memory_space<shared>>, %dst: !pk.ref<64xf32, #pk.memory_space<shared>>,
             %bar: !pk.barrier<[1], arrivals 1>) {
  // expected-error @+1 {{the source must be a Ref in global memory (GMEM)}}
  pk.copy_gmem_to_smem %src, %dst, %bar : !pk.ref<64xf32, #pk.memory_space<shared>>,
      !pk.ref<64xf32, #pk.memory_space<shared>>, !pk.barrier<[1], arrivals 1>
  return
}

// -----

func.func @f(%src: !pk.ref<64xf32, #pk.memory_space<gmem>>, %dst: !pk.ref<64xf32, #pk.memory_space<shared>>,
             %bar: !pk.barrier<[2], arrivals 1>) {
  // expected-error @+1 {{needs one barrier of the 2 in the array; index it (barrier.at[i])}}
  pk.copy_gmem_to_smem %src, %dst, %bar : !pk.ref<64xf32, #pk.memory_space<gmem>>,
      !pk.ref<64xf32, #pk.memory_space<shared>>, !pk.barrier<[2], arrivals 1>
  return
}

// -----

func.func @f(%src: !pk.ref<64xf32, #pk.memory_space<gmem>>, %dst: !pk.ref<64xf32, #pk.memory_space<shared>>,
             %bar: !pk.barrier<[1], arrivals 1>) {
  // expected-error @+1 {{collective axis 'x' is not a cluster axis of the enclosing mesh}}
  pk.copy_gmem_to_smem %src, %dst, %bar collective ["x"] : !pk.ref<64xf32, #pk.memory_space<gmem>>,
      !pk.ref<64xf32, #pk.memory_space<shared>>, !pk.barrier<[1], arrivals 1>
  return
}

// -----

func.func @f(%r: !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>) {
  // expected-error @+1 {{cannot take this window of a transformed Ref: dimension 0 is tiled by 8, so a slice of it must start and end on a tile boundary (got start 4, size 8)}}
  %v = pk.ref_view %r[4, 0] sizes [8, 64] strides [1, 1] squeeze []
      : !pk.ref<64x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
      -> !pk.ref<8x64xf16, #pk.memory_space<shared>, [#pk.tile<8, 64>, #pk.swizzle<128>]>
  return
}

// -----

func.func @f(%r: !pk.ref<4x64xf32, #pk.memory_space<gmem>>) {
  // expected-error @+1 {{result type must be '!pk.ref<64xf32, #pk.memory_space<gmem>>'}}
  %v = pk.ref_view %r[1, 0] sizes [1, 64] strides [1, 1] squeeze [0]
      : !pk.ref<4x64xf32, #pk.memory_space<gmem>> -> !pk.ref<64xf32, #pk.memory_space<shared>>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{the register count must be a multiple of 8 between 24 and 256, got 20}}
  pk.set_max_registers 20
  return
}

// -----

func.func @f(%u: !pk.ref<1024xi8, #pk.memory_space<shared>>) {
  // expected-error @+1 {{bytes [512, 1536) of the result lie outside the 1024-byte buffer}}
  %r = pk.ref_reinterpret %u[512] : !pk.ref<1024xi8, #pk.memory_space<shared>> -> !pk.ref<256xf32, #pk.memory_space<shared>>
  return
}

// -----

func.func @f(%u: !pk.ref<256xf32, #pk.memory_space<shared>>) {
  // expected-error @+1 {{a shared-memory union buffer is a 1-D buffer of i8}}
  %r = pk.ref_reinterpret %u[0] : !pk.ref<256xf32, #pk.memory_space<shared>> -> !pk.ref<256xf32, #pk.memory_space<shared>>
  return
}

// -----

func.func @f(%u: !pk.ref<128x64xi32, #pk.memory_space<tmem>>) {
  // expected-error @+1 {{columns [32, 96) of the result lie outside the buffer's 64}}
  %r = pk.ref_reinterpret %u[32] : !pk.ref<128x64xi32, #pk.memory_space<tmem>> -> !pk.ref<128x64xf32, #pk.memory_space<tmem>>
  return
}

// -----

func.func @f(%u: !pk.ref<1024xi8, #pk.memory_space<shared>>) {
  // expected-error @+1 {{the result must be in the buffer's memory space}}
  %r = pk.ref_reinterpret %u[0] : !pk.ref<1024xi8, #pk.memory_space<shared>> -> !pk.ref<256xf32, #pk.memory_space<gmem>>
  return
}

// -----

func.func @f(%b: !pk.barrier<[1], arrivals 1, cluster ["x"]>) {
  // expected-error @+1 {{tests a barrier of this CTA, not a cluster barrier}}
  %t = pk.barrier_test %b : !pk.barrier<[1], arrivals 1, cluster ["x"]>
  return
}

// -----

func.func @f() {
  %id = arith.constant 16 : i32
  %n = arith.constant 128 : i32
  // expected-error @+1 {{named barrier id 16 is out of range: a CTA has named barriers 0 to 15}}
  pk.named_barrier %id, %n
  return
}

// -----

func.func @f() {
  %id = arith.constant 4 : i32
  %n = arith.constant 100 : i32
  // expected-error @+1 {{a named barrier's thread count must be a positive multiple of 32 up to 1024, got 100}}
  pk.named_barrier arrive %id, %n
  return
}
