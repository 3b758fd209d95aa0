"""Runs a .pk file as the Python program it is, on JAX Pallas (interpret mode).

A .pk file is Pallas code plus three things JAX does not define: the
`@export` decorator, array annotations such as `f32[N, 128]`, and symbolic
sizes (N above) that are bound from the arguments' shapes. This module
supplies them, plus shims for the Pallas spellings .pk accepts that the
installed JAX has moved or renamed (pl.load / pl.store / pl.dot, indexing_mode=
pl.Unblocked, BlockSpec(index_map, block_shape)), and forces
interpret=True so that everything runs on the CPU. A module constant
`IN_JAX = False` reads as True here (see _mark_jax).

    module = load_pk("samples/add.pk", defines={"BLOCK": "256"})
    outputs = module.run("add", [x, y])
"""

import os
import __future__
import ast
import contextlib
import functools
import inspect
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plt

_DTYPES = {
    "bool": jnp.bool_, "i8": jnp.int8, "i16": jnp.int16, "i32": jnp.int32, "i64": jnp.int64,
    "u8": jnp.uint8, "u16": jnp.uint16, "u32": jnp.uint32, "u64": jnp.uint64,
    "f16": jnp.float16, "bf16": jnp.bfloat16, "f32": jnp.float32, "f64": jnp.float64,
}


# ----------------------------------------------------------------------------
# Shims for spellings of the Pallas API that this JAX no longer has.
# ----------------------------------------------------------------------------

_real_block_spec = pl.BlockSpec
_real_pallas_call = pl.pallas_call
_real_blocked = pl.Blocked


class _IndexingMode:
    def __init__(self, unblocked, padding=None):
        self.unblocked = unblocked
        self.padding = padding


class _BlockedMeta(type):
    """pl.Blocked() as an indexing mode (older Pallas) and pl.Blocked(n) as
    a block dimension; still a class JAX's own code can match on."""

    def __call__(cls, block_size=None):
        return _IndexingMode(False) if block_size is None else _real_blocked(block_size)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _real_blocked)


class _blocked(metaclass=_BlockedMeta):
    pass


def _unblocked(padding=None):
    return _IndexingMode(True, padding)


def _block_spec(block_shape=None, index_map=None, pipeline_mode=None, *, memory_space=None,
                indexing_mode=None):
    if callable(block_shape) and not callable(index_map):
        block_shape, index_map = index_map, block_shape  # BlockSpec(index_map, block_shape)
    if isinstance(indexing_mode, _IndexingMode) and indexing_mode.unblocked:
        padding = indexing_mode.padding or [(0, 0)] * len(block_shape)
        block_shape = tuple(
            d if d is None or isinstance(d, pl.Squeezed) else pl.Element(d, tuple(p))
            for d, p in zip(block_shape, padding))
    kwargs = {}
    if memory_space is not None:
        kwargs["memory_space"] = memory_space
    return _real_block_spec(block_shape, index_map, pipeline_mode, **kwargs)


# bench/kernels runs the same sources compiled by Pallas on a GPU.
_INTERPRET = os.environ.get("PK_PALLAS_INTERPRET", "1") != "0"


def _tpu_info_on_cpu():
    """pltpu.emit_pipeline asks for the TPU's tiling even in interpret mode,
    which fails on a CPU ("Unsupported TPU device kind: cpu"); answer as a
    TPU v5e would. The tiling only shapes copies of blocks that run past an
    array's end."""
    try:
        from jax._src.pallas.mosaic import tpu_info
    except ImportError:
        return
    if hasattr(tpu_info, "registry") and hasattr(tpu_info, "_get_tpu_info_impl"):
        tpu_info.registry.setdefault(
            "cpu", lambda: tpu_info._get_tpu_info_impl(tpu_info.ChipVersion.TPU_V5E, 1))


if _INTERPRET:
    _tpu_info_on_cpu()


_TPU_INTERPRET = False


