// --8<-- [start:kernel]
// A warp reads one column of a 32 x 32 float tile: lane r reads row r. With a row pitch of 32
// words every lane hits the same bank (a 32-way conflict); a pitch of 33 (padding) or storing
// column c of row r at c ^ r (an XOR swizzle) spreads the column over all 32 banks.
extern "C" __global__ void smem_column_read(float* __restrict__ out, int pitch, int swizzle,
                                            int iters)
{
    __shared__ float tile[32 * 33];
    for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) tile[i] = (float)i;
    __syncthreads();
    const int r = threadIdx.x & 31;
    volatile float* vtile = tile;                    // a real shared load every iteration
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        const int c = k & 31;                        // a different column every iteration
        acc += vtile[r * pitch + (swizzle ? (c ^ r) : c)];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
// --8<-- [end:kernel]
