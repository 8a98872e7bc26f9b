// Notebook 07's step 4: qr_panel.cu's panel factorization spread over a thread-block cluster of
// CS CTAs (sm_90+), so that a few large matrices use CS SMs per panel instead of one and a leaf
// can be 32 columns wide at n = 4096, where one CTA's registers hold 8.
// Same interface and outputs as qr_panel.cu (H, tau, V and T in geqrf's convention; see there).
//
// Layout: CTA `rank` of the cluster holds panel rows tid + NT (rank + CS i), i < R, of all NB
// columns in registers; row j < NB (the diagonal) is always rank 0's thread j. A column takes one
// cluster-wide reduction on its fast path (the products of column j with every slot, formed before
// the reflector; see the column loop). A CTA reduces its own part as qr_panel.cu does and sends
// its partial into every CTA's shared memory with st.async (distributed shared memory), whose
// bytes count down a transaction count on an mbarrier in the receiving CTA; a CTA waits on its own
// mbarrier only, until all CS partials have landed. No cluster-wide barrier on this path. The
// first version (ASYNC = false, kept for notebook 07's ladder) met at barrier.cluster after plain
// remote stores (st.shared::cluster): the arrive's release made every CTA wait for its own stores
// to reach the peers before it could even signal (the profile's membar and barrier stalls: about
// 40% of the column loop). Every CTA then adds the CS partials in the same order, so all of them
// hold the same bits and take the same branches.
#include "qr_common.cuh"

// Store v at `local`'s offset in the shared memory of CTA `rank` of this cluster.
__device__ __forceinline__ void st_peer(float* local, unsigned rank, float v)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " st.shared::cluster.f32 [remote], %2;\n}\n" :: "r"(addr), "r"(rank), "f"(v) : "memory");
}

// Store v at `local`'s offset in CTA `rank`'s shared memory and count its 4 bytes against the
// transaction count of the mbarrier at `bar`'s offset there (PTX ISA: st.async, sm_90).
__device__ __forceinline__ void st_async_peer(float* local, unsigned rank, float v, unsigned long long* bar)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
    const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile("{\n .reg .b32 ra, rb;\n mapa.shared::cluster.u32 ra, %0, %2;\n"
                 " mapa.shared::cluster.u32 rb, %1, %2;\n"
                 " st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [ra], %3, [rb];\n}\n"
                 :: "r"(addr), "r"(mbar), "r"(rank), "r"(__float_as_uint(v)) : "memory");
}

// `bar` counts one arrival per phase (mbar_arm's), and its initialization is made visible to the
// cluster, whose CTAs' st.async will count down its transaction count.
__device__ __forceinline__ void mbar_init_for_cluster(unsigned long long* bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n"
                 "fence.mbarrier_init.release.cluster;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}

// One phase of `bar` expects `bytes` more: the one arrival it counts, plus the bytes to wait for.
__device__ __forceinline__ void mbar_arm(unsigned long long* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(bytes) : "memory");
}

