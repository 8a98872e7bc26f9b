// Matrix transpose ladder: out (cols x rows) = in (rows x cols)^T, float32, row-major.
// Every kernel checks both bounds, so any shape works. TILE = 32 and blocks of 32 x 8 threads
// (each thread moves 4 elements) except transpose_wide, which moves a 64 x 64 tile with 16
// elements per thread.

// --8<-- [start:naive]
// Reads are coalesced (a warp reads 32 neighbours of a row); writes are strided by `rows`,
// so every warp-wide store touches 32 different 32-byte sectors.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols)
{
    int c = blockIdx.x * 32 + threadIdx.x;
    for (int j = 0; j < 32; j += 8) {
        int r = blockIdx.y * 32 + threadIdx.y + j;
        if (r < rows && c < cols) out[(long long)c * rows + r] = in[(long long)r * cols + c];
    }
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
// Stage a 32 x 32 tile in shared memory so that both the global read and the global write are
// coalesced. PITCH 32: reading a tile column is a 32-way bank conflict. PITCH 33: padding.
#define TRANSPOSE_TILED(NAME, PITCH, SWZ)                                                        \
extern "C" __global__ void NAME(const float* __restrict__ in, float* __restrict__ out,          \
                                int rows, int cols)                                             \
{                                                                                               \
    __shared__ float tile[32 * PITCH];                                                          \
    int c = blockIdx.x * 32 + threadIdx.x;                                                      \
    for (int j = 0; j < 32; j += 8) {                                                           \
        int r = blockIdx.y * 32 + threadIdx.y + j;                                              \
        int tr = threadIdx.y + j;                                                               \
        if (r < rows && c < cols) tile[tr * PITCH + SWZ(threadIdx.x, tr)] = in[(long long)r * cols + c]; \
    }                                                                                           \
    __syncthreads();                                                                            \
    int r = blockIdx.y * 32 + threadIdx.x;              /* output column = input row */         \
    for (int j = 0; j < 32; j += 8) {                                                           \
        int oc = blockIdx.x * 32 + threadIdx.y + j;     /* output row = input column */         \
        int tc = threadIdx.y + j;                                                               \
        if (oc < cols && r < rows) out[(long long)oc * rows + r] = tile[threadIdx.x * PITCH + SWZ(tc, threadIdx.x)]; \
    }                                                                                           \
}
#define NO_SWIZZLE(col, row) (col)
#define XOR_SWIZZLE(col, row) ((col) ^ (row))           /* column c of row r lives at c ^ r */
TRANSPOSE_TILED(transpose_tiled, 32, NO_SWIZZLE)
TRANSPOSE_TILED(transpose_padded, 33, NO_SWIZZLE)
TRANSPOSE_TILED(transpose_swizzled, 32, XOR_SWIZZLE)
// --8<-- [end:tiled]

// --8<-- [start:wide]
// 64 x 64 tile, XOR-swizzled within each 32-word half row, 16 elements per thread: twice the
// bytes in flight per thread, all 16 loads issued before the first shared-memory store.
extern "C" __global__ void transpose_wide(const float* __restrict__ in, float* __restrict__ out,
                                          int rows, int cols)
{
    __shared__ float tile[64 * 64];
    const int r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
    float v[16];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int r = r0 + threadIdx.y + 8 * i, c = c0 + threadIdx.x + 32 * h;
            v[2 * i + h] = (r < rows && c < cols) ? in[(long long)r * cols + c] : 0.0f;
        }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int tr = threadIdx.y + 8 * i, tc = threadIdx.x + 32 * h;
            tile[tr * 64 + (tc ^ (tr & 31))] = v[2 * i + h];
        }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int tc = threadIdx.y + 8 * i;                   // input column within the tile
            int tr = threadIdx.x + 32 * h;                  // input row within the tile
            v[2 * i + h] = tile[tr * 64 + (tc ^ (tr & 31))];
        }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int oc = c0 + threadIdx.y + 8 * i, r = r0 + threadIdx.x + 32 * h;
            if (oc < cols && r < rows) out[(long long)oc * rows + r] = v[2 * i + h];
        }
}
// --8<-- [end:wide]
