"""pkc kernels called from PyTorch on a real GPU, checked against PyTorch.

Needs torch with CUDA and a GPU (label gpu; exits 77 otherwise): eager
calls on torch tensors (outputs from torch, on torch's current stream),
out=, other streams, errors, and the torch.library custom op eagerly,
through torch.library.opcheck, and inside torch.compile graphs with
static and dynamic shapes.
"""

import os
import tempfile
import unittest

try:
    import torch
except ImportError:
    print("SKIPPED: PyTorch is not installed")
    raise SystemExit(77)
if not torch.cuda.is_available():
    print("SKIPPED: no CUDA GPU for PyTorch")
    raise SystemExit(77)

import pkc
import pkc.torch
from samplekernels import sample_module
import tf32



def setUpModule():
    global cache, add_module, matmul_module, softmax_module, layernorm_module
    cache = tempfile.TemporaryDirectory()
    os.environ["PKC_CACHE_DIR"] = cache.name
    torch.backends.cuda.matmul.allow_tf32 = False  # an exact-enough float32 reference
    add_module = sample_module("add")
    matmul_module = pkc.load(os.path.join(os.environ["PK_SAMPLE_KERNELS"], "matmul.json"))
    softmax_module = sample_module("softmax")
    layernorm_module = sample_module("layernorm")


def tearDownModule():
    cache.cleanup()


def randn(*shape, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g)


class Eager(unittest.TestCase):
    def test_add(self):
        for n in (1, 1000, 1 << 20):
            x, y = randn(n, seed=1), randn(n, seed=2)
            out = add_module.add(x, y)
            self.assertIsInstance(out, torch.Tensor)
            self.assertEqual((out.device, out.dtype, out.shape), (x.device, x.dtype, x.shape))
            torch.testing.assert_close(out, x + y, rtol=0, atol=0)

    def test_matmul_softmax_layernorm(self):
        x, y = randn(200, 256, seed=3), randn(256, 130, seed=4)
        # The samples' f32 dots are at JAX's default precision: on the GPU
        # they multiply operands truncated to TF32 (docs/cuda.md).
        product = torch.from_numpy(tf32.product(x.cpu().numpy(), y.cpu().numpy())).cuda()
        torch.testing.assert_close(matmul_module.matmul_scaled(x, y), product * 0.5,
                                   rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(matmul_module.matmul_gelu(x, y),
                                   torch.nn.functional.gelu(product, approximate="tanh"),
                                   rtol=1e-4, atol=1e-4)
        s = randn(77, 256, seed=5)
        torch.testing.assert_close(softmax_module.softmax(s), torch.softmax(s, -1),
                                   rtol=1e-5, atol=1e-6)
        w, b = randn(256, seed=6), randn(256, seed=7)
        torch.testing.assert_close(layernorm_module.layernorm(s, w, b),
                                   torch.nn.functional.layer_norm(s, (256,), w, b, eps=1e-5),
                                   rtol=1e-4, atol=1e-4)

    def test_out_and_streams(self):
        x, y = randn(4096, seed=8), randn(4096, seed=9)
        o = torch.empty_like(x)
        self.assertIs(add_module.add(x, y, out=o), o)
        torch.testing.assert_close(o, x + y, rtol=0, atol=0)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            out = add_module.add(x, y)  # launched on `stream`, the current one here
            out2 = out * 2
        stream.synchronize()
        torch.testing.assert_close(out2, (x + y) * 2, rtol=0, atol=0)
        o2 = torch.empty_like(x)
        add_module.add(x, y, out=o2, stream=stream.cuda_stream)
        stream.synchronize()
        torch.testing.assert_close(o2, x + y, rtol=0, atol=0)

    def test_views_and_errors(self):
        x = randn(8, 512, seed=10)
        # A contiguous row slice is fine; a column slice is not dense.
        torch.testing.assert_close(add_module.add(x[3], x[4]), x[3] + x[4], rtol=0, atol=0)
        with self.assertRaises(pkc.ArgumentError) as e:
            matmul_module.matmul_scaled(randn(256, 64, seed=11).t(), randn(256, 64, seed=12))
        self.assertEqual(e.exception.status, "PK_ERROR_LAYOUT")
        with self.assertRaises(pkc.ArgumentError) as e:
            add_module.add(torch.zeros(8), torch.zeros(8))
        self.assertEqual(e.exception.status, "PK_ERROR_DEVICE_MISMATCH")
        with self.assertRaises(pkc.ArgumentError) as e:
            add_module.add(x[0], x[0].double())
        self.assertEqual(e.exception.status, "PK_ERROR_DTYPE")


class CustomOp(unittest.TestCase):
    def test_eager_and_opcheck(self):
        add = pkc.torch.kernel(add_module.add)
        self.assertIs(pkc.torch.kernel(add_module.add), add)
        x, y = randn(3000, seed=13), randn(3000, seed=14)
        torch.testing.assert_close(add(x, y), x + y, rtol=0, atol=0)
        torch.library.opcheck(add, (x, y))
        matmul = pkc.torch.as_torch_kernel(matmul_module.matmul_scaled)
        torch.library.opcheck(matmul, (randn(64, 256, seed=15), randn(256, 128, seed=16)))

    def test_torch_compile(self):
        add = pkc.torch.kernel(add_module.add)
        softmax = pkc.torch.kernel(softmax_module.softmax)

        def f(x, y):
            return softmax(add(x, y).reshape(-1, 256)) * 2

        compiled = torch.compile(f, fullgraph=True)
        x, y = randn(64 * 256, seed=17), randn(64 * 256, seed=18)
        torch.testing.assert_close(compiled(x, y), torch.softmax((x + y).reshape(-1, 256), -1) * 2,
                                   rtol=1e-5, atol=1e-6)
        # Dynamic shapes: the fake implementation evaluates the manifest's
        # shapes on symbolic sizes.
        dynamic = torch.compile(f, fullgraph=True, dynamic=True)
        for rows in (8, 24, 40):
            x, y = randn(rows * 256, seed=rows), randn(rows * 256, seed=rows + 1)
            torch.testing.assert_close(dynamic(x, y),
                                       torch.softmax((x + y).reshape(-1, 256), -1) * 2,
                                       rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
