"""pkc exports inside jax.jit, as the XLA FFI custom call pkc_launch.

On a GPU, XLA runs the call on its stream with device buffers. Here XLA's
CPU backend runs the same handler (registered for the CPU by
pkc.jax._enable_cpu_for_tests) and hands it host buffers, which the fake
driver takes for device memory (FAKE_CUDA_HOST_MEMORY): registration,
lowering, output shapes from the manifest, the handler's decoding, the
launch and its errors all run, and results are checked against NumPy.
How the call lowers for CUDA is checked with jax.export(platforms=["cuda"]).
"""

import os
import re
import tempfile
import unittest

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("SKIPPED: JAX is not installed")
    raise SystemExit(77)

import fakecuda
import tf32

import pkc
import pkc.jax

SAMPLES = os.environ["PK_SAMPLES"]


def setUpModule():
    global cache, add_module, matmul_module
    if not pkc._pkc.has_xla_ffi:
        print("SKIPPED: the package was built without jaxlib's FFI headers")
        raise SystemExit(77)
    cache = tempfile.TemporaryDirectory()
    os.environ["PKC_CACHE_DIR"] = cache.name
    pkc.jax._enable_cpu_for_tests()
    add_module = pkc.compile(os.path.join(SAMPLES, "add.pk"), target="cuda:sm_90a")
    matmul_module = pkc.load(os.path.join(os.environ["PK_SAMPLE_KERNELS"], "matmul.json"))


def tearDownModule():
    cache.cleanup()


def random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class JaxFfi(unittest.TestCase):
    def setUp(self):
        fakecuda.reset()

    def test_inside_jit(self):
        add = pkc.jax.kernel(add_module.add)
        x, y = random(5000, 1), random(5000, 2)
        result = jax.jit(lambda x, y: add(x, y) * 2)(x, y)
        np.testing.assert_array_equal(np.asarray(result), (x + y) * 2)
        [launch] = fakecuda.launches()
        self.assertEqual(launch.kernel, b"add_add_kernel")
        self.assertEqual(list(launch.grid), [5, 1, 1])
        self.assertEqual(launch.params[3], 5000)

    def test_shapes_from_the_manifest(self):
        matmul = pkc.jax.kernel(matmul_module.matmul_scaled)
        x, y = random((70, 256), 3), random((256, 130), 4)
        out = jax.eval_shape(matmul, x, y)
        self.assertEqual((out.shape, out.dtype), ((70, 130), jnp.float32))
        result = jax.jit(matmul)(x, y)
        np.testing.assert_allclose(np.asarray(result), tf32.product(x, y) * 0.5,
                                   rtol=1e-5, atol=1e-4)

    def test_eager_call_on_jax_arrays(self):
        x = jnp.asarray(random(300, 5))
        out = add_module.add(x, x)
        self.assertIsInstance(out, jax.Array)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2)
        with self.assertRaises(pkc.ArgumentError) as e:
            add_module.add(x, x, out=x)
        self.assertIn("JAX arrays are immutable", str(e.exception))

    def test_lowering(self):
        add = pkc.jax.kernel(add_module.add)
        spec = jax.ShapeDtypeStruct((4096,), jnp.float32)
        text = jax.jit(add).lower(spec, spec).as_text()
        call = re.search(r"stablehlo\.custom_call @pkc_launch\((.*)", text)
        self.assertIsNotNone(call, text)
        line = call.group(0)
        # XLA's typed FFI: the attributes are a dictionary.
        self.assertIn(f'mhlo.backend_config = {{export = "add", module = "{add_module.key}"}}',
                      line)
        self.assertIn(": (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>", line)
        # For CUDA, from this CPU-only machine. jax.export refuses custom
        # calls it cannot promise to keep stable unless told otherwise.
        exported = jax.export.export(
            jax.jit(add), platforms=["cuda"],
            disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(pkc.jax.FFI_TARGET)])(
                spec, spec)
        self.assertIn("stablehlo.custom_call @pkc_launch", exported.mlir_module())

    def test_checked_at_trace_time(self):
        add = pkc.jax.kernel(add_module.add)
        f32, f64 = jax.ShapeDtypeStruct((8,), jnp.float32), jax.ShapeDtypeStruct((8,), jnp.int32)
        with self.assertRaises(pkc.ArgumentError) as e:
            jax.jit(add).lower(f32, f64)
        self.assertEqual(e.exception.status, "PK_ERROR_DTYPE")
        self.assertIn('argument "y" (param 1) is int32, expected float32', str(e.exception))
        with self.assertRaises(pkc.ArgumentError) as e:
            jax.jit(add).lower(f32, jax.ShapeDtypeStruct((9,), jnp.float32))
        self.assertEqual(e.exception.status, "PK_ERROR_SHAPE")
        with self.assertRaises(pkc.ArgumentError) as e:
            jax.jit(add).lower(f32)
        self.assertEqual(e.exception.status, "PK_ERROR_ARGUMENT_COUNT")
        self.assertEqual(fakecuda.launches(), [])

    def test_launch_errors_surface_from_xla(self):
        add = jax.jit(pkc.jax.kernel(add_module.add))
        x = random(64, 6)
        fakecuda.fail_next("cuLaunchKernel", 700)
        with self.assertRaises(Exception) as e:
            np.asarray(add(x, x))
        self.assertIn("pkc: cuLaunchKernel of kernel", str(e.exception))
        self.assertIn("CUDA_ERROR_ILLEGAL_ADDRESS", str(e.exception))
        # The next run works.
        np.testing.assert_array_equal(np.asarray(add(x, x)), x + x)

    def test_module_from_memory(self):
        directory = os.path.dirname(add_module.key)
        with open(add_module.key, "rb") as f:
            manifest = f.read()
        artifacts = {}
        for name in os.listdir(directory):
            if name.endswith(".cubin"):
                with open(os.path.join(directory, name), "rb") as f:
                    artifacts[name] = f.read()
        m = pkc.load(manifest, artifacts=artifacts)
        x = random(100, 7)
        out = jax.jit(pkc.jax.kernel(m.add))(x, x)
        np.testing.assert_array_equal(np.asarray(out), x + x)

    def test_unknown_module(self):
        # A custom call naming a module no one registered, not a path.
        call = jax.ffi.ffi_call(pkc.jax.FFI_TARGET, jax.ShapeDtypeStruct((4,), jnp.float32))
        with self.assertRaises(Exception) as e:
            np.asarray(jax.jit(lambda x: call(x, x, module="sha256:nothing", export="add"))(
                np.zeros(4, np.float32)))
        self.assertIn('no module "sha256:nothing" was registered', str(e.exception))


if __name__ == "__main__":
    unittest.main()
