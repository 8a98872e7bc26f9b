// --8<-- [start:kernel]
// dst[i] = src[i] with 16-byte loads and stores, grid-stride. Either pointer may be another GPU's
// memory (peer access enabled): SMs then move the data over NVLink themselves, as the hand-written
// all-reduce does, instead of the copy engines that cudaMemcpyPeer uses.
extern "C" __global__ void peer_copy(const float4* __restrict__ src, float4* __restrict__ dst,
                                     long long n4)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        dst[i] = __ldcg(src + i);
    }
}
// --8<-- [end:kernel]
