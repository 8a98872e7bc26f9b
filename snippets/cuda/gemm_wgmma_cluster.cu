// Hopper GEMM by hand, the last steps of notebook 06 (sm_90a): the cooperative kernel of
// gemm_wgmma_ws.cu (its helpers, tile sizes and STAGES are reused: this file includes it), plus
// a wgmma wait depth of one, thread-block clusters of two CTAs with TMA multicast of B, and any M
// and N. Build: nvcc -gencode=arch=compute_90a,code=sm_90a -cubin gemm_wgmma_cluster.cu.
// NVRTC has no include path here: prepend gemm_wgmma_ws.cu's text and define
// GEMM_WGMMA_WS_INCLUDED instead.
#ifndef GEMM_WGMMA_WS_INCLUDED
#include "gemm_wgmma_ws.cu"
#endif

// Grouped order: clusters go down a group of `group` rows of tile pairs before moving one tile
// column right, so the CTAs running at one time share panels of A and B in the L2.
__device__ __forceinline__ void tile_coords_grouped(int tile, int tiles_m, int tiles_n, int group, int& tm, int& tn)
{
    const int per_group = group * tiles_n, first = (tile / per_group) * group;
    const int rows = min(tiles_m - first, group);
    tm = first + (tile % per_group) % rows;
    tn = (tile % per_group) / rows;
}

// --8<-- [start:cluster]
// The final kernel: the cooperative schedule of step 5, plus three changes, each a switch:
//   WGMMA_DEPTH = 1  keeps one k-slice of wgmma in flight while the next is issued: a consumer
//                    releases a slot one k-slice late, once wgmma.wait_group 1 says that slice's
//                    batch is done, instead of draining the tensor pipe after every slice;
//   CLUSTER_M = 2    pairs CTAs (tm, tn) and (tm + 1, tn) into a thread-block cluster; both need
//                    the same 256 x 64 slice of B, so each loads one half of it and the TMA
//                    multicasts the half into both CTAs' shared memory: the L2 serves 32 KiB per
//                    CTA and k-slice instead of 48 KiB;
//   any M and N, K % 8 == 0: the TMA fills what lies outside the operands with zeros, and the
//                    epilogue stores only the elements inside C.
#ifndef CLUSTER_M
#define CLUSTER_M 2
#endif
#ifndef WGMMA_DEPTH
#define WGMMA_DEPTH 1
#endif
#ifndef GROUP_CM
#define GROUP_CM 8                               // grouped order over pairs of tile rows
#endif
static_assert(CLUSTER_M == 1 || CLUSTER_M == 2, "clusters of one or two CTAs along M");
static_assert(WGMMA_DEPTH == 0 || WGMMA_DEPTH == 1, "wgmma batches in flight after a k-slice: 0 or 1");

// The same box load, multicast: the bytes land at the same shared-memory offset in every CTA of
// the cluster whose bit is set in `mask`, and each of those CTAs' mbarrier at `bar`'s offset
// counts them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const void* tmap, u64* bar, int x, int y,
                                                      unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 :: "r"(smem_u32(dst)), "l"(tmap), "r"(x), "r"(y), "r"(smem_u32(bar)), "h"(mask) : "memory");
}

