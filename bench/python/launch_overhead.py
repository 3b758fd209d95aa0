#!/usr/bin/env python3
"""Launch overhead from Python: pkc's `m.add(x, y)` against CuPy and Triton.

On a GPU machine, in one process, each launcher calls a vector add on
small arrays (--n elements, 1024 by default) --calls times back to back,
and the host time per call is reported (the GPU's work is a few
microseconds at most, so the host's launch path is what is measured; the
device is synchronized before and after each timed loop). Each call
allocates its output, as `m.add(x, y)` does:

  pkc (torch)      m.add(x, y) on torch tensors: torch.empty output, torch's stream
  pkc (cupy)       m.add(x, y) on CuPy arrays
  pkc launch()     m.add.launch(x, y, out) with a preallocated output (torch)
  cupy RawKernel   the same cubin through cupy.RawModule, output from cupy.empty
  triton           a Triton add (written here) with torch.empty's output

The ratios are to CuPy's RawKernel. The issue's target: pkc (torch) within
1.5x of it, and below Triton. Every launcher's result is checked first.

Usage: launch_overhead.py --manifest DIR/add.json | --source samples/add.pk
       [--n 1024] [--calls 20000] [--repeat 5]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def timed(call, calls, repeat, synchronize):
    """The best of `repeat` runs of `calls` calls, in microseconds per call."""
    for _ in range(min(calls, 1000)):  # warm-up
        call()
    synchronize()
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        synchronize()
        best.append((time.perf_counter() - start) / calls * 1e6)
    return min(best), statistics.median(best)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--manifest", help="add.json from pkc compile --target=cuda:...")
    where.add_argument("--source", help="samples/add.pk, compiled here with pkc.compile")
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    import pkc
    m = pkc.load(options.manifest) if options.manifest else pkc.compile(options.source)
    directory = os.path.dirname(m.key)
    with open(m.key) as f:
        manifest = json.load(f)
    artifact = next(a for a in manifest["artifacts"] if a["file"] == m.artifact)
    [step] = next(p for p in artifact["programs"] if p["export"] == "add")["steps"]
    launch = step["launch"]
    block = launch["block"][0]
    per_block = 1024  # samples/add.pk's BLOCK: grid = cdiv(N, 1024)
    n = options.n
    grid = (n + per_block - 1) // per_block
    print(f"device: {pkc._pkc.compute_capability(m.device)}, artifact {m.artifact} ({m.target}), "
          f"n = {n}, {options.calls} calls x {options.repeat}")

    rows = []
    torch = cupy = None
    try:
        import torch
    except ImportError:
        print("torch not installed: its rows are skipped")
    try:
        import cupy
    except ImportError:
        print("cupy not installed: its rows are skipped")

    if torch is not None:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        assert torch.equal(m.add(x, y), x + y)
        rows.append(("pkc (torch)", timed(lambda: m.add(x, y), options.calls, options.repeat,
                                          torch.cuda.synchronize)))
        o = torch.empty_like(x)
        m.add.launch(x, y, o, stream=torch.cuda.current_stream().cuda_stream)
        assert torch.equal(o, x + y)
        stream = torch.cuda.current_stream().cuda_stream
        rows.append(("pkc launch()", timed(lambda: m.add.launch(x, y, o, stream=stream),
                                           options.calls, options.repeat,
                                           torch.cuda.synchronize)))
    if cupy is not None:
        cx = cupy.random.standard_normal(n, dtype=cupy.float32)
        cy = cupy.random.standard_normal(n, dtype=cupy.float32)
        cupy.testing.assert_array_equal(m.add(cx, cy), cx + cy)
        rows.append(("pkc (cupy)", timed(lambda: m.add(cx, cy), options.calls, options.repeat,
                                         cupy.cuda.Device().synchronize)))
        kernel = cupy.RawModule(path=os.path.join(directory, m.artifact)).get_function(
            launch["kernel"])
        count = np.int64(n)

        def raw():
            out = cupy.empty(n, dtype=cupy.float32)
            kernel((grid,), (block,), (cx, cy, out, count))
            return out

        cupy.testing.assert_array_equal(raw(), cx + cy)
        rows.append(("cupy RawKernel", timed(raw, options.calls, options.repeat,
                                             cupy.cuda.Device().synchronize)))
    if torch is not None:
        try:
            import triton
            import triton.language as tl

            @triton.jit
            def add_kernel(x_ptr, y_ptr, o_ptr, size, BLOCK: tl.constexpr):
                i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = i < size
                tl.store(o_ptr + i, tl.load(x_ptr + i, mask=mask) + tl.load(y_ptr + i, mask=mask),
                         mask=mask)

            def tri():
                out = torch.empty_like(x)
                add_kernel[(grid,)](x, y, out, n, BLOCK=1024)
                return out

            assert torch.equal(tri(), x + y)
            rows.append(("triton", timed(tri, options.calls, options.repeat,
                                         torch.cuda.synchronize)))
        except ImportError:
            print("triton not installed: its row is skipped")

    reference = dict(rows).get("cupy RawKernel")
    print(f"{'launcher':<16} {'best us/call':>13} {'median':>9} {'vs cupy':>8}")
    for name, (best, median) in rows:
        ratio = f"{best / reference[0]:.2f}x" if reference else "-"
        print(f"{name:<16} {best:>13.2f} {median:>9.2f} {ratio:>8}")
    if torch is not None:
        # Where pkc (torch)'s time goes: the framework calls it makes.
        raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        parts = [("torch.empty(device=)", lambda: torch.empty((n,), dtype=torch.float32, device=x.device)),
                 ("x.new_empty", lambda: x.new_empty((n,))),
                 ("x.new_empty(dtype=)", lambda: x.new_empty((n,), dtype=torch.float32)),
                 ("torch.empty_like(x)", lambda: torch.empty_like(x)),
                 ("x.__dlpack__()", lambda: x.__dlpack__()),
                 # What reading a tensor costs (the extension makes these calls).
                 ("x.dtype", lambda: x.dtype),
                 ("x.shape", lambda: x.shape),
                 ("x.stride()", lambda: x.stride()),
                 ("x.data_ptr()", lambda: x.data_ptr()),
                 ("x.get_device()", lambda: x.get_device())]
        if raw_stream is not None:
            parts.append(("raw stream", lambda: raw_stream(x.get_device())))
        print(f"{'part of a call':<22} {'best us':>8}")
        for name, part in parts:
            best, _ = timed(part, options.calls, options.repeat, torch.cuda.synchronize)
            print(f"{name:<22} {best:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
