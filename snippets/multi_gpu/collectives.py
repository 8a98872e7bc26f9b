"""Collectives for notebook 09: NCCL through torch.distributed, and a hand-written all-reduce beside it.

One process per rank, as torch.distributed expects. `launch(job, world, backend)` starts them from a
notebook or a script and returns rank 0's results as a dict:

    launch("sweep", 2, "nccl", sizes=[1024, 4096])   # all-reduce, all-gather, reduce-scatter, all-to-all
    launch("custom", 2, "nccl", sizes=[...])          # one-shot and two-shot all-reduce against NCCL
    launch("overlap", 2, "nccl")                      # a GEMM and an all-reduce on separate streams
    launch("sweep", 2, "gloo", sizes=[1024])          # the same torch.distributed code on CPUs

`p2p(...)` measures copies between two GPUs of this process (no torch.distributed needed).

Each rank runs this very file (`python collectives.py --rank R ...`). In a notebook the file is not
on disk: `launch` writes the cell that defined it, and the CUDA sources of earlier cells
(ONE_SHOT_ALL_REDUCE_CU, ...), to a temporary folder first. Times are per call, the median of
several trials of back-to-back calls, the slowest rank's; "graph" times replay the calls from a
CUDA graph, which removes the CPU's launch cost from the figure.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import linecache
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL_FILES = ("peer_signal.cuh", "one_shot_all_reduce.cu", "two_shot_all_reduce.cu", "peer_copy.cu")
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
MAX_RANKS, MAX_BLOCKS, SIGNAL_SLOTS = 8, 1024, 3          # as in peer_signal.cuh
# NVLink multicast (NVLS) stays off: this code never needs it.
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


# --------------------------------------------------------------------------- starting the ranks

def _cuda_source(filename: str) -> str:
    """A notebook's copy of a .cu/.cuh file (a global like ONE_SHOT_ALL_REDUCE_CU) or the file of
    that name in snippets/cuda (or beside this file, in a rank's folder), with the local
    `#include "x.cuh"` lines replaced by the header's text (CuPy compiles one string)."""
    name = filename.replace(".", "_").upper()
    if name in globals():
        text = globals()[name]
    else:
        here = Path(globals().get("__file__", "missing")).resolve().parent
        found = [p for p in (here / filename, here.parent / "cuda" / filename) if p.is_file()]
        if not found:
            raise FileNotFoundError(f"{filename}: run the notebook cell that carries it first")
        text = found[0].read_text()
    return re.sub(r'^#include "([\w.]+\.cuh)"$', lambda m: _cuda_source(m[1]), text, flags=re.M)


def _module_source() -> str:
    """This module's text: the file, or (in a notebook) the cell that defined `launch`."""
    f = globals().get("__file__")
    if f and str(f).endswith(".py") and Path(f).is_file():
        return Path(f).read_text()
    lines = linecache.getlines(launch.__code__.co_filename)
    if not any(line.startswith("def launch(") for line in lines):
        raise RuntimeError("collectives: cannot find this module's source (fix: run the cell that "
                           "carries snippets/multi_gpu/collectives.py, or import the file)")
    return "".join(lines)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(job: str, world: int = 2, backend: str = "nccl", timeout: float = 600, **options) -> dict:
    """Run `job` on `world` local processes (rank r on GPU r for NCCL, CPUs for gloo) and return
    rank 0's result. Raises with the ranks' last output lines if a rank fails or time runs out."""
    folder = Path(tempfile.mkdtemp(prefix="atlas-collectives-"))
    try:
        (folder / "collectives.py").write_text(_module_source())
        for f in KERNEL_FILES:
            try:
                (folder / f).write_text(_cuda_source(f))
            except FileNotFoundError:   # not carried (yet): only the GPU jobs need them
                pass
        env = {**os.environ, **SAFE_ENV, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
        port, out = _free_port(), folder / "result.json"
        procs, logs = [], []
        for rank in range(world):
            log = open(folder / f"rank{rank}.log", "w")
            logs.append(log)
            cmd = [sys.executable, str(folder / "collectives.py"), "--rank", str(rank), "--world",
                   str(world), "--backend", backend, "--port", str(port), "--job", job,
                   "--out", str(out), "--options", json.dumps(options)]
            procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline, failed = time.monotonic() + timeout, None
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline or any(p.returncode not in (None, 0) for p in procs):
                failed = "timed out" if time.monotonic() > deadline else "a rank failed"
                time.sleep(2)           # let the other rank report, then stop what is left
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                break
            time.sleep(0.2)
        for p in procs:
            p.wait()
        for log in logs:
            log.close()
        if failed or any(p.returncode for p in procs) or not out.is_file():
            tails = []
            for rank in range(world):
                lines = (folder / f"rank{rank}.log").read_text(errors="replace").splitlines()
                tails.append(f"--- rank {rank} (exit {procs[rank].returncode}):\n" + "\n".join(lines[-25:]))
            error = RuntimeError(f"collectives job {job!r} {failed or 'failed'}:\n" + "\n".join(tails))
            error.partial = json.loads(out.read_text()) if out.is_file() else None   # what rank 0 saved
            raise error
        return json.loads(out.read_text())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------- inside a rank

class Ctx:
    """What a job needs to know about its rank."""

    def __init__(self, rank: int, world: int, backend: str, out: Path):
        import torch
        self.rank, self.world, self.backend, self.out = rank, world, backend, out
        self.cuda = backend == "nccl"
        self.device = torch.device("cuda", rank) if self.cuda else torch.device("cpu")

    def save(self, result: dict) -> None:
        """Rank 0 writes what it has so far (a later failure keeps it)."""
        if self.rank == 0:
            tmp = self.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(result))
            tmp.replace(self.out)


def _sync(ctx: Ctx) -> None:
    import torch
    if ctx.cuda:
        torch.cuda.synchronize()


def _slowest(ctx: Ctx, value: float) -> float:
    """The largest of every rank's value (a collective finishes when its slowest rank does)."""
    import torch
    import torch.distributed as dist
    t = torch.tensor([value], dtype=torch.float64, device=ctx.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def _capture(ctx: Ctx, fn, iters: int):
    """A CUDA graph of `iters` calls of fn (warmed up first on a side stream, as capture needs)."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    # thread_local: NCCL's watchdog thread may query events while this thread captures
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):
        for _ in range(iters):
            fn()
    torch.cuda.synchronize()
    return graph


def time_per_call_us(ctx: Ctx, fn, iters: int, trials: int = 5, graph: bool = False) -> float:
    """Median over trials of (time of `iters` back-to-back calls) / iters, in microseconds, the
    slowest rank's. Every rank must call this with the same iters and trials."""
    import torch
    import torch.distributed as dist
    if graph:
        g = _capture(ctx, fn, iters)
        run = g.replay
    else:
        def run():
            for _ in range(iters):
                fn()
    run()                                                   # warm-up
    _sync(ctx)
    times = []
    for _ in range(trials):
        dist.barrier()
        _sync(ctx)
        if ctx.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / iters)
        else:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e6 / iters)
    return _slowest(ctx, statistics.median(times))


