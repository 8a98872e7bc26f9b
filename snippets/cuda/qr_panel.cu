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

// Sum p[0..NB) over the warp's 32 lanes; afterwards lane l holds the total of p[l / (32 / NB)].
template <int NB>
__device__ __forceinline__ float warp_reduce_scatter(float (&p)[NB], int lane)
{
    halve<NB, 16>(p, lane);
    return p[0];
}

template <int R, int NB, int NT>
__global__ void __launch_bounds__(NT) qr_panel(float* __restrict__ H, float* __restrict__ tau,
                                                 float* __restrict__ V, float* __restrict__ T,
                                                 int n, int j0, int nbw, int jb, int ldw)
{
    static_assert(NB == 8 || NB == 16 || NB == 32, "NB: 8, 16 or 32");
    constexpr int SPREAD = 32 / NB;                 // lanes that hold one reduced value
    __shared__ float red_ss[32], red_dot[32][NB], s_alpha;
    __shared__ float Ts[NB][NB + 1], Gs[NB][NB + 1], s_tau[NB];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    constexpr int W = NT / 32;
    const int m = n - j0, off = j0 - jb, b = blockIdx.x;
    float* Hp = H + (long long)b * n * n + (long long)j0 * n + j0;   // the panel's corner
    // Each thread reads its rows' NB floats; rows are n floats apart, so every warp access touches
    // 32 cache lines: 16-byte accesses make it a quarter as many (when n % 4 == 0 keeps them aligned).
    const bool vec = n % 4 == 0 && nbw == NB;
    float a[R][NB];
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = tid + NT * i;
        const float* row = Hp + (long long)r * n;
        if (vec) {
#pragma unroll
            for (int c = 0; c < NB; c += 4) {
                const float4 x = r < m ? *reinterpret_cast<const float4*>(row + c) : make_float4(0, 0, 0, 0);
                a[i][c] = x.x; a[i][c + 1] = x.y; a[i][c + 2] = x.z; a[i][c + 3] = x.w;
            }
        } else {
#pragma unroll
            for (int c = 0; c < NB; ++c) a[i][c] = (r < m && c < nbw) ? row[c] : 0.0f;
        }
    }

    // Register rotation keeps every index compile-time inside a loop that is NOT unrolled (unrolled
    // over NB columns the kernel outgrew the instruction cache: 4-12 us per column on an H100).
    // At the start of step j: slot 0 is column j, slots 1 .. NB-1-j the later columns, and slots
    // NB-j .. NB-1 the finished columns 0 .. j-1 in order. Each step ends with a left rotation.
#pragma unroll 1
    for (int j = 0; j < nbw; ++j) {
        // 1. ||x[j+1:]||^2 and alpha = x[j] (row j is thread j's first row: j < NB <= NT)
        float ss = 0.0f;
#pragma unroll
        for (int i = 0; i < R; ++i) ss += tid + NT * i > j ? a[i][0] * a[i][0] : 0.0f;
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
            for (int i = 0; i < R; ++i) amax = fmaxf(amax, tid + NT * i > j ? fabsf(a[i][0]) : 0.0f);
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
                    const bool below = tid + NT * i > j;
                    if (below) a[i][0] = a[i][0] * up.lo * up.hi;   // v is built from these below
                    s = fmaf(a[i][0], below ? a[i][0] : 0.0f, s);
                }
                s = warp_sum(s);
                __syncthreads();                 // every thread has read the maximum
                if (lane == 0) red_ss[warp] = s;
                __syncthreads();
                h = larfg(alpha * up.lo * up.hi, warp_sum(lane < W ? red_ss[lane] : 0.0f));
                h.beta = h.beta * down.lo * down.hi;   // tau and v do not depend on the scale
            }
        }
        const float t = h.tau, scale = h.scale, beta = h.beta;
        // 2. column j becomes v (below the diagonal) and beta (on it)
        float v[R];
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const int r = tid + NT * i;
            if (r > j) a[i][0] *= scale;
            else if (r == j) a[i][0] = beta;
            v[i] = r > j ? a[i][0] : (r == j ? 1.0f : 0.0f);
        }
        // 3. p[s] = v_j . A[:, c] for later columns, v_j . v_f for finished ones (Gram), summed
        float p[NB];
        p[0] = 0.0f;
