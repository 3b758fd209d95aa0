//===- InterpreterTest.cpp - pk IR on the interpreter vs C++ references ---===//
//
// Hand-written pk IR, independent of the elaborator, checked against plain
// C++ loops.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace pk;

namespace {

struct Program {
  std::string errors;
  llvm::raw_string_ostream stream{errors};
  Session session{stream};
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit Program(const std::string &ir) {
    module = mlir::parseSourceString<mlir::ModuleOp>(ir, &session.context());
  }
};

// C = A(M x K) @ B(K x N) over a grid of 16x16 blocks, M, N symbolic.
const char *kMatmul = R"mlir(
pk.export @mm(%a: tensor<?x32xf32> {pk.name = "a", pk.shape = affine_map<()[s0, s1] -> (s0, 32)>},
              %b: tensor<32x?xf32> {pk.name = "b", pk.shape = affine_map<()[s0, s1] -> (32, s1)>})
    -> (tensor<?x?xf32> {pk.shape = affine_map<()[s0, s1] -> (s0, s1)>})
    attributes {symbols = ["M", "N"]} {
  %0 = pk.pallas_call "mm"(%a, %b) grid = affine_map<()[s0, s1] -> (s0 ceildiv 16, s1 ceildiv 16)> {
      in_specs = [#pk.block_spec<[16, 32], affine_map<(d0, d1)[s0, s1] -> (d0, 0)>>,
                  #pk.block_spec<[32, 16], affine_map<(d0, d1)[s0, s1] -> (0, d1)>>],
      out_specs = [#pk.block_spec<[16, 16], affine_map<(d0, d1)[s0, s1] -> (d0, d1)>>],
      out_shapes = [affine_map<()[s0, s1] -> (s0, s1)>],
      scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<?x32xf32>, tensor<32x?xf32>) -> tensor<?x?xf32>
  kernel {
  ^bb0(%x: !pk.ref<16x32xf32>, %y: !pk.ref<32x16xf32>, %o: !pk.ref<16x16xf32>):
    %xv = pk.load %x [0, 0] sizes [16, 32] strides [1, 1] squeeze [] : !pk.ref<16x32xf32> -> tensor<16x32xf32>
    %yv = pk.load %y [0, 0] sizes [32, 16] strides [1, 1] squeeze [] : !pk.ref<32x16xf32> -> tensor<32x16xf32>
    %c = pk.dot %xv, %yv : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
    pk.store %c, %o [0, 0] sizes [16, 16] strides [1, 1] squeeze [] : tensor<16x16xf32>, !pk.ref<16x16xf32>
    pk.yield
  }
  pk.return %0 : tensor<?x?xf32>
}
)mlir";

TEST(Interpreter, BlockedMatmulMatchesLoops) {
  Program p(kMatmul);
  ASSERT_TRUE(p.module) << p.errors;
  int64_t M = 37, K = 32, N = 20; // both grid axes overhang
  HostArray a(DType::F32, {M, K}), b(DType::F32, {K, N});
  for (int64_t i = 0; i < a.size(); ++i)
    a.setDouble(i, std::sin(0.1 * i));
  for (int64_t i = 0; i < b.size(); ++i)
    b.setDouble(i, std::cos(0.07 * i));
  RunResult r = runExport(*p.module, "mm", {a, b});
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{M, N}));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double expected = 0;
      for (int64_t k = 0; k < K; ++k)
        expected += a.getDouble(i * K + k) * b.getDouble(k * N + j);
      EXPECT_NEAR(r.outputs[0].getDouble(i * N + j), expected, 1e-4) << i << "," << j;
    }
}

TEST(Interpreter, ChecksArgumentsAgainstTheSignature) {
  Program p(kMatmul);
  ASSERT_TRUE(p.module) << p.errors;
  HostArray a(DType::F32, {4, 32}), wrongK(DType::F32, {31, 5}), wrongType(DType::I32, {32, 5});
  RunResult r = runExport(*p.module, "mm", {a, wrongK});
  EXPECT_NE(r.error.find("argument 'b' has shape (31, 5) but the signature requires (32, 5)"),
            std::string::npos)
      << r.error;
  r = runExport(*p.module, "mm", {a, wrongType});
  EXPECT_NE(r.error.find("argument 'b' must be float32, got int32"), std::string::npos) << r.error;
  r = runExport(*p.module, "mm", {a});
  EXPECT_NE(r.error.find("takes 2 arguments but 1 were given"), std::string::npos) << r.error;
  r = runExport(*p.module, "nope", {});
  EXPECT_NE(r.error.find("no export named 'nope'"), std::string::npos);
}

