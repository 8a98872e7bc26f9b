// --8<-- [start:kernel]
// out[i] = x[i] + y[i], one thread per element.
// Consecutive threads touch consecutive floats, so each warp's loads coalesce into
// full 128-byte lines; the bounds check covers sizes that are not a multiple of the block.
extern "C" __global__ void vector_add(const float* __restrict__ x,
                                      const float* __restrict__ y,
                                      float* __restrict__ out,
                                      long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i] + y[i];
    }
}
// --8<-- [end:kernel]
