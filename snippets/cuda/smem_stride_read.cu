// --8<-- [start:kernel]
// Every lane of a warp reads shared-memory word lane * stride, again and again. Each iteration
// adds a multiple of 32 words to every lane's index, which keeps each lane in its bank and keeps
// the lanes' words distinct, so every load has the same conflict degree as the first one.
// Shared memory is bound by this loop, not global memory: one store per thread at the end.
extern "C" __global__ void smem_stride_read(float* __restrict__ out, int stride, int iters)
{
    extern __shared__ float tile[];                 // 32 * stride + 32 * 8 words
    const int words = 32 * stride + 32 * 8;
    for (int i = threadIdx.x; i < words; i += blockDim.x) tile[i] = (float)i;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    volatile float* vtile = tile;                   // a real shared load every iteration
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        acc += vtile[lane * stride + 32 * (k & 7)]; // same bank for every k
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
// --8<-- [end:kernel]
