//===- ElaboratorTest.cpp - .pk programs, run, checked against C++ --------===//
//
// Each test compiles a small .pk program, runs it on the interpreter, and
// compares with values computed here by plain loops.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace pk;
using pk::test::compile;

namespace {

const char *kPrelude = R"(
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from functools import partial
)";

test::Compiled compilePk(const std::string &body, std::vector<std::string> defines = {}) {
  test::Compiled c = compile(std::string(kPrelude) + body, std::move(defines));
  EXPECT_TRUE(c) << c.diagnostics;
  return c;
}

TEST(Elaborator, FunctionsClosuresAndPartial) {
  auto c = compilePk(R"(
def make_kernel(f, scale):
    def kernel(x_ref, o_ref):
        o_ref[...] = f(x_ref[...]) * scale
    return kernel

def twice(v, *, times):
    return v * times

@export
def run(x: f32[16]) -> f32[16]:
    k = make_kernel(partial(twice, times=3), scale=0.5)
    return pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct((16,), jnp.float32))(x)
)");
  HostArray x = test::iotaArray(DType::F32, {16});
  HostArray out = c.run("run", {x})[0];
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(out.getDouble(i), i * 3 * 0.5);
}

TEST(Elaborator, DynamicForLoopCarriesVariables) {
  auto c = compilePk(R"(
def kernel(x_ref, o_ref):
    acc = jnp.zeros((4,), jnp.float32)
    n = pl.program_id(0) + 2
    for i in range(n):
        acc = acc + x_ref[i, :] * i
    o_ref[...] = acc

@export
def run(x: f32[8, 4]) -> f32[12]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((12,), jnp.float32), grid=(3,),
        in_specs=[pl.BlockSpec((8, 4), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)))(x)
)");
  HostArray x = test::iotaArray(DType::F32, {8, 4}, 0.5);
  HostArray out = c.run("run", {x})[0];
  for (int program = 0; program < 3; ++program)
    for (int j = 0; j < 4; ++j) {
      double expected = 0;
      for (int i = 0; i < program + 2; ++i)
        expected += x.getDouble(i * 4 + j) * i;
      EXPECT_EQ(out.getDouble(program * 4 + j), expected);
    }
}

TEST(Elaborator, ForiLoopWhileLoopAndCond) {
  auto c = compilePk(R"(
def kernel(x_ref, o_ref):
    def body(i, carry):
        total, count = carry
        return total + x_ref[i], count + 1
    total, count = lax.fori_loop(0, 6, body, (0.0, 0))
    def cond(c):
        return c[0] < 100
    def step(c):
        return (c[0] * 3, c[1] + 1)
    big, steps = lax.while_loop(cond, step, (1, 0))
    picked = lax.cond(total > 10.0, lambda: total * 2, lambda: total - 1)
    o_ref[0] = picked
    o_ref[1] = count.astype(jnp.float32)
    o_ref[2] = big.astype(jnp.float32)
    o_ref[3] = steps.astype(jnp.float32)

@export
def run(x: f32[8]) -> f32[4]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32))(x)
)");
  for (double scale : {1.0, 0.1}) {
    HostArray x = test::iotaArray(DType::F32, {8}, scale);
    HostArray out = c.run("run", {x})[0];
    double total = 0;
    for (int i = 0; i < 6; ++i)
      total += x.getDouble(i);
    EXPECT_EQ(out.getDouble(0), total > 10 ? static_cast<float>(total) * 2 : static_cast<float>(total) - 1);
    EXPECT_EQ(out.getDouble(1), 6);
    EXPECT_EQ(out.getDouble(2), 243); // 1, 3, 9, 27, 81, 243
    EXPECT_EQ(out.getDouble(3), 5);
  }
}