@contextlib.contextmanager
def tpu_interpret_mode():
    """Within: pallas_call runs in JAX's TPU interpret mode
    (pltpu.InterpretParams), which models DMAs and semaphores as a TPU has
    them; it alone runs a copy of a traced size (x_ref.at[pl.ds(s, n)])."""
    global _TPU_INTERPRET
    _TPU_INTERPRET = True
    try:
        yield
    finally:
        _TPU_INTERPRET = False


def _pallas_call(kernel, out_shape, **kwargs):
    kwargs["interpret"] = pltpu.InterpretParams() if _INTERPRET and _TPU_INTERPRET else _INTERPRET
    kwargs.pop("compiler_params", None)  # backend options do not affect semantics
    return _real_pallas_call(kernel, out_shape, **kwargs)


def _load(ref, idx=None, *, mask=None, other=None, **_):
    view = ref if idx is None else ref.at[idx]
    return plt.load(view, mask=mask, other=other)


def _store(ref, idx, val=None, *, mask=None, **_):
    if val is None:  # store(ref_view, val, mask=...)
        return plt.store(ref, idx, mask=mask)
    return plt.store(ref.at[idx], val, mask=mask)


# ----------------------------------------------------------------------------
# f32 dots as GPUs compute them. On a GPU, Pallas lowers an f32 dot at
# DEFAULT or HIGH precision to TF32 tensor-core code, which reads each
# operand's 19 high bits; pkc's CUDA backend truncates them on every path
# (pk.dot's allow_tf32). JAX on the CPU multiplies f32 in full, so the
# reference for pkc's CUDA kernels multiplies the truncated operands.
# ----------------------------------------------------------------------------

def _tf32_allowed(precision):
    """Pallas's GPU rule: None, DEFAULT or HIGH on either operand, or the
    TF32 algorithm preset."""
    if precision is None:
        return True
    if isinstance(precision, jax.lax.DotAlgorithmPreset):
        return precision in (jax.lax.DotAlgorithmPreset.DEFAULT,
                             jax.lax.DotAlgorithmPreset.TF32_TF32_F32)
    if isinstance(precision, (tuple, list)):
        return any(_tf32_allowed(p) for p in precision)
    return precision in (jax.lax.Precision.DEFAULT, jax.lax.Precision.HIGH)


def _truncated_to_tf32(x):
    bits = jax.lax.bitcast_convert_type(x, jnp.uint32)
    return jax.lax.bitcast_convert_type(bits & jnp.uint32(0xFFFFE000), jnp.float32)


@contextlib.contextmanager
def _tf32_dots_rewritten(rewrite):
    """Within: each f32 dot that allows TF32 binds rewrite(lhs, rhs)."""
    from jax._src.lax import lax as lax_internal
    primitive = lax_internal.dot_general_p
    real_bind = primitive.bind

    def bind(lhs, rhs, **params):
        if (_tf32_allowed(params.get("precision")) and lhs.dtype == jnp.float32
                and rhs.dtype == jnp.float32):
            lhs, rhs = rewrite(lhs, rhs)
        return real_bind(lhs, rhs, **params)

    primitive.bind = bind
    try:
        yield
    finally:
        del primitive.bind


def gpu_dot_precision():
    """Within: f32 dots that allow TF32 multiply TF32-truncated operands."""
    return _tf32_dots_rewritten(lambda lhs, rhs: (_truncated_to_tf32(lhs),
                                                  _truncated_to_tf32(rhs)))


@contextlib.contextmanager
def tf32_dot_watch():
    """Within: records (.seen) whether an f32 dot that allows TF32 ran, so
    whether gpu_dot_precision() could change the results."""
    watch = types.SimpleNamespace(seen=False)

    def seen(lhs, rhs):
        watch.seen = True
        return lhs, rhs

    with _tf32_dots_rewritten(seen):
        yield watch


# ----------------------------------------------------------------------------
# Mosaic GPU (plgpu) kernels run in JAX's GPU interpret mode, with its race
# detector on: a corpus kernel with a data race is not a valid program.
# ----------------------------------------------------------------------------

def _gpu_interpret_params():
    from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams
    return InterpretGPUParams(detect_races=True)


