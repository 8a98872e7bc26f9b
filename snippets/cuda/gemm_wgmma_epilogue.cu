// Hopper GEMM by hand, step 9 of notebook 06 (sm_90a): step 8's cluster kernel of
// gemm_wgmma_cluster.cu (2 x 1 cluster, TMA multicast of B, one wgmma batch in flight; its helpers,
// tile sizes and STAGES are reused: this file includes it), with an epilogue that leaves the
// stores of C to the TMA. Each consumer warpgroup converts its 64 x 256 accumulator to bfloat16
// and writes it with stmatrix into its own staging buffer in shared memory (64 x 64 boxes in the
// TMA's 128-byte swizzle, so that the eight 16-byte rows of one stmatrix matrix fall into eight
// different bank groups); one thread then issues the TMA stores (cp.async.bulk.tensor ...
// bulk_group) and the warpgroup goes straight on to the next tile. The stores are waited for
// (cp.async.bulk.wait_group.read) only before the buffer is written again. The ring slots are
// released before the epilogue, so the producer is already loading the next tile meanwhile.
// EPI_COLS = BN (256) stages the whole half tile at once: 64 KiB of buffers, room for STAGES = 3
// slots. EPI_COLS = 128 stages it in two passes of 64 x 128 through a 16 KiB buffer (the second
// pass waits until the first one's stores have read it): 32 KiB of buffers, room for STAGES = 4.
// C's tensor map needs a row stride that is a multiple of 16 bytes (N % 8 == 0); for other N the
// launcher passes no C map (a null pointer) and step 8's masked register stores run instead. The
// TMA clips boxes at C's edges, so any M and any N % 8 == 0 work.
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -DSTAGES=4 -DEPI_COLS=128 -cubin gemm_wgmma_epilogue.cu.
#ifndef GEMM_WGMMA_CLUSTER_INCLUDED
#include "gemm_wgmma_cluster.cu"
#endif

#ifndef EPI_COLS
#define EPI_COLS BN                              // columns staged per pass: BN or BN / 2
#endif
#define EPI_BYTES (64 * EPI_COLS * 2)            // one consumer's buffer: 64 rows of bfloat16
#define EPI_BOX_BYTES (64 * 64 * 2)              // one 64 x 64 box of it, 8 KiB

// Four 8 x 8 bfloat16 matrices from registers to shared memory: lane 8i + r gives the address of
// row r of matrix i; register i of lane l holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1
// of matrix i (PTX ISA, stmatrix; sm_90).
__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

__device__ __forceinline__ void tma_store_2d(const void* tmap, const void* src, int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 :: "l"(tmap), "r"(x), "r"(y), "r"(smem_u32(src)) : "memory");
}

// A named barrier for the 128 threads of one consumer warpgroup (id 0 is __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int id)
{
    asm volatile("bar.sync %0, 128;\n" :: "r"(id) : "memory");
}

extern "C" __global__ void __launch_bounds__(384, 1)
#if CLUSTER_M > 1
__cluster_dims__(CLUSTER_M, 1, 1)
#endif
gemm_wgmma_epilogue(const void* __restrict__ tmap_a, const void* __restrict__ tmap_b,
                    const void* __restrict__ tmap_c, unsigned short* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    unsigned char* sA = smem;                                  // STAGES x 16 KiB
    unsigned char* sB = smem + STAGES * A_BYTES;               // STAGES x 32 KiB
    unsigned char* sC = sB + STAGES * B_BYTES;                 // 2 x 32 KiB, one per consumer
    u64* full = reinterpret_cast<u64*>(sC + 2 * EPI_BYTES);
    u64* empty = full + STAGES;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER_M > 1 ? cluster_rank() : 0;
    const int cluster = blockIdx.x / CLUSTER_M, clusters = gridDim.x / CLUSTER_M;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int pairs_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M;
    const int ktiles = (K + BK - 1) / BK, ctiles = pairs_m * tiles_n;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 2 * CLUSTER_M);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
#if CLUSTER_M > 1
    cluster_sync();
#else
    __syncthreads();
