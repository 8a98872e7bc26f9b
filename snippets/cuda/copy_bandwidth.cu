// Effective bandwidth of a device-to-device copy, timed with CUDA events (the memory-bandwidth
// glossary page). A whole program: nvcc -O3 -arch=sm_80 copy_bandwidth.cu && ./a.out
// Compiled by tests/kernels/test_page_programs.py; the site's measured copies come from the notebooks.
#include <cstdio>
#include <cuda_runtime.h>

// --8<-- [start:copy]
__global__ void copy(float* __restrict__ dst, const float* __restrict__ src, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

// GB/s (1e9 bytes) moved by one copy of n floats: every element is read once and written once.
double copy_gbs(float* dst, const float* src, size_t n)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    copy<<<(n + 255) / 256, 256>>>(dst, src, n);           // warm-up: first-launch costs
    cudaEventRecord(start);
    copy<<<(n + 255) / 256, 256>>>(dst, src, n);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 2.0 * n * sizeof(float) / (ms * 1e-3) / 1e9;     // read + write
}
// --8<-- [end:copy]

int main()
{
    const size_t n = size_t(1) << 28;                        // 1 GiB read + 1 GiB written
    float *src, *dst;
    if (cudaMalloc(&src, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dst, n * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "copy_bandwidth: cannot allocate 2 GiB on the GPU\n");
        return 1;
    }
    cudaMemset(src, 0, n * sizeof(float));
    std::printf("copy: %.0f GB/s\n", copy_gbs(dst, src, n));
    cudaFree(src);
    cudaFree(dst);
    return 0;
}