TEST(Elaborator, DynamicIfMergesBothBranches) {
  auto c = compilePk(R"(
def kernel(x_ref, o_ref):
    v = x_ref[...]
    if jnp.sum(v) > 0:
        y = v * 2
        tag = 1
    else:
        y = -v
        tag = 2
    o_ref[...] = y + tag

@export
def run(x: f32[4]) -> f32[4]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32))(x)
)");
  HostArray pos = test::array(DType::F32, {4}, {1, 2, 3, -1});
  HostArray neg = test::array(DType::F32, {4}, {-1, -2, 3, -1});
  HostArray a = c.run("run", {pos})[0], b = c.run("run", {neg})[0];
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.getDouble(i), pos.getDouble(i) * 2 + 1);
    EXPECT_EQ(b.getDouble(i), -neg.getDouble(i) + 2);
  }
}

TEST(Elaborator, MaskedLoadsAndStoresWithSymbolicSize) {
  auto c = compilePk(R"(
BLOCK = 8

def kernel(x_ref, o_ref, *, n):
    i = pl.program_id(0)
    idx = i * BLOCK + jnp.arange(BLOCK)
    mask = idx < n
    v = pl.load(x_ref, (pl.ds(0, BLOCK),), mask=mask, other=-1.0)
    pl.store(o_ref, (pl.ds(0, BLOCK),), v + 1.0, mask=mask)

@export
def run(x: f32[N]) -> f32[N]:
    spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    return pl.pallas_call(partial(kernel, n=N), out_shape=jax.ShapeDtypeStruct((N,), jnp.float32),
        grid=(pl.cdiv(N, BLOCK),), in_specs=[spec], out_specs=spec)(x)
)");
  for (int64_t n : {5, 8, 21}) {
    HostArray x = test::iotaArray(DType::F32, {n});
    HostArray out = c.run("run", {x})[0];
    ASSERT_EQ(out.size(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(out.getDouble(i), i + 1.0);
  }
}

TEST(Elaborator, ScratchPersistsAcrossTheGridAndAliasesStartFromTheInput) {
  auto c = compilePk(R"(
def kernel(x_ref, acc_in_ref, o_ref, acc_ref):
    k = pl.program_id(0)
    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += x_ref[...]
    @pl.when(k == pl.num_programs(0) - 1)
    def _():
        o_ref[...] = acc_ref[...] + acc_in_ref[...]

@export
def run(x: f32[32], acc: f32[8]) -> f32[8]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), grid=(4,),
        in_specs=[pl.BlockSpec((8,), lambda k: (k,)), pl.BlockSpec((8,), lambda k: (0,))],
        out_specs=pl.BlockSpec((8,), lambda k: (0,)),
        scratch_shapes=[pltpu.VMEM((8,), jnp.float32)],
        input_output_aliases={1: 0})(x, acc)
)");
  HostArray x = test::iotaArray(DType::F32, {32});
  HostArray acc = test::iotaArray(DType::F32, {8}, 100);
  HostArray out = c.run("run", {x, acc})[0];
  for (int j = 0; j < 8; ++j)
    EXPECT_EQ(out.getDouble(j), j + (8 + j) + (16 + j) + (24 + j) + 100.0 * j);
}

TEST(Elaborator, SqueezedAndUnblockedSpecs) {
  auto c = compilePk(R"(
def rows(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 10     # x_ref is one row: the row axis is squeezed

def windows(x_ref, o_ref):
    o_ref[...] = x_ref[0:4] + x_ref[1:5]

@export
def run_rows(x: f32[3, 4]) -> f32[3, 4]:
    return pl.pallas_call(rows, out_shape=jax.ShapeDtypeStruct((3, 4), jnp.float32), grid=(3,),
        in_specs=[pl.BlockSpec((None, 4), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((pl.Squeezed(), 4), lambda i: (i, 0)))(x)

@export
def run_windows(x: f32[8]) -> f32[8]:
    return pl.pallas_call(windows, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), grid=(2,),
        in_specs=[pl.BlockSpec((5,), lambda i: (i * 4,), indexing_mode=pl.Unblocked(((0, 1),)))],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)))(x)
)");
  HostArray x = test::iotaArray(DType::F32, {3, 4});
  HostArray out = c.run("run_rows", {x})[0];
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(out.getDouble(i), i * 10.0);
  HostArray y = test::iotaArray(DType::F32, {8});
  HostArray w = c.run("run_windows", {y})[0];
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(w.getDouble(i), i + (i + 1.0));
  EXPECT_TRUE(std::isnan(w.getDouble(7))); // reads the padding past the end
}

