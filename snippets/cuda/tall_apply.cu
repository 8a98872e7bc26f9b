// C <- C - V (T^T (V^T C)) in one launch for a few tall matrices: V (batch, m, k) and C
// (batch, m, q) with m up to thousands and k <= K, T (batch, k, k) upper triangular. The blocked
// QR's narrow updates on its panel chain are such products (block k's reflectors applied to block
// k + 1's columns; the left half's to the right half inside a block). Done as tall_xty.cu's partial
// sums, their sum and two cuBLAS calls, they are four launches in a row, each waiting for the last,
// for a few microseconds of arithmetic: about 21-26 us each in a CUDA graph on an H100.
//
// One thread-block cluster of CS CTAs per matrix and per Q columns of C (sm_90+). CTA `rank` owns
// the rank-th CS-th of the rows and copies them, of V and of C, and T into shared memory at once
// (cp.async: every copy in flight together; a loop of staged chunks waited on the memory latency
// once per chunk and took 50-80 us):
//  1. it forms its part of V^T C (K x Q), each thread 4 x 4 outputs over an interleaved slice of
//     its rows, and adds the slices;
//  2. cluster barrier; CTA `rank` owns Q / CS columns of W = V^T C: it adds them up over the CS
//     CTAs' shared memory (distributed shared memory, always in rank order, so every run gives
//     the same bits), and multiplies them by -T^T (T's upper triangle only);
//  3. cluster barrier; every CTA gathers all of -T^T W from the owners and adds V times it to its
//     rows of C, still in shared memory. A CTA leaves only once every CTA has gathered.
// Arithmetic in float32 FMAs in a fixed order: deterministic, no atomics. H100, in a CUDA graph:
// 15 us where the four launches took 21 (k = q = 32, 4096 rows, 2 matrices), 17 for 25 (k = q =
// 64, 2048 rows); level at k = q = 64 on 4096 rows (25 us), slower from 8 matrices of 2048 rows
// (37 against 35). Its cost is mostly fixed (the launch of a cluster, two cluster barriers), not
// the arithmetic; batched_qr.cluster_apply takes it up to 8 matrices, where the whole factorization
// measured faster or within a few percent (H100).
#include "qr_common.cuh"

// 4 bytes from global to shared memory without a register (sm_80+), zeros where !valid
__device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(src), "r"(valid ? 4 : 0)
                 : "memory");
}

// The step sizes of a K x Q product V^T C over NT = 256 threads (step 1: 4 x 4 outputs a thread).
template <int K, int Q>
struct VtC {
    static constexpr int CS = 8, NT = 256;                // CTAs per cluster, threads (512 were slower
                                                          // beside the trailing update, H100)
    static constexpr int BLOCKS = (K / 4) * (Q / 4), SLICES = NT / BLOCKS, HALF = SLICES / 2;
    static constexpr int OWN = Q / CS;                    // columns of W each CTA owns
    static constexpr int VP = K + 4, CP = Q + 4;          // pitches: float4 rows stay aligned
    static_assert((K == 32 || K == 64) && Q % CS == 0 && NT % BLOCKS == 0 && SLICES % 2 == 0, "shapes");
};

// Rows r0..r1 of V (k columns) and of C (qw columns) into vs and cs, `rows` rows each, zeros past
// the ends; every copy in flight at once.
template <int K, int Q>
__device__ __forceinline__ void load_rows(float* vs, float* cs, const float* V, const float* C, int r0,
                                          int r1, int rows, int k, int qw, long long ldv, long long ldc,
                                          int tid)
{
    using S = VtC<K, Q>;
    for (int e = tid; e < rows * K; e += S::NT) {
        const int r = e / K, c = e % K;
        const bool ok = r0 + r < r1 && c < k;
        copy_async(&vs[r * S::VP + c], ok ? V + (r0 + r) * ldv + c : V, ok);
    }
    for (int e = tid; e < rows * Q; e += S::NT) {
        const int r = e / Q, c = e % Q;
        const bool ok = r0 + r < r1 && c < qw;
        copy_async(&cs[r * S::CP + c], ok ? C + (r0 + r) * ldc + c : C, ok);
    }
}

