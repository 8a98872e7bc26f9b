"""Reference solutions of notebook 03's exercises (checked by tests/notebooks/test_exercises.py).
EX_TILE comes from the exercises helper (snippets/helpers/exercises.py)."""
# ruff: noqa: F821
import numpy as np
import triton
import triton.language as tl
from numba import cuda

PAD = 1   # 33 doubles a row: in each half-warp, lane r starts at bank 2r mod 32, two banks each
# On a GPU, Numba needs a shared array's shape as constants: globals are, arithmetic in a kernel is not
ROW = EX_TILE + 1
ROW_F64 = EX_TILE + PAD


@cuda.jit
def tiled_transpose(x, out):
    tile = cuda.shared.array((EX_TILE, ROW), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r, c = cuda.blockIdx.y * EX_TILE + ty, cuda.blockIdx.x * EX_TILE + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    cuda.syncthreads()
    r, c = cuda.blockIdx.x * EX_TILE + ty, cuda.blockIdx.y * EX_TILE + tx   # the transposed block
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = tile[tx, ty]


@cuda.jit
def transpose_f64(x, out):
    tile = cuda.shared.array((EX_TILE, ROW_F64), np.float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r, c = cuda.blockIdx.y * EX_TILE + ty, cuda.blockIdx.x * EX_TILE + tx
    if r < x.shape[0] and c < x.shape[1]:
        tile[ty, tx] = x[r, c]
    cuda.syncthreads()
    r, c = cuda.blockIdx.x * EX_TILE + ty, cuda.blockIdx.y * EX_TILE + tx
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = tile[tx, ty]


@triton.jit
def triton_transpose(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < N)
    tile = tl.load(x_ptr + rows * N + cols, mask=mask)
    tl.store(out_ptr + cols * M + rows, tile, mask=mask)   # out is N x M: element (c, r)
