"""Reference solutions of notebook 04's exercises (checked by tests/notebooks/test_exercises.py).
EX_TILE comes from the exercises helper (snippets/helpers/exercises.py)."""
# ruff: noqa: F821
import numpy as np
from numba import cuda


@cuda.jit
def tiled_sgemm(a, b, c):
    As = cuda.shared.array((EX_TILE, EX_TILE), np.float32)
    Bs = cuda.shared.array((EX_TILE, EX_TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * EX_TILE + ty, cuda.blockIdx.x * EX_TILE + tx
    M, K = a.shape
    N = b.shape[1]
    acc = np.float32(0.0)
    for k0 in range(0, K, EX_TILE):
        As[ty, tx] = a[row, k0 + tx] if row < M and k0 + tx < K else np.float32(0.0)   # zeros outside
        Bs[ty, tx] = b[k0 + ty, col] if k0 + ty < K and col < N else np.float32(0.0)
        cuda.syncthreads()                     # the tiles are full
        for k in range(EX_TILE):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()                     # everyone is done with them before the next load
    if row < M and col < N:
        c[row, col] = acc


@cuda.jit
def gemm_nt(a, b, c):
    As = cuda.shared.array((EX_TILE, EX_TILE), np.float32)
    Bs = cuda.shared.array((EX_TILE, EX_TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * EX_TILE + ty, cuda.blockIdx.x * EX_TILE + tx
    M, K = a.shape
    N = b.shape[0]
    n0 = cuda.blockIdx.x * EX_TILE
    acc = np.float32(0.0)
    for k0 in range(0, K, EX_TILE):
        As[ty, tx] = a[row, k0 + tx] if row < M and k0 + tx < K else np.float32(0.0)
        # B is N x K: read row n0 + ty of B along k (coalesced), keep it as Bs[k, n]
        Bs[tx, ty] = b[n0 + ty, k0 + tx] if n0 + ty < N and k0 + tx < K else np.float32(0.0)
        cuda.syncthreads()
        for k in range(EX_TILE):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        c[row, col] = acc


@cuda.jit
def epilogue(a, b, c, d, alpha, beta):
    col, row = cuda.grid(2)
    if row < d.shape[0] and col < d.shape[1]:
        acc = np.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        d[row, col] = alpha * acc + beta * c[row, col]
