#!/usr/bin/env python3
"""pkc's Mosaic output vs. Pallas's own Mosaic lowering of the same source.

For each case the .pk file is compiled twice:

  * by pkc: `pkc compile --target=tpu` (sizes fixed with -D), giving the
    Mosaic module text and the launch manifest;
  * by JAX: the file runs as Python under JAX (tests/pallas/pk_prelude.py)
    and `jax.export(..., platforms=["tpu"])` lowers it for a TPU without
    one; each tpu_custom_call's backend config holds Pallas's Mosaic module.

Then pkc's text must parse and verify with JAX's own Mosaic dialect
bindings, serialize as JAX serializes a kernel for tpu_custom_call, and
become a callable TPU kernel (`tpu_custom_call.as_tpu_kernel`, exported
for TPU). Each kernel is compared with Pallas's: name and signature,
function attributes, window_params, transform functions, and the body.
Bodies and transform functions are compared after MLIR's canonicalize and
cse on both sides (JAX's pass pipeline, the first thing Mosaic runs), so
that constant placement and Pallas's unused loads before stores do not
count. The symbolic build (no -D) must parse and verify too.

A case is a line (in a .pk file after '# TPU:', or in a .cases file as
'FILE.pk: ...'):

    <export> [NAME=INT ...] [-D NAME=VALUE ...] [static] [target=tpu:GEN]
             [differs=PART,...]

NAME=INT fixes a symbolic size (in both compilations); target=tpu:GEN
compiles for one TPU generation (programs that ask the device kind;
JAX, lowering without a TPU, sees "cpu"); `static` skips the
symbolic build (its blocks only fit the TPU tiles at these sizes); differs= lists the
parts expected to differ (body, transforms, attributes, signature,
manifest), each documented in docs/tpu.md. A part that differs without
being listed fails the case, and so does one listed that matches.

Exit status: 0 all cases pass, 1 some failed, 77 JAX is missing.

Each case compiles only its export (pk-opt drops the file's others), as
JAX lowers only the export it calls.

Usage: compare_jax.py --pkc PATH --pk-opt PATH FILE.pk|FILE.cases [--case "..."] [-v]

Diffs are cut at 60 lines; PK_DIFF_LINES=N shows more.
"""

import argparse
import base64
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

try:
    import jax
    import jax.numpy as jnp
    from jax._src import tpu_custom_call
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import tpu as jax_tpu
    from jax._src.pallas.mosaic import tpu_info
    from jax.experimental import pallas as pl
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager
except ImportError as e:  # pragma: no cover
    print(f"skipped: JAX with Mosaic TPU support is not installed ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pallas"))
import pk_prelude  # noqa: E402

PARTS = ("signature", "attributes", "window_params", "transforms", "body", "manifest")

# Pallas asks the device for its tiling when it checks 1-D blocks; there is
# no TPU here, so the CPU reports a TPU v6e's (8 sublanes, 128 lanes).
tpu_info.registry.setdefault(
    "cpu", lambda: tpu_info.get_tpu_info_for_chip(tpu_info.ChipVersion.TPU_V6E, 1))

# The prelude forces interpret mode (for the differential tests); here the
# real TPU lowering runs, with the compiler parameters.
_real_pallas_call = pk_prelude._real_pallas_call


def _pallas_call(kernel, out_shape, **kwargs):
    kwargs.pop("interpret", None)
    return _real_pallas_call(kernel, out_shape, **kwargs)


pl.pallas_call = _pallas_call
# Kernels over a TensorCore mesh too.
pl.kernel = pk_prelude._real_pl_kernel
pl.core_map = pk_prelude._real_core_map


def new_context():
    ctx = jax_mlir.make_ir_context()
    jax_tpu.register_dialect(ctx)
    return ctx


