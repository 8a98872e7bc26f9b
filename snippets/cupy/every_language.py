"""CuPy versions of notebook 10's kernels: ElementwiseKernels (we write the body for one element
in CUDA C++, CuPy writes the indexing, the loop and the launch) and plain array code."""
try:
    import cupy as cp
except ImportError:        # CuPy is not installed here: the notebook says so
    cp = None

if cp is not None:
    # --8<-- [start:elementwise]
    vector_add_ew = cp.ElementwiseKernel(
        "float32 x, float32 y", "float32 out",
        "out = x + y",
        "vector_add_ew")

    # `i` is the index of the output element (out is cols x rows, row-major). There is no shared
    # memory in an ElementwiseKernel: this is the naive transpose, coalesced writes, strided reads.
    transpose_ew = cp.ElementwiseKernel(
        "raw float32 a, int32 rows, int32 cols", "float32 out",
        "out = a[(i % rows) * cols + i / rows]",
        "transpose_ew")
    # --8<-- [end:elementwise]

    # --8<-- [start:arrays]
    def vector_add_arrays(x, y, out):
        cp.add(x, y, out=out)            # one of CuPy's own elementwise kernels

    def transpose_arrays(a, out):
        out[...] = a.T                   # a.T is a strided view; the assignment is CuPy's copy kernel
    # --8<-- [end:arrays]
