#!/usr/bin/env python3
"""Differential test: a .pk program on pkc's interpreter vs. on JAX Pallas.

Each test case is a line in the .pk file (or a --case argument):

    # DIFF: <export> [NAME=INT ...] [-D NAME=VALUE ...] [rtol=R] [atol=A]
    #       [seed=S] [range=LO:HI] [irange=LO:HI] [reference=FUNCTION] [stdout]
    #       [cuda-rejects=TEXT] [arch=ARCH] [nosim] [x64] [tf32=T]
    #       [tpu-interpret]

NAME=INT gives a symbolic size; -D overrides a module constant in both
runs. Inputs are random (seeded, in [LO, HI) for floats, in [-50, 50) or
irange's [LO, HI) for integers). The case passes
when every output has the same shape and dtype in both runs and the same
values: exactly for integers and booleans, within tolerance for floats
(NaN matching NaN). With `stdout`, what the program prints
(pl.debug_print, jax.debug.print) must match too, line for line, on the
interpreter (other devices print with C's printf and are not compared).
With `cuda-rejects=TEXT`, the program is one a GPU cannot run (a block
larger than a CTA's shared memory): on the CUDA devices pkc must refuse it
with an error containing TEXT, at the user's line; the interpreter still
compares it with JAX.

With `arch=ARCH` (sm_100a), the program needs a GPU of that architecture
(Blackwell's tcgen05 and tensor memory), which the lent GPUs (Hopper) are
not: the GPU device skips it; the simulator compiles it for cuda:ARCH
(ptxas must accept it) and runs it; the interpreter compares it with the
reference as any other.

With `nosim`, the simulator does not run the case (it is still compiled
with --assemble): a kernel whose warps of one warpgroup wait for one
another (plgpu.WarpMesh), which the simulator runs in lockstep, or a TPU
kernel whose programs on a parallel grid axis all write an output it
discards (splash attention's scratch outputs), a race on a GPU that the
simulator reports.

With `tf32=T`, the CUDA devices compare floats within rtol = atol = T
(at least): for kernels whose TF32 dots (below) multiply values computed
earlier in the kernel (a softmax between two dots), which JAX computes
within an ulp of pkc's, and an ulp can move a value's TF32 truncation by
2^-10 of it. The interpreter keeps the case's own tolerance.

With `tpu-interpret`, JAX runs pallas_call in its TPU interpret mode
(pltpu.InterpretParams), which models DMAs as a TPU has them: the only
mode that runs a copy of a traced size (x_ref.at[pl.ds(s, n)]).

With `x64`, JAX runs with 64-bit types enabled, for kernels over
uint64/int64/float64 arrays (pkc keeps the types a program spells; its
defaults are JAX's without x64, so such kernels spell every type).

reference=FUNCTION replaces the JAX run with FUNCTION, a plain NumPy
function the .pk file defines (pkc never calls it): for kernels JAX's
interpret mode cannot run (Mosaic GPU semaphores). Mosaic GPU kernels run in
JAX's GPU interpret mode with its race detector on; a race fails the case.

With --device=cuda-sim, pkc runs the CUDA backend's kernels (stage 03) on
its SIMT simulator instead of the interpreter (and, as on the GPU, f32
dots at JAX's DEFAULT or HIGH precision multiply operands truncated to
TF32, as Pallas's GPU code does: JAX's reference run does the same); --pkc-arg passes more
options to `pkc run` (--cta-order=shuffled, ...). With --device=cuda it
runs them on the GPU (through the runtime library), and skips (exit 77)
when the machine has no CUDA GPU.

With --assemble TARGET (repeatable: cuda:sm_90a, cuda:sm_80), each case's
export is also compiled to a cubin for TARGET, once per distinct -D: the
simulator runs the backend's IR, not the PTX that ptxas has to accept (a
wgmma whose accumulator does not fit the registers only fails there).
The compile must succeed or reject the program at the user's line (sm_80
has less shared memory than sm_90a); an unlocated error, such as ptxas
refusing the PTX, fails the case.

With --rewrite PASS (and --pk-opt PATH), the interpreter runs the
program's IR after pk-opt's PASS: the export is compiled to pk IR for
--ir-target (`pkc compile --emit=ir`, with the device kind that target
answers), rewritten, and that IR runs. It checks a backend's IR-to-IR
rewrite against JAX: pk-tpu-scalar-array-code, which turns small array
code into scalar loops on SMEM for the TPU's scalar core, computes what
the array code did.

With --reference-cache DIR, JAX's results are kept in DIR and reused:
a case's inputs, outputs, parameter names and printed text, keyed by the
.pk file's text, the case, this script and pk_prelude.py, the installed
JAX and whether f32 dots see TF32 operands. The interpreter's run of a
file records whether any f32 dot would see them; when none would, the
simulator's run (and the GPU's) of the same file reuses its results
without loading JAX at all. The test suite keeps them in the build tree,
so a second run of a test only runs pkc.

With --prepare DIR, nothing runs: the program is compiled for --target
and each case's inputs and JAX's outputs are saved in DIR, for a GPU
machine that has neither pkc nor JAX (gpu_replay.py, scripts/gpu-check.sh).

Usage: differential.py --pkc PATH/TO/pkc FILE.pk [--case "..."]...
"""

