#!/usr/bin/env python3
"""pkc's kernels against the same kernels in PyTorch, Triton and JAX Pallas.

Runs on a GPU machine, in one process, so every number in a row is measured
under the same conditions, and prints each implementation's time and its
ratio to the row's reference:

  add        f32, N = 2^26       GB/s; reference: a device-to-device copy
  softmax    f32 rows x 256      GB/s; reference: torch.softmax
  layernorm  f32 rows x 256      GB/s; reference: torch.layer_norm
  wide       softmax and layer norm, 8192 x 8192, f32 and bf16, GB/s;
             reference: a device-to-device copy of the input;
             bench/kernels/rows_wide.pk
  matmul     bf16 4096^3, 8192^3 TFLOP/s; reference: torch.matmul (cuBLAS,
             without the relu pkc and JAX fuse); bench/kernels/matmul_bf16.pk
  mgpu       bf16 4096^3, 8192^3 TFLOP/s; reference: torch.matmul (cuBLAS);
             bench/kernels/matmul_mgpu.pk, TMA + mbarriers + wgmma
  attention  flash attention fwd TFLOP/s; reference: torch SDPA (flash backend),
             and Triton's tutorial kernel;
             bench/kernels/attention_mgpu.pk
  pattention the same, causal and not, written as JAX's Pallas GPU
             attention op (bench/kernels/attention_pallas.pk), and that op
             itself (bench/kernels/attention_jax_op.pk imports it)
  sweep      other tiles, stages and warps of the Pallas-style matmul
  asweep     other blocks, warps and stages of the Pallas-style attention
  hsweep     JAX's Hopper matmul at the configurations its own main()
             tunes over, 4096^3 and 8192^3

pkc's artifacts are compiled beforehand (bench/kernels/build_artifacts.sh,
on any machine with pkc) and launched here through the runtime library
(libpk_runtime.so, C API via ctypes) on PyTorch's stream. The Triton
kernels are written here; the JAX Pallas rows run the very same .pk
sources as Python (tests/pallas/pk_prelude.py), compiled by Pallas for the
GPU (the matmul is bench/kernels/matmul_bf16.pk: the sample unrolls K).
GPU times come from CUDA events around `--repeat` launches (after
warm-up), JAX's from the wall clock around as many dispatches (it has no
access to PyTorch's stream). Every implementation's output is checked
against PyTorch's first.

Usage: bench.py --artifacts DIR --runtime PATH/libpk_runtime.so [--only add,matmul]
                [--rounds N]
"""

import argparse
import ctypes
import glob
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))


# ---- pkc through the runtime's C API ------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DL_CUDA = 2
DL_CODES = {torch.float32: (2, 32), torch.float16: (2, 16), torch.bfloat16: (4, 16),
            torch.int32: (0, 32), torch.int64: (0, 64)}


class PkRuntime:
    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.pk_last_error.restype = ctypes.c_char_p
        self.lib.pk_module_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        self.lib.pk_module_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_void_p)]
        self.lib.pk_launch.argtypes = [ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.c_size_t,
                                       ctypes.c_void_p]

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.pk_last_error().decode()}")

    def kernel(self, manifest, export):
        module, kernel = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.pk_module_load(manifest.encode(), ctypes.byref(module)), manifest)
        self.check(self.lib.pk_module_get(module, export.encode(), ctypes.byref(kernel)), export)
        return PkKernel(self, kernel)


class PkKernel:
    def __init__(self, runtime, handle):
        self.runtime, self.handle = runtime, handle

    def bind(self, *tensors):
        """A launcher for these arguments (inputs, then outputs)."""
        keep = []
        args = (DLTensor * len(tensors))()
        for arg, t in zip(args, tensors):
            assert t.is_cuda and t.is_contiguous()
            shape = (ctypes.c_int64 * t.dim())(*t.shape)
            keep.append(shape)
            code, bits = DL_CODES[t.dtype]
            arg.data = t.data_ptr()
            arg.device = DLDevice(DL_CUDA, t.device.index or 0)
            arg.ndim = t.dim()
            arg.dtype = DLDataType(code, bits, 1)
            arg.shape = shape
            arg.strides = None
            arg.byte_offset = 0

        def launch():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            self.runtime.check(self.runtime.lib.pk_launch(self.handle, args, len(tensors), stream),
                               "pk_launch")
        launch.keep = (keep, args, tensors)
        return launch