class Case:
    def __init__(self, path, text):
        self.path = path
        self.text = text
        tokens = shlex.split(text)
        self.export = tokens[0]
        self.sizes, self.defines, self.differs = {}, {}, set()
        self.static = False
        self.target = "tpu"
        i = 1
        while i < len(tokens):
            token = tokens[i]
            if token == "static":
                self.static = True
                i += 1
                continue
            if token == "-D":
                name, value = tokens[i + 1].split("=", 1)
                self.defines[name] = value
                i += 2
                continue
            key, value = token.split("=", 1)
            if key == "target":
                self.target = value
            elif key == "differs":
                self.differs = set(value.split(","))
                unknown = self.differs - set(PARTS)
                if unknown:
                    raise SystemExit(f"{path}: unknown parts {sorted(unknown)} in '{text}'")
            else:
                self.sizes[key] = int(value)
            i += 1


# ----------------------------------------------------------------------------
# The two compilations
# ----------------------------------------------------------------------------

def pkc_defines(case):
    args = []
    for name, value in {**case.defines, **{k: str(v) for k, v in case.sizes.items()}}.items():
        args += ["-D", f"{name}={value}"]
    return args


def one_export(tools, case, defines, workdir):
    """The case's export alone, as pk IR (other exports of a corpus file may
    break TPU rules that JAX, lowering one export, never sees)."""
    cmd = [tools.pkc, "compile", "--emit=ir", f"--target={case.target}", "--debug-info",
           case.path] + defines
    ir_text = subprocess.run(cmd, capture_output=True, text=True)
    if ir_text.returncode != 0:
        raise CaseError(f"pkc failed: {shlex.join(cmd)}\n{ir_text.stderr}")
    opt = [tools.pk_opt, f"--symbol-privatize=exclude={case.export}", "--symbol-dce",
           "--mlir-print-debuginfo"]
    only = subprocess.run(opt, input=ir_text.stdout, capture_output=True, text=True)
    if only.returncode != 0:
        raise CaseError(f"pk-opt failed: {shlex.join(opt)}\n{only.stderr}")
    path = os.path.join(workdir, os.path.splitext(os.path.basename(case.path))[0] + ".mlir")
    with open(path, "w") as f:
        f.write(only.stdout)
    return path


def run_pkc(tools, case, workdir):
    """pkc's artifact text and manifest for the case's sizes."""
    out = os.path.join(workdir, "pkc")
    source = one_export(tools, case, pkc_defines(case), workdir)
    cmd = [tools.pkc, "compile", f"--target={case.target}", "-o", out, source]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise CaseError(f"pkc failed: {shlex.join(cmd)}\n{run.stderr}")
    stem = os.path.splitext(os.path.basename(case.path))[0]
    with open(os.path.join(out, stem + ".mlir")) as f:
        text = f.read()
    with open(os.path.join(out, stem + ".json")) as f:
        manifest = json.load(f)
    return text, manifest


def run_pkc_symbolic(tools, case, workdir):
    """pkc's module with the sizes left symbolic (only -D constants)."""
    defines = []
    for name, value in case.defines.items():
        defines += ["-D", f"{name}={value}"]
    source = one_export(tools, case, defines, workdir)
    cmd = [tools.pkc, "compile", f"--target={case.target}", "--emit=mlir", "-o", "-", source]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise CaseError(f"pkc failed on the symbolic build: {shlex.join(cmd)}\n{run.stderr}")
    return run.stdout


