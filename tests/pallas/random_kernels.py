#!/usr/bin/env python3
"""Random valid Pallas kernels, checked against JAX Pallas.

Generates one .pk file of COUNT random kernels from SEED: element-wise
expression trees over every dtype pkc computes with (signed, unsigned and
narrow integers, bf16/f16/f32), casts between them, BlockSpecs with edge
blocks on 1-D and 2-D grids, reductions along whole-block axes, matrix
products (integer ones included), lax.fori_loop and pl.when. Each kernel
is an export with a `# DIFF:` case, and the file goes through
differential.py on the chosen device: pkc's interpreter, the CUDA
backend's kernels on the SIMT simulator, or the GPU. A program that fails
is kept (--keep) to be reproduced with differential.py alone.

The generator only writes programs whose answer does not hang on an ulp:
floats go through continuous functions only (no comparisons, floors or
float-to-integer conversions, where a last-bit difference in exp would
change the answer by 1), and no read past an input's end (the padding of
an edge block) reaches an output.

Usage: random_kernels.py --pkc PATH [--seed S] [--count N]
                         [--device=interpreter|cuda-sim|cuda] [--keep DIR]
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

FLOATS = ["float32", "bfloat16", "float16"]
SIGNED = ["int32", "int16", "int8"]
UNSIGNED = ["uint32", "uint16", "uint8"]
SHORT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int32": "i32",
         "int16": "i16", "int8": "i8", "uint32": "u32", "uint16": "u16", "uint8": "u8",
         "bool": "bool"}
BITS = {"int32": 32, "int16": 16, "int8": 8, "uint32": 32, "uint16": 16, "uint8": 8}
# Integer inputs span the whole type; float inputs stay small so that
# exp, products and sums keep to where float rounding differs little.
INT_RANGE = {"int32": (-2**31, 2**31), "int16": (-2**15, 2**15), "int8": (-128, 128),
             "uint32": (0, 2**32), "uint16": (0, 2**16), "uint8": (0, 256)}
# Values integers are clipped to before they become floats of the kind, so
# that float rounding of huge integers does not dominate the comparison.
FLOAT_LIMIT = {"float32": 1e6, "bfloat16": 250.0, "float16": 1000.0}


def is_float(dtype):
    return dtype in FLOATS


def is_unsigned(dtype):
    return dtype in UNSIGNED


class Expressions:
    """Random expression trees over the names in scope, all of one dtype."""

    def __init__(self, rng, dtype, names):
        self.rng = rng
        self.dtype = dtype
        self.names = names

    def leaf(self, name_only=False):
        if name_only or self.rng.random() < 0.8:
            return self.rng.choice(self.names)
        # Float literals stay weakly typed (they take the array's type);
        # integer ones are typed, so that no combination of literals alone
        # leaves the type's range as a Python int.
        if is_float(self.dtype):
            return repr(round(self.rng.uniform(-2, 2), 2))
        if is_unsigned(self.dtype):
            return self.scalar(self.rng.randrange(0, 200))
        return self.scalar(self.rng.randrange(-100, 100))

    def scalar(self, value):
        return f"jnp.asarray({value}, jnp.{self.dtype})"

    def expr(self, depth, top=True):
        """An expression; at the top, one of the block's shape (a name)."""
        if depth <= 0 or (not top and self.rng.random() < 0.2):
            return self.leaf(name_only=top)
        a = self.expr(depth - 1, top)
        b = self.expr(depth - 1, False)
        pick = self.rng.choice(self.float_ops() if is_float(self.dtype) else self.int_ops())
        return pick(a, b)

    def common_ops(self):
        return [
            lambda a, b: f"({a} + {b})",
            lambda a, b: f"({a} - {b})",
            lambda a, b: f"({a} * {b})",
            lambda a, b: f"jnp.maximum({a}, {b})",
            lambda a, b: f"jnp.minimum({a}, {b})",
        ]

    def float_ops(self):
        # Only continuous functions: an ulp of difference in exp or tanh
        # must not turn into a different branch of a comparison or floor.
        return self.common_ops() + [
            lambda a, b: f"jnp.tanh({a})",
            lambda a, b: f"jnp.exp(jnp.clip({a}, -4.0, 4.0))",
            lambda a, b: f"jnp.sqrt(jnp.abs({a}) + 1.0)",
            lambda a, b: f"({a} / (jnp.abs({b}) + 1.0))",
            lambda a, b: f"jnp.abs({a})",
            lambda a, b: f"jax.nn.sigmoid({a})",
            lambda a, b: f"jnp.clip({a}, -3.0, 3.0)",
        ]

    def int_ops(self):
        width = BITS[self.dtype]
        ops = self.common_ops() + [
            lambda a, b: f"jnp.where({a} > {b}, {a}, {b} - {a})",
            lambda a, b: f"jnp.where(({a} <= {b}) | ({a} == {b}), {b}, {a})",
            lambda a, b: f"jnp.clip({a}, {b}, {a} | {b})",
            lambda a, b: f"({a} // {b})",
            lambda a, b: f"({a} % {b})",
            lambda a, b: f"lax.div({a}, {b})",
            lambda a, b: f"lax.rem({a}, {b})",
            lambda a, b: f"({a} & {b})",
            lambda a, b: f"({a} | {b})",
            lambda a, b: f"({a} ^ {b})",
            lambda a, b: f"(~{a})",
            # Shift amounts past the width are defined (XLA gives 0 or the sign).
            lambda a, b: f"({a} >> ({b} & {self.scalar(width + 3)}))",
            lambda a, b: f"({a} << ({b} & {self.scalar(width - 1)}))",
            lambda a, b: f"lax.shift_right_logical({a}, {b} & {self.scalar(width - 1)})",
        ]
        if not is_unsigned(self.dtype):
            ops += [lambda a, b: f"jnp.abs({a})", lambda a, b: f"(-{a})"]
        return ops


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def dtype(self, kinds=(FLOATS, SIGNED, UNSIGNED)):
        return self.rng.choice(self.rng.choice(kinds))

    def cast(self, value, src, dst):
        """`value` (of dtype src) as dst: integers wrap, and become floats
        clipped to where the float type holds them closely."""
        if src == dst:
            return value
        assert not (is_float(src) and not is_float(dst)), "float -> int is ulp-sensitive"
        if not is_float(src) and is_float(dst):
            limit = FLOAT_LIMIT[dst]
            lo = 0 if is_unsigned(src) else -min(limit, 2**(BITS[src] - 1))
            hi = min(limit, 2**BITS[src] - 1 if is_unsigned(src) else 2**(BITS[src] - 1) - 1)
            return f"jnp.clip({value}, {int(lo)}, {int(hi)}).astype(jnp.{dst})"
        return f"{value}.astype(jnp.{dst})"

    def body(self, dtype, names, lines, depth=3):
        exprs = Expressions(self.rng, dtype, names)
        count = self.rng.randint(1, 3)
        for k in range(count):
            name = f"t{len(names)}"
            lines.append(f"    {name} = {exprs.expr(depth)}")
            names.append(name)
        return names[-1]

    def elementwise(self, index):
        """x, y -> o over a 1-D or 2-D grid of blocks, edge blocks included."""
        dtype = self.dtype()
        out = dtype
        if self.rng.random() < 0.4:
            # Float results do not become integers: truncation would turn an
            # ulp of difference in exp or tanh into a difference of 1.
            out = self.dtype((FLOATS,) if is_float(dtype) else (FLOATS, SIGNED, UNSIGNED))
        rank = self.rng.choice([1, 2])
        if rank == 1:
            block = (self.rng.choice([32, 64, 128, 256]),)
            sizes = {"N": self.rng.randint(1, 3 * block[0])}
            dims = ["N"]
        else:
            block = (self.rng.choice([8, 16, 32]), self.rng.choice([16, 32, 64, 128]))
            sizes = {"M": self.rng.randint(1, 3 * block[0]), "N": self.rng.randint(1, 3 * block[1])}
            dims = ["M", "N"]
        lines = [f"def kernel_{index}(x_ref, y_ref, o_ref):",
                 "    x = x_ref[...]", "    y = y_ref[...]"]
        names = ["x", "y"]
        result = self.body(dtype, names, lines)
        if self.rng.random() < 0.3:
            # A loop that stays a loop: the carry is a block-shaped value.
            expr = Expressions(self.rng, dtype, ["c", "x"]).expr(2)
            if is_float(dtype):
                expr = f"jnp.tanh({expr})"  # bounded however many times it runs
            lines.append(f"    {result} = lax.fori_loop(0, {self.rng.randint(1, 4)}, "
                         f"lambda i, c: {expr}, {result})")
        lines.append(f"    o_ref[...] = {self.cast(result, dtype, out)}")
        if self.rng.random() < 0.3:
            first = ", ".join(f"pl.program_id({d}) == 0" for d in range(rank))
            lines += ["", f"    @pl.when({first.split(',')[0]})", "    def _():",
                      f"        o_ref[...] = {self.cast('(x_ref[...] - y_ref[...])', dtype, out)}"]
        shape = ", ".join(dims)
        grid = ", ".join(f"pl.cdiv({d}, {b})" for d, b in zip(dims, block))
        index_map = "lambda i: (i,)" if rank == 1 else "lambda i, j: (i, j)"
        spec = f"pl.BlockSpec({block!r}, {index_map})"
        lines += [
            "", "", "@export",
            f"def f_{index}(x: {SHORT[dtype]}[{shape}], y: {SHORT[dtype]}[{shape}]) -> {SHORT[out]}[{shape}]:",
            f"    spec = {spec}",
            f"    return pl.pallas_call(kernel_{index}, out_shape=jax.ShapeDtypeStruct(({shape},), jnp.{out}),",
            f"                          grid=({grid},), in_specs=[spec, spec], out_specs=spec)(x, y)",
        ]
        return lines, self.case(index, dtype, sizes)

    def reduction(self, index):
        """Rows of blocks reduced along the whole (unpadded) last axis."""
        dtype = self.dtype()
        bm = self.rng.choice([8, 16, 32])
        n = self.rng.choice([16, 32, 64, 128])
        sizes = {"M": self.rng.randint(1, 3 * bm)}
        lines = [f"def kernel_{index}(x_ref, y_ref, o_ref, r_ref):",
                 "    x = x_ref[...]", "    y = y_ref[...]"]
        names = ["x", "y"]
        t = self.body(dtype, names, lines, depth=2)
        if is_float(dtype):
            reducer = self.rng.choice(["jnp.sum", "jnp.max", "jnp.min", "jnp.mean"])
        else:
            reducer = self.rng.choice(["jnp.sum", "jnp.max", "jnp.min", "jnp.argmax", "jnp.argmin"])
        red_dtype = "int32" if reducer in ("jnp.argmax", "jnp.argmin") else dtype
        lines += [f"    r = {reducer}({t}, axis=1, keepdims=True)",
                  f"    r_ref[...] = r[:, 0]"]
        if red_dtype == dtype:
            lines.append(f"    o_ref[...] = {t} - r")
        else:
            lines.append(f"    o_ref[...] = {t}")
        s = SHORT[dtype]
        lines += [
            "", "", "@export",
            f"def f_{index}(x: {s}[M, {n}], y: {s}[M, {n}]) -> ({s}[M, {n}], {SHORT[red_dtype]}[M]):",
            f"    spec = pl.BlockSpec(({bm}, {n}), lambda i: (i, 0))",
            f"    return pl.pallas_call(",
            f"        kernel_{index},",
            f"        out_shape=(jax.ShapeDtypeStruct((M, {n}), jnp.{dtype}),",
            f"                   jax.ShapeDtypeStruct((M,), jnp.{red_dtype})),",
            f"        grid=(pl.cdiv(M, {bm}),), in_specs=[spec, spec],",
            f"        out_specs=(spec, pl.BlockSpec(({bm},), lambda i: (i,))))(x, y)",
        ]
        return lines, self.case(index, dtype, sizes)

    def dot(self, index):
        """Blocks of A (BM x K) times B (K x BN), K whole, an epilogue after."""
        dtype = self.rng.choice(["float32", "bfloat16", "float16", "int8", "uint8", "int16"])
        if is_float(dtype):
            acc = "float32"
        else:
            acc = "uint32" if is_unsigned(dtype) and self.rng.random() < 0.7 else "int32"
        # 64-row blocks fit a warpgroup matrix multiply on sm_90a (wgmma,
        # TF32 for f32 at JAX's default precision); smaller ones take the
        # mma.sync or FMA paths.
        bm, bn = self.rng.choice([16, 32, 64]), self.rng.choice([16, 32, 64])
        k = self.rng.choice([16, 32, 64])
        precision = ""
        if dtype == "float32":
            precision = self.rng.choice(["", "", ", precision=lax.Precision.HIGHEST",
                                         ", precision=lax.Precision.HIGH"])
        sizes = {"M": self.rng.randint(1, 3 * bm), "N": self.rng.randint(1, 3 * bn)}
        transposed = self.rng.random() < 0.3
        rhs = "y_ref[...]" if not transposed else "y_ref[...].T"
        epilogue = Expressions(self.rng, acc, ["d"]).expr(1)
        lines = [f"def kernel_{index}(x_ref, y_ref, o_ref):",
                 f"    d = jnp.dot(x_ref[...], {rhs}, preferred_element_type=jnp.{acc}{precision})",
                 f"    o_ref[...] = {epilogue}"]
        s = SHORT[dtype]
        y_shape = f"{k}, N" if not transposed else f"N, {k}"
        y_block = f"({k}, {bn}), lambda i, j: (0, j)" if not transposed else \
                  f"({bn}, {k}), lambda i, j: (j, 0)"
        lines += [
            "", "", "@export",
            f"def f_{index}(x: {s}[M, {k}], y: {s}[{y_shape}]) -> {SHORT[acc]}[M, N]:",
            f"    return pl.pallas_call(",
            f"        kernel_{index},",
            f"        out_shape=jax.ShapeDtypeStruct((M, N), jnp.{acc}),",
            f"        grid=(pl.cdiv(M, {bm}), pl.cdiv(N, {bn})),",
            f"        in_specs=[pl.BlockSpec(({bm}, {k}), lambda i, j: (i, 0)),",
            f"                  pl.BlockSpec({y_block})],",
            f"        out_specs=pl.BlockSpec(({bm}, {bn}), lambda i, j: (i, j)))(x, y)",
        ]
        # Products of K low-precision operands summed in another order.
        return lines, self.case(index, dtype, sizes, float_tolerance="range=-1:1 rtol=0.02 atol=0.05")

    def case(self, index, dtype, sizes, float_tolerance=None):
        text = f"f_{index} " + " ".join(f"{k}={v}" for k, v in sizes.items())
        text += f" seed={self.rng.randrange(1 << 30)}"
        if is_float(dtype) and float_tolerance:
            text += " " + float_tolerance
        elif is_float(dtype):
            text += " range=-2:2"
            if dtype != "float32":
                # A few roundings to a short mantissa in a row.
                text += " rtol=0.05 atol=0.1"
            else:
                text += " rtol=1e-4 atol=1e-4"
        else:
            lo, hi = INT_RANGE[dtype]
            text += f" irange={lo}:{hi}"
        return text

    def program(self, count):
        out = ["# Generated by tests/pallas/random_kernels.py; not edited by hand.",
               "import jax", "import jax.numpy as jnp", "from jax import lax",
               "from jax.experimental import pallas as pl", ""]
        cases = []
        for index in range(count):
            kind = self.rng.choices([self.elementwise, self.reduction, self.dot], [5, 2, 2])[0]
            lines, case = kind(index)
            out += ["", ""] + lines
            cases.append(case)
        out.append("")
        out += [f"# DIFF: {c}" for c in cases]
        return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pkc", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--device", default="interpreter",
                        choices=["interpreter", "cuda-sim", "cuda"])
    parser.add_argument("--keep", help="directory that keeps the program when a case fails")
    parser.add_argument("--print", action="store_true", help="print the program and stop")
    parser.add_argument("--reference-cache", metavar="DIR",
                        help="differential.py's cache of JAX's results")
    options = parser.parse_args()
    source = Generator(options.seed).program(options.count)
    if options.print:
        sys.stdout.write(source)
        return 0
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, f"random_{options.seed}.pk")
        with open(path, "w") as f:
            f.write(source)
        cache = ["--reference-cache", options.reference_cache] if options.reference_cache else []
        run = subprocess.run([sys.executable, os.path.join(HERE, "differential.py"),
                              "--pkc", options.pkc, f"--device={options.device}", *cache, path])
        if run.returncode == 1 and options.keep:
            os.makedirs(options.keep, exist_ok=True)
            kept = os.path.join(options.keep, os.path.basename(path))
            shutil.copy(path, kept)
            print(f"kept the program as {kept}")
        return run.returncode


if __name__ == "__main__":
    sys.exit(main())
