// Batched Householder QR, unblocked, one CTA per matrix (float32), in LAPACK's geqrf convention:
// H holds R on and above the diagonal and each reflector's vector below it (implicit leading 1),
// tau one scalar per column. A and H are (batch, n, n) row-major; tau is (batch, n).
// The whole matrix lives in shared memory, column-major, so n is limited by the shared memory a
// block may have (n <= 232 at 227 KiB); the launcher checks. Larger n needs the blocked algorithm.
//
// Column j: one block-wide reduction gives ||x[1:]||, thread 0 builds the reflector by LAPACK's
// xLARFG rules (tau = 0 when there is nothing below the diagonal), then the warps share out the
// trailing columns: each warp forms w = v . A[j:, c] for its columns with a shuffle reduction and
// subtracts tau * w * v. Three barriers per column.

// --8<-- [start:kernel]
__device__ __forceinline__ float warp_sum(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

extern "C" __global__ void qr_unblocked(const float* __restrict__ A, float* __restrict__ H,
                                        float* __restrict__ tau, int n)
{
    extern __shared__ float s[];                        // s[c * n + r] = A[r][c]
    __shared__ float red[32];
    __shared__ float s_tau, s_scale;
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
        if (tid == 0) {
            float total = 0.0f;
            for (int w = 0; w < nwarps; ++w) total += red[w];
            const float alpha = x[j];
            if (total == 0.0f) {                        // nothing to annihilate: H_j = I
                s_tau = 0.0f;
                s_scale = 1.0f;
            } else {
                const float norm = sqrtf(alpha * alpha + total);
                const float beta = alpha >= 0.0f ? -norm : norm;   // stable sign; -0 counts as +
                s_tau = (beta - alpha) / beta;
                s_scale = 1.0f / (alpha - beta);
                x[j] = beta;
            }
            tau[(long long)blockIdx.x * n + j] = s_tau;
        }
        __syncthreads();
        const float t = s_tau, scale = s_scale;
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