def gpu_races_found():
    """Whether the GPU interpret mode has seen a race since the last reset."""
    # get_races() asserts when no Mosaic GPU kernel has run in this process
    # (every ordinary Pallas case): read the state it guards instead.
    from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks
    races = gpu_callbacks._races
    return bool(races is not None and races.races_found)


_real_plgpu_kernel = plgpu.kernel
_real_core_map = pl.core_map
_ACC = plgpu.ACC


def _split_accumulators(body, scratch):
    """JAX's interpret mode cannot allocate plgpu.ACC together with other
    scratch (the compiler can): allocate the accumulators in a nested
    pl.run_scoped instead, which means the same."""
    if isinstance(scratch, dict):
        accs = {k: v for k, v in scratch.items() if isinstance(v, _ACC)}
        if not accs:
            return body, scratch
        rest = {k: v for k, v in scratch.items() if not isinstance(v, _ACC)}

        def with_accs(*refs, **named):
            pl.run_scoped(lambda **acc_refs: body(*refs, **named, **acc_refs), **accs)
        return with_accs, rest
    scratch = list(scratch or [])
    if not any(isinstance(v, _ACC) for v in scratch):
        return body, scratch
    positions = [i for i, v in enumerate(scratch) if isinstance(v, _ACC)]
    rest = [v for v in scratch if not isinstance(v, _ACC)]

    def with_accs(*refs):
        fixed, others = refs[:len(refs) - len(rest)], list(refs[len(refs) - len(rest):])

        def inner(*acc_refs):
            merged, acc_iter, other_iter = [], iter(acc_refs), iter(others)
            for i in range(len(scratch)):
                merged.append(next(acc_iter) if i in positions else next(other_iter))
            body(*fixed, *merged)
        pl.run_scoped(inner, *[scratch[i] for i in positions])
    return with_accs, rest


def _plgpu_kernel(body=None, out_shape=None, *, scratch_shapes=None, scratch_types=None,
                  interpret=None, compiler_params=None, **kwargs):
    if body is None:
        return lambda b: _plgpu_kernel(b, out_shape, scratch_shapes=scratch_shapes,
                                       scratch_types=scratch_types, **kwargs)
    scratch = scratch_shapes if scratch_shapes is not None else scratch_types
    body, scratch = _split_accumulators(body, scratch if scratch is not None else ())
    if out_shape is not None:
        kwargs["out_shape"] = out_shape
    return _real_plgpu_kernel(body, scratch_shapes=scratch, interpret=_gpu_interpret_params(),
                              **kwargs)


def _core_map(mesh, **kwargs):
    """pl.core_map runs in JAX's TPU interpret mode over a TensorCore mesh,
    in its GPU one over a plgpu mesh."""
    if type(mesh).__name__ == "TensorCoreMesh":
        kwargs["interpret"] = pltpu.InterpretParams()
    else:
        kwargs["interpret"] = _gpu_interpret_params()
    return _real_core_map(mesh, **kwargs)


_real_pl_kernel = pl.kernel


def _pl_kernel(*args, mesh, interpret=None, **kwargs):
    """pl.kernel runs in JAX's TPU interpret mode over a TensorCore mesh,
    in its GPU one over a plgpu mesh."""
    if type(mesh).__name__ == "TensorCoreMesh":
        params = pltpu.InterpretParams()
    else:
        params = _gpu_interpret_params()
    return _real_pl_kernel(*args, mesh=mesh, interpret=params, **kwargs)


plgpu.kernel = _plgpu_kernel
pl.core_map = _core_map
pl.kernel = _pl_kernel

pl.BlockSpec = _block_spec
pl.pallas_call = _pallas_call
pl.Blocked = _blocked
pl.Unblocked = _unblocked
pl.load = _load
pl.store = _store
pl.dot = plt.dot  # moved to pallas.triton; pl.dot still works but warns


# ----------------------------------------------------------------------------
# Signatures: f32[N, 128] with symbolic sizes.
# ----------------------------------------------------------------------------

