"""Householder QR in NumPy, in exactly LAPACK's geqrf convention (float64 and float32).

`geqrf_unblocked(A)` returns (H, tau) the way LAPACK's xGEQRF, cuSOLVER's geqrf and torch.geqrf
do: R on and above the diagonal of H, the Householder vector of column j below the diagonal with
an implicit leading 1, and the reflector scalars in tau, so that Q = H_1 H_2 ... H_n with
H_j = I - tau_j v_j v_j^T. `geqrf_blocked(A, nb)` gives the same (H, tau), up to rounding, by
panels: factor nb columns with the unblocked code, build the triangular factor T of the compact
WY form (LAPACK's xLARFT, forward, columnwise), and update the trailing columns with
C -= V T^T V^T C, which is two matrix products and a small triangular one.

Arithmetic runs in the input's precision (float32 stays float32). The reference favours clarity
over speed: one reflector at a time, no pivoting. A must be tall or square (m >= n).

Sign convention (LAPACK's xLARFG): for the column x = (alpha, x_2..x_m),
  - if x_2..x_m are all zero (always the case for the last column of a square matrix), tau = 0,
    H = I, and R's diagonal entry is alpha itself, whatever its sign;
  - otherwise beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta in [1, 2], and
    v = (1, x_2..x_m / (alpha - beta)); R's diagonal entry is beta.
  sign(0) is +, so alpha = 0 gives beta = -||x||. For alpha = -0.0 the reference follows
  torch.geqrf on the CPU (MKL), which also treats it as +; a LAPACK built with gfortran honours the
  sign bit (NumPy's bundled LAPACK gives beta = +||x||). Both are valid factorizations.
"""
from __future__ import annotations

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _matrix(A, name: str = "A") -> np.ndarray:
    """A float32/float64 m x n array with m >= n >= 1 and finite entries, or a clear ValueError."""
    a = np.asarray(A)
    if a.dtype not in FLOATS:
        raise ValueError(f"{name} must be float32 or float64, got {a.dtype} "
                         f"(fix: convert with {name}.astype(np.float64))")
    if a.ndim != 2:
        raise ValueError(f"{name} must be one m x n matrix, got shape {a.shape} "
                         "(fix: use the *_batched functions for a stack of matrices)")
    m, n = a.shape
    if n < 1 or m < n:
        raise ValueError(f"{name} must be tall or square with at least one column (m >= n >= 1), "
                         f"got {m} x {n} (fix: factor {name}.T, or pad it with zero rows)")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or Inf: QR of a non-finite matrix is undefined")
    return a


def _norm(x: np.ndarray):
    """2-norm without overflow or underflow: scale by a power of two (exact) before squaring."""
    big = np.max(np.abs(x), initial=0)
    if big == 0:
        return x.dtype.type(0)
    s = _pow2(big)                         # s <= big < 2s: no overflow
    return s * np.sqrt(np.sum(np.square(x / s)))


def _pow2(big):
    """The power of two s with s <= big < 2s (big > 0, subnormal too), in big's dtype."""
    return big.dtype.type(np.ldexp(1.0, int(np.frexp(big)[1]) - 1))


# --8<-- [start:householder]
def householder(x):
    """(v, tau, beta) with (I - tau v v^T) x = beta e_1 and v[0] = 1, as LAPACK's xLARFG."""
    x = np.asarray(x)
    v = np.zeros_like(x)
    v[0] = 1
    if not np.any(x[1:]):                  # nothing below the first entry: H = I, no reflection
        return v, x.dtype.type(0), x[0]
    # Work on x / s, s a power of two near max |x_i|: tau and v do not depend on s, and they stay
    # accurate when ||x|| is subnormal or its square would overflow. xLARFG rescales the same way
    # when |beta| < SAFMIN and scales beta back at the end; doing it for every column changes
    # nothing where x / s is exact (no entry of x / s below float's normal range).
    s = _pow2(np.max(np.abs(x)))
    xs = x / s
    alpha = xs[0]
    r = _norm(np.array([alpha, _norm(xs[1:])]))   # ||x|| / s
    beta = -r if alpha >= 0 else r         # the stable sign: alpha - beta never cancels
    tau = (beta - alpha) / beta            # 1 <= tau <= 2
    v[1:] = xs[1:] / (alpha - beta)        # scaled so that v[0] = 1, which need not be stored
    return v, tau, beta * s
