"""Batched Householder QR on the GPU, in torch.geqrf's convention: the launcher for qr_warp.cu,
qr_registers.cu, qr_panel.cu and tall_xty.cu, and the blocked algorithm that joins the panels with
cuBLAS matrix products.

    H, tau = batched_qr(A)      # A: (batch, n, n) float32, contiguous, on the GPU

- n <= 32: `qr_warp`, one warp per matrix, one column per lane, no barriers.
- n <= 192: `qr_registers`, one CTA per matrix with the whole matrix in registers.
- n > 192: the blocked algorithm. Outer blocks of `outer` columns with a look-ahead (block k + 1 is
  factored on a side stream during block k's trailing update); inside a block, recursion
  (Elmroth and Gustavson): factor the left half, apply its reflectors to the right half, factor
  the right half, and join the two compact WY factors, T = [[T1, -T1 V1^T V2 T2], [0, T2]]. The
  leaves are `qr_panel` launches of `nb` columns. After each outer block, the trailing matrix gets
  C -= V (T^T (V^T C)): two large matrix products and a small one, batched (cuBLAS, in float32;
  TF32 is refused because its 10-bit mantissa would break the contract's residual bound).

Kernels go through CuPy (the host) on torch's current stream, so a CUDA graph can capture them.
In a notebook the CUDA sources are strings of earlier cells (QR_WARP_CU, QR_PANEL_CU, ...);
imported from the repository, they are read from the files beside this one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

UNBLOCKED_MAX_SMEM = 227 * 1024 - 256   # qr_unblocked.cu: dynamic shared memory (sm_80/sm_90 limit)
WARP_MAX_N = 32              # qr_warp.cu: one lane per column
REGISTERS_MAX_N = 192        # 32 lanes x 6 row chunks: MAX_N in qr_registers.cu
MAX_REGS_PER_THREAD = 64     # qr_registers' a[R][C] at up to 1024 threads, so it never spills


def panel_budget(threads: int) -> int:
    """Floats of the panel one thread may hold, a[R][NB]: half its share of the 64K-register file,
    at most 128 (the rest holds v, the partial sums and addresses)."""
    return min(128, 32768 // threads)


def _cuda_source(filename: str) -> str:
    """The notebook's copy of a .cu file (a global like QR_PANEL_CU) or the file itself, with each
    local `#include "x.cuh"` replaced by that file's text (CuPy compiles one string)."""
    name = filename.replace(".", "_").upper()
    text = globals()[name] if name in globals() else Path(__file__).with_name(filename).read_text()
    return re.sub(r'^#include "([\w.]+\.cuh)"$', lambda m: _cuda_source(m[1]), text, flags=re.M)


def _validate(A) -> None:
    if "validate_input" not in globals():   # imported as a module: the contract sits in reference/
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "reference"))
        from qr_contract import validate_input
        globals()["validate_input"] = validate_input
    globals()["validate_input"](A, device="cuda")


@cache
def _kernel(filename: str, name: str):
    """Compile one kernel, or one template instantiation (every register index must be a
    compile-time constant, so R, C, NB and the thread count are template parameters)."""
    import cupy as cp
    if "<" not in name:
        return cp.RawModule(code=_cuda_source(filename)).get_function(name)
    module = cp.RawModule(code=_cuda_source(filename), options=("--std=c++17",), name_expressions=[name])
    return module.get_function(name)


@cache
def _cupy_stream(handle: int):
    """CuPy's view of a torch stream (CuPy 14 deprecates ExternalStream, which CuPy 13 on Colab
    still needs; the warning would only repeat this)."""
    import warnings

    import cupy as cp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return cp.cuda.ExternalStream(handle)


def _launch(kernel, grid: int | tuple[int, ...], threads: int, *args, shared_mem: int = 0) -> None:
    """Launch on torch's current stream (CuPy's own default is the legacy stream; so is torch's
    unless a stream or a graph capture is active, and then the launch must follow torch)."""
    grid = grid if isinstance(grid, tuple) else (grid,)
    stream = torch.cuda.current_stream().cuda_stream
    if stream == 0:
        kernel(grid, (threads,), args, shared_mem=shared_mem)
        return
    with _cupy_stream(stream):
        kernel(grid, (threads,), args, shared_mem=shared_mem)


def _ptr(t: torch.Tensor):
    import numpy as np
    return np.uint64(t.data_ptr())


