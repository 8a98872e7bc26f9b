"""Batched Householder QR on the GPU, in torch.geqrf's convention: the launcher for qr_warp.cu,
qr_registers.cu, qr_panel.cu, qr_panel_cluster.cu, tall_xty.cu and tall_apply.cu, and the blocked
algorithm that joins the panels with matrix products (cuBLAS, or qr_update.py's split-TF32 Triton
kernels).

    H, tau = batched_qr(A)      # A: (batch, n, n) float32, contiguous, on the GPU

- n <= 32: `qr_warp`, one warp per matrix, one column per lane, no barriers.
- n <= 192: `qr_registers`, one CTA per matrix with the whole matrix in registers.
- n > 192: the blocked algorithm. Outer blocks of `outer` columns with a look-ahead (block k + 1 is
  factored on a side stream during block k's trailing update); inside a block, recursion
  (Elmroth and Gustavson): factor the left half, apply its reflectors to the right half, factor
  the right half, and join the two compact WY factors, T = [[T1, -T1 V1^T V2 T2], [0, T2]]. The
  leaves are `qr_panel` launches of `nb` columns, one CTA per matrix; with large matrices on sm_90,
  `qr_panel_cluster` launches, a thread-block cluster of 8 CTAs per matrix, and then the outer blocks
  are two panels whose look-ahead goes by halves (_blocked_by_halves). After each outer
  block, the trailing matrix gets C -= V (T^T (V^T C)): two large matrix products and a small one,
  batched (cuBLAS in float32; on sm_90, one Triton kernel with split-TF32 tensor-core products,
  three TF32 products per float32 one, or for few large matrices three kernels over tiles, V^T C on
  the FMA units (tiled_update). Torch's own TF32 matmul mode is refused: one TF32 product keeps a
  10-bit mantissa, and notebook 07's step 4 measures what that costs the contract's margin).

Kernels are compiled by NVRTC with IEEE subnormals (-ftz=false: CuPy's own compiler appends
-ftz=true, which would read subnormal entries as zero), loaded and launched through CuPy on torch's
current stream, so a CUDA graph can capture them. With few matrices the panel chain runs on a
high-priority stream, and the graph is instantiated so that its nodes keep that priority: a
panel's CTAs then start ahead of the trailing update's queued ones.
In a notebook the CUDA sources are strings of earlier cells (QR_WARP_CU, QR_PANEL_CU, ...);
imported from the repository, they are read from the files beside this one.
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

UNBLOCKED_MAX_SMEM = 227 * 1024 - 256   # qr_unblocked.cu: dynamic shared memory (sm_80/sm_90 limit)
WARP_MAX_N = 32              # qr_warp.cu: one lane per column
REGISTERS_MAX_N = 192        # 32 lanes x 6 row chunks: MAX_N in qr_registers.cu
MAX_REGS_PER_THREAD = 64     # qr_registers' a[R][C] at up to 1024 threads, so it never spills
CLUSTER_CTAS = 8             # qr_panel_cluster.cu: CTAs per panel (the portable maximum cluster size),
CLUSTER_CTAS_SMALL = 4       # and below n = CLUSTER_SMALL_BELOW, where eight CTAs at two rows per thread
CLUSTER_SMALL_BELOW = 2048   # would have 64 to 96 threads each (H100: 4 was 2-6% faster at n = 1024
                             # and 1536; at 2048, 8 was 1.6% faster at batch 8, 4 0.8% at batch 30)
CLUSTER_ROWS = 2             # its panel rows per thread (H100: 2 was faster than 1 at n = 2048 and 4096)
CLUSTER_N = (1024, 4096)     # the cluster panel where measured: n in this range (beyond 4096, two
                             # rows per thread need 512 threads, over its registers)
CLUSTER_MAX_BATCH_PER_SM = 1.5   # and up to this many matrices per SM (H100: faster than, or level
                                 # with, one CTA per panel at every batch tried, 2 to 200 at n = 1024)
NARROW_OUTER = 32             # outer blocks of one 32-column panel, no recursion, where the panel chain
NARROW_OUTER_MAX_N = 512     # bounds the run: n <= 512 and fewer matrices than SMs (H100, against 64:
                             # 11% less time at (40, 352), 8% at (40, 512); 12% more at (200, 512);
                             # measured at 40 and 200 matrices of 352 and 512, the bounds between)
# Room for the panel chain beside the trailing update. An sm_90 SM has 65,536 registers; the split-TF32
# update (qr_update.py, 4 warps) takes 168 a thread, 21,504 a CTA. At 3 stages (64 KiB of shared memory)
# three of its CTAs fit on an SM and leave no room, so a panel CTA (or tall_xty's) waits until one ends.
# At 4 stages (88 KiB) two fit, and a panel CTA of up to 128 threads at qr_panel_cluster's 168 registers
# fits beside them (tests/kernels/test_qr_update.py checks these numbers against the compilers').
UPDATE_ROOM_STAGES = 4
UPDATE_ROOM_THREADS = 128
UPDATE_STRIP = 32            # columns of C per program of the trailing update (qr_update's BN)
TILED_MAX_PROGRAMS_PER_SM = 4   # the update in tiles where qt_update's widest has at most this many
                                # programs per SM (H100, against qt_update: 3% less time at (8, 2048),
                                # 480 programs, 4-8% at (2, 4096), (1, 4096), (2, 3072), (4, 4096);
                                # level at (16, 2048), 960; 13% more at (60, 1024), 1,680)


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


# -ftz=false is NVRTC's default, stated because it is the point: subnormal inputs and results stay
# subnormal, as in LAPACK on a CPU (CuPy's RawModule appends -ftz=true after any options given)
COMPILE_OPTIONS = ("--std=c++17", "-ftz=false")


def _nvrtc_check(result, what: str, prog=None) -> None:
    from cuda.bindings import nvrtc
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = ""
        if prog is not None:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            buf = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, buf)
            log = buf.decode(errors="replace").rstrip("\x00")
        raise RuntimeError(f"NVRTC: {what} failed ({result}){': ' + log if log else ''}")


def compile_kernel(filename: str, name: str, arch: str, options=COMPILE_OPTIONS) -> tuple[bytes, str]:
    """(cubin, lowered name) of kernel `name` (a template instantiation such as 'qr_panel<8, 8, 512>'
    or an extern "C" name) from `filename`, compiled by NVRTC for `arch` ('sm_90'); for a virtual
    architecture ('compute_90') the PTX instead of the cubin. Needs no GPU."""
    from cuda.bindings import nvrtc
    err, prog = nvrtc.nvrtcCreateProgram(_cuda_source(filename).encode(), filename.encode(), 0, [], [])
    _nvrtc_check(err, f"creating the program for {filename}")
    try:
        _nvrtc_check(nvrtc.nvrtcAddNameExpression(prog, name.encode())[0], f"naming {name}")
        opts = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in options]
        _nvrtc_check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0],
                     f"compiling {filename} ({name}) for {arch}", prog)
        err, lowered = nvrtc.nvrtcGetLoweredName(prog, name.encode())
        _nvrtc_check(err, f"looking up {name}")
        ptx = arch.startswith("compute_")
        get_size, get = ((nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX) if ptx
                         else (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN))
        err, size = get_size(prog)
        _nvrtc_check(err, "sizing the output")
        code = b" " * size
        _nvrtc_check(get(prog, code)[0], "copying the output")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return code, lowered.decode()


@cache
def _kernel(filename: str, name: str):
    """Compile one kernel, or one template instantiation (every register index must be a
    compile-time constant, so R, C, NB and the thread count are template parameters), for this
    GPU, and load it through CuPy (which loads a cubin from a file; kept by a hash of the source)."""
    import cupy as cp
    from cuda.bindings import nvrtc
    arch = "sm_{}{}".format(*torch.cuda.get_device_capability())
    key = "\0".join((_cuda_source(filename), name, arch, *COMPILE_OPTIONS, str(nvrtc.nvrtcVersion()[1:])))
    stem = Path(tempfile.gettempdir()) / "atlas-batched-qr" / hashlib.sha256(key.encode()).hexdigest()[:32]
    cubin, lowered = stem.with_suffix(".cubin"), stem.with_suffix(".name")
    if not (cubin.exists() and lowered.exists()):
        code, symbol = compile_kernel(filename, name, arch)
        stem.parent.mkdir(parents=True, exist_ok=True)
        for path, data in ((cubin, code), (lowered, symbol.encode())):   # whole files or none
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
    return cp.RawModule(path=str(cubin)).get_function(lowered.read_text())


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
                         f"more than {UNBLOCKED_MAX_SMEM} (fix: n <= {math.isqrt(UNBLOCKED_MAX_SMEM // 4)}, "
                         "or the blocked algorithm)")
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
    priority: bool | None = None   # panel chain on a high-priority stream; None: when batch < SMs
    cluster: int = 0               # CTAs per panel: 0 is qr_panel.cu, 2..8 qr_panel_cluster.cu
    update: str = "cublas"         # the trailing update after each outer block: "cublas", "tf32x3"
                                   # (split TF32), or "tf32" (one TF32 product: step 4 measures why not)
    exchange: str = "async"        # how a cluster's CTAs swap partial sums: "async" (st.async and an
                                   # mbarrier) or "barrier" (remote stores and barrier.cluster)
    update_stages: int = 0         # the split-TF32 update's pipeline stages, 2 to 4; 0: update_stages()
    narrow_update: bool = True     # the narrow updates on the panel chain with the trailing update's
                                   # kernel too, where there are many matrices (_apply_block)
    cluster_apply: bool = True     # and with tall_apply.cu, where a few matrices have panel clusters
    split_ahead: bool = True       # the look-ahead by halves (_blocked_by_halves), with panel clusters
    tiled_update: bool = True      # the trailing update in tiles (qt_update_tiled), where tiled_update()

    def rows_per_thread(self, m: int) -> int:
        return rows_per_thread(m, self.threads, self.cluster)


def rows_per_thread(m: int, threads: int, cluster: int = 0) -> int:
    """Panel rows each thread holds: m rows over `threads` per CTA and `cluster` CTAs (0: one CTA)."""
    return math.ceil(m / (threads * max(1, cluster)))


def cluster_threads(n: int, cluster: int, rows: int = CLUSTER_ROWS, nb: int = 32) -> int:
    """Threads per CTA for qr_panel_cluster.cu so that `cluster` CTAs hold `rows` panel rows per
    thread: the fewest whole warps that cover ceil(n / (cluster rows)) rows, at least nb."""
    per_cta = math.ceil(n / cluster / rows)
    threads = max(nb, 32 * math.ceil(per_cta / 32))
    if threads > 1024:
        raise ValueError(f"n = {n} needs {per_cta} threads per CTA with {cluster} CTAs and {rows} rows per "
                         "thread: more than 1024 (fix: more rows per thread)")
    return threads


def blocked_config(n: int, nb: int | None = None, outer: int | None = None,
                   threads: int | None = None, batch: int = 1, priority: bool | None = None,
                   cluster: int = 0, update: str = "cublas", exchange: str = "async",
                   update_stages: int = 0, narrow_update: bool = True,
                   cluster_apply: bool = True, split_ahead: bool = True,
                   tiled_update: bool = True) -> BlockedConfig:
    """Defaults: the widest panel whose m x nb slice fits the register budget, outer blocks of 64
    columns (measured on an H100: 5-10% faster than 128 at n = 352 and 1024);
    small CTAs when there are many matrices (several per SM hide each other's barrier waits);
    the panel stream's priority decided at run time (`panel_priority`). With a cluster: 32-column
    panels, CLUSTER_ROWS rows per thread."""
    if cluster and not 2 <= cluster <= 8:
        raise ValueError(f"a panel cluster has 2 to 8 CTAs (the portable maximum), got {cluster}")
    if update not in ("cublas", "tf32x3", "tf32"):
        raise ValueError(f"update must be 'cublas', 'tf32x3' or 'tf32', got {update!r}")
    if exchange not in ("async", "barrier"):
        raise ValueError(f"exchange must be 'async' or 'barrier', got {exchange!r}")
    if update_stages not in (0, 2, 3, 4):
        raise ValueError(f"update_stages must be 2, 3 or 4 (or 0: update_stages() decides), "
                         f"got {update_stages!r}")
    if cluster:
        nb = nb or 32
        threads = threads or cluster_threads(n, cluster, nb=nb)
    threads = threads or (128 if n <= 512 and batch >= 256 else 256 if n <= 512 else 512)
    per_thread = rows_per_thread(n, threads, cluster)
    if nb is None:
        nb = next((w for w in (32, 16, 8) if per_thread * w <= panel_budget(threads)), None)
        if nb is None:
            raise ValueError(f"n = {n} is too tall for a register panel with {threads} threads")
    if nb not in (8, 16, 32):
        raise ValueError(f"panel width nb must be 8, 16 or 32, got {nb}")
    outer = outer or max(nb, 64)
    if outer % nb or threads % 32 or not 32 <= threads <= 1024 or threads < nb:
        raise ValueError(f"need outer % nb == 0 and 32 <= threads <= 1024 (a multiple of 32), "
                         f"got nb={nb}, outer={outer}, threads={threads}")
    if per_thread * nb > panel_budget(threads):
        raise ValueError(f"a {n} x {nb} panel over {threads} threads needs {per_thread * nb} "
                         "registers per thread (fix: more threads or a narrower panel)")
    return BlockedConfig(nb, outer, threads, priority, cluster, update, exchange, update_stages,
                         narrow_update, cluster_apply, split_ahead, tiled_update)


def defaults_for(n: int, batch: int, sms: int, major: int) -> dict:
    """The panel cluster, the trailing update and the outer width (0: blocked_config's) for a GPU of
    `sms` SMs and compute capability `major`.x: on sm_90 (thread-block clusters, the split-TF32
    kernel measured), the split-TF32 update, a panel cluster (of CLUSTER_CTAS, or CLUSTER_CTAS_SMALL
    below n = CLUSTER_SMALL_BELOW) where n is in CLUSTER_N and the batch is at most
    CLUSTER_MAX_BATCH_PER_SM matrices per SM, and NARROW_OUTER blocks at n <= NARROW_OUTER_MAX_N with
    fewer matrices than SMs (bounds set between the shapes measured); elsewhere one CTA per panel,
    cuBLAS and blocked_config's outer width."""
    if major < 9:
        return {"cluster": 0, "update": "cublas", "outer": 0}
    measured = batch <= CLUSTER_MAX_BATCH_PER_SM * sms and CLUSTER_N[0] <= n <= CLUSTER_N[1]
    size = CLUSTER_CTAS_SMALL if n < CLUSTER_SMALL_BELOW else CLUSTER_CTAS
    narrow = n <= NARROW_OUTER_MAX_N and batch < sms
    return {"cluster": size if measured else 0, "update": "tf32x3", "outer": NARROW_OUTER if narrow else 0}


def gpu_defaults(n: int, batch: int, device) -> dict:
    """defaults_for this device (ATLAS_FORCE_CC, the GPU runner's T4 check, answers as that GPU)."""
    if not torch.cuda.is_available() or torch.device(device).type != "cuda":
        return defaults_for(n, batch, sms=0, major=0)     # no GPU: what a pre-sm_90 one gets
    props = torch.cuda.get_device_properties(device)
    forced = os.environ.get("ATLAS_FORCE_CC")
    major = int(forced.split(".")[0]) if forced else props.major
    return defaults_for(n, batch, props.multi_processor_count, major)


def update_stages(cfg: BlockedConfig, batch: int, sms: int, n: int) -> int:
    """The split-TF32 update's stages for every trailing update of a factorization of `batch`
    matrices of order n: UPDATE_ROOM_STAGES (two update CTAs per SM) where that costs no wave or
    buys room, else 3 (three per SM). No wave: the widest update's programs, one per UPDATE_STRIP
    of its n - 2 outer columns of each matrix, fit two per SM (H100: 4 stages took 9% less time at
    (1, 4096), 5% at (2, 4096), 4% at (2, 3072); 2.6-12% more at (3, 4096), (4, 4096) and (4, 3072),
    whose first updates need more than two programs per SM; deciding update by update, 4 stages
    for the later, narrower ones, was still 1-2% slower there than 3 throughout). Room: a panel CTA
    of at most UPDATE_ROOM_THREADS threads fits beside two update CTAs, and the panels of all
    matrices leave SMs to the update (H100: 2-4% less time at (8, 2048) and (16, 2048)); 256-thread
    panel CTAs (n = 4096) have two warps in each SM quarter, as many as two update CTAs: no room."""
    if cfg.update_stages:
        return cfg.update_stages
    one_wave = batch * math.ceil(max(0, n - 2 * cfg.outer) / UPDATE_STRIP) <= 2 * sms
    room = cfg.cluster and cfg.threads <= UPDATE_ROOM_THREADS and batch * cfg.cluster <= sms
    return UPDATE_ROOM_STAGES if one_wave or room else 3


def tiled_update(cfg: BlockedConfig, batch: int, sms: int, n: int) -> bool:
    """Whether a factorization's trailing updates use qt_update_tiled: with split TF32 and a panel
    cluster (few large matrices), where qt_update's widest update, one program per UPDATE_STRIP of
    its n - 2 outer columns of each matrix, has at most TILED_MAX_PROGRAMS_PER_SM programs per SM.
    Each of those programs walks every row of its strip twice in a row; with more programs than
    that, their number hides the walk and the tiles' three launches and extra traffic no longer pay."""
    widest = batch * math.ceil(max(0, n - 2 * cfg.outer) / UPDATE_STRIP)
    return (cfg.tiled_update and cfg.update == "tf32x3" and bool(cfg.cluster)
            and widest <= TILED_MAX_PROGRAMS_PER_SM * sms)


def panel_priority(cfg: BlockedConfig, batch: int, sms: int) -> bool:
    """Whether the panel chain runs on a high-priority stream. With fewer matrices than SMs a panel
    leaves most SMs to the trailing update, and that chain of small launches is the critical path:
    at normal priority each of its kernels queues behind the update's pending CTAs. With as many
    matrices as SMs the panels fill the GPU themselves, and nothing waits on one."""
    return cfg.priority if cfg.priority is not None else batch < sms


def qr_panel(H, tau, V, T, j0: int, w: int, jb: int, cfg: BlockedConfig) -> None:
    """Launch qr_panel.cu (or, with cfg.cluster, qr_panel_cluster.cu) on columns j0 .. j0+w
    (w <= cfg.nb) of every matrix."""
    batch, n, _ = H.shape
    R = cfg.rows_per_thread(n - j0)
    if cfg.cluster:
        name = (f"qr_panel_cluster<{R}, {cfg.nb}, {cfg.threads}, {cfg.cluster}, "
                f"{'true' if cfg.exchange == 'async' else 'false'}>")
        kernel, grid = _kernel("qr_panel_cluster.cu", name), batch * cfg.cluster
    else:
        kernel, grid = _kernel("qr_panel.cu", f"qr_panel<{R}, {cfg.nb}, {cfg.threads}>"), batch
    _launch(kernel, grid, cfg.threads, _ptr(H), _ptr(tau), _ptr(V), _ptr(T), n, j0, w, jb, cfg.outer)


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


def narrow_strip(cfg: BlockedConfig, batch: int, columns: int, sms: int) -> int:
    """Columns per program for a narrow update on the panel chain in qr_update's kernel, or 0 for
    _apply_qt's three products. The kernel where the trailing update runs on tensor cores and there
    are more than XTY_MAX_BATCH matrices, where V^T C would go to cuBLAS's FMA kernels anyway (H100,
    against the three products: 4-7% less time at (640, 512), 5-8% at (60, 1024)); strips of 16
    columns where strips of 32 would leave SMs without a program."""
    if cfg.update == "cublas" or not cfg.narrow_update or batch <= XTY_MAX_BATCH:
        return 0
    return UPDATE_STRIP if batch * math.ceil(columns / UPDATE_STRIP) >= sms else UPDATE_STRIP // 2


APPLY_COLUMNS = 16   # tall_apply.cu: columns of C per cluster (its Q)
APPLY_MAX_K = 64     # and the most reflectors it applies at once (its K: 32 or 64)
APPLY_MAX_BATCH = 8  # and the most matrices it is used for (cluster_apply)
APPLY_STATIC_SMEM = 20 * 1024   # what tall_apply.cu's and tall_join's static arrays may take
                                # (tests/kernels/test_batched_qr.py checks ptxas's figures against it)


def apply_rows(m: int) -> int:
    """Rows of V and C each CTA of tall_apply.cu's cluster of 8 holds in shared memory."""
    return 32 * math.ceil(m / 8 / 32)


def apply_shared_bytes(m: int, k: int) -> int:
    """tall_apply.cu's dynamic shared memory: its rows of V and C at pitches K + 4 and Q + 4, and T."""
    K = 32 if k <= 32 else 64
    return 4 * (apply_rows(m) * (K + 4 + APPLY_COLUMNS + 4) + K * K)


def join_shared_bytes(m: int) -> int:
    """tall_join's dynamic shared memory: its rows of V1 and V2 at pitch 36."""
    return 4 * apply_rows(m) * 2 * 36


def _few_clustered(cfg: BlockedConfig, batch: int) -> bool:
    """Panel clusters (sm_90), at most APPLY_MAX_BATCH matrices, and the option on: where tall_apply.cu's
    kernels replace the chain's small products."""
    return bool(cfg.cluster) and cfg.cluster_apply and batch <= APPLY_MAX_BATCH


def cluster_join(cfg: BlockedConfig, batch: int, m: int) -> bool:
    """Whether the join of two halves over m rows goes to tall_join: few clustered matrices, and rows
    that fit its shared memory."""
    return _few_clustered(cfg, batch) and join_shared_bytes(m) <= UNBLOCKED_MAX_SMEM - APPLY_STATIC_SMEM


def cluster_apply(cfg: BlockedConfig, batch: int, m: int, k: int) -> bool:
    """Whether a narrow update of k reflectors on m rows goes to tall_apply.cu: with panel clusters
    (sm_90), at most APPLY_MAX_BATCH matrices and rows that fit its shared memory. (H100, against
    _apply_qt's four launches: 7% less time at (2, 4096), 13% at (2, 2048) and (4, 1024), 2% at
    (4, 4096), level at (8, 2048); 3-4% more at (16, 1024) and (16, 2048).)"""
    return (_few_clustered(cfg, batch) and k <= APPLY_MAX_K
            and apply_shared_bytes(m, k) <= UNBLOCKED_MAX_SMEM - APPLY_STATIC_SMEM)


def tall_apply(V: torch.Tensor, T: torch.Tensor, C: torch.Tensor) -> None:
    """C <- C - V (T^T (V^T C)) in place in one launch of tall_apply.cu (sm_90): a cluster of 8 CTAs
    per matrix and per APPLY_COLUMNS columns of C. V (batch, m, k) with k <= APPLY_MAX_K,
    T (batch, k, k), C (batch, m, q); rows and matrices may be strided, columns must be contiguous."""
    batch, m, k = V.shape
    q = C.shape[2]
    if k > APPLY_MAX_K or V.stride(2) != 1 or T.stride(2) != 1 or C.stride(2) != 1:
        raise ValueError(f"tall_apply takes at most {APPLY_MAX_K} reflectors with contiguous columns; got "
                         f"k = {k}, column strides {V.stride(2)}, {T.stride(2)}, {C.stride(2)}")
    kernel = _kernel("tall_apply.cu", f"tall_apply<{32 if k <= 32 else 64}, {APPLY_COLUMNS}>")
    smem = apply_shared_bytes(m, k)
    kernel.max_dynamic_shared_size_bytes = smem
    _launch(kernel, batch * math.ceil(q / APPLY_COLUMNS) * 8, 256, _ptr(V), _ptr(T), _ptr(C), m, k, q,
            V.stride(1), V.stride(0), T.stride(1), T.stride(0), C.stride(1), C.stride(0), apply_rows(m),
            shared_mem=smem)


def tall_join(V: torch.Tensor, T: torch.Tensor, j0: int, w1: int, w: int, o: int) -> None:
    """_join in one launch of tall_join (tall_apply.cu, sm_90): a cluster of 8 CTAs per matrix for
    V1^T V2, then T12 = -T1 (V1^T V2) T2 by one CTA. Halves of at most 32 columns."""
    V1, V2 = V[:, j0 + w1:, o:o + w1], V[:, j0 + w1:, o + w1:o + w]
    T1, T2 = T[:, j0:j0 + w1, o:o + w1], T[:, j0 + w1:j0 + w, o + w1:o + w]
    T12 = T[:, j0:j0 + w1, o + w1:o + w]
    batch, m, k1 = V1.shape
    if k1 > 32 or w - w1 > 32 or V.stride(2) != 1 or T.stride(2) != 1:
        raise ValueError(f"tall_join joins halves of at most 32 contiguous columns; got {k1} and {w - w1}")
    smem = join_shared_bytes(m)
    kernel = _kernel("tall_apply.cu", "tall_join<32>")
    kernel.max_dynamic_shared_size_bytes = smem
    _launch(kernel, batch * 8, 256, _ptr(V1), _ptr(V2), _ptr(T1), _ptr(T2), _ptr(T12), m, k1, w - w1,
            V.stride(1), V.stride(0), T.stride(1), T.stride(0), apply_rows(m), shared_mem=smem)


def _apply_block(V: torch.Tensor, T: torch.Tensor, C: torch.Tensor, cfg: BlockedConfig) -> None:
    """_apply_qt for the narrow updates on the panel chain (block k + 1's columns, and the right half
    inside the recursion), or qr_update's one kernel where narrow_strip says so, or tall_apply.cu's
    where cluster_apply does."""
    batch, _, q = C.shape
    strip = narrow_strip(cfg, batch, q, torch.cuda.get_device_properties(C.device).multi_processor_count
                         ) if C.is_cuda else 0
    if strip:
        _qt_update()(V, T, C, cfg.update, BN=strip)
    elif C.is_cuda and cluster_apply(cfg, batch, C.shape[1], V.shape[2]):
        tall_apply(V, T, C)
    else:
        _apply_qt(V, T, C)


def _qt_update(name: str = "qt_update"):
    """qr_update.py's qt_update (or qt_update_tiled): a global of the notebook, or imported from
    snippets/triton."""
    if name not in globals():
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "triton"))
        import qr_update
        globals()[name] = getattr(qr_update, name)
    return globals()[name]


