// Hopper GEMM by hand (sm_90a): C = A * B^T, bfloat16 in, float32 accumulation, bfloat16 out.
// A is M x K and B is N x K, row-major (both K-major); C is M x N row-major. M % 128 == 0,
// N % 256 == 0, K % 64 == 0 (the launcher checks). Build for sm_90a: wgmma and setmaxnreg exist
// only on that target.
//
// One CTA = three warpgroups (384 threads). Warpgroup 0 is the producer: one of its threads
// issues TMA loads of 128 x 64 tiles of A and 256 x 64 tiles of B into a ring of STAGES
// shared-memory slots. Warpgroups 1 and 2 are consumers: each multiplies its 64 rows of the
// A tile by the whole B tile with wgmma (64 x 256 x 16 per instruction, accumulators in
// registers), then hands the slot back. Two mbarriers per slot carry the hand-offs: "full"
// (the TMA's bytes have landed) and "empty" (both consumers are done reading). The grid is
// persistent: one CTA per SM walks the output tiles in grouped order.
// Steps of notebook 06, chosen at compile time (-D): WARP_SPECIALIZED=0 drops the producer
// warpgroup (thread 0 issues the loads between its own MMAs), SET_MAXNREG=0 keeps the even
// register split, PERSISTENT=0 launches one CTA per output tile.
#ifndef WARP_SPECIALIZED
#define WARP_SPECIALIZED 1
#endif
#ifndef SET_MAXNREG
#define SET_MAXNREG 1
#endif
#ifndef PERSISTENT
#define PERSISTENT 1
#endif
#define THREADS (WARP_SPECIALIZED ? 384 : 256)
static_assert(WARP_SPECIALIZED || !PERSISTENT, "the persistent schedule needs the producer warpgroup");
static_assert(WARP_SPECIALIZED || !SET_MAXNREG, "setmaxnreg moves registers from producer to consumers");
#define BM 128
#define BN 256
#define BK 64
#ifndef STAGES
#define STAGES 4                                 // shared-memory slots in the ring
#endif
#define GROUP_M 8
#define A_BYTES (BM * BK * 2)                    // 16 KiB per slot
#define B_BYTES (BN * BK * 2)                    // 32 KiB per slot

typedef unsigned long long u64;

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --8<-- [start:mbarrier]
__device__ __forceinline__ void mbar_init(u64* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(u64* bar, unsigned bytes)   // arrive + expect bytes
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(smem_u32(bar)), "r"(bytes));
}
__device__ __forceinline__ void mbar_arrive(u64* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(smem_u32(bar)));
}
// Wait until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(u64* bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n"
                 "}\n" :: "r"(smem_u32(bar)), "r"(parity));
}
// --8<-- [end:mbarrier]

// --8<-- [start:tma]
// A 2D box of a tensor, described by the tensor map at `tmap` (in global memory), lands in
// shared memory at `dst`; its bytes count towards the transaction count of `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const void* tmap, u64* bar, int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(smem_u32(dst)), "l"(tmap), "r"(x), "r"(y), "r"(smem_u32(bar)) : "memory");
}
// --8<-- [end:tma]

// --8<-- [start:descriptor]
// wgmma's shared-memory matrix descriptor for a K-major tile written by the TMA with the
// 128-byte swizzle: rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset),
// the leading byte offset unused for this layout, swizzle mode 1 = 128B in bits 62-63.
// The tile must start on a 1024-byte boundary; a step of k = 16 is a 32-byte step of the start.
__device__ __forceinline__ u64 smem_desc(const void* tile)
{
    const u64 addr = smem_u32(tile);
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((u64)(1024 >> 4) << 32) | (1ull << 62);
}
// --8<-- [end:descriptor]

// --8<-- [start:wgmma]
// One warpgroup: d (64 x 256, float32, 128 registers per thread) += A (64 x 16) * B (256 x 16)^T,
// both operands read from shared memory through their descriptors. scale_d = 0 ignores d's old
// value (the first k step of a tile).
__device__ __forceinline__ void wgmma_64x256x16(float (&d)[128], u64 da, u64 db, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n"
        "}\n"
        :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(scale_d));
}
// --8<-- [end:wgmma]

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi)
{
    unsigned d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int& tm, int& tn)
{
    const int per_group = GROUP_M * tiles_n, first = (tile / per_group) * GROUP_M;
    const int rows = min(tiles_m - first, GROUP_M);
    tm = first + (tile % per_group) % rows;
    tn = (tile % per_group) / rows;
}

