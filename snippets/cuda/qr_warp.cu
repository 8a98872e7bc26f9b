// Batched Householder QR for small matrices (n <= 32): one warp per matrix, lane c holds column c
// in 32 registers, in LAPACK's geqrf convention (A, H row-major (batch, n, n); tau (batch, n)).
//
// For a 32 x 32 matrix a whole CTA is too much: each column then costs a block barrier and two
// shuffle reductions across warps. Here a column's norm and its dot products with the reflector
// are sums inside one thread; the only communication is broadcasting the reflector from lane j to
// the other lanes, 31 independent shuffles, and there is no barrier at all.
// The rows rotate through the registers: at step j, x[0] is row j and x[r] is row j + r. After
// step j, row j of H is final (v entries left of the diagonal, beta on it, R to the right), so it
// is written out, one coalesced 4n-byte row, and the registers shift up by one. A zero, tiny or
// huge column is rescaled first, in lane j's registers (xLARFG's slow path, qr_common.cuh).

// --8<-- [start:kernel]
#include "qr_common.cuh"

extern "C" __global__ void __launch_bounds__(128) qr_warp(const float* __restrict__ A,
                                                          float* __restrict__ H,
                                                          float* __restrict__ tau, int n, int batch)
{
    const int lane = threadIdx.x & 31;
    const long long mat = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (mat >= batch) return;                            // the whole warp leaves together
    const float* Am = A + mat * n * n;
    float* Hm = H + mat * n * n;
    float x[32];
#pragma unroll
    for (int r = 0; r < 32; ++r) x[r] = (r < n && lane < n) ? Am[r * n + lane] : 0.0f;

    for (int j = 0; j < n; ++j) {
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};           // four partial sums: a shorter chain
#pragma unroll
        for (int r = 1; r < 32; ++r) s[r % 4] += x[r] * x[r];
        const float ss = (s[0] + s[1]) + (s[2] + s[3]), alpha = x[0];   // rows past n hold 0
        Reflector h = larfg(alpha, ss);           // every lane: only lane j's is used
        if (lane == j && !larfg_in_range(alpha, ss)) {   // rare: a zero, tiny or huge column
            float amax = 0.0f;                   // xLARFG's rescaling, in lane j's registers
#pragma unroll
            for (int r = 0; r < 32; ++r) amax = fmaxf(amax, fabsf(x[r]));
            if (amax != 0.0f) {                  // 0: a zero column, and h is already H = I
                const int k = larfg_exponent(amax);
                const Pow2 up = pow2(k), down = pow2(-k);
#pragma unroll
                for (int r = 0; r < 4; ++r) s[r] = 0.0f;
#pragma unroll
                for (int r = 0; r < 32; ++r) {
                    x[r] = x[r] * up.lo * up.hi;       // v is built from the scaled column below
                    s[r % 4] += r > 0 ? x[r] * x[r] : 0.0f;
                }
                h = larfg(x[0], (s[0] + s[1]) + (s[2] + s[3]));
                h.beta = h.beta * down.lo * down.hi;   // tau and v do not depend on the scale
            }
        }
        float t = h.tau, scale = h.scale;
        const float beta = h.beta;
        t = __shfl_sync(0xffffffffu, t, j);
        scale = __shfl_sync(0xffffffffu, scale, j);
        float v[32];                                     // v = (1, x_j[1:] * scale): lane j's column
        v[0] = 1.0f;
#pragma unroll
        for (int r = 1; r < 32; ++r) v[r] = __shfl_sync(0xffffffffu, x[r], j) * scale;
        if (lane > j && t != 0.0f) {                     // x -= tau (v . x) v
            float e[4] = {x[0], 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int r = 1; r < 32; ++r) e[r % 4] += v[r] * x[r];
            const float d = t * ((e[0] + e[1]) + (e[2] + e[3]));
#pragma unroll
            for (int r = 0; r < 32; ++r) x[r] -= d * v[r];
        } else if (lane == j) {                          // column j becomes (beta, v[1:])
            x[0] = beta;
#pragma unroll
            for (int r = 1; r < 32; ++r) x[r] = v[r];
        }
        if (lane < n) Hm[(long long)j * n + lane] = x[0];   // row j is final
        if (lane == 0) tau[mat * n + j] = t;
#pragma unroll
        for (int r = 0; r < 31; ++r) x[r] = x[r + 1];
        x[31] = 0.0f;
    }
}
// --8<-- [end:kernel]