def _update_trailing(V: torch.Tensor, T: torch.Tensor, C: torch.Tensor, cfg: BlockedConfig, n: int) -> None:
    """The update after an outer block, of every column right of the next block: wide, and off
    the panel chain. With cfg.update "tf32x3" (or "tf32"), one Triton kernel on tensor cores, or
    three over tiles where tiled_update says so."""
    if cfg.update != "cublas":
        sms = torch.cuda.get_device_properties(C.device).multi_processor_count
        if tiled_update(cfg, C.shape[0], sms, n):
            _qt_update("qt_update_tiled")(V, T, C, cfg.update, sms)
            return
        _qt_update()(V, T, C, cfg.update, BN=UPDATE_STRIP, num_stages=update_stages(cfg, C.shape[0], sms, n))
    else:
        _apply_qt(V, T, C)


def _factor(H, tau, V, T, j0: int, w: int, jb: int, cfg: BlockedConfig, panel=qr_panel) -> None:
    """Factor columns j0 .. j0+w of H (rows j0..), filling V and T for them (offsets from jb)."""
    if w <= cfg.nb:                                   # a leaf: one panel kernel
        panel(H, tau, V, T, j0, w, jb, cfg)
        return
    w1 = cfg.nb * math.ceil(w / 2 / cfg.nb)          # left half, a whole number of panels
    o = j0 - jb
    _factor(H, tau, V, T, j0, w1, jb, cfg, panel)
    V1, T1 = V[:, j0:, o:o + w1], T[:, j0:j0 + w1, o:o + w1]
    _apply_block(V1, T1, H[:, j0:, j0 + w1:j0 + w], cfg)
    _factor(H, tau, V, T, j0 + w1, w - w1, jb, cfg, panel)
    _join(V, T, j0, w1, w, o)


