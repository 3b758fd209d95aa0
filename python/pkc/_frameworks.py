"""Which framework an array belongs to: where outputs come from, which stream.

A kernel called with framework arrays returns that framework's arrays:
torch tensors for torch inputs, CuPy arrays for CuPy's, allocated with
the framework's own allocator on its current stream, where the kernels are
launched too. A framework is an object with two methods:

    stream(like) -> int           the CUstream to launch on (0: the legacy
                                  default stream) for arrays like `like`
    empty(shape, dtype, like)     a new array: `shape` a tuple of ints,
                                  `dtype` NumPy's name ("float32",
                                  "bfloat16"), on `like`'s device

and optionally `call(kernel, inputs, out, stream)`, which replaces the
launch altogether (JAX: arrays are immutable, so kernels run as XLA custom
calls). PyTorch, CuPy and JAX are known without importing them (by the
array type's module); `register_framework` adds others.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

from . import _pkc

__all__ = ["Framework", "register_framework", "framework_of"]


class Framework(Protocol):
    def stream(self, like: Any) -> int: ...

    def empty(self, shape: tuple[int, ...], dtype: str, like: Any) -> Any: ...


# array type -> framework (None: not a framework pkc knows); filled lazily.
_by_type: dict[type, Optional[Framework]] = {}
_registered: dict[type, Framework] = {}


def register_framework(array_type: type, framework: Framework) -> None:
    """Makes kernels allocate outputs for arrays of `array_type` (and its
    subclasses) with `framework`, and launch on its stream."""
    _registered[array_type] = framework
    _by_type.clear()
    _dispatch_by_type.clear()


def framework_of(array: Any) -> Optional[Framework]:
    """The framework of `array`, or None."""
    t = type(array)
    try:
        return _by_type[t]
    except KeyError:
        framework = _resolve(t)
        _by_type[t] = framework
        return framework


# array type -> (framework, its `call` or None): what a kernel call needs,
# looked up once per type (getattr of a missing method costs an exception).
_dispatch_by_type: dict[type, tuple[Optional[Framework], Optional[Callable[..., Any]]]] = {}


def dispatch_of(array: Any) -> tuple[Optional[Framework], Optional[Callable[..., Any]]]:
    """The framework of `array` and its `call` method (None if it has none)."""
    t = type(array)
    try:
        return _dispatch_by_type[t]
    except KeyError:
        framework = framework_of(array)
        entry = (framework, getattr(framework, "call", None))
        _dispatch_by_type[t] = entry
        return entry


def _resolve(t: type) -> Optional[Framework]:
    for base in t.__mro__:
        if base in _registered:
            return _registered[base]
    root = t.__module__.split(".", 1)[0]
    if root == "torch":
        import torch
        if issubclass(t, torch.Tensor):
            return TorchFramework()
    if root == "cupy":
        import cupy
        if issubclass(t, cupy.ndarray):
            return CupyFramework()
    if root in ("jax", "jaxlib"):
        import jax
        if issubclass(t, jax.Array):
            from . import jax as pkc_jax
            return pkc_jax.JaxFramework()
    return None


class TorchFramework:
    """PyTorch: outputs from torch.empty on the input's device, launched on
    torch's current stream of that device. Tensors are read through their
    attributes (cheaper than torch's __dlpack__)."""

    _instance: Optional["TorchFramework"] = None

    def __new__(cls):
        if cls._instance is None:
            import torch
            self = super().__new__(cls)
            self.torch = torch
            self.dtypes = {
                "bool": torch.bool, "int8": torch.int8, "int16": torch.int16,
                "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
                "float16": torch.float16, "bfloat16": torch.bfloat16,
                "float32": torch.float32, "float64": torch.float64,
            }
            # Wider unsigned integers arrived in torch 2.3.
            for name in ("uint16", "uint32", "uint64"):
                if hasattr(torch, name):
                    self.dtypes[name] = getattr(torch, name)
            _pkc.enable_torch(torch.Tensor, {v: k for k, v in self.dtypes.items()})
            # The raw stream handle without building a torch.cuda.Stream
            # (what Triton's launcher uses too).
            self._raw_stream: Callable[[int], int] = getattr(
                torch._C, "_cuda_getCurrentRawStream",
                lambda index: torch.cuda.current_stream(index).cuda_stream)
            # The extension makes stream() and empty()'s calls itself.
            _pkc.enable_torch_shortcuts(self, self._raw_stream, torch.empty_like)
            cls._instance = self
        return cls._instance

    def stream(self, like: Any) -> int:
        index = like.get_device()
        return self._raw_stream(index) if index >= 0 else 0

    def empty(self, shape: tuple[int, ...], dtype: str, like: Any) -> Any:
        if dtype not in self.dtypes:
            raise _pkc.make_error("PK_ERROR_DTYPE", f"this torch has no {dtype} dtype for the output")
        # new_empty: on like's device without building a torch.device.
        return like.new_empty(shape, dtype=self.dtypes[dtype])


class CupyFramework:
    """CuPy: outputs from cupy.empty on the input's device, launched on
    CuPy's current stream of that device. Arrays are read through their
    attributes (cheaper than __dlpack__)."""

    _instance: Optional["CupyFramework"] = None

    def __new__(cls):
        if cls._instance is None:
            import cupy
            self = super().__new__(cls)
            self.cupy = cupy
            _pkc.enable_cupy(cupy.ndarray)
            # The extension makes stream() and empty()'s calls itself
            # for arrays of the current device.
            _pkc.enable_cupy_shortcuts(self, cupy.cuda.runtime.getDevice,
                                       cupy.cuda.get_current_stream, cupy.ndarray)
            cls._instance = self
        return cls._instance

    def stream(self, like: Any) -> int:
        device = like.device.id
        if device == self.cupy.cuda.runtime.getDevice():
            return self.cupy.cuda.get_current_stream().ptr
        with self.cupy.cuda.Device(device):
            return self.cupy.cuda.get_current_stream().ptr

    def empty(self, shape: tuple[int, ...], dtype: str, like: Any) -> Any:
        if dtype == "bfloat16":
            raise _pkc.make_error("PK_ERROR_DTYPE", "CuPy has no bfloat16 arrays for the output; "
                                  "pass out= with another framework's array")
        device = like.device.id
        if device == self.cupy.cuda.runtime.getDevice():
            return self.cupy.empty(shape, dtype=dtype)
        with self.cupy.cuda.Device(device):
            return self.cupy.empty(shape, dtype=dtype)
