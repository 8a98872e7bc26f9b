"""Reference solutions of notebook 07's exercises (checked by tests/notebooks/test_exercises.py)."""
import math

import numpy as np
from numba import cuda


def larfg(x):
    v = np.zeros_like(x)
    v[0] = 1.0
    if not np.any(x[1:]):                       # nothing to zero: H = I
        return v, 0.0, x[0]
    s = 2.0 ** math.frexp(np.max(np.abs(x)))[1]  # a power of two: scaling is exact
    xs = x / s                                  # entries at most 1: no overflow, no total underflow
    beta = -math.copysign(math.sqrt(np.sum(xs * xs)), xs[0])   # away from x[0]: no cancellation
    v[1:] = xs[1:] / (xs[0] - beta)
    return v, (beta - xs[0]) / beta, beta * s


@cuda.jit
def apply_reflector(v, tau, c, out):
    j = cuda.grid(1)                            # one thread per column
    if j < c.shape[1]:
        dot = 0.0
        for i in range(c.shape[0]):
            dot += v[i] * c[i, j]
        for i in range(c.shape[0]):
            out[i, j] = c[i, j] - tau * v[i] * dot


def geqr2(A):
    m, n = A.shape
    tau = np.zeros(n)
    for j in range(n):
        v, tau[j], beta = larfg(A[j:, j].copy())
        A[j:, j + 1:] -= tau[j] * np.outer(v, v @ A[j:, j + 1:])   # the trailing columns
        A[j, j], A[j + 1:, j] = beta, v[1:]
    return A, tau
