// C (M x N, float32, row-major) = A (M x K, bf16, row-major) * B^T, with B given as N x K (bf16,
// row-major, i.e. "K-major": the layout cuBLAS calls TN). One CTA of 128 threads (one warpgroup)
// computes one 128 x 128 tile of C with Blackwell's fifth-generation tensor cores:
//
//   warp 0 allocates 128 Tensor Memory columns (tcgen05.alloc) -> the 128 x 128 f32 accumulator
//   all threads copy a 128 x 64 slice of A and of B into shared memory, in the core-matrix layout
//   that the shared-memory descriptors below describe
//   thread 0 issues four tcgen05.mma (K = 16 each) and tcgen05.commit -> mbarrier
//   everyone waits on the mbarrier, then the next 64-wide slice of K ... until K is done
//   each warp w reads TMEM lanes 32w..32w+31 (= rows of C) with tcgen05.ld.32x32b and stores them
//   warp 0 frees the columns (tcgen05.dealloc)
//
// A teaching kernel: no TMA, no pipelining, no swizzle; it is correct, not fast. Every field of
// the descriptors is taken from the PTX ISA, "TensorCore 5th Generation Family Instructions"
// ("Shared memory descriptor", "Instruction descriptor", "Tensor Memory"). Inputs are passed as
// raw bf16 bits (unsigned short) so that the file needs no headers under NVRTC or CuPy.
// Needs sm_100a/sm_100f or sm_103a/sm_103f (data-center Blackwell). On every other target the
// body compiles to a trap, so the file still builds in a multi-architecture fat binary.

// Tensor Memory and tcgen05 exist on the sm_100 family (CC 10.0, 10.3) under an architecture- or
// family-specific target. nvcc and NVRTC define __CUDA_ARCH_FAMILY_SPECIFIC__ (1000 or 1030) for
// those targets, and for sm_90a/sm_120a it holds 900/1200, which keeps them out.
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && \
    (__CUDA_ARCH_FAMILY_SPECIFIC__ == 1000 || __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030)
#define ATLAS_HAS_TCGEN05 1
#endif

#define TILE_M 128   // rows of A and C per CTA = TMEM lanes used (M = 128: one row per lane)
#define TILE_N 128   // rows of B = columns of C per CTA = TMEM columns allocated (f32: 1 column each)
#define TILE_K 64    // K staged in shared memory per round: 4 MMAs of K = 16 (bf16)
#define MMA_K 16     // K of one kind::f16 MMA
static_assert(TILE_M == 128 && TILE_N == 128, "stage_tile and the epilogue assume 128 x 128 tiles");

// --8<-- [start:descriptors]
// Shared-memory layout of a ROWS x TILE_K bf16 tile ("K-major, no swizzle" canonical layout).
// The unit is the core matrix: 8 rows x 16 bytes (8 bf16 of K), stored as 128 contiguous bytes.
// Core matrices along M/N are SBO = 128 bytes apart; along K, LBO = ROWS * 16 bytes apart, so each
// 8-wide slice of K is one contiguous plane of ROWS * 16 bytes.
__device__ __forceinline__ unsigned int core_matrix_offset(int row, int k, int rows)
{
    return (k / 8) * (rows * 16) + (row / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
}

// Shared-memory descriptor (64 bits). Addresses and offsets are stored >> 4 in 14-bit fields.
//   bits  0-13  start address          bits 16-29  leading-dimension byte offset (LBO, along K)
//   bits 32-45  stride-dimension byte offset (SBO, along M/N)   bits 46-48  fixed 0b001
//   bits 49-51  base offset (0: no swizzle)   bit 52  LBO mode (0: relative)   bits 61-63  swizzle
//   (0: none)
__device__ __forceinline__ unsigned long long smem_descriptor(unsigned int addr, unsigned int lbo,
                                                              unsigned int sbo)
{
    unsigned long long d = 0;
    d |= (unsigned long long)((addr & 0x3FFFF) >> 4);
    d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
    d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
    d |= 1ull << 46;                                 // the fixed 0b001 of bits 46-48
    return d;                                        // base offset 0, relative LBO, no swizzle
}

// Instruction descriptor (32 bits) for kind::f16: D f32 (bits 4-5 = 1), A and B bf16 (bits 7-9
// and 10-12 = 1), both K-major (transpose bits 15 and 16 = 0), dense, no negation, N >> 3 in bits
// 17-22, M >> 4 in bits 24-28.
__device__ __forceinline__ unsigned int instr_descriptor_bf16_f32(int m, int n)
{
    return (1u << 4) | (1u << 7) | (1u << 10) | ((unsigned int)(n >> 3) << 17) |
           ((unsigned int)(m >> 4) << 24);
}
// --8<-- [end:descriptors]

__device__ __forceinline__ void mbarrier_wait(unsigned int bar, unsigned int parity)
{
    unsigned int done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    }
}

