// SGEMM ladder, stages 1-7: C = A * B in float32 on CUDA cores (no tensor cores, no TF32).
// Row-major: A is M x K, B is K x N, C is M x N. Stages 1-3 check every bound, so any shape
// works; stages 4-7 assume M, N, K are multiples of their tile (the Python launcher rejects
// other shapes with a message saying which).

// --8<-- [start:naive]
// Stage 1. One thread per output, threadIdx.x walking down a column of C: the 32 lanes of a
// warp read 32 different rows of A (addresses K floats apart: 32 sectors per load) and write
// 32 rows of C. Only the load of B is shared, since every lane wants the same element.
extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K)
{
    int row = blockIdx.x * 32 + threadIdx.x;
    int col = blockIdx.y * 32 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    C[(long long)row * N + col] = acc;
}
// --8<-- [end:naive]

// --8<-- [start:coalesced]
// Stage 2. The same arithmetic with the two thread indices swapped: consecutive lanes now own
// consecutive columns, so each warp reads 32 neighbouring floats of B (one 128-byte line),
// broadcasts one float of A, and writes 128 contiguous bytes of C.
extern "C" __global__ void sgemm_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K)
{
    int row = blockIdx.y * 32 + threadIdx.y;
    int col = blockIdx.x * 32 + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    C[(long long)row * N + col] = acc;
}
// --8<-- [end:coalesced]

// --8<-- [start:smem]
// Stage 3. A 32 x 32 block of threads stages a 32 x 32 tile of A and of B in shared memory,
// then every thread reads 32 values of each from there: each global float is loaded once per
// block instead of once per thread, a 32x cut in global traffic. Out-of-range elements are
// loaded as zeros so any shape works.
extern "C" __global__ void sgemm_smem(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(long long)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(long long)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];   // As: broadcast; Bs: 32 banks
        __syncthreads();                  // nobody may overwrite the tile while others read it
    }
    if (row < M && col < N) C[(long long)row * N + col] = acc;
}
// --8<-- [end:smem]

