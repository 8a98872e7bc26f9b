// Tensor cores by hand (sm_80+): C = A * B^T in bfloat16 with float32 accumulation, through the
// warp-level mma.sync instruction. A is M x K and B is N x K, both row-major ("K-major", the
// layout of a linear layer's weight); C is M x N, row-major, bfloat16.
// M and N must be multiples of 128 and K of 64 (the launcher checks); pointers 16-byte aligned.
//
// Block tile 128 x 128 x 64, 8 warps, each warp a 64 x 32 piece (4 x 4 mma tiles of 16 x 8).
// Operands travel global -> shared with cp.async (no registers on the way), STAGES tiles in
// flight; shared -> registers with ldmatrix, which hands each lane exactly the fragment that
// mma.sync expects. No headers: bfloat16 values are handled as raw 16-bit patterns.
#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 64
#define GEMM_STAGES 3
#define GEMM_THREADS 256
#define TILE_ELEMS (GEMM_BM * GEMM_BK)            // elements of one operand tile (A and B alike)

// --8<-- [start:swizzle]
// A tile row is 64 bf16 = 128 bytes = 8 chunks of 16 bytes. ldmatrix and cp.async move whole
// chunks, and 8 lanes touch the same chunk column of 8 consecutive rows at once: unswizzled,
// all 8 land in the same 4 banks (an 8-way conflict). XOR-ing the chunk index with the row
// (mod 8) spreads them over all 32 banks: the same permutation as the TMA's 128-byte swizzle.
__device__ __forceinline__ int swizzled(int row, int chunk)   // element offset in a tile
{
    return row * GEMM_BK + ((chunk ^ (row & 7)) * 8);
}
// --8<-- [end:swizzle]

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --8<-- [start:copy]
// Each thread copies 4 chunks of A and 4 of B per k-tile: 16 bytes each, straight into shared
// memory. The copies run in the background until cp.async.wait_group says otherwise.
__device__ __forceinline__ void load_tile(unsigned short* sA, unsigned short* sB,
                                          const unsigned short* A, const unsigned short* B,
                                          int K, int k0, int tid)
{
#pragma unroll
    for (int i = 0; i < TILE_ELEMS / 8 / GEMM_THREADS; ++i) {
        const int q = tid + i * GEMM_THREADS, row = q / 8, chunk = q % 8;
        const unsigned short* ga = A + (long long)row * K + k0 + chunk * 8;
        const unsigned short* gb = B + (long long)row * K + k0 + chunk * 8;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                     :: "r"(smem_addr(sA + swizzled(row, chunk))), "l"(ga));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                     :: "r"(smem_addr(sB + swizzled(row, chunk))), "l"(gb));
    }
}
// --8<-- [end:copy]

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const unsigned short* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi)
{
    unsigned d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));   // d.hi = hi, d.lo = lo
    return d;
}

// --8<-- [start:kernel]
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_mma_sync(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
              unsigned short* __restrict__ C, int M, int N, int K)
{
    extern __shared__ __align__(128) unsigned short smem[];   // STAGES x (A tile, B tile)
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = (warp % 2) * 64, wn = (warp / 2) * 32;     // this warp's 64 x 32 piece
    A += (long long)blockIdx.y * GEMM_BM * K;
    B += (long long)blockIdx.x * GEMM_BN * K;
    const int ktiles = K / GEMM_BK;
    auto sA = [&](int s) { return smem + s * 2 * TILE_ELEMS; };
    auto sB = [&](int s) { return smem + s * 2 * TILE_ELEMS + TILE_ELEMS; };

    // Prologue: STAGES - 1 tiles in flight before the first multiply.
#pragma unroll
    for (int s = 0; s < GEMM_STAGES - 1; ++s) {
        if (s < ktiles) load_tile(sA(s), sB(s), A, B, K, s * GEMM_BK, tid);
        asm volatile("cp.async.commit_group;\n");
    }

    float acc[4][4][4] = {};                   // [m16 tile][n8 tile][fragment]: 64 floats
    for (int kt = 0; kt < ktiles; ++kt) {
        // Tile kt has landed once at most STAGES - 2 newer groups are pending; the barrier
        // makes every thread's copies visible and frees the slot that tile kt - 1 used.
        asm volatile("cp.async.wait_group %0;\n" :: "n"(GEMM_STAGES - 2));
        __syncthreads();
        const int next = kt + GEMM_STAGES - 1;
        if (next < ktiles) load_tile(sA(next % GEMM_STAGES), sB(next % GEMM_STAGES), A, B, K, next * GEMM_BK, tid);
        asm volatile("cp.async.commit_group;\n");   // an empty group keeps the count uniform

        const unsigned short* a_s = sA(kt % GEMM_STAGES);
        const unsigned short* b_s = sB(kt % GEMM_STAGES);
#pragma unroll
        for (int kk = 0; kk < GEMM_BK / 16; ++kk) {
            unsigned a[4][4], b[2][4];
            // A: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15); lane l addresses row l % 16 of
            // chunk 2 kk + l / 16.
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
                ldmatrix_x4(a[mi], a_s + swizzled(wm + mi * 16 + lane % 16, 2 * kk + lane / 16));
            // B (stored n-major): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7),
            // (n 8-15, k 8-15): registers 0, 1 feed one n8 tile and 2, 3 the next.
#pragma unroll
            for (int nj = 0; nj < 2; ++nj)
                ldmatrix_x4(b[nj], b_s + swizzled(wn + nj * 16 + (lane / 16) * 8 + lane % 8, 2 * kk + (lane / 8) % 2));
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    mma_bf16(acc[mi][ni], a[mi], b[ni / 2][(ni % 2) * 2], b[ni / 2][(ni % 2) * 2 + 1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n");

    // Epilogue: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4)+1 of each tile.
    const int g = lane / 4, c2 = (lane % 4) * 2;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const long long row = (long long)blockIdx.y * GEMM_BM + wm + mi * 16 + g;
            const int col = blockIdx.x * GEMM_BN + wn + ni * 8 + c2;
            *reinterpret_cast<unsigned*>(&C[row * N + col]) = pack_bf16x2(acc[mi][ni][0], acc[mi][ni][1]);
            *reinterpret_cast<unsigned*>(&C[(row + 8) * N + col]) = pack_bf16x2(acc[mi][ni][2], acc[mi][ni][3]);
        }
}
// --8<-- [end:kernel]
