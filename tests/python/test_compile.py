"""pkc.compile: running the compiler, its cache, its errors.

The compiler is this build's pkc; modules load on the fake driver. Whether
a compile ran is read from the cache entry's files (a rebuilt entry is a
new directory), not from pkc.compile's own bookkeeping.
"""

import os
import shutil
import tempfile
import textwrap
import unittest


from fakecuda import FakeArray, FakeFramework

import pkc

SAMPLES = os.environ["PK_SAMPLES"]

ADD_TWICE = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from kernels.common import BLOCK

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + x_ref[...]

    @export
    def twice(x: f32[N]) -> f32[N]:
        spec = pl.BlockSpec((BLOCK,), lambda i: (i,))
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((N,), jnp.float32),
                              grid=(pl.cdiv(N, BLOCK),), in_specs=[spec], out_specs=spec)(x)
    """)


def setUpModule():
    pkc.register_framework(FakeArray, FakeFramework())


class Compile(unittest.TestCase):
    def setUp(self):
        self.cache = tempfile.TemporaryDirectory()
        os.environ["PKC_CACHE_DIR"] = self.cache.name
        self.work = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.cache.cleanup()
        self.work.cleanup()

    def entries(self):
        """Cache entries (their inode numbers tell a rebuilt one from a kept one)."""
        found = {}
        for shard in os.listdir(self.cache.name):
            path = os.path.join(self.cache.name, shard)
            if len(shard) == 2 and os.path.isdir(path):
                for entry in os.listdir(path):
                    found[entry] = os.stat(os.path.join(path, entry)).st_ino
        return found

    def test_cached_until_an_input_changes(self):
        shutil.copy(os.path.join(SAMPLES, "add.pk"), self.work.name)
        source = os.path.join(self.work.name, "add.pk")
        m = pkc.compile(source, target="cuda:sm_90a")
        self.assertEqual(m.target, "cuda:sm_90a")
        first = self.entries()
        self.assertEqual(len(first), 1)
        pkc.compile(source, target="cuda:sm_90a")
        self.assertEqual(self.entries(), first)  # a hit: nothing rebuilt
        # Other definitions, other targets: other entries.
        pkc.compile(source, target="cuda:sm_90a", defines={"BLOCK": 512})
        pkc.compile(source, target="cuda:sm_80", device=1)  # fake device 1 is an 8.6
        self.assertEqual(len(self.entries()), 3)
        # Editing the source: a new key.
        with open(source, "a") as f:
            f.write("\n# an edit\n")
        pkc.compile(source, target="cuda:sm_90a")
        self.assertEqual(len(self.entries()), 4)

    def test_an_edited_import_recompiles(self):
        os.makedirs(os.path.join(self.work.name, "kernels"))
        common = os.path.join(self.work.name, "kernels", "common.pk")
        with open(common, "w") as f:
            f.write("BLOCK = 256\n")
        source = os.path.join(self.work.name, "twice.pk")
        with open(source, "w") as f:
            f.write(ADD_TWICE)
        m = pkc.compile(source, target="cuda:sm_90a")
        before = self.entries()
        pkc.compile(source, target="cuda:sm_90a")
        self.assertEqual(self.entries(), before)
        with open(common, "w") as f:
            f.write("BLOCK = 128\n")
        m = pkc.compile(source, target="cuda:sm_90a")
        after = self.entries()
        self.assertEqual(after.keys(), before.keys())  # the same key...
        self.assertNotEqual(after, before)             # ...rebuilt
        # The program the import now describes: blocks of 128.
        [artifact] = m.manifest.data["artifacts"]
        [step] = artifact["programs"][0]["steps"]
        self.assertEqual(step["launch"]["grid"][0], ["ceildiv", "N", 128])

    def test_source_text(self):
        os.makedirs(os.path.join(self.work.name, "kernels"))
        with open(os.path.join(self.work.name, "kernels", "common.pk"), "w") as f:
            f.write("BLOCK = 1024\n")
        cwd = os.getcwd()
        os.chdir(self.work.name)  # source text imports from the working directory
        try:
            m = pkc.compile(ADD_TWICE, target="cuda:sm_90a", name="twice")
        finally:
            os.chdir(cwd)
        self.assertEqual(m.exports, ["twice"])
        self.assertTrue(m.key.endswith("/twice.json"))

    def test_default_target_follows_the_device(self):
        self.assertEqual(pkc.default_target(0), "cuda:sm_90a")  # fake device 0: 9.0
        self.assertEqual(pkc.default_target(1), "cuda:sm_86")   # fake device 1: 8.6
        m = pkc.compile(os.path.join(SAMPLES, "add.pk"), device=1)
        self.assertEqual(m.target, "cuda:sm_86")
        self.assertEqual(m.device, 1)

    def test_definitions(self):
        m = pkc.compile(os.path.join(SAMPLES, "add.pk"), target="cuda:sm_90a",
                        defines={"N": 4096})
        # N is static now: the export takes exactly 4096 elements.
        self.assertEqual(m.add.symbols, [])
        self.assertEqual(m.add.output_shapes((4096,), (4096,)), [(4096,)])
        with self.assertRaises(pkc.ArgumentError):
            m.add.check([(4095,), (4095,)], ["float32", "float32"])

    def test_errors_carry_the_diagnostics(self):
        bad = os.path.join(self.work.name, "bad.pk")
        with open(bad, "w") as f:
            f.write(ADD_TWICE.replace("from kernels.common import BLOCK", "BLOCK = 100")
                    .replace("x_ref[...] + x_ref[...]", "x_ref[...] + undefined_name"))
        with self.assertRaises(pkc.CompileError) as e:
            pkc.compile(bad, target="cuda:sm_90a")
        message = str(e.exception)
        self.assertIn(f"{bad}:7:", message)
        self.assertIn("error:", message)
        self.assertIn("undefined_name", message)
        self.assertEqual(self.entries(), {})  # nothing cached
        with self.assertRaises(pkc.CompileError) as e:
            pkc.compile(os.path.join(SAMPLES, "add.pk"), target="cuda:sm_12")
        self.assertIn("sm_12", str(e.exception))
        with self.assertRaises(pkc.CompileError) as e:
            pkc.compile(os.path.join(self.work.name, "missing.pk"))
        self.assertIn("cannot read", str(e.exception))

    def test_tpu_target(self):
        import pkc.jax
        m = pkc.compile(os.path.join(SAMPLES, "add.pk"), target="tpu", defines={"N": 8192})
        self.assertIsInstance(m, pkc.jax.TpuModule)
        self.assertEqual(m.exports, ["add"])
        self.assertTrue(callable(m.add))


if __name__ == "__main__":
    unittest.main()
