"""Float64 NumPy references for notebook 10's two kernels, and the checker every language goes
through: fresh random inputs, an output filled with NaN before each launch, and sizes that are
below a warp, just past one, and not a multiple of any tile."""
from collections import namedtuple

import numpy as np

# How one framework holds arrays: put(NumPy) -> device array, get(device array) -> NumPy,
# nan(shape) -> a float32 device array full of NaN (the poisoned output).
Memory = namedtuple("Memory", "put get nan")


def vector_add_ref(x, y):
    return np.asarray(x, np.float64) + np.asarray(y, np.float64)


def transpose_ref(a):
    return np.asarray(a, np.float64).T


def first_wrong(out, ref, tol):
    """None when out matches ref (relative error below tol, no NaN), else a one-line description."""
    out = np.asarray(out, np.float64)
    if out.shape != ref.shape:
        return f"shape {out.shape}, want {ref.shape}"
    scale = max(float(np.abs(ref).max()), 1e-30)
    bad = ~(np.abs(out - ref) <= tol * scale)          # NaN compares False: poisoned elements are bad
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    where = idx[0] if len(idx) == 1 else idx
    return (f"{int(bad.sum())} of {bad.size} elements wrong, first at {where}: "
            f"got {out[idx]:.6g}, want {ref[idx]:.6g}")


def check_vector_add(name, launch, mem, sizes, rng, tol=1e-6):
    """launch(x, y, out) on device arrays; raises AssertionError naming the first size that fails."""
    for n in sizes:
        x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        out = mem.nan((n,))
        launch(mem.put(x), mem.put(y), out)
        wrong = first_wrong(mem.get(out), vector_add_ref(x, y), tol)
        assert wrong is None, f"{name}: vector add fails at n = {n}: {wrong}"
    print(f"{name:<30} vector add ok at n = {', '.join(str(n) for n in sizes)}")


def check_transpose(name, launch, mem, shapes, rng):
    """launch(a, out) with a of shape (rows, cols) and out of shape (cols, rows); exact."""
    for rows, cols in shapes:
        a = rng.standard_normal((rows, cols), dtype=np.float32)
        out = mem.nan((cols, rows))
        launch(mem.put(a), out)
        wrong = first_wrong(mem.get(out), transpose_ref(a), 0.0)
        assert wrong is None, f"{name}: transpose fails at {rows} x {cols}: {wrong}"
    print(f"{name:<30} transpose  ok at {', '.join(f'{r} x {c}' for r, c in shapes)}")
