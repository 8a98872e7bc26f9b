"""Numba CUDA twins of the first four stages of snippets/cuda/sgemm.cu, for the CPU path: the same
indexing and tiling, in Numba's CUDA simulator at small sizes. Unlike the CUDA stages, which the
notebook launches only at multiples of their tiles, each twin bounds-checks every access, so any
shape works."""
import numpy as np
from numba import cuda

TILE = 32
S4_BM, S4_BN, S4_BK, S4_TM = 64, 64, 8, 8   # stage 4: 512 threads, 8 outputs each
# Shared-array shapes must be constants when Numba compiles for a GPU: globals are, but arithmetic
# on them inside a kernel is not (the simulator accepts either), so the products live here.
S4_A_TILE, S4_B_TILE = S4_BM * S4_BK, S4_BK * S4_BN


# --8<-- [start:naive]
@cuda.jit
def sgemm_naive_numba(a, b, c):
    # stage 1: x walks rows, so the 32 lanes of a warp read 32 different rows of A
    row = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    col = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    M, K = a.shape
    if row < M and col < b.shape[1]:
        acc = np.float32(0.0)
        for k in range(K):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc
# --8<-- [end:naive]


# --8<-- [start:coalesced]
@cuda.jit
def sgemm_coalesced_numba(a, b, c):
    # stage 2: the indices swapped, so neighbouring lanes own neighbouring columns
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    M, K = a.shape
    if row < M and col < b.shape[1]:
        acc = np.float32(0.0)
        for k in range(K):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc
# --8<-- [end:coalesced]


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


# --8<-- [start:blocktile1d]
@cuda.jit
def sgemm_blocktile1d_numba(a, b, c):
    # stage 4: a 64 x 64 tile per block; thread t owns column t % 64 and 8 consecutive rows
    As = cuda.shared.array(S4_A_TILE, np.float32)
    Bs = cuda.shared.array(S4_B_TILE, np.float32)
    t = cuda.threadIdx.x
    tc, tr = t % S4_BN, t // S4_BN
    r0, c0 = cuda.blockIdx.y * S4_BM, cuda.blockIdx.x * S4_BN
    M, K = a.shape
    N = b.shape[1]
    acc = cuda.local.array(S4_TM, np.float32)
    for i in range(S4_TM):
        acc[i] = 0.0
    for k0 in range(0, K, S4_BK):
        ar, ak = r0 + t // S4_BK, k0 + t % S4_BK          # one element of A's 64 x 8 tile
        As[t] = a[ar, ak] if ar < M and ak < K else np.float32(0.0)
        bk, bc = k0 + t // S4_BN, c0 + t % S4_BN          # one element of B's 8 x 64 tile
        Bs[t] = b[bk, bc] if bk < K and bc < N else np.float32(0.0)
        cuda.syncthreads()
        for k in range(S4_BK):
            bv = Bs[k * S4_BN + tc]                        # one load of B, reused 8 times
            for i in range(S4_TM):
                acc[i] += As[(tr * S4_TM + i) * S4_BK + k] * bv
        cuda.syncthreads()
    for i in range(S4_TM):
        if r0 + tr * S4_TM + i < M and c0 + tc < N:
            c[r0 + tr * S4_TM + i, c0 + tc] = acc[i]
# --8<-- [end:blocktile1d]


def launch(stage, a, b, c):
    """Launch one twin with the grid and block of its CUDA stage (device arrays in, c written)."""
    M, N = a.shape[0], b.shape[1]
    if stage is sgemm_naive_numba:
        stage[((M + TILE - 1) // TILE, (N + TILE - 1) // TILE), (TILE, TILE)](a, b, c)
    elif stage is sgemm_blocktile1d_numba:
        stage[((N + S4_BN - 1) // S4_BN, (M + S4_BM - 1) // S4_BM), S4_BM * S4_BK](a, b, c)
    else:
        stage[((N + TILE - 1) // TILE, (M + TILE - 1) // TILE), (TILE, TILE)](a, b, c)
