"""Modules and kernels: pkc.load and what it returns."""

from __future__ import annotations

import hashlib
import os
from typing import Any, Mapping, Optional, Sequence, Union

from . import _pkc
from ._frameworks import _dispatch_by_type, dispatch_of
from ._manifest import Export, ManifestFile

__all__ = ["Module", "Kernel", "load"]


class Kernel:
    """An export of a loaded module. Call it with arrays (anything that
    speaks DLPack: torch tensors, CuPy and JAX arrays on a CUDA device):

        out = m.add(x, y)              # outputs allocated like x, on x's stream
        m.add(x, y, out=o)             # into o (a tuple for several outputs)
        m.add(x, y, stream=s)          # on CUstream s instead

    Returns one array, or a tuple for several outputs. The runtime checks
    every argument first (pkc.ArgumentError says what is wrong).
    """

    __slots__ = ("module", "name", "_kernel", "_export")

    def __init__(self, module: "Module", kernel: _pkc.Kernel):
        self.module = module
        self.name = kernel.name
        self._kernel = kernel
        self._export: Optional[Export] = None

    def __call__(self, *inputs: Any, out: Any = None, stream: Optional[int] = None) -> Any:
        if inputs:
            like = inputs[0]
        elif isinstance(out, (tuple, list)):
            like = out[0] if out else None
        else:
            like = out
        # The cache's dictionary first: a function call less on every launch.
        entry = _dispatch_by_type.get(type(like))
        framework, call = entry if entry is not None else dispatch_of(like)
        if call is not None:
            return call(self, inputs, out, stream)
        return self._kernel.call(inputs, out, framework, stream)

    def launch(self, *arrays: Any, stream: int = 0) -> None:
        """Launches with every array given, inputs then outputs, on CUstream
        `stream` (0: the legacy default stream)."""
        self._kernel.launch(arrays, stream)

    @property
    def params(self) -> list[_pkc.Param]:
        """The arrays it takes (role "input") and returns ("output")."""
        return self._kernel.params

    @property
    def num_inputs(self) -> int:
        return self._kernel.num_inputs

    @property
    def num_outputs(self) -> int:
        return self._kernel.num_outputs

    @property
    def symbols(self) -> list[tuple[str, int, int]]:
        """The symbolic sizes: (name, param, dimension it is read from)."""
        return self._kernel.symbols

    @property
    def export(self) -> Export:
        """The export's signature as the manifest writes it, with shapes as
        size expressions."""
        if self._export is None:
            self._export = self.module.manifest.exports[self.name]
        return self._export

    def output_shapes(self, *input_shapes: Sequence[int]) -> list[tuple[int, ...]]:
        """The outputs' shapes for inputs of these shapes."""
        return [tuple(s) for s in self._kernel.output_shapes([list(s) for s in input_shapes])]

    def check(self, shapes: Sequence[Sequence[int]], dtypes: Sequence[str]) -> list[tuple[int, ...]]:
        """Checks inputs of these shapes and dtypes ("float32") as a launch
        would, without arrays; returns the outputs' shapes."""
        return [tuple(s) for s in self._kernel.check([list(s) for s in shapes], list(dtypes))]

    def __repr__(self) -> str:
        try:
            return f"<pkc.Kernel {self.export.signature()}>"
        except Exception:  # a manifest Python cannot read: still printable
            return f"<pkc.Kernel {self.name}>"


class Module:
    """A loaded manifest: its exports are attributes (`m.add`) and items
    (`m["add"]`)."""

    def __init__(self, raw: _pkc.Module, key: str, manifest_path: Optional[str] = None,
                 manifest_bytes: Optional[bytes] = None,
                 artifacts: Optional[Mapping[str, bytes]] = None):
        self._raw = raw
        self._kernels: dict[str, Kernel] = {}
        self._manifest: Optional[ManifestFile] = None
        self._manifest_path = manifest_path
        self._manifest_bytes = manifest_bytes
        self._artifacts = artifacts
        self.key = key

    @property
    def exports(self) -> list[str]:
        return self._raw.exports

    @property
    def target(self) -> str:
        """The chosen artifact's target ("cuda:sm_90a")."""
        return self._raw.target

    @property
    def artifact(self) -> str:
        return self._raw.artifact

    @property
    def device(self) -> int:
        """The CUDA device it is loaded on (-1 when loaded without one)."""
        return self._raw.device

    @property
    def manifest(self) -> ManifestFile:
        if self._manifest is None:
            if self._manifest_path is not None:
                self._manifest = ManifestFile.read(self._manifest_path)
            else:
                self._manifest = ManifestFile.parse(self._manifest_bytes, self._artifacts)
        return self._manifest

    def kernel(self, name: str) -> Kernel:
        """The export `name`; pkc.LoadError (status PK_ERROR_NOT_FOUND) lists
        the exports when there is none."""
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = Kernel(self, self._raw.kernel(name))
        return k

    __getitem__ = kernel

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            k = self.kernel(name)
        except _pkc.LoadError as e:
            raise AttributeError(str(e)) from None
        # Python calls __getattr__ only after the ordinary lookup has failed,
        # which costs about a microsecond of every `m.add(x, y)`: from now on
        # the instance's dictionary answers. Names of Module's own
        # attributes never get here, so nothing of the class is shadowed.
        self.__dict__[name] = k
        return k

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.exports))

    def __repr__(self) -> str:
        return f"<pkc.Module {self.key} ({self.target or 'no artifact'}): {', '.join(self.exports)}>"


def load(manifest: Union[str, os.PathLike, bytes], *, artifacts: Optional[Mapping[str, bytes]] = None,
         device: Optional[int] = None, no_device: bool = False,
         compute_capability: Optional[int] = None) -> Module:
    """Loads a manifest (a path, or its JSON as bytes with the artifacts in
    `artifacts`, by file name) and the artifact for the device.

    device: the CUDA device ordinal; by default the current context's
    device, else 0. no_device: read and check everything but use no driver
    or GPU (kernels can be inspected and checked, not launched);
    compute_capability (90, 86) then chooses the artifact.
    """
    dev = -1 if device is None else device
    cc = compute_capability or 0
    if isinstance(manifest, (bytes, bytearray, memoryview)):
        data = bytes(manifest)
        blobs = {k: bytes(v) for k, v in (artifacts or {}).items()}
        raw = _pkc.Module.load_memory(data, blobs, dev, no_device, cc)
        digest = hashlib.sha256(data)
        for name in sorted(blobs):
            digest.update(name.encode() + b"\0" + hashlib.sha256(blobs[name]).digest())
        return Module(raw, "sha256:" + digest.hexdigest(), manifest_bytes=data, artifacts=blobs)
    path = os.path.abspath(os.fspath(manifest))
    raw = _pkc.Module.load(path, dev, no_device, cc)
    return Module(raw, path, manifest_path=path)