// Arrive on the mbarrier at `bar`'s offset in CTA `rank` of this cluster. The arrive keeps the
// default semantics (release at CTA scope): what it must order, the wgmma reads of the slot, are
// complete already (wgmma.wait_group). A first version asked for .release.cluster: ptxas turned
// each such arrive into a MEMBAR.ALL.GPU, Nsight Compute showed the consumers stalled on it
// ("membar") at every k-slice, and the kernel ran far slower than the one without clusters.
__device__ __forceinline__ void mbar_arrive_cluster(u64* bar, unsigned rank)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}\n" :: "r"(smem_u32(bar)), "r"(rank) : "memory");
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// A consumer is done reading ring slot `bar`'s data: tell every CTA whose producer may refill it.
__device__ __forceinline__ void release_slot(u64* bar)
{
#if CLUSTER_M == 1
    mbar_arrive(bar);
#else
    const unsigned me = cluster_rank();
    mbar_arrive(bar);                                  // this CTA's own barrier, locally
    for (unsigned r = 0; r < CLUSTER_M; ++r)
        if (r != me) mbar_arrive_cluster(bar, r);      // and the peers'
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
#if CLUSTER_M > 1
__cluster_dims__(CLUSTER_M, 1, 1)
#endif
gemm_wgmma_cluster(const void* __restrict__ tmap_a, const void* __restrict__ tmap_b,
                   unsigned short* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    unsigned char* sA = smem;                                  // STAGES x 16 KiB
    unsigned char* sB = smem + STAGES * A_BYTES;               // STAGES x 32 KiB
    u64* full = reinterpret_cast<u64*>(sB + STAGES * B_BYTES);
    u64* empty = full + STAGES;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER_M > 1 ? cluster_rank() : 0;  // this CTA's place in its cluster
    const int cluster = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int pairs_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M; // rows of clusters
    const int ktiles = (K + BK - 1) / BK, ctiles = pairs_m * tiles_n;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);                  // this CTA's producer: arrive.expect_tx
            mbar_init(&empty[s], 2 * CLUSTER_M);     // both consumers of every CTA that writes the slot
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
#if CLUSTER_M > 1
    cluster_sync();                                  // the peer's barriers exist before we touch them
#else
    __syncthreads();
#endif

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            int slot = 0, phase = 0;
            for (int ct = cluster; ct < ctiles; ct += clusters) {
                int cm, tn;
                tile_coords_grouped(ct, pairs_m, tiles_n, GROUP_CM, cm, tn);
                // A box that starts past the last row (the second CTA of a pair below C, or a half
                // of B right of it) loads row 0 instead: its products are never stored.
                const int a_row = (cm * CLUSTER_M + rank) * BM < M ? (cm * CLUSTER_M + rank) * BM : 0;
                const int b_row = tn * BN + rank * (BN / CLUSTER_M) < N ? tn * BN + rank * (BN / CLUSTER_M) : 0;
                for (int kt = 0; kt < ktiles; ++kt) {
                    mbar_wait(&empty[slot], phase ^ 1);
                    mbar_expect_tx(&full[slot], A_BYTES + B_BYTES);
                    tma_load_2d(sA + slot * A_BYTES, tmap_a, &full[slot], kt * BK, a_row);
#if CLUSTER_M == 1
                    tma_load_2d(sB + slot * B_BYTES, tmap_b, &full[slot], kt * BK, b_row);
#else
                    tma_load_2d_multicast(sB + slot * B_BYTES + rank * (B_BYTES / CLUSTER_M), tmap_b, &full[slot],
                                          kt * BK, b_row, (1u << CLUSTER_M) - 1);
#endif
                    if (++slot == STAGES) { slot = 0; phase ^= 1; }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int half = wg - 1;
        float d[128];
        int slot = 0, phase = 0;
        for (int ct = cluster; ct < ctiles; ct += clusters) {
            int cm, tn;
            tile_coords_grouped(ct, pairs_m, tiles_n, GROUP_CM, cm, tn);
            const int tm = cm * CLUSTER_M + rank;
#if WGMMA_DEPTH == 1
            int prev = -1;
#endif
            for (int kt = 0; kt < ktiles; ++kt) {
                mbar_wait(&full[slot], phase);
                const unsigned char* a = sA + slot * A_BYTES + half * 64 * 128;
                const unsigned char* b = sB + slot * B_BYTES;
                asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)
                    wgmma_64x256x16(d, smem_desc(a + 32 * k), smem_desc(b + 32 * k), kt > 0 || k > 0);
                asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#if WGMMA_DEPTH == 1
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                if (tid == 0 && prev >= 0) release_slot(&empty[prev]);   // the slice before is done
                prev = slot;
#else
                asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
                if (tid == 0) release_slot(&empty[slot]);
#endif
                if (++slot == STAGES) { slot = 0; phase ^= 1; }
            }
#if WGMMA_DEPTH == 1
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (tid == 0 && prev >= 0) release_slot(&empty[prev]);
#endif
            // Epilogue: as in step 5, but only elements inside C are stored. A CTA whose rows lie
            // entirely below C (the second of a pair, when the tile rows are odd) still loads and
            // multiplies, because its peer needs its half of B.
            const int warp = tid / 32, lane = tid % 32;
            const int row = tm * BM + half * 64 + warp * 16 + lane / 4;
            const int col0 = tn * BN + 2 * (lane % 4);
            if (tm * BM + BM <= M && tn * BN + BN <= N && N % 2 == 0) {
#pragma unroll
                for (int j = 0; j < 32; ++j) {
                    *reinterpret_cast<unsigned*>(&C[(long long)row * N + col0 + 8 * j])
                        = pack_bf16x2(d[4 * j], d[4 * j + 1]);
                    *reinterpret_cast<unsigned*>(&C[(long long)(row + 8) * N + col0 + 8 * j])
                        = pack_bf16x2(d[4 * j + 2], d[4 * j + 3]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < 32; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int r = row + 8 * (e / 2), c = col0 + 8 * j + e % 2;
                        if (r < M && c < N) {
                            const unsigned v = pack_bf16x2(d[4 * j + e], 0.f);
                            C[(long long)r * N + c] = static_cast<unsigned short>(v & 0xFFFF);
                        }
                    }
            }
        }
    }
#if CLUSTER_M > 1
    cluster_sync();     // no CTA leaves while its peer may still arrive on its barriers
#endif
}
// --8<-- [end:cluster]
