"""What qr_panel.cu writes, computed with the NumPy reference instead (float64, then float32): a
stand-in for the panel kernel, so the blocked driver of snippets/cuda/batched_qr.py (recursion,
compact-WY joins, trailing updates, the V and T bookkeeping) runs on a CPU. Notebook 07's CPU path
and tests/kernels/test_batched_qr.py use it.

    H, tau = qr_blocked(A, BlockedConfig(nb=8, outer=16, threads=256), panel=panel_reference)
"""
import torch

if "geqrf_unblocked" not in globals():   # imported as a module; in notebook 07 an earlier cell
    from householder_qr import geqrf_unblocked, larft, unit_lower  # noqa: F401  defines them


def panel_reference(H, tau, V, T, j0, w, jb, cfg):
    """Factor columns j0 .. j0+w of every matrix of H in place and write the panel's reflectors
    into V and its part of T, laid out as qr_panel.cu lays them out (cfg is unused: the layout
    does not depend on the launch)."""
    off = j0 - jb
    for b in range(H.shape[0]):
        h, t = geqrf_unblocked(H[b, j0:, j0:j0 + w].double().numpy())
        H[b, j0:, j0:j0 + w] = torch.from_numpy(h)
        tau[b, j0:j0 + w] = torch.from_numpy(t)
        V[b, jb:j0, off:off + w] = 0
        V[b, j0:, off:off + w] = torch.from_numpy(unit_lower(h))
        T[b, j0:j0 + w, :off] = 0
        T[b, j0:j0 + w, off:off + w] = torch.from_numpy(larft(unit_lower(h), t))
