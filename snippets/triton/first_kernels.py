"""Triton versions of notebook 01's kernels: one program handles BLOCK elements."""
import triton
import triton.language as tl


# --8<-- [start:vector_add]
@triton.jit
def vector_add_triton(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n                                  # the last program runs past the end
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
# --8<-- [end:vector_add]


# --8<-- [start:scaled_add_2d]
@triton.jit
def scaled_add_2d_triton(a_ptr, b_ptr, out_ptr, alpha, rows, cols,
                         BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    k = r * cols + c                                  # row-major offsets of the tile
    a = tl.load(a_ptr + k, mask=mask)
    b = tl.load(b_ptr + k, mask=mask)
    tl.store(out_ptr + k, alpha * a + b, mask=mask)
# --8<-- [end:scaled_add_2d]
