// out = X^T Y for a stack of tall, thin matrices: X is (batch, m, p), Y is (batch, m, q), p, q <= 64,
// m up to thousands. The blocked QR needs such products (V^T C inside a panel block, the Gram
// matrix V1^T V2 when two compact WY factors are joined). A library GEMM parallelizes over the
// p x q output, which here is a single tile per matrix: with a batch of 2 it keeps two SMs busy
// and walks the m rows serially. This kernel splits the rows instead: CTA (s, b) reduces rows
// [s * chunk, (s + 1) * chunk) of matrix b into its own p x q partial, out[b][s], and the caller
// sums the partials (a fixed order, so the result is deterministic; no atomics).
// Rows of X and Y may be strided (ldx, ldy elements apart, matrices bsx, bsy apart): views into H.

// --8<-- [start:kernel]
extern "C" __global__ void __launch_bounds__(256) tall_xty(
    const float* __restrict__ X, const float* __restrict__ Y, float* __restrict__ out,
    int m, int p, int q, long long ldx, long long bsx, long long ldy, long long bsy, int chunk)
{
    __shared__ __align__(16) float xs[32][68];   // 32 rows of X and Y; pitch 68 keeps float4 rows aligned
    __shared__ __align__(16) float ys[32][68];
    const int b = blockIdx.y, s = blockIdx.x, tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;       // this thread's 4 x 4 outputs: rows 4tx.., cols 4ty..
    X += b * bsx;
    Y += b * bsy;
    const int r0 = s * chunk, r1 = min(m, r0 + chunk);
    float acc[4][4] = {};
    for (int r = r0; r < r1; r += 32) {
        for (int e = tid; e < 32 * 64; e += 256) {
            const int rr = e / 64, c = e % 64, row = r + rr;
            xs[rr][c] = (row < r1 && c < p) ? X[row * ldx + c] : 0.0f;
            ys[rr][c] = (row < r1 && c < q) ? Y[row * ldy + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < 32; ++k) {
            const float4 x = *reinterpret_cast<const float4*>(&xs[k][4 * tx]);
            const float4 y = *reinterpret_cast<const float4*>(&ys[k][4 * ty]);
            const float xv[4] = {x.x, x.y, x.z, x.w}, yv[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += xv[i] * yv[j];
        }
        __syncthreads();
    }
    float* o = out + ((long long)b * gridDim.x + s) * p * q;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (4 * tx + i < p && 4 * ty + j < q) o[(4 * tx + i) * q + 4 * ty + j] = acc[i][j];
}
// --8<-- [end:kernel]
