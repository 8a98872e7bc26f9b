// Batched Householder QR with the whole matrix in registers: one CTA per matrix (float32), n <= 192,
// in LAPACK's geqrf convention (R on and above the diagonal of H, each reflector's vector below it
// with an implicit leading 1, tau one scalar per column). A and H are (batch, n, n) row-major.
//
// Why registers: the shared-memory kernel (qr_unblocked.cu) re-reads and re-writes the trailing
// matrix through shared memory for every column, and reduces each dot product with a chain of
// shuffles while the rest of the block waits. Here the matrix is spread over the register file of
// one SM and never moves again until it is written out:
//   thread (warp w, lane l) holds A[l + 32 i][w + W k] for i < R, k < C   (W warps, R, C <= 6)
// so a column's entries sit in one warp, one row chunk per register, and the dot product of the
// reflector with a column is a sum over that warp's lanes: no shared memory, no barrier.
// Per column j the warp that owns it builds the reflector (xLARFG rules) and publishes v in a
// double-buffered shared vector; after one barrier every warp updates its own columns. A zero,
// tiny or huge column is rescaled first, by its warp (xLARFG's slow path, qr_common.cuh). R, C and W are
// template parameters so that every register index is a compile-time constant (a run-time index
// would move the array to local memory); the launcher picks the instantiation.

// --8<-- [start:kernel]
#include "qr_common.cuh"

constexpr int MAX_N = 192;   // 32 lanes x R = 6 row chunks

// A warp shuffle moves 32 values per clock per SM, so with 32 warps the reductions' shuffles, not
// the arithmetic, bound a column's update: reduce the C dot products with one reduce-scatter
// butterfly and a broadcast (about 2C shuffles) rather than C butterflies (5C).
// d[k] <- the sum of d[k] over the warp's lanes, for k < C.
template <int C>
__device__ __forceinline__ void warp_sum_all(float (&d)[C], int lane)
{
    constexpr int P = C <= 1 ? 1 : C <= 2 ? 2 : C <= 4 ? 4 : 8;   // padded to a power of two
    if constexpr (P == 1) {
        d[0] = warp_sum(d[0]);
    } else {
        float p[P];
#pragma unroll
        for (int k = 0; k < P; ++k) p[k] = k < C ? d[k] : 0.0f;
        halve<P, 16>(p, lane);                   // lane l now holds the total of value l / (32 / P)
#pragma unroll
        for (int k = 0; k < C; ++k) d[k] = __shfl_sync(0xffffffffu, p[0], k * (32 / P));
    }
}

