"""pkc kernels called from CuPy and from JAX on a real GPU.

Needs a GPU and CuPy or JAX with CUDA (label gpu; each part skips alone,
the file exits 77 when neither runs). Results are checked against the
framework's own operations.
"""

import os
import tempfile
import unittest

import numpy as np

import pkc
from samplekernels import sample_module
import tf32


try:
    import cupy
    has_cupy = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    has_cupy = False
try:
    import jax
    import jax.numpy as jnp
    has_jax_gpu = any(d.platform == "gpu" for d in jax.devices())
except Exception:
    has_jax_gpu = False
if not has_cupy and not has_jax_gpu:
    print("SKIPPED: neither CuPy nor JAX sees a CUDA GPU")
    raise SystemExit(77)


def setUpModule():
    global cache, add_module, matmul_module
    cache = tempfile.TemporaryDirectory()
    os.environ["PKC_CACHE_DIR"] = cache.name
    add_module = sample_module("add")
    matmul_module = pkc.load(os.path.join(os.environ["PK_SAMPLE_KERNELS"], "matmul.json"))


def tearDownModule():
    cache.cleanup()


@unittest.skipUnless(has_cupy, "no CuPy with a GPU")
class CuPy(unittest.TestCase):
    def test_add_and_matmul(self):
        x = cupy.random.standard_normal(5000, dtype=cupy.float32)
        y = cupy.random.standard_normal(5000, dtype=cupy.float32)
        out = add_module.add(x, y)
        self.assertIsInstance(out, cupy.ndarray)
        cupy.testing.assert_array_equal(out, x + y)
        a = cupy.random.standard_normal((100, 256), dtype=cupy.float32)
        b = cupy.random.standard_normal((256, 70), dtype=cupy.float32)
        cupy.testing.assert_allclose(matmul_module.matmul_scaled(a, b),
                                     tf32.product(cupy.asnumpy(a), cupy.asnumpy(b)) * 0.5,
                                     rtol=1e-5, atol=1e-4)

    def test_stream(self):
        x = cupy.arange(4096, dtype=cupy.float32)
        with cupy.cuda.Stream() as s:
            out = add_module.add(x, x)
            s.synchronize()
        cupy.testing.assert_array_equal(out, 2 * x)


@unittest.skipUnless(has_jax_gpu, "no JAX with a GPU")
class Jax(unittest.TestCase):
    def test_jit_and_eager(self):
        import pkc.jax
        add = pkc.jax.kernel(add_module.add)
        x = jax.random.normal(jax.random.key(0), (5000,), jnp.float32)
        y = jax.random.normal(jax.random.key(1), (5000,), jnp.float32)
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: add(a, b) * 2)(x, y)),
                                      np.asarray((x + y) * 2))
        np.testing.assert_array_equal(np.asarray(add_module.add(x, y)), np.asarray(x + y))
        matmul = pkc.jax.kernel(matmul_module.matmul_scaled)
        a = jax.random.normal(jax.random.key(2), (100, 256), jnp.float32)
        b = jax.random.normal(jax.random.key(3), (256, 70), jnp.float32)
        np.testing.assert_allclose(np.asarray(jax.jit(matmul)(a, b)),
                                   tf32.product(np.asarray(a), np.asarray(b)) * 0.5,
                                   rtol=1e-5, atol=1e-4)


if __name__ == "__main__":
    unittest.main()
