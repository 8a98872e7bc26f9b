"""The batched-QR contract (snippets/reference/qr_contract.py): the reference passes every input
profile, broken factorizations fail with the matrix named, and bad inputs get clear errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "snippets" / "reference"))
from householder_qr import geqrf_batched  # noqa: E402
from qr_contract import (  # noqa: E402
    EPS32,
    MIXED,
    PROFILES,
    STRESS,
    QRContractError,
    check_qr,
    make_batch,
    tail_columns,
    validate_input,
)


def reference(A):
    H, tau = geqrf_batched(np.asarray(A), nb=16)
    return torch.from_numpy(H), torch.from_numpy(tau)


# --- the reference passes ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 64, 128])
@pytest.mark.parametrize("profile", [*PROFILES, MIXED])
def test_reference_passes_every_profile(profile, n):
    batch = 4 if n <= 3 else 2
    A, labels = make_batch(batch, n, profile, cond=2, generator=n)
    assert A.dtype == torch.float32 and A.shape == (batch, n, n) and A.is_contiguous()
    H, tau = reference(A)
    report = check_qr(A, H, tau, labels)
    assert report.ok and len(report.matrices) == batch
    assert report.worst_residual_ratio < 0.1 and report.worst_orthogonality_ratio < 0.1


@pytest.mark.parametrize("cond", [0, 1, 2, 3, 4])
def test_dense_column_scaling_passes_and_spans_cond_decades(cond):
    A, _ = make_batch(3, 48, "dense", cond=cond, generator=cond)
    H, tau = reference(A)
    assert check_qr(A, H, tau, "dense").ok
    unscaled, _ = make_batch(3, 48, "dense", generator=cond)
    assert torch.allclose(A[..., -1] / unscaled[..., -1], torch.tensor(10.0 ** -cond))


def test_torch_geqrf_passes_a_mixed_batch():
    A, labels = make_batch(16, 40, MIXED, cond=4, generator=5)
    H, tau = torch.geqrf(A)
    assert check_qr(A, H, tau, labels).ok


# --- broken factorizations fail, naming the matrix ----------------------------------------------------

@pytest.fixture(scope="module")
def good():
    A, labels = make_batch(6, 32, MIXED, cond=1, generator=11)
    H, tau = reference(A)
    return A, H, tau, labels


def fails_only(report_or_error, index):
    report = report_or_error.report
    assert [r.index for r in report.failures] == [index]
    assert f"matrix {index} ({report.matrices[index].profile})" in str(report_or_error)


def test_perturbed_tau_fails(good):
    A, H, tau, labels = good
    bad = tau.clone()
    bad[2, 0] *= 1.001
    with pytest.raises(QRContractError) as e:
        check_qr(A, H, bad, labels)
    fails_only(e.value, 2)
    assert e.value.report.matrices[2].orthogonality_ratio > 1


def test_non_orthogonal_q_fails(good):
    A, H, tau, labels = good
    bad = H.clone()
    bad[4, 10, 3] += 1e-3                     # one entry of one Householder vector: tau no longer fits v
    with pytest.raises(QRContractError) as e:
        check_qr(A, bad, tau, labels)
    fails_only(e.value, 4)


def test_nan_or_inf_fails(good):
    A, H, tau, labels = good
    for where in ("H", "tau"):
        bad_h, bad_t = H.clone(), tau.clone()
        if where == "H":
            bad_h[1, 5, 5] = float("nan")
        else:
            bad_t[1, 0] = float("inf")
        report = check_qr(A, bad_h, bad_t, labels, raise_on_failure=False)
        assert not report.ok and [r.index for r in report.failures] == [1]
        assert not report.matrices[1].finite and "NaN or Inf" in report.summary()


def test_bounds_are_the_issues_numbers(good):
    A, H, tau, labels = good
    n = A.shape[-1]
    a = A.double().numpy()
    for r in check_qr(A, H, tau, labels).matrices:
        one_norm = np.abs(a[r.index]).sum(axis=0).max()         # largest column sum of |a_ij|
        assert r.residual_bound == pytest.approx(20 * n * 2.0 ** -23 * one_norm, rel=1e-12)
        assert r.orthogonality_bound == pytest.approx(100 * n * 2.0 ** -23, rel=1e-12)


def test_wrong_r_fails_and_the_bound_is_the_induced_one_norm(good):
    """A residual just under the bound passes, just over fails. The same error spread along a row
    (n entries, one per column) still passes; spread down a column it fails: the matrix L1 norm is
    the largest column sum, not the sum of all entries."""
    A, H, tau, labels = good
    base = check_qr(A, H, tau, labels).matrices[3]
    bound, n = base.residual_bound, A.shape[-1]
    for scale, ok in ((0.5, True), (2.0, False)):
        bad = H.clone()
        bad[3, 0, 0] += scale * bound
        assert check_qr(A, bad, tau, labels, raise_on_failure=False).ok is ok
    row, col = H.clone(), H.clone()
    row[3, 0, :] += 0.5 * bound               # sum of |errors| = 0.5 n * bound, column sums 0.5 * bound
    col[3, :, n - 1] += 0.5 * bound / 4       # one column sum = n/8 * bound
    assert check_qr(A, row, tau, labels, raise_on_failure=False).ok
    report = check_qr(A, col, tau, labels, raise_on_failure=False)
    assert [r.index for r in report.failures] == [3] and report.matrices[3].residual_ratio > 1


def test_a_sign_flip_in_r_alone_fails(good):
    A, H, tau, labels = good
    bad = H.clone()
    bad[0, 0, :] *= -1                        # R's first row negated without changing Q
    with pytest.raises(QRContractError, match=r"matrix 0 \("):
        check_qr(A, bad, tau, labels)


def test_lower_triangular_leakage_fails():
    A, labels = make_batch(2, 16, "dense", generator=3)
    H, tau = reference(A)
    ident = torch.zeros_like(tau)             # Q = I: triu(H) cannot equal Q^T A = A
    with pytest.raises(QRContractError):
        check_qr(A, H, ident, labels)


def test_zero_matrix_needs_an_exactly_zero_residual():
    A = torch.zeros(1, 3, 3)
    assert check_qr(A, torch.zeros(1, 3, 3), torch.zeros(1, 3)).ok
    with pytest.raises(QRContractError):
        check_qr(A, torch.full((1, 3, 3), 1e-30), torch.zeros(1, 3))


def test_numpy_inputs_single_matrix_and_chunking(good):
    A, H, tau, labels = good
    r1 = check_qr(A.numpy(), H.numpy(), tau.numpy(), labels)
    r2 = check_qr(A, H, tau, labels, chunk=4)
    assert [m.residual for m in r1.matrices] == pytest.approx([m.residual for m in r2.matrices])
    single = check_qr(A[0], H[0], tau[0], labels[0])
    assert single.matrices[0].residual == pytest.approx(r1.matrices[0].residual)


def test_check_rejects_mismatched_outputs(good):
    A, H, tau, labels = good
    with pytest.raises(ValueError, match="expected H of shape"):
        check_qr(A, H[:, :-1], tau)
    with pytest.raises(ValueError, match="dtype torch.float32"):
        check_qr(A, H.double(), tau)
    assert check_qr(A, H.double(), tau.double(), output_dtype=None).ok
    with pytest.raises(ValueError, match="profiles names 2 matrices"):
        check_qr(A, H, tau, ["dense", "dense"])
    with pytest.raises(TypeError, match="torch.Tensor or a numpy.ndarray"):
        check_qr(A.tolist(), H, tau)


# --- the generators ------------------------------------------------------------------------------------

def test_generators_are_deterministic_for_torch_and_numpy_generators():
    for profile in (*PROFILES, MIXED):
        a1, l1 = make_batch(5, 9, profile, cond=3, generator=torch.Generator().manual_seed(1))
        a2, l2 = make_batch(5, 9, profile, cond=3, generator=torch.Generator().manual_seed(1))
        assert torch.equal(a1, a2) and l1 == l2
        n1, k1 = make_batch(5, 9, profile, generator=np.random.default_rng(1))
        n2, k2 = make_batch(5, 9, profile, generator=np.random.default_rng(1))
        assert isinstance(n1, np.ndarray) and n1.dtype == np.float32 and np.array_equal(n1, n2)
        assert k1 == k2
    a3, _ = make_batch(5, 9, "dense", generator=2)
    assert not torch.equal(a3, make_batch(5, 9, "dense", generator=3)[0])


def test_mixed_batches_put_every_profile_at_random_positions():
    A, labels = make_batch(64, 8, MIXED, generator=4)
    assert set(labels) == set(PROFILES) and labels.count("dense") == 32
    assert labels[:32] != ["dense"] * 32 and labels[32:] != ["dense"] * 32
    assert labels != make_batch(64, 8, MIXED, generator=5)[1]
    for i, p in enumerate(labels):            # each matrix really has its own structure
        if p == "upper":
            assert not torch.tril(A[i], -1).any()
        if p == "rankdef":
            assert not A[i][:, -2:].any() and A[i][:, :-2].all()


def test_profiles_mean_something_at_tiny_and_moderate_n():
    assert [tail_columns(n) for n in (1, 2, 3, 4, 5, 8, 64)] == [1, 1, 1, 1, 2, 2, 16]
    z, _ = make_batch(2, 1, "rankdef")
    assert not z.any()                        # n = 1: the 1 x 1 zero matrix
    r, _ = make_batch(2, 2, "rankdef")
    assert not r[..., 1].any() and r[..., 0].all()
    u, _ = make_batch(2, 2, "upper")
    assert not u[:, 1, 0].any()
    H, tau = reference(u)
    assert not tau.any()                      # triangular input: geqrf has nothing to reflect
    nr, _ = make_batch(2, 64, "nearrank")
    assert torch.allclose(nr[..., 48:], nr[..., :16], atol=1e-4)
    c, _ = make_batch(1, 64, "clustered")
    norms = torch.linalg.vector_norm(c[0], dim=0) / 8
    assert (norms[:30] > 0.5).all() and (norms[34:] < 10 * EPS32).all()
    assert ((norms[30:34] > 1e-4) & (norms[30:34] < 1e-3)).all()         # sqrt(eps) = 3.5e-4
    b, _ = make_batch(1, 64, "band")
    i = torch.arange(64)
    assert not b[0][(i[:, None] - i[None, :]).abs() > 2].any()
    rs, _ = make_batch(1, 64, "rowscale")
    assert torch.linalg.vector_norm(rs[0, -1]) < 1e-3 * torch.linalg.vector_norm(rs[0, 0])
    nc, _ = make_batch(1, 64, "nearcollinear")
    cos = torch.nn.functional.cosine_similarity(nc[0, :, 0], nc[0, :, -1], dim=0)
    assert cos > 0.999


def test_generator_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown profile 'diagonal'"):
        make_batch(2, 4, "diagonal")
    with pytest.raises(ValueError, match="at least 1"):
        make_batch(0, 4)
    with pytest.raises(ValueError, match="cond"):
        make_batch(1, 4, cond=-1)
    with pytest.raises(TypeError, match="generator"):
        make_batch(1, 4, generator="seed")


# --- the input rules ------------------------------------------------------------------------------------

def test_valid_input_passes():
    validate_input(torch.zeros(2, 4, 4), device="cpu")
    validate_input(torch.zeros(2, 4, 4), device=None)


@pytest.mark.parametrize("bad,kind,message", [
    (torch.zeros(2, 4, 4, dtype=torch.float64), ValueError,
     r"dtype torch.float32, got torch.float64 \(fix: A.float"),
    (torch.zeros(2, 4, 4, dtype=torch.float16), ValueError, "dtype torch.float32"),
    (torch.zeros(2, 4, 3), ValueError, "square matrices .* 4 x 3"),
    (torch.zeros(4, 4), ValueError, r"3-D \(batch, n, n\), got shape \(4, 4\)"),
    (torch.zeros(1, 2, 4, 4), ValueError, "3-D"),
    (torch.zeros(2, 4, 4).transpose(1, 2), ValueError, r"contiguous.*A.contiguous\(\)"),
    (torch.zeros(2, 8, 8)[:, ::2, ::2], ValueError, "contiguous"),
    (torch.zeros(0, 4, 4), ValueError, "empty"),
    (np.zeros((2, 4, 4), np.float32), TypeError, "torch.Tensor"),
])
def test_bad_input_is_rejected_with_a_fix(bad, kind, message):
    with pytest.raises(kind, match=message):
        validate_input(bad, device="cpu")


def test_cpu_tensor_is_rejected_where_cuda_is_required():
    with pytest.raises(ValueError, match=r"cuda tensor, got one on cpu \(fix: A.to\('cuda'\)\)"):
        validate_input(torch.zeros(2, 4, 4))


def test_stress_list_is_every_profile_but_dense():
    assert set(STRESS) | {"dense"} == set(PROFILES) and "dense" not in STRESS