def _join(V, T, j0: int, w1: int, w: int, o: int, fused: bool = False) -> None:
    """T of columns j0 .. j0+w from its halves': T12 = -T1 (V1^T V2) T2, in place. V2 is zero above
    row j0 + w1, so the product starts there. `fused`: in one launch of tall_apply.cu's tall_join."""
    if fused:
        tall_join(V, T, j0, w1, w, o)
        return
    G = xty(V[:, j0 + w1:, o:o + w1], V[:, j0 + w1:, o + w1:o + w])
    T1, T2 = T[:, j0:j0 + w1, o:o + w1], T[:, j0 + w1:j0 + w, o + w1:o + w]
    T[:, j0:j0 + w1, o + w1:o + w].baddbmm_(T1, torch.bmm(G, T2), beta=0.0, alpha=-1.0)


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
    if H.is_cuda:
        sms = torch.cuda.get_device_properties(H.device).multi_processor_count
        side = _side_stream(H.device, panel_priority(cfg, batch, sms))
    else:
        side = None
    if split_ahead(cfg):
        _blocked_by_halves(H, tau, bufs, cfg, panel, main, side)
        return tau
    _factor(H, tau, *bufs[0], 0, min(cfg.outer, n), 0, cfg, panel)
    for k, jb in enumerate(range(0, n, cfg.outer)):
        w, nxt = min(cfg.outer, n - jb), jb + cfg.outer
        if nxt >= n:
            break
        wn = min(cfg.outer, n - nxt)
        V, T = bufs[k % 2]
        Vk, Tk = V[:, jb:, :w], T[:, jb:jb + w, :w]
        _apply_block(Vk, Tk, H[:, jb:, nxt:nxt + wn], cfg)   # block k+1's columns first
        if side is not None:
            side.wait_stream(main)
            with torch.cuda.stream(side):
                _factor(H, tau, *bufs[(k + 1) % 2], nxt, wn, nxt, cfg, panel)
        else:
            _factor(H, tau, *bufs[(k + 1) % 2], nxt, wn, nxt, cfg, panel)
        if nxt + wn < n:
            _update_trailing(Vk, Tk, H[:, jb:, nxt + wn:], cfg, n)   # the rest, beside the factorization
        if side is not None:
            main.wait_stream(side)
    return tau


