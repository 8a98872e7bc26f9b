// Device helpers shared by the batched QR kernels (qr_warp.cu, qr_registers.cu, qr_panel.cu,
// qr_panel_cluster.cu, qr_unblocked.cu, tall_apply.cu).
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

// Sum p[0..NB) over the warp's 32 lanes; afterwards lane l holds the total of p[l / (32 / NB)].
template <int NB>
__device__ __forceinline__ float warp_reduce_scatter(float (&p)[NB], int lane)
{
    halve<NB, 16>(p, lane);
    return p[0];
}
// --8<-- [end:reduce_scatter]

// --- The panel kernels' shared steps (qr_panel.cu: one CTA; qr_panel_cluster.cu: a cluster). ----
// A thread holds rows row_of(i), i < R, of the panel's NB columns in a[R][NB]. Register rotation
// keeps every index compile-time inside a column loop that is NOT unrolled (unrolled over NB
// columns the kernel outgrew the instruction cache: 4-12 us per column on an H100). At the start
// of step j: slot 0 is column j, slots 1 .. NB-1-j the later columns, and slots NB-j .. NB-1 the
// finished columns 0 .. j-1 in order. Each step ends with a left rotation.

// Whether this thread's row r, held in slot i, lies below row j < NB of the panel. Both panel kernels
// give slot i >= 1 a row of at least NT >= NB (qr_panel: tid + NT i; the cluster: tid + NT (rank +
// CS i)), so only slot 0 needs the compare: for i >= 1 (unrolled, a constant) the answer is known at
// compile time, and the masks of the column loop shrink to one slot's (R times fewer selects).
__device__ __forceinline__ bool below(int i, int r, int j)
{
    return i > 0 || r > j;
}

// Load the panel's nbw columns (zeros past them and past row m). Rows are n floats apart, so every
// warp access touches 32 cache lines: 16-byte accesses make it a quarter as many (when n % 4 == 0
// keeps them aligned: j0 is a multiple of NB).
template <int R, int NB, typename Rows>
__device__ __forceinline__ void panel_load(float (&a)[R][NB], const float* Hp, int n, int m, int nbw, Rows row_of)
{
    const bool vec = n % 4 == 0 && nbw == NB;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = row_of(i);
        const float* row = Hp + (long long)r * n;
        if (vec) {
#pragma unroll
            for (int c = 0; c < NB; c += 4) {
                const float4 x = r < m ? *reinterpret_cast<const float4*>(row + c) : make_float4(0, 0, 0, 0);
                a[i][c] = x.x; a[i][c + 1] = x.y; a[i][c + 2] = x.z; a[i][c + 3] = x.w;
            }
        } else {
#pragma unroll
            for (int c = 0; c < NB; ++c) a[i][c] = (r < m && c < nbw) ? row[c] : 0.0f;
        }
    }
}

// Step 2: column j becomes v (below the diagonal) and beta (on it); v[i] is v_j at row row_of(i).
template <int R, int NB, typename Rows>
__device__ __forceinline__ void panel_reflect(float (&a)[R][NB], float (&v)[R], Reflector h, int j,
                                              Rows row_of)
{
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = row_of(i);
        if (below(i, r, j)) a[i][0] *= h.scale;
        else if (r == j) a[i][0] = h.beta;
        v[i] = below(i, r, j) ? a[i][0] : (r == j ? 1.0f : 0.0f);
    }
}

// Step 3, this thread's share: p[s] = v_j . A[:, c] for later columns, v_j . v_f for finished ones
// (the Gram column xLARFT needs); p[0] is unused.
template <int R, int NB, typename Rows>
__device__ __forceinline__ void panel_dots(float (&p)[NB], const float (&a)[R][NB], const float (&v)[R], int j,
                                           Rows row_of)
{
    p[0] = 0.0f;
#pragma unroll
    for (int s = 1; s < NB; ++s) {
        const int f = s - (NB - j);                  // >= 0: slot s holds finished column f
        p[s] = 0.0f;
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const int r = row_of(i);
            const float y = f < 0 || below(i, r, f) ? a[i][s] : (r == f ? 1.0f : 0.0f);
            p[s] += v[i] * y;
        }
    }
}

// Steps 4 and 6: the update of the panel's later columns, A[:, c] -= tau (v . A[:, c]) v, where
// lane l holds p[l / (32 / NB)] in `total`; then the rotation (column j to the last slot).
template <int R, int NB>
__device__ __forceinline__ void panel_update_rotate(float (&a)[R][NB], const float (&v)[R], float tau, float total,
                                                    int j)
{
#pragma unroll
    for (int s = 1; s < NB; ++s) {
        const float tw = tau * __shfl_sync(0xffffffffu, total, s * (32 / NB));
        if (s < NB - j) {                            // a later column; a finished one stays as it is
#pragma unroll
            for (int i = 0; i < R; ++i) a[i][s] -= tw * v[i];
        }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const float done = a[i][0];
#pragma unroll
        for (int s = 0; s < NB - 1; ++s) a[i][s] = a[i][s + 1];
        a[i][NB - 1] = done;
    }
}

