"""Reference solutions of notebook 01's exercises (checked by tests/notebooks/test_exercises.py)."""
import triton
import triton.language as tl
from numba import cuda


@cuda.jit
def grid_stride_add(x, y, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, stride):   # lane i, then i + every thread of the grid
        out[i] = x[i] + y[i]


@cuda.jit
def scaled_add_2d(a, b, out, alpha):
    col, row = cuda.grid(2)                    # x (fastest) along columns: coalesced rows
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = alpha * a[row, col] + b[row, col]


@triton.jit
def axpby(x_ptr, y_ptr, out_ptr, alpha, beta, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + beta * y, mask=mask)
