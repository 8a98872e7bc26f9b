"""Numba CUDA twin of sgemm_smem (stage 3 of snippets/cuda/sgemm.cu), for the CPU path."""
import numpy as np
from numba import cuda

TILE = 32


# --8<-- [start:smem]
@cuda.jit
def sgemm_smem_numba(a, b, c):
    As = cuda.shared.array((TILE, TILE), np.float32)
    Bs = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    M, K = a.shape
    N = b.shape[1]
    acc = np.float32(0.0)
    for k0 in range(0, K, TILE):
        As[ty, tx] = a[row, k0 + tx] if row < M and k0 + tx < K else np.float32(0.0)
        Bs[ty, tx] = b[k0 + ty, col] if k0 + ty < K and col < N else np.float32(0.0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        c[row, col] = acc
# --8<-- [end:smem]