# ---- Triton versions, written for this comparison ------------------------

def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(x, o, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        v = tl.load(x + row * cols + c, mask=c < cols, other=-float("inf")).to(tl.float32)
        e = tl.exp(v - tl.max(v, 0))
        tl.store(o + row * cols + c, e / tl.sum(e, 0), mask=c < cols)

    @triton.jit
    def layernorm_kernel(x, w, b, o, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        m = c < cols
        v = tl.load(x + row * cols + c, mask=m, other=0.0).to(tl.float32)
        mean = tl.sum(v, 0) / cols
        d = tl.where(m, v - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, 0) / cols + eps)
        out = d * rstd * tl.load(w + c, mask=m).to(tl.float32) + tl.load(b + c, mask=m).to(tl.float32)
        tl.store(o + row * cols + c, out, mask=m)

    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP: tl.constexpr):
        # The tutorial's grouped order: GROUP rows of tiles, column by
        # column (GROUP = 1: row by row).
        pid = tl.program_id(0)
        tiles_n = tl.cdiv(N, BN)
        group = pid // (GROUP * tiles_n)
        first = group * GROUP
        rows = min(tl.cdiv(M, BM) - first, GROUP)
        pm = first + (pid % (GROUP * tiles_n)) % rows
        pn = (pid % (GROUP * tiles_n)) // rows
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty))

    @triton.jit
    def attention_kernel(q, k, v, o, T, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                         CAUSAL: tl.constexpr):
        # The Triton tutorial's flash-attention forward, reduced to what the
        # benchmark needs (contiguous (BH, T, D) arrays; causal programs
        # stop at the diagonal and mask every step, where the tutorial
        # masks only the diagonal's).
        head, block = tl.program_id(0), tl.program_id(1)
        base = head * T * D
        rm = block * BM + tl.arange(0, BM)
        rd = tl.arange(0, D)
        qb = tl.load(q + base + rm[:, None] * D + rd[None, :])
        m_i = tl.full((BM,), float("-inf"), tl.float32)
        l_i = tl.zeros((BM,), tl.float32)
        acc = tl.zeros((BM, D), tl.float32)
        hi = (block + 1) * BM if CAUSAL else T
        for start in range(0, hi, BN):
            rn = start + tl.arange(0, BN)
            kb = tl.load(k + base + rn[None, :] * D + rd[:, None])
            s = tl.dot(qb, kb) * scale
            if CAUSAL:
                s = tl.where(rm[:, None] >= rn[None, :], s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            vb = tl.load(v + base + rn[:, None] * D + rd[None, :])
            acc += tl.dot(p.to(tl.bfloat16), vb)
            m_i = m_new
        tl.store(o + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.bfloat16))

    def attention(q, k, v, o, causal=False):
        bh, t, d = q.shape
        return lambda: attention_kernel[(bh, t // 128)](q, k, v, o, t, 1.0 / d ** 0.5, D=d, BM=128,
                                                         BN=64, CAUSAL=causal, num_warps=8,
                                                         num_stages=3)

    def warps(cols):
        # Triton's default (4) for short rows; 8 for wide ones, as pkc's.
        return 4 if cols <= 1024 else 8

    def add(x, y, o):
        n = x.numel()
        return lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)

    def softmax(x, o):
        rows, cols = x.shape
        return lambda: softmax_kernel[(rows,)](x, o, cols, BLOCK=triton.next_power_of_2(cols),
                                               num_warps=warps(cols))

    def layernorm(x, w, b, o):
        rows, cols = x.shape
        return lambda: layernorm_kernel[(rows,)](x, w, b, o, cols, 1e-5,
                                                 BLOCK=triton.next_power_of_2(cols),
                                                 num_warps=warps(cols))

    def matmul(x, y, o, bm=128, bn=128, bk=64, group=1, stages=3):
        (m, k), n = x.shape, y.shape[1]
        grid = ((m // bm) * (n // bn),)
        return lambda: matmul_kernel[grid](x, y, o, m, n, k, BM=bm, BN=bn, BK=bk, GROUP=group,
                                           num_warps=8, num_stages=stages)

    return {"add": add, "softmax": softmax, "layernorm": layernorm, "matmul": matmul,
            "attention": attention}


# ---- JAX Pallas, from the .pk sources themselves --------------------------

def jax_pallas(source, export, defines):
    os.environ["PK_PALLAS_INTERPRET"] = "0"
    sys.path.insert(0, os.path.join(REPOSITORY, "tests", "pallas"))
    import jax
    import pk_prelude
    module = pk_prelude.load_pk(os.path.join(REPOSITORY, source), defines)
    fn = jax.jit(module.exports[export])

    def bind(*inputs):
        arrays = [jax.dlpack.from_dlpack(t) for t in inputs]
        # N in f32[N] reads as the inputs' size when jit traces.
        module.bind_sizes(export, [a.shape for a in arrays])
        result = {}

        def run():
            result["out"] = fn(*arrays)
            return result["out"]
        run.result = lambda: torch.from_dlpack(jax.block_until_ready(result["out"]))
        run.block = lambda: jax.block_until_ready(result["out"])
        return run
    return bind


# ---- Timing ---------------------------------------------------------------

def warm_up(launch, seconds=0.05, most=1000):
    """Launches until the GPU has been busy with them for `seconds`: its
    clocks settle first. (With three launches, a table's reference, timed
    first after the pause that sets up the table, read up to 35% slow.)"""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for n in range(1, most + 1):
        launch()
        if n % 4 == 0:
            end.record()
            end.synchronize()
            if start.elapsed_time(end) >= seconds * 1e3:
                break
    torch.cuda.synchronize()


def time_gpu(launch, repeat):
    warm_up(launch)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        launch()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeat * 1e-3


def time_wall(run, repeat):
    for _ in range(3):
        run()
    run.block()
    begin = time.perf_counter()
    for _ in range(repeat):
        run()
    run.block()
    return (time.perf_counter() - begin) / repeat


def report(name, unit, work, rows, reference):
    base = dict(rows)[reference]
    print(f"\n{name}")
    for impl, seconds in rows:
        if seconds is None:
            print(f"  {impl:<14} {'n/a':>10}")
            continue
        rate = work / seconds / (1e12 if unit == "TFLOP/s" else 1e9)
        print(f"  {impl:<14} {seconds * 1e6:10.1f} us {rate:9.1f} {unit}   x{base / seconds:5.2f} vs {reference}")


def attempt(rows, impl, measure, check):
    try:
        check()
        rows.append((impl, measure()))
    except Exception as e:  # a missing or failing implementation is reported, not fatal
        print(f"  ({impl}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
        rows.append((impl, None))


def close(a, b, tol, atol=None):
    torch.testing.assert_close(a.float(), b.float(), rtol=tol, atol=tol if atol is None else atol)


# ---- The benchmarks -------------------------------------------------------

def bench_add(pk, triton, repeat):
    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out, ref = torch.empty_like(x), x + y
    rows = [("device copy", time_gpu(lambda: out.copy_(x), repeat))]
    attempt(rows, "torch", lambda: time_gpu(lambda: torch.add(x, y, out=out), repeat), lambda: None)
    launch = pk.kernel(f"{pk.dir}/add.json", "add").bind(x, y, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 0)))
    t = triton["add"](x, y, out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat), lambda: (t(), close(out, ref, 0)))
    j = jax_pallas("samples/add.pk", "add", {})(x, y)
    attempt(rows, "jax pallas", lambda: time_wall(j, repeat), lambda: (j(), close(j.result(), ref, 0)))
    # add reads two arrays and writes one; the copy reads one and writes one.
    report("add f32 N=2^26 (GB/s: bytes moved)", "GB/s", 3 * n * 4,
           [(i, s if s is None or i != "device copy" else s * 3 / 2) for i, s in rows], "device copy")