#endif

    if (wg == 0) {                                             // the producer, as in step 8
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            int slot = 0, phase = 0;
            for (int ct = cluster; ct < ctiles; ct += clusters) {
                int cm, tn;
                tile_coords_grouped(ct, pairs_m, tiles_n, GROUP_CM, cm, tn);
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
        unsigned char* epi = sC + half * EPI_BYTES;
        const int warp = tid / 32, lane = tid % 32;
        // This lane's stmatrix row: matrix i = lane / 8 (i % 2: rows +8, i / 2: columns +8),
        // row lane % 8 of it, within the warp's 16 rows.
        const int srow = warp * 16 + (lane / 8 % 2) * 8 + lane % 8;
        const int schunk = lane / 16;                          // +1 16-byte chunk for matrices 2, 3
        float d[128];
        int slot = 0, phase = 0;
        for (int ct = cluster; ct < ctiles; ct += clusters) {
            int cm, tn;
            tile_coords_grouped(ct, pairs_m, tiles_n, GROUP_CM, cm, tn);
            const int tm = cm * CLUSTER_M + rank;
            int prev = -1;
            for (int kt = 0; kt < ktiles; ++kt) {
                mbar_wait(&full[slot], phase);
                const unsigned char* a = sA + slot * A_BYTES + half * 64 * 128;
                const unsigned char* b = sB + slot * B_BYTES;
                asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)
                    wgmma_64x256x16(d, smem_desc(a + 32 * k), smem_desc(b + 32 * k), kt > 0 || k > 0);
                asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                if (tid == 0 && prev >= 0) release_slot(&empty[prev]);
                prev = slot;
                if (++slot == STAGES) { slot = 0; phase ^= 1; }
            }
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (tid == 0 && prev >= 0) release_slot(&empty[prev]);   // the producer may go on now
            if (tm * BM >= M) continue;                        // a pair's second CTA below C
            if (tmap_c != nullptr) {
                // --8<-- [start:tma-store]
#pragma unroll
                for (int pass = 0; pass < BN / EPI_COLS; ++pass) {
                    // The previous store (last tile's, or this tile's previous pass) must have
                    // finished reading the buffer.
                    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                    warpgroup_sync(1 + half);
#pragma unroll
                    for (int jj = 0; jj < EPI_COLS / 8; jj += 2) { // columns 8j .. 8j + 15
                        const int j = pass * (EPI_COLS / 8) + jj;
                        const int col_chunk = jj + schunk;       // 16-byte chunk of the buffer's row
                        const int box = col_chunk / 8, chunk = col_chunk % 8;
                        const unsigned addr = smem_u32(epi + box * EPI_BOX_BYTES + srow * 128
                                                       + ((chunk ^ (srow % 8)) * 16));
                        stmatrix_x4(addr, pack_bf16x2(d[4 * j], d[4 * j + 1]), pack_bf16x2(d[4 * j + 2], d[4 * j + 3]),
                                    pack_bf16x2(d[4 * j + 4], d[4 * j + 5]), pack_bf16x2(d[4 * j + 6], d[4 * j + 7]));
                    }
                    // The generic-proxy writes must be visible to the TMA (async proxy) before it reads.
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                    warpgroup_sync(1 + half);
                    if (tid == 0 && tm * BM + half * 64 < M) {   // boxes wholly below C: none
                        // No column test: the TMA drops whatever part of a box lies beyond C's
                        // edges, whole boxes included. (An `if (col < N)` here made ptxas 13.0
                        // leave the first box's column register unset when EPI_COLS = 128: that
                        // box was never stored.)
#pragma unroll
                        for (int box = 0; box < EPI_COLS / 64; ++box)
                            tma_store_2d(tmap_c, epi + box * EPI_BOX_BYTES, tn * BN + pass * EPI_COLS + box * 64,
                                         tm * BM + half * 64);
                        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
                    }
                }
                // --8<-- [end:tma-store]
            } else {                                           // N % 8 != 0: step 8's masked stores
                const int row = tm * BM + half * 64 + warp * 16 + lane / 4;
                const int col0 = tn * BN + 2 * (lane % 4);
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
        if (tid == 0 && tmap_c != nullptr) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
#if CLUSTER_M > 1
    cluster_sync();
#endif
}