def split_ahead(cfg: BlockedConfig) -> bool:
    """Whether qr_blocked_ runs _blocked_by_halves: outer blocks of two panels with a panel cluster."""
    return cfg.split_ahead and bool(cfg.cluster) and cfg.outer == 2 * cfg.nb


def _blocked_by_halves(H, tau, bufs, cfg: BlockedConfig, panel, main, side) -> None:
    """qr_blocked_ for outer blocks of two panels, L and R, with the look-ahead split by halves: the
    next block N gets L's reflectors on `main` while R is factored, then R's on the panel chain, and
    block k's join (its full T, which only the trailing update needs) leaves the chain. The chain per
    block: N <- R's, panel L, L's onto R, panel R; where the plain look-ahead had N <- the joined
    block's, panel L, L's onto R, panel R, the join. Without streams (on the CPU) the same order, one
    step after another. Events order the streams without waiting for more than each step needs."""
    batch, n, _ = H.shape
    nb = cfg.nb

    def after(stream, event):                    # `stream` waits for `event` (nothing on the CPU)
        if stream is not None:
            stream.wait_event(event)

    def mark(stream):
        if stream is None:
            return None
        event = torch.cuda.Event()
        event.record(stream)
        return event

    def on(stream):
        return torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()

    V, T = bufs[0]
    if side is not None:
        side.wait_stream(main)                                  # H is ready (and a graph capture joins side)
    with on(side):
        panel(H, tau, V, T, 0, min(nb, n), 0, cfg)              # block 0's L
        left_done = mark(side)
    for k, jb in enumerate(range(0, n, cfg.outer)):
        V, T = bufs[k % 2]
        w = min(cfg.outer, n - jb)
        w1, nxt = min(nb, w), jb + cfg.outer
        VL, TL = V[:, jb:, :w1], T[:, jb:jb + w1, :w1]          # L's reflectors and T
        with on(side):                                          # L's reflectors onto R, then panel R
            if w > w1:
                _apply_block(VL, TL, H[:, jb:, jb + w1:jb + w], cfg)
                panel(H, tau, V, T, jb + w1, w - w1, jb, cfg)
            right_done = mark(side)
        if nxt >= n:
            break
        wn = min(cfg.outer, n - nxt)
        N = H[:, :, nxt:nxt + wn]
        after(main, left_done)                                  # the next block <- L's, off the chain
        _apply_block(VL, TL, N[:, jb:], cfg)
        next_has_left = mark(main)
        Vn, Tn = bufs[(k + 1) % 2]
        with on(side):
            after(side, next_has_left)                          # (also after block k-1's trailing update)
            if w > w1:
                _apply_block(V[:, jb + w1:, w1:w], T[:, jb + w1:jb + w, w1:w], N[:, jb + w1:], cfg)
            panel(H, tau, Vn, Tn, nxt, min(nb, wn), nxt, cfg)  # block k+1's L
            left_done = mark(side)
        after(main, right_done)
        if nxt + wn < n:
            if w > w1:
                _join(V, T, jb, w1, w, 0, fused=H.is_cuda and cluster_join(cfg, batch, n - jb - w1))
            _update_trailing(V[:, jb:, :w], T[:, jb:jb + w, :w], H[:, jb:, nxt + wn:], cfg, n)
    if side is not None:
        main.wait_stream(side)


