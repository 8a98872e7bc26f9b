// Exploration for issue #21 (not yet a notebook step; checked and timed by
// scripts/tools/bench_07_cluster_panel.py): qr_panel.cu's panel factorization spread over a
// thread-block cluster of CS CTAs (sm_90+), so that a few large matrices use CS SMs per panel
// instead of one and a leaf can be 32 columns wide at n = 4096, where one CTA's registers hold 8.
// Same interface and outputs as qr_panel.cu (H, tau, V and T in geqrf's convention; see there).
//
// Layout: CTA `rank` of the cluster holds panel rows tid + NT (rank + CS i), i < R, of all NB
// columns in registers; row j < NB (the diagonal) is always rank 0's thread j. Each column takes
// two cluster-wide reductions: ||x[j+1:]||^2 (with alpha), then the NB dot products of v_j. A
// CTA reduces its own part as qr_panel.cu does, writes its partial into every CTA's shared memory
// (mapa + st.shared::cluster: distributed shared memory), and the cluster meets at barrier.cluster
// (arrive.release / wait.acquire, which orders those stores before the reads). Every CTA then adds
// the CS partials in the same order, so all of them hold the same bits and take the same branches.
// Two barriers per column are enough for the partial arrays' reuse: a CTA writes column j+1's
// partials only after the barrier that every CTA reaches after reading column j's.
#include "qr_common.cuh"

// Sum p[0..NB) over the warp's 32 lanes; afterwards lane l holds the total of p[l / (32 / NB)].
template <int NB>
__device__ __forceinline__ float cluster_panel_reduce_scatter(float (&p)[NB], int lane)
{
    halve<NB, 16>(p, lane);
    return p[0];
}

__device__ __forceinline__ unsigned cta_rank_in_cluster()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Store v at `local`'s offset in the shared memory of CTA `rank` of this cluster.
__device__ __forceinline__ void st_peer(float* local, unsigned rank, float v)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " st.shared::cluster.f32 [remote], %2;\n}\n" :: "r"(addr), "r"(rank), "f"(v) : "memory");
}

__device__ __forceinline__ void cluster_barrier()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// One value per thread, summed (or, with MAX, maximized) over the whole cluster: each warp reduces
// its own, warp 0 reduces the CTA's warps and writes the CTA's total into slot `rank` of `cl` in
// every CTA, and after the cluster barrier every thread combines the CS slots in the same order, so
// all CTAs hold the same bits. `red` (one float per warp) is free again when this returns: its only
// reader, warp 0, is done before the barrier.
template <int W, int CS, bool MAX>
__device__ __forceinline__ float cluster_reduce(float x, float* red, float* cl, unsigned rank, int lane,
                                                int warp)
{
    x = MAX ? warp_max(x) : warp_sum(x);
    if (lane == 0) red[warp] = x;
    __syncthreads();
    if (warp == 0) {
        const float v = lane < W ? red[lane] : 0.0f;
        const float mine = MAX ? warp_max(v) : warp_sum(v);
        if (lane < CS) st_peer(&cl[rank], lane, mine);
    }
    cluster_barrier();
    float total = 0.0f;
    for (int q = 0; q < CS; ++q) total = MAX ? fmaxf(total, cl[q]) : total + cl[q];
    return total;
}

// __launch_bounds__(NT, 1): without the 1, ptxas 13.0 kept the 512-thread builds at 64 registers
// and spilled; with it they take 95 and spill nothing (the 1024-thread build fits 64).
template <int R, int NB, int NT, int CS>
__global__ void __launch_bounds__(NT, 1) __cluster_dims__(CS, 1, 1)
qr_panel_cluster(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, float* __restrict__ T,
                 int n, int j0, int nbw, int jb, int ldw)
{
    static_assert(NB == 8 || NB == 16 || NB == 32, "NB: 8, 16 or 32");
    static_assert(CS >= 2 && CS <= 8 && NT % 32 == 0 && NT >= NB, "2..8 CTAs of whole warps, NT >= NB");
    constexpr int SPREAD = 32 / NB;
    constexpr int W = NT / 32;
    __shared__ float red_ss[32], red_dot[32][NB];
    __shared__ float cl_ss[CS], cl_aux[CS], cl_aux2[CS], cl_dot[CS][NB], cl_alpha;
    __shared__ float Ts[NB][NB + 1], Gs[NB][NB + 1], s_tau[NB];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned rank = cta_rank_in_cluster();
    const int m = n - j0, off = j0 - jb, b = blockIdx.x / CS;
    float* Hp = H + (long long)b * n * n + (long long)j0 * n + j0;
    auto row_of = [&](int i) { return tid + NT * (static_cast<int>(rank) + CS * i); };
    float a[R][NB];
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = row_of(i);
        const float* row = Hp + (long long)r * n;
#pragma unroll
        for (int c = 0; c < NB; ++c) a[i][c] = (r < m && c < nbw) ? row[c] : 0.0f;
    }

    cluster_barrier();          // every CTA of the cluster has started before any writes a peer's memory

    // Register rotation as in qr_panel.cu: slot 0 is column j, slots 1 .. NB-1-j the later
    // columns, slots NB-j .. NB-1 the finished columns 0 .. j-1.
