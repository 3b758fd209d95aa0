"""The parts of a launch manifest (docs/manifest.md) Python reads itself.

The runtime library reads and checks CUDA manifests; this module reads
what the runtime does not expose: the exports' shapes as size expressions
(to compute output shapes from symbolic sizes, such as torch.compile's
SymInts) and the TPU artifact's programs, which the runtime does not load
(pkc.jax.tpu_call turns them into JAX's tpu_custom_call).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Callable, Mapping, Sequence, Union

SizeExpr = Union[int, str, list]

__all__ = ["ManifestFile", "Export", "Param", "evaluate", "format_expr"]


def _floordiv(a, b):
    return a // b


def _ceildiv(a, b):
    return -(-a // b)


def _python_max(a, b):
    return a if a >= b else b


def _python_min(a, b):
    return a if a <= b else b


# Python's // and % round toward negative infinity, as the manifest's
# floordiv and mod do; they also work on torch.SymInt.
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": _floordiv,
    "ceildiv": _ceildiv,
    "mod": lambda a, b: a % b,
    "max": _python_max,
    "min": _python_min,
}


def evaluate(expr: SizeExpr, symbols: Mapping[str, Any],
             ops: Mapping[str, Callable[[Any, Any], Any]] = _OPS) -> Any:
    """The value of a size expression with `symbols` bound. `ops` may
    replace operations (torch.sym_max for symbolic sizes)."""
    if isinstance(expr, bool):
        raise ValueError(f"malformed size expression {expr!r}")
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        return symbols[expr]
    if isinstance(expr, list) and len(expr) == 3 and expr[0] in _OPS:
        a = evaluate(expr[1], symbols, ops)
        b = evaluate(expr[2], symbols, ops)
        return ops.get(expr[0], _OPS[expr[0]])(a, b)
    raise ValueError(f"malformed size expression {expr!r}")


def format_expr(expr: SizeExpr) -> str:
    """A size expression as Python would write it: "N", "cdiv(N, 1024)"."""
    if isinstance(expr, (int, str)):
        return str(expr)
    op, a, b = expr
    infix = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}
    if op in infix:
        return f"({format_expr(a)} {infix[op]} {format_expr(b)})"
    name = {"ceildiv": "cdiv"}.get(op, op)
    return f"{name}({format_expr(a)}, {format_expr(b)})"


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    role: str  # "input" or "output"
    dtype: str
    shape: tuple  # size expressions
    alignment: int


@dataclasses.dataclass(frozen=True)
class Export:
    name: str
    params: tuple[Param, ...]
    symbols: tuple[tuple[str, int, int], ...]  # (name, param, dim)

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.role == "input")

    @property
    def outputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.role == "output")

    def bind(self, input_shapes: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """The symbols' values, read off the inputs' shapes."""
        values = {}
        for name, param, dim in self.symbols:
            if param >= len(input_shapes):
                raise ValueError(f"{self.name}: the size {name} is read from output "
                                 f"{self.params[param].name!r}")
            shape = input_shapes[param]
            if dim >= len(shape):
                raise ValueError(
                    f"{self.name}: argument {self.params[param].name!r} (param {param}) has "
                    f"{len(shape)} dimension(s), expected {len(self.params[param].shape)}")
            values[name] = shape[dim]
        return values

    def signature(self) -> str:
        """"add(x: float32[N], y: float32[N]) -> float32[N]"."""
        def array(p: Param) -> str:
            return f"{p.dtype}[{', '.join(format_expr(e) for e in p.shape)}]"
        args = ", ".join(f"{p.name}: {array(p)}" for p in self.inputs)
        outs = [array(p) for p in self.outputs]
        result = outs[0] if len(outs) == 1 else f"({', '.join(outs)})"
        return f"{self.name}({args}) -> {result}"


class ManifestFile:
    """A manifest's JSON and where its artifacts are."""

    def __init__(self, data: Mapping[str, Any], directory: str | None = None,
                 artifacts: Mapping[str, bytes] | None = None, origin: str = "manifest"):
        if data.get("format") != "pkc-manifest" or data.get("version") != 1:
            raise ValueError(f"{origin}: not a version 1 pkc manifest")
        self.data = data
        self.directory = directory
        self.blobs = dict(artifacts or {})
        self.origin = origin
        self.exports = {e["name"]: Export(
            e["name"],
            tuple(Param(p["name"], p["role"], p["dtype"], tuple(p["shape"]),
                        int(p.get("alignment", 1))) for p in e["params"]),
            tuple((s["name"], int(s["param"]), int(s["dim"])) for s in e.get("symbols", [])))
            for e in data["exports"]}

    @classmethod
    def read(cls, path: str | os.PathLike) -> "ManifestFile":
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = json.load(f)
        return cls(data, os.path.dirname(os.path.abspath(path)), origin=path)

    @classmethod
    def parse(cls, text: bytes | str, artifacts: Mapping[str, bytes] | None = None
              ) -> "ManifestFile":
        return cls(json.loads(text), None, artifacts)

    def artifact(self, target: str) -> Mapping[str, Any]:
        """The artifact for `target`; "tpu" also finds one compiled for a
        TPU generation ("tpu:v6e": the same Mosaic, for a program that asked
        which chip it is for)."""
        for a in self.data["artifacts"]:
            if a["target"] == target:
                return a
        if target == "tpu":
            for a in self.data["artifacts"]:
                if a["target"].startswith("tpu:"):
                    return a
        targets = ", ".join(a["target"] for a in self.data["artifacts"]) or "none"
        raise LookupError(f"{self.origin} has no {target} artifact (its targets: {targets}); "
                          f"compile with --target={target}")

    def artifact_bytes(self, artifact: Mapping[str, Any]) -> bytes:
        """The artifact's bytes, checked against the manifest's size and
        SHA-256 as the runtime checks CUDA artifacts."""
        name = artifact["file"]
        if name in self.blobs:
            data = self.blobs[name]
        elif self.directory is not None:
            with open(os.path.join(self.directory, name), "rb") as f:
                data = f.read()
        else:
            raise FileNotFoundError(f"{self.origin}: artifact {name} was not given")
        if len(data) != artifact["size"] or hashlib.sha256(data).hexdigest() != artifact["sha256"]:
            raise ValueError(f"{self.origin}: artifact {name} differs from the manifest's size "
                             f"and SHA-256 (a stale or truncated file); compile again")
        return data