class Symbol:
    def __init__(self, name):
        self.name = name


class _ArrayType:
    def __init__(self, dtype, dims):
        self.dtype = dtype
        self.dims = dims


class _DTypeAnnotation:
    def __init__(self, dtype):
        self.dtype = dtype

    def __getitem__(self, dims):
        if not isinstance(dims, tuple):
            dims = (dims,)
        return _ArrayType(self.dtype, dims)


class _SignatureScope(dict):
    """Names for evaluating annotations: dtypes, module globals, and a new
    Symbol for every other name."""

    def __init__(self, module_globals):
        super().__init__()
        self.module_globals = module_globals

    def __missing__(self, name):
        if name in _DTYPES:
            return _DTypeAnnotation(_DTYPES[name])
        if name in self.module_globals:
            return self.module_globals[name]
        return Symbol(name)


def _annotation_type(text, module_globals):
    value = eval(text, {"__builtins__": __builtins__}, _SignatureScope(module_globals))
    if isinstance(value, _ArrayType):
        return value
    if isinstance(value, _DTypeAnnotation):
        return _ArrayType(value.dtype, ())
    raise TypeError(f"unsupported annotation {text!r}")


class PkModule:
    def __init__(self, path, module_globals, exports):
        self.path = path
        self.globals = module_globals
        self.exports = exports

    def signature(self, name):
        fn = self.exports[name]
        return [_annotation_type(p.annotation, self.globals)
                for p in inspect.signature(fn).parameters.values()]

    def bind_sizes(self, name, shapes):
        """Gives export `name`'s symbolic sizes (N in f32[N]) the values
        these input shapes have: what N reads as while it runs or traces."""
        for array_type, shape in zip(self.signature(name), shapes):
            for dim, size in zip(array_type.dims, shape):
                if isinstance(dim, Symbol):
                    self.globals[dim.name] = size

    def run(self, name, inputs):
        """Runs export `name` on numpy inputs; returns a list of numpy outputs."""
        fn = self.exports[name]
        self.bind_sizes(name, [x.shape for x in inputs])
        result = fn(*[jnp.asarray(x) for x in inputs])
        outputs = result if isinstance(result, (tuple, list)) else [result]
        return [np.asarray(o) for o in outputs]


def _apply_defines(tree, defines):
    """-D NAME=VALUE replaces the module-level `NAME = ...` (or adds it)."""
    remaining = dict(defines)
    body = []
    for node in tree.body:
        body.append(node)
        if not isinstance(node, ast.Assign):
            continue
        # In a chained assignment (`M = N = K = 16384`) each defined name
        # gets its own value; the others keep the original.
        defined = [t for t in node.targets if isinstance(t, ast.Name) and t.id in remaining]
        if not defined:
            continue
        kept = [t for t in node.targets if t not in defined]
        if kept:
            node.targets = kept
        else:
            body.pop()
        for target in defined:
            body.append(ast.Assign(targets=[target],
                                   value=ast.parse(remaining.pop(target.id), mode="eval").body))
    prefix = [ast.parse(f"{k} = {v}").body[0] for k, v in remaining.items()]
    tree.body = prefix + body
    ast.fix_missing_locations(tree)
    return tree


def _mark_jax(tree):
    """A module-level `IN_JAX = False` reads as True here, on JAX.

    pkc runs Python control flow over values computed in a kernel (a `for`
    over a range with a dynamic bound, an `if` on a traced scalar) as real
    loops and branches; Pallas cannot trace those. A corpus file that tests
    them writes the lax equivalent under `if IN_JAX:` for the JAX side.
    """
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "IN_JAX" for t in node.targets):
            node.value = ast.Constant(True)
    ast.fix_missing_locations(tree)
    return tree


_PRNG_BASELINE = None


def _reset_prng_registry():
    """Each load runs the program anew, as a new Python process would: a
    module that registers a PRNG (JAX's TPU PRNG kernels) may do so once
    per load, although the harness loads a file once per case."""
    global _PRNG_BASELINE
    from jax._src.random import prng
    if _PRNG_BASELINE is None:
        _PRNG_BASELINE = dict(prng.prngs)
    prng.prngs.clear()
    prng.prngs.update(_PRNG_BASELINE)


