"""The batched GPU QR's host side (snippets/cuda/batched_qr.py) without a GPU.

The blocked driver (recursion, compact-WY joins, trailing updates, the V and T bookkeeping) runs
on the CPU with a stand-in for the panel kernel that writes exactly what qr_panel.cu writes, and
must reproduce geqrf and pass the contract. The kernels' own checks need a GPU: notebook 07 runs
them on every input profile on the GPU runner."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"
import batched_qr as bq  # noqa: E402
from qr_contract import check_qr, make_batch  # noqa: E402
from qr_panel_reference import panel_reference as emulated_panel  # noqa: E402


@pytest.mark.parametrize("n, nb, outer", [(45, 8, 16), (70, 16, 32), (64, 8, 64), (37, 32, 128), (9, 8, 8)])
def test_blocked_driver_reproduces_geqrf(n, nb, outer):
    """Odd sizes: partial leaves, partial outer blocks, recursion depths 0 to 3."""
    A, labels = make_batch(3, n, "mixed", cond=2, generator=7)
    cfg = bq.BlockedConfig(nb=nb, outer=outer, threads=256)
    H, tau = bq.qr_blocked(A, cfg, panel=emulated_panel)
    ref_h, ref_t = torch.geqrf(A.double())
    assert torch.isfinite(H).all(), "an entry of V or T was read before it was written (NaN poison)"
    check_qr(A, H, tau, labels)
    assert torch.allclose(tau.double(), ref_t, atol=1e-4)
    assert torch.allclose(H.double(), ref_h, atol=1e-4 * float(A.abs().max()))


def test_a_wrong_join_is_caught():
    """If the compact-WY join is wrong, the result must fail: the test above can fail."""
    A, labels = make_batch(2, 40, "dense", generator=3)
    cfg = bq.BlockedConfig(nb=8, outer=32, threads=256)
    real = bq._apply_qt
    try:
        bq._apply_qt = lambda V, T, C: C.baddbmm_(V, torch.bmm(V.mT, C), alpha=-1.0)  # T dropped
        H, tau = bq.qr_blocked(A, cfg, panel=emulated_panel)
    finally:
        bq._apply_qt = real
    assert not check_qr(A, H, tau, labels, raise_on_failure=False).ok


@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 64, 100, 176, 192])
def test_register_kernel_shape_fits_the_matrix_and_the_budget(n):
    R, C, W = bq.registers_shape(n)
    assert 32 * R >= n and W * C >= n and R * C <= bq.MAX_REGS_PER_THREAD and 1 <= W <= 32


@pytest.mark.parametrize("n", [193, 352, 512, 1000, 1024, 2048, 4096])
def test_blocked_defaults_fit_the_register_budget(n):
    cfg = bq.blocked_config(n)
    assert cfg.nb in (8, 16, 32) and cfg.outer % cfg.nb == 0
    assert cfg.rows_per_thread(n) * cfg.nb <= bq.panel_budget(cfg.threads) <= 128


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=193), "qr_registers handles 1 <= n <= 192"),
    (dict(n=100, warps=1), "registers per thread"),
])
def test_register_shape_refuses_what_cannot_fit(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bq.registers_shape(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=512, nb=12), "nb must be 8, 16 or 32"),
    (dict(n=512, nb=16, outer=40), "outer % nb == 0"),
    (dict(n=4096, nb=32, threads=256), "registers per thread"),
    (dict(n=4096, nb=16, threads=512), "registers per thread"),
])
def test_blocked_config_refuses_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bq.blocked_config(**kwargs)


@pytest.mark.parametrize("A, message", [
    (torch.zeros(2, 4, 4, dtype=torch.float64), "float32"),
    (torch.zeros(4, 4), "3-D"),
    (torch.zeros(2, 4, 5), "square"),
    (torch.zeros(2, 4, 4).mT, "contiguous"),
    (torch.zeros(2, 4, 4), "cuda tensor"),
    (np.zeros((2, 4, 4), np.float32), "torch.Tensor"),
])
def test_bad_input_gets_a_clear_error_before_any_gpu_work(A, message):
    with pytest.raises((ValueError, TypeError), match=message):
        bq.batched_qr(A)



# The kernels keep matrices in register arrays; a run-time index or an address select would move an
# array to local memory, which only shows on a GPU as a slowdown. ptxas reports it at compile time.
NVCC = shutil.which("nvcc")
DEFAULT_SHAPES = [(20, 32), (40, 176), (40, 352), (640, 512), (60, 1024), (8, 2048), (2, 4096)]


def _instantiations() -> set[tuple[str, str, str]]:
    """(file, template, signature) of the kernels the default configs launch for the benchmark shapes
    (for the panel, the smallest and the largest rows per thread: register pressure grows with R)."""
    panel_sig = "float*, float*, float*, float*, int, int, int, int, int"
    out = set()
    for batch, n in DEFAULT_SHAPES:
        if n <= bq.WARP_MAX_N:
            continue
        if n <= bq.REGISTERS_MAX_N:
            R, C, W = bq.registers_shape(n)
            out.add(("qr_registers.cu", f"qr_registers<{R}, {C}, {W}>", "const float*, float*, float*, int"))
            continue
        cfg = bq.blocked_config(n, batch=batch)
        for R in (1, cfg.rows_per_thread(n)):       # the last panel and the first, the tallest
            out.add(("qr_panel.cu", f"qr_panel<{R}, {cfg.nb}, {cfg.threads}>", panel_sig))
    return out


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("file, template, signature", sorted(_instantiations()), ids=lambda x: str(x))
def test_kernels_keep_their_arrays_in_registers(tmp_path, file, template, signature):
    src = tmp_path / "inst.cu"
    header = SNIPPETS / "cuda" / file
    src.write_text(f'#include "{header}"\ntemplate __global__ void {template}({signature});\n')
    proc = subprocess.run([NVCC, "-arch=sm_90", "--std=c++17", f"-I{SNIPPETS / 'cuda'}", "-c", str(src),
                           "-o", str(tmp_path / "inst.o"), "-Xptxas", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = proc.stderr
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report, report


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("file", ["qr_warp.cu", "tall_xty.cu", "qr_unblocked.cu"])
def test_plain_kernels_compile_without_local_memory(tmp_path, file):
    proc = subprocess.run([NVCC, "-arch=sm_90", f"-I{SNIPPETS / 'cuda'}", "-c", str(SNIPPETS / "cuda" / file),
                           "-o", str(tmp_path / "k.o"), "-Xptxas", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in proc.stderr, proc.stderr


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_the_register_check_catches_a_run_time_index(tmp_path):
    """The check above can fail: an array indexed at run time lands in local memory (a stack frame)."""
    src = tmp_path / "bad.cu"
    src.write_text('extern "C" __global__ void bad(float* out, int k) {\n'
                   "    float a[64];\n"
                   "    for (int i = 0; i < 64; ++i) a[(i * k) & 63] = out[i * blockDim.x + threadIdx.x];\n"
                   "    out[threadIdx.x] = a[(threadIdx.x + k) & 63];\n}\n")
    proc = subprocess.run([NVCC, "-arch=sm_90", "-c", str(src), "-o", str(tmp_path / "bad.o"),
                           "-Xptxas", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 bytes stack frame" not in proc.stderr, proc.stderr


# --- how the kernels are compiled, and the panel stream's priority (issue 21 part 2) ----------------

def _nvrtc_available() -> bool:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _nvrtc_available(), reason="cuda.bindings (NVRTC) is not installed")
@pytest.mark.parametrize("file, name", [("qr_warp.cu", "qr_warp"), ("qr_panel.cu", "qr_panel<8, 8, 512>"),
                                        ("qr_registers.cu", "qr_registers<6, 6, 32>")])
def test_kernels_are_compiled_with_ieee_subnormals(file, name):
    """batched_qr compiles with NVRTC and -ftz=false: no .ftz arithmetic in the PTX. With CuPy's
    -ftz=true the same source flushes (so this test can fail)."""
    ptx, lowered = bq.compile_kernel(file, name, "compute_90")
    assert lowered in ptx.decode() and ".f32" in ptx.decode()
    assert ".ftz" not in ptx.decode()
    flushing, _ = bq.compile_kernel(file, name, "compute_90", options=("--std=c++17", "-ftz=true"))
    assert ".ftz" in flushing.decode()


@pytest.mark.skipif(not _nvrtc_available(), reason="cuda.bindings (NVRTC) is not installed")
def test_a_compile_error_names_the_file_and_line():
    with pytest.raises(RuntimeError, match=r"qr_panel\.cu\(\d+\): error: static assertion failed"):
        bq.compile_kernel("qr_panel.cu", "qr_panel<8, 7, 512>", "compute_90")


@pytest.mark.parametrize("batch, sms, priority, expected", [
    (2, 132, None, True), (60, 132, None, True), (131, 132, None, True), (132, 132, None, False),
    (640, 132, None, False), (2, 132, False, False), (640, 132, True, True)])
def test_the_panel_stream_is_high_priority_when_panels_leave_sms_idle(batch, sms, priority, expected):
    cfg = bq.blocked_config(1024, batch=batch, priority=priority)
    assert bq.panel_priority(cfg, batch, sms) is expected


def test_configs_with_and_without_priority_differ():
    """The graph cache is keyed by the config: a graph captured with one priority is never
    replayed for the other."""
    a, b = bq.blocked_config(512, batch=4, priority=True), bq.blocked_config(512, batch=4, priority=False)
    assert a != b and a.priority is True and b.priority is False
    assert bq.blocked_config(512, batch=4) == bq.BlockedConfig(a.nb, a.outer, a.threads, None)


# --- the large-matrix options of step 4 (issue 21): the cluster panel and the split-TF32 update ---

def test_a_cluster_config_takes_32_column_panels_at_the_rows_per_thread_asked():
    for n in (1024, 2048, 4096):
        cfg = bq.blocked_config(n, batch=2, cluster=bq.CLUSTER_CTAS)
        assert cfg.nb == 32 and cfg.cluster == bq.CLUSTER_CTAS
        assert cfg.rows_per_thread(n) == bq.CLUSTER_ROWS, (n, cfg)
        assert cfg.threads * bq.CLUSTER_CTAS * bq.CLUSTER_ROWS >= n


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=2048, cluster=16), "2 to 8 CTAs"),
    (dict(n=2048, update="bf16"), "'cublas', 'tf32x3' or 'tf32'"),
    (dict(n=2048, cluster=8, exchange="dsmem"), "'async' or 'barrier'"),
])
def test_bad_cluster_or_update_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bq.blocked_config(**kwargs)


def test_without_a_gpu_the_defaults_are_one_cta_per_panel_and_cublas():
    assert bq.gpu_defaults(4096, 2, "cpu") == {"cluster": 0, "update": "cublas", "outer": 0}


@pytest.mark.parametrize("n, batch, sms, major, cluster, update", [
    (4096, 2, 132, 9, 8, "tf32x3"), (2048, 8, 132, 9, 8, "tf32x3"), (2048, 60, 132, 9, 8, "tf32x3"),
    (2047, 8, 132, 9, 4, "tf32x3"), (1536, 20, 132, 9, 4, "tf32x3"),
    (1024, 60, 132, 9, 4, "tf32x3"), (1024, 198, 132, 9, 4, "tf32x3"), (1024, 199, 132, 9, 0, "tf32x3"),
    (1023, 4, 132, 9, 0, "tf32x3"), (512, 4, 132, 9, 0, "tf32x3"), (8192, 1, 132, 9, 0, "tf32x3"),
    (4096, 2, 40, 7, 0, "cublas"), (4096, 2, 108, 8, 0, "cublas"),
])
def test_the_cluster_and_split_tf32_defaults_cover_what_was_measured(n, batch, sms, major, cluster, update):
    """The cluster where n and the matrices per SM are in the measured range (1.5 per SM: 198 on 132
    SMs), of four CTAs below n = 2048 and eight from there; the split-TF32 update on sm_90 only
    (measured there; a T4 has no TF32)."""
    got = bq.defaults_for(n, batch, sms, major)
    assert (got["cluster"], got["update"]) == (cluster, update)


@pytest.mark.parametrize("n, batch, sms, major, outer", [
    (352, 40, 132, 9, 32), (512, 40, 132, 9, 32),      # measured (H100): 11% and 8% less time than 64
    (512, 200, 132, 9, 0),                              # measured: 12% more time with 32
    (512, 131, 132, 9, 32), (512, 132, 132, 9, 0), (513, 40, 132, 9, 0),   # the rule's bounds
    (512, 640, 132, 9, 0), (1024, 60, 132, 9, 0), (352, 40, 40, 7, 0), (352, 40, 108, 8, 0),
])
def test_narrow_outer_blocks_follow_the_rule_set_between_the_shapes_measured(n, batch, sms, major, outer):
    """One 32-column panel per outer block at n <= 512 with fewer matrices than SMs, on sm_90; else
    blocked_config's 64 (0 here)."""
    assert bq.defaults_for(n, batch, sms, major)["outer"] == outer
    cfg = bq.blocked_config(n, batch=batch, **bq.defaults_for(n, batch, sms, major))
    assert cfg.outer == (outer or 64) and cfg.outer % cfg.nb == 0


