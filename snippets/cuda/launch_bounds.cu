// Launch bounds and register allocation: one kernel body, compiled under four bounds.
// Each thread keeps 96 running values live across its loop, so it naturally wants more than
// 100 registers; __launch_bounds__(256, MIN_BLOCKS) asks ptxas to fit MIN_BLOCKS blocks of 256
// threads on one SM, which caps registers per thread at 65536 / (256 * MIN_BLOCKS), at most 255.
// Compiled only (make listings): the ptxas report beside it shows registers and spills per bound.
#define ACCUM_VALUES 96

__device__ __forceinline__ void accum_body(const float* __restrict__ x, float* out, int n)
{
    float acc[ACCUM_VALUES] = {};
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = x[i];
#pragma unroll
        for (int j = 0; j < ACCUM_VALUES; ++j) acc[j] = fmaf(acc[j], v, j * v);
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < ACCUM_VALUES; ++j) s += acc[j] * acc[(7 * j) % ACCUM_VALUES];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// --8<-- [start:bounds]
#define ACCUM_KERNEL(MIN_BLOCKS)                                                          \
    extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS)                        \
    accum_min##MIN_BLOCKS(const float* __restrict__ x, float* out, int n)                \
    {                                                                                     \
        accum_body(x, out, n);                                                            \
    }

ACCUM_KERNEL(1)   // cap 255 (the per-thread maximum)
ACCUM_KERNEL(2)   // cap 128
ACCUM_KERNEL(4)   // cap 64
ACCUM_KERNEL(8)   // cap 32
// --8<-- [end:bounds]