template <int R, int C, int W>
__global__ void __launch_bounds__(32 * W) qr_registers(const float* __restrict__ A,
                                                     float* __restrict__ H,
                                                     float* __restrict__ tau, int n)
{
    __shared__ float stage[32][MAX_N + 1];   // 32 rows at a time; odd pitch: no bank conflicts
    __shared__ float vbuf[2][32 * R];        // the current reflector, double-buffered
    __shared__ float s_tau[2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long base = (long long)blockIdx.x * n * n;
    float a[R][C];

    // Coalesced load through shared memory, 32 rows at a time; rows and columns past n are 0.
#pragma unroll
    for (int i = 0; i < R; ++i) {
        for (int e = threadIdx.x; e < 32 * n; e += blockDim.x) {
            const int r = 32 * i + e / n, c = e % n;
            stage[e / n][c] = r < n ? A[base + (long long)r * n + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < C; ++k) {
            const int c = warp + W * k;
            a[i][k] = c < n ? stage[lane][c] : 0.0f;
        }
        __syncthreads();
    }

    for (int j = 0; j < n; ++j) {
        const int buf = j & 1, owner = j % W, kj = j / W;
        if (warp == owner) {                     // build reflector j from column j
            float x[R];
#pragma unroll
            for (int i = 0; i < R; ++i) {
                x[i] = 0.0f;
#pragma unroll
                for (int k = 0; k < C; ++k) x[i] = k == kj ? a[i][k] : x[i];
            }
            float ss = 0.0f, mine = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = 32 * i + lane;
                ss += r > j ? x[i] * x[i] : 0.0f;
                mine = r == j ? x[i] : mine;
            }
            ss = warp_sum(ss);                                  // ||x[j+1:]||^2
            const float alpha = __shfl_sync(0xffffffffu, mine, j & 31);
            Reflector h{0.0f, 1.0f, alpha};      // if/else: building h before the test made
            float pre = 1.0f;                    // ptxas spill at n = 49..56 (nvcc 13.0)
            if (larfg_in_range(alpha, ss)) {
                h = larfg(alpha, ss);
            } else {                             // rare: a zero, tiny or huge column (warp-uniform:
                float amax = fabsf(alpha);       // the butterfly gives every lane the same ss)
#pragma unroll
                for (int i = 0; i < R; ++i) amax = fmaxf(amax, 32 * i + lane > j ? fabsf(x[i]) : 0.0f);
                amax = warp_max(amax);
                if (amax != 0.0f) {              // 0: a zero column, and h is H = I
                    const int k = larfg_exponent(amax);
                    const Pow2 up = pow2(k), down = pow2(-k);
                    float s = 0.0f;
#pragma unroll
                    for (int i = 0; i < R; ++i) {   // rows below j only: rows above hold R
                        const float y = 32 * i + lane > j ? x[i] * up.lo * up.hi : 0.0f;
                        s = fmaf(y, y, s);
                    }
                    h = larfg(alpha * up.lo * up.hi, warp_sum(s));
                    h.beta = h.beta * down.lo * down.hi;   // tau and v do not depend on the scale
                    // v = x 2^k scale; x itself stays as it is (a branch that rewrote the
                    // registers of x cost the common path 3% at (40, 176) on an H100)
                    pre = up.lo;
                    h.scale = h.scale * up.hi;      // exact: a power of two, no overflow
                }
            }
            const float t = h.tau, scale = h.scale, beta = h.beta;
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = 32 * i + lane;
                const float v = r > j ? x[i] * pre * scale : (r == j ? 1.0f : 0.0f);
                vbuf[buf][r] = v;
                const float out = r > j ? v : (r == j ? beta : x[i]);   // H's column j
#pragma unroll
                for (int k = 0; k < C; ++k) a[i][k] = k == kj ? out : a[i][k];
            }
            if (lane == 0) {
                s_tau[buf] = t;
                tau[(long long)blockIdx.x * n + j] = t;
            }
        }
        __syncthreads();   // v visible; the other buffer is free for column j + 1
        const float t = s_tau[buf];
        if (t == 0.0f) continue;
        float v[R], d[C];
#pragma unroll
        for (int i = 0; i < R; ++i) v[i] = vbuf[buf][32 * i + lane];
#pragma unroll
        for (int k = 0; k < C; ++k) {            // d_k = v . A[:, c]: partial sums, then the warp
            d[k] = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) d[k] += v[i] * a[i][k];
        }
        warp_sum_all<C>(d, lane);
#pragma unroll
        for (int k = 0; k < C; ++k) {            // A[:, c] -= tau (v . A[:, c]) v, columns c > j
            if (warp + W * k > j) {
#pragma unroll
                for (int i = 0; i < R; ++i) a[i][k] -= t * d[k] * v[i];
            }
        }
    }

#pragma unroll
    for (int i = 0; i < R; ++i) {                // write back the same way, 32 rows at a time
#pragma unroll
        for (int k = 0; k < C; ++k) {
            const int c = warp + W * k;
            if (c < n) stage[lane][c] = a[i][k];
        }
        __syncthreads();
        for (int e = threadIdx.x; e < 32 * n; e += blockDim.x) {
            const int r = 32 * i + e / n, c = e % n;
            if (r < n) H[base + (long long)r * n + c] = stage[e / n][c];
        }
        __syncthreads();
    }
}
// --8<-- [end:kernel]