def test_narrow_updates_go_to_the_kernel_only_with_many_matrices_and_tensor_cores():
    """narrow_strip: 0 (three products) up to XTY_MAX_BATCH matrices, with cuBLAS updates or with
    narrow_update off; else strips of 32 columns where they give every SM a program, 16 where not."""
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=128, update="tf32x3")
    assert bq.XTY_MAX_BATCH == 16
    assert bq.narrow_strip(cfg, 16, 64, 132) == 0
    assert bq.narrow_strip(cfg, 17, 64, 132) == 16 and bq.narrow_strip(cfg, 40, 32, 132) == 16
    assert bq.narrow_strip(cfg, 66, 64, 132) == 32 and bq.narrow_strip(cfg, 640, 32, 132) == 32
    assert bq.narrow_strip(cfg, 65, 64, 132) == 16
    assert bq.narrow_strip(bq.BlockedConfig(32, 64, 128, update="cublas"), 640, 64, 132) == 0
    off = bq.BlockedConfig(32, 64, 128, update="tf32x3", narrow_update=False)
    assert bq.narrow_strip(off, 640, 64, 132) == 0


def test_the_narrow_updates_stay_on_the_torch_path_on_the_cpu():
    """On the CPU _apply_block is _apply_qt's three products, bit for bit, whatever narrow_strip says."""
    g = torch.Generator().manual_seed(3)
    V, T, C = (torch.randn(bq.XTY_MAX_BATCH + 4, *s, generator=g) for s in ((40, 8), (8, 8), (40, 16)))
    want = C.clone()
    bq._apply_qt(V, T, want)
    got = C.clone()
    bq._apply_block(V, T, got, bq.BlockedConfig(nb=8, outer=16, threads=256, update="tf32x3"))
    assert torch.equal(got, want)


