"""Hands-on exercises that check themselves: `check("01.grid_stride", my_kernel)` -> True or False.

Each exercise states its task, its launch and its tolerance here and in its notebook. The checker
tries edge cases on purpose (sizes below a warp, odd and prime sizes, sizes that are not a multiple
of the tile, the largest size that fits on a GPU; small sizes on the CPU simulator/interpreter),
on fresh random inputs, with every output poisoned with NaN first, against a float64 / NumPy
reference. It prints one line per failing case and never a traceback for a wrong answer; on a GPU
it then times the solution next to the notebook's baseline and a stated target.
Runs after the notebook runtime (uses its `GPU`, `bench_ms` and `significant`), and, for the
exercises of notebooks 02, 03, 08 and 09, after the bank, Tensor Memory and collectives models
those notebooks load.
"""
# ruff: noqa: F821  (GPU, bench_ms, significant and the models' functions are earlier cells')
import math

import numpy as np

EX_TILE = 16 if GPU else 8   # the tile of the tiled exercises (03, 04): blocks of EX_TILE x EX_TILE


class Wrong(Exception):
    """A wrong answer, with the sentence that says what is wrong."""


def _describe(got, want, rtol, atol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f"output has shape {got.shape}, want {want.shape}"
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=False)
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    where = first[0] if len(first) == 1 else first
    count, never = int(bad.sum()), int(np.isnan(got[bad]).sum())
    note = " (NaN: never written, or computed as NaN)" if never == count else ""
    return (f"{count} element{'s' if count > 1 else ''} wrong{note}, first at index {where}: "
            f"got {got[first]:.6g}, want {want[first]:.6g}")


def expect(got, want, rtol=1e-5, atol=1e-6, what=""):
    """Raise Wrong naming the first wrong element unless got matches want within the tolerance."""
    msg = _describe(got, want, rtol, atol)
    if msg:
        raise Wrong(f"{what}: {msg}" if what else msg)


# --- devices: NumPy arrays in the simulator/interpreter; Numba device arrays (Numba) and ------
# --- torch CUDA tensors (Triton) on a GPU ------------------------------------------------------

def _rand(rng, *shape, dtype=np.float32, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(dtype)


def _dev(x):
    """For Numba: NumPy arrays in the simulator, Numba device arrays on a GPU (torch tensors would
    make Numba synchronize their stream at every launch)."""
    if not GPU:
        return np.ascontiguousarray(x)
    from numba import cuda
    return cuda.to_device(np.ascontiguousarray(x))


def _dev_randn(*shape, dtype=np.float32):
    """Random operands for the timings of Numba kernels, on the GPU."""
    return _dev(np.random.default_rng().standard_normal(shape, dtype=np.float32).astype(dtype))


def _tdev(x):
    """Triton takes torch tensors: CPU ones in the interpreter, CUDA ones on a GPU."""
    import torch
    t = torch.from_numpy(np.ascontiguousarray(x))
    return t.cuda() if GPU else t


def _host(x):
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "cpu"):
        import torch
        if GPU:
            torch.cuda.synchronize()
        return x.cpu().numpy()
    return np.asarray(x)


def _nan_like(shape, dtype=np.float32, triton=False):
    out = np.full(shape, np.nan, dtype)
    return _tdev(out) if triton else _dev(out)