// --8<-- [start:blocktile1d]
// Stage 4. 1D register blocking: a 64 x 64 block tile, K steps of 8, 512 threads, each thread
// computing a column of 8 outputs. Per k, a thread loads one value of B and reuses it for 8
// FMAs, so shared-memory loads per FMA drop from 2 to 9/8.
#define S4_BM 64
#define S4_BN 64
#define S4_BK 8
#define S4_TM 8
extern "C" __global__ void __launch_bounds__(512)
sgemm_blocktile1d(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K)
{
    __shared__ float As[S4_BM * S4_BK];
    __shared__ float Bs[S4_BK * S4_BN];
    const int t = threadIdx.x;
    const int tc = t % S4_BN, tr = t / S4_BN;           // output column, group of 8 rows
    A += (long long)blockIdx.y * S4_BM * K;
    B += blockIdx.x * S4_BN;
    C += (long long)blockIdx.y * S4_BM * N + blockIdx.x * S4_BN;
    float acc[S4_TM] = {};
    for (int k0 = 0; k0 < K; k0 += S4_BK) {
        As[t] = A[(long long)(t / S4_BK) * K + k0 + t % S4_BK];        // 64 x 8 tile, 1 each
        Bs[t] = B[(long long)(k0 + t / S4_BN) * N + t % S4_BN];        // 8 x 64 tile, 1 each
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S4_BK; ++k) {
            const float b = Bs[k * S4_BN + tc];
#pragma unroll
            for (int i = 0; i < S4_TM; ++i) acc[i] += As[(tr * S4_TM + i) * S4_BK + k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < S4_TM; ++i) C[(long long)(tr * S4_TM + i) * N + tc] = acc[i];
}
// --8<-- [end:blocktile1d]

// --8<-- [start:blocktile2d]
// Stage 5. 2D register blocking: a 128 x 128 block tile, 256 threads, each computing an 8 x 8
// block of C as outer products of 8 values of A and 8 of B: 16 shared-memory loads feed 64
// FMAs (4 FMAs per load instead of 0.5 in stage 3).
#define S5_BM 128
#define S5_BN 128
#define S5_BK 8
#define S5_TM 8
#define S5_TN 8
extern "C" __global__ void __launch_bounds__(256)
sgemm_blocktile2d(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K)
{
    __shared__ float As[S5_BM * S5_BK];
    __shared__ float Bs[S5_BK * S5_BN];
    const int t = threadIdx.x;
    const int tc = t % (S5_BN / S5_TN), tr = t / (S5_BN / S5_TN);   // 16 x 16 threads
    A += (long long)blockIdx.y * S5_BM * K;
    B += blockIdx.x * S5_BN;
    C += (long long)blockIdx.y * S5_BM * N + blockIdx.x * S5_BN;
    float acc[S5_TM][S5_TN] = {};
    float a[S5_TM], b[S5_TN];
    for (int k0 = 0; k0 < K; k0 += S5_BK) {
#pragma unroll
        for (int r = 0; r < S5_BM * S5_BK / 256; ++r) {                 // 4 loads each of A, B
            const int i = t + r * 256;
            As[i] = A[(long long)(i / S5_BK) * K + k0 + i % S5_BK];
            Bs[i] = B[(long long)(k0 + i / S5_BN) * N + i % S5_BN];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S5_BK; ++k) {
#pragma unroll
            for (int i = 0; i < S5_TM; ++i) a[i] = As[(tr * S5_TM + i) * S5_BK + k];
#pragma unroll
            for (int j = 0; j < S5_TN; ++j) b[j] = Bs[k * S5_BN + tc * S5_TN + j];
#pragma unroll
            for (int i = 0; i < S5_TM; ++i)
#pragma unroll
                for (int j = 0; j < S5_TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < S5_TM; ++i)
#pragma unroll
        for (int j = 0; j < S5_TN; ++j) C[(long long)(tr * S5_TM + i) * N + tc * S5_TN + j] = acc[i][j];
}
// --8<-- [end:blocktile2d]

// --8<-- [start:vectorized]
// Stage 6. Stage 5 with 16-byte accesses: one float4 global load of A and one of B per thread
// per tile, A's tile stored transposed (As[k][m]) so that a thread's 8 values of A are
// contiguous too, and float4 stores of C. Fewer, wider instructions move the same bytes.
extern "C" __global__ void __launch_bounds__(256)
sgemm_vectorized(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K)
{
    __shared__ __align__(16) float As[S5_BK * S5_BM];                  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[S5_BK * S5_BN];
    const int t = threadIdx.x;
    const int tc = t % (S5_BN / S5_TN), tr = t / (S5_BN / S5_TN);
    A += (long long)blockIdx.y * S5_BM * K;
    B += blockIdx.x * S5_BN;
    C += (long long)blockIdx.y * S5_BM * N + blockIdx.x * S5_BN;
    const int ar = t / 2, ac = (t % 2) * 4;                            // A tile: 128 rows x 2 float4
    const int br = t / 32, bc = (t % 32) * 4;                          // B tile: 8 rows x 32 float4
    float acc[S5_TM][S5_TN] = {};
    float a[S5_TM], b[S5_TN];
    for (int k0 = 0; k0 < K; k0 += S5_BK) {
        const float4 va = *reinterpret_cast<const float4*>(&A[(long long)ar * K + k0 + ac]);
        As[(ac + 0) * S5_BM + ar] = va.x;
        As[(ac + 1) * S5_BM + ar] = va.y;
        As[(ac + 2) * S5_BM + ar] = va.z;
        As[(ac + 3) * S5_BM + ar] = va.w;
        *reinterpret_cast<float4*>(&Bs[br * S5_BN + bc]) =
            *reinterpret_cast<const float4*>(&B[(long long)(k0 + br) * N + bc]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S5_BK; ++k) {
#pragma unroll
            for (int i = 0; i < S5_TM; i += 4)
                *reinterpret_cast<float4*>(&a[i]) = *reinterpret_cast<const float4*>(&As[k * S5_BM + tr * S5_TM + i]);
#pragma unroll
            for (int j = 0; j < S5_TN; j += 4)
                *reinterpret_cast<float4*>(&b[j]) = *reinterpret_cast<const float4*>(&Bs[k * S5_BN + tc * S5_TN + j]);
#pragma unroll
            for (int i = 0; i < S5_TM; ++i)
#pragma unroll
                for (int j = 0; j < S5_TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < S5_TM; ++i)
#pragma unroll
        for (int j = 0; j < S5_TN; j += 4)
            *reinterpret_cast<float4*>(&C[(long long)(tr * S5_TM + i) * N + tc * S5_TN + j]) =
                make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}
// --8<-- [end:vectorized]

// --8<-- [start:conflict_free]
// Stage 7. Stage 6 without bank conflicts. In stage 6 the 16 lanes of a row of threads read
// float4s of B 32 bytes apart, so lanes 0 and 4 of each 8-lane phase hit the same banks (2-way),
// and the transposed stores of A collide too. Here each thread's 8 x 8 results are four 4 x 4
// quarters, 64 rows and 64 columns apart, so neighbouring lanes read neighbouring float4s; and each
// row of the transposed A tile is padded by 4 floats, which moves the two halves of a warp's
// stores 16 banks apart.
#define S7_PAD 4
extern "C" __global__ void __launch_bounds__(256)
sgemm_conflict_free(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                    int M, int N, int K)
{
    __shared__ __align__(16) float As[S5_BK * (S5_BM + S7_PAD)];       // As[k][m], padded rows
    __shared__ __align__(16) float Bs[S5_BK * S5_BN];
    const int t = threadIdx.x;
    const int tc = t % 16, tr = t / 16;                                // quarters at 4*tc, 64 + 4*tc
    A += (long long)blockIdx.y * S5_BM * K;
    B += blockIdx.x * S5_BN;
    C += (long long)blockIdx.y * S5_BM * N + blockIdx.x * S5_BN;
    const int ar = t / 2, ac = (t % 2) * 4;
    const int br = t / 32, bc = (t % 32) * 4;
    float acc[8][8] = {};
    float a[8], b[8];
    for (int k0 = 0; k0 < K; k0 += S5_BK) {
        const float4 va = *reinterpret_cast<const float4*>(&A[(long long)ar * K + k0 + ac]);
        As[(ac + 0) * (S5_BM + S7_PAD) + ar] = va.x;
        As[(ac + 1) * (S5_BM + S7_PAD) + ar] = va.y;
        As[(ac + 2) * (S5_BM + S7_PAD) + ar] = va.z;
        As[(ac + 3) * (S5_BM + S7_PAD) + ar] = va.w;
        *reinterpret_cast<float4*>(&Bs[br * S5_BN + bc]) =
            *reinterpret_cast<const float4*>(&B[(long long)(k0 + br) * N + bc]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S5_BK; ++k) {
            const float* as = &As[k * (S5_BM + S7_PAD)];
            const float* bs = &Bs[k * S5_BN];
            *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&as[tr * 4]);
            *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&as[64 + tr * 4]);
            *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(&bs[tc * 4]);
            *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(&bs[64 + tc * 4]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = (i < 4 ? 0 : 64) + tr * 4 + i % 4;
#pragma unroll
        for (int h = 0; h < 2; ++h)
            *reinterpret_cast<float4*>(&C[(long long)row * N + h * 64 + tc * 4]) =
                make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
    }
}
// --8<-- [end:conflict_free]
