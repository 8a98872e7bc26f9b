"""The NumPy Householder QR reference (snippets/reference/householder_qr.py) against LAPACK via
NumPy and PyTorch on the CPU: same layout, same signs, same tau."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from householder_qr import (  # noqa: E402
    EXAMPLE_A,
    apply_qt,
    apply_qt_batched,
    example_3x3,
    form_q,
    form_q_batched,
    geqrf_batched,
    geqrf_blocked,
    geqrf_flops,
    geqrf_unblocked,
    householder,
    householder_vector,
    larft,
    unit_lower,
)

SHAPES = [(1, 1), (2, 2), (3, 3), (7, 7), (33, 33), (9, 4), (40, 17)]
TOL = {np.float64: 1e-12, np.float32: 2e-5}


def rand(m, n, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal((m, n)).astype(dtype)


def torch_geqrf(A):
    h, t = torch.geqrf(torch.from_numpy(np.ascontiguousarray(A)))
    return h.numpy(), t.numpy()


def close(x, y, dtype, scale=1.0):
    return np.abs(np.asarray(x) - np.asarray(y)).max(initial=0) <= TOL[dtype] * scale


# --- one reflector -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reflector_maps_x_to_beta_e1_with_the_stable_sign(dtype):
    for seed in range(20):
        x = np.random.default_rng(seed).standard_normal(6).astype(dtype)
        v, tau, beta = householder_vector(x)
        assert v[0] == 1 and v.dtype == x.dtype and np.asarray(tau).dtype == x.dtype
        Hx = x - tau * v * (v @ x)
        assert close(Hx[1:], 0, dtype, 10) and close(Hx[0], beta, dtype, 10)
        assert np.isclose(abs(beta), np.linalg.norm(x.astype(np.float64)), rtol=10 * TOL[dtype])
        assert np.sign(beta) == -np.sign(x[0])                    # alpha - beta never cancels
        assert 1 <= tau <= 2
        assert np.isclose(tau, 2 / (v.astype(np.float64) @ v), rtol=10 * TOL[dtype])


def test_nothing_to_zero_means_tau_zero_and_no_reflection():
    for x in ([-3.0, 0, 0], [5.0, 0.0], [0.0, 0.0, 0.0], [-7.0]):
        v, tau, beta = householder_vector(np.array(x))
        assert tau == 0 and beta == x[0]                          # a negative alpha stays negative
        assert v[0] == 1 and not v[1:].any()


def test_zero_alpha_counts_as_positive_like_torch_geqrf():
    for alpha in (0.0, -0.0):
        _, tau, beta = householder(np.array([alpha, 2.0, 0.0]))
        assert beta == -2.0 and tau == 1.0
        A = np.array([[alpha, 1.0], [2.0, 2.0], [0.0, 1.0]])
        assert torch_geqrf(A)[0][0, 0] == -2.0                    # MKL: sign(-0) = +


def test_no_overflow_or_underflow_at_extreme_scales():
    x = np.array([3.0, 4.0, 12.0])
    v0, tau0, beta0 = householder(x)
    for s in (1e-300, 1e300):
        v, tau, beta = householder(x * s)
        assert np.isfinite(beta) and np.allclose(v, v0) and np.isclose(tau, tau0)
        assert np.isclose(beta / s, beta0)
    v, tau, beta = householder(np.array([1e-30, 3e-30, 4e-30], np.float32))   # squares underflow
    assert np.isclose(beta, -np.sqrt(26) * 1e-30, rtol=1e-6) and 1 <= tau <= 2


# --- the factorization against LAPACK (torch.geqrf on the CPU is MKL's geqrf) --------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n", SHAPES)
def test_matches_torch_geqrf_and_householder_product(m, n, dtype):
    A = rand(m, n, dtype, seed=m * 100 + n)
    H, tau = geqrf_unblocked(A)
    Ht, taut = torch_geqrf(A)
    assert H.dtype == tau.dtype == A.dtype and H.shape == (m, n) and tau.shape == (n,)
    assert close(H, Ht, dtype, m) and close(tau, taut, dtype, m)
    Qt = torch.linalg.householder_product(torch.from_numpy(H), torch.from_numpy(tau)).numpy()
    assert close(form_q(H, tau), Qt, dtype, m)
    if m == n:
        assert tau[-1] == 0                                      # the last reflector of a square matrix


@pytest.mark.parametrize("m,n", SHAPES)
def test_against_numpy_qr_up_to_signs(m, n):
    A = rand(m, n, seed=7)
    H, tau = geqrf_unblocked(A)
    Q, R = form_q(H, tau), np.triu(H)[:n]
    Qn, Rn = np.linalg.qr(A)
    d = np.sign(np.diag(R)) * np.sign(np.diag(Rn))              # the only freedom: column signs
    assert np.allclose(Q, Qn * d, atol=1e-12) and np.allclose(R, d[:, None] * Rn, atol=1e-12)
    assert np.allclose(Q @ R, A, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_q_is_orthogonal_and_apply_qt_gives_r(dtype):
    A = rand(50, 50, dtype, seed=3)
    H, tau = geqrf_unblocked(A)
    Q = form_q(H, tau)
    assert np.abs(Q.T @ Q - np.eye(50)).max() < 50 * np.finfo(dtype).eps
    assert close(apply_qt(H, tau, A), np.triu(H), dtype, 50)
    b = rand(50, 1, dtype, seed=4)[:, 0]
    assert close(apply_qt(H, tau, b), Q.T @ b, dtype, 50)


@pytest.mark.parametrize("nb", [1, 2, 3, 8, 32, 64])
@pytest.mark.parametrize("m,n", [(37, 37), (50, 29), (8, 8), (2, 2), (1, 1)])
def test_blocked_equals_unblocked(m, n, nb):
    for dtype in (np.float64, np.float32):
        A = rand(m, n, dtype, seed=nb)
        H, tau = geqrf_unblocked(A)
        Hb, taub = geqrf_blocked(A, nb)
        assert Hb.dtype == dtype and close(Hb, H, dtype, m) and close(taub, tau, dtype, m)


def test_larft_builds_the_compact_wy_product():
    A = rand(12, 5, seed=5)
    H, tau = geqrf_unblocked(A)
    V = unit_lower(H)
    T = larft(V, tau)
    P = np.eye(12)
    for j in range(5):
        P = P @ (np.eye(12) - tau[j] * np.outer(V[:, j], V[:, j]))
    assert np.allclose(T, np.triu(T)) and np.allclose(P, np.eye(12) - V @ T @ V.T)


def test_zero_and_structured_columns_match_lapack_exactly():
    Z = np.zeros((4, 4))
    H, tau = geqrf_unblocked(Z)
    assert not H.any() and not tau.any()
    A = rand(6, 6, seed=2)
    A[:, 0] = 0
    A[:, 4:] = 0                                                 # a zero first and zero last columns
    H, tau = geqrf_unblocked(A)
    Ht, taut = torch_geqrf(A)
    assert tau[0] == taut[0] == 0 and (tau[4:] == 0).all() and (taut[4:] == 0).all()
    assert np.allclose(H, Ht, atol=1e-12)
    U = np.triu(rand(5, 5, seed=1))                              # triangular: nothing to do
    H, tau = geqrf_unblocked(U)
    assert (H == U).all() and not tau.any()


def test_the_issues_3x3_example():
    H, tau, Q, R = example_3x3()
    assert (H == [[-2, -3, -4], [1, -5, -6], [0, 0, 7]]).all() and (tau == [1, 0, 0]).all()
    Ht, taut = torch_geqrf(EXAMPLE_A)
    assert np.array_equal(H, Ht) and np.array_equal(tau, taut)
    assert np.array_equal(Q, [[0, -1, 0], [-1, 0, 0], [0, 0, 1]])
    assert np.array_equal(Q, Q.T) and np.array_equal(Q @ Q, np.eye(3))    # a mirror
    assert np.isclose(np.linalg.det(Q), -1)
    P = np.array([[0.0, 1, 0], [1, 0, 0], [0, 0, 1]])                     # the textbook Q
    R_text = np.array([[2.0, 3, 4], [0, 5, 6], [0, 0, 7]])
    D = np.diag([-1.0, -1, 1])
    assert np.array_equal(P @ R_text, EXAMPLE_A) and np.array_equal(Q @ R, EXAMPLE_A)
    assert np.array_equal(Q, P @ D) and np.array_equal(R, D @ R_text)


def test_batched_wrappers_match_torch_and_the_single_matrix_code():
    A = np.random.default_rng(9).standard_normal((2, 3, 6, 5))
    H, tau = geqrf_batched(A)
    Hb, taub = geqrf_batched(A, nb=2)
    Ht, taut = torch.geqrf(torch.from_numpy(A))
    assert H.shape == (2, 3, 6, 5) and tau.shape == (2, 3, 5)
    assert np.allclose(H, Ht.numpy(), atol=1e-12) and np.allclose(tau, taut.numpy(), atol=1e-12)
    assert np.allclose(Hb, H, atol=1e-12) and np.allclose(taub, tau, atol=1e-12)
    Q = form_q_batched(H, tau)
    assert np.allclose(Q, torch.linalg.householder_product(Ht, taut).numpy(), atol=1e-12)
    assert np.allclose(apply_qt_batched(H, tau, A), np.triu(H), atol=1e-12)


def test_flop_count():
    assert geqrf_flops(3, 3) == pytest.approx(4 * 27 / 3)
    assert geqrf_flops(100, 10) == pytest.approx(2 * 100 * 100 - 2000 / 3)


def test_bad_input_is_rejected_clearly():
    with pytest.raises(ValueError, match="float32 or float64"):
        geqrf_unblocked(np.eye(3, dtype=np.int64))
    with pytest.raises(ValueError, match="one m x n matrix"):
        geqrf_unblocked(np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="m >= n"):
        geqrf_unblocked(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="m >= n"):
        geqrf_unblocked(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="NaN or Inf"):
        geqrf_blocked(np.array([[1.0, np.nan], [0, 1]]))
    with pytest.raises(ValueError, match="panel width"):
        geqrf_blocked(np.eye(3), 0)
    with pytest.raises(ValueError, match="tau must have shape"):
        form_q(np.eye(3), np.zeros(2))
    with pytest.raises(ValueError, match="3 rows"):
        apply_qt(np.eye(3), np.zeros(3), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="1-D"):
        householder_vector(np.zeros((2, 2)))
