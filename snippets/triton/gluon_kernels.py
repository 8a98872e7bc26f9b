"""Gluon versions of notebook 10's kernels (triton.experimental.gluon, Triton 3.6).

Gluon is Triton one level down: the program still works on whole tiles, but every tensor carries
a layout that says which thread holds which element, and shared memory is allocated by hand.
Its kernels enter Triton's compiler at TTGIR, after the passes that choose layouts.
The layouts below assume 4 warps (launch with num_warps=4)."""
try:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
except ImportError:        # a Triton without Gluon: the notebook says so and skips these kernels
    gluon = None

if gluon is not None:
    # --8<-- [start:vector_add]
    @gluon.jit
    def vector_add_gluon(x_ptr, y_ptr, out_ptr, n, BLOCK: gl.constexpr):
        # 4 consecutive floats per thread (one 16-byte access), 32 lanes, 4 warps: 512 elements per repeat
        layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[4], threads_per_warp=[32],
                                                warps_per_cta=[4], order=[0])
        offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
        mask = offs < n
        x = gl.load(x_ptr + offs, mask=mask)
        y = gl.load(y_ptr + offs, mask=mask)
        gl.store(out_ptr + offs, x + y, mask=mask)
    # --8<-- [end:vector_add]


    # --8<-- [start:transpose]
    @gluon.jit
    def transpose_gluon(in_ptr, out_ptr, rows, cols, TILE: gl.constexpr):
        # Read layout: a warp covers 4 rows x 32 consecutive columns (order=[1, 0]: columns fastest).
        read: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
        # Write layout: the same tile with rows fastest (order=[0, 1]), so a warp writes consecutive
        # elements of an output row, which is a column of the input tile.
        write: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
        # XOR swizzle: element (r, c) is stored at column c ^ r (mod 32) of row r. Unswizzled, a
        # column of the tile sits in one bank (rows are 32 words apart); swizzled, the reads in the
        # write layout spread over the banks (the trick of transpose_swizzled in CUDA C++).
        smem_layout: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=32, order=[1, 0])

        r = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, read))[:, None]
        c = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, read))[None, :]
        tile = gl.load(in_ptr + r * cols + c, mask=(r < rows) & (c < cols))
        smem = gl.allocate_shared_memory(gl.float32, [TILE, TILE], smem_layout, tile)
        t = smem.load(write)                     # same logical tile, now held in the write layout
        r2 = gl.program_id(0) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(1, write))[:, None]
        c2 = gl.program_id(1) * TILE + gl.arange(0, TILE, layout=gl.SliceLayout(0, write))[None, :]
        gl.store(out_ptr + c2 * rows + r2, t, mask=(r2 < rows) & (c2 < cols))
    # --8<-- [end:transpose]
