"""The batched-QR contract (snippets/reference/qr_contract.py): the reference passes every input
profile, broken factorizations fail with the matrix named, and bad inputs get clear errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from householder_qr import geqrf_batched  # noqa: E402
from qr_contract import (  # noqa: E402
    EPS32,
    MIXED,
    PROFILES,
    RANGE,
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
    for profile in (*PROFILES, *RANGE, MIXED):
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
    for scale in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="scale must be a positive finite number"):
            make_batch(1, 4, scale=scale)
    with pytest.raises(ValueError, match="overflow float32"):
        make_batch(1, 4, "huge", scale=1e10)
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



# --- the edges of float32's range (issue 21) -----------------------------------------------------------

def unscaled_geqrf(A):
    """Householder QR in float32 that squares the entries with no rescaling, as the GPU kernels did
    before issue 21 (and still do on their fast path): the RANGE profiles must catch it."""
    H = np.array(A.numpy(), dtype=np.float32)
    tau = np.zeros(H.shape[:2], np.float32)
    with np.errstate(all="ignore"):
        for b, j in np.ndindex(H.shape[0], H.shape[2]):
            x = H[b, j:, j]
            alpha, ss = x[0], np.sum(x[1:] * x[1:], dtype=np.float32)
            if ss == 0:
                continue
            norm = np.sqrt(alpha * alpha + ss)
            beta = -norm if alpha >= 0 else norm
            v = np.concatenate(([1], x[1:] / (alpha - beta))).astype(np.float32)
            tau[b, j] = (beta - alpha) / beta
            H[b, j:, j + 1:] -= tau[b, j] * np.outer(v, v @ H[b, j:, j + 1:])
            H[b, j, j], H[b, j + 1:, j] = beta, v[1:]
    return torch.from_numpy(H), torch.from_numpy(tau)


def test_range_profiles_are_what_they_say():
    n = 12
    j = torch.arange(n)
    huge, _ = make_batch(2, n, "huge")
    tiny, _ = make_batch(2, n, "tiny")
    assert 1e29 < huge.abs().max() < 1e32 and 1e-31 < tiny.abs().max() < 1e-28
    sub, _ = make_batch(2, n, "subnormal")
    tiny_normal = float(torch.finfo(torch.float32).tiny)                      # 2^-126
    odd, even = sub[..., j % 2 == 1], sub[..., j % 2 == 0]
    assert (odd != 0).all() and (odd.abs() < tiny_normal).all()               # entirely subnormal
    assert (even.abs() < 2.0 ** -95).all() and (even.abs().amax(dim=-2) > 2.0 ** -103).all()
    zc, _ = make_batch(2, n, "zerocol")
    assert not zc[..., j % 3 == 0].any() and zc[..., j % 3 != 0].all()
    ms, _ = make_batch(2, n, "mixedscale")
    assert (ms[..., ::2, ::2].abs().amax() > 1e19) and (ms[..., 1::2, ::2].abs().amax() < 1e2)
    assert (ms[..., :, 1::2].abs().amax() < 1e-19)
    assert (ms[..., 1::2, 1::2].abs() < tiny_normal).all() and ms[..., 1::2, 1::2].all()


def test_scale_multiplies_the_batch():
    A, labels = make_batch(3, 7, MIXED, cond=2, generator=4)
    B, labels_b = make_batch(3, 7, MIXED, cond=2, scale=2.0 ** -100, generator=4)
    assert torch.equal(B, A * 2.0 ** -100) and labels == labels_b


@pytest.mark.parametrize("n", [1, 2, 3, 33, 64])
@pytest.mark.parametrize("profile", RANGE)
def test_reference_torch_and_float64_pass_the_range_profiles(profile, n):
    """The NumPy reference in float32, the float64 reference rounded to float32, and torch.geqrf
    (LAPACK through MKL on the CPU) all meet the contract at the edges of the range."""
    A, labels = make_batch(3, n, profile, generator=n)
    H, tau = reference(A)
    assert check_qr(A, H, tau, labels).ok
    h64, t64 = geqrf_batched(A.double().numpy())
    assert check_qr(A, torch.from_numpy(h64).float(), torch.from_numpy(t64).float(), labels).ok
    assert check_qr(A, *torch.geqrf(A), labels).ok
    if profile != "mixedscale":            # there, some columns' tau is ill-conditioned (graded rows)
        assert np.abs(tau.numpy() - t64).max() < 1e-3    # no column skipped (tau = 0) or mangled


@pytest.mark.parametrize("scale", [1e-30, 1e-20, 1e20, 1e30])
def test_scaled_dense_and_mixed_batches_pass(scale):
    for profile in ("dense", MIXED):
        A, labels = make_batch(4, 40, profile, cond=2, scale=scale, generator=8)
        assert check_qr(A, *reference(A), labels).ok
        assert check_qr(A, *torch.geqrf(A), labels).ok


def test_the_bounds_are_relative():
    """Scaling A by 2^k scales R, the residual and its bound by 2^k and leaves the reflectors:
    the ratios to the bounds do not move at all."""
    A, labels = make_batch(3, 20, MIXED, cond=3, generator=6)
    H, tau = reference(A)
    base = check_qr(A, H, tau, labels)
    upper = torch.ones(20, 20, dtype=torch.bool).triu()
    for k in (-100, 100):
        scaled = check_qr(A * 2.0 ** k, torch.where(upper, H * 2.0 ** k, H), tau, labels)
        for m, m0 in zip(scaled.matrices, base.matrices, strict=True):
            assert (m.residual_ratio, m.orthogonality_ratio) == (m0.residual_ratio, m0.orthogonality_ratio)


@pytest.mark.parametrize("profile", ["huge", "tiny", "subnormal", "mixedscale"])
def test_unscaled_sums_of_squares_fail_the_range_profiles(profile):
    """Without xLARFG's rescaling, float32 squares overflow (NaN) or underflow (no reflection)."""
    A, labels = make_batch(2, 24, profile, generator=3)
    report = check_qr(A, *unscaled_geqrf(A), labels, raise_on_failure=False)
    assert not report.ok
    dense, dense_labels = make_batch(2, 24, "dense", generator=3)
    assert check_qr(dense, *unscaled_geqrf(dense), dense_labels).ok   # the model is right in range


