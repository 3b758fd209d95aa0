# pkc from Python, notebook style: each "# %%" cell runs on its own in
# Jupyter or VS Code, or run the whole file: python3 samples/python/notebook.py
#
# Needs the pkc package (pip install ./python, or build/python on PYTHONPATH),
# the pkc compiler (on PATH, or $PKC), a CUDA GPU with PyTorch for the GPU
# cells, and JAX for the JAX cells (the TPU cell runs anywhere).
import os
import sys

import pkc

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# %% Compile samples/add.pk for this GPU; the artifacts are cached, so
# running the cell again (or a new notebook) recompiles only what changed.
try:
    import torch
    gpu = torch.cuda.is_available()
except ImportError:
    gpu = False
if not gpu:
    print("no CUDA GPU with PyTorch: only the TPU cell runs")
else:
    add = pkc.compile(os.path.join(SAMPLES, "add.pk"))
    print(add, add.add)

# %% Call it on torch tensors: the output is a torch tensor, allocated by
# torch on its current stream, where the kernel runs too.
if gpu:
    x = torch.randn(100_000, device="cuda")
    y = torch.randn(100_000, device="cuda")
    out = add.add(x, y)
    print("max |pkc - torch| =", (out - (x + y)).abs().max().item())

# %% The runtime checks every argument first; problems are exceptions.
if gpu:
    try:
        add.add(x, y[:10])
    except pkc.ArgumentError as e:
        print(f"{e.status}: {e}")

# %% Definitions change the program (-D): here a static size and a block.
if gpu:
    softmax = pkc.compile(os.path.join(SAMPLES, "softmax.pk"), defines={"BLOCK_ROWS": 16})
    s = torch.randn(1000, 256, device="cuda")
    print("softmax max error:", (softmax.softmax(s) - torch.softmax(s, -1)).abs().max().item())

# %% A PyTorch custom op, usable inside torch.compile.
if gpu:
    import pkc.torch
    add_op = pkc.torch.kernel(add.add)
    f = torch.compile(lambda a, b: add_op(a, b) * 2, fullgraph=True)
    print("torch.compile max error:", (f(x, y) - (x + y) * 2).abs().max().item())

# %% JAX on the GPU: the kernel is an XLA custom call inside jax.jit.
try:
    import jax
    import jax.numpy as jnp
    jax_gpu = any(d.platform == "gpu" for d in jax.devices())
except ImportError:
    jax_gpu = False
if gpu and jax_gpu:
    import pkc.jax
    jadd = pkc.jax.kernel(add.add)
    a = jnp.arange(8192, dtype=jnp.float32)
    print(jax.jit(lambda a: jadd(a, a) + 1)(a)[:4])

# %% TPU: the artifact is the Mosaic module Pallas would build, run as the
# tpu_custom_call Pallas emits. Without a TPU, lower it for one.
try:
    import jax
    import jax.numpy as jnp
    tpu = pkc.compile(os.path.join(SAMPLES, "add.pk"), target="tpu")
    spec = jax.ShapeDtypeStruct((8192,), jnp.float32)
    lowered = jax.export.export(jax.jit(tpu.add), platforms=["tpu"])(spec, spec)
    assert "tpu_custom_call" in lowered.mlir_module()
    print("lowered for TPU:", [str(a) for a in lowered.out_avals])
except ImportError:
    print("JAX is not installed: no TPU cell")
    sys.exit(0)