def row_problem(name, x):
    """A row kernel's inputs (x, and for layer norm a random scale and
    shift of x's dtype) and PyTorch's op, which takes them."""
    if name == "softmax":
        return (x,), lambda x: torch.softmax(x, dim=1)
    cols = x.shape[1]
    w, b = (torch.randn(cols, device="cuda", dtype=x.dtype) for _ in range(2))
    return (x, w, b), lambda x, w, b: torch.layer_norm(x, (cols,), w, b, 1e-5)


def bench_rows(pk, triton, repeat, name):
    rows_n, cols = 1 << 16, 256
    x = torch.randn(rows_n, cols, device="cuda")
    out = torch.empty_like(x)
    inputs, op = row_problem(name, x)
    ref_fn = lambda: op(*inputs)
    ref = ref_fn()
    rows = [("torch", time_gpu(ref_fn, repeat))]
    launch = pk.kernel(f"{pk.dir}/{name}.json", name).bind(*inputs, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 1e-4)))
    t = triton[name](*inputs, out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat), lambda: (t(), close(out, ref, 1e-4)))
    j = jax_pallas(f"samples/{name}.pk", name, {})(*inputs)
    attempt(rows, "jax pallas", lambda: time_wall(j, repeat), lambda: (j(), close(j.result(), ref, 1e-4)))
    report(f"{name} f32 {rows_n}x{cols} (GB/s: read + write)", "GB/s", 2 * x.numel() * 4, rows, "torch")


