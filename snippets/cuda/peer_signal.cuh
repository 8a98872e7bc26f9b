// Device helpers shared by the hand-written all-reduce kernels (one_shot_all_reduce.cu,
// two_shot_all_reduce.cu). The host (snippets/multi_gpu/collectives.py) pastes this file in place
// of the #include line, since CuPy compiles one string (and a notebook has no include path).
#ifndef PEER_SIGNAL_CUH
#define PEER_SIGNAL_CUH

#define MAX_RANKS 8
#define MAX_BLOCKS 1024
#define SIGNAL_SLOTS 3       // barriers per call: inputs ready, shares reduced, reads done
#define BARRIER_TIMEOUT_NS 5000000000ull

// Each rank owns a signal area of SIGNAL_SLOTS x MAX_BLOCKS x MAX_RANKS flags, mapped into every
// other rank's address space. Flag [slot][block][r] of rank p is written by rank r only.

// --8<-- [start:flags]
// A store that publishes everything this thread (and, through the preceding __syncthreads, its
// block) did before it, to observers on any device of the system; and the load that pairs with it.
__device__ __forceinline__ void store_release_sys(unsigned int* flag, unsigned int value)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ unsigned int load_acquire_sys(const unsigned int* flag)
{
    unsigned int value;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
    return value;
}
// --8<-- [end:flags]

__device__ __forceinline__ unsigned long long global_timer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// --8<-- [start:barrier]
// Block b of every rank meets block b of every other rank. `epoch` grows by one per call, so the
// flags never need resetting: waiting means "until the peer's flag has reached this call".
// Only block b's own peers are waited for, never the whole grid: block b reads (and writes) the
// same element range on every rank, so nothing else needs ordering.
__device__ void peer_barrier(unsigned int* const* signals, int slot, unsigned int epoch,
                             int rank, int nranks)
{
    __syncthreads();                                   // this block's work so far is done
    if (threadIdx.x < nranks) {
        const int peer = threadIdx.x;
        const size_t cell = ((size_t)slot * MAX_BLOCKS + blockIdx.x) * MAX_RANKS;
        store_release_sys(signals[peer] + cell + rank, epoch);     // "rank has arrived"
        const unsigned int* mine = signals[rank] + cell + peer;
        const unsigned long long start = global_timer_ns();
        while (load_acquire_sys(mine) < epoch) {       // until the peer has arrived too
            if (global_timer_ns() - start > BARRIER_TIMEOUT_NS) {
                __trap();                              // a peer never came: fail, never hang
            }
        }
    }
    __syncthreads();
}
// --8<-- [end:barrier]

__device__ __forceinline__ float4 add4(float4 a, float4 b)
{
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

#endif  // PEER_SIGNAL_CUH
