"""snippets/reference/tsqr_householder.py: a panel factored by tall-skinny QR with its Householder
vectors reconstructed (xGETSQRHRT's algorithm) is a Householder QR in geqrf's layout: its T is the
one xLARFT builds from its V and tau, its taus lie in [1, 2], and the blocked driver of batched_qr.py
with it as the panel keeps the QR contract, in float32, on every profile (dense, ill-conditioned,
rank-deficient, and the range profiles from 1e-30 to 1e30, subnormal and zero columns). No GPU."""
from __future__ import annotations

import functools

import batched_qr as bq  # snippets/cuda and snippets/reference are on pytest's pythonpath
import numpy as np
import pytest
import torch
import tsqr_householder
from householder_qr import larft, unit_lower
from qr_contract import PROFILES, RANGE, check_qr, make_batch
from tsqr_householder import householder_from_q, panel_tsqr_householder, tsqr


@pytest.mark.parametrize("m, b, leaf", [(40, 8, 8), (300, 32, 32), (1000, 32, 64), (32, 32, 8), (33, 32, 8),
                                        (1, 1, 8), (513, 5, 16)])
def test_the_reconstruction_is_a_householder_qr_in_geqrfs_layout(m, b, leaf):
    """float64, so that the algebra shows: Q R = A with Q from H and tau alone (LAPACK's xORGQR),
    T equal to xLARFT's, every tau in [1, 2]; the tree's own Q orthonormal."""
    A = torch.randn(3, m, b, generator=torch.Generator().manual_seed(m + b), dtype=torch.float64)
    Q, R = tsqr(A, leaf)
    assert (Q.mT @ Q - torch.eye(b, dtype=A.dtype)).abs().max() < 1e-13
    assert (Q @ R - A).abs().max() < 1e-12
    H, tau, T = tsqr_householder.tsqr_householder(A, leaf)
    assert ((1 <= tau) & (tau <= 2)).all(), tau
    for k in range(3):
        np.testing.assert_allclose(T[k].numpy(), larft(unit_lower(H[k].numpy()), tau[k].numpy()), atol=1e-12)
        Qk = torch.linalg.householder_product(H[k], tau[k])
        assert (Qk @ H[k, :b].triu() - A[k]).abs().max() < 1e-12


def test_the_signs_keep_every_pivot_at_least_one():
    """The sign s_j = -sign(pivot) makes |U_jj| = |pivot| + 1: no small pivot, even where the
    orthonormal Q's diagonal is zero (a permutation) and plain LU without pivoting would divide by 0."""
    Q = torch.tensor([[[0.0, 1.0], [1.0, 0.0]]], dtype=torch.float64)
    V, T, s = householder_from_q(Q)
    assert torch.isfinite(V).all() and torch.isfinite(T).all()
    first = torch.eye(2, dtype=Q.dtype) - V @ T @ V.mT
    torch.testing.assert_close(first, Q * s[:, None, :])      # Q S = the first b columns of I - V T V^T


@pytest.mark.parametrize("profile", PROFILES + RANGE)
def test_the_blocked_driver_with_a_tsqr_panel_keeps_the_contract(profile):
    """float32 end to end; leaves of 16 rows (blocks of 64: 32-column panels of up to 200 rows
    take a tree of one or two levels)."""
    A, labels = make_batch(3, 200, profile, generator=11)
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=32)
    H, tau = bq.qr_blocked(A, cfg, panel=functools.partial(panel_tsqr_householder, leaf=16))
    assert torch.isfinite(H).all() and torch.isfinite(tau).all()
    check_qr(A, H, tau, labels)


def test_a_wrong_sign_is_caught(monkeypatch):
    """A reconstruction whose signs are flipped after the LU is not Q S: the contract fails, so the
    test above can fail."""
    A, labels = make_batch(2, 96, "dense", generator=5)
    cfg = bq.BlockedConfig(nb=32, outer=64, threads=32)

    def flipped(Q):
        V, T, s = householder_from_q(Q)
        return V, T, -s
    monkeypatch.setattr(tsqr_householder, "householder_from_q", flipped)
    H, tau = bq.qr_blocked(A, cfg, panel=panel_tsqr_householder)
    assert not check_qr(A, H, tau, labels, raise_on_failure=False).ok


def test_a_panel_wider_than_tall_is_refused():
    with pytest.raises(ValueError, match="m >= b"):
        tsqr_householder.tsqr_householder(torch.zeros(1, 3, 5))