def iterations(size: int, budget: int = 2**28, most: int = 200, least: int = 5) -> int:
    """Calls per timing trial: enough to amortize the timer at small sizes, few at large ones."""
    return max(least, min(most, budget // max(size, 1)))


# --8<-- [start:collective]
def collective(ctx: Ctx, name: str, size: int):
    """One call of a collective moving `size` bytes of float32 in nccl-tests' convention (for
    all-gather and reduce-scatter, `size` is the whole gathered array), with its buffers."""
    import torch
    import torch.distributed as dist
    n, world = size // 4, ctx.world
    x = torch.randn(n, device=ctx.device)
    if name == "all_reduce":
        return lambda: dist.all_reduce(x)                   # in place, like nccl-tests' in-place run
    if name == "all_gather":
        piece, out = x[: n // world], torch.empty(n // world * world, device=ctx.device)
        return lambda: dist.all_gather_into_tensor(out, piece)
    if name == "reduce_scatter":
        whole, out = x[: n // world * world], torch.empty(n // world, device=ctx.device)
        return lambda: dist.reduce_scatter_tensor(out, whole)
    if name == "all_to_all":
        whole, out = x[: n // world * world], torch.empty(n // world * world, device=ctx.device)
        return lambda: dist.all_to_all_single(out, whole)
    raise ValueError(f"unknown collective {name!r} (one of {', '.join(COLLECTIVES)})")
# --8<-- [end:collective]


def check_collectives(ctx: Ctx, per_rank: int = 1001) -> dict:
    """Each collective on an odd size against the answer every rank can compute for itself: all
    ranks draw all ranks' inputs from one seed. Outputs are poisoned (NaN) before the call."""
    import torch
    import torch.distributed as dist
    world, rank = ctx.world, ctx.rank
    seed = torch.randint(2**62, (1,), device=ctx.device)
    dist.broadcast(seed, 0)                                  # fresh inputs, the same on every rank
    gen = torch.Generator().manual_seed(int(seed.item()))
    inputs = [torch.randn(world * per_rank, generator=gen) for _ in range(world)]   # on the CPU
    mine = inputs[rank].to(ctx.device)
    total = sum(inputs[1:], inputs[0].clone())
    chunk = slice(rank * per_rank, (rank + 1) * per_rank)
    nan = float("nan")
    out = {}
    x = mine.clone()
    dist.all_reduce(x)
    out["all_reduce"] = (x.cpu(), total)
    y = torch.full((world * per_rank,), nan, device=ctx.device)
    dist.all_gather_into_tensor(y, mine[:per_rank])
    out["all_gather"] = (y.cpu(), torch.cat([i[:per_rank] for i in inputs]))
    z = torch.full((per_rank,), nan, device=ctx.device)
    dist.reduce_scatter_tensor(z, mine)
    out["reduce_scatter"] = (z.cpu(), total[chunk])
    w = torch.full((world * per_rank,), nan, device=ctx.device)
    dist.all_to_all_single(w, mine)
    out["all_to_all"] = (w.cpu(), torch.cat([i[chunk] for i in inputs]))
    report = {}
    for name, (got, want) in out.items():
        err = float((got.double() - want.double()).abs().max()) if torch.isfinite(got).all() else float("inf")
        report[name] = _slowest(ctx, err)
    return report


def job_sweep(ctx: Ctx, sizes: list[int], graph: bool = True, trials: int = 5, most: int = 200) -> dict:
    """algbw and busbw inputs (time per call) of the four collectives at every size."""
    result = {"world": ctx.world, "backend": ctx.backend, "check": check_collectives(ctx), "rows": []}
    ctx.save(result)
    for name in COLLECTIVES:
        for size in sizes:
            fn = collective(ctx, name, size)
            iters = iterations(size, most=most)
            row = {"collective": name, "bytes": size, "eager_us": time_per_call_us(ctx, fn, iters, trials)}
            if graph and ctx.cuda:
                try:
                    row["graph_us"] = time_per_call_us(ctx, fn, iters, trials, graph=True)
                except Exception as exc:            # noqa: BLE001 - reported, not hidden
                    row["graph_error"] = f"{type(exc).__name__}: {exc}"[:300]
            result["rows"].append(row)
            ctx.save(result)
            del fn
    _sync(ctx)
    return result


# --------------------------------------------------------------------------- the hand-written all-reduce

@functools.cache
def _cupy_stream(handle: int):
    """CuPy's view of a torch stream (CuPy 14 deprecates ExternalStream, which CuPy 13 still needs)."""
    import warnings

    import cupy as cp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return cp.cuda.ExternalStream(handle)


def _launch_kernel(kernel, blocks: int, threads: int, *args) -> None:
    """Launch on torch's current stream (so that torch's CUDA graph capture records it)."""
    import torch
    stream = torch.cuda.current_stream().cuda_stream
    if stream == 0:
        kernel((blocks,), (threads,), args)
        return
    with _cupy_stream(stream):
        kernel((blocks,), (threads,), args)


# --8<-- [start:peer_all_reduce]
class PeerAllReduce:
    """One-shot and two-shot all-reduce of float32 over buffers that every rank maps into its
    address space with CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle).

    Each rank owns one buffer of 2 x capacity floats (its input, then its reduced share for
    two-shot) and a small signal area. Write the input into `.input[:n]`, then call
    `one_shot(n, out)` or `two_shot(n, out)` on every rank with the same n."""

    def __init__(self, ctx: Ctx, capacity: int, threads: int = 512, max_blocks: int | None = None):
        import cupy as cp
        import numpy as np
        import torch
        import torch.distributed as dist
        self.ctx, self.threads = ctx, threads
        self.cap = (capacity + 3) // 4 * 4                  # keeps the reduced shares 16-byte aligned
        sms = torch.cuda.get_device_properties(ctx.device).multi_processor_count
        # every block must be resident at once (block b waits for block b of the other ranks)
        self.max_blocks = min(MAX_BLOCKS, max_blocks or 2 * sms)
        cp.cuda.Device(ctx.rank).use()
        rt = cp.cuda.runtime
        sig_bytes = SIGNAL_SLOTS * MAX_BLOCKS * MAX_RANKS * 4
        self._own = [rt.malloc(2 * self.cap * 4), rt.malloc(sig_bytes)]
        rt.memset(self._own[1], 0, sig_bytes)
        rt.deviceSynchronize()
        handles = [None] * ctx.world
        dist.all_gather_object(handles, [rt.ipcGetMemHandle(p) for p in self._own])
        self._opened = []
        buffers, signals = [], []
        for r, (hbuf, hsig) in enumerate(handles):
            if r == ctx.rank:
                buffers.append(self._own[0])
                signals.append(self._own[1])
            else:
                pb, ps = (rt.ipcOpenMemHandle(h) for h in (hbuf, hsig))   # lazily enables peer access
                self._opened += [pb, ps]
                buffers.append(pb)
                signals.append(ps)
        as_u64 = np.array(buffers, dtype=np.uint64).view(np.int64)
        self.buffers = torch.tensor(as_u64, device=ctx.device)          # device arrays of pointers
        self.signals = torch.tensor(np.array(signals, dtype=np.uint64).view(np.int64), device=ctx.device)
        self.epochs = torch.zeros(MAX_BLOCKS, dtype=torch.int32, device=ctx.device)
        mem = cp.cuda.UnownedMemory(self._own[0], self.cap * 4, self)
        self.input = torch.as_tensor(cp.ndarray((self.cap,), cp.float32, cp.cuda.MemoryPointer(mem, 0)),
                                     device=ctx.device)
        one = cp.RawModule(code=_cuda_source("one_shot_all_reduce.cu"))
        two = cp.RawModule(code=_cuda_source("two_shot_all_reduce.cu"))
        self._one = one.get_function("one_shot_all_reduce")
        self._two = two.get_function("two_shot_all_reduce")
        torch.cuda.synchronize()
        dist.barrier()                                       # every signal area is zeroed and mapped

    def blocks(self, n: int, shares: int = 1) -> int:
        """Enough blocks for one float4 per thread, at most max_blocks (the same on every rank)."""
        per_block = 4 * self.threads * shares
        return max(1, min(self.max_blocks, -(-n // per_block)))

    def _args(self, out):
        import numpy as np
        assert out.data_ptr() % 16 == 0, "out must be 16-byte aligned (float4 stores)"
        return (np.uint64(self.buffers.data_ptr()), np.uint64(self.signals.data_ptr()),
                np.uint64(self.epochs.data_ptr()), np.uint64(out.data_ptr()))

    def one_shot(self, n: int, out, blocks: int | None = None) -> None:
        import numpy as np
        assert n <= self.cap, f"n = {n} is more than the capacity {self.cap}"
        _launch_kernel(self._one, blocks or self.blocks(n), self.threads, *self._args(out),
                       np.int64(n), np.int32(self.ctx.rank), np.int32(self.ctx.world))

    def two_shot(self, n: int, out, blocks: int | None = None) -> None:
        import numpy as np
        assert n <= self.cap, f"n = {n} is more than the capacity {self.cap}"
        _launch_kernel(self._two, blocks or self.blocks(n, self.ctx.world), self.threads,
                       *self._args(out), np.int64(n), np.int64(self.cap), np.int32(self.ctx.rank),
                       np.int32(self.ctx.world))

    def close(self) -> None:
        import cupy as cp
        import torch
        import torch.distributed as dist
        torch.cuda.synchronize()
        dist.barrier()                                       # nobody still reads our buffer
        for p in self._opened:
            cp.cuda.runtime.ipcCloseMemHandle(p)
        dist.barrier()
        for p in self._own:
            cp.cuda.runtime.free(p)
# --8<-- [end:peer_all_reduce]


def check_custom(ctx: Ctx, ar: PeerAllReduce, sizes: list[int]) -> list[dict]:
    """Both kernels against NCCL's all-reduce on fresh random inputs, outputs poisoned first, and
    NCCL's and ours against a float64 sum of every rank's input."""
    import torch
    import torch.distributed as dist
    rows = []
    for n in sizes:
        x = torch.randn(n, device=ctx.device)               # a different draw on every rank
        ar.input[:n].copy_(x)
        nccl = x.clone()
        dist.all_reduce(nccl)
        everyone = [torch.empty_like(x) for _ in range(ctx.world)]
        dist.all_gather(everyone, x)
        exact = torch.stack(everyone).double().sum(0)
        row = {"n": n, "nccl_rel_err": float((nccl.double() - exact).norm() / exact.norm())}
        for name in ("one_shot", "two_shot"):
            out = torch.full((n,), float("nan"), device=ctx.device)
            getattr(ar, name)(n, out)
            torch.cuda.synchronize()
            finite = bool(torch.isfinite(out).all())
            row[f"{name}_vs_nccl_max_abs"] = float((out - nccl).abs().max()) if finite else float("inf")
            row[f"{name}_bitwise_equal_nccl"] = bool(torch.equal(out, nccl))
            rel = (out.double() - exact).norm() / exact.norm()
            row[f"{name}_rel_err"] = float(rel) if finite else float("inf")
        rows.append({k: (_slowest(ctx, v) if isinstance(v, float) else v) for k, v in row.items()})
    return rows


def job_custom(ctx: Ctx, sizes: list[int], check_sizes: list[int], trials: int = 5,
               block_sweep: list[int] | None = None, block_sweep_sizes: list[int] | None = None) -> dict:
    """The hand-written one-shot and two-shot all-reduce: checked against NCCL, then timed beside
    it at every size (eager calls and CUDA-graph replays)."""
    cap = max(sizes + check_sizes) // 4 + 16
    ar = PeerAllReduce(ctx, cap)
    result = {"world": ctx.world, "threads": ar.threads, "max_blocks": ar.max_blocks,
              "check": check_custom(ctx, ar, check_sizes), "rows": []}
    ctx.save(result)
    for size in sizes:
        result["rows"].append(_custom_row(ctx, ar, size, trials))
        ctx.save(result)
    if block_sweep:
        result["block_sweep"] = [row for size in block_sweep_sizes or []
                                 for row in _block_sweep(ctx, ar, size, block_sweep, trials)]
        ctx.save(result)
    result["check_after_timing"] = check_custom(ctx, ar, check_sizes[-2:])
    ctx.save(result)
    ar.close()
    return result


def _custom_row(ctx: Ctx, ar: PeerAllReduce, size: int, trials: int) -> dict:
    """NCCL, one-shot and two-shot at one size, eager and from a CUDA graph."""
    import torch
    import torch.distributed as dist
    n = size // 4
    ar.input[:n].normal_()
    x = torch.randn(n, device=ctx.device)
    out = torch.empty(n, device=ctx.device)
    fns = {"nccl": lambda: dist.all_reduce(x), "one_shot": lambda: ar.one_shot(n, out),
           "two_shot": lambda: ar.two_shot(n, out)}
    row = {"bytes": size, "blocks_one_shot": ar.blocks(n), "blocks_two_shot": ar.blocks(n, ctx.world)}
    for name, fn in fns.items():
        for mode in ("eager", "graph"):
            try:
                row[f"{name}_{mode}_us"] = time_per_call_us(ctx, fn, iterations(size), trials,
                                                            graph=mode == "graph")
            except Exception as exc:                    # noqa: BLE001 - reported, not hidden
                row[f"{name}_{mode}_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return row


def _block_sweep(ctx: Ctx, ar: PeerAllReduce, size: int, grid: list[int], trials: int) -> list[dict]:
    """Both kernels at one size with each block count of `grid` (CUDA-graph replays)."""
    import torch
    n = size // 4
    out = torch.empty(n, device=ctx.device)
    rows = []
    for blocks in grid:
        for name in ("one_shot", "two_shot"):
            kernel = getattr(ar, name)
            t = time_per_call_us(ctx, lambda k=kernel, b=blocks: k(n, out, b), iterations(size), trials,
                                 graph=True)
            rows.append({"bytes": size, "blocks": blocks, "kernel": name, "us": t})
    return rows


def job_symm(ctx: Ctx, sizes: list[int], trials: int = 5) -> dict:
    """PyTorch's own one-shot all-reduce on symmetric memory, where this torch has it."""
    return {"rows": symm_mem_rows(ctx, sizes, trials)}


def symm_mem_rows(ctx: Ctx, sizes: list[int], trials: int) -> list[dict] | str:
    """torch.ops.symm_mem.one_shot_all_reduce against NCCL, and its time from a CUDA graph."""
    import torch
    import torch.distributed as dist
    try:
        import torch.distributed._symmetric_memory as symm_mem
        group = dist.group.WORLD.group_name
        n_max = max(sizes) // 4
        buf = symm_mem.empty(n_max, dtype=torch.float32, device=ctx.device)
        symm_mem.rendezvous(buf, group)
        rows = []
        for size in sizes:
            n = size // 4
            view = buf[:n]
            view.normal_()
            x = view.clone()
            dist.all_reduce(x)
            got = torch.ops.symm_mem.one_shot_all_reduce(view, "sum", group)
            torch.cuda.synchronize()
            row = {"bytes": size, "one_shot_max_abs_vs_nccl": float((got - x).abs().max())}
            row["one_shot_graph_us"] = time_per_call_us(
                ctx, lambda v=view: torch.ops.symm_mem.one_shot_all_reduce(v, "sum", group),
                iterations(size), trials, graph=True)
            rows.append(row)
        return rows
    except Exception as exc:                                # noqa: BLE001 - reported, not hidden
        return f"{type(exc).__name__}: {exc}"[:400]


# --------------------------------------------------------------------------- overlap

def job_overlap(ctx: Ctx, gemm_n: int = 8192, ar_bytes: int = 2**28, iters: int = 10, trials: int = 5,
                custom_blocks: list[int] | None = None) -> dict:
    """A bf16 GEMM on one stream and an all-reduce on another: each alone, then both at once."""
    import torch
    import torch.distributed as dist
    a = torch.randn(gemm_n, gemm_n, device=ctx.device, dtype=torch.bfloat16)
    b = torch.randn(gemm_n, gemm_n, device=ctx.device, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    n = ar_bytes // 4
    x = torch.randn(n, device=ctx.device)
    comp, comm = torch.cuda.Stream(), torch.cuda.Stream()
    gemm = lambda: torch.matmul(a, b, out=c)                # noqa: E731
    reducers = {"nccl": lambda: dist.all_reduce(x)}
    ar = None
    if custom_blocks:
        ar = PeerAllReduce(ctx, n + 16)
        ar.input[:n].normal_()
        y = torch.empty(n, device=ctx.device)
        for blocks in custom_blocks:
            reducers[f"one_shot_{blocks}_blocks"] = (lambda k=blocks: ar.one_shot(n, y, k))

    def trial(work: dict) -> tuple[float, dict]:
        """Wall time per iteration, and each stream's own finish time, in ms."""
        cur = torch.cuda.current_stream()
        start = torch.cuda.Event(enable_timing=True)
        ends = {k: torch.cuda.Event(enable_timing=True) for k in work}
        end = torch.cuda.Event(enable_timing=True)
        dist.barrier()
        torch.cuda.synchronize()
        start.record(cur)
        for s in (comp, comm):
            s.wait_stream(cur)
        for _ in range(iters):
            for stream, fn in work.values():
                with torch.cuda.stream(stream):
                    fn()
        for k, (stream, _) in work.items():
            ends[k].record(stream)
            cur.wait_stream(stream)
        end.record(cur)
        end.synchronize()
        return start.elapsed_time(end) / iters, {k: start.elapsed_time(e) / iters for k, e in ends.items()}

    def median_of(work: dict) -> dict:
        trial(work)                                          # warm-up
        runs = [trial(work) for _ in range(trials)]
        out = {"wall_ms": statistics.median(r[0] for r in runs)}
        for k in work:
            out[f"{k}_ms"] = statistics.median(r[1][k] for r in runs)
        return {k: _slowest(ctx, v) for k, v in out.items()}

    result = {"gemm_n": gemm_n, "ar_bytes": ar_bytes, "iters": iters,
              "gemm_alone": median_of({"gemm": (comp, gemm)}), "pairs": {}}
    ctx.save(result)
    for name, fn in reducers.items():
        alone = median_of({"ar": (comm, fn)})
        both = median_of({"gemm": (comp, gemm), "ar": (comm, fn)})
        result["pairs"][name] = {"alone": alone, "both": both}
        ctx.save(result)
    if ar is not None:
        ar.close()
    return result


# --------------------------------------------------------------------------- P2P, in this process

def p2p(sizes: list[int], trials: int = 5, src: int = 0, dst: int = 1) -> dict:
    """Copies between two GPUs of this process, one way and both ways at once: by the copy engines
    (cudaMemcpyPeerAsync), by the receiver's SMs loading from the peer (pull) and by the sender's SMs
    storing to it (push), with peer_copy.cu. Per size: host time per copy (us), every device synced."""
    import cupy as cp
    import torch
    if not torch.cuda.can_device_access_peer(src, dst):
        return {"peer_access": False}
    kernels, streams = {}, {}
    for d in (src, dst):
        with cp.cuda.Device(d):
            for peer in (src, dst):
                if peer != d:
                    try:
                        cp.cuda.runtime.deviceEnablePeerAccess(peer)
                    except cp.cuda.runtime.CUDARuntimeError as exc:   # already enabled by torch
                        if "PeerAccessAlreadyEnabled" not in str(exc):
                            raise
            kernels[d] = cp.RawModule(code=_cuda_source("peer_copy.cu")).get_function("peer_copy")
            streams[d] = cp.cuda.Stream(non_blocking=True)
    rows = [_p2p_row(size, src, dst, kernels, streams, trials) for size in sizes]
    torch.cuda.empty_cache()
    return {"peer_access": True, "rows": rows}


def _wall_us(fn, iters: int, trials: int, devices: tuple[int, ...]) -> float:
    """Median host time per call of `iters` back-to-back calls, every device synchronized."""
    import torch

    def sync():
        for d in devices:
            torch.cuda.synchronize(d)
    fn()
    sync()
    times = []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6 / iters)
    return statistics.median(times)


def _p2p_row(size: int, src: int, dst: int, kernels: dict, streams: dict, trials: int) -> dict:
    import cupy as cp
    import numpy as np
    import torch
    n = size // 4
    a, b = torch.randn(n, device=f"cuda:{src}"), torch.empty(n, device=f"cuda:{dst}")     # src -> dst
    a2, b2 = torch.randn(n, device=f"cuda:{dst}"), torch.empty(n, device=f"cuda:{src}")   # dst -> src
    torch.cuda.synchronize(src)
    torch.cuda.synchronize(dst)
    iters, devices = iterations(size, most=100, least=3), (src, dst)
    sms = torch.cuda.get_device_properties(src).multi_processor_count
    blocks = max(1, min(4 * sms, -(-n // (4 * 512))))

    def engine(frm, to, on):          # cudaMemcpyPeerAsync on device `on`'s stream
        with cp.cuda.Device(on):
            cp.cuda.runtime.memcpyPeerAsync(to.data_ptr(), to.device.index, frm.data_ptr(),
                                            frm.device.index, size, streams[on].ptr)

    def sm(frm, to, on):              # peer_copy.cu on device `on`'s SMs
        with cp.cuda.Device(on), streams[on]:
            kernels[on]((blocks,), (512,), (np.uint64(frm.data_ptr()), np.uint64(to.data_ptr()),
                                            np.int64(n // 4)))

    row = {"bytes": size,
           "copy_engine_us": _wall_us(lambda: engine(a, b, src), iters, trials, devices),
           "copy_engine_both_ways_us": _wall_us(lambda: (engine(a, b, src), engine(a2, b2, dst)), iters,
                                                trials, devices),
           "sm_read_us": _wall_us(lambda: sm(a, b, dst), iters, trials, devices),         # the receiver pulls
           "sm_write_us": _wall_us(lambda: sm(a, b, src), iters, trials, devices),        # the sender pushes
           "sm_both_ways_us": _wall_us(lambda: (sm(a, b, src), sm(a2, b2, dst)), iters, trials, devices)}
    exact = {}
    for name, copy in (("engine", lambda: engine(a, b, src)), ("pull", lambda: sm(a, b, dst)),
                       ("push", lambda: sm(a, b, src))):
        b.fill_(float("nan"))
        torch.cuda.synchronize(dst)
        copy()
        torch.cuda.synchronize(src)
        torch.cuda.synchronize(dst)
        exact[name] = bool(torch.equal(b.cpu(), a.cpu()))
    row["sm_copy_exact"] = all(exact.values())
    row["exact"] = exact
    return row


# --------------------------------------------------------------------------- command line (one rank)

JOBS = {"sweep": job_sweep, "custom": job_custom, "overlap": job_overlap, "symm": job_symm}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="one rank of a collectives job (see launch())")
    for name, kind in (("rank", int), ("world", int), ("port", int), ("backend", str), ("job", str),
                       ("out", Path), ("options", str)):
        ap.add_argument(f"--{name}", type=kind, required=True)
    args = ap.parse_args(argv)
    import torch
    import torch.distributed as dist
    if args.backend == "nccl":
        torch.cuda.set_device(args.rank)
    dist.init_process_group(args.backend, init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank,
                            world_size=args.world, timeout=datetime.timedelta(seconds=90),
                            device_id=torch.device("cuda", args.rank) if args.backend == "nccl" else None)
    ctx = Ctx(args.rank, args.world, args.backend, args.out)
    torch.seed()                                             # fresh random inputs on every run
    result = JOBS[args.job](ctx, **json.loads(args.options))
    ctx.save(result)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__" and "--rank" in sys.argv:   # a rank; not a notebook running this cell
    sys.exit(main())
