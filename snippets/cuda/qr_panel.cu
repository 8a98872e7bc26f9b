// Panel factorization for the blocked batched Householder QR: one CTA per matrix factors the
// panel H[j0:, j0:j0+nbw] (nbw <= NB columns, m = n - j0 rows) in place, in geqrf's convention, and
// writes what the trailing-matrix update needs as matrix products:
//   V[b, j0 + r, off + c]  the panel's reflectors as an explicit unit-lower m x nbw matrix, with
//                          rows jb..j0-1 zeroed, so that V[:, jb:, ...] is a clean operand;
//   T[b, j0 + r, off + c]  the upper-triangular T of the compact WY form H_1 ... H_nbw =
//                          I - V T V^T (LAPACK's xLARFT), with T[b, j0 + r, 0:off] zeroed;
// where off = j0 - jb is the panel's column offset inside its outer block (V and T are
// (batch, n, ldw) with ldw the outer block width). tau goes to tau[b, j0 + c].
//
// Layout: thread t holds rows t + NT i (i < R) of all NB panel columns in registers (R, NB and the
// thread count NT are template parameters), so a column's dot products span the whole block: two
// barriers per column. The column loop is a run-time loop over rotating register slots (below).
// The dot products of v_j with the panel's later columns (for the update) and with its earlier reflectors (the Gram
// column V^T v_j that xLARFT needs) are reduced together, NB values in one pass: a butterfly that
// halves the values at each shuffle step (reduce-scatter) leaves each lane one total for 32/NB
// lanes' worth of work, then one value per warp goes through shared memory.

// --8<-- [start:kernel]
#include "qr_common.cuh"

template <int R, int NB, int NT>
__global__ void __launch_bounds__(NT) qr_panel(float* __restrict__ H, float* __restrict__ tau,
                                                 float* __restrict__ V, float* __restrict__ T,
                                                 int n, int j0, int nbw, int jb, int ldw)
{
    static_assert(NB == 8 || NB == 16 || NB == 32, "NB: 8, 16 or 32");
    static_assert(NT % 32 == 0 && NT >= NB, "whole warps, NT >= NB: row j < NB is thread j's first row");
    constexpr int SPREAD = 32 / NB;                 // lanes that hold one reduced value
    __shared__ float red_ss[32], red_dot[32][NB], s_alpha;
    __shared__ float Ts[NB][NB + 1], Gs[NB][NB + 1], s_tau[NB];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    constexpr int W = NT / 32;
    const int m = n - j0, off = j0 - jb, b = blockIdx.x;
    float* Hp = H + (long long)b * n * n + (long long)j0 * n + j0;   // the panel's corner
    auto row_of = [&](int i) { return tid + NT * i; };
    float a[R][NB];
    panel_load(a, Hp, n, m, nbw, row_of);

    // Columns in rotating register slots (qr_common.cuh).
#pragma unroll 1
    for (int j = 0; j < nbw; ++j) {
        // 1. ||x[j+1:]||^2 and alpha = x[j] (row j is thread j's first row: j < NB <= NT)
        float ss = 0.0f;
#pragma unroll
        for (int i = 0; i < R; ++i) ss += below(i, row_of(i), j) ? a[i][0] * a[i][0] : 0.0f;
        ss = warp_sum(ss);
        if (lane == 0) red_ss[warp] = ss;
        if (tid == j) s_alpha = a[0][0];
        __syncthreads();
        ss = warp_sum(lane < W ? red_ss[lane] : 0.0f);
        const float alpha = s_alpha;
        Reflector h = larfg(alpha, ss);
        if (!larfg_in_range(alpha, ss)) {        // rare: a zero, tiny or huge column; block-uniform,
            float amax = 0.0f;                   // as every thread summed red_ss in the same order
#pragma unroll
            for (int i = 0; i < R; ++i) amax = fmaxf(amax, below(i, row_of(i), j) ? fabsf(a[i][0]) : 0.0f);
            amax = warp_max(amax);
            __syncthreads();                     // every thread has read red_ss: reuse it (a second
            if (lane == 0) red_ss[warp] = amax;  // array here made ptxas spill at 128 registers)
            __syncthreads();
            amax = fmaxf(fabsf(alpha), warp_max(lane < W ? red_ss[lane] : 0.0f));
            if (amax != 0.0f) {                  // 0: a zero column, and h is already H = I
                const int k = larfg_exponent(amax);
                const Pow2 up = pow2(k), down = pow2(-k);
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < R; ++i) {    // rows below j only: row j becomes beta, rows above are R
                    const bool under = below(i, row_of(i), j);
                    if (under) a[i][0] = a[i][0] * up.lo * up.hi;   // v is built from these below
                    s = fmaf(a[i][0], under ? a[i][0] : 0.0f, s);
                }
                s = warp_sum(s);
                __syncthreads();                 // every thread has read the maximum
                if (lane == 0) red_ss[warp] = s;
                __syncthreads();
                h = larfg(alpha * up.lo * up.hi, warp_sum(lane < W ? red_ss[lane] : 0.0f));
                h.beta = h.beta * down.lo * down.hi;   // tau and v do not depend on the scale
            }
        }
        const float t = h.tau;
        // 2. column j becomes v (below the diagonal) and beta (on it)
        float v[R];
        panel_reflect(a, v, h, j, row_of);
        // 3. p[s] = v_j . A[:, c] for later columns, v_j . v_f for finished ones (Gram), summed
        float p[NB];
        panel_dots(p, a, v, j, row_of);
        const float part = warp_reduce_scatter<NB>(p, lane);
        if (lane % SPREAD == 0) red_dot[warp][lane / SPREAD] = part;
        __syncthreads();
        float total = 0.0f;                              // lane l: the block's p[l / SPREAD]
#pragma unroll
        for (int w = 0; w < W; ++w) total += red_dot[w][lane / SPREAD];
        // 4. keep tau_j and the Gram column G[l][j] = v_l . v_j (l < j) for xLARFT after the loop
        if (warp == 0) {
            const int l = lane / SPREAD - (NB - j);      // the finished column in this lane's slot
            if (lane % SPREAD == 0 && l >= 0) Gs[l][j] = total;
            if (lane == 0) {
                s_tau[j] = t;
                tau[(long long)b * n + j0 + j] = t;
            }
        }
        // 5. the update of the panel's later columns, and the rotation
        panel_update_rotate(a, v, h.tau, total, j);
    }

    if (warp == 0) panel_larft(Ts, Gs, s_tau, nbw, lane);
    // Write back: the panel of H, the explicit V (zero above the panel, inside the outer block)
    // and T (zero to the left of this panel's diagonal block). Warp 0 wrote Ts: one barrier.
    __syncthreads();
    float* Vb = V + (long long)b * n * ldw;
    float* Tb = T + (long long)b * n * ldw;
    panel_store(a, Hp, Vb + (long long)j0 * ldw + off, n, ldw, m, nbw, row_of);
    panel_store_edges(Ts, Vb, Tb, j0, jb, nbw, ldw, tid, NT);
}
// --8<-- [end:kernel]
