#!/usr/bin/env python3
"""Replays prepared differential cases on a GPU, with pkc's Python package.

A GPU machine may have neither pkc (it needs LLVM and MLIR) nor the JAX
version the tests compare against. `differential.py --prepare DIR` compiles
each case's program where pkc is and saves its inputs and JAX's outputs;
this script, on the GPU machine, loads each artifact with `pkc.load`, runs
the export on the inputs (CuPy arrays, PyTorch tensors for bfloat16) and
compares the outputs as differential.py does.

Usage: gpu_replay.py DIR [--filter TEXT[,TEXT...]] [--timeout S] [--wrap COMMAND]
Prints "ok:" / "FAILED:" per case and a summary; exits 1 if any failed,
77 without a GPU. Cases run in worker processes: one that hangs, crashes
or breaks its CUDA context fails alone and the rest go on in a fresh
worker; with --wrap (compute-sanitizer) each report fails its case.
"""
import argparse
import glob
import json
import os
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential  # noqa: E402  (Case, compare)

differential.load_numpy()


def to_device(x, use_torch):
    if use_torch:
        import torch
        if x.dtype == ml_dtypes.bfloat16:
            return torch.from_numpy(x.view(np.uint16).copy()).view(torch.bfloat16).cuda()
        return torch.from_numpy(np.ascontiguousarray(x)).cuda()
    import cupy
    return cupy.asarray(x)


def to_host(y, expected_dtype):
    if hasattr(y, "get"):  # CuPy
        return y.get()
    import torch
    if y.dtype == torch.bfloat16:
        return y.view(torch.uint16).cpu().numpy().view(ml_dtypes.bfloat16)
    return y.cpu().numpy().astype(expected_dtype, copy=False)


def replay(directory, pkc):
    with open(os.path.join(directory, "case.json")) as f:
        info = json.load(f)
    case = differential.Case(info["case"])
    inputs = [np.load(p) for p in sorted(glob.glob(os.path.join(directory, "in*.npy")),
                                         key=lambda p: int(os.path.basename(p)[2:-4]))]
    inputs = [x.view(ml_dtypes.bfloat16) if x.dtype.kind == "V" else x for x in inputs]
    expected = [np.load(os.path.join(directory, f"expected{k}.npy")) for k in range(info["outputs"])]
    expected = [e.view(ml_dtypes.bfloat16) if e.dtype.kind == "V" else e for e in expected]
    # PyTorch for bfloat16 (CuPy has none), CuPy for the rest (PyTorch
    # lacks some unsigned types).
    use_torch = any(a.dtype == ml_dtypes.bfloat16 for a in inputs + expected)
    module = pkc.load(os.path.normpath(os.path.join(directory, info["manifest"])))
    arguments = {}
    if not inputs:
        # With no input to allocate like, the outputs are given (out=).
        given = [to_device(np.zeros_like(e), use_torch) for e in expected]
        arguments["out"] = given[0] if len(given) == 1 else tuple(given)
    outputs = module[info["export"]](*[to_device(x, use_torch) for x in inputs], **arguments)
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    problems = []
    for k, e in enumerate(expected):
        problem = differential.compare(f"output {k}", e, to_host(outputs[k], e.dtype), case)
        if problem:
            problems.append(problem)
    return info, problems


def run_cases(directories, pkc):
    """The worker: runs each case, one line per result; stops at the first
    case that raises (a launch error may leave the CUDA context unusable;
    the supervisor goes on in a fresh process)."""
    for directory in directories:
        print(f"begin: {directory}", flush=True)
        raised = False
        try:
            info, problems = replay(directory, pkc)
            name = f"{info['file']}: {info['case']}"
        except Exception as error:  # a launch error is the case failing, not the run
            name, problems = os.path.basename(directory), [f"{type(error).__name__}: {error}"]
            raised = True
        print(f"{'ok' if not problems else 'FAILED'}: {name}")
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
        sys.stdout.flush()
        if raised:
            return 3
    return 0


# Lines compute-sanitizer prints that name no case's error: its banner,
# the process's totals (each report is counted where it is printed) and the
# worker's own exit status.
SANITIZER_QUIET = ("========= COMPUTE-SANITIZER", "========= ERROR SUMMARY:",
                   "========= RACECHECK SUMMARY:", "========= Target application returned")