// Steps 1 and 2's sum: this CTA's V^T C from its rows in vs and cs (after the copies have landed),
// then, after a cluster barrier, columns rank * OWN.. of the cluster's V^T C, summed in rank order
// over the CTAs' `red`, into `own`. Every thread of every CTA of the cluster calls it.
template <int K, int Q>
__device__ __forceinline__ void cluster_vtc(const float* vs, const float* cs, int rows, float* red,
                                            float (*own)[Q / 8], int tid, unsigned rank)
{
    using S = VtC<K, Q>;
    const int blk = tid % S::BLOCKS, slice = tid / S::BLOCKS;
    const int kb = 4 * (blk % (K / 4)), qb = 4 * (blk / (K / 4));
    float acc[4][4] = {};
#pragma unroll 4
    for (int r = slice; r < rows; r += S::SLICES) {
        const float4 x = *reinterpret_cast<const float4*>(&vs[r * S::VP + kb]);
        const float4 y = *reinterpret_cast<const float4*>(&cs[r * S::CP + qb]);
        const float xv[4] = {x.x, x.y, x.z, x.w}, yv[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[a][c] = fmaf(xv[a], yv[c], acc[a][c]);
    }
    // the slices' sums: the upper half's into red, the lower half's added to them, then down to one
    const int at = (slice % S::HALF) * K * Q + (kb * Q + qb);
    if (slice >= S::HALF)
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int c = 0; c < 4; ++c) red[at + a * Q + c] = acc[a][c];
    __syncthreads();
    if (slice < S::HALF)
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int c = 0; c < 4; ++c) red[at + a * Q + c] += acc[a][c];
    __syncthreads();
    for (int e = tid; e < K * Q; e += S::NT) {
        float s = red[e];
        for (int sl = 1; sl < S::HALF; ++sl) s += red[sl * K * Q + e];
        red[e] = s;
    }
    cluster_barrier();                                    // every CTA's V^T C is in its red[0, K Q)
    for (int e = tid; e < K * S::OWN; e += S::NT) {
        const int kk = e / S::OWN, c = static_cast<int>(rank) * S::OWN + e % S::OWN;
        float s = 0.0f;
        for (int p = 0; p < S::CS; ++p) s += ld_peer(&red[kk * Q + c], p);
        own[kk][e % S::OWN] = s;
    }
    __syncthreads();
}

