"""pkc.jax.tpu_call against Pallas's own lowering of the same kernels.

There is no TPU here: both sides are lowered for one with
jax.export(..., platforms=["tpu"]) on the CPU. For each case the .pk file
runs through pkc (--target=tpu, then tpu_call on its manifest) and, as
Python, through Pallas (tests/pallas/pk_prelude.py, as
tests/tpu/compare_jax.py does). Every tpu_custom_call of the two exports
must agree: operand and result types, layouts, aliases, side effects,
kernel name and metadata, and the backend config (cost estimate, VMEM
limit, flags, ...); the Mosaic bodies must agree as compare_jax.py
compares them (after canonicalize and cse). The values around the calls
(bools stored as int32) must agree too.
"""

import base64
import json
import os
import sys
import tempfile
import types
import unittest

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError:
    print("SKIPPED: JAX is not installed")
    raise SystemExit(77)

SOURCE = os.environ["PK_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SOURCE, "tests", "tpu"))
import compare_jax  # noqa: E402  (also prepares JAX to lower Pallas for TPU on the CPU)
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir.passmanager import PassManager  # noqa: E402

import pkc  # noqa: E402
import pkc.jax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (file, case as compare_jax.py writes it)
CASES = [
    ("samples/add.pk", "add N=8192"),
    ("samples/add.pk", "add N=3072 -D BLOCK=512"),
    ("samples/softmax.pk", "softmax ROWS=64"),
    ("samples/matmul.pk", "matmul_gelu M=128 N=256 -D BLOCK_N=128"),
    ("tests/tpu/kernels/operands.pk", "scaled"),       # SMEM input, two outputs
    ("tests/tpu/kernels/operands.pk", "bump_twice"),   # two calls, aliases, a temporary
    ("tests/tpu/kernels/operands.pk", "with_any"),     # an ANY operand
    ("tests/tpu/kernels/operands.pk", "costed"),       # a cost estimate
    ("tests/tpu/kernels/memory.pk", "bools"),          # bool arrays, stored as int32
    ("tests/python/kernels/tpu_params.pk", "scaled_rows R=64"),  # a VMEM limit
]


def setUpModule():
    global cache, tools
    cache = tempfile.TemporaryDirectory()
    os.environ["PKC_CACHE_DIR"] = cache.name
    tools = types.SimpleNamespace(pkc=pkc.find_pkc(), pk_opt=os.environ["PK_OPT"])


def tearDownModule():
    cache.cleanup()


def custom_calls(mlir_text):
    """The tpu_custom_calls of an exported module, each as a dict of its
    parts, and the ops around them (names only, in order)."""
    ctx = jax_mlir.make_ir_context()
    calls, ops = [], []
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(mlir_text)

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        inner = inner.operation
                        if inner.name == "stablehlo.custom_call":
                            attrs = {a: str(inner.attributes[a]) for a in inner.attributes}
                            if "tpu_custom_call" in attrs.get("call_target_name", ""):
                                calls.append(parts(inner, attrs))
                        elif inner.name not in ("func.func", "func.return", "func.call"):
                            ops.append(inner.name)
                        walk(inner)

        walk(module.operation)
    return calls, ops


def parts(op, attrs):
    config = json.loads(ir.StringAttr(op.attributes["backend_config"]).value)
    body = base64.b64decode(config["custom_call_config"].pop("body"))
    ctx = compare_jax.new_context()
    with ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        mosaic = ir.Module.parse(body)
        PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(mosaic.operation)
        mosaic_text = str(mosaic)
    del attrs["backend_config"]
    return {
        "operands": [str(v.type) for v in op.operands],
        "results": [str(r.type) for r in op.results],
        "attributes": attrs,
        "config": config,
        "mosaic": mosaic_text,
    }


class TpuCall(unittest.TestCase):
    def compile_pkc(self, case, workdir):
        """pkc's TPU artifact for the case's export alone, as compare_jax.py
        compiles it, loaded by pkc.compile."""
        source = compare_jax.one_export(tools, case, compare_jax.pkc_defines(case), workdir)
        return pkc.compile(source, target="tpu")

    def test_cases_match_pallas(self):
        for file, text in CASES:
            with self.subTest(case=f"{file}: {text}"), tempfile.TemporaryDirectory() as workdir:
                case = compare_jax.Case(os.path.join(SOURCE, file), text)
                module = self.compile_pkc(case, workdir)
                fn = module.kernel(case.export)
                args = self.arguments(case)
                ours = jax.export.export(jax.jit(fn), platforms=["tpu"])(*args)
                pallas_module = compare_jax.pk_prelude.load_pk(case.path, case.defines)
                pallas_module.globals.update(case.sizes)
                theirs = jax.export.export(jax.jit(pallas_module.exports[case.export]),
                                           platforms=["tpu"])(*args)
                self.assertEqual([(a.shape, a.dtype) for a in ours.out_avals],
                                 [(a.shape, a.dtype) for a in theirs.out_avals])
                our_calls, our_ops = custom_calls(ours.mlir_module())
                their_calls, their_ops = custom_calls(theirs.mlir_module())
                self.assertEqual(len(our_calls), len(their_calls))
                self.assertGreater(len(our_calls), 0)
                self.assertEqual(our_ops, their_ops)
                for mine, pallas in zip(our_calls, their_calls):
                    for part in ("operands", "results", "attributes", "config"):
                        self.assertEqual(mine[part], pallas[part], part)
                    problems = compare_jax.compare_kernel(mine["mosaic"], pallas["mosaic"])
                    self.assertEqual({k: v for k, v in problems.items() if v}, {})

    def arguments(self, case):
        module = compare_jax.pk_prelude.load_pk(case.path, case.defines)
        args = []
        for array_type in module.signature(case.export):
            shape = tuple(case.sizes[d.name] if isinstance(d, compare_jax.pk_prelude.Symbol)
                          else int(d) for d in array_type.dims)
            args.append(jax.ShapeDtypeStruct(shape, array_type.dtype))
        return args

    def test_symbolic_sizes(self):
        # One artifact for every N: the grid size and the symbol table are
        # operands, computed from the arrays' shapes at trace time.
        m = pkc.compile(os.path.join(SOURCE, "samples", "add.pk"), target="tpu")
        for n in (8192, 3072):
            spec = jax.ShapeDtypeStruct((n,), jnp.float32)
            exported = jax.export.export(jax.jit(m.add), platforms=["tpu"])(spec, spec)
            [call], _ = custom_calls(exported.mlir_module())
            self.assertEqual(call["results"], [f"tensor<{n}xf32>"])
            self.assertEqual(call["operands"][-2:], [f"tensor<{n}xf32>"] * 2)
            self.assertEqual(call["attributes"]["kernel_name"], '"add_kernel"')
            # The operands ahead of the arrays are the int32 sizes.
            self.assertTrue(all("i32" in t for t in call["operands"][:-2]), call["operands"])
            self.assertGreater(len(call["operands"]), 2)

    def test_errors(self):
        os.environ["PKC_CACHE_DIR"] = self.enterContext(tempfile.TemporaryDirectory())
        m = pkc.compile(os.path.join(SOURCE, "samples", "add.pk"), target="tpu",
                        defines={"N": 8192})
        f32 = jax.ShapeDtypeStruct((8192,), jnp.float32)
        with self.assertRaises(pkc.ArgumentError) as e:
            jax.eval_shape(m.add, f32, jax.ShapeDtypeStruct((8192,), jnp.int32))
        self.assertEqual(e.exception.status, "PK_ERROR_DTYPE")
        with self.assertRaises(pkc.ArgumentError) as e:
            jax.eval_shape(m.add, f32, jax.ShapeDtypeStruct((4096,), jnp.float32))
        self.assertEqual(e.exception.status, "PK_ERROR_SHAPE")
        self.assertIn("expected [8192]", str(e.exception))
        with self.assertRaises(pkc.ArgumentError):
            jax.eval_shape(m.add, f32)
        with self.assertRaises(AttributeError):
            m.sub
        # A stale artifact is refused, as the runtime refuses stale cubins.
        artifact = m.manifest.artifact("tpu")
        path = os.path.join(m.manifest.directory, artifact["file"])
        with open(path, "a") as f:
            f.write("// edited\n")
        with self.assertRaises(ValueError) as e:
            pkc.jax.tpu_call(m.manifest, "add")
        self.assertIn("differs from the manifest's size and SHA-256", str(e.exception))
        # A manifest without a TPU artifact says so.
        cuda = pkc.compile(os.path.join(SOURCE, "samples", "add.pk"), target="cuda:sm_90a")
        with self.assertRaises(LookupError) as e:
            pkc.jax.tpu_call(cuda.key, "add")
        self.assertIn("has no tpu artifact", str(e.exception))


if __name__ == "__main__":
    unittest.main()