class Supervisor:
    """Runs the cases in worker processes, so that a case that hangs, kills
    its process or leaves the CUDA context broken fails alone: the rest go
    on in a fresh worker. Sanitizer reports between a case's start and the
    next one's are that case's."""

    def __init__(self, options):
        self.options = options
        self.failed = 0
        self.done = 0

    def finish(self, directory, result, extra):
        if result is None:
            result = [f"FAILED: {os.path.basename(directory)}"]
        reports = [line for line in extra if line.startswith("=========")
                   and not line.startswith(SANITIZER_QUIET)]
        if reports and result[0].startswith("ok: "):
            result[0] = "FAILED: " + result[0][4:]
        for line in result + ["    " + r for r in reports[:12]]:
            print(line, flush=True)
        self.done += 1
        self.failed += result[0].startswith("FAILED")

    def run(self, cases):
        remaining = list(cases)
        while remaining:
            remaining = self.run_worker(remaining)

    def run_worker(self, cases):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(cases))
        command = shlex.split(self.options.wrap) + [
            sys.executable, os.path.abspath(__file__), self.options.dir, "--worker", f.name]
        worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, bufsize=1, start_new_session=True)
        current, result, extra, finished = None, None, [], set()
        deadline = time.monotonic() + self.options.timeout
        hung = False
        while True:
            ready, _, _ = select.select([worker.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                hung = True
                os.killpg(worker.pid, signal.SIGKILL)
                break
            line = worker.stdout.readline()
            if not line:
                break
            line = line.rstrip("\n")
            if line.startswith("begin: "):
                if current is not None:
                    self.finish(current, result, extra)
                    finished.add(current)
                current, result, extra = line[len("begin: "):], None, []
                deadline = time.monotonic() + self.options.timeout
            elif line.startswith(("ok: ", "FAILED: ")) and current is not None and result is None:
                result = [line]
            elif result is not None and line.startswith("    "):
                result.append(line)
            else:
                extra.append(line)
        status = worker.wait()
        os.unlink(f.name)
        if current is not None:
            if result is None:
                why = (f"no result in {self.options.timeout:g} s (hung)" if hung
                       else f"its process ended (exit status {status}) before a result")
                tail = [line for line in extra if line.strip()][-8:]
                result = [f"FAILED: {os.path.basename(current)}", "    " + why] + ["    " + t for t in tail]
            self.finish(current, result, extra)
            finished.add(current)
        elif status != 0:
            # Nothing started: the worker cannot run at all; fail the rest
            # rather than retry forever.
            for c in cases:
                self.finish(c, [f"FAILED: {os.path.basename(c)}",
                                f"    the replay could not start (exit status {status})"] +
                            ["    " + t for t in extra[-8:]], [])
            return []
        return [c for c in cases if c not in finished]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--filter", default="",
                        help="run only the cases whose name contains one of these comma-separated texts")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds a case may run before it counts as hung (default 120)")
    parser.add_argument("--wrap", default="",
                        help="a command to run the cases under, e.g. 'compute-sanitizer --tool memcheck'")
    parser.add_argument("--worker", metavar="LIST", help=argparse.SUPPRESS)
    options = parser.parse_args()
    # The GPU's f32 dots use TF32 where JAX's precision allows it (cases'
    # tf32= tolerances apply), as the prepared expectations assume.
    differential.GPU_DOTS = True
    if options.worker:
        import pkc
        with open(options.worker) as f:
            return run_cases([line for line in f.read().splitlines() if line], pkc)
    if not differential.cuda_gpu_present():
        print("gpu_replay: skipped: no CUDA GPU (or driver) on this machine")
        return 77
    texts = options.filter.split(",")
    cases = sorted(d for d in glob.glob(os.path.join(options.dir, "cases", "*"))
                   if any(text in os.path.basename(d) for text in texts))
    supervisor = Supervisor(options)
    supervisor.run(cases)
    print(f"gpu_replay: {len(cases) - supervisor.failed} of {len(cases)} cases match JAX"
          + (f" (under {options.wrap})" if options.wrap else ""))
    return 1 if supervisor.failed else 0


if __name__ == "__main__":
    sys.exit(main())
