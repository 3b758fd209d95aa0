"""pkc from Python: compile .pk kernels, load them, call them on framework arrays.

    import pkc, torch
    m = pkc.compile("samples/add.pk")          # or pkc.load("build/kernels/add.json")
    x = torch.randn(4096, device="cuda")
    out = m.add(x, x)                          # a torch tensor, on torch's current stream

Arrays are anything that speaks DLPack on a CUDA device (PyTorch, CuPy,
JAX); outputs are allocated by the inputs' framework. `pkc.torch` makes
kernels torch.library custom ops (usable under torch.compile), `pkc.jax`
runs them inside jax.jit as XLA custom calls and runs TPU artifacts as
JAX's tpu_custom_call. docs/python.md is the reference.
"""

from . import _pkc
from ._compile import CompileError, cache_dir, compile, default_target, find_pkc
from ._frameworks import Framework, framework_of, register_framework
from ._pkc import ArgumentError, DeviceError, Error, LoadError
from ._runtime import Kernel, Module, load

__all__ = [
    "ArgumentError", "CompileError", "DeviceError", "Error", "Framework", "Kernel", "LoadError",
    "Module", "cache_dir", "compile", "default_target", "device_count", "find_pkc",
    "framework_of", "load", "register_framework", "runtime_version",
]

__version__ = _pkc.runtime_version()


def runtime_version() -> str:
    """The runtime library's version ("0.1.0")."""
    return _pkc.runtime_version()


def device_count() -> int:
    """The number of CUDA devices (pkc.DeviceError without a driver)."""
    return _pkc.device_count()
