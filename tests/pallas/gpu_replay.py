#!/usr/bin/env python3
"""Replays prepared differential cases on a GPU, with pkc's Python package.

A GPU machine may have neither pkc (it needs LLVM and MLIR) nor the JAX
version the tests compare against. `differential.py --prepare DIR` compiles
each case's program where pkc is and saves its inputs and JAX's outputs;
this script, on the GPU machine, loads each artifact with `pkc.load`, runs
the export on the inputs (CuPy arrays, PyTorch tensors for bfloat16) and
compares the outputs as differential.py does.

Usage: gpu_replay.py DIR [--filter TEXT]
Prints "ok:" / "FAILED:" per case and a summary; exits 1 if any failed,
77 without a GPU.
"""
import argparse
import glob
import json
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential  # noqa: E402  (Case, compare)


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
    outputs = module[info["export"]](*[to_device(x, use_torch) for x in inputs])
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    problems = []
    for k, e in enumerate(expected):
        problem = differential.compare(f"output {k}", e, to_host(outputs[k], e.dtype), case)
        if problem:
            problems.append(problem)
    return info, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--filter", default="")
    options = parser.parse_args()
    if not differential.cuda_gpu_present():
        print("gpu_replay: skipped: no CUDA GPU (or driver) on this machine")
        return 77
    import pkc
    cases = sorted(d for d in glob.glob(os.path.join(options.dir, "cases", "*"))
                   if options.filter in os.path.basename(d))
    failed = 0
    for directory in cases:
        try:
            info, problems = replay(directory, pkc)
            name = f"{info['file']}: {info['case']}"
        except Exception as error:  # a launch error is the case failing, not the run
            name, problems = os.path.basename(directory), [f"{type(error).__name__}: {error}"]
        print(f"{'ok' if not problems else 'FAILED'}: {name}")
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
        failed += bool(problems)
    print(f"gpu_replay: {len(cases) - failed} of {len(cases)} cases match JAX")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