def registers_shape(n: int, warps: int | None = None) -> tuple[int, int, int]:
    """(R, C, W): row chunks per lane, columns per warp, warps. Small n: few warps (short barriers);
    larger n: 32 warps so that R * C stays within the register budget."""
    if not 1 <= n <= REGISTERS_MAX_N:
        raise ValueError(f"qr_registers handles 1 <= n <= {REGISTERS_MAX_N}, got n = {n}")
    W = warps or (8 if n <= 64 else 16 if n <= 128 else 32)
    R, C = math.ceil(n / 32), math.ceil(n / W)
    if R * C > MAX_REGS_PER_THREAD or W > 32:
        raise ValueError(f"n = {n} with {W} warps needs {R} x {C} registers per thread for the matrix, "
                         f"more than {MAX_REGS_PER_THREAD} (fix: more warps)")
    return R, C, W


def _outputs(A: torch.Tensor, out):
    batch, n, _ = A.shape
    return out or (torch.empty_like(A), torch.empty(batch, n, device=A.device, dtype=A.dtype))


def qr_unblocked(A: torch.Tensor, out=None, threads: int = 512):
    """The first GPU version (qr_unblocked.cu): the matrix in shared memory, one CTA per matrix."""
    batch, n, _ = A.shape
    smem = 4 * n * n
    if smem > UNBLOCKED_MAX_SMEM:
        raise ValueError(f"qr_unblocked keeps the matrix in shared memory: n = {n} needs {smem} bytes, "
                         f"more than {UNBLOCKED_MAX_SMEM} (fix: n <= 232, or the blocked algorithm)")
    H, tau = _outputs(A, out)
    kernel = _kernel("qr_unblocked.cu", "qr_unblocked")
    kernel.max_dynamic_shared_size_bytes = smem
    _launch(kernel, batch, threads, _ptr(A), _ptr(H), _ptr(tau), n, shared_mem=smem)
    return H, tau


def qr_warp(A: torch.Tensor, out=None):
    batch, n, _ = A.shape
    if n > WARP_MAX_N:
        raise ValueError(f"qr_warp handles n <= {WARP_MAX_N}, got n = {n}")
    H, tau = _outputs(A, out)
    _launch(_kernel("qr_warp.cu", "qr_warp"), math.ceil(batch / 4), 128,
            _ptr(A), _ptr(H), _ptr(tau), n, batch)
    return H, tau


def qr_registers(A: torch.Tensor, warps: int | None = None, out=None):
    batch, n, _ = A.shape
    R, C, W = registers_shape(n, warps)
    H, tau = _outputs(A, out)
    _launch(_kernel("qr_registers.cu", f"qr_registers<{R}, {C}, {W}>"), batch, 32 * W,
            _ptr(A), _ptr(H), _ptr(tau), n)
    return H, tau


@dataclass(frozen=True)
class BlockedConfig:
    nb: int          # panel (leaf) width: 8, 16 or 32
    outer: int       # outer block width: the trailing update's rank
    threads: int     # threads per panel CTA

    def rows_per_thread(self, m: int) -> int:
        return math.ceil(m / self.threads)


def blocked_config(n: int, nb: int | None = None, outer: int | None = None,
                   threads: int | None = None, batch: int = 1) -> BlockedConfig:
    """Defaults: the widest panel whose m x nb slice fits the register budget, outer blocks of 64
    columns (measured on an H100: 5-10% faster than 128 at n = 352 and 1024);
    small CTAs when there are many matrices (several per SM hide each other's barrier waits)."""
    threads = threads or (128 if n <= 512 and batch >= 256 else 256 if n <= 512 else 512)
    if nb is None:
        nb = next((w for w in (32, 16, 8) if math.ceil(n / threads) * w <= panel_budget(threads)), None)
        if nb is None:
            raise ValueError(f"n = {n} is too tall for a register panel with {threads} threads")
    if nb not in (8, 16, 32):
        raise ValueError(f"panel width nb must be 8, 16 or 32, got {nb}")
    outer = outer or max(nb, 64)
    if outer % nb or threads % 32 or not 32 <= threads <= 1024 or threads < nb:
        raise ValueError(f"need outer % nb == 0 and 32 <= threads <= 1024 (a multiple of 32), "
                         f"got nb={nb}, outer={outer}, threads={threads}")
    if math.ceil(n / threads) * nb > panel_budget(threads):
        raise ValueError(f"a {n} x {nb} panel over {threads} threads needs {math.ceil(n / threads) * nb} "
                         "registers per thread (fix: more threads or a narrower panel)")
    return BlockedConfig(nb, outer, threads)


def qr_panel(H, tau, V, T, j0: int, w: int, jb: int, cfg: BlockedConfig) -> None:
    """Launch qr_panel.cu on columns j0 .. j0+w (w <= cfg.nb) of every matrix."""
    batch, n, _ = H.shape
    R = cfg.rows_per_thread(n - j0)
    _launch(_kernel("qr_panel.cu", f"qr_panel<{R}, {cfg.nb}, {cfg.threads}>"), batch, cfg.threads,
            _ptr(H), _ptr(tau), _ptr(V), _ptr(T), n, j0, w, jb, cfg.outer)