def jax_custom_calls(case):
    """(kernel_name, backend config, Mosaic module text) per tpu_custom_call
    of the export, as Pallas lowers it for TPU."""
    module = pk_prelude.load_pk(case.path, case.defines)
    args = []
    for array_type in module.signature(case.export):
        shape = []
        for dim in array_type.dims:
            if isinstance(dim, pk_prelude.Symbol):
                if dim.name not in case.sizes:
                    raise CaseError(f"the case gives no size for {dim.name}")
                shape.append(case.sizes[dim.name])
            else:
                shape.append(int(dim))
        args.append(jax.ShapeDtypeStruct(tuple(shape), array_type.dtype))
    module.globals.update(case.sizes)
    exported = jax.export.export(jax.jit(module.exports[case.export]), platforms=["tpu"])(*args)
    hlo = exported.mlir_module()
    calls = []
    for m in re.finditer(r'backend_config = "(.*?)", kernel_name = "(.*?)"', hlo):
        # MLIR escapes the string's bytes as \XX (quotes, and the newlines
        # of a cost estimate's JSON).
        text = re.sub(r"\\([0-9A-Fa-f]{2})", lambda e: chr(int(e.group(1), 16)), m.group(1))
        config = json.loads(text)
        body = base64.b64decode(config["custom_call_config"]["body"])
        ctx = new_context()
        with ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            mosaic = ir.Module.parse(body)
            # Undo the serialization Pallas applied for the custom call.
            PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(mosaic.operation)
            calls.append((m.group(2), config["custom_call_config"], str(mosaic)))
    return calls


class CaseError(Exception):
    pass


# ----------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------

def funcs_of(module):
    return {op.attributes["sym_name"].value: op for op in module.body.operations
            if op.operation.name == "func.func"}


def kernel_of(funcs):
    kernels = [f for name, f in funcs.items() if not name.startswith("transform_")]
    if len(kernels) != 1:
        raise CaseError(f"expected one kernel function, found {sorted(funcs)}")
    return kernels[0]


def canonical(module_text):
    """The module after canonicalize and cse, parsed in a fresh context."""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(module_text)
        PassManager.parse("builtin.module(canonicalize,cse)").run(module.operation)
        return str(module)


def structure(op):
    """A function as lines of ops, independent of SSA names and of where
    constants sit: each op's name, attributes, result types and operands,
    an operand being a block argument, an earlier op's result, or a
    constant's value. Constants themselves are not listed."""
    names = {}
    lines = []

    def operand(v):
        owner = v.owner
        if isinstance(owner, ir.Operation) or hasattr(owner, "name"):
            opview = owner
            if getattr(opview, "name", None) == "arith.constant":
                return f"const({opview.attributes['value']})"
        return names.get(v, "?")

    def visit(op, depth):
        for region_index, region in enumerate(op.regions):
            for block_index, block in enumerate(region.blocks):
                args = []
                for i, arg in enumerate(block.arguments):
                    names[arg] = f"^{depth}.{region_index}.{block_index}.a{i}"
                    args.append(f"{names[arg]}: {arg.type}")
                lines.append("  " * depth + f"region {region_index} block({', '.join(args)})")
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name == "arith.constant":
                        continue
                    for r in inner.results:
                        names[r] = f"%{len(names)}"
                    attrs = {a: str(inner.attributes[a]) for a in inner.attributes
                             if a not in ("sym_name",)}
                    results = ", ".join(f"{names[r]}: {r.type}" for r in inner.results)
                    operands = ", ".join(operand(v) for v in inner.operands)
                    lines.append("  " * (depth + 1) + f"{results} = {inner.name}({operands}) {attrs}")
                    visit(inner, depth + 1)

    visit(op.operation, 0)
    return "\n".join(lines)


def func_text(module_text, name):
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(module_text)
        return structure(funcs_of(module)[name])


def diff(a, b, label_a="pkc", label_b="JAX"):
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), label_a, label_b, lineterm="", n=1)
    return "\n".join(list(lines)[:int(os.environ.get("PK_DIFF_LINES", "60"))])