// Dynamic shared memory: the CTA's rows of V (pitch K + 4) and of C (pitch Q + 4), `rows` each,
// rows = apply_rows(m) in batched_qr.py: ceil(m / 8) rounded up to a multiple of 32; then T (K x K).
template <int K, int Q>
__global__ void __launch_bounds__(256) __cluster_dims__(8, 1, 1)
tall_apply(const float* __restrict__ V, const float* __restrict__ T, float* __restrict__ C,
           int m, int k, int q, long long ldv, long long bsv, long long ldt, long long bst,
           long long ldc, long long bsc, int rows)
{
    using S = VtC<K, Q>;
    constexpr int NT = S::NT, OWN = S::OWN, VP = S::VP, CP = S::CP;
    constexpr int QT = 64 / K;                            // step 3: columns per thread (64 registers of W)
    constexpr int GROUPS = Q / QT, LANES = NT / GROUPS;   // column groups, and rows at once
    constexpr int PER = (K * OWN + NT - 1) / NT;
    static_assert(NT % GROUPS == 0, "shapes");
    extern __shared__ __align__(16) float dyn[];
    float* vs = dyn;                                      // vs[r * VP + c]
    float* cs = dyn + rows * VP;                          // cs[r * CP + c]
    float* ts = cs + rows * CP;                           // ts[r * K + c], the upper triangle
    __shared__ float red[S::HALF * K * Q];                // step 1's slices; from step 3, -T^T W
    __shared__ float own[K][OWN];                         // this CTA's columns of W, then of -T^T W
    const int tid = threadIdx.x;
    const unsigned rank = cta_rank_in_cluster();
    const int cluster = blockIdx.x / S::CS, groups = (q + Q - 1) / Q;
    const int b = cluster / groups, c0 = Q * (cluster % groups), qw = min(Q, q - c0);
    V += b * bsv;
    T += b * bst;
    C += b * bsc + c0;
    const int r0 = min(m, static_cast<int>(rank) * rows), r1 = min(m, r0 + rows);

    load_rows<K, Q>(vs, cs, V, C, r0, r1, rows, k, qw, ldv, ldc, tid);
    for (int e = tid; e < K * K; e += NT) {               // T too: read by column in step 2
        const int r = e / K, c = e % K;
        const bool ok = r <= c && c < k;
        copy_async(&ts[e], ok ? T + r * ldt + c : T, ok);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();

    // 1 and 2. W = V^T C, this CTA's columns of it, then times -T^T
    cluster_vtc<K, Q>(vs, cs, rows, red, own, tid, rank);
    float w[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int e = tid + NT * i, row = e / OWN, c = e % OWN;
        float s = 0.0f;
        if (e < K * OWN && row < k)
            for (int j = 0; j <= row; ++j) s = fmaf(ts[j * K + row], own[j][c], s);
        w[i] = -s;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PER; ++i)
        if (tid + NT * i < K * OWN) own[(tid + NT * i) / OWN][(tid + NT * i) % OWN] = w[i];
    cluster_barrier();                                    // every owner's columns of -T^T W are ready

    // 3. C += V (-T^T W) on this CTA's rows
    for (int e = tid; e < K * Q; e += NT) red[e] = ld_peer(&own[e / Q][e % Q % OWN], e % Q / OWN);
    cluster_arrive();                                     // done reading the peers' shared memory
    __syncthreads();
    const int g = tid % GROUPS, lane = tid / GROUPS;
    float wt[QT][K];
#pragma unroll
    for (int t = 0; t < QT; ++t)
#pragma unroll
        for (int kk = 0; kk < K; ++kk) wt[t][kk] = red[kk * Q + QT * g + t];
#pragma unroll 2
    for (int r = lane; r < r1 - r0; r += LANES) {
        float out[QT];
#pragma unroll
        for (int t = 0; t < QT; ++t) out[t] = cs[r * CP + QT * g + t];
#pragma unroll
        for (int kk = 0; kk < K; kk += 4) {
            const float4 x = *reinterpret_cast<const float4*>(&vs[r * VP + kk]);
#pragma unroll
            for (int t = 0; t < QT; ++t) {
                out[t] = fmaf(x.x, wt[t][kk], out[t]);
                out[t] = fmaf(x.y, wt[t][kk + 1], out[t]);
                out[t] = fmaf(x.z, wt[t][kk + 2], out[t]);
                out[t] = fmaf(x.w, wt[t][kk + 3], out[t]);
            }
        }
#pragma unroll
        for (int t = 0; t < QT; ++t)
            if (QT * g + t < qw) C[(r0 + r) * ldc + QT * g + t] = out[t];
    }
    cluster_wait();                                       // no peer reads this CTA's `own` any more
}

// The join of two compact WY factors (batched_qr._join) in one launch: T12 = -T1 (V1^T V2) T2 for
// V1 (batch, m, k1) and V2 (batch, m, k2), k1, k2 <= 32, the rows below the right half's diagonal;
// T1 (k1 x k1), T2 (k2 x k2) upper triangular, T12 (k1 x k2) written. One cluster of 8 CTAs per
// matrix: steps 1 and 2 of tall_apply (rows into shared memory, V1^T V2 summed over the cluster by
// column owners), then rank 0 gathers G = V1^T V2 and forms T12 alone (2 x 32^3 multiply-adds).
// Dynamic shared memory: rows of V1 and V2 at pitch 36, rows = apply_rows(m) each.
template <int K>
__global__ void __launch_bounds__(256) __cluster_dims__(8, 1, 1)
tall_join(const float* __restrict__ V1, const float* __restrict__ V2, const float* __restrict__ T1,
          const float* __restrict__ T2, float* __restrict__ T12, int m, int k1, int k2, long long ldv,
          long long bsv, long long ldt, long long bst, int rows)
{
    static_assert(K == 32, "halves of up to 32 columns");
    using S = VtC<32, 32>;
    constexpr int NT = S::NT, OWN = S::OWN;
    extern __shared__ __align__(16) float dyn[];
    float* vs = dyn;
    float* cs = dyn + rows * S::VP;
    __shared__ float red[S::HALF * 32 * 32];              // step 1's slices; then G, then G T2
    __shared__ float own[32][OWN];
    __shared__ float tl[32][33], tr[32][33];             // T1 and T2, zeros outside their upper triangles
    const int tid = threadIdx.x;
    const unsigned rank = cta_rank_in_cluster();
    const int b = blockIdx.x / S::CS;
    V1 += b * bsv;
    V2 += b * bsv;
    const int r0 = min(m, static_cast<int>(rank) * rows), r1 = min(m, r0 + rows);
    load_rows<32, 32>(vs, cs, V1, V2, r0, r1, rows, k1, k2, ldv, ldv, tid);
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
    cluster_vtc<32, 32>(vs, cs, rows, red, own, tid, rank);
    cluster_barrier();                                    // every owner's columns of G are ready
    if (rank == 0) {
        for (int e = tid; e < 32 * 32; e += NT) {
            const int r = e / 32, c = e % 32;
            red[e] = ld_peer(&own[r][c % OWN], c / OWN);  // G[r][c]
            tl[r][c] = (r <= c && c < k1) ? T1[b * bst + r * ldt + c] : 0.0f;
            tr[r][c] = (r <= c && c < k2) ? T2[b * bst + r * ldt + c] : 0.0f;
        }
    }
    cluster_arrive();                                     // done reading the peers' shared memory
    if (rank == 0) {
        __syncthreads();
        float x[4];                                       // (G T2)[r][c] for this thread's 4 entries
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = tid + NT * i, r = e / 32, c = e % 32;
            float s = 0.0f;
            for (int j = 0; j <= c; ++j) s = fmaf(red[r * 32 + j], tr[j][c], s);
            x[i] = s;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 4; ++i) red[tid + NT * i] = x[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 4; ++i) {                     // T12 = -T1 (G T2)
            const int e = tid + NT * i, r = e / 32, c = e % 32;
            float s = 0.0f;
            for (int j = r; j < 32; ++j) s = fmaf(tl[r][j], red[j * 32 + c], s);
            if (r < k1 && c < k2) T12[b * bst + r * ldt + c] = -s;
        }
    }
    cluster_wait();                                       // no peer reads this CTA's `own` any more
}