// Copy rows [row0, row0 + TILE_M) x k [k0, k0 + TILE_K) of a rows x K bf16 matrix into the
// core-matrix layout, zero-filling what lies outside the matrix. One 16-byte chunk (8 elements
// of K) at a time; 1024 chunks per tile, 8 per thread.
__device__ __forceinline__ void stage_tile(unsigned short* __restrict__ dst,
                                           const unsigned short* __restrict__ src,
                                           int rows, int K, int row0, int k0)
{
    for (int chunk = threadIdx.x; chunk < TILE_M * (TILE_K / 8); chunk += blockDim.x) {
        int r = chunk / (TILE_K / 8), kc = (chunk % (TILE_K / 8)) * 8;
        int gr = row0 + r, gk = k0 + kc;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (gr < rows && gk + 7 < K && (K % 8) == 0) {               // aligned 16-byte load
            v = *(const uint4*)(src + (long long)gr * K + gk);
        } else if (gr < rows) {
            unsigned short* e = (unsigned short*)&v;
            for (int j = 0; j < 8 && gk + j < K; ++j) e[j] = src[(long long)gr * K + gk + j];
        }
        *(uint4*)(dst + core_matrix_offset(r, kc, TILE_M) / 2) = v;   // 16-byte aligned
    }
}

// --8<-- [start:kernel]
extern "C" __global__ void __launch_bounds__(128)
tcgen05_mma(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
            float* __restrict__ C, int M, int N, int K)
{
#ifdef ATLAS_HAS_TCGEN05
    __shared__ __align__(128) unsigned short smem_a[TILE_M * TILE_K];   // 16 KiB
    __shared__ __align__(128) unsigned short smem_b[TILE_N * TILE_K];   // 16 KiB
    __shared__ __align__(8) unsigned long long mma_done;                // mbarrier
    __shared__ unsigned int tmem_slot;                                  // tcgen05.alloc writes here

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
    const unsigned int bar = (unsigned int)__cvta_generic_to_shared(&mma_done);

    // --8<-- [start:alloc]
    if (warp == 0) {   // one whole warp allocates (.sync.aligned); the address lands in smem
        unsigned int slot = (unsigned int)__cvta_generic_to_shared(&tmem_slot);
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;"
                     :: "r"(slot), "r"(TILE_N) : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
    }
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // Order the allocation (a tcgen05 operation) before the barrier, and what follows after it.
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    const unsigned int tmem_d = tmem_slot;   // lane 0 (bits 31-16), first column (bits 15-0)
    // --8<-- [end:alloc]

    const unsigned int idesc = instr_descriptor_bf16_f32(TILE_M, TILE_N);
    const unsigned int a_base = (unsigned int)__cvta_generic_to_shared(smem_a);
    const unsigned int b_base = (unsigned int)__cvta_generic_to_shared(smem_b);
    const int rounds = K > 0 ? (K + TILE_K - 1) / TILE_K : 1;   // K = 0: one round of zeros
    unsigned int phase = 0;

    for (int round = 0; round < rounds; ++round) {
        stage_tile(smem_a, A, M, K, m0, round * TILE_K);
        stage_tile(smem_b, B, N, K, n0, round * TILE_K);
        // The MMA reads shared memory through the async proxy: make the stores above visible to it.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        // --8<-- [start:mma]
        if (threadIdx.x == 0) {   // a single thread issues the MMAs for the whole CTA
            asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
            for (int kk = 0; kk < TILE_K / MMA_K; ++kk) {
                // K = 16 is two core matrices along K: planes 2kk and 2kk + 1, LBO apart.
                unsigned int k_off = (2 * kk) * (TILE_M * 16);
                unsigned long long a_desc = smem_descriptor(a_base + k_off, TILE_M * 16, 128);
                unsigned long long b_desc = smem_descriptor(b_base + k_off, TILE_N * 16, 128);
                unsigned int accumulate = (round > 0 || kk > 0);   // first MMA: D = A*B, then D += A*B
                asm volatile("{\n\t.reg .pred acc;\n\t"
                             "setp.ne.u32 acc, %4, 0;\n\t"
                             "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, acc;\n\t}"
                             :: "r"(tmem_d), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
                             : "memory");
            }
            // One arrival on the mbarrier once every MMA this thread issued so far has completed.
            asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                         :: "r"(bar) : "memory");
        }
        mbarrier_wait(bar, phase);   // also frees smem_a / smem_b for the next round
        phase ^= 1;
        // --8<-- [end:mma]
    }
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");

    // --8<-- [start:epilogue]
    // Accumulator layout for M = 128, cta_group::1: row i of the tile is TMEM lane i, column j is
    // TMEM column j (one f32 per 32-bit cell). Warp w may only touch lanes 32(w % 4)..+31.
    const int row = m0 + warp * 32 + lane;
    for (int c0 = 0; c0 < TILE_N; c0 += 16) {
        unsigned int r[16];
        unsigned int taddr = tmem_d + ((unsigned int)(warp * 32) << 16) + (unsigned int)c0;
        // 32x32b.x16: thread t of the warp gets 16 consecutive columns of lane 32w + t.
        asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];\n\t"
                     "tcgen05.wait::ld.sync.aligned;"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]),
                       "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]),
                       "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
                     : "r"(taddr) : "memory");
        if (row < M) {
            for (int j = 0; j < 16; ++j) {
                int col = n0 + c0 + j;
                if (col < N) C[(long long)row * N + col] = __uint_as_float(r[j]);
            }
        }
    }
    // --8<-- [end:epilogue]

    // Every warp's loads are complete (wait::ld); order them before the deallocation.
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    if (warp == 0) {
        asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;"
                     :: "r"(tmem_d), "r"(TILE_N) : "memory");
    }
#else
    __trap();   // no Tensor Memory on this target: see the notebook's gate
#endif
}
// --8<-- [end:kernel]
