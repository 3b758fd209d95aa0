"""pkc kernels as PyTorch operators, usable inside torch.compile graphs.

    import pkc, pkc.torch, torch
    m = pkc.compile("samples/add.pk")
    add = pkc.torch.kernel(m.add)              # torch.ops.pkc.add_<id>
    out = add(x, y)                            # CUDA tensors in, new tensors out
    torch.compile(lambda x, y: add(x, y) * 2)(x, y)

`kernel` registers the export as a torch.library custom op (namespace
`pkc`): its CUDA implementation launches through the runtime on torch's
current stream, with outputs from torch.empty; its fake implementation
gives torch.compile the outputs' shapes (from the manifest's size
expressions, so symbolic sizes stay symbolic) and dtypes. This is the
counterpart of Pallas's `plgpu.as_torch_kernel`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

import torch

from . import _pkc
from ._frameworks import TorchFramework
from ._manifest import evaluate

__all__ = ["kernel", "as_torch_kernel"]

_library = torch.library.Library("pkc", "FRAGMENT")
_ops: dict[tuple[str, str], Callable[..., Any]] = {}

_SYMBOLIC_OPS = {"max": lambda a, b: torch.sym_max(a, b), "min": lambda a, b: torch.sym_min(a, b)}


def _op_name(k) -> str:
    digest = hashlib.sha256(f"{k.module.key}\n{k.name}".encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', k.name)}_{digest}"


def kernel(k) -> Callable[..., Any]:
    """Registers pkc.Kernel `k` as the custom op torch.ops.pkc.<export>_<id>
    (once per module and export) and returns it."""
    from ._runtime import Kernel
    if not isinstance(k, Kernel):
        raise TypeError(f"pkc.torch.kernel takes a pkc.Kernel (module.export), not "
                        f"{type(k).__name__}")
    key = (k.module.key, k.name)
    if key in _ops:
        return _ops[key]
    TorchFramework()  # tensors are read through their attributes from now on
    export = k.export
    name = _op_name(k)
    inputs = ", ".join(f"Tensor {p.name}" for p in export.inputs)
    outputs = export.outputs
    result = "Tensor" if len(outputs) == 1 else f"({', '.join('Tensor' for _ in outputs)})"
    _library.define(f"{name}({inputs}) -> {result}")

    def cuda(*tensors):
        return k(*tensors)

    def fake(*tensors):
        shapes = [tuple(t.shape) for t in tensors]
        dtypes = [str(t.dtype).removeprefix("torch.") for t in tensors]
        if all(isinstance(d, int) for s in shapes for d in s):
            # Concrete sizes: the runtime checks them and computes the shapes.
            out_shapes = k.check(shapes, dtypes)
        else:
            # Symbolic sizes (torch.compile's dynamic shapes): evaluate the
            # manifest's size expressions on them; the launch checks later.
            if len(tensors) != len(export.inputs):
                raise _pkc.make_error("PK_ERROR_ARGUMENT_COUNT",
                                      f"{k.name} takes {len(export.inputs)} array(s), "
                                      f"got {len(tensors)}")
            for p, d in zip(export.inputs, dtypes):
                if d != p.dtype:
                    raise _pkc.make_error("PK_ERROR_DTYPE",
                                          f"{k.name}: argument {p.name!r} is {d}, expected "
                                          f"{p.dtype}")
            symbols = export.bind(shapes)
            out_shapes = [tuple(evaluate(e, symbols, _SYMBOLIC_OPS) for e in p.shape)
                          for p in outputs]
        framework = TorchFramework()
        device = tensors[0].device if tensors else torch.device("cuda")
        results = [torch.empty(s, dtype=framework.dtypes[p.dtype], device=device)
                   for s, p in zip(out_shapes, outputs)]
        return results[0] if len(results) == 1 else tuple(results)

    _library.impl(name, cuda, "CUDA")
    # On CPU tensors the runtime says what is wrong (they are not in CUDA
    # memory) rather than torch's "no kernel for the CPU backend".
    _library.impl(name, cuda, "CPU")
    torch.library.register_fake(f"pkc::{name}", fake, lib=_library)
    op = getattr(torch.ops.pkc, name)
    _ops[key] = op
    return op


as_torch_kernel = kernel