import argparse
import contextlib
import hashlib
import importlib.metadata
import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

# NumPy is imported (load_numpy) once it is known that something will run:
# without a GPU, each of the GPU device's tests skips in a tenth of the time.
ml_dtypes = np = None


def load_numpy():
    global ml_dtypes, np
    import ml_dtypes
    import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pk_prelude = None  # imported by load_jax(): it loads JAX, which takes seconds
jax = None
# Whether pkc's kernels run as CUDA code, whose f32 dots use TF32 where
# JAX's precision allows it: JAX then multiplies the operands truncated
# to TF32 too (pk_prelude.gpu_dot_precision).
GPU_DOTS = False
# PK_DIFF_PROFILE=FILE appends one JSON line per phase (JAX import, JAX's
# run, pkc's run, each assemble) with its seconds: where the suite's time
# goes (CONTRIBUTING.md, Tests).
PROFILE = os.environ.get("PK_DIFF_PROFILE")


@contextlib.contextmanager
def phase(name, path, detail=""):
    start = time.monotonic()
    try:
        yield
    finally:
        if PROFILE:
            with open(PROFILE, "a") as f:
                f.write(json.dumps({"file": os.path.basename(path), "phase": name,
                                    "detail": detail,
                                    "seconds": round(time.monotonic() - start, 3)}) + "\n")

DEFAULT_TOLERANCE = {  # (rtol, atol) by dtype
    "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12),
    "float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2),
}


class Case:
    def __init__(self, text):
        tokens = shlex.split(text)
        self.text = text
        self.export = tokens[0]
        self.sizes, self.defines = {}, {}
        self.rtol = self.atol = None
        self.tf32_tolerance = None
        self.seed = 0
        self.low, self.high = -2.0, 2.0
        self.int_range = None
        self.reference = None
        self.stdout = False
        self.x64 = False
        self.nosim = False
        self.tpu_interpret = False
        self.cuda_rejects = None
        self.arch = None
        i = 1
        while i < len(tokens):
            token = tokens[i]
            if token == "-D":
                name, value = tokens[i + 1].split("=", 1)
                self.defines[name] = value
                i += 2
                continue
            if token in ("stdout", "x64", "nosim"):
                setattr(self, token, True)
                i += 1
                continue
            if token == "tpu-interpret":
                self.tpu_interpret = True
                i += 1
                continue
            key, value = token.split("=", 1)
            if key == "rtol":
                self.rtol = float(value)
            elif key == "atol":
                self.atol = float(value)
            elif key == "tf32":
                self.tf32_tolerance = float(value)
            elif key == "seed":
                self.seed = int(value)
            elif key == "range":
                self.low, self.high = (float(v) for v in value.split(":"))
            elif key == "cuda-rejects":
                self.cuda_rejects = value
            elif key == "arch":
                self.arch = value
            elif key == "irange":
                self.int_range = tuple(int(v) for v in value.split(":"))
            elif key == "reference":
                self.reference = value
            else:
                self.sizes[key] = int(value)
            i += 1


def define_args(case):
    """The case's -D options for pkc."""
    return [arg for name, value in case.defines.items() for arg in ("-D", f"{name}={value}")]


def compile_command(pkc, path, case, target, out):
    """`pkc compile` of the case's export (with its -D) for `target` into `out`."""
    return [pkc, "compile", path, "--export", case.export, f"--target={target}", "-o", out,
            *define_args(case)]


