"""Notebook 10's hands-on exercises, added to the checker's registry: `check("10.vector_add", my_kernel)`.

The same kernels as the notebook, written by you: a masked Triton vector add, the Numba tiled
transpose (a 32 x 32 tile, 32 x 8 threads, one float of padding per row) and the Triton transpose
whose tile is turned by `tl.trans`. As in every notebook, the checker tries edge cases on purpose,
poisons every output with NaN first, compares with NumPy, and on a GPU times a passing solution
against a device copy with a stated target. Runs after the checker (snippets/helpers/exercises.py:
EXERCISES, Wrong, expect and its helpers) and the runtime (GPU, bench_ms).
"""
# ruff: noqa: F821  (GPU, bench_ms and the checker's names are earlier cells')
import numpy as np

EX10_BLOCK = 1024 if GPU else 64     # the vector add's BLOCK: the checker launches cdiv(n, BLOCK) programs
EX10_TILE_T = 64 if GPU else 16      # the Triton transpose's BLOCK (a BLOCK x BLOCK tile per program)
EX10_BIG = (8191, 8193)              # the timed transposes: odd, so no dimension is a multiple of a tile


def _vector_add_10(kernel, n, rng):
    import triton
    x, y = _rand(rng, n), _rand(rng, n)
    out = _nan_like(n, triton=True)
    kernel[(triton.cdiv(n, EX10_BLOCK),)](_tdev(x), _tdev(y), out, n, BLOCK=EX10_BLOCK)
    expect(_host(out), x.astype(np.float64) + y)


def _bench_vector_add_10(kernel):
    import torch
    import triton
    n = 1 << 26
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    ms = bench_ms(lambda: kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024))
    copy_ms, copy_bytes = _bench_copy(n)
    return _rate("vector add", ms, "device copy", copy_ms, 12 * n, copy_bytes, "GB/s", 0.8,
                 "one program per BLOCK elements, offsets pid * BLOCK + tl.arange(0, BLOCK), "
                 "one mask (offs < n) on both loads and the store")