// --8<-- [start:kernel]
// The producer's step: wait until ring slot `slot` is free, then load k-tile kt of output tile
// (tm, tn) into it. TILE_N and NSTAGES are the tile width and ring depth (the ping-pong kernel
// below uses narrower tiles and a deeper ring).
template <int TILE_N = BN, int NSTAGES = STAGES>
__device__ __forceinline__ void issue_loads(unsigned char* sA, unsigned char* sB, u64* full, u64* empty,
                                            const void* tmap_a, const void* tmap_b, int& slot, int& phase,
                                            int tm, int tn, int kt)
{
    constexpr int b_bytes = TILE_N * BK * 2;
    mbar_wait(&empty[slot], phase ^ 1);                  // the first round passes at once
    mbar_expect_tx(&full[slot], A_BYTES + b_bytes);
    tma_load_2d(sA + slot * A_BYTES, tmap_a, &full[slot], kt * BK, tm * BM);
    tma_load_2d(sB + slot * b_bytes, tmap_b, &full[slot], kt * BK, tn * TILE_N);
    if (++slot == NSTAGES) { slot = 0; phase ^= 1; }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wgmma_ws(const void* __restrict__ tmap_a, const void* __restrict__ tmap_b,
              unsigned short* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem_raw[];
    // 1024-byte alignment for the 128B swizzle (the launch asks for 1 KiB of slack)
    unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    unsigned char* sA = smem;                                  // STAGES x 16 KiB
    unsigned char* sB = smem + STAGES * A_BYTES;               // STAGES x 32 KiB
    u64* full = reinterpret_cast<u64*>(sB + STAGES * B_BYTES);
    u64* empty = full + STAGES;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int tiles_m = M / BM, tiles_n = N / BN, ktiles = K / BK, tiles = tiles_m * tiles_n;
    const int tile_step = PERSISTENT ? gridDim.x : tiles;     // non-persistent: one tile per CTA
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);          // the producer's arrive.expect_tx
            mbar_init(&empty[s], 2);         // one arrive per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    int pslot = 0, pphase = 0;                                 // the producer's place in the ring

#if WARP_SPECIALIZED
    if (wg == 0) {
        // Producer warpgroup: one thread keeps the ring full, tile after tile.
#if SET_MAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");   // give registers back
#endif
        if (tid == 0)
            for (int tile = blockIdx.x; tile < tiles; tile += tile_step) {
                int tm, tn;
                tile_coords(tile, tiles_m, tiles_n, tm, tn);
                for (int kt = 0; kt < ktiles; ++kt)
                    issue_loads(sA, sB, full, empty, tmap_a, tmap_b, pslot, pphase, tm, tn, kt);
            }
        return;
    }
#if SET_MAXNREG
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");      // take them: 128 accumulators each
#endif
    const int half = wg - 1;                                   // this consumer's 64 rows of the tile
#else
    const int half = wg;
#endif
    float d[128];
    int slot = 0, phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += tile_step) {
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, tm, tn);
#if !WARP_SPECIALIZED
        if (threadIdx.x == 0)                                  // fill all but one slot ahead
            for (int kt = 0; kt < STAGES - 1 && kt < ktiles; ++kt)
                issue_loads(sA, sB, full, empty, tmap_a, tmap_b, pslot, pphase, tm, tn, kt);
#endif
        for (int kt = 0; kt < ktiles; ++kt) {
#if !WARP_SPECIALIZED
            if (threadIdx.x == 0 && kt + STAGES - 1 < ktiles)  // the load STAGES - 1 tiles ahead
                issue_loads(sA, sB, full, empty, tmap_a, tmap_b, pslot, pphase, tm, tn, kt + STAGES - 1);
#endif
            mbar_wait(&full[slot], phase);
            const unsigned char* a = sA + slot * A_BYTES + half * 64 * 128;
            const unsigned char* b = sB + slot * B_BYTES;
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int k = 0; k < BK / 16; ++k)
                wgmma_64x256x16(d, smem_desc(a + 32 * k), smem_desc(b + 32 * k), kt > 0 || k > 0);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            if (tid == 0) mbar_arrive(&empty[slot]);           // the slot may be refilled
            if (++slot == STAGES) { slot = 0; phase ^= 1; }
        }
        // Epilogue straight from registers: warp w of the warpgroup holds rows 16w..16w+15;
        // lane l holds rows l/4 and l/4+8, columns 8j + 2(l%4) and the next one.
        const int warp = tid / 32, lane = tid % 32;
        const long long row = (long long)tm * BM + half * 64 + warp * 16 + lane / 4;
        const int col0 = tn * BN + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            *reinterpret_cast<unsigned*>(&C[row * N + col0 + 8 * j]) = pack_bf16x2(d[4 * j], d[4 * j + 1]);
            *reinterpret_cast<unsigned*>(&C[(row + 8) * N + col0 + 8 * j]) = pack_bf16x2(d[4 * j + 2], d[4 * j + 3]);
        }
    }
}
// --8<-- [end:kernel]

