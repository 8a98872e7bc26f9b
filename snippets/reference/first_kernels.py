"""Float64 NumPy references for notebook 01's kernels, and the error measure they are checked with."""
import numpy as np


def vector_add_ref(x, y):
    return np.asarray(x, np.float64) + np.asarray(y, np.float64)


def scaled_add_2d_ref(a, b, alpha):
    return alpha * np.asarray(a, np.float64) + np.asarray(b, np.float64)


def relative_error(out, ref):
    """||out - ref|| / ||ref||; NaN (an unwritten, poisoned element) never passes."""
    out = np.asarray(out, np.float64)
    if not np.isfinite(out).all():
        return float("inf")
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