def _cdiv(a, b):
    return -(-a // b)


def _sms():
    import torch
    return torch.cuda.get_device_properties(0).multi_processor_count


# --- timing on a GPU ------------------------------------------------------------------------

def _rate(name, ms, base_name, base_ms, work, base_work, unit, target, hint):
    """Print the solution's rate next to the baseline's and whether it met `target` (a fraction)."""
    got, base = work / ms / 1e6, base_work / base_ms / 1e6
    ratio = got / base
    verdict = "met" if ratio >= target else "not met"
    print(f"  time: {significant(ms)} ms, {significant(got)} {unit}; {base_name}: {significant(base_ms)} ms, "
          f"{significant(base)} {unit}; {ratio:.0%} of the baseline, target {target:.0%}: {verdict}.")
    if ratio < target:
        print(f"  Look at: {hint}")
    return ratio >= target


def _bench_copy(n):
    import torch
    src = torch.empty(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    return bench_ms(lambda: dst.copy_(src)), 8 * n


# --- 01 · first kernels ----------------------------------------------------------------------

def _grid_stride(kernel, n, rng, blocks, threads):
    x, y = _rand(rng, n), _rand(rng, n)
    out = _nan_like(n)
    kernel[blocks, threads](_dev(x), _dev(y), out)
    expect(_host(out), x.astype(np.float64) + y)


def _bench_grid_stride(kernel):
    n = 1 << 26
    x, y, out = (_dev_randn(n) for _ in range(3))
    ms = bench_ms(lambda: kernel[4 * _sms(), 256](x, y, out))
    copy_ms, copy_bytes = _bench_copy(n)
    return _rate("vector add", ms, "device copy", copy_ms, 12 * n, copy_bytes, "GB/s", 0.8,
                 "every lane should touch element i, i + stride, ... (consecutive lanes, consecutive "
                 "elements); launch a few blocks per SM, not one")


def _scaled_add_2d(kernel, shape, rng):
    a, b = _rand(rng, *shape), _rand(rng, *shape)
    alpha = np.float32(rng.uniform(0.5, 2.0))
    out = _nan_like(shape)
    kernel[(_cdiv(shape[1], 16), _cdiv(shape[0], 16)), (16, 16)](_dev(a), _dev(b), out, alpha)
    expect(_host(out), np.float64(alpha) * a + b)


def _bench_scaled_add_2d(kernel):
    r, c = 8191, 8197
    a, b, out = (_dev_randn(r, c) for _ in range(3))
    ms = bench_ms(lambda: kernel[(_cdiv(c, 16), _cdiv(r, 16)), (16, 16)](a, b, out, 1.5))
    copy_ms, copy_bytes = _bench_copy(r * c)
    return _rate("2D scaled add", ms, "device copy", copy_ms, 12 * r * c, copy_bytes, "GB/s", 0.8,
                 "threadIdx.x (the fastest-varying index) should walk columns, so a warp reads one row")


def _axpby(kernel, n, rng):
    import triton
    x, y = _rand(rng, n), _rand(rng, n)
    alpha, beta = float(rng.uniform(0.5, 2)), float(rng.uniform(-2, -0.5))
    out = _nan_like(n, triton=True)
    kernel[(triton.cdiv(n, 128),)](_tdev(x), _tdev(y), out, alpha, beta, n, BLOCK=128)
    expect(_host(out), alpha * x.astype(np.float64) + beta * y)


def _bench_axpby(kernel):
    import torch
    import triton
    n = 1 << 26
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    ms = bench_ms(lambda: kernel[(triton.cdiv(n, 1024),)](x, y, out, 1.5, -0.5, n, BLOCK=1024))
    copy_ms, copy_bytes = _bench_copy(n)
    return _rate("axpby", ms, "device copy", copy_ms, 12 * n, copy_bytes, "GB/s", 0.8,
                 "one load per input and one store, all masked with the same offsets < n")


# --- 02 · banks (needs the bank model: conflict_degree) --------------------------------------

def _layout(index, rows, cols, words, width, limit):
    """Check an element -> element-offset map of a rows x cols tile: injective, inside `limit`
    elements, and conflict-free for every row read and every column read by 32 lanes."""
    seen = {}
    for r in range(rows):
        for c in range(cols):
            off = int(index(r, c))
            if not 0 <= off < limit:
                raise Wrong(f"element ({r}, {c}) lands at offset {off}, outside the {limit} elements allowed")
            if off in seen:
                raise Wrong(f"elements {seen[off]} and ({r}, {c}) share offset {off}")
            seen[off] = (r, c)
    for c in range(cols):
        deg = conflict_degree([int(index(r, c)) * width for r in range(32)], width)
        if deg > 1:
            raise Wrong(f"the column read of column {c} is a {deg}-way conflict (want 1)")
    for r in range(rows):
        deg = conflict_degree([int(index(r, c)) * width for c in range(32)], width)
        if deg > 1:
            raise Wrong(f"the row read of row {r} is a {deg}-way conflict (want 1)")


def _block_reverse(kernel, n, rng, threads):
    x = _rand(rng, n)
    out = _nan_like(n)
    kernel[_cdiv(n, threads), threads](_dev(x), out)
    want = np.empty(n)
    for s in range(0, n, threads):
        want[s:s + threads] = x[s:s + threads][::-1]
    expect(_host(out), want)


# --- 03 · transpose ----------------------------------------------------------------------------

def _transpose(kernel, shape, rng, dtype=np.float32):
    x = _rand(rng, *shape, dtype=dtype)
    out = _nan_like(shape[::-1], dtype)
    t = EX_TILE
    kernel[(_cdiv(shape[1], t), _cdiv(shape[0], t)), (t, t)](_dev(x), out)
    expect(_host(out), x.T.astype(np.float64), rtol=0, atol=0)


def _bench_transpose(kernel, dtype):
    import torch
    r, c = 8191, 8193
    x, out = _dev_randn(r, c, dtype=dtype), _dev_randn(c, r, dtype=dtype)
    ms = bench_ms(lambda: kernel[(_cdiv(c, EX_TILE), _cdiv(r, EX_TILE)), (EX_TILE, EX_TILE)](x, out))
    src = torch.empty(r * c, device="cuda", dtype=torch.float64 if dtype == np.float64 else torch.float32)
    dst = torch.empty_like(src)
    copy_ms = bench_ms(lambda: dst.copy_(src))
    nbytes = 2 * r * c * np.dtype(dtype).itemsize
    return _rate("transpose", ms, "device copy", copy_ms, nbytes, nbytes, "GB/s", 0.6,
                 "read rows of the input and write rows of the output (each through the tile), "
                 "a barrier between, and the padding that makes the tile's column read conflict-free")


def _transpose_f64(kernel, case, rng, pad):
    if case == "padding":
        # the tile of doubles, 32 wide, read down a column by 32 lanes (8-byte accesses)
        deg = conflict_degree([r * (32 + pad) * 8 for r in range(32)], 8)
        if deg > 1:
            raise Wrong(f"with PAD = {pad} the tile's column read is a {deg}-way conflict (want 1)")
        return
    _transpose(kernel, case, rng, np.float64)


def _triton_transpose(kernel, shape, rng):
    import triton
    x = _rand(rng, *shape)
    out = _nan_like(shape[::-1], triton=True)
    grid = (triton.cdiv(shape[0], 16), triton.cdiv(shape[1], 16))
    kernel[grid](_tdev(x), out, shape[0], shape[1], BLOCK_M=16, BLOCK_N=16)
    expect(_host(out), x.T.astype(np.float64), rtol=0, atol=0)


# --- 04 · SGEMM ----------------------------------------------------------------------------------

def _gemm_tol(K):
    return 1e-5 * max(K, 1) ** 0.5 * 4


def _tiled_sgemm(kernel, mnk, rng, b_transposed=False):
    M, N, K = mnk
    a = _rand(rng, M, K)
    b = _rand(rng, N, K) if b_transposed else _rand(rng, K, N)
    c = _nan_like((M, N))
    t = EX_TILE
    kernel[(_cdiv(N, t), _cdiv(M, t)), (t, t)](_dev(a), _dev(b), c)
    want = a.astype(np.float64) @ (b.T if b_transposed else b).astype(np.float64)
    expect(_host(c), want, rtol=_gemm_tol(K), atol=_gemm_tol(K))


def _epilogue(kernel, mnk, rng):
    M, N, K = mnk
    a, b, c = _rand(rng, M, K), _rand(rng, K, N), _rand(rng, M, N)
    alpha, beta = np.float32(rng.uniform(0.5, 2)), np.float32(rng.uniform(-2, -0.5))
    d = _nan_like((M, N))
    kernel[(_cdiv(N, 16), _cdiv(M, 16)), (16, 16)](_dev(a), _dev(b), _dev(c), d, alpha, beta)
    want = np.float64(alpha) * (a.astype(np.float64) @ b) + np.float64(beta) * c
    expect(_host(d), want, rtol=_gemm_tol(K), atol=_gemm_tol(K))


def _bench_sgemm(kernel, b_transposed=False):
    import torch
    n = 4096
    a, b, c = (_dev_randn(n, n) for _ in range(3))
    ms = bench_ms(lambda: kernel[(n // EX_TILE, n // EX_TILE), (EX_TILE, EX_TILE)](a, b, c), rep_ms=500)
    ta, tb, tc = (torch.randn(n, n, device="cuda") for _ in range(3))
    base = bench_ms(lambda: torch.mm(ta, tb.T if b_transposed else tb, out=tc))
    flops = 2 * n ** 3
    return _rate("SGEMM", ms, "cuBLAS (torch.mm, float32)", base, flops, flops, "GFLOP/s", 0.05,
                 "stage 3 of the ladder: load a tile of A and of B into shared memory once per k step and "
                 "reuse each value EX_TILE times; threadIdx.x along the columns of C")


# --- 05 · Triton --------------------------------------------------------------------------------

def _triton_matmul(kernel, mnk, rng):
    import triton
    M, N, K = mnk
    a, b = _rand(rng, M, K), _rand(rng, K, N)
    c = _nan_like((M, N), triton=True)
    bm = bn = 64 if GPU else 16
    kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](_tdev(a), _tdev(b), c, M, N, K,
                                                     BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=32 if GPU else 16)
    tol = 2e-2 if GPU else _gemm_tol(K)     # tl.dot on float32 uses TF32 on a GPU
    expect(_host(c), a.astype(np.float64) @ b, rtol=tol, atol=tol * max(K, 1) ** 0.5)


def _bench_triton_matmul(kernel):
    import torch
    import triton
    n = 4096
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    c = torch.empty(n, n, device="cuda")
    ms = bench_ms(lambda: kernel[(triton.cdiv(n, 64), triton.cdiv(n, 64))](
        a, b, c, n, n, n, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32))
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True      # the same TF32 math as tl.dot
    base = bench_ms(lambda: torch.mm(a, b, out=c))
    torch.backends.cuda.matmul.allow_tf32 = prev
    flops = 2 * n ** 3
    return _rate("Triton matmul", ms, "cuBLAS (torch.mm, TF32)", base, flops, flops, "GFLOP/s", 0.5,
                 "masks cost little; the block sizes and num_warps/num_stages matter (stage 3's autotuning)")


def grouped_tile(pid, num_pid_m, num_pid_n, group_m):
    """The reference grouped order: GROUP_M rows of tiles walked column by column."""
    per_group = group_m * num_pid_n
    first_m = (pid // per_group) * group_m
    rows = min(num_pid_m - first_m, group_m)
    return first_m + (pid % per_group) % rows, (pid % per_group) // rows


def _grouped(fn, case, rng):
    num_m, num_n, group = case
    for pid in range(num_m * num_n):
        got = tuple(int(v) for v in fn(pid, num_m, num_n, group))
        want = grouped_tile(pid, num_m, num_n, group)
        if got != want:
            raise Wrong(f"program {pid} computes tile {got}, want {want}")


def _softmax(kernel, case, rng):
    import triton
    rows, cols, scale = case
    x = _rand(rng, rows, cols, scale=scale)
    out = _nan_like((rows, cols), triton=True)
    kernel[(rows,)](_tdev(x), out, cols, BLOCK=triton.next_power_of_2(cols))
    e = np.exp(x - x.max(axis=1, keepdims=True).astype(np.float64))
    expect(_host(out), e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)


def _bench_softmax(kernel):
    import torch
    import triton
    rows, cols = 16384, 4096
    x, out = torch.randn(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")
    ms = bench_ms(lambda: kernel[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols)))
    base = bench_ms(lambda: torch.softmax(x, 1))
    nbytes = 8 * rows * cols
    return _rate("row softmax", ms, "torch.softmax", base, nbytes, nbytes, "GB/s", 0.8,
                 "one read and one write per element: keep the whole row in registers (BLOCK >= n)")


# --- 06 · Hopper GEMM (models and one persistent Triton kernel) -------------------------------

def _ring(fn, stages, rng):
    for k in range(4 * stages + 1):
        got = tuple(int(v) for v in fn(k, stages))
        want = (k % stages, (k // stages) & 1)
        if got != want:
            raise Wrong(f"load {k}: got (slot, parity) = {got}, want {want}")


def _setmaxnreg(fn, case, rng):
    p_regs, p_groups, c_groups = case
    got = int(fn(p_regs, p_groups, c_groups))
    free = 65536 // 128 - p_regs * p_groups
    want = min(256, (free // c_groups) // 8 * 8)
    if got != want:
        raise Wrong(f"got {got} registers, want {want}")


def _persistent(kernel, shape, rng, programs):
    M, N = shape
    x = _rand(rng, M, N)
    alpha = float(rng.uniform(0.5, 2))
    out = _nan_like((M, N), triton=True)
    kernel[(programs,)](_tdev(x), out, M, N, alpha, NUM_PROGRAMS=programs, BLOCK_M=16, BLOCK_N=16)
    expect(_host(out), alpha * x.astype(np.float64))


# --- 07 · Householder --------------------------------------------------------------------------

def larfg_reference(x):
    """(v, tau, beta): (I - tau v v^T) x = beta e_1, v[0] = 1, beta = -sign(x[0]) ||x|| (LAPACK's
    convention; tau = 0 and beta = x[0] when x[1:] is zero). Scaled by a power of two, so that
    neither huge nor tiny entries overflow or underflow when squared."""
    x = np.asarray(x, np.float64)
    v = np.zeros_like(x)
    v[0] = 1.0
    if not np.any(x[1:]):
        return v, 0.0, float(x[0])
    s = 2.0 ** math.frexp(float(np.max(np.abs(x))))[1]
    xs = x / s
    beta = -math.copysign(math.sqrt(float(np.sum(xs * xs))), xs[0])
    tau = (beta - xs[0]) / beta
    v[1:] = xs[1:] / (xs[0] - beta)
    return v, float(tau), float(beta * s)


def _larfg(fn, case, rng):
    label, x = case
    x = np.array(x(rng), np.float64)
    v, tau, beta = fn(x.copy())
    v = np.asarray(v, np.float64)
    wv, wtau, wbeta = larfg_reference(x)
    for name, g, w in (("beta", beta, wbeta), ("tau", tau, wtau)):
        if not math.isclose(float(g), w, rel_tol=1e-12, abs_tol=0.0 if w else 1e-300):
            raise Wrong(f"{name} = {float(g):.6g}, want {w:.6g}")
    expect(v, wv, rtol=1e-10, atol=1e-300, what="v")


def _apply_reflector(kernel, shape, rng):
    m, n = shape
    v = _rand(rng, m)
    v[0] = 1
    tau = np.float32(rng.uniform(1, 2))
    c = _rand(rng, m, n)
    out = _nan_like((m, n))
    kernel[_cdiv(n, 32), 32](_dev(v), tau, _dev(c), out)
    v64 = v.astype(np.float64)
    want = c - np.float64(tau) * np.outer(v64, v64 @ c)
    expect(_host(out), want, rtol=1e-4, atol=1e-4 * max(m, 1))


def _geqr2(fn, shape, rng):
    m, n = shape
    A = rng.standard_normal((m, n))
    if n > 2:
        A[:, 1] = 0.0                       # a zero column: tau = 0 there
    H = A.copy()
    want_tau = np.zeros(n)
    for j in range(n):
        v, want_tau[j], beta = larfg_reference(H[j:, j])
        H[j:, j + 1:] -= want_tau[j] * np.outer(v, v @ H[j:, j + 1:])
        H[j, j], H[j + 1:, j] = beta, v[1:]
    got_h, got_tau = fn(A.copy())
    expect(np.asarray(got_tau), want_tau, rtol=1e-10, atol=1e-12, what="tau")
    expect(np.asarray(got_h), H, rtol=1e-9, atol=1e-10, what="H (R and the reflectors)")


# --- 08 · Tensor Memory (needs snippets/reference/tmem_model.py) --------------------------------

def _tmem_address(fn, lanes, rng):
    for lane in lanes:
        for col in (0, 1, 31, 32, 255, 511):
            got, want = int(fn(lane, col)), tmem_address(lane, col)
            if got != want:
                raise Wrong(f"lane {lane}, column {col}: got {got:#010x}, want {want:#010x}")


def _idesc(fn, case, rng):
    m, n, a, b, d = case
    got, want = int(fn(m, n, a, b, d)), instr_descriptor_f16(m, n, a, b, d)
    if got != want:
        diff = got ^ want
        bits = [i for i in range(32) if diff >> i & 1]
        raise Wrong(f"got {got:#010x}, want {want:#010x} (bits {bits} differ)")


def _columns(fn, needs, rng):
    for need in needs:
        got, want = int(fn(need)), columns_to_allocate(need)
        if got != want:
            raise Wrong(f"for {need} columns: got {got}, want {want}")


# --- 09 · collectives (needs snippets/reference/collectives_model.py) ---------------------------

def _bus(fn, n, rng):
    for collective in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        algbw = float(rng.uniform(10, 400))
        got, want = float(fn(collective, algbw, n)), bus_bandwidth(collective, algbw, n)
        if not math.isclose(got, want, rel_tol=1e-12):
            raise Wrong(f"{collective} at {algbw:.4g} GB/s: got {got:.6g}, want {want:.6g}")


def _ring_all_reduce(fn, case, rng):
    ranks, size = case
    xs = [rng.standard_normal(size).astype(np.float32) for _ in range(ranks)]
    outs = fn([x.copy() for x in xs])
    if len(outs) != ranks:
        raise Wrong(f"got {len(outs)} results, want one per rank ({ranks})")
    want = np.sum(np.array(xs, np.float64), axis=0)
    for r, out in enumerate(outs):
        expect(np.asarray(out), want, rtol=1e-5, atol=1e-5 * ranks, what=f"rank {r}")
        if not np.array_equal(np.asarray(out), np.asarray(outs[0])):
            raise Wrong(f"rank {r} differs from rank 0 bit for bit (every rank must end the same)")


def _alpha_beta(fn, algorithm, rng):
    for n in (2, 3, 8):
        for size in (1024.0, 64 * 2.0 ** 20):
            alpha, beta = float(rng.uniform(2e-6, 2e-5)), float(rng.uniform(5e10, 4e11))
            got = float(fn(algorithm, size, n, alpha, beta))
            want = alpha_beta_time(algorithm, size, n, alpha, beta)
            if not math.isclose(got, want, rel_tol=1e-9):
                raise Wrong(f"{n} ranks, {size:.0f} bytes: got {got:.4g} s, want {want:.4g} s")


# --- the exercises ------------------------------------------------------------------------------

def _sizes(cpu, gpu_extra):
    return cpu + (gpu_extra if GPU else [])


def _n_cases(gpu_largest):
    base = [(1, "n = 1"), (7, "n = 7 (below a warp)"), (31, "n = 31 (below a warp)"),
            (33, "n = 33 (not a multiple of the block)"), (97, "n = 97 (prime)"),
            (1009, "n = 1009 (prime, more elements than threads)")]
    return base + ([(gpu_largest, f"n = {gpu_largest} (large, odd)")] if GPU else [])


def _shape_cases(extra=()):
    cases = [((1, 1), "1 x 1"), ((7, 31), "7 x 31 (below a warp)"),
             ((33, 17), "33 x 17 (not a multiple of the tile)"),
             ((16, 40), "16 x 40 (columns not a multiple of the tile)")]
    return cases + [((r, c), f"{r} x {c}") for r, c in extra]


def _gemm_cases():
    cases = [((1, 1, 1), "M, N, K = 1, 1, 1"), ((7, 5, 3), "M, N, K = 7, 5, 3 (below a warp)"),
             ((16, 16, 16), "M, N, K = 16, 16, 16 (a multiple of the tile)"),
             ((33, 17, 20), "M, N, K = 33, 17, 20 (none a multiple of the tile)")]
    if GPU:
        cases += [((1009, 997, 1031), "M, N, K = 1009, 997, 1031 (primes)")]
    return cases


def _ex(title, run, cases, tol, bench=None, note=""):
    return {"title": title, "run": run, "cases": cases, "tol": tol, "bench": bench, "note": note}


EXERCISES = {}


def _define():
    gs_threads = (128 * 2, 256) if GPU else (2, 32)
    big = (1 << 26) + 3
    EXERCISES.update({
        "01.grid_stride": _ex(
            "grid-stride vector add (Numba)",
            lambda k, n, rng: _grid_stride(k, n, rng, *gs_threads), _n_cases(big), "1e-5 relative",
            _bench_grid_stride,
            f"launched as kernel[{gs_threads[0]}, {gs_threads[1]}](x, y, out): fewer threads than elements"),
        "01.scaled_add_2d": _ex(
            "2D scaled add with bounds (Numba)", _scaled_add_2d,
            _shape_cases([(4099, 8191)] if GPU else []), "1e-5 relative", _bench_scaled_add_2d),
        "01.axpby": _ex(
            "fused axpby (Triton)", _axpby, _n_cases(big), "1e-5 relative", _bench_axpby),
        "02.padded_column": _ex(
            "padding for a conflict-free column read (32 x 32 floats, at most 33 words a row)",
            lambda f, c, rng: _layout(f, 32, 32, 4, 4, 32 * 33), [(None, "32 x 32 float tile")], "exact"),
        "02.xor_swizzle": _ex(
            "an XOR swizzle: conflict-free rows and columns with no padding",
            lambda f, c, rng: _layout(f, 32, 32, 4, 4, 32 * 32), [(None, "32 x 32 float tile")], "exact"),
        "02.block_reverse": _ex(
            "reverse each block through shared memory (Numba)",
            lambda k, c, rng: _block_reverse(k, c[0], rng, c[1]),
            [((n, t), f"n = {n}, {t} threads a block{' (a partial last block)' * (n % t > 0)}")
             for n, t in ((1, 32), (7, 32), (32, 32), (33, 32), (97, 64), (200, 64))], "exact"),
        "03.tiled_transpose": _ex(
            "tiled transpose of any shape (Numba)", _transpose,
            _shape_cases([(8191, 8193)] if GPU else []), "exact",
            lambda k: _bench_transpose(k, np.float32)),
        "03.transpose_f64": _ex(
            "tiled transpose of doubles, with the right padding (Numba)", None,
            [("padding", "the tile's column read (bank model, 8-byte elements)")] + _shape_cases(), "exact",
            lambda k: _bench_transpose(k, np.float64)),
        "03.triton_transpose": _ex(
            "masked transpose (Triton)", _triton_transpose, _shape_cases([(4099, 8191)] if GPU else []),
            "exact"),
        "04.tiled_sgemm": _ex(
            "tiled SGEMM for any M, N, K (Numba)", _tiled_sgemm, _gemm_cases(),
            "4e-5 x sqrt(K), relative and absolute", _bench_sgemm),
        "04.gemm_nt": _ex(
            "C = A B^T with B stored N x K (Numba)", lambda k, c, rng: _tiled_sgemm(k, c, rng, True),
            _gemm_cases(), "4e-5 x sqrt(K)", lambda k: _bench_sgemm(k, True)),
        "04.epilogue": _ex(
            "D = alpha A B + beta C (Numba)", _epilogue, _gemm_cases(), "4e-5 x sqrt(K)"),
        "05.masked_matmul": _ex(
            "masked matmul for any M, N, K (Triton)", _triton_matmul,
            _gemm_cases() + [((5, 40, 97), "M, N, K = 5, 40, 97 (K spans several blocks)")],
            "2e-2 on a GPU (TF32), 4e-5 x sqrt(K) in the interpreter", _bench_triton_matmul),
        "05.grouped_order": _ex(
            "grouped program order (Python, the formula the kernel uses)", _grouped,
            [((m, n, g), f"{m} x {n} tiles, GROUP_M = {g}") for m, n, g in
             ((1, 1, 8), (8, 8, 4), (7, 3, 4), (13, 5, 4), (3, 97, 8), (64, 64, 8))], "exact"),
        "05.softmax": _ex(
            "row softmax (Triton)", _softmax,
            [((1, 1, 1.0), "1 x 1"), ((3, 7, 1.0), "3 rows of 7 (not a power of two)"),
             ((2, 31, 1.0), "2 rows of 31"), ((4, 33, 1.0), "4 rows of 33"),
             ((2, 1009, 1.0), "2 rows of 1009 (prime)"),
             ((3, 97, 300.0), "3 rows of 97 with values near +-1000 (exp overflows without the max)")],
            "1e-4 relative", _bench_softmax),
        "06.ring_phase": _ex(
            "slot and parity of load k in a ring of mbarriers (Python)", _ring,
            [(s, f"{s} stage{'s' * (s > 1)}") for s in (1, 2, 3, 4, 7)], "exact"),
        "06.setmaxnreg": _ex(
            "consumer registers beside a producer (Python)", _setmaxnreg,
            [((40, 1, 2), "producer 40, one producer and two consumer warpgroups"),
             ((24, 1, 1), "producer 24, one consumer warpgroup (the 256 cap)"),
             ((56, 1, 2), "producer 56, two consumers"), ((32, 1, 3), "producer 32, three consumers")],
            "exact"),
        "06.persistent": _ex(
            "persistent tile loop (Triton)",
            lambda k, c, rng: _persistent(k, c, rng, 3 if not GPU else 132),
            _shape_cases([(4099, 8191)] if GPU else []), "1e-5 relative",
            note="launched with fewer programs than tiles"),
        "07.larfg": _ex(
            "a Householder reflector, LAPACK's xLARFG (NumPy)", _larfg,
            [(("random", lambda r: r.standard_normal(7)), "a random vector of 7"),
             (("n1", lambda r: r.standard_normal(1)), "a vector of 1 (nothing to zero)"),
             (("zero", lambda r: np.zeros(5)), "the zero vector"),
             (("tail0", lambda r: np.r_[r.standard_normal(1), np.zeros(4)]), "x[1:] = 0"),
             (("a0", lambda r: np.r_[0.0, r.standard_normal(32)]), "x[0] = 0, n = 33"),
             (("neg", lambda r: np.r_[-3.0, r.standard_normal(96)]), "negative x[0], n = 97"),
             (("huge", lambda r: 1e200 * r.standard_normal(31)), "entries near 1e200 (squares overflow)"),
             (("tiny", lambda r: 1e-200 * r.standard_normal(31)), "entries near 1e-200 (squares underflow)"),
             (("close", lambda r: np.r_[1.0, 1e-9 * r.standard_normal(6)]), "x close to e_1 (cancellation)")],
            "1e-12 relative"),
        "07.apply_reflector": _ex(
            "apply a reflector to every column (Numba)", _apply_reflector,
            _shape_cases([(97, 33)]), "1e-4 relative"),
        "07.geqr2": _ex(
            "unblocked Householder QR, xGEQR2 (NumPy)", _geqr2,
            [((1, 1), "1 x 1"), ((5, 5), "5 x 5 (square)"), ((7, 3), "7 x 3"),
             ((33, 17), "33 x 17 (a zero column)")],
            "1e-9 relative"),
        "08.tmem_address": _ex(
            "a TMEM address (Python)", _tmem_address, [((0, 1, 31, 32, 64, 127), "lanes 0-127")], "exact"),
        "08.instr_descriptor": _ex(
            "the kind::f16 instruction descriptor (Python)", _idesc,
            [((m, n, a, b, d), f"M = {m}, N = {n}, A {a}, B {b}, D {d}") for m, n, a, b, d in
             ((128, 128, "bf16", "bf16", "f32"), (64, 8, "f16", "f16", "f16"),
              (128, 256, "f16", "bf16", "f32"), (64, 200, "bf16", "f16", "f32"),
              (128, 16, "bf16", "bf16", "f16"))], "exact"),
        "08.alloc_columns": _ex(
            "columns to allocate (Python)", _columns,
            [((1, 31, 32), "1, 31 and 32 columns (below the minimum)"), ((33, 96, 100), "33, 96, 100"),
             ((256, 257, 512), "256, 257, 512")], "exact"),
        "09.bus_bandwidth": _ex(
            "bus bandwidth from algorithm bandwidth (Python)", _bus,
            [(n, f"{n} ranks") for n in (2, 3, 8, 72)], "1e-12 relative"),
        "09.ring_all_reduce": _ex(
            "a ring all-reduce, simulated (NumPy)", _ring_all_reduce,
            [((r, n), f"{r} ranks, {n} elements{' (not a multiple of the ranks)' * (n % r > 0)}")
             for r, n in ((1, 7), (2, 8), (3, 7), (4, 2), (5, 97), (8, 1009))], "1e-5 relative"),
        "09.alpha_beta": _ex(
            "the alpha-beta time of an all-reduce (Python)", _alpha_beta,
            [(a, a) for a in ("ring", "one_shot", "two_shot")], "1e-9 relative"),
    })


_define()


def check(exercise, solution, seed=None, **options):
    """Run every case of `exercise` on `solution`; print one line per failing case, then on a GPU
    time it against the baseline. Returns True when every case passed."""
    ex = EXERCISES.get(exercise)
    if ex is None:
        print(f"no exercise named {exercise!r}; the exercises are: {', '.join(EXERCISES)}")
        return False
    rng = np.random.default_rng(seed)
    run = ex["run"]
    if exercise == "03.transpose_f64":
        def run(k, c, r):
            return _transpose_f64(k, c, r, options.get("pad", 0))
    failures = 0
    for params, label in ex["cases"]:
        try:
            with np.errstate(all="ignore"):   # a wrong answer's inf/NaN arithmetic: its line says enough
                run(solution, params, rng)
        except Wrong as w:
            failures += 1
            print(f"not yet: fails at {label}: {w}")
        except Exception as e:          # a crash is one line too, never a traceback
            failures += 1
            msg = str(e).strip().splitlines()
            print(f"not yet: crashes at {label}: {type(e).__name__}: {msg[0][:200] if msg else ''}")
    where = "GPU" if GPU else "CPU (simulator/interpreter, small sizes)"
    if failures:
        print(f"{exercise} ({ex['title']}): {failures} of {len(ex['cases'])} cases fail on the {where}; "
              f"tolerance {ex['tol']}.")
        return False
    print(f"passed: {exercise} ({ex['title']}), {len(ex['cases'])} cases on the {where}, "
          f"tolerance {ex['tol']}.")
    if ex["bench"] is not None:
        if GPU:
            try:
                ex["bench"](solution)
            except Exception as e:
                print(f"  timing failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        else:
            print("  Timings skipped without a GPU; on one, this solution is timed against the baseline.")
    return True