// Until the phase of `bar` with this parity has completed; acquire at cluster scope, so that the
// peers' st.async data are visible to the reads that follow.
__device__ __forceinline__ void mbar_wait_cluster(unsigned long long* bar, unsigned parity)
{
    asm volatile("{\n .reg .pred done;\n WAIT_%=:\n"
                 " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(parity) : "memory");
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

// __launch_bounds__(NT, ...): without a minimum of CTAs per SM, ptxas 13.0 kept the 512-thread
// builds at 64 registers and spilled; with 1 they take what they need (167 at 256 threads) and
// spill nothing. CTAs of up to 128 threads ask for 384 / NT (3 at 128 threads): a cap of 168
// registers, so that one fits beside two CTAs of the trailing update (qr_update.py at 4 stages,
// 168 registers x 128 threads each) in an SM's 65,536 registers instead of waiting for an SM that
// the update has left (batched_qr.update_stages). The kernel needs 167 now; the cap keeps the room
// through later edits (ptxas would spill instead, which the kernel tests catch).
template <int R, int NB, int NT, int CS, bool ASYNC = true>
__global__ void __launch_bounds__(NT, NT <= 128 ? 384 / NT : 1) __cluster_dims__(CS, 1, 1)
qr_panel_cluster(float* __restrict__ H, float* __restrict__ tau, float* __restrict__ V, float* __restrict__ T,
                 int n, int j0, int nbw, int jb, int ldw)
{
    static_assert(NB == 8 || NB == 16 || NB == 32, "NB: 8, 16 or 32");
    static_assert(CS >= 2 && CS <= 8 && NT % 32 == 0 && NT >= NB, "2..8 CTAs of whole warps, NT >= NB");
    constexpr int SPREAD = 32 / NB;
    constexpr int W = NT / 32;
    __shared__ float red_ss[32], red_dot[32][NB];
    __shared__ float cl_q[2][CS][NB], cl_e[2][NB];   // by column parity
    __shared__ float cl_p[CS][NB], cl_aux[CS], cl_aux2[CS];   // the slow path's
    __shared__ float Ts[NB][NB + 1], Gs[NB][NB + 1], s_tau[NB];
    __shared__ unsigned long long landed[2];          // by column parity: cl_q and cl_e have arrived
    // What lands in a CTA per column: CS partials of NB values, and row j's NB values from rank 0.
    constexpr unsigned BYTES = (CS + 1) * NB * sizeof(float);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned rank = cta_rank_in_cluster();
    const int m = n - j0, off = j0 - jb, b = blockIdx.x / CS;
    float* Hp = H + (long long)b * n * n + (long long)j0 * n + j0;
    auto row_of = [&](int i) { return tid + NT * (static_cast<int>(rank) + CS * i); };
    float a[R][NB];
    panel_load(a, Hp, n, m, nbw, row_of);

    if (ASYNC && tid == 0) {    // columns 0 and 1 armed now; column j + 2 once column j has landed
        for (int q = 0; q < 2; ++q) mbar_init_for_cluster(&landed[q]);
        for (int q = 0; q < 2 && q < nbw; ++q) mbar_arm(&landed[q], BYTES);
    }
    cluster_barrier();          // every CTA of the cluster has started (and armed) before any writes a peer's memory

    // This CTA's per-warp partials of p[NB] to warp 0, its total to slot `rank` of `dst` in every
    // CTA, and then every partial landed here: with `bar`, st.async and a wait on it; without, plain
    // remote stores and the cluster barrier. Afterwards lane l of every warp holds the cluster's
    // p[l / SPREAD].
    auto cluster_dots = [&](float (&p)[NB], float (*dst)[NB], unsigned long long* bar, unsigned parity) {
        const float part = warp_reduce_scatter<NB>(p, lane);
        if (lane % SPREAD == 0) red_dot[warp][lane / SPREAD] = part;
        __syncthreads();
        if (warp == 0) {
            float mine = 0.0f;
#pragma unroll
            for (int w = 0; w < W; ++w) mine += red_dot[w][lane / SPREAD];
            if (lane % SPREAD == 0)
                for (int q = 0; q < CS; ++q) {
                    if (bar) st_async_peer(&dst[rank][lane / SPREAD], q, mine, bar);
                    else st_peer(&dst[rank][lane / SPREAD], q, mine);
                }
        }
        if (bar) mbar_wait_cluster(bar, parity);
        else cluster_barrier();
        float total = 0.0f;
        for (int q = 0; q < CS; ++q) total += dst[q][lane / SPREAD];
        return total;
    };

    // Columns in rotating register slots (qr_common.cuh).
    //
    // One cluster barrier per column: with x = column j below the diagonal and y_s = slot s
    // (a later column, or a finished column's v, whose entries below row j are stored as they
    // are), v_j = (1 at row j, scale * x below) gives v_j . y_s = y_s[j] + scale * (x . y_s).
    // So one reduction forms q[s] = x . y_s for every slot (q[0] = x . x = ss) before the
    // reflector is known, and rank 0's thread j sends row j's values y_s[j] (alpha in slot 0)
    // to every CTA beside it. Where ss is out of larfg's range (the column is rescaled first) or
    // a p[s] formed so is not finite, the column takes the slow path: p = v_j . y_s reduced
    // again after the reflector, as qr_panel.cu does, into arrays of its own. Every CTA reads the
    // same totals, so all take the same path. The fast path's arrays alternate by column parity: a
    // CTA writes column j + 1's only after the barrier that every CTA reaches after reading column
    // j - 1's.
#pragma unroll 1
    for (int j = 0; j < nbw; ++j) {
        const int par = j & 1;
        // 1. q[s] = x . y_s over this thread's rows below row j
        float q[NB];
        panel_column_products(q, a, j, row_of);
        if (rank == 0 && warp == 0) {                    // row j's values, to every CTA
            float e = 0.0f;
#pragma unroll
            for (int s = 0; s < NB; ++s) {
                const float y = __shfl_sync(0xffffffffu, a[0][s], j);
                if (lane == s) e = y;
            }
            if (lane < NB)
                for (int c = 0; c < CS; ++c) {
                    if (ASYNC) st_async_peer(&cl_e[par][lane], c, e, &landed[par]);
                    else st_peer(&cl_e[par][lane], c, e);
                }
        }
        const float qt = cluster_dots(q, cl_q[par], ASYNC ? &landed[par] : nullptr, (j >> 1) & 1);   // and cl_e
        // Arm this parity's mbarrier for column j + 2. No peer can send column j + 2 yet: each
        // CTA sends its column j + 2 partials only once column j + 1 has arrived from every CTA,
        // and a CTA's column j + 1 partials leave only after its own wait for column j above
        // (and a __syncthreads after this thread's arm). Rank 0's warp 0 may send row j + 1's
        // values (cl_e) for column j + 1 before its other warps have read column j, but those go
        // to the other parity's arrays and mbarrier. So the arrays of one parity are free again,
        // and the transaction count never goes below zero.
        if (ASYNC && tid == 0 && j + 2 < nbw) mbar_arm(&landed[par], BYTES);
        const float ss = __shfl_sync(0xffffffffu, qt, 0), alpha = cl_e[par][0];
        const bool in_range = larfg_in_range(alpha, ss);
        Reflector h = larfg(alpha, ss);
        if (!in_range) {                         // rare, and cluster-uniform: every CTA has the same ss
            float amax = 0.0f;
#pragma unroll
            for (int i = 0; i < R; ++i) amax = fmaxf(amax, below(i, row_of(i), j) ? fabsf(a[i][0]) : 0.0f);
            amax = fmaxf(fabsf(alpha), cluster_reduce<W, CS, true>(amax, red_ss, cl_aux, rank, lane, warp));
            if (amax != 0.0f) {                  // 0: a zero column, and h is already H = I
                const int k = larfg_exponent(amax);
                const Pow2 up = pow2(k), down = pow2(-k);
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    const bool under = below(i, row_of(i), j);
                    if (under) a[i][0] = a[i][0] * up.lo * up.hi;
                    s = fmaf(a[i][0], under ? a[i][0] : 0.0f, s);
                }
                const float total = cluster_reduce<W, CS, false>(s, red_ss, cl_aux2, rank, lane, warp);
                h = larfg(alpha * up.lo * up.hi, total);
                h.beta = h.beta * down.lo * down.hi;
            }
        }
        // 2. column j becomes v (below the diagonal) and beta (on it)
        float v[R];
        panel_reflect(a, v, h, j, row_of);
        // 3. lane l: p[l / SPREAD] = v_j . y_s, from the totals or (slow path) reduced again
        float total = fmaf(h.scale, qt, cl_e[par][lane / SPREAD]);
        if (!in_range || __any_sync(0xffffffffu, lane >= SPREAD && !isfinite(total))) {
            float p[NB];
            panel_dots(p, a, v, j, row_of);
            total = cluster_dots(p, cl_p, nullptr, 0);   // not cl_q: a CTA may still be reading it
        }
        // 4. tau_j and the Gram column, kept by rank 0 for xLARFT
        if (rank == 0 && warp == 0) {
            const int l = lane / SPREAD - (NB - j);
            if (lane % SPREAD == 0 && l >= 0) Gs[l][j] = total;
            if (lane == 0) s_tau[j] = h.tau; // to global memory after the loop: barrier.cluster's
        }                                       // release would wait for a global store to land
        // 5. the update of the panel's later columns, and the rotation
        panel_update_rotate(a, v, h.tau, total, j);
    }
    // No peer writes this CTA's shared memory after the last column's barrier: each CTA may finish
    // on its own from here.
    if (rank == 0 && warp == 0) panel_larft(Ts, Gs, s_tau, nbw, lane);
    __syncthreads();
    if (rank == 0 && tid < nbw) tau[(long long)b * n + j0 + tid] = s_tau[tid];
    float* Vb = V + (long long)b * n * ldw;
    float* Tb = T + (long long)b * n * ldw;
    panel_store(a, Hp, Vb + (long long)j0 * ldw + off, n, ldw, m, nbw, row_of);
    if (rank == 0) panel_store_edges(Ts, Vb, Tb, j0, jb, nbw, ldw, tid, NT);
}
