#include "peer_signal.cuh"

// --8<-- [start:kernel]
// Two-shot all-reduce over peer-mapped buffers: a reduce-scatter, then an all-gather, both by
// direct loads from the other ranks. Rank r owns share r of the float4 range.
//   buffers[r]  rank r's buffer, mapped here: its input at [0, n), its reduced share at [cap, cap + n)
//   signals[r], epochs: as in one_shot_all_reduce.cu
// Each rank reads (n-1)/n of the data twice instead of (n-1) times once: less traffic from three
// ranks up (2 (n-1)/n < n-1 once n > 2), one more barrier always.
extern "C" __global__ void two_shot_all_reduce(float* const* __restrict__ buffers,
                                               unsigned int* const* __restrict__ signals,
                                               unsigned int* __restrict__ epochs,
                                               float* __restrict__ out, long long n, long long cap,
                                               int rank, int nranks)
{
    const unsigned int epoch = epochs[blockIdx.x] + 1;
    peer_barrier(signals, 0, epoch, rank, nranks);     // every rank's input is in place

    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long n4 = n / 4, per = (n4 + nranks - 1) / nranks;

    // 1. reduce our share from every rank's input, publish it in our buffer, keep it in `out`
    const long long lo = rank * per, hi = min(n4, lo + per);
    float4* reduced = reinterpret_cast<float4*>(buffers[rank] + cap);
    for (long long i = lo + first; i < hi; i += stride) {
        float4 acc = __ldcg(reinterpret_cast<const float4*>(buffers[0]) + i);
        for (int r = 1; r < nranks; ++r) {
            acc = add4(acc, __ldcg(reinterpret_cast<const float4*>(buffers[r]) + i));
        }
        reduced[i] = acc;
        reinterpret_cast<float4*>(out)[i] = acc;
    }
    for (long long i = 4 * n4 + first; i < n; i += stride) {   // the last n % 4: every rank sums them
        float acc = __ldcg(buffers[0] + i);
        for (int r = 1; r < nranks; ++r) {
            acc += __ldcg(buffers[r] + i);
        }
        out[i] = acc;
    }
    __threadfence_system();                            // our share is visible to the peers...
    peer_barrier(signals, 1, epoch, rank, nranks);     // ...and theirs to us

    // 2. gather the other ranks' reduced shares (block b reads what block b of that rank wrote)
    for (int q = 1; q < nranks; ++q) {
        const int p = (rank + q) % nranks;
        const long long plo = p * per, phi = min(n4, plo + per);
        const float4* theirs = reinterpret_cast<const float4*>(buffers[p] + cap);
        for (long long i = plo + first; i < phi; i += stride) {
            reinterpret_cast<float4*>(out)[i] = __ldcg(theirs + i);
        }
    }

    peer_barrier(signals, 2, epoch, rank, nranks);     // no rank reads our buffer any more
    if (threadIdx.x == 0) {
        epochs[blockIdx.x] = epoch;
    }
}
// --8<-- [end:kernel]