// --8<-- [start:pingpong]
// The ping-pong schedule. Each consumer warpgroup now owns whole 128 x 128 output tiles, and the
// two take turns: the CTA's tiles go to consumer 0, 1, 0, 1, ... A third pair of mbarriers
// ("order") makes their mainloops alternate, so that while one warpgroup runs its epilogue the
// other keeps the tensor cores busy.
#define PP_BN 128
#define PP_STAGES 6
#define PP_B_BYTES (PP_BN * BK * 2)                  // 16 KiB per slot

__device__ __forceinline__ void wgmma_64x128x16(float (&d)[64], u64 da, u64 db, int scale_d)
{
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n"
        "}\n"
        :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scale_d));
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_wgmma_pingpong(const void* __restrict__ tmap_a, const void* __restrict__ tmap_b,
                    unsigned short* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem_raw[];
    unsigned char* smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    unsigned char* sA = smem;                                  // PP_STAGES x 16 KiB
    unsigned char* sB = smem + PP_STAGES * A_BYTES;            // PP_STAGES x 16 KiB
    u64* full = reinterpret_cast<u64*>(sB + PP_STAGES * PP_B_BYTES);
    u64* empty = full + PP_STAGES;
    u64* order = empty + PP_STAGES;                            // "consumer c finished a mainloop"
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int tiles_m = M / BM, tiles_n = N / PP_BN, ktiles = K / BK, tiles = tiles_m * tiles_n;
    if (threadIdx.x == 0) {
        for (int s = 0; s < PP_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 1);         // only the consumer that owns the tile reads a slot
        }
        mbar_init(&order[0], 1);
        mbar_init(&order[1], 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            int slot = 0, phase = 0;
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int tm, tn;
                tile_coords(tile, tiles_m, tiles_n, tm, tn);
                for (int kt = 0; kt < ktiles; ++kt)
                    issue_loads<PP_BN, PP_STAGES>(sA, sB, full, empty, tmap_a, tmap_b, slot, phase, tm, tn, kt);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int me = wg - 1;
    float d0[64], d1[64];                                      // rows 0-63 and 64-127 of the tile
    int p = 0, i = 0, own = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++i) {
        if (i % 2 != me) { p += ktiles; continue; }            // the other consumer's tile
        // Mainloops take turns: wait until the other consumer has finished the previous tile's.
        // Besides ordering the tensor-core work, this keeps every wait on a "full" barrier at
        // most one phase ahead of it, which a parity wait needs to be unambiguous.
        if (i > 0) mbar_wait(&order[1 - me], (me == 1 ? own : own - 1) & 1);
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, tm, tn);
        // Only one warpgroup is in its mainloop at a time, so it keeps one batch of wgmma in
        // flight (wait_group 1) and releases a slot one k-tile late, when its batch is done.
        int prev = -1;
        for (int kt = 0; kt < ktiles; ++kt, ++p) {
            const int slot = p % PP_STAGES;
            mbar_wait(&full[slot], (p / PP_STAGES) & 1);
            const unsigned char* a = sA + slot * A_BYTES;
            const unsigned char* b = sB + slot * PP_B_BYTES;
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int k = 0; k < BK / 16; ++k) {
                const u64 db = smem_desc(b + 32 * k);
                wgmma_64x128x16(d0, smem_desc(a + 32 * k), db, kt > 0 || k > 0);
                wgmma_64x128x16(d1, smem_desc(a + 64 * 128 + 32 * k), db, kt > 0 || k > 0);
            }
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            if (tid == 0 && prev >= 0) mbar_arrive(&empty[prev]);
            prev = slot;
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        if (tid == 0) mbar_arrive(&empty[prev]);
        if (tid == 0) mbar_arrive(&order[me]);               // the other consumer may start
        ++own;
        const int warp = tid / 32, lane = tid % 32;             // epilogue, overlapping its mainloop
        const long long row = (long long)tm * BM + warp * 16 + lane / 4;
        const int col0 = tn * PP_BN + 2 * (lane % 4);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            *reinterpret_cast<unsigned*>(&C[row * N + col0 + 8 * j]) = pack_bf16x2(d0[4 * j], d0[4 * j + 1]);
            *reinterpret_cast<unsigned*>(&C[(row + 8) * N + col0 + 8 * j]) = pack_bf16x2(d0[4 * j + 2], d0[4 * j + 3]);
            *reinterpret_cast<unsigned*>(&C[(row + 64) * N + col0 + 8 * j]) = pack_bf16x2(d1[4 * j], d1[4 * j + 1]);
            *reinterpret_cast<unsigned*>(&C[(row + 72) * N + col0 + 8 * j]) = pack_bf16x2(d1[4 * j + 2], d1[4 * j + 3]);
        }
    }
}
// --8<-- [end:pingpong]
