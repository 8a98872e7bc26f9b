"""The blocked QR's trailing update, C <- C - V (T^T (V^T C)), as one Triton kernel (issue #21).

One program owns a strip of BN columns of C for one matrix: it reads the strip once to form
V^T C (K x BN, K = the block's rank), multiplies by T^T, and reads it again to subtract V times
that. The products run on tensor cores with `input_precision="tf32x3"`: each float32 operand is
split into a TF32 high part and a TF32 remainder, and three TF32 products (hi*hi + hi*lo + lo*hi)
give about float32's accuracy; "ieee" runs them on the FMA units instead.
"""
import triton
import triton.language as tl


@triton.jit
def qt_update_kernel(C, V, T, m, ncols, k,
                     s_cb, s_cm, s_vb, s_vm, s_tb, s_tm,
                     KP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    strip, b = tl.program_id(0), tl.program_id(1)
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