TEST(Elaborator, ReductionsAndTypePromotion) {
  auto c = compilePk(R"(
def kernel(x_ref, i_ref, s_ref, m_ref, a_ref, h_ref):
    x = x_ref[...]
    s_ref[...] = jnp.sum(x, axis=1)
    m_ref[...] = jnp.mean(x, axis=0)
    a_ref[...] = jnp.argmax(x, axis=1)
    h_ref[...] = (i_ref[...] * 2 + 1).astype(jnp.float32) / 4

@export
def run(x: f32[3, 5], i: i8[5]) -> (f32[3], f32[5], i32[3], f32[5]):
    return pl.pallas_call(kernel, out_shape=(
        jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((5,), jnp.float32),
        jax.ShapeDtypeStruct((3,), jnp.int32), jax.ShapeDtypeStruct((5,), jnp.float32)))(x, i)
)");
  HostArray x = test::array(DType::F32, {3, 5}, {1, 5, 2, 5, 0, -1, -2, -3, -4, -5, 9, 1, 1, 1, 1});
  HostArray i8 = test::array(DType::I8, {5}, {-3, 0, 3, 60, 100});
  std::vector<HostArray> out = c.run("run", {x, i8});
  EXPECT_EQ(out[0].getDouble(0), 13);
  EXPECT_EQ(out[0].getDouble(1), -15);
  EXPECT_EQ(out[1].getDouble(0), 3);
  EXPECT_EQ(out[2].getInt(0), 1); // first of the tied maxima
  EXPECT_EQ(out[2].getInt(1), 0);
  EXPECT_EQ(out[2].getInt(2), 0);
  // i8 arithmetic wraps: 100 * 2 + 1 = 201 -> -55
  EXPECT_EQ(out[3].getDouble(0), -5 / 4.0);
  EXPECT_EQ(out[3].getDouble(4), -55 / 4.0);
}

TEST(Elaborator, DefinesOverrideModuleConstants) {
  std::string source = R"(
SCALE = 2.0
def kernel(o_ref):
    o_ref[...] = jnp.full((4,), SCALE)
@export
def run() -> f32[4]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32))()
)";
  EXPECT_EQ(compilePk(source).run("run", {})[0].getDouble(0), 2.0);
  EXPECT_EQ(compilePk(source, {"SCALE=7.5"}).run("run", {})[0].getDouble(0), 7.5);
}

TEST(Elaborator, ErrorsPointAtTheUsersLineWithCallSiteNotes) {
  test::Compiled c = compile(std::string(kPrelude) + R"(
def helper(a, b):
    return a + b

def kernel(x_ref, o_ref):
    f = lambda u: helper(u, jnp.ones((3,)))
    o_ref[...] = f(x_ref[...])

@export
def run(x: f32[4]) -> f32[4]:
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32))(x)
)");
  EXPECT_FALSE(c);
  EXPECT_NE(c.diagnostics.find("test.pk:10:12: error: incompatible shapes for broadcasting: (4,) and (3,)"),
            std::string::npos)
      << c.diagnostics;
  EXPECT_NE(c.diagnostics.find("test.pk:13:19: note: in call to 'helper'"), std::string::npos)
      << c.diagnostics;
  EXPECT_NE(c.diagnostics.find("test.pk:14:18: note: in call to '<lambda>'"), std::string::npos)
      << c.diagnostics;
  EXPECT_NE(c.diagnostics.find("note: in call to 'kernel'"), std::string::npos) << c.diagnostics;
}

} // namespace
