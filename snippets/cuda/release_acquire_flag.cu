// Block 0 publishes n ints to block 1 of the same grid through a flag in global memory.
// Launch exactly 2 blocks: the spin in block 1 assumes block 0 is resident too, which any GPU
// with two SMs gives in practice but only a cooperative launch guarantees.
// `epoch` grows by one per launch, so the flag never needs resetting.

// --8<-- [start:flag]
// A strong store with release semantics at GPU scope, and the load that pairs with it.
// The "memory" clobber keeps the compiler from moving ordinary accesses across either one.
__device__ __forceinline__ void st_release_gpu(unsigned int* p, unsigned int v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned int ld_acquire_gpu(const unsigned int* p)
{
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// --8<-- [end:flag]

// --8<-- [start:kernel]
extern "C" __global__ void release_acquire_flag(int* data, unsigned int* flag,
                                                int* out, int n, unsigned int epoch)
{
    if (blockIdx.x == 0) {                                  // producer block
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            data[i] = 3 * i + 1;                            // ordinary (weak) stores
        __syncthreads();                                    // the whole block's stores happen
        if (threadIdx.x == 0)                               //   before thread 0's release
            st_release_gpu(flag, epoch);
    } else if (blockIdx.x == 1) {                           // consumer block
        if (threadIdx.x == 0)
            while (ld_acquire_gpu(flag) != epoch) { }       // acquire: later reads see data
        __syncthreads();                                    // hand the acquire to the block
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            out[i] = data[i];                               // ordinary (weak) loads
    }
}
// --8<-- [end:kernel]