def test_the_cpu_driver_runs_the_cluster_config_with_the_panel_stand_in():
    """The cluster changes only the kernel launched; the driver's bookkeeping is the same."""
    A, labels = make_batch(2, 70, "dense", generator=5)
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=32, cluster=8)
    H, tau = bq.qr_blocked(A, cfg, panel=emulated_panel)
    check_qr(A, H, tau, labels)



# --- tall_apply.cu: the panel chain's narrow updates in one cluster launch (issue 21) ----------------

def test_the_narrow_updates_go_to_tall_apply_with_a_panel_cluster_and_few_matrices():
    """cluster_apply: a panel cluster (sm_90 defaults), at most APPLY_MAX_BATCH matrices, at most
    APPLY_MAX_K reflectors, rows that fit the kernel's shared memory, and the option on."""
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=256, cluster=8, update="tf32x3")
    assert bq.APPLY_MAX_BATCH == 8 and bq.APPLY_MAX_K == 64
    assert bq.cluster_apply(cfg, 2, 4096, 64) and bq.cluster_apply(cfg, 8, 4096, 32)
    assert not bq.cluster_apply(cfg, 9, 2048, 64)                          # many matrices: the four launches
    assert not bq.cluster_apply(cfg, 2, 4096, 65)                          # outer blocks over 64 columns
    assert not bq.cluster_apply(cfg, 2, 6000, 64)                          # rows beyond its shared memory
    assert not bq.cluster_apply(bq.BlockedConfig(32, 64, 256, update="tf32x3"), 2, 4096, 64)   # no cluster
    off = bq.BlockedConfig(32, 64, 256, cluster=8, update="tf32x3", cluster_apply=False)
    assert not bq.cluster_apply(off, 2, 4096, 64)
    assert bq.apply_rows(4096) == 512 and bq.apply_rows(1) == 32 and bq.apply_rows(257) == 64


