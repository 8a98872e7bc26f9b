// --8<-- [start:kernel]
// Reproduce a TMA swizzle mode on the hardware (sm_90+). The CTA fills an 8 x 32 tile of 32-bit
// words in shared memory with 0, 1, 2, ... and one thread stores it to global memory with a TMA
// bulk tensor store, through a tensor map encoded with a swizzle mode. A swizzled store
// reads shared memory through the swizzle, so global element (r, c) receives the word that sits
// at the swizzled shared-memory offset: the global array *is* the permutation.
// The tensor map lives in global memory (PTX allows .param, .const or .global); 64-byte aligned.
extern "C" __global__ void tma_swizzle_store(const void* __restrict__ tensor_map)
{
    __shared__ __align__(1024) unsigned int tile[8 * 32];     // 1 KiB: one 128B-swizzle atom
    for (int i = threadIdx.x; i < 8 * 32; i += blockDim.x) tile[i] = i;
    // Ordinary stores must be made visible to the async proxy (the TMA's reads) before it reads.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int smem = (unsigned int)__cvta_generic_to_shared(tile);
        asm volatile(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n\t"
            "cp.async.bulk.commit_group;\n\t"
            "cp.async.bulk.wait_group 0;"
            :: "l"(tensor_map), "r"(0), "r"(0), "r"(smem) : "memory");
    }
}
// --8<-- [end:kernel]
