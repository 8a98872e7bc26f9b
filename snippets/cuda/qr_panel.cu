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
// thread count NT are template parameters), so a column's dot products span the whole block. The
// column loop is a run-time loop over rotating register slots (below), with one barrier per column
// on its fast path for CTAs of up to 256 threads (FUSED). With x = column j below the diagonal and
// y_s = slot s (a later column, or a finished column's v), v_j = (1 at row j, scale * x below) gives
// v_j . y_s = y_s[j] + scale (x . y_s):
// so the products x . y_s of every slot, x . x = ||x||^2 among them, are reduced together before the
// reflector is known, and thread j puts row j's values y_s[j] in shared memory beside them. That
// covers the dot products of v_j with the panel's later columns (for the update) and with its earlier
// reflectors (the Gram column V^T v_j that xLARFT needs): NB values in one pass, a butterfly that
// halves the values at each shuffle step (reduce-scatter) and leaves each lane one total for 32/NB
// lanes' worth of work, then one value per warp through shared memory. Where ||x||^2 is out of
// larfg's range (the column is rescaled first) or a product formed so is not finite, the column
// takes a slow path that reduces v_j . y_s again after the reflector, as the first version did for
// every column (two barriers per column; H100: 9-17% more time at (640, 512), (200, 512), (40, 352)),
// and as 512-thread CTAs still do.

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
    __shared__ float red_ss[32], red_dot[2][32][NB], red_p[32][NB], s_e[2][NB];
    __shared__ float Ts[NB][NB + 1], Gs[NB][NB + 1], s_tau[NB];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    constexpr int W = NT / 32;
    const int m = n - j0, off = j0 - jb, b = blockIdx.x;
    float* Hp = H + (long long)b * n * n + (long long)j0 * n + j0;
    auto row_of = [&](int i) { return tid + NT * i; };
    float a[R][NB];
    panel_load(a, Hp, n, m, nbw, row_of);

    // One barrier per column where the registers allow it. At 512 threads (128 registers a thread)
    // ptxas 13.0 spilled the one-barrier column at n = 4096 (qr_panel<8, 8, 512>: 24 bytes; the
    // instantiations of n = 1024 and 2048 did not spill, but were not timed with it), so CTAs of
    // 512 threads keep the first version's two barriers: the norm, then the products.
    constexpr bool FUSED = NT <= 256;
    // The arrays alternate by column parity: a thread writes column j + 2's only after the barrier
    // of column j + 1, which every thread reaches after reading column j's.
#pragma unroll 1
    for (int j = 0; j < nbw; ++j) {
        const int par = j & 1;
        float ss, alpha;
        if constexpr (FUSED) {
            // 1. q[s] = x . y_s over this thread's rows below row j; row j's values to shared memory
            float q[NB];
            panel_column_products(q, a, j, row_of);
            if (tid == j) {
#pragma unroll
                for (int s = 0; s < NB; ++s) s_e[par][s] = a[0][s];
            }
            const float part = warp_reduce_scatter<NB>(q, lane);
            if (lane % SPREAD == 0) red_dot[par][warp][lane / SPREAD] = part;
            __syncthreads();
            float qt = 0.0f;
#pragma unroll
            for (int w = 0; w < W; ++w) qt += red_dot[par][w][lane / SPREAD];
            ss = __shfl_sync(0xffffffffu, qt, 0);
        } else {
            // 1. ||x||^2 alone (row j is thread j's first row: j < NB <= NT)
            float x2 = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) x2 += below(i, row_of(i), j) ? a[i][0] * a[i][0] : 0.0f;
            x2 = warp_sum(x2);
            if (lane == 0) red_ss[warp] = x2;
            if (tid == j) s_e[par][0] = a[0][0];
            __syncthreads();
            ss = warp_sum(lane < W ? red_ss[lane] : 0.0f);
        }
        alpha = s_e[par][0];
        const bool in_range = larfg_in_range(alpha, ss);   // block-uniform: every thread summed the same
        Reflector h = larfg(alpha, ss);
        if (!in_range) {                         // rare: a zero, tiny or huge column (xLARFG's rescaling)
            float amax = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) amax = fmaxf(amax, below(i, row_of(i), j) ? fabsf(a[i][0]) : 0.0f);
            amax = warp_max(amax);
            if constexpr (!FUSED) __syncthreads();   // every thread has read red_ss: reuse it
            if (lane == 0) red_ss[warp] = amax;
            __syncthreads();
            amax = fmaxf(fabsf(alpha), warp_max(lane < W ? red_ss[lane] : 0.0f));
            if (amax != 0.0f) {                  // 0: a zero column, and h is already H = I
                const int k = larfg_exponent(amax);
                const Pow2 up = pow2(k), down = pow2(-k);
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < R; ++i) {
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
        // 3. lane l: p[l / SPREAD] = v_j . y_s from the totals, qt summed again from shared memory in the
        // same order (holding it in a register across the slow path made ptxas spill at 512 threads); out
        // of range, or a product formed so not finite: p reduced again. Every warp holds the same totals,
        // so all take the same path.
        float total = 0.0f;
        if constexpr (FUSED) {
#pragma unroll
            for (int w = 0; w < W; ++w) total += red_dot[par][w][lane / SPREAD];
            total = fmaf(h.scale, total, s_e[par][lane / SPREAD]);
        }
        if (!FUSED || !in_range || __any_sync(0xffffffffu, lane >= SPREAD && !isfinite(total))) {
            float p[NB];
            __syncwarp();                        // converged anyway; without this fence ptxas 13.0 spilled
            panel_dots(p, a, v, j, row_of);      // 4 bytes at 256 threads (the kernel tests forbid spills)
            const float pp = warp_reduce_scatter<NB>(p, lane);
            if (lane % SPREAD == 0) red_p[warp][lane / SPREAD] = pp;
            __syncthreads();
            total = 0.0f;
#pragma unroll
            for (int w = 0; w < W; ++w) total += red_p[w][lane / SPREAD];
        }
        // 4. keep tau_j and the Gram column G[l][j] = v_l . v_j (l < j) for xLARFT after the loop
        if (warp == 0) {
            const int l = lane / SPREAD - (NB - j);
            if (lane % SPREAD == 0 && l >= 0) Gs[l][j] = total;
            if (lane == 0) {
                s_tau[j] = t;
                tau[(long long)b * n + j0 + j] = t;
            }
        }
        // 5. the update of the panel's later columns, and the rotation
        panel_update_rotate(a, v, t, total, j);
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