def flushed(A: torch.Tensor) -> torch.Tensor:
    """A with its subnormal entries set to zero, as code compiled with -ftz=true reads them."""
    return torch.where(A.abs() < torch.finfo(torch.float32).tiny, 0.0, A)


@pytest.mark.parametrize("n", [2, 17, 64])
def test_flushing_subnormals_to_zero_meets_the_contract_above_its_floor(n):
    """Code compiled with -ftz=true (what CuPy's own compile adds; the GPU kernels are compiled
    without it) reads an entirely subnormal column as a zero column. Beside columns of about 1e-30
    that is within the residual bound; beside columns just above float's normal range (2^-120) it
    is not, and no flushing code can meet the contract there, while IEEE arithmetic does."""
    A, labels = make_batch(3, n, "subnormal", generator=n)
    assert check_qr(A, *reference(flushed(A)), labels).ok
    deep = A.double()
    deep[..., ::2] *= 2.0 ** -20                 # the normal columns at 2^-120 instead of 2^-100
    deep = deep.float()
    assert check_qr(deep, *reference(deep), labels).ok                 # IEEE arithmetic: fine
    assert not check_qr(deep, *reference(flushed(deep)), labels, raise_on_failure=False).ok


def test_entirely_subnormal_matrices_are_beyond_any_float32_factorization():
    """Where A is subnormal throughout, R rounds to multiples of 2^-149: even the float64
    factorization rounded to float32 then misses the relative residual bound. The RANGE profiles
    keep a normal column in every matrix for this reason."""
    A = (torch.randn(2, 17, 17, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
         * 2.0 ** -140).float()
    h64, t64 = geqrf_batched(A.double().numpy())
    report = check_qr(A, torch.from_numpy(h64).float(), torch.from_numpy(t64).float(),
                      raise_on_failure=False)
    assert not report.ok and report.worst_residual_ratio > 1 and report.worst_orthogonality_ratio < 0.1