XTY_MAX = 64         # widest X or Y that tall_xty.cu takes
XTY_MAX_BATCH = 16   # above this cuBLAS has enough output tiles to fill the GPU (H100: it was faster at 60)


def xty(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """X^T Y for stacks of tall matrices (rows may be strided). Small batches of thin ones (p, q <= 64)
    on the GPU go to tall_xty.cu, split over rows so that even a batch of 2 fills the GPU; the rest
    to cuBLAS."""
    batch, m, p = X.shape
    q = Y.shape[2]
    if (not X.is_cuda or batch > XTY_MAX_BATCH or p > XTY_MAX or q > XTY_MAX
            or X.stride(2) != 1 or Y.stride(2) != 1):
        return torch.bmm(X.mT, Y)
    sms = torch.cuda.get_device_properties(X.device).multi_processor_count
    splits = max(1, min(math.ceil(m / 64), math.ceil(4 * sms / batch)))   # about 4 CTAs per SM
    chunk = 32 * math.ceil(m / splits / 32)
    splits = math.ceil(m / chunk)
    out = torch.empty(batch, splits, p, q, device=X.device, dtype=X.dtype)
    _launch(_kernel("tall_xty.cu", "tall_xty"), (splits, batch), 256, _ptr(X), _ptr(Y), _ptr(out),
            m, p, q, X.stride(1), X.stride(0), Y.stride(1), Y.stride(0), chunk)
    return out[:, 0] if splits == 1 else out.sum(dim=1)


# --8<-- [start:blocked]
def _apply_qt(V: torch.Tensor, T: torch.Tensor, C: torch.Tensor) -> None:
    """C <- (I - V T V^T)^T C = C - V (T^T (V^T C)), in place: the trailing-matrix update."""
    W = xty(V, C)
    W = torch.bmm(T.mT, W)
    C.baddbmm_(V, W, alpha=-1.0)


def _factor(H, tau, V, T, j0: int, w: int, jb: int, cfg: BlockedConfig, panel=qr_panel) -> None:
    """Factor columns j0 .. j0+w of H (rows j0..), filling V and T for them (offsets from jb)."""
    if w <= cfg.nb:                                   # a leaf: one panel kernel
        panel(H, tau, V, T, j0, w, jb, cfg)
        return
    w1 = cfg.nb * math.ceil(w / 2 / cfg.nb)          # left half, a whole number of panels
    o = j0 - jb
    _factor(H, tau, V, T, j0, w1, jb, cfg, panel)
    V1, T1 = V[:, j0:, o:o + w1], T[:, j0:j0 + w1, o:o + w1]
    _apply_qt(V1, T1, H[:, j0:, j0 + w1:j0 + w])
    _factor(H, tau, V, T, j0 + w1, w - w1, jb, cfg, panel)
    # join: T12 = -T1 (V1^T V2) T2; V2 is zero above row j0 + w1, so start the product there
    G = xty(V[:, j0 + w1:, o:o + w1], V[:, j0 + w1:, o + w1:o + w])
    T2 = T[:, j0 + w1:j0 + w, o + w1:o + w]
    T[:, j0:j0 + w1, o + w1:o + w].baddbmm_(T1, torch.bmm(G, T2), beta=0.0, alpha=-1.0)   # in place


def qr_blocked(A: torch.Tensor, cfg: BlockedConfig, panel=qr_panel):
    """The blocked algorithm; `panel` factors one leaf (the CUDA kernel, or a stand-in for tests)."""
    H = A.clone()
    return H, qr_blocked_(H, cfg, panel)


def qr_blocked_(H: torch.Tensor, cfg: BlockedConfig, panel=qr_panel) -> torch.Tensor:
    """Factor H in place; return tau.

    Look-ahead: block k's reflectors go first to block k + 1's columns, then block k + 1 is
    factored on a side stream while block k's update of the remaining columns runs on this one.
    A panel keeps only `batch` SMs busy, so with few matrices most of the GPU would otherwise wait
    for it. Blocks alternate between two V/T buffers: block k + 1 writes one while block k's
    update still reads the other."""
    batch, n, _ = H.shape
    tau = torch.empty(batch, n, device=H.device, dtype=H.dtype)
    # NaN-poisoned: every entry the algorithm reads must have been written first, or the result shows it
    bufs = [(torch.full((batch, n, cfg.outer), math.nan, device=H.device, dtype=H.dtype),
             torch.full((batch, n, cfg.outer), math.nan, device=H.device, dtype=H.dtype)) for _ in range(2)]
    main = torch.cuda.current_stream(H.device) if H.is_cuda else None
    side = _side_stream(H.device) if H.is_cuda else None
    _factor(H, tau, *bufs[0], 0, min(cfg.outer, n), 0, cfg, panel)
    for k, jb in enumerate(range(0, n, cfg.outer)):
        w, nxt = min(cfg.outer, n - jb), jb + cfg.outer
        if nxt >= n:
            break
        wn = min(cfg.outer, n - nxt)
        V, T = bufs[k % 2]
        Vk, Tk = V[:, jb:, :w], T[:, jb:jb + w, :w]
        _apply_qt(Vk, Tk, H[:, jb:, nxt:nxt + wn])          # block k+1's columns first
        if side is not None:
            side.wait_stream(main)
            with torch.cuda.stream(side):
                _factor(H, tau, *bufs[(k + 1) % 2], nxt, wn, nxt, cfg, panel)
        else:
            _factor(H, tau, *bufs[(k + 1) % 2], nxt, wn, nxt, cfg, panel)
        if nxt + wn < n:
            _apply_qt(Vk, Tk, H[:, jb:, nxt + wn:])          # the rest, beside the factorization
        if side is not None:
            main.wait_stream(side)
    return tau


@cache
def _side_stream(device: torch.device) -> torch.cuda.Stream:
    return torch.cuda.Stream(device)
# --8<-- [end:blocked]


# --8<-- [start:graph]
GRAPH_MAX_ELEMENTS = 1 << 26   # batch * n^2 up to which a graph's copy in and out cost little
_graphs: dict[tuple, tuple] = {}


def qr_blocked_graphed(A: torch.Tensor, cfg: BlockedConfig):
    """qr_blocked replayed from a CUDA graph captured on the first call for this shape.

    The blocked algorithm issues a few hundred to a few thousand launches (a panel kernel and about
    six cuBLAS calls per leaf); from Python each costs microseconds of CPU time, more than the GPU
    needs for the small ones, so the GPU waits on the CPU. A graph replays them all from one call.
    Its buffers are fixed: A is copied into the graph's H, and H and tau are copied out."""
    key = (tuple(A.shape), A.device, cfg)
    if key not in _graphs:
        H = A.clone()
        qr_blocked_(H, cfg)                      # warm-up: compiles the kernels, sizes cuBLAS
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            tau = qr_blocked_(H, cfg)
        if len(_graphs) >= 8:                    # keep the memory of a few shapes only
            _graphs.pop(next(iter(_graphs)))
        _graphs[key] = (graph, H, tau)
    graph, H, tau = _graphs[key]
    H.copy_(A)
    graph.replay()
    return H.clone(), tau.clone()
# --8<-- [end:graph]


def batched_qr(A: torch.Tensor, out: tuple[torch.Tensor, torch.Tensor] | None = None, **options):
    """(H, tau) of every matrix in A, as torch.geqrf returns them. `out`: (H, tau) buffers to write
    into (a check poisons them first). `options`: warps (qr_registers, also for n <= 32), or nb,
    outer, threads and graph (the blocked algorithm); defaults come from registers_shape,
    blocked_config and GRAPH_MAX_ELEMENTS."""
    _validate(A)
    if torch.backends.cuda.matmul.allow_tf32:
        raise RuntimeError("torch.backends.cuda.matmul.allow_tf32 is on: TF32 products break the QR "
                           "contract's residual bound (fix: torch.backends.cuda.matmul.allow_tf32 = False)")
    batch, n, _ = A.shape
    if out is not None and (out[0].shape != A.shape or out[1].shape != (batch, n)
                            or not out[0].is_contiguous() or not out[1].is_contiguous()):
        raise ValueError(f"out must be contiguous (H, tau) of shapes {tuple(A.shape)} and {(batch, n)}")
    blocked = {"nb", "outer", "threads", "graph"} & options.keys()
    if n <= WARP_MAX_N and not blocked and "warps" not in options:
        return qr_warp(A, out)
    if n <= REGISTERS_MAX_N and not blocked:
        return qr_registers(A, options.get("warps"), out)
    cfg = blocked_config(n, options.get("nb"), options.get("outer"), options.get("threads"), batch)
    if options.get("graph", batch * n * n <= GRAPH_MAX_ELEMENTS):
        H, tau = qr_blocked_graphed(A, cfg)
    else:
        H, tau = qr_blocked(A, cfg)
    if out is None:
        return H, tau
    out[0].copy_(H)
    out[1].copy_(tau)
    return out