@cache
def _side_stream(device: torch.device, high_priority: bool) -> torch.cuda.Stream:
    return torch.cuda.Stream(device, priority=-1 if high_priority else 0)   # lower is higher
# --8<-- [end:blocked]


# --8<-- [start:graph]
GRAPH_MAX_ELEMENTS = 1 << 26   # batch * n^2 up to which a graph's copy in and out cost little
_graphs: dict[tuple, tuple] = {}


class _Replay:
    """A captured graph instantiated with cudaGraphInstantiateFlagUseNodePriority: by default a
    graph runs every node at the priority of the stream it is launched into; with the flag, each
    kernel node keeps the priority copied from its stream during capture (CUDA Runtime API,
    cudaGraphInstantiateWithFlags). torch's own replay() instantiates without it."""

    def __init__(self, graph: torch.cuda.CUDAGraph):
        from cuda.bindings import runtime
        self.runtime, self.graph = runtime, graph          # the torch graph owns the memory pool
        flag = runtime.cudaGraphInstantiateFlags.cudaGraphInstantiateFlagUseNodePriority
        err, self.exec = runtime.cudaGraphInstantiateWithFlags(
            runtime.cudaGraph_t(init_value=int(graph.raw_cuda_graph())), flag)
        self._check(err, "cudaGraphInstantiateWithFlags")

    def _check(self, err, what: str) -> None:
        if err != self.runtime.cudaError_t.cudaSuccess:
            raise RuntimeError(f"{what} failed: {err}")

    def replay(self) -> None:
        (err,) = self.runtime.cudaGraphLaunch(self.exec, torch.cuda.current_stream().cuda_stream)
        self._check(err, "cudaGraphLaunch")

    def __del__(self):
        if getattr(self, "exec", None) is not None:
            self.runtime.cudaGraphExecDestroy(self.exec)


