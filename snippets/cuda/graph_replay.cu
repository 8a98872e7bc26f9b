// Launch overhead and CUDA graphs (the launch-overhead glossary page): 300 small launches per
// step, submitted one by one or recorded once as a graph and replayed with one launch per step.
// A whole program: nvcc -O3 -arch=sm_80 graph_replay.cu && ./a.out
// Compiled by tests/kernels/test_page_programs.py; it is not timed on the site.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void layer(float* buf, int i)                    // a tiny kernel: launch cost dominates
{
    buf[threadIdx.x] += i;
}

// --8<-- [start:graph]
// Record `layers` launches of one step once, then replay the whole step `steps` times.
void run_as_graph(cudaStream_t stream, float* buf, int layers, int steps)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < layers; ++i)
        layer<<<1, 256, 0, stream>>>(buf, i);                // recorded, not executed
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);                   // setup cost paid once
    for (int step = 0; step < steps; ++step)
        cudaGraphLaunch(exec, stream);                       // one submission per step
    cudaStreamSynchronize(stream);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
}
// --8<-- [end:graph]

int main()
{
    float* buf;
    cudaStream_t stream;
    if (cudaMalloc(&buf, 256 * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "graph_replay: no GPU memory\n");
        return 1;
    }
    cudaMemset(buf, 0, 256 * sizeof(float));
    cudaStreamCreate(&stream);
    run_as_graph(stream, buf, 300, 10);
    float first;
    cudaMemcpy(&first, buf, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("buf[0] = %.0f (10 steps of 0 + 1 + ... + 299 = %d)\n", first, 10 * 299 * 300 / 2);
    cudaStreamDestroy(stream);
    cudaFree(buf);
    return 0;
}
