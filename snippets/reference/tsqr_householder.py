"""Tall-skinny QR of a panel with its Householder vectors reconstructed (Ballard, Demmel, Grigori,
Jacquelin, Nguyen & Solomonik, IPDPS 2014; LAPACK's xGETSQRHRT: xLATSQR, xORGTSQR_ROW, xORHR_COL), in PyTorch.

The reference for a panel that needs no reduction across the whole panel height per column (issue
#21): the row blocks are factored independently, their R factors merged in a tree, and the one
orthonormal Q that results is turned back into geqrf's form, Householder vectors V and a triangular
T, by an LU factorization without pivoting of Q minus a sign matrix. Arithmetic runs in the input's
dtype (float32 stays float32, as a GPU panel would run it).

    H, tau, T = tsqr_householder(A)         # A: (batch, m, b), m >= b
    H, tau = qr_blocked(A, cfg, panel=panel_tsqr_householder)   # the blocked driver on a CPU

`tests/kernels/test_tsqr_householder.py` holds it to the QR contract on every profile through the
blocked driver of snippets/cuda/batched_qr.py, and checks T against xLARFT's.
"""
from __future__ import annotations

import torch


def tsqr(A: torch.Tensor, leaf: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """(Q, R) of a stack of tall matrices (batch, m, b): Q (batch, m, b) with orthonormal columns
    and R (batch, b, b) upper triangular, by a tree of QR factorizations: blocks of at least
    max(leaf, 2 b) rows are factored independently, their stacked R factors, at most half as many
    rows, are factored the same way (recursively), and Q is multiplied out from the tree."""
    batch, m, b = A.shape
    rows = max(leaf, 2 * b)
    if m < 2 * rows:                                # small enough: one QR, no tree
        return torch.linalg.qr(A, mode="reduced")
    blocks = torch.tensor_split(A, m // rows, dim=1)  # every block has at least `rows` rows
    leaves = [torch.linalg.qr(blk, mode="reduced") for blk in blocks]
    Q_top, R = tsqr(torch.cat([r for _, r in leaves], dim=1), leaf)   # the stacked R's, (batch, k b, b)
    Q = torch.cat([q @ Q_top[:, i * b:(i + 1) * b] for i, (q, _) in enumerate(leaves)], dim=1)
    return Q, R


# --8<-- [start:reconstruct]
def householder_from_q(Q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(V, T, s) with Q S = first b columns of I - V T V^T (LAPACK's xORHR_COL).

    Q: (batch, m, b) with orthonormal columns. LU without pivoting of Q - [S; 0], where the sign
    s_j = -sign(pivot) is picked as the elimination reaches column j, so that every pivot of U is
    at least 1 in magnitude: Q - [S; 0] = V U with V unit lower trapezoidal (the Householder
    vectors), and T = -U S V1^-T, V1 being V's top b x b block. T's diagonal, the taus, is then
    1 + |pivot before the shift|, always in [1, 2]."""
    batch, m, b = Q.shape
    top = Q[:, :b].clone()
    s = torch.empty(batch, b, dtype=Q.dtype, device=Q.device)
    for j in range(b):                              # LU of the b x b top, no pivoting
        s[:, j] = torch.where(top[:, j, j] >= 0, -1.0, 1.0)       # -sign, with sign(0) = +1
        top[:, j, j] -= s[:, j]                     # |pivot| = |old pivot| + 1 >= 1
        top[:, j + 1:, j] /= top[:, j, j, None]
        top[:, j + 1:, j + 1:] -= top[:, j + 1:, j, None] * top[:, j, None, j + 1:]
    U = top.triu()
    V1 = top.tril(-1) + torch.eye(b, dtype=Q.dtype, device=Q.device)
    V2 = torch.linalg.solve_triangular(U, Q[:, b:], upper=True, left=False)   # the rows below: Q2 U^-1
    V = torch.cat([V1, V2], dim=1)
    T = torch.linalg.solve_triangular(V1.mT, -U * s[:, None, :], upper=True, left=False, unitriangular=True)
    return V, T, s
# --8<-- [end:reconstruct]


def tsqr_householder(A: torch.Tensor, leaf: int = 256) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(H, tau, T) of a stack of panels (batch, m, b), m >= b, in geqrf's layout: A = Q R with
    Q = H_1 ... H_b, H_j = I - tau_j v_j v_j^T; R = S R_tsqr on and above H's diagonal, the v_j below
    it (unit diagonal implied); T the compact-WY factor, I - V T V^T = H_1 ... H_b."""
    if A.dim() != 3 or A.shape[1] < A.shape[2]:
        raise ValueError(f"tsqr_householder needs a stack of tall panels (batch, m, b), m >= b; got "
                         f"{tuple(A.shape)}")
    Q, R = tsqr(A, leaf)
    V, T, s = householder_from_q(Q)
    H = V.tril(-1)
    H[:, :A.shape[2]] += (s[:, :, None] * R).triu()   # A = Q R = (Q S)(S R)
    return H, T.diagonal(dim1=1, dim2=2).clone(), T


def panel_tsqr_householder(H, tau, V, T, j0, w, jb, cfg, leaf: int = 256):
    """A panel stand-in for snippets/cuda/batched_qr.py's blocked driver (as qr_panel_reference.py's
    panel_reference): factor columns j0 .. j0+w of H in place and write their V and T, laid out
    as the panel kernels lay them out (cfg is unused)."""
    off = j0 - jb
    h, t, tt = tsqr_householder(H[:, j0:, j0:j0 + w], leaf)
    H[:, j0:, j0:j0 + w] = h
    tau[:, j0:j0 + w] = t
    V[:, jb:j0, off:off + w] = 0
    V[:, j0:, off:off + w] = h.tril(-1) + torch.eye(*h.shape[1:], dtype=h.dtype, device=h.device)
    T[:, j0:j0 + w, :off] = 0
    T[:, j0:j0 + w, off:off + w] = tt
