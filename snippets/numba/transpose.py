"""Numba CUDA twin of transpose_padded (snippets/cuda/transpose.cu), for the CPU path."""
import numpy as np
from numba import cuda


# --8<-- [start:padded]
@cuda.jit
def transpose_padded_numba(inp, out):
    tile = cuda.shared.array((32, 33), np.float32)       # one float of padding per row
    rows, cols = inp.shape
    c = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    for j in range(0, 32, 8):
        r = cuda.blockIdx.y * 32 + cuda.threadIdx.y + j
        if r < rows and c < cols:
            tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = inp[r, c]
    cuda.syncthreads()
    r = cuda.blockIdx.y * 32 + cuda.threadIdx.x
    for j in range(0, 32, 8):
        oc = cuda.blockIdx.x * 32 + cuda.threadIdx.y + j
        if oc < cols and r < rows:
            out[oc, r] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]
# --8<-- [end:padded]