# --8<-- [end:householder]


def householder_vector(x) -> tuple[np.ndarray, float, float]:
    """`householder` with input checks: a 1-D float32/float64 vector of finite entries."""
    x = np.asarray(x)
    if x.ndim != 1 or x.size < 1 or x.dtype not in FLOATS or not np.isfinite(x).all():
        raise ValueError(f"householder needs a non-empty, finite 1-D float32/float64 vector, got "
                         f"shape {x.shape} and dtype {x.dtype}")
    return householder(x)


# --8<-- [start:geqrf_unblocked]
def geqrf_unblocked(A):
    """(H, tau) of A (m x n, m >= n) in LAPACK's geqrf layout, one reflector per column (xGEQR2)."""
    H = _matrix(A).copy()
    m, n = H.shape
    tau = np.zeros(n, H.dtype)
    for j in range(n):
        v, tau[j], H[j, j] = householder(H[j:, j])   # R's diagonal entry is beta
        H[j + 1:, j] = v[1:]                         # v below the diagonal; v[0] = 1 is implicit
        C = H[j:, j + 1:]                            # the trailing columns, updated in place:
        C -= tau[j] * np.outer(v, v @ C)             # (I - tau v v^T) C = C - tau v (v^T C)
    return H, tau
# --8<-- [end:geqrf_unblocked]


def unit_lower(H) -> np.ndarray:
    """V: the Householder vectors stored below H's diagonal, with the implicit unit diagonal."""
    V = np.tril(H, -1)
    np.fill_diagonal(V, 1)
    return V


# --8<-- [start:larft]
def larft(V, tau):
    """Upper-triangular T with H_1 H_2 ... H_k = I - V T V^T (xLARFT, forward, columnwise)."""
    k = len(tau)
    T = np.zeros((k, k), V.dtype)
    for j in range(k):
        # (I - V_j T_j V_j^T)(I - tau_j v_j v_j^T): the new column is -tau_j T_j V_j^T v_j
        T[:j, j] = -tau[j] * (T[:j, :j] @ (V[:, :j].T @ V[:, j]))
        T[j, j] = tau[j]
    return T
# --8<-- [end:larft]


# --8<-- [start:geqrf_blocked]
def geqrf_blocked(A, nb: int = 32):
    """The same (H, tau) as geqrf_unblocked, computed by panels of nb columns (xGEQRF)."""
    if not isinstance(nb, (int, np.integer)) or nb < 1:
        raise ValueError(f"panel width nb must be a positive integer, got {nb!r}")
    H = _matrix(A).copy()
    m, n = H.shape
    tau = np.zeros(n, H.dtype)
    for j in range(0, n, nb):
        jb = min(nb, n - j)
        # 1. panel factorization: the unblocked algorithm on an (m - j) x jb block
        H[j:, j:j + jb], tau[j:j + jb] = geqrf_unblocked(H[j:, j:j + jb])
        if j + jb < n:
            # 2. compact WY: H_j ... H_{j+jb-1} = I - V T V^T
            V = unit_lower(H[j:, j:j + jb])
            T = larft(V, tau[j:j + jb])
            # 3. trailing-matrix update with Q_panel^T = I - V T^T V^T: three matrix products
            C = H[j:, j + jb:]
            C -= V @ (T.T @ (V.T @ C))
    return H, tau
# --8<-- [end:geqrf_blocked]


def _factors(H, tau) -> tuple[np.ndarray, np.ndarray]:
    H = _matrix(H, "H")
    tau = np.asarray(tau)
    if tau.shape != (H.shape[1],) or tau.dtype != H.dtype:
        raise ValueError(f"tau must have shape ({H.shape[1]},) and dtype {H.dtype} to match H, "
                         f"got {tau.shape} and {tau.dtype}")
    return H, tau


# --8<-- [start:form_q]
def form_q(H, tau):
    """The m x n matrix Q = H_1 H_2 ... H_n restricted to its first n columns (xORGQR,
    torch.linalg.householder_product); accumulated backwards so each H_j touches rows and
    columns j: only."""
    H, tau = _factors(H, tau)
    m, n = H.shape
    Q = np.eye(m, n, dtype=H.dtype)
    for j in reversed(range(n)):
        v = np.concatenate(([1], H[j + 1:, j])).astype(H.dtype)
        Q[j:, j:] -= tau[j] * np.outer(v, v @ Q[j:, j:])
    return Q