def bench_wide(pk, triton, repeat, name, dtype):
    """Softmax or layer norm over 8192 x 8192 (rows_wide.pk), against a
    device copy of the input: a row kernel reads and writes as much."""
    n = 8192
    x = torch.randn(n, n, device="cuda", dtype=dtype)
    out, copy = torch.empty_like(x), torch.empty_like(x)
    inputs, op = row_problem(name, x)
    ref_fn = lambda: op(*inputs)
    # The reference computes in f32 whatever the inputs' type.
    ref = op(*(t.float() for t in inputs))
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    # Softmax's values are near 1 / 8192: an absolute tolerance as loose as
    # the relative one would accept anything.
    atol = tol / n if name == "softmax" else tol
    check = lambda result: close(result, ref, tol, atol)
    rows = [("device copy", time_gpu(lambda: copy.copy_(x), repeat))]
    attempt(rows, "torch", lambda: time_gpu(ref_fn, repeat), lambda: check(ref_fn()))
    short = "f32" if dtype == torch.float32 else "bf16"
    export = f"{name}_{short}"
    launch = pk.kernel(f"{pk.dir}/rows_wide.json", export).bind(*inputs, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), check(out)))
    t = triton[name](*inputs, out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat), lambda: (t(), check(out)))
    j = jax_pallas("bench/kernels/rows_wide.pk", export, {})(*inputs)
    attempt(rows, "jax pallas", lambda: time_wall(j, repeat), lambda: (j(), check(j.result())))
    report(f"{name} {short} {n}x{n} (GB/s: read + write)", "GB/s", 2 * x.numel() * x.element_size(),
           rows, "device copy")


def square_bf16(n):
    """A matmul's inputs (random) and output, n x n bf16 on the GPU."""
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    return x, y, torch.empty(n, n, device="cuda", dtype=torch.bfloat16)


