"""pkc.compile: run the compiler, keep what it made, load it.

Compiled artifacts are cached (like Triton's cache) under
$PKC_CACHE_DIR, or $XDG_CACHE_HOME/pkc, or ~/.cache/pkc. An entry is keyed
by the compiler (its path, size and modification time), the source's
bytes and directory (imports are searched there), the targets, the
definitions and the include directories; it also records every file the
compilation read (pkc's -MD dependency list) with its SHA-256, so that
editing an imported .pk file recompiles too, and nothing else does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from typing import Any, Mapping, Optional, Sequence, Union

from . import _pkc

__all__ = ["compile", "CompileError", "cache_dir", "find_pkc", "default_target"]


class CompileError(_pkc.Error):
    """pkc rejected the program (its diagnostics are the message) or the
    command."""

    status = "PKC_COMPILE_ERROR"
    code = -1


def cache_dir() -> str:
    """Where compiled artifacts are kept."""
    if os.environ.get("PKC_CACHE_DIR"):
        return os.environ["PKC_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pkc")


def find_pkc(pkc: Optional[str] = None) -> str:
    """The compiler: `pkc`, else $PKC, else the build tree's (for a package
    in a build tree), else `pkc` on PATH."""
    candidates = [pkc, os.environ.get("PKC")]
    try:
        from . import _build
        candidates.append(_build.PKC)
    except ImportError:
        pass
    candidates.append(shutil.which("pkc"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise CompileError("the pkc compiler was not found: put it on PATH, set $PKC, or pass "
                       "pkc=PATH (pip install ./python installs only the runtime side)")


@functools.lru_cache(maxsize=None)
def _targets(pkc: str) -> tuple[str, ...]:
    run = subprocess.run([pkc, "--print-targets"], capture_output=True, text=True)
    if run.returncode != 0:
        raise CompileError(f"{pkc} --print-targets failed:\n{run.stderr}")
    return tuple(run.stdout.split())


def default_target(device: int = 0, pkc: Optional[str] = None) -> str:
    """The target for a CUDA device, as `pkc run --device=cuda` picks it:
    its own architecture (sm_90a on 9.0), else the newest pkc target of its
    major version below it."""
    major, minor = _pkc.compute_capability(device)
    supported = _targets(find_pkc(pkc))
    if f"cuda:sm_{major}{minor}a" in supported:
        return f"cuda:sm_{major}{minor}a"
    for m in range(minor, -1, -1):
        if f"cuda:sm_{major}{m}" in supported:
            return f"cuda:sm_{major}{m}"
    raise CompileError(f"pkc has no CUDA target for compute capability {major}.{minor} "
                       f"(it compiles for {' '.join(t for t in supported if t.startswith('cuda:'))})")


def _define(value: Any) -> str:
    """A -D value: a .pk expression. Strings are taken as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_define(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise TypeError(f"cannot pass {value!r} to pkc as a definition; give a .pk expression "
                    "as a string")


def _sha256_file(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _read_depfile(path: str) -> list[str]:
    """The prerequisites of pkc's Makefile-style dependency file."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    _, _, prerequisites = text.partition(": ")
    files, current, i = [], "", 0
    while i < len(prerequisites):
        c = prerequisites[i]
        if c == "\\" and i + 1 < len(prerequisites):
            current += prerequisites[i + 1]
            i += 2
            continue
        if c == "$" and prerequisites[i + 1:i + 2] == "$":
            current += "$"
            i += 2
            continue
        if c.isspace():
            if current:
                files.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        files.append(current)
    return files


def _fresh(entry: str) -> bool:
    """The entry is complete and every file it was compiled from is as it was."""
    try:
        with open(os.path.join(entry, "deps.json")) as f:
            deps = json.load(f)
    except (OSError, ValueError):
        return False
    return all(_sha256_file(path) == digest for path, digest in deps)


def compile(source: Union[str, os.PathLike], *, target: Union[str, Sequence[str], None] = None,
            defines: Optional[Mapping[str, Any]] = None, include_dirs: Sequence[str] = (),
            device: Optional[int] = None, name: str = "kernel", pkc: Optional[str] = None,
            cache: bool = True):
    """Compiles a .pk file (a path) or .pk source text and loads the result.

    target: "cuda:sm_90a", "cuda:sm_80", "tpu", or a list of them (one
    manifest for all); by default the CUDA device's own (see
    `default_target`). defines: {"BLOCK": 256, "N": 4096} as pkc's -D (a
    string value is a .pk expression). include_dirs: -I directories for
    imports (source text also searches the working directory). name: the
    file stem for source text.

    Returns a `pkc.Module` when a CUDA target was compiled (loaded on
    `device`), else a `pkc.jax.TpuModule`.
    """
    from . import _runtime

    pkc = find_pkc(pkc)
    dev = -1 if device is None else device
    if target is None:
        targets = [default_target(0 if dev < 0 else dev, pkc)]
    elif isinstance(target, str):
        targets = [target]
    else:
        targets = list(target)
    includes = [os.path.abspath(d) for d in include_dirs]

    is_path = isinstance(source, os.PathLike) or ("\n" not in source and
                                                   (source.endswith(".pk") or os.path.exists(source)))
    if is_path:
        path = os.path.abspath(os.fspath(source))
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError as e:
            raise CompileError(f"cannot read {path}: {e.strerror}") from None
        stem = os.path.splitext(os.path.basename(path))[0]
    else:
        text = source.encode()
        stem = name
        includes.append(os.getcwd())
        path = None

    st = os.stat(pkc)
    key_parts = {
        "pkc": [os.path.abspath(pkc), st.st_size, st.st_mtime_ns],
        "source": hashlib.sha256(text).hexdigest(),
        "directory": os.path.dirname(path) if path else None,
        "targets": targets,
        "defines": sorted((k, _define(v)) for k, v in (defines or {}).items()),
        "includes": includes,
        "stem": stem,
    }
    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()
    root = cache_dir()
    entry = os.path.join(root, key[:2], key)
    manifest = os.path.join(entry, stem + ".json")
    if not (cache and _fresh(entry) and os.path.exists(manifest)):
        _build(pkc, root, entry, text, path, stem, targets, key_parts["defines"], includes)

    if any(t.startswith("cuda:") for t in targets):
        return _runtime.load(manifest, device=device)
    from .jax import TpuModule
    return TpuModule(manifest)


def _build(pkc: str, root: str, entry: str, text: bytes, path: Optional[str], stem: str,
           targets: list[str], defines: list[tuple[str, str]], includes: list[str]) -> None:
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="build-", dir=root)
    try:
        if path is None:
            path = os.path.join(work, stem + ".pk")
            with open(path, "wb") as f:
                f.write(text)
        out = os.path.join(work, "out")
        depfile = os.path.join(work, "deps.d")
        cmd = [pkc, "compile", path, "-o", out, "-MD", "-MF", depfile]
        cmd += [f"--target={t}" for t in targets]
        for name, value in defines:
            cmd += ["-D", f"{name}={value}"]
        for d in includes:
            cmd += ["-I", d]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise CompileError(run.stderr.strip() or f"pkc failed: {shlex.join(cmd)}")
        # A source given as text was written to `work`; it is part of the
        # key already, so only real files are dependencies.
        deps = [(os.path.abspath(p), _sha256_file(p)) for p in _read_depfile(depfile)
                if not p.startswith(work)]
        with open(os.path.join(out, "deps.json"), "w") as f:
            json.dump(deps, f)
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        if os.path.exists(entry):
            # Stale: move it aside (another process may be reading it).
            stale = tempfile.mkdtemp(prefix="stale-", dir=root)
            try:
                os.rename(entry, os.path.join(stale, "old"))
            except OSError:
                pass
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(out, entry)
        except OSError:
            if not _fresh(entry):  # another process won the race with the same result
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