def compare_kernel(pkc_text, jax_text):
    """Per part: None when the part matches, else a description."""
    result = {}
    ctx = new_context()
    with ctx, ir.Location.unknown():
        mine = ir.Module.parse(pkc_text)
        theirs = ir.Module.parse(jax_text)
        my_funcs, their_funcs = funcs_of(mine), funcs_of(theirs)
        my_kernel, their_kernel = kernel_of(my_funcs), kernel_of(their_funcs)
        my_name = my_kernel.attributes["sym_name"].value
        their_name = their_kernel.attributes["sym_name"].value
        sig_mine = f"{my_name} {my_kernel.attributes['function_type']}"
        sig_theirs = f"{their_name} {their_kernel.attributes['function_type']}"
        result["signature"] = None if sig_mine == sig_theirs else f"{sig_mine}\n   vs {sig_theirs}"

        def attrs(kernel):
            return {name: str(kernel.attributes[name]) for name in kernel.attributes
                    if name not in ("sym_name", "function_type", "window_params")}
        a_mine, a_theirs = attrs(my_kernel), attrs(their_kernel)
        result["attributes"] = None if a_mine == a_theirs else \
            "\n".join(f"{k}: pkc {a_mine.get(k)}, JAX {a_theirs.get(k)}"
                      for k in sorted(set(a_mine) | set(a_theirs)) if a_mine.get(k) != a_theirs.get(k))
        w_mine = str(my_kernel.attributes["window_params"]) if "window_params" in my_kernel.attributes else None
        w_theirs = str(their_kernel.attributes["window_params"]) if "window_params" in their_kernel.attributes else None
        result["window_params"] = None if w_mine == w_theirs else f"pkc {w_mine}\n   JAX {w_theirs}"
        transforms_mine = sorted(n for n in my_funcs if n.startswith("transform_"))
        transforms_theirs = sorted(n for n in their_funcs if n.startswith("transform_"))

    canon_mine, canon_theirs = canonical(pkc_text), canonical(jax_text)
    if transforms_mine != transforms_theirs:
        result["transforms"] = f"pkc has {transforms_mine}, JAX {transforms_theirs}"
    else:
        problems = []
        for name in transforms_mine:
            t_mine, t_theirs = func_text(canon_mine, name), func_text(canon_theirs, name)
            if t_mine != t_theirs:
                problems.append(diff(t_mine, t_theirs))
        result["transforms"] = "\n".join(problems) or None
    b_mine = func_text(canon_mine, my_name)
    b_theirs = func_text(canon_theirs, their_name)
    result["body"] = None if b_mine == b_theirs else diff(b_mine, b_theirs)
    return result


def nested_modules(text):
    """Name -> standalone module text, for each kernel module of pkc's file."""
    ctx = new_context()
    with ctx, ir.Location.unknown():
        top = ir.Module.parse(text)
        if not top.operation.verify():
            raise CaseError("pkc's module does not verify with JAX's Mosaic dialect")
        modules = {}
        for op in top.body.operations:
            if op.operation.name != "builtin.module":
                raise CaseError(f"unexpected top-level op {op.operation.name}")
            modules[op.attributes["sym_name"].value] = str(op)
        return modules


def check_runnable(kernel_text, step, manifest):
    """JAX's toolchain takes the module as a TPU kernel: serialization for
    tpu_custom_call, then a jitted call exported for TPU."""
    exports = {e["name"]: e for e in manifest["exports"]}
    ctx = new_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(kernel_text)
        if not module.operation.verify():
            raise CaseError("a kernel module does not verify")
        tpu_custom_call._lower_mosaic_module_to_asm(module)

    def aval(entry, params):
        param = params[entry["param"]] if "param" in entry else None
        if param is None:
            raise CaseError(f"cannot type operand {entry} without a param")
        dtype = jnp.dtype("int32" if param["dtype"] == "bool" else param["dtype"])
        return jax.ShapeDtypeStruct(tuple(param["shape"]), dtype)

    export = exports[step["export"]]
    call = step["call"]
    params = export["params"]
    try:
        results = [aval(r, params) for r in call["results"]]
        operands = [aval(o, params) for o in call["operands"]]
    except CaseError:
        return  # temporaries: typed by the kernel that makes them; skip
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(kernel_text)
        kernel = tpu_custom_call.as_tpu_kernel(
            module, results, kernel_name=call["kernel"],
            input_output_aliases=tuple(tuple(a) for a in call["input_output_aliases"]))
    exported = jax.export.export(jax.jit(kernel), platforms=["tpu"])(*operands)
    if "tpu_custom_call" not in exported.mlir_module():
        raise CaseError("as_tpu_kernel did not produce a tpu_custom_call")


