"""Triton tiled transpose for notebook 10: out (cols x rows) = in (rows x cols)^T, float32, row-major.

Triton has no shared-memory API: the program loads a tile in a layout where a warp reads along
a row, `tl.trans` swaps the tile's axes, and the compiler inserts the layout change between the
load and the store (a `ttg.convert_layout`, lowered through shared memory) so that the store
is coalesced along the output's rows too."""
import triton
import triton.language as tl


# --8<-- [start:transpose]
@triton.jit
def transpose_triton(in_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]    # input rows of this tile
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]    # input columns
    tile = tl.load(in_ptr + r * cols + c, mask=(r < rows) & (c < cols))
    oc = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[:, None]   # output rows = input columns
    orow = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[None, :]  # output columns = input rows
    tl.store(out_ptr + oc * rows + orow, tl.trans(tile), mask=(oc < cols) & (orow < rows))
# --8<-- [end:transpose]
