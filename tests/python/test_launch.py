"""pkc's kernels called from Python over the fake driver.

samples/add.pk (compiled by pkc.compile) and samples/matmul.pk (compiled at
build time, loaded with pkc.load) are
launched on FakeArrays (fakecuda.py), whose memory the fake driver owns;
its twins of the samples' kernels compute the results, which are checked
against NumPy. The fake's launch log shows the grid and the stream; every
DLPack capsule handed to pkc must have been released.
"""

import os
import tempfile
import unittest

import numpy as np

import fakecuda
import tf32
from fakecuda import FakeArray, FakeFramework

import pkc

SAMPLES = os.environ["PK_SAMPLES"]
CUDA_ILLEGAL_ADDRESS = 700


def setUpModule():
    global framework, add_module, matmul_module, cache
    cache = tempfile.TemporaryDirectory()
    os.environ["PKC_CACHE_DIR"] = cache.name
    framework = FakeFramework()
    pkc.register_framework(FakeArray, framework)
    add_module = pkc.compile(os.path.join(SAMPLES, "add.pk"))
    matmul_module = pkc.load(os.path.join(os.environ["PK_SAMPLE_KERNELS"], "matmul.json"))


def tearDownModule():
    cache.cleanup()


def random(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


class Launch(unittest.TestCase):
    def setUp(self):
        fakecuda.reset()
        framework.current_stream = 0
        framework.allocated.clear()

    def tearDown(self):
        self.assertEqual(fakecuda.live_tensors, {}, "a DLPack capsule was not released")

    def test_module(self):
        self.assertEqual(add_module.exports, ["add"])
        self.assertEqual(add_module.target, "cuda:sm_90a")  # fake device 0 is a 9.0
        self.assertEqual(add_module.device, 0)
        k = add_module.add
        self.assertIs(k, add_module["add"])
        self.assertEqual([(p.name, p.role, p.dtype, p.ndim) for p in k.params],
                         [("x", "input", "float32", 1), ("y", "input", "float32", 1),
                          ("out0", "output", "float32", 1)])
        self.assertEqual(k.symbols, [("N", 0, 0)])
        self.assertEqual(repr(k), "<pkc.Kernel add(x: float32[N], y: float32[N]) -> float32[N]>")
        with self.assertRaises(AttributeError) as e:
            add_module.sub
        self.assertIn('no export named "sub" (its exports: add)', str(e.exception))

    def test_outputs_from_the_framework(self):
        n = 5000
        x, y = random(n, 1), random(n, 2)
        fx, fy = FakeArray.of(x), FakeArray.of(y)
        framework.current_stream = fakecuda.new_stream()
        out = add_module.add(fx, fy)
        self.assertIsInstance(out, FakeArray)
        self.assertEqual(framework.allocated, [((n,), "float32", 0)])
        np.testing.assert_array_equal(out.numpy(), x + y)
        [launch] = fakecuda.launches()
        self.assertEqual(launch.kernel, b"add_add_kernel")
        self.assertEqual(list(launch.grid), [5, 1, 1])  # cdiv(5000, 1024)
        self.assertEqual(launch.stream, framework.current_stream)
        self.assertEqual(launch.params[3], n)
        # The producers were told which stream the launch uses.
        self.assertEqual(fx.dlpack_streams, [framework.current_stream])
        self.assertEqual(out.dlpack_streams, [framework.current_stream])

    def test_legacy_default_stream(self):
        x = FakeArray.of(random(10, 3))
        add_module.add(x, x)
        [launch] = fakecuda.launches()
        self.assertIsNone(launch.stream)
        self.assertEqual(x.dlpack_streams, [1, 1])  # DLPack's name for the legacy stream

    def test_out_and_stream(self):
        x, y = random(3000, 4), random(3000, 5)
        o = FakeArray((3000,))
        stream = fakecuda.new_stream()
        result = add_module.add(FakeArray.of(x), FakeArray.of(y), out=o, stream=stream)
        self.assertIs(result, o)
        self.assertEqual(framework.allocated, [])
        np.testing.assert_array_equal(o.numpy(), x + y)
        self.assertEqual(fakecuda.launches()[0].stream, stream)
        (same,) = add_module.add(FakeArray.of(x), FakeArray.of(y), out=(o,))
        self.assertIs(same, o)

    def test_symbols_from_two_inputs(self):
        m, k, n = 70, 256, 130
        x, y = random((m, k), 6), random((k, n), 7)
        out = matmul_module.matmul_scaled(FakeArray.of(x), FakeArray.of(y))
        self.assertEqual(out.shape, (m, n))
        np.testing.assert_allclose(out.numpy(), tf32.product(x, y) * 0.5, rtol=1e-5, atol=1e-4)
        [launch] = fakecuda.launches()
        self.assertEqual(list(launch.grid), [3, 2, 1])  # (cdiv(N, 64), cdiv(M, 64))
        k_ = matmul_module.matmul_scaled
        self.assertEqual(k_.output_shapes((m, k), (k, n)), [(m, n)])
        self.assertEqual(k_.check([(m, k), (k, n)], ["float32", "float32"]), [(m, n)])

    def test_launch_with_every_array(self):
        x = random(100, 8)
        o = FakeArray((100,))
        add_module.add.launch(FakeArray.of(x), FakeArray.of(x), o)
        np.testing.assert_array_equal(o.numpy(), x + x)

    def test_empty_arrays(self):
        out = add_module.add(FakeArray((0,)), FakeArray((0,)))
        self.assertEqual(out.shape, (0,))
        self.assertEqual(fakecuda.launches(), [])  # a zero grid is not launched

    def test_other_device(self):
        # Fake device 1 is an 8.6: the sm_80 cubin runs there.
        m1 = pkc.load(matmul_module.key, device=1)
        self.assertEqual(m1.target, "cuda:sm_80")
        self.assertEqual(m1.device, 1)
        x, y = random((64, 256), 9), random((256, 64), 10)
        out = m1.matmul_scaled(FakeArray.of(x, device=1), FakeArray.of(y, device=1))
        self.assertEqual(out.device_id, 1)
        np.testing.assert_allclose(out.numpy(), tf32.product(x, y) * 0.5, rtol=1e-5, atol=1e-4)
        with self.assertRaises(pkc.ArgumentError) as e:
            m1.matmul_scaled(FakeArray.of(x, device=0), FakeArray.of(y, device=1))
        self.assertEqual(e.exception.status, "PK_ERROR_DEVICE_MISMATCH")
        self.assertIn("is on CUDA device 0, but the module is loaded on device 1", str(e.exception))

    def test_load_from_memory(self):
        directory = os.path.dirname(add_module.key)
        with open(os.path.join(directory, "add.json"), "rb") as f:
            manifest = f.read()
        artifacts = {}
        for name in os.listdir(directory):
            if name.endswith(".cubin"):
                with open(os.path.join(directory, name), "rb") as f:
                    artifacts[name] = f.read()
        m = pkc.load(manifest, artifacts=artifacts)
        self.assertTrue(m.key.startswith("sha256:"))
        x = random(2048, 11)
        np.testing.assert_array_equal(m.add(FakeArray.of(x), FakeArray.of(x)).numpy(), x + x)
        with self.assertRaises(pkc.LoadError) as e:
            pkc.load(manifest)
        self.assertEqual(e.exception.status, "PK_ERROR_IO")

    def test_no_device(self):
        m = pkc.load(matmul_module.key, no_device=True, compute_capability=86)
        self.assertEqual(m.target, "cuda:sm_80")
        self.assertEqual(m.device, -1)
        k = m.matmul_scaled
        self.assertEqual(k.check([(5, 256), (256, 7)], ["float32", "float32"]), [(5, 7)])
        with self.assertRaises(pkc.DeviceError) as e:
            k(FakeArray((5, 256)), FakeArray((256, 7)))
        self.assertEqual(e.exception.status, "PK_ERROR_NO_DEVICE")


class Errors(unittest.TestCase):
    """The runtime's checks as exceptions; nothing is launched, every
    capsule is released, and the interpreter carries on."""

    def setUp(self):
        fakecuda.reset()
        framework.current_stream = 0

    def tearDown(self):
        self.assertEqual(fakecuda.live_tensors, {}, "a DLPack capsule was not released")
        self.assertEqual(fakecuda.launches(), [])

    def expect(self, status, message, call):
        with self.assertRaises(pkc.Error) as e:
            call()
        self.assertEqual(e.exception.status, status, str(e.exception))
        self.assertIn(message, str(e.exception))
        return e.exception

    def test_argument_count(self):
        x = FakeArray((10,))
        e = self.expect("PK_ERROR_ARGUMENT_COUNT", "add takes 2 array(s) (x, y), got 1",
                        lambda: add_module.add(x))
        self.assertIsInstance(e, ValueError)
        self.expect("PK_ERROR_ARGUMENT_COUNT", "add has 1 output(s), but out= gives 2",
                    lambda: add_module.add(x, x, out=(x, x)))

    def test_dtype(self):
        self.expect("PK_ERROR_DTYPE", 'add: argument "y" (param 1) is float64, expected float32',
                    lambda: add_module.add(FakeArray((10,)), FakeArray((10,), "float64")))

    def test_shape(self):
        self.expect("PK_ERROR_SHAPE", 'add: argument "y" (param 1) has shape [9], expected [N] = '
                    '[10] with N = 10 (dimension 0 of "x")',
                    lambda: add_module.add(FakeArray((10,)), FakeArray((9,))))

    def test_rank(self):
        self.expect("PK_ERROR_RANK", 'argument "x" (param 0) has 2 dimension(s)',
                    lambda: add_module.add(FakeArray((2, 5)), FakeArray((10,))))

    def test_layout(self):
        x = FakeArray((8, 256), strides=(1, 8))
        self.expect("PK_ERROR_LAYOUT", "the kernels need a dense row-major array",
                    lambda: matmul_module.matmul_scaled(x, FakeArray((256, 8))))

    def test_alignment(self):
        x = FakeArray((16,), byte_offset=4)
        self.expect("PK_ERROR_ALIGNMENT", "which is not 16-byte aligned",
                    lambda: add_module.add(x, FakeArray((16,))))

    def test_aliasing(self):
        x = FakeArray((16,))
        self.expect("PK_ERROR_ALIASING", 'output "out0" (param 2) overlaps argument "x"',
                    lambda: add_module.add(x, FakeArray((16,)), out=x))

    def test_host_memory(self):
        # NumPy speaks DLPack too, from the CPU.
        x = np.zeros(16, np.float32)
        self.expect("PK_ERROR_DEVICE_MISMATCH", "is not in CUDA device memory",
                    lambda: add_module.add(x, x, out=x.copy()))

    def test_not_an_array(self):
        self.expect("PK_ERROR_INVALID_ARGUMENT",
                    'add: argument "y" (param 1) is a list, which does not speak DLPack',
                    lambda: add_module.add(FakeArray((4,)), [1.0, 2.0, 3.0, 4.0]))

    def test_unknown_framework(self):
        class Other(FakeArray):
            pass
        pkc.register_framework(Other, None)
        try:
            a = Other((4,))
            e = self.expect("PK_ERROR_INVALID_ARGUMENT",
                            "add: pkc does not know how to allocate outputs like a ",
                            lambda: add_module.add(a, a))
            self.assertIn("Other; pass them with out=", str(e))
            # With out= it runs, on the legacy default stream.
            o = Other((4,))
            self.assertIs(add_module.add(a, a, out=o), o)
            self.assertEqual(len(fakecuda.launches()), 1)
            fakecuda.reset()
        finally:
            pkc.register_framework(Other, framework)

    def test_driver_errors(self):
        x = FakeArray.of(random(10, 12))
        fakecuda.fail_next("cuLaunchKernel", CUDA_ILLEGAL_ADDRESS)
        e = self.expect("PK_ERROR_CUDA", "CUDA_ERROR_ILLEGAL_ADDRESS",
                        lambda: add_module.add(x, x))
        self.assertIsInstance(e, pkc.DeviceError)
        # A kernel the fake has no twin for: the driver refuses the launch.
        self.expect("PK_ERROR_CUDA", "matmul_gelu_matmul_kernel",
                    lambda: matmul_module.matmul_gelu(FakeArray((64, 256)), FakeArray((256, 64))))
        # Afterwards the module works as before.
        np.testing.assert_array_equal(add_module.add(x, x).numpy(), x.numpy() * 2)
        fakecuda.reset()

    def test_missing_manifest(self):
        e = self.expect("PK_ERROR_IO", "cannot read manifest",
                        lambda: pkc.load("/nonexistent/add.json"))
        self.assertIsInstance(e, pkc.LoadError)


if __name__ == "__main__":
    unittest.main()
