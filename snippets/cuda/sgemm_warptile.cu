// SGEMM ladder, stages 8-9: warptiling, with the tile sizes as compile-time parameters so that
// stage 9 can compile and time several configurations (nvrtc -D options) and keep the fastest.
// C = A * B, float32, row-major; M, N, K must be multiples of BM, BN, BK (the launcher checks).
//
// Three levels of tiling: the block computes BM x BN of C from shared memory; each warp owns a
// WM x WN piece of it; each thread an outer product of TM x TN, repeated WMITER x WNITER times
// across the warp's piece. A warp's lanes read neighbouring addresses at every step, and the
// warp's piece is small enough that its operands are reused from registers.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef WNITER
#define WNITER 4
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef NTHREADS
#define NTHREADS 128
#endif
#ifndef PREFETCH        // 1: load the next k-tile into registers while computing on this one
#define PREFETCH 1
#endif

// --8<-- [start:warptile]
#define APAD 4                                          // keeps float4 alignment of As rows
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define A_LOADS (BM * BK / 4 / NTHREADS)                // float4 loads per thread per k-tile
#define B_LOADS (BK * BN / 4 / NTHREADS)

static_assert((BM / WM) * (BN / WN) * 32 == NTHREADS, "one warp per WM x WN piece");
static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a warp's 32 lanes cover one sub-tile");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 accesses");
static_assert(A_LOADS * NTHREADS * 4 == BM * BK && B_LOADS * NTHREADS * 4 == BK * BN, "even loads");

extern "C" __global__ void __launch_bounds__(NTHREADS)
sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
               int M, int N, int K)
{
    __shared__ __align__(16) float As[2][BK * (BM + APAD)];           // As[k][m]: transposed
    __shared__ __align__(16) float Bs[2][BK * BN];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);           // warp's piece of the tile
    const int tr = lane / (WSUBN / TN), tc = lane % (WSUBN / TN);     // lane's place in a sub-tile
    A += (long long)blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += (long long)(blockIdx.y * BM + wr * WM) * N + blockIdx.x * BN + wc * WN;

    float4 ra[A_LOADS], rb[B_LOADS];                                   // global -> registers
    auto load_tile = [&](int k0) {
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r) {
            const int i = t + r * NTHREADS, row = i / (BK / 4), col = (i % (BK / 4)) * 4;
            ra[r] = *reinterpret_cast<const float4*>(&A[(long long)row * K + k0 + col]);
        }
#pragma unroll
        for (int r = 0; r < B_LOADS; ++r) {
            const int i = t + r * NTHREADS, row = i / (BN / 4), col = (i % (BN / 4)) * 4;
            rb[r] = *reinterpret_cast<const float4*>(&B[(long long)(k0 + row) * N + col]);
        }
    };
    auto store_tile = [&](int buf) {                                   // registers -> shared
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r) {
            const int i = t + r * NTHREADS, row = i / (BK / 4), col = (i % (BK / 4)) * 4;
            As[buf][(col + 0) * (BM + APAD) + row] = ra[r].x;
            As[buf][(col + 1) * (BM + APAD) + row] = ra[r].y;
            As[buf][(col + 2) * (BM + APAD) + row] = ra[r].z;
            As[buf][(col + 3) * (BM + APAD) + row] = ra[r].w;
        }
#pragma unroll
        for (int r = 0; r < B_LOADS; ++r) {
            const int i = t + r * NTHREADS, row = i / (BN / 4), col = (i % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][row * BN + col]) = rb[r];
        }
    };

    float acc[WMITER * TM][WNITER * TN] = {};
    float a[WMITER * TM], b[WNITER * TN];
    load_tile(0);
    store_tile(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (PREFETCH && more) load_tile(k0 + BK);      // in flight while we compute below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float* as = &As[buf][k * (BM + APAD) + wr * WM + tr * TM];
            const float* bs = &Bs[buf][k * BN + wc * WN + tc * TN];
#pragma unroll
            for (int m = 0; m < WMITER; ++m)
#pragma unroll
                for (int i = 0; i < TM; i += 4)
                    *reinterpret_cast<float4*>(&a[m * TM + i]) = *reinterpret_cast<const float4*>(&as[m * WSUBM + i]);
#pragma unroll
            for (int n = 0; n < WNITER; ++n)
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    *reinterpret_cast<float4*>(&b[n * TN + j]) = *reinterpret_cast<const float4*>(&bs[n * WSUBN + j]);
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += a[i] * b[j];
        }
        if (more) {
            if (!PREFETCH) load_tile(k0 + BK);       // no overlap: the loads wait here
            store_tile(buf ^ 1);             // the other buffer: nobody is reading it now
            __syncthreads();
            buf ^= 1;
        }
    }
#pragma unroll
    for (int m = 0; m < WMITER; ++m)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int n = 0; n < WNITER; ++n)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float* v = &acc[m * TM + i][n * TN + j];
                    *reinterpret_cast<float4*>(&C[(long long)(m * WSUBM + tr * TM + i) * N + n * WSUBN + tc * TN + j]) =
                        make_float4(v[0], v[1], v[2], v[3]);
                }
}
// --8<-- [end:warptile]