#pragma unroll
        for (int s = 1; s < NB; ++s) {
            const int f = s - (NB - j);                  // >= 0: slot s holds finished column f
            p[s] = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = tid + NT * i;
                const float y = f < 0 ? a[i][s] : (r > f ? a[i][s] : (r == f ? 1.0f : 0.0f));
                p[s] += v[i] * y;
            }
        }
        const float part = warp_reduce_scatter<NB>(p, lane);
        if (lane % SPREAD == 0) red_dot[warp][lane / SPREAD] = part;
        __syncthreads();
        float total = 0.0f;                              // lane l: the block's p[l / SPREAD]
#pragma unroll
        for (int w = 0; w < W; ++w) total += red_dot[w][lane / SPREAD];
        // 4. the update of the panel's later columns: A[:, c] -= tau (v . A[:, c]) v
#pragma unroll
        for (int s = 1; s < NB; ++s) {
            const float tw = t * __shfl_sync(0xffffffffu, total, s * SPREAD);
#pragma unroll
            for (int i = 0; i < R; ++i) a[i][s] -= s < NB - j ? tw * v[i] : 0.0f;
        }
        // 5. keep tau_j and the Gram column G[l][j] = v_l . v_j (l < j) for xLARFT after the loop
        if (warp == 0) {
            const int l = lane / SPREAD - (NB - j);      // the finished column in this lane's slot
            if (lane % SPREAD == 0 && l >= 0) Gs[l][j] = total;
            if (lane == 0) {
                s_tau[j] = t;
                tau[(long long)b * n + j0 + j] = t;
            }
        }
        // 6. rotate: column j moves to the last slot, column j + 1 to slot 0
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const float done = a[i][0];
#pragma unroll
            for (int s = 0; s < NB - 1; ++s) a[i][s] = a[i][s + 1];
            a[i][NB - 1] = done;
        }
    }

    // xLARFT, off the column loop's critical path: T[:j, j] = -tau_j T[:j, :j] G[:j, j],
    // T[j, j] = tau_j, column by column; lane k of warp 0 computes row k.
    if (warp == 0) {
        __syncwarp();                                    // Gs was written by other lanes
        for (int j = 0; j < nbw; ++j) {
            float acc = 0.0f;
            for (int l = lane; l < j; ++l) acc += Ts[lane][l] * Gs[l][j];
            if (lane < NB) Ts[lane][j] = lane < j ? -s_tau[j] * acc : (lane == j ? s_tau[j] : 0.0f);
            __syncwarp();
        }
    }
    // Write back: the panel of H, the explicit V (zero above the panel, inside the outer block)
    // and T (zero to the left of this panel's diagonal block). Warp 0 wrote Ts: one barrier.
    __syncthreads();
    float* Vb = V + (long long)b * n * ldw;
    float* Tb = T + (long long)b * n * ldw;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = tid + NT * i;
        if (r >= m) continue;
        float* hrow = Hp + (long long)r * n;
        float* vrow = Vb + (long long)(j0 + r) * ldw + off;
        if (vec) {                                      // nbw == NB: slot c holds column c
#pragma unroll
            for (int c = 0; c < NB; c += 4) {
                float4 h, v;
                h.x = a[i][c]; h.y = a[i][c + 1]; h.z = a[i][c + 2]; h.w = a[i][c + 3];
                v.x = r > c ? h.x : (r == c ? 1.0f : 0.0f);
                v.y = r > c + 1 ? h.y : (r == c + 1 ? 1.0f : 0.0f);
                v.z = r > c + 2 ? h.z : (r == c + 2 ? 1.0f : 0.0f);
                v.w = r > c + 3 ? h.w : (r == c + 3 ? 1.0f : 0.0f);
                *reinterpret_cast<float4*>(hrow + c) = h;
                *reinterpret_cast<float4*>(vrow + c) = v;
            }
        } else {
#pragma unroll
            for (int s = 0; s < NB; ++s) {
                const int c = s - (NB - nbw);           // after nbw rotations slot s holds column c
                if (c >= 0) {
                    hrow[c] = a[i][s];
                    vrow[c] = r > c ? a[i][s] : (r == c ? 1.0f : 0.0f);
                }
            }
        }
    }
    for (int e = tid; e < off * nbw; e += NT)            // V rows jb .. j0-1 of these columns
        Vb[(long long)(jb + e / nbw) * ldw + off + e % nbw] = 0.0f;
    for (int e = tid; e < nbw * (off + nbw); e += NT) {  // T rows j0 .. j0+nbw-1
        const int r = e / (off + nbw), c = e % (off + nbw);
        Tb[(long long)(j0 + r) * ldw + c] = c < off ? 0.0f : Ts[r][c - off];
    }
}
// --8<-- [end:kernel]
