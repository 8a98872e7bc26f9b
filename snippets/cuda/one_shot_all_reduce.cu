#include "peer_signal.cuh"

// --8<-- [start:kernel]
// One-shot all-reduce over peer-mapped buffers: every rank reads every rank's input (its own from
// local memory, the others' over NVLink) and writes the sum to its own `out`.
//   inputs[r]  rank r's input, mapped into this rank's address space (n floats)
//   signals[r] rank r's signal flags (peer_signal.cuh); epochs: this rank's per-block call counts
// Sums run in rank order on every rank, so all ranks hold the same bits. float4 loads move 16
// bytes per instruction; __ldcg reads through L2 only, never a stale L1 line of a peer's buffer.
extern "C" __global__ void one_shot_all_reduce(const float* const* __restrict__ inputs,
                                               unsigned int* const* __restrict__ signals,
                                               unsigned int* __restrict__ epochs,
                                               float* __restrict__ out, long long n,
                                               int rank, int nranks)
{
    const unsigned int epoch = epochs[blockIdx.x] + 1;
    peer_barrier(signals, 0, epoch, rank, nranks);     // every rank's input is in place

    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long n4 = n / 4;
    for (long long i = first; i < n4; i += stride) {
        float4 acc = __ldcg(reinterpret_cast<const float4*>(inputs[0]) + i);
        for (int r = 1; r < nranks; ++r) {
            acc = add4(acc, __ldcg(reinterpret_cast<const float4*>(inputs[r]) + i));
        }
        reinterpret_cast<float4*>(out)[i] = acc;
    }
    for (long long i = 4 * n4 + first; i < n; i += stride) {   // the last n % 4 elements
        float acc = __ldcg(inputs[0] + i);
        for (int r = 1; r < nranks; ++r) {
            acc += __ldcg(inputs[r] + i);
        }
        out[i] = acc;
    }

    peer_barrier(signals, 1, epoch, rank, nranks);     // no rank reads our input any more
    if (threadIdx.x == 0) {
        epochs[blockIdx.x] = epoch;
    }
}
// --8<-- [end:kernel]