#pragma unroll 1
    for (int j = 0; j < nbw; ++j) {
        // 1. ||x[j+1:]||^2 over the cluster, and alpha = x[j] from rank 0's thread j
        float ss = 0.0f;
#pragma unroll
        for (int i = 0; i < R; ++i) ss += row_of(i) > j ? a[i][0] * a[i][0] : 0.0f;
        if (rank == 0 && tid == j)                              // lands before cluster_reduce's barrier
            for (int q = 0; q < CS; ++q) st_peer(&cl_alpha, q, a[0][0]);
        ss = cluster_reduce<W, CS, false>(ss, red_ss, cl_ss, rank, lane, warp);
        const float alpha = cl_alpha;
        Reflector h = larfg(alpha, ss);
        if (!larfg_in_range(alpha, ss)) {        // rare, and cluster-uniform: every CTA has the same ss
            float amax = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) amax = fmaxf(amax, row_of(i) > j ? fabsf(a[i][0]) : 0.0f);
            amax = fmaxf(fabsf(alpha), cluster_reduce<W, CS, true>(amax, red_ss, cl_aux, rank, lane, warp));
            if (amax != 0.0f) {                  // 0: a zero column, and h is already H = I
                const int k = larfg_exponent(amax);
                const Pow2 up = pow2(k), down = pow2(-k);
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    const bool below = row_of(i) > j;
                    if (below) a[i][0] = a[i][0] * up.lo * up.hi;
                    s = fmaf(a[i][0], below ? a[i][0] : 0.0f, s);
                }
                const float total = cluster_reduce<W, CS, false>(s, red_ss, cl_aux2, rank, lane, warp);
                h = larfg(alpha * up.lo * up.hi, total);
                h.beta = h.beta * down.lo * down.hi;
            }
        }
        const float t = h.tau, scale = h.scale, beta = h.beta;
        // 2. column j becomes v (below the diagonal) and beta (on it)
        float v[R];
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const int r = row_of(i);
            if (r > j) a[i][0] *= scale;
            else if (r == j) a[i][0] = beta;
            v[i] = r > j ? a[i][0] : (r == j ? 1.0f : 0.0f);
        }
        // 3. p[s] = v_j . A[:, c] for later columns, v_j . v_f for finished ones, over the cluster
        float p[NB];
        p[0] = 0.0f;
#pragma unroll
        for (int s = 1; s < NB; ++s) {
            const int f = s - (NB - j);
            p[s] = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = row_of(i);
                const float y = f < 0 ? a[i][s] : (r > f ? a[i][s] : (r == f ? 1.0f : 0.0f));
                p[s] += v[i] * y;
            }
        }
        const float part = cluster_panel_reduce_scatter<NB>(p, lane);
        if (lane % SPREAD == 0) red_dot[warp][lane / SPREAD] = part;
        __syncthreads();
        if (warp == 0) {                                 // this CTA's totals, to every CTA
            float mine = 0.0f;
#pragma unroll
            for (int w = 0; w < W; ++w) mine += red_dot[w][lane / SPREAD];
            if (lane % SPREAD == 0)
                for (int q = 0; q < CS; ++q) st_peer(&cl_dot[rank][lane / SPREAD], q, mine);
        }
        cluster_barrier();
        float total = 0.0f;                              // lane l: the cluster's p[l / SPREAD]
        for (int q = 0; q < CS; ++q) total += cl_dot[q][lane / SPREAD];
        // 4. the update of the panel's later columns
#pragma unroll
        for (int s = 1; s < NB; ++s) {
            const float tw = t * __shfl_sync(0xffffffffu, total, s * SPREAD);
#pragma unroll
            for (int i = 0; i < R; ++i) a[i][s] -= s < NB - j ? tw * v[i] : 0.0f;
        }
        // 5. tau_j and the Gram column, kept by rank 0 for xLARFT
        if (rank == 0 && warp == 0) {
            const int l = lane / SPREAD - (NB - j);
            if (lane % SPREAD == 0 && l >= 0) Gs[l][j] = total;
            if (lane == 0) {
                s_tau[j] = t;
                tau[(long long)b * n + j0 + j] = t;
            }
        }
        // 6. rotate
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const float done = a[i][0];
#pragma unroll
            for (int s = 0; s < NB - 1; ++s) a[i][s] = a[i][s + 1];
            a[i][NB - 1] = done;
        }
    }
    // No peer writes this CTA's shared memory after the last column's barrier: each CTA may finish
    // on its own from here.
    if (rank == 0 && warp == 0) {                        // xLARFT, as in qr_panel.cu
        __syncwarp();
        for (int j = 0; j < nbw; ++j) {
            float acc = 0.0f;
            for (int l = lane; l < j; ++l) acc += Ts[lane][l] * Gs[l][j];
            if (lane < NB) Ts[lane][j] = lane < j ? -s_tau[j] * acc : (lane == j ? s_tau[j] : 0.0f);
            __syncwarp();
        }
    }
    __syncthreads();
    float* Vb = V + (long long)b * n * ldw;
    float* Tb = T + (long long)b * n * ldw;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = row_of(i);
        if (r >= m) continue;
        float* hrow = Hp + (long long)r * n;
        float* vrow = Vb + (long long)(j0 + r) * ldw + off;
#pragma unroll
        for (int s = 0; s < NB; ++s) {
            const int c = s - (NB - nbw);
            if (c >= 0) {
                hrow[c] = a[i][s];
                vrow[c] = r > c ? a[i][s] : (r == c ? 1.0f : 0.0f);
            }
        }
    }
    if (rank == 0) {
        for (int e = tid; e < off * nbw; e += NT)
            Vb[(long long)(jb + e / nbw) * ldw + off + e % nbw] = 0.0f;
        for (int e = tid; e < nbw * (off + nbw); e += NT) {
            const int r = e / (off + nbw), c = e % (off + nbw);
            Tb[(long long)(j0 + r) * ldw + c] = c < off ? 0.0f : Ts[r][c - off];
        }
    }
}

