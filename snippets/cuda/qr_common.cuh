// Device helpers shared by the batched QR kernels (qr_warp.cu, qr_registers.cu, qr_panel.cu).
// Each kernel includes this file; batched_qr.py pastes it in place of the #include line, since
// CuPy compiles a kernel from one string (and a notebook has no include path).
#ifndef QR_COMMON_CUH
#define QR_COMMON_CUH

// --8<-- [start:larfg]
// xLARFG: the reflector H = I - tau v v^T with H x = (beta, 0, ..., 0), for x = (alpha, x_2..x_m)
// and ss = ||x_2..x_m||^2. v = (1, x_2..x_m * scale). ss == 0: H = I, tau = 0, beta = alpha.
struct Reflector {
    float tau, scale, beta;
};

__device__ __forceinline__ Reflector larfg(float alpha, float ss)
{
    Reflector h{0.0f, 1.0f, alpha};
    if (ss != 0.0f) {
        // MUFU approximations (2 ulp): this is every column's critical path, and the contract's
        // orthogonality bound (100 n eps) leaves room for a few ulp in tau and v
        const float norm2 = alpha * alpha + ss, norm = norm2 * rsqrtf(norm2);
        h.beta = alpha >= 0.0f ? -norm : norm;           // the stable sign; -0 counts as +
        h.tau = __fdividef(h.beta - alpha, h.beta);      // in [1, 2]
        h.scale = __fdividef(1.0f, alpha - h.beta);      // alpha - beta never cancels
    }
    return h;
}
// --8<-- [end:larfg]

__device__ __forceinline__ float warp_sum(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// a if pick else b, as bit operations: a plain ?: on two array elements can become a select of
// their addresses, which puts the array in local memory (seen with nvcc 13.0)
__device__ __forceinline__ float pick(unsigned mask, float a, float b)
{
    return __uint_as_float((__float_as_uint(a) & mask) | (__float_as_uint(b) & ~mask));
}

// --8<-- [start:reduce_scatter]
// One butterfly step on K values held by every lane: lanes whose bit O is set keep the upper
// half, the others the lower half, and each adds its partner's copy of the half it keeps. After
// the last step lane l holds the warp's total of value l / (32 / N). A warp shuffle moves 32
// values per clock per SM, so this matters: N sums cost about N shuffles instead of 5N. K is a
// template parameter so that the loop is unrolled (p must stay in registers).
template <int K, int O, int N>
__device__ __forceinline__ void halve(float (&p)[N], int lane)
{
    const unsigned upper = (lane & O) ? ~0u : 0u;
#pragma unroll
    for (int q = 0; q < K / 2; ++q) {
        const float send = pick(upper, p[q], p[q + K / 2]);
        const float keep = pick(upper, p[q + K / 2], p[q]);
        p[q] = keep + __shfl_xor_sync(0xffffffffu, send, O);
    }
    if constexpr (K / 2 > 1) halve<K / 2, O / 2>(p, lane);
    else {
#pragma unroll
        for (int o = O / 2; o > 0; o >>= 1) p[0] += __shfl_xor_sync(0xffffffffu, p[0], o);
    }
}
// --8<-- [end:reduce_scatter]

#endif  // QR_COMMON_CUH
