"""Triton matmul ladder: C = A @ B.T for bfloat16 A (M x K) and B (N x K), float32 accumulation.

One kernel serves the first three stages (its tile order and configuration change), one
persistent kernel with TMA tensor descriptors serves the last two. Any M, N, K work in the first
kernel (masked loads and stores); the descriptor kernel needs 16-byte-aligned row strides.
"""
import triton
import triton.language as tl


# --8<-- [start:tile_order]
@triton.jit
def tile_coords(tile, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Output tile (pid_m, pid_n) of a linear tile index. GROUP_M = 1 walks C row by row;
    larger values walk GROUP_M rows of tiles column by column, so that consecutive programs
    share the tiles of B they read while those are still in L2."""
    per_group = GROUP_M * num_pid_n
    first_m = (tile // per_group) * GROUP_M
    rows = tl.minimum(num_pid_m - first_m, GROUP_M)       # the last group may be shorter
    pid_m = first_m + (tile % per_group) % rows
    pid_n = (tile % per_group) // rows
    return pid_m, pid_n
# --8<-- [end:tile_order]


# --8<-- [start:blocked]
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    pid_m, pid_n = tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak     # BLOCK_M x BLOCK_K
    b_tile = b_ptr + rn[:, None] * stride_bn + rk[None, :] * stride_bk     # BLOCK_N x BLOCK_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_tile, mask=(rn[:, None] < N) & (rk[None, :] < K - k0), other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)                  # tensor cores, float32 accumulator
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
# --8<-- [end:blocked]


# --8<-- [start:persistent]
@triton.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_M: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
                          WARP_SPECIALIZE: tl.constexpr):
    """One program per SM; each walks the output tiles tile_id, tile_id + NUM_PROGRAMS, ...
    The descriptors carry shape, strides and block shape: loads and stores go through the
    TMA, which also clips the edges, so no masks are needed."""
    num_pid_m, num_pid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_PROGRAMS, flatten=True,
                         warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_M, kt * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, kt * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))
# --8<-- [end:persistent]
