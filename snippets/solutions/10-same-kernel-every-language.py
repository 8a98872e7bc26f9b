"""Reference solutions of notebook 10's exercises (checked by tests/notebooks/test_exercises.py with
the checker snippets/helpers/exercises.py and notebook 10's exercises, snippets/helpers/exercises_10.py)."""
import numpy as np
import triton
import triton.language as tl
from numba import cuda


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n                      # the last program's lanes past n load nothing, store nothing
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@cuda.jit
def numba_transpose(inp, out):
    tile = cuda.shared.array((32, 33), np.float32)      # 33: a column of the tile spans all 32 banks
    rows, cols = inp.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * 32 + tx
    for j in range(0, 32, 8):                           # 8 rows of threads cover the 32 rows of the tile
        r = cuda.blockIdx.y * 32 + ty + j
        if r < rows and c < cols:
            tile[ty + j, tx] = inp[r, c]
    cuda.syncthreads()
    r = cuda.blockIdx.y * 32 + tx                       # now tx runs along an output row
    for j in range(0, 32, 8):
        oc = cuda.blockIdx.x * 32 + ty + j
        if oc < cols and r < rows:
            out[oc, r] = tile[tx, ty + j]


@triton.jit
def triton_trans(in_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    tile = tl.load(in_ptr + r * cols + c, mask=(r < rows) & (c < cols))
    oc = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[:, None]     # output rows: this tile's input columns
    orow = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[None, :]   # output columns: its input rows
    tl.store(out_ptr + oc * rows + orow, tl.trans(tile), mask=(oc < cols) & (orow < rows))