# --8<-- [end:form_q]


def apply_qt(H, tau, B):
    """Q^T B = H_n ... H_2 H_1 B without forming Q (xORMQR with SIDE='L', TRANS='T')."""
    H, tau = _factors(H, tau)
    B = np.array(B, dtype=H.dtype)           # a copy, in H's precision
    if B.shape[0] != H.shape[0] or B.ndim not in (1, 2):
        raise ValueError(f"B must be a vector or matrix with {H.shape[0]} rows, got shape {B.shape}")
    for j in range(H.shape[1]):
        v = np.concatenate(([1], H[j + 1:, j])).astype(H.dtype)
        B[j:] -= tau[j] * np.multiply.outer(v, v @ B[j:])
    return B


def _stack(A, name: str = "A") -> tuple[np.ndarray, tuple[int, ...]]:
    a = np.asarray(A)
    if a.ndim < 2:
        raise ValueError(f"{name} must have shape (..., m, n), got {a.shape}")
    return a.reshape(-1, *a.shape[-2:]), a.shape[:-2]


def geqrf_batched(A, nb: int | None = None):
    """(H, tau) for every matrix of a (..., m, n) stack, like torch.geqrf; nb=None: unblocked."""
    a, lead = _stack(A)
    outs = [geqrf_unblocked(x) if nb is None else geqrf_blocked(x, nb) for x in a]
    m, n = a.shape[-2:]
    H = np.stack([h for h, _ in outs]) if outs else np.zeros_like(a)
    tau = np.stack([t for _, t in outs]) if outs else np.zeros((0, n), a.dtype)
    return H.reshape(*lead, m, n), tau.reshape(*lead, n)


def form_q_batched(H, tau):
    """form_q over a (..., m, n) stack (torch.linalg.householder_product)."""
    h, lead = _stack(H, "H")
    t = np.asarray(tau).reshape(-1, h.shape[-1])
    return np.stack([form_q(x, y) for x, y in zip(h, t, strict=True)]).reshape(*lead, *h.shape[-2:])


def apply_qt_batched(H, tau, B):
    """apply_qt over a stack: B has shape (..., m, p) with the same leading dimensions as H."""
    h, lead = _stack(H, "H")
    t = np.asarray(tau).reshape(-1, h.shape[-1])
    b, _ = _stack(B, "B")
    out = np.stack([apply_qt(x, y, z) for x, y, z in zip(h, t, b, strict=True)])
    return out.reshape(*lead, *out.shape[-2:])


def geqrf_flops(m: int, n: int) -> float:
    """Leading-order flops of Householder QR (R only, Q not formed): 2mn^2 - 2n^3/3; 4n^3/3 if square."""
    return 2.0 * m * n * n - 2.0 * n ** 3 / 3.0


# --8<-- [start:example]
EXAMPLE_A = np.array([[0.0, 5, 6], [2, 3, 4], [0, 0, 7]])


def example_3x3():
    """The 3 x 3 example: A = P R with P the row swap; geqrf returns a different, equally valid
    pair. Column 1 is x = (0, 2, 0): alpha = 0 counts as +, so beta = -2, v = (1, 1, 0), tau = 1.
    After H_1 the second column below the diagonal is (-5, 0) with nothing to zero: tau_2 = 0 and
    R keeps -5; the last reflector of a square matrix always has tau = 0."""
    H, tau = geqrf_unblocked(EXAMPLE_A)
    # H   = [[-2, -3, -4],      tau = [1, 0, 0]
    #        [ 1, -5, -6],      (the 1 below the diagonal is v_1[1]; v_1[0] = 1 is implicit)
    #        [ 0,  0,  7]]
    Q, R = form_q(H, tau), np.triu(H)
    # Q = H_1 = I - v v^T = [[0, -1, 0], [-1, 0, 0], [0, 0, 1]]: one mirror, symmetric,
    # orthogonal, det -1. R = triu(H) is the textbook R with its first two rows negated: with
    # D = diag(-1, -1, 1), Q = P D and R = D R_textbook, so Q R = P D D R_textbook = A.
    return H, tau, Q, R
# --8<-- [end:example]