def bench_matmul(pk, triton, repeat, n):
    """The Pallas-style kernel (BlockSpecs, a fori_loop over K, `@`) with
    its relu epilogue, against cuBLAS's matmul alone (no relu)."""
    x, y, out = square_bf16(n)
    ref = torch.relu(x @ y)
    rows = [("torch", time_gpu(lambda: torch.matmul(x, y, out=out), repeat))]
    artifacts = pk.dir if n == 4096 else f"{pk.dir}/k{n}"
    launch = pk.kernel(f"{artifacts}/matmul_bf16.json", "matmul_relu_bf16").bind(x, y, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    t = triton["matmul"](x, y, out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat), lambda: (t(), close(out, torch.matmul(x, y), 5e-2)))
    # The Triton tutorial's first configuration: 128x256x64 tiles in
    # groups of 8 rows, 3 stages.
    t2 = triton["matmul"](x, y, out, bn=256, group=8) if triton else None
    attempt(rows, "triton 128x256 g8", lambda: time_gpu(t2, repeat),
            lambda: (t2(), close(out, torch.matmul(x, y), 5e-2)))
    # Pallas's Triton backend runs these 128x256 tiles with 4 stages at
    # about a seventh of its speed with 128x128 and 3 (83 against 585
    # TFLOP/s on an H100): JAX gets the configuration it runs best.
    j = jax_pallas("bench/kernels/matmul_bf16.pk", "matmul_relu_bf16",
                   {"K": str(n), "BN": "128", "NUM_STAGES": "3"})(x, y)
    attempt(rows, "jax pallas 128x128", lambda: time_wall(j, repeat),
            lambda: (j(), close(j.result(), ref, 5e-2)))
    report(f"matmul bf16 {n}^3 (pkc, jax: +relu; torch: cuBLAS alone)", "TFLOP/s", 2 * n ** 3, rows, "torch")


def bench_matmul_f32(pk, triton, repeat, n):
    """The same Pallas-style kernel on f32 (bench/kernels/matmul_f32.pk): at
    JAX's default precision pkc, Pallas and Triton run it on TF32 tensor
    cores; cuBLAS does too once PyTorch allows TF32."""
    torch.backends.cuda.matmul.allow_tf32 = True
    x = torch.randn(n, n, device="cuda", dtype=torch.float32)
    y = torch.randn(n, n, device="cuda", dtype=torch.float32)
    out = torch.empty(n, n, device="cuda", dtype=torch.float32)
    # TF32 products: each operand keeps 10 of its 23 mantissa bits
    # (truncated or rounded, as each implementation chooses), so a product
    # is within 2^-9 of itself, and the f32 sum adds up to n ulps more:
    # a bound on each element from the exact product and |x| @ |y|.
    exact = x.double() @ y.double()
    bound = (x.abs().double() @ y.abs().double()) * (2.0 ** -9 + n * 2.0 ** -24) + 1e-6

    def within_tf32(result, relu):
        expected = torch.relu(exact) if relu else exact
        excess = ((result.double() - expected).abs() - bound).max().item()
        assert excess <= 0, f"beyond the TF32 error bound by {excess:.3g}"
    rows = [("torch tf32", time_gpu(lambda: torch.matmul(x, y, out=out), repeat))]
    artifacts = f"{pk.dir}/f32" if n == 4096 else f"{pk.dir}/f32_k{n}"
    launch = pk.kernel(f"{artifacts}/matmul_f32.json", "matmul_relu_f32").bind(x, y, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat),
            lambda: (launch(), within_tf32(out, True)))
    t = triton["matmul"](x, y, out, bk=32) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat),
            lambda: (t(), within_tf32(out, False)))
    j = jax_pallas("bench/kernels/matmul_f32.pk", "matmul_relu_f32", {"K": str(n)})(x, y)
    attempt(rows, "jax pallas", lambda: time_wall(j, repeat),
            lambda: (j(), within_tf32(j.result(), True)))
    del exact, bound
    torch.backends.cuda.matmul.allow_tf32 = False
    report(f"matmul f32 (TF32) {n}^3 (pkc, jax: +relu; torch: cuBLAS alone)", "TFLOP/s",
           2 * n ** 3, rows, "torch tf32")