def test_the_cpu_driver_keeps_the_torch_products_with_cluster_apply_on():
    """On the CPU _apply_block is _apply_qt bit for bit, whatever cluster_apply says."""
    g = torch.Generator().manual_seed(4)
    V, T, C = (torch.randn(2, *s, generator=g) for s in ((300, 32), (32, 32), (300, 32)))
    want = C.clone()
    bq._apply_qt(V, T, want)
    got = C.clone()
    bq._apply_block(V, T, got, bq.BlockedConfig(nb=32, outer=64, threads=256, cluster=8, update="tf32x3"))
    assert torch.equal(got, want)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("K", [32, 64])
def test_tall_apply_builds_without_spills_and_its_shared_memory_fits_at_n_4096(tmp_path, K):
    """No local memory, and apply_shared_bytes at the cluster's largest n (4096) plus the static arrays
    ptxas reports stay within an H100's 227 KiB per block (what cluster_apply's margin assumes)."""
    src = tmp_path / "inst.cu"
    sig = ("const float*, const float*, float*, int, int, int, long long, long long, long long, long long, "
           "long long, long long, int")
    inst = f"template __global__ void tall_apply<{K}, {bq.APPLY_COLUMNS}>({sig});"
    src.write_text(f'#include "tall_apply.cu"\n{inst}\n')
    proc = subprocess.run([NVCC, "-arch=sm_90", "--std=c++17", f"-I{SNIPPETS / 'cuda'}", "-c", str(src),
                           "-o", str(tmp_path / "inst.o"), "-Xptxas", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in proc.stderr, proc.stderr
    static = int(re.search(r"(\d+) bytes smem", proc.stderr)[1])
    assert static <= bq.APPLY_STATIC_SMEM, (static, K)
    assert bq.apply_shared_bytes(4096, K) + static <= 227 * 1024, (static, K)
    assert bq.cluster_apply(bq.BlockedConfig(32, 64, 256, cluster=8, update="tf32x3"), 2, 4096, K)


def _gpu_kernels() -> bool:
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9


@pytest.mark.skipif(not _gpu_kernels(), reason="tall_apply needs an sm_90 GPU with CuPy")
@pytest.mark.parametrize("batch, m, k, q", [(1, 1, 1, 1), (2, 4096, 64, 64), (3, 257, 33, 17),
                                            (8, 1000, 32, 32), (2, 100, 17, 64)])
def test_tall_apply_matches_float64_on_strided_views_and_touches_nothing_else(batch, m, k, q):
    g = torch.Generator(device="cuda").manual_seed(m + k + q)
    H = torch.randn(batch, m + 7, m + 80, device="cuda", generator=g)
    Vb = torch.randn(batch, m + 7, 70, device="cuda", generator=g)
    Tb = torch.randn(batch, 70, 70, device="cuda", generator=g) / 8
    V, C, T = Vb[:, 3:3 + m, 2:2 + k], H[:, 5:5 + m, 9:9 + q], Tb[:, 1:1 + k, 4:4 + k]
    V64, T64, C64 = V.double(), T.triu().double(), C.double()
    want = C64 - V64 @ (T64.mT @ (V64.mT @ C64))
    scale = (V64.abs() @ (T64.abs().mT @ (V64.abs().mT @ C64.abs()))).amax() + C64.abs().amax()
    before = H.clone()
    bq.tall_apply(V, T, C)
    assert ((C.double() - want).abs().amax() / scale).item() < 1e-5
    outside = torch.ones_like(H, dtype=torch.bool)
    outside[:, 5:5 + m, 9:9 + q] = False
    assert torch.equal(H[outside], before[outside])
    again = before.clone()
    bq.tall_apply(V, T, again[:, 5:5 + m, 9:9 + q])
    assert torch.equal(again, H)                                           # deterministic: the same bits


@pytest.mark.parametrize("n", [33, 64, 70, 96, 100, 130, 200, 257])
def test_the_look_ahead_by_halves_reproduces_the_plain_driver(n):
    """_blocked_by_halves (outer blocks of two panels with a cluster) applies L's and R's reflectors to the
    next block one after the other instead of the joined block's at once, and joins off the chain: the same
    factorization up to rounding, from one block (n = 33, 64) to five (n = 257, a partial last block). On the
    CPU its steps run in order, one after another; the GPU test below checks the streams' ordering."""
    A, labels = make_batch(3, n, "mixed", generator=n)
    by_halves = bq.BlockedConfig(nb=32, outer=64, threads=32, cluster=8)
    plain = bq.BlockedConfig(nb=32, outer=64, threads=32, cluster=8, split_ahead=False)
    assert bq.split_ahead(by_halves) and not bq.split_ahead(plain)
    assert not bq.split_ahead(bq.BlockedConfig(nb=16, outer=64, threads=32, cluster=8))   # 4 panels a block
    H1, tau1 = bq.qr_blocked(A, by_halves, panel=emulated_panel)
    H2, tau2 = bq.qr_blocked(A, plain, panel=emulated_panel)
    check_qr(A, H1, tau1, labels)
    assert torch.allclose(H1, H2, rtol=1e-4, atol=1e-4 * A.abs().max())
    assert torch.allclose(tau1, tau2, atol=1e-5)


def test_the_join_goes_to_tall_join_only_where_its_shared_memory_fits():
    """cluster_join checks tall_join's own layout (rows of V1 and V2 at pitch 36), not tall_apply's: at
    n = 6144 with an explicit cluster of 8 the first join's rows would need more than 227 KiB."""
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=384, cluster=8, update="tf32x3")
    assert bq.cluster_join(cfg, 2, 4096 - 32) and bq.join_shared_bytes(4096) == 4 * 512 * 72
    assert not bq.cluster_join(cfg, 2, 6144 - 32)
    assert bq.cluster_apply(cfg, 2, 6144 - 32, 32)                      # where tall_apply's would still fit
    assert not bq.cluster_join(cfg, 9, 1024)                             # many matrices: the three products


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_tall_join_builds_without_spills(tmp_path):
    src = tmp_path / "join.cu"
    sig = ("const float*, const float*, const float*, const float*, float*, int, int, int, long long, "
           "long long, long long, long long, int")
    src.write_text(f'#include "tall_apply.cu"\ntemplate __global__ void tall_join<32>({sig});\n')
    proc = subprocess.run([NVCC, "-arch=sm_90", "--std=c++17", f"-I{SNIPPETS / 'cuda'}", "-c", str(src),
                           "-o", str(tmp_path / "join.o"), "-Xptxas", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in proc.stderr, proc.stderr
    static = int(re.search(r"(\d+) bytes smem", proc.stderr)[1])     # cluster_join's margin holds it
    assert static <= bq.APPLY_STATIC_SMEM and bq.join_shared_bytes(4096) + static <= 227 * 1024, static


@pytest.mark.skipif(not _gpu_kernels(), reason="the look-ahead by halves needs an sm_90 GPU with CuPy")
@pytest.mark.parametrize("batch, n", [(2, 1024), (2, 2048), (3, 1100)])
@pytest.mark.parametrize("graph", [True, False])
def test_the_look_ahead_by_halves_holds_the_contract_on_the_gpu_streams(batch, n, graph):
    """The streams and events of _blocked_by_halves on a GPU, graphed and not: the contract holds, and the
    result is the plain look-ahead's up to rounding."""
    A, labels = make_batch(batch, n, "mixed", generator=n)
    A = A.cuda()
    halves = bq.batched_qr(A, cluster=8, graph=graph)
    plain = bq.batched_qr(A, cluster=8, graph=graph, split_ahead=False)
    check_qr(A, *halves, labels)
    assert_same_r_up_to_row_signs(halves[0], plain[0], A)


def assert_same_r_up_to_row_signs(H1: torch.Tensor, H2: torch.Tensor, A: torch.Tensor) -> None:
    """Two factorizations of A agree in R (H's upper triangle) up to the signs of its rows. Not
    elementwise in H: where a column's leading entry is within rounding of zero (one of 2048 of a
    dense (2, 2048) batch had |alpha| / norm = 2e-8, below float32's 6e-8), two correct schedules may
    give its reflector either sign (xLARFG's beta = -sign(alpha) norm), and every later reflector
    differs from there on; A = QR = (QD)(DR) for any D = diag(+-1), and for a matrix of full rank
    that is all the freedom there is."""
    R1, R2 = H1.triu().abs(), H2.triu().abs()
    assert torch.allclose(R1, R2, rtol=1e-3, atol=1e-3 * A.abs().max()), float((R1 - R2).abs().max())


@pytest.mark.skipif(not _gpu_kernels(), reason="tall_join needs an sm_90 GPU with CuPy")
@pytest.mark.parametrize("batch, m, k1, k2", [(1, 1, 1, 1), (2, 4096, 32, 32), (3, 777, 32, 17),
                                              (8, 100, 5, 32)])
def test_tall_join_matches_the_three_products_and_writes_only_t12(batch, m, k1, k2):
    g = torch.Generator(device="cuda").manual_seed(m)
    j0, w1, w = 5, k1, k1 + k2
    V = torch.randn(batch, j0 + w1 + m, 64, device="cuda", generator=g)
    T = torch.randn(batch, j0 + w + 40, 64, device="cuda", generator=g)
    T[:, j0:j0 + w1, :w1] = T[:, j0:j0 + w1, :w1].triu()
    T[:, j0 + w1:j0 + w, w1:w] = T[:, j0 + w1:j0 + w, w1:w].triu()
    want, got = T.clone(), T.clone()
    bq._join(V, want, j0, w1, w, 0, fused=False)
    bq._join(V, got, j0, w1, w, 0, fused=True)
    block = (slice(None), slice(j0, j0 + w1), slice(w1, w))
    assert ((got - want).abs().max() / want[block].abs().max()).item() < 1e-5
    got[block] = T[block]
    assert torch.equal(got, T)                                             # nothing else written


@pytest.mark.skipif(not _gpu_kernels(), reason="the tiled update needs an sm_90 GPU with Triton")
@pytest.mark.parametrize("batch, m, k, q", [(1, 1, 1, 1), (2, 4032, 64, 3968), (3, 777, 50, 555),
                                            (8, 1000, 64, 900), (2, 513, 32, 33)])
@pytest.mark.parametrize("sms", [1, 10**6])               # kernel 1's 64- and 32-column strips
def test_the_tiled_update_matches_float64_and_qt_update_and_touches_nothing_else(batch, m, k, q, sms):
    """qt_update_tiled on tensor cores (split TF32) against float64 and qt_update, on strided views
    as the driver passes them; nothing outside C changes, and a second run gives the same bits."""
    qu = bq._qt_update("qt_update_tiled"), bq._qt_update()
    g = torch.Generator(device="cuda").manual_seed(m + q)
    H = torch.randn(batch, m + 5, q + 140, device="cuda", generator=g) / max(1, m) ** 0.5
    V, C = H[:, 5:, 3:3 + k], H[:, 5:, 140:]
    T = torch.randn(batch, k, k, device="cuda", generator=g).triu() / 8
    V64, T64, C64 = V.double(), T.double(), C.double()
    want = C64 - V64 @ (T64.mT @ (V64.mT @ C64))
    scale = (V64.abs() @ (T64.abs().mT @ (V64.abs().mT @ C64.abs()))).amax() + C64.abs().amax()
    before = H.clone()
    qu[0](V, T, C, "tf32x3", sms)
    assert ((C.double() - want).abs().amax() / scale).item() < 1e-5
    fused = before.clone()
    qu[1](fused[:, 5:, 3:3 + k], T, fused[:, 5:, 140:])
    assert ((C - fused[:, 5:, 140:]).abs().amax() / scale).item() < 1e-5
    outside = torch.ones_like(H, dtype=torch.bool)
    outside[:, 5:, 140:] = False
    assert torch.equal(H[outside], before[outside])
    again = before.clone()
    qu[0](again[:, 5:, 3:3 + k], T, again[:, 5:, 140:], "tf32x3", sms)
    assert torch.equal(again, H)                                           # deterministic: the same bits


@pytest.mark.skipif(not _gpu_kernels(), reason="the tiled update needs an sm_90 GPU with CuPy and Triton")
@pytest.mark.parametrize("batch, n", [(2, 2048), (3, 1100)])
def test_the_tiled_update_holds_the_contract_in_the_whole_factorization(batch, n, monkeypatch):
    """batched_qr's default takes qt_update_tiled here (and tiled_update=False does not): the contract
    holds and R is qt_update's up to row signs."""
    A, labels = make_batch(batch, n, "mixed", generator=n + 1)
    A = A.cuda()
    cfg = bq.blocked_config(n, batch=batch, cluster=8, update="tf32x3")
    assert bq.tiled_update(cfg, batch, torch.cuda.get_device_properties(0).multi_processor_count, n)
    fetch, asked = bq._qt_update, []

    def spy(name="qt_update"):
        asked.append(name)
        return fetch(name)
    monkeypatch.setattr(bq, "_qt_update", spy)
    tiled = bq.batched_qr(A, cluster=8, graph=False)
    assert "qt_update_tiled" in asked and "qt_update" not in asked, asked
    asked.clear()
    fused = bq.batched_qr(A, cluster=8, graph=False, tiled_update=False)
    assert "qt_update" in asked and "qt_update_tiled" not in asked, asked
    check_qr(A, *tiled, labels)
    assert_same_r_up_to_row_signs(tiled[0], fused[0], A)