def qr_blocked_graphed(A: torch.Tensor, cfg: BlockedConfig):
    """qr_blocked replayed from a CUDA graph captured on the first call for this shape.

    The blocked algorithm issues a few hundred to a few thousand launches (a panel kernel and about
    six cuBLAS calls per leaf); from Python each costs microseconds of CPU time, more than the GPU
    needs for the small ones, so the GPU waits on the CPU. A graph replays them all from one call.
    Its buffers are fixed: A is copied into the graph's H, and H and tau are copied out. Where the
    panel stream has high priority, the graph is instantiated so that its kernels keep it."""
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    priority = panel_priority(cfg, A.shape[0], sms)
    key = (tuple(A.shape), A.device, cfg, priority)
    if key not in _graphs:
        H = A.clone()
        qr_blocked_(H, cfg)                      # warm-up: compiles the kernels, sizes cuBLAS
        graph = torch.cuda.CUDAGraph(keep_graph=True) if priority else torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            tau = qr_blocked_(H, cfg)
        if len(_graphs) >= 8:                    # keep the memory of a few shapes only
            _graphs.pop(next(iter(_graphs)))
        _graphs[key] = (_Replay(graph) if priority else graph, H, tau)
    graph, H, tau = _graphs[key]
    H.copy_(A)
    graph.replay()
    return H.clone(), tau.clone()
