#!/usr/bin/env python3
"""Deep, mostly valid .pk programs: seeds for the front end's fuzzer.

Mutation fuzzers rarely grow the structures that break parsers and static
evaluators: expressions nested hundreds deep, long operator chains, blocks
inside blocks, recursion, big literals and containers. Each program here
is valid Python (most are valid pkc programs) built around one such
structure at a depth drawn from the seed, near and past pkc's limits.

Usage: deep_programs.py OUTDIR [--count N] [--seed S]
"""

import argparse
import os
import random

KERNEL = """
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    x = x_ref[...]
{body}


@export
def f(x: f32[N]) -> f32[N]:
    spec = pl.BlockSpec((128,), lambda i: (i,))
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((N,), jnp.float32),
                          grid=(pl.cdiv(N, 128),), in_specs=[spec], out_specs=spec)(x)
"""


def nested_parens(rng, depth):
    return "X = " + "(" * depth + "1" + " + 1)" * depth + "\n"


def operator_chain(rng, depth):
    ops = ["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^", "and", "or", "<", "=="]
    op = rng.choice(ops)
    return "X = (" + f" {op} ".join(str(rng.randrange(1, 4)) for _ in range(depth)) + ")\n"


def conditional_chain(rng, depth):
    return "X = (" + "1 if True else " * depth + "0)\n"


def nested_blocks(rng, depth):
    lines, indent = [], ""
    for i in range(depth):
        kind = rng.choice(["if True:", f"for _i{i} in range(1):", "while False:", f"def _f{i}():"])
        lines.append(indent + kind)
        indent += "    "
    lines.append(indent + "pass")
    return "\n".join(lines) + "\n"


def nested_containers(rng, depth):
    opens = [rng.choice(["[", "(", "{0: "]) for _ in range(depth)]
    closes = {"[": "]", "(": ",)", "{0: ": "}"}
    return "X = " + "".join(opens) + "1" + "".join(closes[o] for o in reversed(opens)) + "\n"


def recursion(rng, depth):
    return (f"def _r(n):\n    return _r(n - 1) + 1 if n else 0\n\nX = _r({depth})\n"
            f"def _t(n):\n    return [_t(n - 1), _t(n - 1)] if n else 0\n\nY = _t({depth // 40})\n")


def big_literals(rng, depth):
    return (f"X = {'9' * depth}\nY = 1e{depth}\nZ = [0] * {10 ** (depth % 12)}\n"
            f"W = 2 ** {depth * 64}\nV = 'a' * {depth}\nU = 1 << {depth}\n")


def nested_lambdas(rng, depth):
    return "X = " + "(lambda a: " * depth + "a" + ")(1)" * depth + "\n"


def kernel_body(rng, depth):
    body, indent = [], "    "
    for i in range(depth // 10 + 1):
        body.append(f"{indent}@pl.when(pl.program_id(0) >= {i})")
        body.append(f"{indent}def _w{i}():")
        indent += "    "
    expr = "x" + "".join(rng.choice([" * 2.0", " + x", " - 1.0", " / 3.0"]) for _ in range(depth))
    body.append(f"{indent}o_ref[...] = {expr}")
    return KERNEL.format(body="\n".join(body))


def kernel_expression(rng, depth):
    expr = "x"
    for _ in range(depth):
        expr = rng.choice([f"jnp.tanh({expr})", f"({expr} + x)", f"jnp.maximum({expr}, 0.0)",
                           f"jnp.where({expr} > 0, {expr}, x)" if depth < 12 else f"-({expr})"])
    return KERNEL.format(body=f"    o_ref[...] = {expr}")


GENERATORS = [nested_parens, operator_chain, conditional_chain, nested_blocks, nested_containers,
              recursion, big_literals, nested_lambdas, kernel_body, kernel_expression]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    os.makedirs(options.outdir, exist_ok=True)
    for i in range(options.count):
        generate = GENERATORS[i % len(GENERATORS)]
        depth = rng.choice([3, 10, 50, 100, 300, 1000, 3000])
        with open(os.path.join(options.outdir, f"deep-{i:03d}-{generate.__name__}.pk"), "w") as f:
            f.write(generate(rng, depth))


if __name__ == "__main__":
    main()