def cases_in(path):
    with open(path) as f:
        return [line.split("DIFF:", 1)[1].strip() for line in f if line.startswith("# DIFF:")]


def random_input(rng, dtype, shape, low, high, int_range=None):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if int_range and np.issubdtype(dtype, np.integer):
        if dtype.itemsize == 8:  # bounds past int64 (uint64's top half)
            return rng.integers(int_range[0], int_range[1], size=shape, dtype=dtype)
        return rng.integers(int_range[0], int_range[1], size=shape).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 100, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def load_output(path, expected_dtype):
    array = np.load(path)
    if array.dtype.kind == "V" and np.dtype(expected_dtype) == ml_dtypes.bfloat16:
        array = array.view(ml_dtypes.bfloat16)
    return array


def compare(name, expected, actual, case):
    if expected.shape != actual.shape:
        return f"{name}: shape {actual.shape} from pkc, {expected.shape} from JAX"
    if expected.dtype != actual.dtype:
        return f"{name}: dtype {actual.dtype} from pkc, {expected.dtype} from JAX"
    if expected.dtype.kind in "biu":
        bad = np.argwhere(expected != actual)
        if bad.size:
            i = tuple(bad[0])
            return (f"{name}: {len(bad)} elements differ; first at {i}: "
                    f"pkc {actual[i]!r}, JAX {expected[i]!r}")
        return None
    rtol, atol = DEFAULT_TOLERANCE[str(expected.dtype)]
    rtol = case.rtol if case.rtol is not None else rtol
    atol = case.atol if case.atol is not None else atol
    if GPU_DOTS and case.tf32_tolerance is not None:
        rtol = atol = max(rtol, case.tf32_tolerance)
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        bad = np.argwhere(~close)
        i = tuple(bad[0])
        err = np.nanmax(np.abs(a - e)[~close]) if (~close).any() else 0
        return (f"{name}: {len(bad)} of {e.size} elements differ beyond rtol={rtol}, "
                f"atol={atol} (max error {err:.3g}); first at {i}: pkc {a[i]!r}, JAX {e[i]!r}")
    return None


def reference_run(path, case, workdir):
    """The case's random inputs (also saved as workdir/in{k}.npy), the names
    of the export's parameters, JAX's (or the reference function's)
    outputs, and what the run printed."""
    module = pk_prelude.load_pk(path, case.defines)
    params = module.signature(case.export)
    rng = np.random.default_rng(case.seed)
    inputs = []
    fn_params = list(__import__("inspect").signature(module.exports[case.export]).parameters)
    for index, array_type in enumerate(params):
        shape = []
        for dim in array_type.dims:
            if isinstance(dim, pk_prelude.Symbol):
                if dim.name not in case.sizes:
                    raise SystemExit(f"{path}: case '{case.text}' gives no size for {dim.name}")
                shape.append(case.sizes[dim.name])
            else:
                shape.append(int(dim))
        x = random_input(rng, array_type.dtype, shape, case.low, case.high, case.int_range)
        np.save(os.path.join(workdir, f"in{index}.npy"), x)
        inputs.append(x)
    printed = io.StringIO()
    if case.reference:
        result = module.globals[case.reference](*inputs)
        expected = [np.asarray(o) for o in (result if isinstance(result, (tuple, list)) else [result])]
    else:
        dots = pk_prelude.gpu_dot_precision() if GPU_DOTS else contextlib.nullcontext()
        tpu = pk_prelude.tpu_interpret_mode() if case.tpu_interpret else contextlib.nullcontext()
        with contextlib.redirect_stdout(printed), jax.enable_x64(case.x64), dots, tpu:
            expected = module.run(case.export, inputs)
            jax.effects_barrier()
        if pk_prelude.gpu_races_found():
            raise RaceFound()
    return inputs, fn_params[:len(inputs)], expected, printed.getvalue()


class RaceFound(Exception):
    """JAX's GPU interpret mode found a race: the program is not valid."""


