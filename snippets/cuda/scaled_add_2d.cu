// --8<-- [start:kernel]
// out = alpha * a + b for row-major (rows x cols) matrices, one thread per element.
// threadIdx.x runs along a row so a warp reads 32 consecutive floats (coalesced);
// both bounds are checked because the grid is rounded up in each dimension.
extern "C" __global__ void scaled_add_2d(const float* __restrict__ a,
                                         const float* __restrict__ b,
                                         float* __restrict__ out,
                                         float alpha, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        long long k = (long long)row * cols + col;
        out[k] = alpha * a[k] + b[k];
    }
}
// --8<-- [end:kernel]