def run_case(tools, case, workdir, verbose):
    text, manifest = run_pkc(tools, case, workdir)
    modules = nested_modules(text)
    if not case.static:
        nested_modules(run_pkc_symbolic(tools, case, workdir))  # parses and verifies
    steps = []
    for program in manifest["artifacts"][0]["programs"]:
        for step in program["steps"]:
            if "call" in step:
                steps.append({"export": program["export"], **step})
    steps = [s for s in steps if s["export"] == case.export]
    # Array code at export level becomes kernels of pkc's own, where JAX
    # runs XLA ops: each must be a valid, runnable Mosaic kernel; the
    # user's kernels are compared with Pallas's.
    for step in steps:
        if step["call"].get("generated"):
            check_runnable(modules[step["call"]["module"]], step, manifest)
    steps = [s for s in steps if not s["call"].get("generated")]
    calls = jax_custom_calls(case)
    if len(steps) != len(calls):
        raise CaseError(f"pkc made {len(steps)} kernels, JAX {len(calls)}")
    differing = {}
    for step, (kernel_name, config, jax_text) in zip(steps, calls):
        kernel_text = modules[step["call"]["module"]]
        check_runnable(kernel_text, step, manifest)
        parts = compare_kernel(kernel_text, jax_text)
        # The manifest: kernel name, aliases and cost estimate as JAX passes them.
        problems = []
        if step["call"]["kernel"] != kernel_name:
            problems.append(f"kernel {step['call']['kernel']} vs {kernel_name}")
        if "cost_estimate" in config or "cost_estimate" in step["call"]:
            mine = step["call"].get("cost_estimate")
            theirs = config.get("cost_estimate")
            if mine != theirs:
                problems.append(f"cost_estimate {mine} vs {theirs}")
        parts["manifest"] = "\n".join(problems) or None
        for part, problem in parts.items():
            if problem:
                differing.setdefault(part, []).append(f"[{step['call']['module']}] {problem}")
    failures = []
    for part in PARTS:
        if part in differing and part not in case.differs:
            failures.append(f"{part} differs from JAX:\n" + "\n".join(differing[part]))
        elif part not in differing and part in case.differs:
            failures.append(f"{part} matches JAX but the case says differs={part}; update the case")
        elif part in differing and verbose:
            print(f"    (expected) {part} differs:\n      " +
                  "\n".join(differing[part]).replace("\n", "\n      "))
    return failures, len(steps)


def cases_in(path):
    with open(path) as f:
        lines = [line.strip() for line in f]
    if path.endswith(".cases"):
        root = os.path.normpath(os.path.join(HERE, "..", ".."))
        out = []
        for line in lines:
            if line and not line.startswith("#"):
                file, text = line.split(":", 1)
                out.append(Case(os.path.join(root, file.strip()), text.strip()))
        return out
    return [Case(path, line.split("TPU:", 1)[1].strip()) for line in lines
            if line.startswith("# TPU:")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pkc", required=True)
    parser.add_argument("--pk-opt", required=True)
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("file")
    options = parser.parse_args()
    cases = [Case(options.file, c) for c in options.case] if options.case else cases_in(options.file)
    if not cases:
        print(f"{options.file}: no cases", file=sys.stderr)
        return 1
    failed = 0
    for case in cases:
        with tempfile.TemporaryDirectory() as workdir:
            try:
                failures, kernels = run_case(options, case, workdir, options.verbose)
            except CaseError as e:
                failures, kernels = [str(e)], 0
            except Exception as e:  # JAX failed to lower: report, do not crash
                failures, kernels = [f"{type(e).__name__}: {e}"], 0
        status = "ok" if not failures else "FAILED"
        print(f"{status}: {os.path.relpath(case.path)}: {case.text} ({kernels} kernels)")
        for f in failures:
            print("    " + f.replace("\n", "\n    "))
        failed += bool(failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