class ReferenceCache:
    """JAX's results for cases, one .npz per case and dot mode in a
    directory (--reference-cache). Entries are written whole (a rename),
    so tests running side by side never read half of one."""

    HERE = os.path.dirname(os.path.abspath(__file__))

    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        digest = hashlib.sha256()
        for name in ("differential.py", "pk_prelude.py"):
            with open(os.path.join(self.HERE, name), "rb") as f:
                digest.update(f.read())
        digest.update(importlib.metadata.version("jax").encode())
        self.tools = digest.hexdigest()
        self.sources = {}  # path -> digest of the .pk file's text, read once

    def _path(self, path, case, gpu_dots):
        if path not in self.sources:
            with open(path, "rb") as f:
                self.sources[path] = hashlib.sha256(f.read()).hexdigest()
        key = f"{self.tools}\0{self.sources[path]}\0{case.text}\0{int(gpu_dots)}"
        return os.path.join(self.directory, hashlib.sha256(key.encode()).hexdigest() + ".npz")

    def load(self, path, case, gpu_dots):
        """(inputs, names, expected, printed), or None. With gpu_dots, the
        plain entry serves when its run saw no f32 dot that TF32 changes."""
        for dots in ((True, False) if gpu_dots else (False,)):
            entry = self._path(path, case, dots)
            if not os.path.exists(entry):
                continue
            with np.load(entry, allow_pickle=False) as data:
                if gpu_dots and not dots and bool(data["tf32_dots"]):
                    return None
                meta = json.loads(str(data["meta"]))
                inputs = [self._array(data[f"in{k}"], d) for k, d in enumerate(meta["inputs"])]
                expected = [self._array(data[f"out{k}"], d)
                            for k, d in enumerate(meta["outputs"])]
            return inputs, meta["names"], expected, meta["printed"]
        return None

    @staticmethod
    def _array(array, dtype):
        # .npz keeps bfloat16 and the other ml_dtypes as raw bytes.
        try:
            return array.view(np.dtype(dtype))
        except TypeError:
            return array.view(np.dtype(getattr(ml_dtypes, dtype)))

    def save(self, path, case, gpu_dots, result, tf32_dots):
        inputs, names, expected, printed = result
        meta = {"names": list(names), "printed": printed,
                "inputs": [str(x.dtype) for x in inputs],
                "outputs": [str(np.asarray(e).dtype) for e in expected]}
        arrays = {f"in{k}": self._raw(x) for k, x in enumerate(inputs)}
        arrays.update({f"out{k}": self._raw(np.asarray(e)) for k, e in enumerate(expected)})
        entry = self._path(path, case, gpu_dots)
        fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".npz.tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, meta=np.array(json.dumps(meta)), tf32_dots=np.array(tf32_dots),
                     **arrays)
        os.replace(temporary, entry)

    @staticmethod
    def _raw(array):
        array = np.array(array, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
        if array.dtype.kind == "V":
            return array.view(np.dtype(f"u{array.dtype.itemsize}"))
        return array


REFERENCE_CACHE = None


def load_jax():
    """Imports JAX and the prelude (seconds): only when a case needs them."""
    global pk_prelude, jax
    if jax is None:
        with phase("import", "jax"):
            import jax as jax_module
            import pk_prelude as prelude_module
        jax, pk_prelude = jax_module, prelude_module


def reference(path, case, workdir):
    """reference_run's results, from the cache when it has them (the
    inputs are still saved in workdir for pkc)."""
    if REFERENCE_CACHE:
        cached = REFERENCE_CACHE.load(path, case, GPU_DOTS)
        if cached:
            for index, x in enumerate(cached[0]):
                np.save(os.path.join(workdir, f"in{index}.npy"), x)
            return cached
    load_jax()
    if GPU_DOTS:  # (tf32_dots is read from plain entries only)
        result = reference_run(path, case, workdir)
        tf32_dots = True
    else:
        with pk_prelude.tf32_dot_watch() as watch:
            result = reference_run(path, case, workdir)
        tf32_dots = watch.seen
    if REFERENCE_CACHE:
        REFERENCE_CACHE.save(path, case, GPU_DOTS, result, tf32_dots)
    return result


def rewritten_ir(pkc, path, case, workdir, rewrite):
    """The case's export as pk IR for rewrite.target, after pk-opt's
    rewrite.passes: (path of the .mlir, problems)."""
    ir, out = os.path.join(workdir, "ir.mlir"), os.path.join(workdir, "rewritten.mlir")
    steps = [[pkc, "compile", path, "--emit=ir", f"--target={rewrite.target}", "--export",
              case.export, "-o", ir, *define_args(case)],
             [rewrite.pk_opt, *[f"--{p}" for p in rewrite.passes], ir, "-o", out]]
    for step in steps:
        run = subprocess.run(step, capture_output=True, text=True)
        if run.returncode != 0:
            return None, [f"failed ({run.returncode}): {' '.join(shlex.quote(a) for a in step)}\n"
                          f"{run.stderr}"]
    return out, []


def run_case(pkc, path, case, workdir, extra_args=(), rewrite=None):
    try:
        with phase("reference", path, case.text):
            inputs, names, expected, printed = reference(path, case, workdir)
    except RaceFound:
        return ["JAX's GPU interpret mode found a data race in the kernel: it is not a valid "
                "Mosaic GPU program"]
    args = [pkc, "run", path, "--entry", case.export, *extra_args, *define_args(case)]
    if rewrite:
        ir, problems = rewritten_ir(pkc, path, case, workdir, rewrite)
        if problems:
            return problems
        args = [pkc, "run", ir, "--entry", case.export, *extra_args]
    for index, name in enumerate(names):
        args += ["--in", f"{name}={os.path.join(workdir, f'in{index}.npy')}"]
    for k in range(len(expected)):
        args += ["--out", f"{k}={os.path.join(workdir, f'out{k}.npy')}"]
    with phase("pkc-run", path, case.text):
        run = subprocess.run(args, capture_output=True, text=True)
    if case.cuda_rejects is not None and "--device=interpreter" not in extra_args:
        if run.returncode == 1 and case.cuda_rejects in run.stderr and f"{path}:" in run.stderr:
            return []
        return [f"pkc should refuse this program for CUDA with '{case.cuda_rejects}' at the "
                f"user's line; it gave ({run.returncode}):\n{run.stderr}"]
    if run.returncode != 0:
        return [f"pkc failed ({run.returncode}): {' '.join(shlex.quote(a) for a in args)}\n"
                f"{run.stderr}"]
    problems = []
    if case.stdout and "--device=interpreter" in extra_args:
        if run.stdout != printed:
            problems.append("printed output differs:\n--- JAX\n" + printed +
                            "--- pkc\n" + run.stdout)
    for k, e in enumerate(expected):
        actual = load_output(os.path.join(workdir, f"out{k}.npy"), e.dtype)
        problem = compare(f"output {k}", e, actual, case)
        if problem:
            problems.append(problem)
    return problems


def assemble_case(pkc, path, case, target, assembled, must_compile=False):
    """Compiles the case's export for `target` down to a cubin, unless an
    earlier case of the file did with the same -D (`assembled`). Returns
    problems: a failed compile that is not a rejection at the user's line
    (with `must_compile`, any failed compile)."""
    if case.cuda_rejects is not None:
        return []
    key = (target, case.export, tuple(sorted(case.defines.items())))
    if key in assembled:
        return []
    assembled.add(key)
    with tempfile.TemporaryDirectory() as out:
        args = compile_command(pkc, path, case, target, out)
        with phase("assemble", path, f"{target} {case.text}"):
            run = subprocess.run(args, capture_output=True, text=True)
    located = (run.returncode == 1 and f"{path}:" in run.stderr and "ptxas" not in run.stderr
               and "internal error" not in run.stderr)
    if run.returncode != 0 and (must_compile or not located):
        return [f"pkc could not compile it for {target} ({run.returncode}): "
                f"{' '.join(shlex.quote(a) for a in args)}\n{run.stderr}"]
    return []


def prepare_case(pkc, path, case, out, target):
    """For a GPU machine without pkc or JAX (scripts/gpu-check.sh): compiles
    the program for `target` and saves the case's inputs and JAX's outputs
    beside it, for gpu_replay.py. Returns problems (a failed compile)."""
    if case.cuda_rejects is not None:
        return []  # checked on the simulator where pkc is
    stem = os.path.splitext(os.path.basename(path))[0]
    key = f"{stem}-{case.export}" + "".join(f"-{k}={v}" for k, v in sorted(case.defines.items()))
    artifacts = os.path.join(out, "artifacts", key)
    manifest = os.path.join(artifacts, stem + ".json")
    if not os.path.exists(manifest):
        args = compile_command(pkc, path, case, target, artifacts)
        run = subprocess.run(args, capture_output=True, text=True)
        if run.returncode != 0:
            return [f"pkc failed ({run.returncode}): {' '.join(shlex.quote(a) for a in args)}\n"
                    f"{run.stderr}"]
    cases = os.path.join(out, "cases")
    os.makedirs(cases, exist_ok=True)
    directory = tempfile.mkdtemp(prefix=key + "-", dir=cases)
    try:
        _, _, expected, _ = reference(path, case, directory)
    except RaceFound:
        return ["JAX's GPU interpret mode found a data race in the kernel"]
    for k, e in enumerate(expected):
        np.save(os.path.join(directory, f"expected{k}.npy"), e)
    with open(os.path.join(directory, "case.json"), "w") as f:
        json.dump({"file": os.path.relpath(path), "case": case.text, "export": case.export,
                   "manifest": os.path.relpath(manifest, directory),
                   "outputs": len(expected)}, f)
    return []


def cuda_gpu_present():
    """Whether the CUDA driver loads and reports a GPU (as the runtime asks)."""
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pkc", required=True)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--device", default="interpreter",
                        choices=["interpreter", "cuda-sim", "cuda"],
                        help="where pkc runs the kernels (pkc run --device)")
    parser.add_argument("--pkc-arg", action="append", default=[],
                        help="another option for pkc run (repeatable)")
    parser.add_argument("--prepare", metavar="DIR",
                        help="instead of running: compile for --target and save inputs and "
                             "JAX's outputs in DIR for tests/pallas/gpu_replay.py")
    parser.add_argument("--target", default="cuda:sm_90a", help="with --prepare")
    parser.add_argument("--assemble", metavar="TARGET", action="append", default=[],
                        help="also compile each case's export to a cubin for TARGET "
                             "(repeatable)")
    parser.add_argument("--rewrite", metavar="PASS", action="append", default=[],
                        help="run the IR after this pk-opt pass (repeatable; interpreter only)")
    parser.add_argument("--pk-opt", help="with --rewrite")
    parser.add_argument("--ir-target", default="tpu", help="with --rewrite: the IR's target")
    parser.add_argument("--reference-cache", metavar="DIR",
                        help="keep JAX's results in DIR and reuse them (see above)")
    parser.add_argument("file")
    options = parser.parse_args()
    rewrite = None
    if options.rewrite:
        if not options.pk_opt or options.device != "interpreter":
            parser.error("--rewrite needs --pk-opt and --device=interpreter")
        rewrite = argparse.Namespace(passes=options.rewrite, pk_opt=options.pk_opt,
                                     target=options.ir_target)
    cases = options.case or cases_in(options.file)
    if not cases:
        print(f"{options.file}: no '# DIFF:' cases", file=sys.stderr)
        return 1
    if options.device == "cuda" and not options.prepare and not cuda_gpu_present():
        print(f"{options.file}: skipped: no CUDA GPU (or driver) on this machine")
        return 77
    load_numpy()
    global GPU_DOTS, REFERENCE_CACHE
    if options.reference_cache:
        REFERENCE_CACHE = ReferenceCache(options.reference_cache)
    GPU_DOTS = bool(options.prepare) or options.device != "interpreter"
    extra = [f"--device={options.device}", *options.pkc_arg]
    failed = skipped = 0
    assembled = set()
    for text in cases:
        case = Case(text)
        if case.arch and (options.prepare or options.device != "interpreter"):
            # No GPU here runs it: ptxas must accept it, and the
            # simulator runs it.
            if options.prepare or options.device == "cuda":
                print(f"skipped: {options.file}: {text} (needs a {case.arch} GPU)")
                skipped += 1
                continue
            problems = assemble_case(options.pkc, options.file, case, f"cuda:{case.arch}",
                                     assembled, must_compile=True)
            if not case.nosim:
                with tempfile.TemporaryDirectory() as workdir:
                    problems += run_case(options.pkc, options.file, case, workdir,
                                         [*extra, f"--target=cuda:{case.arch}"])
        elif options.prepare:
            problems = prepare_case(options.pkc, options.file, case, options.prepare, options.target)
        else:
            problems = []
            if not (case.nosim and options.device == "cuda-sim"):
                with tempfile.TemporaryDirectory() as workdir:
                    problems = run_case(options.pkc, options.file, case, workdir, extra, rewrite)
            for target in options.assemble:
                problems += assemble_case(options.pkc, options.file, case, target, assembled)
        status = "ok" if not problems else "FAILED"
        print(f"{status}: {options.file}: {text}")
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
        failed += bool(problems)
    if skipped == len(cases):
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