def bench_sweep(pk, repeat, n=8192):
    """Every configuration build_artifacts.sh compiled into sweep/ (block
    shapes, stages, warps of matmul_bf16.pk) at n^3, against cuBLAS: what
    a tuner would choose from."""
    x, y, out = square_bf16(n)
    ref = torch.relu(x @ y)
    rows = [("torch", time_gpu(lambda: torch.matmul(x, y, out=out), repeat))]
    for config in sorted(glob.glob(f"{pk.dir}/sweep/*/matmul_bf16.json")):
        name = os.path.basename(os.path.dirname(config))
        try:
            launch = pk.kernel(config, "matmul_relu_bf16").bind(x, y, out)
        except RuntimeError as error:
            print(f"  ({name}: {error})")
            continue
        attempt(rows, name, lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    report(f"matmul bf16 {n}^3 sweep (pkc +relu; torch: cuBLAS alone)", "TFLOP/s", 2 * n ** 3, rows, "torch")


def bench_matmul_mgpu(pk, triton, repeat, n):
    """The Mosaic-GPU-style kernel (TMA, mbarriers, wgmma) against cuBLAS
    and Triton, plain bf16 matmul."""
    x, y, out = square_bf16(n)
    ref = x @ y
    rows = [("torch", time_gpu(lambda: torch.matmul(x, y, out=out), repeat))]
    launch = pk.kernel(f"{pk.dir}/matmul_mgpu.json", f"matmul_{n}").bind(x, y, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    # JAX's hopper_matmul_mgpu.py, imported unchanged (matmul_jax_hopper.pk):
    # persistent, warp-specialized, TMA epilogue.
    jh = pk.kernel(f"{pk.dir}/matmul_jax_hopper.json", f"matmul_{n}").bind(x, y, out)
    attempt(rows, "pkc, JAX's hopper matmul", lambda: time_gpu(jh, repeat),
            lambda: (jh(), close(out, ref, 5e-2)))
    # ... on 2-CTA clusters along M, B's blocks multicast to both CTAs.
    jc = pk.kernel(f"{pk.dir}/matmul_jax_hopper.json", f"matmul_cluster_{n}").bind(x, y, out)
    attempt(rows, "pkc, JAX's hopper matmul, 2x1 cluster", lambda: time_gpu(jc, repeat),
            lambda: (jc(), close(out, ref, 5e-2)))
    t = triton["matmul"](x, y, out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(t, repeat), lambda: (t(), close(out, ref, 5e-2)))
    report(f"matmul bf16 {n}^3, Mosaic GPU style (TMA + wgmma)", "TFLOP/s", 2 * n ** 3, rows, "torch")


def bench_hopper_sweep(pk, repeat, n):
    """JAX's Hopper matmul at every configuration build_artifacts.sh
    compiled into hsweep/ (the space its own main() tunes over), at n^3,
    against cuBLAS."""
    x, y, out = square_bf16(n)
    ref = x @ y
    rows = [("torch", time_gpu(lambda: torch.matmul(x, y, out=out), repeat))]
    for config in sorted(glob.glob(f"{pk.dir}/hsweep/*/matmul_jax_hopper.json")):
        name = os.path.basename(os.path.dirname(config))
        try:
            launch = pk.kernel(config, f"matmul_{n}").bind(x, y, out)
        except RuntimeError as error:
            print(f"  ({name}: {error})")
            continue
        attempt(rows, name, lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    report(f"JAX's hopper matmul bf16 {n}^3 sweep (torch: cuBLAS)", "TFLOP/s", 2 * n ** 3, rows, "torch")


def bench_attention(pk, triton, repeat):
    """pkc's Mosaic-GPU-style flash attention forward against PyTorch's SDPA
    with its flash backend and the Triton tutorial's kernel: bf16, 4 x 8
    heads, 4096 tokens, d = 128."""
    bh, t, d = 32, 4096, 128
    q, k, v = (torch.randn(bh, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out = torch.empty_like(q)
    four = lambda x: x.view(4, 8, t, d)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def sdpa():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(four(q), four(k), four(v))

    ref = sdpa().view(bh, t, d)
    rows = [("torch sdpa", time_gpu(sdpa, repeat))]
    launch = pk.kernel(f"{pk.dir}/attention_mgpu.json", "attention_bench").bind(q, k, v, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    t_out = torch.empty_like(q)
    tri = triton["attention"](q, k, v, t_out) if triton else None
    attempt(rows, "triton", lambda: time_gpu(tri, repeat), lambda: (tri(), close(t_out, ref, 5e-2)))
    # Forward attention: 2 matmuls of 2 t^2 d flops per head.
    report("flash attention fwd bf16 (32 heads, 4096 tokens, d=128)", "TFLOP/s", 4 * bh * t * t * d,
           rows, "torch sdpa")


def attention_inputs():
    """q, k, v of the Pallas-style attention rows: random bf16 [batch, seq,
    heads, d] = 4 x 4096 x 8 x 128."""
    q, k, v = (torch.randn(4, 4096, 8, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    return q, k, v


def sdpa_heads_first(q, k, v, causal):
    """torch's SDPA (flash backend) on [batch, seq, heads, d] arrays."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    first = lambda x: x.transpose(1, 2)

    def run():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(first(q), first(k), first(v),
                                                                    is_causal=causal)
    return run


def bench_attention_sweep(pk, repeat):
    """Every configuration build_artifacts.sh compiled into asweep/ (block
    shapes, warps, stages of attention_pallas.pk), both masks."""
    q, k, v = attention_inputs()
    b, t, h, d = q.shape
    out = torch.empty_like(q)
    for causal in (False, True):
        sdpa = sdpa_heads_first(q, k, v, causal)
        ref = sdpa().transpose(1, 2)
        rows = [("torch sdpa", time_gpu(sdpa, repeat))]
        export = "mha_causal" if causal else "mha"
        for config in sorted(glob.glob(f"{pk.dir}/asweep/*/attention_pallas.json")):
            name = os.path.basename(os.path.dirname(config))
            try:
                launch = pk.kernel(config, export).bind(q, k, v, out)
            except RuntimeError as error:
                print(f"  ({name}: {error})")
                continue
            attempt(rows, name, lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
        flops = 4 * b * h * t * t * d // (2 if causal else 1)
        report(f"attention sweep{' (causal)' if causal else ''}", "TFLOP/s", flops, rows, "torch sdpa")


def bench_attention_pallas(pk, triton, repeat, causal):
    """Flash attention forward written as JAX's Pallas GPU op
    (attention_pallas.pk, [batch, seq, heads, d] arrays) against torch's
    SDPA (flash backend), the Triton tutorial's kernel and JAX Pallas
    running the same source: bf16, 4 x 8 heads, 4096 tokens, d = 128."""
    q, k, v = attention_inputs()
    b, t, h, d = q.shape
    out = torch.empty_like(q)
    heads_first = lambda x: x.transpose(1, 2)
    sdpa = sdpa_heads_first(q, k, v, causal)
    ref = heads_first(sdpa())
    rows = [("torch sdpa", time_gpu(sdpa, repeat))]
    export = "mha_causal" if causal else "mha"
    launch = pk.kernel(f"{pk.dir}/attention_pallas.json", export).bind(q, k, v, out)
    attempt(rows, "pkc", lambda: time_gpu(launch, repeat), lambda: (launch(), close(out, ref, 5e-2)))
    # JAX's op itself (attention_jax_op.pk imports it unchanged).
    op = pk.kernel(f"{pk.dir}/attention_jax_op.json", "mha_jax" + export[3:]).bind(q, k, v, out)
    attempt(rows, "pkc, JAX's op", lambda: time_gpu(op, repeat), lambda: (op(), close(out, ref, 5e-2)))
    # JAX's Mosaic GPU FlashAttention 3 (attention_fa3.pk imports
    # attention_mgpu.py unchanged): float16, and Q scaled beforehand as the
    # module does not scale Q K^T.
    q16, k16, v16 = (q * d ** -0.5).half(), k.half(), v.half()
    out16 = torch.empty_like(q16)
    fa3 = pk.kernel(f"{pk.dir}/attention_fa3.json", "fa3" + export[3:]).bind(q16, k16, v16, out16)
    attempt(rows, "pkc, JAX's FA3 (f16)", lambda: time_gpu(fa3, repeat),
            lambda: (fa3(), close(out16, ref, 5e-2)))
    flat = lambda x: heads_first(x).reshape(b * h, t, d).contiguous()
    tq, tk, tv, t_out = flat(q), flat(k), flat(v), torch.empty(b * h, t, d, device="cuda",
                                                                dtype=torch.bfloat16)
    tri = triton["attention"](tq, tk, tv, t_out, causal) if triton else None
    attempt(rows, "triton", lambda: time_gpu(tri, repeat),
            lambda: (tri(), close(t_out, flat(ref), 5e-2)))
    j = jax_pallas("bench/kernels/attention_pallas.pk", export, {})(q, k, v)
    attempt(rows, "jax pallas", lambda: time_wall(j, repeat), lambda: (j(), close(j.result(), ref, 5e-2)))
    # A causal forward does about half the work.
    flops = 4 * b * h * t * t * d // (2 if causal else 1)
    report(f"flash attention fwd bf16, JAX's Pallas op{' (causal)' if causal else ''} "
           f"(4 x 8 heads, 4096 tokens, d=128)", "TFLOP/s", flops, rows, "torch sdpa")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", required=True, help="what build_artifacts.sh wrote")
    parser.add_argument("--runtime", required=True, help="path to libpk_runtime.so")
    parser.add_argument("--only",
                        default="add,softmax,layernorm,wide,matmul,f32,mgpu,attention,pattention,sweep,asweep,hsweep")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the selection this many times over: each table again, its "
                             "reference measured again (how much a ratio moves between runs)")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py: no CUDA GPU; nothing measured")
        return 77
    pk = PkRuntime(options.runtime)
    pk.dir = options.artifacts
    try:
        triton = triton_kernels()
    except ImportError:
        triton = None
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    only = options.only.split(",")
    for round_ in range(options.rounds):
        if options.rounds > 1:
            print(f"\n== round {round_ + 1} of {options.rounds}")
        run_selection(pk, triton, only, options.repeat)
    return 0


def run_selection(pk, triton, only, repeat):
    """Every benchmark `only` names, once."""
    if "add" in only:
        bench_add(pk, triton, repeat)
    for name in ("softmax", "layernorm"):
        if name in only:
            bench_rows(pk, triton, repeat, name)
    if "wide" in only:
        for name in ("softmax", "layernorm"):
            for dtype in (torch.float32, torch.bfloat16):
                bench_wide(pk, triton, max(5, repeat // 5), name, dtype)
    if "matmul" in only:
        for n in (4096, 8192):
            bench_matmul(pk, triton, max(5, repeat // 5), n)
    if "f32" in only:
        for n in (4096, 8192):
            bench_matmul_f32(pk, triton, max(5, repeat // 5), n)
    if "mgpu" in only:
        for n in (4096, 8192):
            bench_matmul_mgpu(pk, triton, max(5, repeat // 5), n)
    if "attention" in only:
        bench_attention(pk, triton, max(5, repeat // 5))
    if "pattention" in only:
        for causal in (False, True):
            bench_attention_pallas(pk, triton, max(5, repeat // 5), causal)
    if "sweep" in only:
        bench_sweep(pk, max(5, repeat // 5))
    if "asweep" in only:
        bench_attention_sweep(pk, max(5, repeat // 5))
    if "hsweep" in only:
        for n in (4096, 8192):
            bench_hopper_sweep(pk, max(5, repeat // 5), n)


if __name__ == "__main__":
    sys.exit(main())
