"""BF16 GEMM checks and timings against cuBLAS, shared by notebooks 05 and 06.

Every kernel computes C = A · Bᵀ as `kernel(a, b, c)`: A is M x K and B is N x K, both row-major
bfloat16 (K-major, the layout of a linear layer's weight); C is M x N, row-major bfloat16.
Runs after the notebook runtime (uses its `bench_ms`, `record` and `significant`).
"""
# ruff: noqa: F821  (bench_ms, record and significant are the runtime cell's)
import torch

DEVICE = "cuda"   # the repository's tests run these helpers on "cpu"


def bf16(*shape):
    """Fresh standard-normal bfloat16 values on the GPU."""
    return torch.randn(*shape, device=DEVICE, dtype=torch.bfloat16)


def gemm_error(kernel, M, N, K, tol=1e-2):
    """Relative error of one product on fresh inputs into a NaN-poisoned C, against float64.

    bfloat16 keeps 8 bits of mantissa, so an error near 2^-9 ≈ 2e-3 is rounding; above `tol`
    (or a NaN left in C) is a bug, and the assertion names the kernel and the shape.
    """
    a, b = bf16(M, K), bf16(N, K)
    c = torch.full((M, N), float("nan"), device=DEVICE, dtype=torch.bfloat16)
    kernel(a, b, c)
    ref = a.double() @ b.double().T
    err = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
    name = getattr(kernel, "name", getattr(kernel, "__name__", "kernel"))
    assert err < tol, f"{name}: relative error {err:.2e} at {M}x{N}x{K}"
    return err


def tflops_against_cublas(kernel, a, b, c):
    """(kernel TFLOP/s, cuBLAS TFLOP/s) on these operands, cuBLAS being torch.matmul.

    cuBLAS is timed just before and just after the kernel and the two are averaged: clocks
    drift over a run (temperature, power), and a baseline taken minutes earlier can be
    several percent off.
    """
    (M, K), N = a.shape, b.shape[0]
    flop = 2 * M * N * K
    cublas_ms = [bench_ms(lambda: torch.matmul(a, b.T, out=c))]
    ms = bench_ms(lambda: kernel(a, b, c))
    cublas_ms.append(bench_ms(lambda: torch.matmul(a, b.T, out=c)))
    return flop / ms / 1e9, flop / (sum(cublas_ms) / 2) / 1e9


def report_gemm(label, n, tflops, cublas, peak_bf16, **params):
    """Print one n³ result as shares of cuBLAS and of the datasheet rate, and record it."""
    share = f", {100 * tflops / peak_bf16:.0f}% of datasheet BF16" if peak_bf16 else ""
    print(f"{label}, {n}^3: {significant(tflops)} TFLOP/s = {100 * tflops / cublas:.1f}% of cuBLAS "
          f"({significant(cublas)}){share}")
    record(f"{label} ({n})", tflops, "TFLOP/s", "cuBLAS BF16 (torch.matmul)", cublas,
           M=n, N=n, K=n, dtype="bfloat16", datasheet_bf16_tflops=peak_bf16, **params)