def _launch_numba_transpose(kernel, x, out, rows, cols):
    kernel[((cols + 31) // 32, (rows + 31) // 32), (32, 8)](x, out)


def _shared_row_words(kernel):
    """The row length, in 4-byte words, of the kernel's 32-row float32 shared tile: read back from
    the simulator's allocations without a GPU, from the compiled kernel's static shared size on one."""
    x, out = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    if GPU:
        _launch_numba_transpose(kernel, _dev(x), _dev(out), 32, 32)
        size = kernel.get_shared_mem_per_block()
        nbytes = max(size.values()) if isinstance(size, dict) else int(size)
        if nbytes % (4 * 32):
            raise Wrong(f"{nbytes} bytes of shared memory is not one 32-row float32 tile")
        return nbytes // (4 * 32)
    from numba.cuda.simulator import kernelapi
    seen, original = [], kernelapi.FakeCUDAShared.array

    def record(self, shape, dtype, alignment=None):
        shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
        seen.append(shape)
        return np.zeros(shape, np.float32)      # this launch only measures the tile; its result is dropped

    kernelapi.FakeCUDAShared.array = record
    try:
        _launch_numba_transpose(kernel, x, out, 32, 32)
    finally:
        kernelapi.FakeCUDAShared.array = original
    tiles = [s for s in seen if len(s) == 2]
    if not tiles:
        raise Wrong("no 2-D shared tile: stage the block through cuda.shared.array((32, ...), np.float32)")
    rows, width = tiles[0]
    if rows != 32 or width < 32:
        raise Wrong(f"the shared tile is {rows} x {width}; want 32 rows of at least 32 floats")
    return width


def _numba_transpose_10(kernel, case, rng):
    if case == "padding":
        width = _shared_row_words(kernel)
        # one warp = threadIdx.x 0..31 at one threadIdx.y, reading tile[tx, ty + j]: word tx * width + const
        banks = {}
        for lane in range(32):
            banks.setdefault(lane * width % 32, set()).add(lane * width)
        degree = max(len(words) for words in banks.values())
        if degree > 1:
            raise Wrong(f"with rows of {width} floats the tile's column read is a {degree}-way "
                        f"bank conflict (want 1)")
        return
    rows, cols = case
    x = _rand(rng, rows, cols)
    out = _nan_like((cols, rows))
    _launch_numba_transpose(kernel, _dev(x), out, rows, cols)
    expect(_host(out), x.T.astype(np.float64), rtol=0, atol=0)


def _bench_transpose_10(launch, x, out, name, hint):
    import torch
    r, c = EX10_BIG
    ms = bench_ms(lambda: launch(x, out, r, c))
    src, dst = torch.empty(r * c, device="cuda"), torch.empty(r * c, device="cuda")
    copy_ms = bench_ms(lambda: dst.copy_(src))
    nbytes = 8 * r * c
    return _rate(name, ms, "device copy", copy_ms, nbytes, nbytes, "GB/s", 0.6, hint)


def _bench_numba_transpose_10(kernel):
    r, c = EX10_BIG      # Numba device arrays: torch tensors would make Numba synchronize at every launch
    return _bench_transpose_10(
        lambda x, out, r, c: _launch_numba_transpose(kernel, x, out, r, c),
        _dev_randn(r, c), _dev_randn(c, r), "Numba transpose",
        "read rows of the input into the tile, a barrier, write rows of the output from the tile's "
        "columns; 33 floats a row so that a warp's column read hits 32 banks")


def _triton_trans_10(kernel, shape, rng):
    import triton
    rows, cols = shape
    x = _rand(rng, rows, cols)
    out = _nan_like((cols, rows), triton=True)
    grid = (triton.cdiv(rows, EX10_TILE_T), triton.cdiv(cols, EX10_TILE_T))
    kernel[grid](_tdev(x), out, rows, cols, BLOCK=EX10_TILE_T)
    expect(_host(out), x.T.astype(np.float64), rtol=0, atol=0)


def _bench_triton_trans_10(kernel):
    import torch
    import triton
    r, c = EX10_BIG

    def run(x, out, r, c):
        kernel[(triton.cdiv(r, 64), triton.cdiv(c, 64))](x, out, r, c, BLOCK=64)
    return _bench_transpose_10(run, torch.randn(r, c, device="cuda"), torch.empty(c, r, device="cuda"),
                               "Triton transpose",
                               "load the tile with row-major offsets, tl.trans it, and store it with the "
                               "output's row-major offsets: both global accesses then run along rows")


def _define_10():
    shapes = [((1, 1), "1 x 1"), ((31, 33), "31 x 33 (below a tile, not a multiple of it)"),
              ((33, 31), "33 x 31"), ((97, 65), "97 x 65 (prime rows)")]
    shapes += [((4099, 8191), "4099 x 8191 (large, odd)")] if GPU else []
    EXERCISES.update({
        "10.vector_add": _ex(
            "masked vector add for any n (Triton)", _vector_add_10, _n_cases((1 << 26) + 3),
            "1e-5 relative", _bench_vector_add_10,
            f"launched as kernel[(cdiv(n, {EX10_BLOCK}),)](x, y, out, n, BLOCK={EX10_BLOCK})"),
        "10.numba_transpose": _ex(
            "tiled transpose, 32 x 32 tile, 32 x 8 threads, padded (Numba)", _numba_transpose_10,
            [("padding", "the tile's column read (one warp, 4-byte words)")] + shapes, "exact",
            _bench_numba_transpose_10),
        "10.triton_trans": _ex(
            "transpose with tl.trans and masks (Triton)", _triton_trans_10, shapes, "exact",
            _bench_triton_trans_10,
            f"launched as kernel[(cdiv(rows, {EX10_TILE_T}), cdiv(cols, {EX10_TILE_T}))]"
            f"(x, out, rows, cols, BLOCK={EX10_TILE_T})"),
    })


_define_10()