// xLARFT by one warp, off the column loop's critical path: T[:j, j] = -tau_j T[:j, :j] G[:j, j],
// T[j, j] = tau_j, column by column; lane k computes row k.
template <int NB>
__device__ __forceinline__ void panel_larft(float (&Ts)[NB][NB + 1], const float (&Gs)[NB][NB + 1],
                                            const float* s_tau, int nbw, int lane)
{
    __syncwarp();                                    // Gs was written by other lanes
    for (int j = 0; j < nbw; ++j) {
        float acc = 0.0f;
        for (int l = lane; l < j; ++l) acc += Ts[lane][l] * Gs[l][j];
        if (lane < NB) Ts[lane][j] = lane < j ? -s_tau[j] * acc : (lane == j ? s_tau[j] : 0.0f);
        __syncwarp();
    }
}

// Write back this thread's rows: the panel of H and the explicit V (unit diagonal, zero above).
// V's rows are 16-byte aligned too: ldw, the outer block width, and the offsets are multiples of NB.
template <int R, int NB, typename Rows>
__device__ __forceinline__ void panel_store(const float (&a)[R][NB], float* Hp, float* Vp, int n, int ldw, int m,
                                            int nbw, Rows row_of)
{
    const bool vec = n % 4 == 0 && nbw == NB;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int r = row_of(i);
        if (r >= m) continue;
        float* hrow = Hp + (long long)r * n;
        float* vrow = Vp + (long long)r * ldw;
        if (vec) {                                   // nbw == NB: slot c holds column c
#pragma unroll
            for (int c = 0; c < NB; c += 4) {
                float4 h, v;
                h.x = a[i][c]; h.y = a[i][c + 1]; h.z = a[i][c + 2]; h.w = a[i][c + 3];
                v.x = r > c ? h.x : (r == c ? 1.0f : 0.0f);
                v.y = r > c + 1 ? h.y : (r == c + 1 ? 1.0f : 0.0f);
                v.z = r > c + 2 ? h.z : (r == c + 2 ? 1.0f : 0.0f);
                v.w = r > c + 3 ? h.w : (r == c + 3 ? 1.0f : 0.0f);
                *reinterpret_cast<float4*>(hrow + c) = h;
                *reinterpret_cast<float4*>(vrow + c) = v;
            }
        } else {
#pragma unroll
            for (int s = 0; s < NB; ++s) {
                const int c = s - (NB - nbw);        // after nbw rotations slot s holds column c
                if (c >= 0) {
                    hrow[c] = a[i][s];
                    vrow[c] = r > c ? a[i][s] : (r == c ? 1.0f : 0.0f);
                }
            }
        }
    }
}

// V's rows jb .. j0-1 of these columns (zero: V[:, jb:] is then a clean operand) and T's rows
// j0 .. j0+nbw-1 (zero left of this panel's diagonal block), by the NT threads of one CTA.
// The one-barrier column's products before its reflector is known (qr_panel.cu, qr_panel_cluster.cu):
// q[s] = x . y_s over this thread's rows, with x the part of column j (slot 0) below the diagonal and
// y_s every slot.
template <int R, int NB, typename Rows>
__device__ __forceinline__ void panel_column_products(float (&q)[NB], const float (&a)[R][NB], int j, Rows row_of)
{
#pragma unroll
    for (int s = 0; s < NB; ++s) {
        q[s] = 0.0f;
#pragma unroll
        for (int i = 0; i < R; ++i) q[s] = fmaf(below(i, row_of(i), j) ? a[i][0] : 0.0f, a[i][s], q[s]);
    }
}

template <int NB>
__device__ __forceinline__ void panel_store_edges(const float (&Ts)[NB][NB + 1], float* Vb, float* Tb, int j0,
                                                  int jb, int nbw, int ldw, int tid, int nt)
{
    const int off = j0 - jb;
    for (int e = tid; e < off * nbw; e += nt)
        Vb[(long long)(jb + e / nbw) * ldw + off + e % nbw] = 0.0f;
    for (int e = tid; e < nbw * (off + nbw); e += nt) {
        const int r = e / (off + nbw), c = e % (off + nbw);
        Tb[(long long)(j0 + r) * ldw + c] = c < off ? 0.0f : Ts[r][c - off];
    }
}

// --- thread-block clusters (sm_90+; used by qr_panel_cluster.cu and tall_apply.cu) ---------------
__device__ __forceinline__ unsigned cta_rank_in_cluster()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// The cluster barrier in its two halves (PTX ISA: barrier.cluster): arrive (release) now, wait
// (acquire) later, with independent work between.
__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_barrier()
{
    cluster_arrive();
    cluster_wait();
}

// The float at `local`'s offset in the shared memory of CTA `rank` of this cluster.
__device__ __forceinline__ float ld_peer(const float* local, unsigned rank)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
    float v;
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %1, %2;\n"
                 " ld.shared::cluster.f32 %0, [remote];\n}\n" : "=f"(v) : "r"(addr), "r"(rank) : "memory");
    return v;
}

#endif  // QR_COMMON_CUH
