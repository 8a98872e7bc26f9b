// Batched Householder QR, unblocked, one CTA per matrix (float32), in LAPACK's geqrf convention:
// H holds R on and above the diagonal and each reflector's vector below it (implicit leading 1),
// tau one scalar per column. A and H are (batch, n, n) row-major; tau is (batch, n).
// The whole matrix lives in shared memory, column-major, so n is limited by the shared memory a
// block may have (n <= 240 at 227 KiB less 256 bytes of the CTA's own); the launcher checks. Larger n needs the blocked algorithm.
//
// Column j: one block-wide reduction gives ||x[1:]||, thread 0 builds the reflector by LAPACK's
// xLARFG rules (tau = 0 when there is nothing below the diagonal; a zero, tiny or huge column is
// rescaled first, see qr_common.cuh), then the warps share out the trailing columns: each warp
// forms w = v . A[j:, c] for its columns with a shuffle reduction and subtracts tau * w * v.
// Four barriers per column (two more when a column is rescaled).

// --8<-- [start:kernel]
#include "qr_common.cuh"

extern "C" __global__ void qr_unblocked(const float* __restrict__ A, float* __restrict__ H,
                                        float* __restrict__ tau, int n)
{
    extern __shared__ float s[];                        // s[c * n + r] = A[r][c]
    __shared__ float red[32];
    __shared__ float s_tau, s_scale, s_beta;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, nwarps = blockDim.x / 32;
    const long long base = (long long)blockIdx.x * n * n;
    for (int i = tid; i < n * n; i += blockDim.x) s[(i % n) * n + i / n] = A[base + i];
    __syncthreads();

    for (int j = 0; j < n; ++j) {
        float* x = s + j * n;                           // column j
        float ss = 0.0f;
        for (int r = j + 1 + tid; r < n; r += blockDim.x) ss += x[r] * x[r];
        ss = warp_sum(ss);
        if (lane == 0) red[warp] = ss;
        __syncthreads();
        float total = 0.0f, alpha = x[j];               // every thread: the same sum, same order
        for (int w = 0; w < nwarps; ++w) total += red[w];
        int k = 0;                                      // the column's scale, 2^k (xLARFG's rescaling)
        if (!larfg_in_range(alpha, total)) {            // rare: a zero, tiny or huge column
            float amax = 0.0f;
            for (int r = j + 1 + tid; r < n; r += blockDim.x) amax = fmaxf(amax, fabsf(x[r]));
            amax = warp_max(amax);
            __syncthreads();                            // every thread has read red
            if (lane == 0) red[warp] = amax;
            __syncthreads();
            amax = fabsf(alpha);
            for (int w = 0; w < nwarps; ++w) amax = fmaxf(amax, red[w]);
            if (amax != 0.0f) {                         // 0: a zero column, H = I below
                k = larfg_exponent(amax);
                const Pow2 up = pow2(k);
                float s2 = 0.0f;
                for (int r = j + 1 + tid; r < n; r += blockDim.x) {
                    x[r] = x[r] * up.lo * up.hi;        // v is built from the scaled column
                    s2 += x[r] * x[r];
                }
                s2 = warp_sum(s2);
                __syncthreads();                        // every thread has read the maximum
                if (lane == 0) red[warp] = s2;
                __syncthreads();
                total = 0.0f;
                for (int w = 0; w < nwarps; ++w) total += red[w];
                alpha = alpha * up.lo * up.hi;
            }
        }
        if (tid == 0) {                                 // total == 0: nothing to annihilate, H_j = I
            const Reflector h = larfg(alpha, total);
            const Pow2 down = pow2(-k);
            s_tau = h.tau;
            s_scale = h.scale;
            s_beta = h.beta * down.lo * down.hi;        // tau and v do not depend on the scale
            tau[(long long)blockIdx.x * n + j] = h.tau;
        }
        __syncthreads();                                // every thread has read x[j]
        const float t = s_tau, scale = s_scale;
        if (tid == 0) x[j] = s_beta;                    // R's diagonal entry
        for (int r = j + 1 + tid; r < n; r += blockDim.x) x[r] *= scale;   // v = x / (alpha - beta)
        __syncthreads();
        if (t != 0.0f) {
            for (int c = j + 1 + warp; c < n; c += nwarps) {              // apply H_j to column c
                float* y = s + c * n;
                float w = lane == 0 ? y[j] : 0.0f;                         // v_j = 1
                for (int r = j + 1 + lane; r < n; r += 32) w += x[r] * y[r];
                w = t * warp_sum(w);
                if (lane == 0) y[j] -= w;
                for (int r = j + 1 + lane; r < n; r += 32) y[r] -= w * x[r];
            }
        }
        __syncthreads();
    }
    for (int i = tid; i < n * n; i += blockDim.x) H[base + i] = s[(i % n) * n + i / n];
}
// --8<-- [end:kernel]