# ----------------------------------------------------------------------------
# What real ports need of this Python that it may lack.
# ----------------------------------------------------------------------------

def _strip_type_parameters(source):
    """PEP 695 on a Python older than 3.12 (which pkc parses): generic
    functions and classes (`def f[T](...)`, `class C[T]:`) lose their type
    parameters and `type X = Y` becomes an assignment. Kernel libraries
    (JAX's own helpers, tokamax) write them; they change no value."""
    if sys.version_info >= (3, 12):
        return source
    import re
    source = re.sub(r"^(\s*(?:async\s+)?def\s+\w+)\[[^\]\n]*\](?=\s*\()", r"\1",
                    source, flags=re.M)
    source = re.sub(r"^(\s*class\s+\w+)\[[^\]\n]*\]", r"\1", source, flags=re.M)
    return re.sub(r"^(\s*)type\s+(\w+)(?:\[[^\]\n]*\])?\s*=", r"\1\2 =", source, flags=re.M)


class _AnyType:
    """A stand-in annotation: subscriptable, callable as a no-op decorator."""

    def __getitem__(self, _):
        return self

    def __or__(self, _):
        return self

    __ror__ = __or__


def _identity_decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def _install_missing_annotation_modules():
    """jaxtyping and typeguard only annotate and check signatures, and the
    kernels pkc compiles check shapes themselves: where this Python lacks
    them, modules that accept every annotation stand in (ports of kernel
    libraries import both)."""
    try:
        import jaxtyping  # noqa: F401
    except ImportError:
        stub = types.ModuleType("jaxtyping")
        stub.__getattr__ = lambda name: _AnyType()
        stub.jaxtyped = _identity_decorator
        sys.modules["jaxtyping"] = stub
    try:
        import typeguard  # noqa: F401
    except ImportError:
        stub = types.ModuleType("typeguard")
        stub.typechecked = _identity_decorator
        sys.modules["typeguard"] = stub
    # einshape (tokamax reshapes with it outside kernels): importable, and
    # an error where a case would call it.
    try:
        import einshape  # noqa: F401
    except ImportError:
        def missing(*args, **kwargs):
            raise ImportError("einshape is not installed here; no DIFF case may call it")
        for name in ("einshape", "einshape.src", "einshape.src.jax", "einshape.src.jax.jax_ops"):
            module = types.ModuleType(name)
            module.__getattr__ = lambda attr: missing
            sys.modules[name] = module
        for parent, child in (("einshape", "src"), ("einshape.src", "jax"),
                              ("einshape.src.jax", "jax_ops")):
            setattr(sys.modules[parent], child, sys.modules[parent + "." + child])


def load_pk(path, defines=None):
    _reset_prng_registry()
    _install_missing_annotation_modules()
    source = _strip_type_parameters(open(path).read())
    tree = _mark_jax(_apply_defines(ast.parse(source, path), defines or {}))
    code = compile(tree, path, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exports = {}

    def export(fn):
        exports[fn.__name__] = fn
        return fn

    # A real module in sys.modules: dataclasses and typing look a class's
    # module up there (with `from __future__ import annotations`).
    name = "pk_module_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    module = types.ModuleType(name)
    sys.modules[name] = module
    module_globals = module.__dict__
    def autotune(configs):
        # pkc tune's configurations (docs/tuning.md): nothing to do on JAX.
        if not isinstance(configs, (list, tuple)) or not all(isinstance(c, dict) for c in configs):
            raise TypeError("autotune(configs=...) takes a list of dicts")
        return lambda fn: fn

    module_globals.update({"__file__": path, "export": export, "autotune": autotune})
    for short, dtype in _DTYPES.items():
        if short != "bool":
            module_globals[short] = dtype
    exec(code, module_globals)
    return PkModule(path, module_globals, exports)
