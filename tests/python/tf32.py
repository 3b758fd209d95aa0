"""The reference for f32 dots at JAX's default precision on the GPU.

pkc's GPU kernels (and the fake driver's twins of the samples, which stand
in for them) multiply f32 operands truncated to TF32 — sign, exponent and
the 10 high mantissa bits — and sum the products in f32 (docs/cuda.md).
"""

import numpy as np


def truncate(x):
    """`x` (f32) as a tensor core reads it for a TF32 product."""
    x = np.asarray(x, dtype=np.float32)
    return (x.view(np.int32) & np.int32(-(1 << 13))).view(np.float32)


def product(a, b):
    """a @ b of f32 arrays with TF32 products, summed exactly, as f32."""
    return (truncate(a).astype(np.float64) @ truncate(b).astype(np.float64)).astype(np.float32)
