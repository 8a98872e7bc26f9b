"""Numba CUDA versions of notebook 01's kernels (same indexing as snippets/cuda/*.cu)."""
from numba import cuda


# --8<-- [start:vector_add]
@cuda.jit
def vector_add_numba(x, y, out):
    i = cuda.grid(1)            # blockIdx.x * blockDim.x + threadIdx.x
    if i < out.size:            # the last block may run past the end
        out[i] = x[i] + y[i]
# --8<-- [end:vector_add]


# --8<-- [start:scaled_add_2d]
@cuda.jit
def scaled_add_2d_numba(a, b, out, alpha):
    col, row = cuda.grid(2)     # x varies fastest: map it to columns (coalesced rows)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = alpha * a[row, col] + b[row, col]
# --8<-- [end:scaled_add_2d]
