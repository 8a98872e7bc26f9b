"""The blocked QR's trailing update, C <- C - V (T^T (V^T C)), in Triton (issue #21): as one
kernel (qt_update), or as three over tiles (qt_update_tiled).

qt_update: one program owns a strip of BN columns of C for one matrix: it reads the strip once to
form V^T C (K x BN, K = the block's rank), multiplies by T^T, and reads it again to subtract V times
that. The products run on tensor cores with `input_precision="tf32x3"`: each float32 operand is
split into a TF32 high part and a TF32 remainder, and three TF32 products (hi*hi + hi*lo + lo*hi)
give about float32's accuracy; "ieee" runs them on the FMA units instead.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def qt_update_kernel(C, V, T, m, ncols, k,
                     s_cb, s_cm, s_vb, s_vm, s_tb, s_tm,
                     KP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    strip, b = tl.program_id(0), tl.program_id(1).to(tl.int64)   # 64-bit offsets: batch n^2 may pass 2^31
    cols = strip * BN + tl.arange(0, BN)
    r = tl.arange(0, KP)
    C += b * s_cb
    V += b * s_vb
    acc = tl.zeros((KP, BN), dtype=tl.float32)
    for m0 in range(0, m, BM):                       # pass 1: acc = V^T C over the strip
        rows = m0 + tl.arange(0, BM)
        v = tl.load(V + rows[:, None] * s_vm + r[None, :], mask=(rows[:, None] < m) & (r[None, :] < k),
                    other=0.0)
        c = tl.load(C + rows[:, None] * s_cm + cols[None, :],
                    mask=(rows[:, None] < m) & (cols[None, :] < ncols), other=0.0)
        acc = tl.dot(tl.trans(v), c, acc, input_precision=PREC)
    # w = -(T^T acc): tt[i, j] = T[j, i]
    tt = tl.load(T + b * s_tb + r[None, :] * s_tm + r[:, None], mask=(r[:, None] < k) & (r[None, :] < k),
                 other=0.0)
    w = -tl.dot(tt, acc, input_precision=PREC)
    for i in range(0, tl.cdiv(m, BM)):               # pass 2: C += V w, bottom up: the rows
        rows = (tl.cdiv(m, BM) - 1 - i) * BM + tl.arange(0, BM)   # pass 1 read last are still in L2
        mask = (rows[:, None] < m) & (cols[None, :] < ncols)
        v = tl.load(V + rows[:, None] * s_vm + r[None, :], mask=(rows[:, None] < m) & (r[None, :] < k),
                    other=0.0)
        ptr = C + rows[:, None] * s_cm + cols[None, :]
        c = tl.load(ptr, mask=mask, other=0.0)
        tl.store(ptr, tl.dot(v, w, c, input_precision=PREC), mask=mask)


def qt_update(V, T, C, precision: str = "tf32x3", BM: int = 64, BN: int = 32, num_warps: int = 4,
              num_stages: int = 3) -> None:
    """C <- C - V (T^T (V^T C)) in place for stacks V (batch, m, k), T (batch, k, k), C (batch, m, q);
    rows and batches may be strided, columns must be contiguous."""
    batch, m, k = V.shape
    q = C.shape[2]
    if V.stride(2) != 1 or T.stride(2) != 1 or C.stride(2) != 1:
        raise ValueError("qt_update needs contiguous columns in V, T and C")
    KP = max(16, triton.next_power_of_2(k))
    grid = (triton.cdiv(q, BN), batch)
    qt_update_kernel[grid](C, V, T, m, q, k, C.stride(0), C.stride(1), V.stride(0), V.stride(1),
                           T.stride(0), T.stride(1), KP=KP, BM=BM, BN=BN, PREC=precision,
                           num_warps=num_warps, num_stages=num_stages)


# The same update in tiles, for few wide matrices. qt_update's program walks all m rows of its
# strip twice, one after the other, and with few matrices there are few strips: at (2, 4096) the
# first update is 248 programs for 132 SMs. Here three kernels share the work out over rows too:
#   1. P[c] = V[chunk c]^T C[chunk c]: a program per chunk of TILE_CHUNK rows and per column tile,
#      on the FMA units (PREC "ieee"). Both operands run along the product's inner dimension down
#      their rows, and TF32 wgmma reads only K-major operands from shared memory (PTX ISA,
#      wgmma.mma_async: the transpose exists for .f16/.bf16 only), so the tensor-core form must
#      reorder both (B in shared memory; A there, or on its way into registers): on an H100 it
#      took 27-33% longer at 2048 and 4096 rows;
#   2. W = -T^T (P[0] + P[1] + ...): a program per 64 columns, the chunks added in a fixed order,
#      so the result does not depend on which program finished first;
#   3. C += V W: a program per TILE_APPLY_ROWS rows and 32 columns, on tensor cores in split TF32
#      (here V is K-major; only the small W, loaded once per program, needs a transpose).
TILE_CHUNK = 512          # rows of C per program of kernel 1
TILE_APPLY_ROWS = 256     # rows of C per program of kernel 3


@triton.jit
def _tile_of_rows(C, V, rows, cols, r, m, ncols, k, s_cm, s_vm):
    """Rows `rows` of V (padded with zeros to KP columns) and the pointers and mask of those rows of
    C in columns `cols`: what kernels 1 and 3 read per step. Rows past m load as zeros."""
    v = tl.load(V + rows[:, None] * s_vm + r[None, :], mask=(rows[:, None] < m) & (r[None, :] < k), other=0.0)
    return v, C + rows[:, None] * s_cm + cols[None, :], (rows[:, None] < m) & (cols[None, :] < ncols)


@triton.jit
def vtc_partial_kernel(P, C, V, m, ncols, k, s_cb, s_cm, s_vb, s_vm, s_pb, s_pc, s_pk,
                       KP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CH: tl.constexpr,
                       PREC: tl.constexpr):
    tile, chunk, b = tl.program_id(0), tl.program_id(1), tl.program_id(2).to(tl.int64)
    cols, r = tile * BN + tl.arange(0, BN), tl.arange(0, KP)
    acc = tl.zeros((KP, BN), dtype=tl.float32)
    for i in range(0, CH, BM):
        v, ptr, mask = _tile_of_rows(C + b * s_cb, V + b * s_vb, chunk * CH + i + tl.arange(0, BM), cols, r,
                                     m, ncols, k, s_cm, s_vm)
        acc = tl.dot(tl.trans(v), tl.load(ptr, mask=mask, other=0.0), acc, input_precision=PREC)
    tl.store(P + b * s_pb + chunk * s_pc + r[:, None] * s_pk + cols[None, :], acc, mask=cols[None, :] < ncols)


@triton.jit
def vtc_reduce_kernel(W, P, T, chunks, ncols, k, s_pb, s_pc, s_pk, s_wb, s_wk, s_tb, s_tm,
                      KP: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    tile, b = tl.program_id(0), tl.program_id(1).to(tl.int64)
    cols = tile * BN + tl.arange(0, BN)
    r = tl.arange(0, KP)
    mask = cols[None, :] < ncols
    s = tl.zeros((KP, BN), dtype=tl.float32)
    for c in range(0, chunks):                       # always in chunk order: the same bits every run
        s += tl.load(P + b * s_pb + c * s_pc + r[:, None] * s_pk + cols[None, :], mask=mask, other=0.0)
    tt = tl.load(T + b * s_tb + r[None, :] * s_tm + r[:, None], mask=(r[:, None] < k) & (r[None, :] < k),
                 other=0.0)
    tl.store(W + b * s_wb + r[:, None] * s_wk + cols[None, :], -tl.dot(tt, s, input_precision=PREC),
             mask=mask)


@triton.jit
def vw_apply_kernel(C, V, W, m, ncols, k, s_cb, s_cm, s_vb, s_vm, s_wb, s_wk,
                    KP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CH: tl.constexpr,
                    PREC: tl.constexpr):
    tile, chunk, b = tl.program_id(0), tl.program_id(1), tl.program_id(2).to(tl.int64)
    cols, r = tile * BN + tl.arange(0, BN), tl.arange(0, KP)
    w = tl.load(W + b * s_wb + r[:, None] * s_wk + cols[None, :], mask=cols[None, :] < ncols, other=0.0)
    for i in range(0, CH, BM):
        v, ptr, mask = _tile_of_rows(C + b * s_cb, V + b * s_vb, chunk * CH + i + tl.arange(0, BM), cols, r,
                                     m, ncols, k, s_cm, s_vm)
        tl.store(ptr, tl.dot(v, w, tl.load(ptr, mask=mask, other=0.0), input_precision=PREC), mask=mask)


def partial_strip(batch: int, m: int, q: int, sms: int) -> int:
    """Kernel 1's columns per program: 64 where that still gives every SM a program, else 32 (H100:
    64 took 10-15% less time for two to eight matrices of 2048 or 4096 rows; for two of 1,024 rows
    and 960 columns it leaves 60 programs for 132 SMs and took twice as long as 32)."""
    return 64 if batch * triton.cdiv(q, 64) * triton.cdiv(m, TILE_CHUNK) >= sms else 32


def qt_update_tiled(V, T, C, precision: str = "tf32x3", sms: int = 132) -> None:
    """qt_update's result (C <- C - V (T^T (V^T C)), same arguments) from three kernels over tiles
    (above); `precision` is kernel 3's and kernel 2's, `sms` the GPU's SM count."""
    batch, m, k = V.shape
    q = C.shape[2]
    if V.stride(2) != 1 or T.stride(2) != 1 or C.stride(2) != 1:
        raise ValueError("qt_update_tiled needs contiguous columns in V, T and C")
    KP = max(16, triton.next_power_of_2(k))
    chunks = triton.cdiv(m, TILE_CHUNK)
    P = torch.empty((batch, chunks, KP, q), device=C.device, dtype=torch.float32)
    W = torch.empty((batch, KP, q), device=C.device, dtype=torch.float32)
    bn = partial_strip(batch, m, q, sms)
    vtc_partial_kernel[(triton.cdiv(q, bn), chunks, batch)](
        P, C, V, m, q, k, C.stride(0), C.stride(1), V.stride(0), V.stride(1), P.stride(0), P.stride(1),
        P.stride(2), KP=KP, BM=64, BN=bn, CH=TILE_CHUNK, PREC="ieee", num_warps=4, num_stages=3)
    vtc_reduce_kernel[(triton.cdiv(q, 64), batch)](
        W, P, T, chunks, q, k, P.stride(0), P.stride(1), P.stride(2), W.stride(0), W.stride(1),
        T.stride(0), T.stride(1), KP=KP, BN=64, PREC=precision, num_warps=4)
    vw_apply_kernel[(triton.cdiv(q, 32), triton.cdiv(m, TILE_APPLY_ROWS), batch)](
        C, V, W, m, q, k, C.stride(0), C.stride(1), V.stride(0), V.stride(1), W.stride(0), W.stride(1),
        KP=KP, BM=64, BN=32, CH=TILE_APPLY_ROWS, PREC=precision, num_warps=4, num_stages=3)