// Row sums with an scf.for over 8-wide column chunks, and the padding an
// overhanging block reads (NaN) counted with cmpf uno.
const char *kRowSums = R"mlir(
pk.export @rows(%x: tensor<?x32xf32> {pk.name = "x", pk.shape = affine_map<()[s0] -> (s0, 32)>})
    -> (tensor<?xf32> {pk.shape = affine_map<()[s0] -> (s0)>}, tensor<?xi32> {pk.shape = affine_map<()[s0] -> (s0)>})
    attributes {symbols = ["R"]} {
  %0:2 = pk.pallas_call "rows"(%x) grid = affine_map<()[s0] -> (s0 ceildiv 4)> {
      in_specs = [#pk.block_spec<[4, 32], affine_map<(d0)[s0] -> (d0, 0)>>],
      out_specs = [#pk.block_spec<[4], affine_map<(d0)[s0] -> (d0)>>, #pk.block_spec<[4], affine_map<(d0)[s0] -> (d0)>>],
      out_shapes = [affine_map<()[s0] -> (s0)>, affine_map<()[s0] -> (s0)>],
      scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<?x32xf32>) -> (tensor<?xf32>, tensor<?xi32>)
  kernel {
  ^bb0(%x_ref: !pk.ref<4x32xf32>, %sum_ref: !pk.ref<4xf32>, %nan_ref: !pk.ref<4xi32>):
    %zero = arith.constant dense<0.0> : tensor<4xf32>
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (tensor<4xf32>) : i32 {
      %off32 = arith.muli %i, %c8 : i32
      %off = arith.index_cast %off32 : i32 to index
      %chunk = pk.load %x_ref [0, %off] sizes [4, 8] strides [1, 1] squeeze [] : !pk.ref<4x32xf32> -> tensor<4x8xf32>
      %s = pk.reduce <add> %chunk axes [1] : tensor<4x8xf32> -> tensor<4xf32>
      %n = arith.addf %a, %s : tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    }
    pk.store %acc, %sum_ref [0] sizes [4] strides [1] squeeze [] : tensor<4xf32>, !pk.ref<4xf32>
    %all = pk.load %x_ref [0, 0] sizes [4, 32] strides [1, 1] squeeze [] : !pk.ref<4x32xf32> -> tensor<4x32xf32>
    %isnan = arith.cmpf uno, %all, %all : tensor<4x32xf32>
    %ones = arith.extui %isnan : tensor<4x32xi1> to tensor<4x32xi32>
    %count = pk.reduce <add> %ones axes [1] : tensor<4x32xi32> -> tensor<4xi32>
    pk.store %count, %nan_ref [0] sizes [4] strides [1] squeeze [] : tensor<4xi32>, !pk.ref<4xi32>
    pk.yield
  }
  pk.return %0#0, %0#1 : tensor<?xf32>, tensor<?xi32>
}
)mlir";

TEST(Interpreter, LoopsAndOverhangingBlocks) {
  Program p(kRowSums);
  ASSERT_TRUE(p.module) << p.errors;
  int64_t R = 6;
  HostArray x(DType::F32, {R, 32});
  for (int64_t i = 0; i < x.size(); ++i)
    x.setDouble(i, (i % 7) - 3);
  RunResult r = runExport(*p.module, "rows", {x});
  ASSERT_TRUE(r.ok()) << r.error;
  for (int64_t row = 0; row < R; ++row) {
    double expected = 0;
    for (int64_t c = 0; c < 32; ++c)
      expected += x.getDouble(row * 32 + c);
    EXPECT_EQ(r.outputs[0].getDouble(row), expected);
    // Rows 6 and 7 of the second block are padding, but they are dropped;
    // the in-bounds rows never see NaN.
    EXPECT_EQ(r.outputs[1].getInt(row), 0);
  }
}

// Integer corner cases follow XLA: x / 0 = -1, x % 0 = x, oversized
// shifts give 0, float -> int saturates and NaN becomes 0.
const char *kIntegers = R"mlir(
pk.export @ints(%a: tensor<4xi32> {pk.name = "a", pk.shape = affine_map<() -> (4)>},
                %b: tensor<4xi32> {pk.name = "b", pk.shape = affine_map<() -> (4)>},
                %f: tensor<4xf32> {pk.name = "f", pk.shape = affine_map<() -> (4)>})
    -> (tensor<4xi32> {pk.shape = affine_map<() -> (4)>}, tensor<4xi32> {pk.shape = affine_map<() -> (4)>},
        tensor<4xi32> {pk.shape = affine_map<() -> (4)>}, tensor<4xi8> {pk.shape = affine_map<() -> (4)>})
    attributes {symbols = []} {
  %0:4 = pk.pallas_call "ints"(%a, %b, %f) grid = affine_map<() -> ()> {
      in_specs = [#pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[4], affine_map<() -> (0)>>],
      out_specs = [#pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[4], affine_map<() -> (0)>>, #pk.block_spec<[4], affine_map<() -> (0)>>],
      out_shapes = [affine_map<() -> (4)>, affine_map<() -> (4)>, affine_map<() -> (4)>, affine_map<() -> (4)>],
      scratch_types = [], input_output_aliases = array<i64>}
      : (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi8>)
  kernel {
  ^bb0(%ar: !pk.ref<4xi32>, %br: !pk.ref<4xi32>, %fr: !pk.ref<4xf32>, %q: !pk.ref<4xi32>, %r: !pk.ref<4xi32>, %s: !pk.ref<4xi32>, %t: !pk.ref<4xi8>):
    %av = pk.load %ar [0] sizes [4] strides [1] squeeze [] : !pk.ref<4xi32> -> tensor<4xi32>
    %bv = pk.load %br [0] sizes [4] strides [1] squeeze [] : !pk.ref<4xi32> -> tensor<4xi32>
    %fv = pk.load %fr [0] sizes [4] strides [1] squeeze [] : !pk.ref<4xf32> -> tensor<4xf32>
    %div = arith.floordivsi %av, %bv : tensor<4xi32>
    %rem = arith.remsi %av, %bv : tensor<4xi32>
    %shl = arith.shli %av, %bv : tensor<4xi32>
    %cvt = arith.fptosi %fv : tensor<4xf32> to tensor<4xi8>
    pk.store %div, %q [0] sizes [4] strides [1] squeeze [] : tensor<4xi32>, !pk.ref<4xi32>
    pk.store %rem, %r [0] sizes [4] strides [1] squeeze [] : tensor<4xi32>, !pk.ref<4xi32>
    pk.store %shl, %s [0] sizes [4] strides [1] squeeze [] : tensor<4xi32>, !pk.ref<4xi32>
    pk.store %cvt, %t [0] sizes [4] strides [1] squeeze [] : tensor<4xi8>, !pk.ref<4xi8>
    pk.yield
  }
  pk.return %0#0, %0#1, %0#2, %0#3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi8>
}
)mlir";

TEST(Interpreter, IntegerCornerCases) {
  Program p(kIntegers);
  ASSERT_TRUE(p.module) << p.errors;
  HostArray a(DType::I32, {4}), b(DType::I32, {4}), f(DType::F32, {4});
  int64_t av[] = {-7, 7, 5, INT32_MIN}, bv[] = {2, 0, 40, -1};
  double fv[] = {1e9, -1e9, NAN, -3.7};
  for (int i = 0; i < 4; ++i) {
    a.setInt(i, av[i]);
    b.setInt(i, bv[i]);
    f.setDouble(i, fv[i]);
  }
  RunResult r = runExport(*p.module, "ints", {a, b, f});
  ASSERT_TRUE(r.ok()) << r.error;
  // floor division: -7 // 2 = -4; 7 // 0 = -1; 5 // 40 = 0; INT_MIN // -1 wraps.
  EXPECT_EQ(r.outputs[0].getInt(0), -4);
  EXPECT_EQ(r.outputs[0].getInt(1), -1);
  EXPECT_EQ(r.outputs[0].getInt(2), 0);
  EXPECT_EQ(r.outputs[0].getInt(3), INT32_MIN);
  // truncated remainder: -7 rem 2 = -1; 7 rem 0 = 7; INT_MIN rem -1 = 0.
  EXPECT_EQ(r.outputs[1].getInt(0), -1);
  EXPECT_EQ(r.outputs[1].getInt(1), 7);
  EXPECT_EQ(r.outputs[1].getInt(3), 0);
  // shifts by >= 32 give 0
  EXPECT_EQ(r.outputs[2].getInt(0), -28);
  EXPECT_EQ(r.outputs[2].getInt(2), 0);
  // f32 -> i8 saturates; NaN -> 0; -3.7 truncates to -3
  EXPECT_EQ(r.outputs[3].getInt(0), 127);
  EXPECT_EQ(r.outputs[3].getInt(1), -128);
  EXPECT_EQ(r.outputs[3].getInt(2), 0);
  EXPECT_EQ(r.outputs[3].getInt(3), -3);
}

TEST(Interpreter, DeterministicInputsAreDocumentedValues) {
  HostArray f = deterministicInput(DType::F32, {3}, 1);
  // v = (37 k + 101) mod 257; v / 64 - 2
  EXPECT_EQ(f.getDouble(0), 101.0 / 64 - 2);
  EXPECT_EQ(f.getDouble(1), 138.0 / 64 - 2);
  EXPECT_EQ(f.getDouble(2), 175.0 / 64 - 2);
  HostArray i = deterministicInput(DType::I8, {2}, 0);
  EXPECT_EQ(i.getInt(0), -128);
  EXPECT_EQ(i.getInt(1), 37 - 128);
}

} // namespace
