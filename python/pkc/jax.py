"""pkc kernels inside JAX programs.

On GPUs, an export runs as an XLA custom call (`pkc_launch`, through
jax.ffi): XLA allocates the outputs and gives the buffers and its stream,
the extension launches through the runtime. Output shapes and dtypes come
from the manifest, and the runtime's checks run at trace time:

    import jax, pkc, pkc.jax
    m = pkc.compile("samples/add.pk")
    add = pkc.jax.kernel(m.add)
    jax.jit(lambda x, y: add(x, y) * 2)(x, y)
    m.add(x, y)                        # JAX arrays: the same, jitted

On TPUs, `tpu_call(manifest, export)` wraps pkc's Mosaic modules as the
`tpu_custom_call`s Pallas itself emits, so a pkc TPU artifact runs inside a
JAX program on a TPU:

    m = pkc.compile("samples/add.pk", target="tpu", defines={"N": 8192})
    jax.jit(m.add)(x, y)               # m.add is tpu_call(manifest, "add")
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.frozen_dict import FrozenDict

from . import _pkc
from ._manifest import Export, ManifestFile, evaluate

_error = _pkc.make_error

__all__ = ["kernel", "tpu_call", "TpuModule", "FFI_TARGET"]

FFI_TARGET = "pkc_launch"

_registered_platforms: set[str] = set()


def _register(platform: str = "CUDA", handler: str = "cuda") -> None:
    if platform in _registered_platforms:
        return
    if not _pkc.has_xla_ffi:
        raise _pkc.Error("this build of pkc has no XLA FFI handler (it was built without "
                         "jaxlib's headers); reinstall it with jaxlib present, e.g. "
                         "pip install --no-build-isolation ./python")
    jax.ffi.register_ffi_target(FFI_TARGET, _pkc.xla_handlers()[handler], platform=platform)
    _registered_platforms.add(platform)


def _enable_cpu_for_tests() -> None:
    """pkc's tests only: run the custom call on XLA's CPU backend, passing
    host buffers to the runtime as device 0's memory (the fake driver keeps
    its "device" memory on the host; a real driver refuses it)."""
    _register("cpu", "cpu_for_tests")


def kernel(k) -> Callable[..., Any]:
    """A JAX function for kernel `k` (a pkc.Kernel): call it on jax arrays,
    inside jax.jit or not. Raises pkc.ArgumentError at trace time for
    arguments the export does not take."""
    _register()
    from ._runtime import Kernel
    if not isinstance(k, Kernel):
        raise TypeError(f"pkc.jax.kernel takes a pkc.Kernel (module.export), not "
                        f"{type(k).__name__}")
    outputs = [p for p in k.params if p.role == "output"]
    key = k.module.key
    _pkc.xla_register(key, k._kernel.module_source)

    def call(*arrays):
        shapes = [tuple(a.shape) for a in arrays]
        dtypes = [jnp.dtype(a.dtype).name for a in arrays]
        out_shapes = k.check(shapes, dtypes)
        result_types = [jax.ShapeDtypeStruct(s, jnp.dtype(p.dtype))
                        for s, p in zip(out_shapes, outputs)]
        results = jax.ffi.ffi_call(FFI_TARGET, result_types)(*arrays, module=key, export=k.name)
        return results[0] if len(results) == 1 else tuple(results)

    call.__name__ = k.name
    call.__doc__ = f"pkc kernel {k!r} as a JAX function."
    return call


class JaxFramework:
    """JAX arrays are immutable: a kernel called on them runs as the XLA
    custom call, jitted, and returns new arrays."""

    def __init__(self):
        self._jitted: dict[tuple[str, str], Callable] = {}

    def call(self, k, inputs: Sequence[Any], out: Any, stream: Optional[int]) -> Any:
        if out is not None:
            raise _error("PK_ERROR_INVALID_ARGUMENT", f"{k.name}: JAX arrays are immutable, so "
                         "out= cannot be used with them; use the returned arrays")
        if stream is not None:
            raise _error("PK_ERROR_INVALID_ARGUMENT", f"{k.name}: with JAX arrays the kernel "
                         "runs on XLA's stream; stream= cannot be used")
        for p, a in zip(k.params, inputs):
            platforms = {d.platform for d in a.devices()} if hasattr(a, "devices") else set()
            if platforms and not platforms & {"gpu", "cuda"} and "cpu" not in _registered_platforms:
                where = ", ".join(sorted(platforms))
                raise _error("PK_ERROR_DEVICE_MISMATCH",
                             f"{k.name}: argument {p.name!r} is a JAX array on {where}; pkc "
                             "kernels run on CUDA GPUs (jax.device_put it on a GPU first)")
        key = (k.module.key, k.name)
        f = self._jitted.get(key)
        if f is None:
            f = self._jitted[key] = jax.jit(kernel(k))
        return f(*inputs)


# ---------------------------------------------------------------------------
# TPU: pkc's Mosaic modules as tpu_custom_call
# ---------------------------------------------------------------------------

def _mosaic_context():
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import tpu as jax_tpu
    ctx = jax_mlir.make_ir_context()
    jax_tpu.register_dialect(ctx)
    return ctx


class _TpuCall:
    """One {"call": ...} step: its Mosaic module, serialized once into the
    backend config JAX's tpu_custom_call takes, with Pallas's compiler
    parameters."""

    # The pltpu.CompilerParams fields that reach the custom call's config.
    _CONFIG_FIELDS = ("vmem_limit_bytes", "flags", "allow_input_fusion", "internal_scratch_in_bytes",
                      "collective_id", "serialization_format", "disable_bounds_checks",
                      "disable_semaphore_checks", "skip_device_barrier",
                      "allow_collective_id_without_custom_barrier", "shape_invariant_numerics",
                      "needs_layout_passes")

    def __init__(self, step: Mapping[str, Any], module_text: str, origin: str):
        from jax._src import tpu_custom_call
        from jax._src.pallas.mosaic import core as tpu_core
        from jaxlib.mlir import ir

        self.step = step
        given = dict(step.get("compiler_params", {}))
        known = {f for f in tpu_core.CompilerParams.__dataclass_fields__} - {"dimension_semantics"}
        unknown = sorted(set(given) - known)
        if unknown:
            raise NotImplementedError(
                f"{origin}: kernel {step['kernel']} has compiler parameters this JAX does not "
                f"know: {', '.join(unknown)}")
        if "flags" in given and isinstance(given["flags"], dict):
            given["flags"] = dict(given["flags"])
        params = tpu_core.CompilerParams(**given)
        self.has_side_effects = (tpu_custom_call.TpuSideEffectType.SIDE_EFFECTING
                                 if params.has_side_effects is True else
                                 tpu_custom_call.TpuSideEffectType.PURE)
        cost = step.get("cost_estimate")
        with _mosaic_context() as ctx, ir.Location.unknown():
            module = ir.Module.parse(module_text)
            self.config = tpu_custom_call._lower_to_custom_call_config(
                module, cost_estimate=dict(cost) if cost is not None else None,
                output_memory_spaces=None, input_memory_spaces=None, ir_version=None,
                **{f: getattr(params, f) for f in self._CONFIG_FIELDS})
        del ctx

    def __call__(self, operands: Sequence[Any], out_avals: Sequence[Any]) -> Sequence[Any]:
        from jax._src import tpu_custom_call
        return tpu_custom_call.tpu_custom_call_p.bind(
            *operands, config=self.config, has_side_effects=self.has_side_effects,
            kernel_name=self.step["kernel"], out_avals=tuple(out_avals),
            input_output_aliases=tuple(tuple(a) for a in self.step["input_output_aliases"]),
            metadata=_NO_METADATA)


# Pallas passes empty metadata (so the call carries kernel_metadata = "{}");
# a primitive's parameters must be hashable.
_NO_METADATA = FrozenDict({})


def _stored(dtype: str) -> np.dtype:
    """How Mosaic stores a dtype: bools as int32."""
    return np.dtype(np.int32) if dtype == "bool" else jnp.dtype(dtype)


def tpu_call(manifest: Union[str, os.PathLike, ManifestFile], export: str) -> Callable[..., Any]:
    """A JAX function running export `export` of a pkc TPU artifact: each
    pallas_call of the export is the tpu_custom_call Pallas emits for it, on
    pkc's Mosaic module. Call it on jax arrays (inside jax.jit, or not) on
    a TPU; `jax.export(..., platforms=["tpu"])` lowers it anywhere."""
    m = manifest if isinstance(manifest, ManifestFile) else ManifestFile.read(manifest)
    if export not in m.exports:
        raise _error("PK_ERROR_NOT_FOUND", f"{m.origin}: no export named {export!r} (its exports: "
                             f"{', '.join(m.exports)})")
    artifact = m.artifact("tpu")
    program = next((p for p in artifact["programs"] if p["export"] == export), None)
    if program is None:
        raise _error("PK_ERROR_NOT_FOUND",
                     f"{m.origin}: the TPU artifact has no program for {export!r}")
    text = m.artifact_bytes(artifact).decode()
    modules = _nested_modules(text, m.origin)
    calls = []
    for step in program["steps"]:
        if "call" in step:
            call = step["call"]
            if call["module"] not in modules:
                raise _error("PK_ERROR_ARTIFACT",
                             f"{m.origin}: the TPU artifact has no module @{call['module']}")
            calls.append(_TpuCall(call, modules[call["module"]], m.origin))
        elif "copy" not in step:
            raise NotImplementedError(f"{m.origin}: unknown TPU step {sorted(step)}")
    return functools.wraps(_run_program)(
        functools.partial(_run_program, m.exports[export], program, calls))


def _nested_modules(text: str, origin: str) -> dict[str, str]:
    from jaxlib.mlir import ir
    with _mosaic_context(), ir.Location.unknown():
        top = ir.Module.parse(text)
        return {op.attributes["sym_name"].value: str(op) for op in top.body.operations
                if op.operation.name == "builtin.module"}


def _run_program(export: Export, program: Mapping[str, Any], calls: Sequence[_TpuCall],
                 *arrays: Any) -> Any:
    inputs = export.inputs
    if len(arrays) != len(inputs):
        raise _error(
            "PK_ERROR_ARGUMENT_COUNT", f"{export.name} takes {len(inputs)} array(s) "
            f"({', '.join(p.name for p in inputs)}), got {len(arrays)}")
    shapes = [tuple(np.shape(a)) for a in arrays]
    symbols = export.bind(shapes)
    for i, (p, a) in enumerate(zip(inputs, arrays)):
        expected = tuple(evaluate(e, symbols) for e in p.shape)
        dtype = jnp.dtype(a.dtype).name
        if dtype != p.dtype:
            raise _error("PK_ERROR_DTYPE", f"{export.name}: argument {p.name!r} (param {i}) is "
                                     f"{dtype}, expected {p.dtype}")
        if shapes[i] != expected:
            raise _error("PK_ERROR_SHAPE", f"{export.name}: argument {p.name!r} (param {i}) has shape "
                                     f"{list(shapes[i])}, expected {list(expected)}")

    def aval(ref: Mapping[str, Any]) -> jax.ShapeDtypeStruct:
        if "param" in ref:
            p = export.params[ref["param"]]
            return jax.ShapeDtypeStruct(tuple(evaluate(e, symbols) for e in p.shape),
                                        _stored(p.dtype))
        t = program["temporaries"][ref["temp"]]
        return jax.ShapeDtypeStruct(tuple(evaluate(e, symbols) for e in t["shape"]),
                                    _stored(t["dtype"]))

    # Buffers by ("param", i) or ("temp", j), as Mosaic stores them.
    buffers: dict[tuple[str, int], Any] = {}
    for i, (p, a) in enumerate(zip(inputs, arrays)):
        buffers[("param", i)] = a.astype(jnp.int32) if p.dtype == "bool" else a

    def key(ref: Mapping[str, Any]) -> tuple[str, int]:
        return ("param", ref["param"]) if "param" in ref else ("temp", ref["temp"])

    calls_left = iter(calls)
    for step in program["steps"]:
        if "copy" in step:
            copy = step["copy"]
            source, target = buffers[key(copy["from"])], aval(copy["to"])
            if tuple(source.shape) != target.shape or source.dtype != target.dtype:
                raise NotImplementedError(f"{export.name}: a copy between buffers of different "
                                          "shapes or dtypes")
            buffers[key(copy["to"])] = source
            continue
        call = next(calls_left)
        operands = []
        for op in call.step["operands"]:
            if "grid_size" in op:
                operands.append(jnp.asarray(evaluate(op["grid_size"], symbols), jnp.int32))
            elif "symbols" in op:
                operands.append(jnp.asarray([symbols[s] for s in op["symbols"]], jnp.int32))
            else:
                operands.append(buffers[key(op)])
        from jax._src import core as jax_core
        results = call(operands, [jax_core.ShapedArray(a.shape, a.dtype)
                                  for a in map(aval, call.step["results"])])
        for ref, value in zip(call.step["results"], results):
            buffers[key(ref)] = value

    outputs = []
    for i, p in enumerate(export.params):
        if p.role == "output":
            value = buffers[("param", i)]
            outputs.append(value.astype(jnp.bool_) if p.dtype == "bool" else value)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


class TpuModule:
    """A pkc TPU artifact: each export is an attribute, a JAX function
    (`tpu_call(manifest, name)`)."""

    def __init__(self, manifest: Union[str, os.PathLike]):
        self.manifest = ManifestFile.read(manifest)
        self._calls: dict[str, Callable] = {}

    @property
    def exports(self) -> list[str]:
        return list(self.manifest.exports)

    def kernel(self, name: str) -> Callable[..., Any]:
        if name not in self._calls:
            self._calls[name] = tpu_call(self.manifest, name)
        return self._calls[name]

    __getitem__ = kernel

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.kernel(name)
        except _pkc.LoadError as e:
            raise AttributeError(str(e)) from None


# Registered on import, so that deserialized jax.export modules that call
# pkc_launch find it too.
if _pkc.has_xla_ffi:
    _register()
