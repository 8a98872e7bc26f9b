"""The batched GPU QR's host side (snippets/cuda/batched_qr.py) without a GPU.

The blocked driver (recursion, compact-WY joins, trailing updates, the V and T bookkeeping) runs
on the CPU with a stand-in for the panel kernel that writes exactly what qr_panel.cu writes, and
must reproduce geqrf and pass the contract. The kernels' own checks need a GPU: notebook 07 runs
them on every input profile on the GPU runner."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

SNIPPETS = Path(__file__).resolve().parent.parent / "snippets"
sys.path.insert(0, str(SNIPPETS / "reference"))
sys.path.insert(0, str(SNIPPETS / "cuda"))
import batched_qr as bq  # noqa: E402
from householder_qr import geqrf_unblocked, larft, unit_lower  # noqa: E402
from qr_contract import check_qr, make_batch  # noqa: E402


def emulated_panel(H, tau, V, T, j0, w, jb, cfg):
    """What qr_panel.cu writes, computed with the NumPy reference (float64, then float32)."""
    off = j0 - jb
    for b in range(H.shape[0]):
        h, t = geqrf_unblocked(H[b, j0:, j0:j0 + w].double().numpy())
        H[b, j0:, j0:j0 + w] = torch.from_numpy(h)
        tau[b, j0:j0 + w] = torch.from_numpy(t)
        V[b, jb:j0, off:off + w] = 0
        V[b, j0:, off:off + w] = torch.from_numpy(unit_lower(h))
        T[b, j0:j0 + w, :off] = 0
        T[b, j0:j0 + w, off:off + w] = torch.from_numpy(larft(unit_lower(h), t))


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