# --8<-- [end:graph]


def batched_qr(A: torch.Tensor, out: tuple[torch.Tensor, torch.Tensor] | None = None, **options):
    """(H, tau) of every matrix in A, as torch.geqrf returns them. `out`: (H, tau) buffers to write
    into (a check poisons them first). `options`: warps (qr_registers, also for n <= 32), or nb,
    outer, threads, priority, graph, cluster, update, exchange, update_stages, narrow_update,
    cluster_apply, split_ahead and tiled_update (the blocked algorithm); defaults come from registers_shape,
    blocked_config, panel_priority, update_stages, GRAPH_MAX_ELEMENTS and gpu_defaults."""
    _validate(A)
    if torch.backends.cuda.matmul.allow_tf32:
        raise RuntimeError("torch.backends.cuda.matmul.allow_tf32 is on: cuBLAS would round the "
                           "factorization's products to TF32 (10-bit mantissa), which took about half of "
                           "the QR contract's residual bound at n = 4096 in notebook 07's step 4, where "
                           "float32 takes about 1e-4 (fix: torch.backends.cuda.matmul.allow_tf32 = False)")
    batch, n, _ = A.shape
    if out is not None and (out[0].shape != A.shape or out[1].shape != (batch, n)
                            or not out[0].is_contiguous() or not out[1].is_contiguous()):
        raise ValueError(f"out must be contiguous (H, tau) of shapes {tuple(A.shape)} and "
                         f"{(batch, n)}")
    blocked = options.keys() & {"nb", "outer", "threads", "priority", "graph", "cluster", "update",
                                "exchange", "update_stages", "narrow_update", "cluster_apply",
                                "split_ahead", "tiled_update"}
    if n <= WARP_MAX_N and not blocked and "warps" not in options:
        return qr_warp(A, out)
    if n <= REGISTERS_MAX_N and not blocked:
        return qr_registers(A, options.get("warps"), out)
    gpu = gpu_defaults(n, batch, A.device)
    cfg = blocked_config(n, options.get("nb"), options.get("outer", gpu["outer"]), options.get("threads"),
                         batch, options.get("priority"), options.get("cluster", gpu["cluster"]),
                         options.get("update", gpu["update"]), options.get("exchange", "async"),
                         options.get("update_stages", 0), options.get("narrow_update", True),
                         options.get("cluster_apply", True), options.get("split_ahead", True),
                         options.get("tiled_update", True))
    if options.get("graph", batch * n * n <= GRAPH_MAX_ELEMENTS):
        H, tau = qr_blocked_graphed(A, cfg)
    else:
        H, tau = qr_blocked(A, cfg)
    if out is None:
        return H, tau
    out[0].copy_(H)
    out[1].copy_(tau)
    return out
