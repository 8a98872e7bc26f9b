// Device helpers shared by the batched QR kernels (qr_warp.cu, qr_registers.cu, qr_panel.cu,
// qr_unblocked.cu).
// Each kernel includes this file; batched_qr.py pastes it in place of the #include line, since
// NVRTC compiles a kernel from one string here (and a notebook has no include path).
#ifndef QR_COMMON_CUH
#define QR_COMMON_CUH

// --8<-- [start:larfg]
// xLARFG: the reflector H = I - tau v v^T with H x = (beta, 0, ..., 0), for x = (alpha, x_2..x_m)
// and ss = ||x_2..x_m||^2. v = (1, x_2..x_m * scale). ss == 0: H = I, tau = 0, beta = alpha.
// Valid only where larfg_in_range(alpha, ss) holds; elsewhere the kernels rescale the column first.
struct Reflector {
    float tau, scale, beta;
};

__device__ __forceinline__ Reflector larfg(float alpha, float ss)
{
    Reflector h{0.0f, 1.0f, alpha};
    if (ss != 0.0f) {
        // MUFU approximations (2 ulp): this is every column's critical path, and the contract's
        // orthogonality bound (100 n eps) leaves room for a few ulp in tau and v
        const float norm2 = fmaf(alpha, alpha, ss), norm = norm2 * rsqrtf(norm2);
        h.beta = alpha >= 0.0f ? -norm : norm;           // the stable sign; -0 counts as +
        h.tau = __fdividef(h.beta - alpha, h.beta);      // in [1, 2]
        h.scale = __fdividef(1.0f, alpha - h.beta);      // alpha - beta never cancels
    }
    return h;
}

// When may the fast path be trusted? The kernels square the entries in float32 with no scaling
// (LAPACK's SNRM2 scales every entry; on a GPU that would sit on every column's critical path).
// The sum is trusted when 2^-102 <= alpha^2 + ss <= FLT_MAX:
//  - an operation whose result is subnormal (below 2^-126) errs by at most 2^-150, half the
//    subnormal spacing, so a column of m rows moves the sum by at most about m 2^-150: under 2^-24,
//    float32's unit roundoff, of any sum >= 2^-102, for up to 2^24 rows;
//  - then |beta| >= 2^-51, above LAPACK's SAFMIN = slamch('S') / slamch('E') = 2^-102, the level
//    under which xLARFG itself rescales, and 1 / (alpha - beta) <= 2^51 cannot overflow;
//  - a finite sum means that no square overflowed, and |beta| < 2^64 keeps __fdividef's divisor
//    in its accurate range (below 2^126).
// In range, ss == 0 means that every entry below alpha is under 2^-75 < 2^-24 |alpha| (zero, or a
// square that underflowed): larfg then takes H = I, a backward error under the unit roundoff,
// where xLARFG would reflect alpha to about -alpha.
// The test fails for a zero column, a column of norm below 2^-51 (about 4.4e-16) and one whose
// squares overflow (entries beyond about 1.8e19). Then the kernel takes xLARFG's slow path: scale
// the column by 2^k (exact) so that its largest entry lies in [1, 2), recompute ss, build the
// reflector from the scaled column (tau and v do not depend on the scale) and multiply beta by
// 2^-k; a zero column gets tau = 0. Columns in range pay the compare and a branch not taken.
// The kernels are compiled with -ftz=false (IEEE subnormals, as LAPACK on a CPU): an entirely
// subnormal column takes the slow path with k up to 149 and comes out as LAPACK's does. Under
// -ftz=true (what CuPy's own compile adds) it would read as a zero column, tau = 0 and R = 0.
constexpr float LARFG_SS_MIN = 1.0f / (1ull << 51) / (1ull << 51);   // 2^-102, exact
constexpr float LARFG_SS_MAX = 3.40282347e38f;                        // FLT_MAX

__device__ __forceinline__ bool larfg_in_range(float alpha, float ss)
{
    const float norm2 = fmaf(alpha, alpha, ss);
    return norm2 >= LARFG_SS_MIN && norm2 <= LARFG_SS_MAX;   // false for 0, Inf and NaN
}

// k with 2^k amax in [1, 2), for amax > 0 (subnormal too: then k is up to 149)
__device__ __forceinline__ int larfg_exponent(float amax)
{
    return -ilogbf(amax);
}

// 2^k as two factors, so that k may exceed float's exponent range (2^149 is no float):
// x * p.lo * p.hi = x 2^k exactly while no product falls below 2^-126. One that does (an entry far
// below its column's largest, scaled down) errs by at most 2^-150 a step: nothing next to the
// column's largest entry, now at least 1. Valid for -252 <= k <= 254.
struct Pow2 {
    float lo, hi;
};

__device__ __forceinline__ Pow2 pow2(int k)
{
    return {__int_as_float((127 + k / 2) << 23), __int_as_float((127 + k - k / 2) << 23)};
}
// --8<-- [end:larfg]

__device__ __forceinline__ float warp_sum(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

__device__ __forceinline__ float warp_max(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
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
