"""
pkc's runtime library for Python (use the pkc package, not this module)
"""

from collections.abc import Mapping, Sequence

from pkc import (
    ArgumentError as ArgumentError,
    DeviceError as DeviceError,
    Error as Error,
    LoadError as LoadError
)


def make_error(status: str, message: str) -> object:
    """
    The exception the runtime would raise for `status` ("PK_ERROR_SHAPE") and `message`.
    """

def runtime_version() -> str: ...

def device_count() -> int: ...

def compute_capability(device: int) -> tuple[int, int]: ...

def enable_torch(tensor_type: object, dtypes: dict) -> None:
    """
    Reads instances of tensor_type (torch.Tensor) through their attributes; dtypes maps each torch.dtype to its NumPy name.
    """

def enable_torch_shortcuts(framework: object, raw_stream: object, empty_like: object) -> None:
    """
    Calls whose framework is `framework` allocate outputs with Tensor.new_empty (or empty_like(first input) when it is a dense row-major array of the output's shape and dtype) and take the stream from raw_stream(device index), skipping the framework's methods.
    """

def enable_cupy_shortcuts(framework: object, current_device: object, current_stream: object, ndarray: object) -> None:
    """
    Calls whose framework is `framework`, on arrays of current_device(), take current_stream().ptr and allocate outputs of the first input's dtype as ndarray(shape, input.dtype), skipping the framework's methods.
    """

def enable_cupy(array_type: object) -> None:
    """Reads instances of array_type (cupy.ndarray) through their attributes."""

class ModuleSource:
    """Where a module was loaded from (for the XLA custom call)."""

    @property
    def path(self) -> str: ...

class Param:
    """One array an export takes or returns."""

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def dtype(self) -> str: ...

    @property
    def ndim(self) -> int: ...

    @property
    def alignment(self) -> int: ...

    def __repr__(self) -> str: ...

class Kernel:
    """An export of a loaded module."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> list[Param]: ...

    @property
    def num_inputs(self) -> int: ...

    @property
    def num_outputs(self) -> int: ...

    @property
    def symbols(self) -> list[tuple[str, int, int]]: ...

    @property
    def module_source(self) -> ModuleSource: ...

    def output_shapes(self, input_shapes: Sequence[Sequence[int]]) -> list[list[int]]: ...

    def check(self, shapes: Sequence[Sequence[int]], dtypes: Sequence[str]) -> list[list[int]]: ...

    def launch(self, arrays: Sequence, stream: int = 0) -> None: ...

    def call(self, inputs: tuple, out: object | None, framework: object | None, stream: object | None) -> object: ...

class Module:
    """A loaded manifest and its artifact."""

    @staticmethod
    def load(path: str, device: int = -1, no_device: bool = False, compute_capability: int = 0) -> Module: ...

    @staticmethod
    def load_memory(manifest: bytes, artifacts: Mapping[str, bytes], device: int = -1, no_device: bool = False, compute_capability: int = 0) -> Module: ...

    @property
    def exports(self) -> list[str]: ...

    @property
    def target(self) -> str: ...

    @property
    def artifact(self) -> str: ...

    @property
    def device(self) -> int: ...

    @property
    def source(self) -> ModuleSource: ...

    def kernel(self, name: str) -> Kernel: ...

has_xla_ffi: bool = True

def xla_register(key: str, source: ModuleSource) -> None:
    """
    Registers a module's source under `key` for the pkc_launch custom call.
    """

def xla_handlers() -> dict:
    """
    The XLA FFI handlers: {"cuda": ..., "cpu_for_tests": ...}, as capsules for jax.ffi.register_ffi_target.
    """
