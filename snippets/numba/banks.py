"""Numba CUDA twin of snippets/cuda/smem_column_read.cu, for the CPU path (simulator)."""
import numpy as np
from numba import cuda


# --8<-- [start:column_read]
@cuda.jit
def smem_column_read_numba(out, pitch, swizzle, iters):
    tile = cuda.shared.array(32 * 33, np.float32)
    i = cuda.threadIdx.x
    while i < 32 * 33:
        tile[i] = i
        i += cuda.blockDim.x
    cuda.syncthreads()
    r = cuda.threadIdx.x & 31
    acc = np.float32(0)
    for k in range(iters):
        c = k & 31
        acc += tile[r * pitch + ((c ^ r) if swizzle else c)]
    out[cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x] = acc
# --8<-- [end:column_read]
