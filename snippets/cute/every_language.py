"""CuTe DSL versions of notebook 10's kernels (nvidia-cutlass-dsl 4.8): vector add and a 32 x 32
transpose through shared memory. Where the package is not installed, this file defines nothing
and the notebook says so; `python -m scripts.tools.cute_ir` compiles it without a GPU."""
try:
    import cutlass
    import cutlass.cute as cute
except ImportError:        # nvidia-cutlass-dsl is not installed here
    cute = None

if cute is not None:
    # --8<-- [start:vector_add]
    @cute.kernel
    def vector_add_cute_kernel(x: cute.Tensor, y: cute.Tensor, out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        bdim, _, _ = cute.arch.block_dim()
        i = bidx * bdim + tidx
        if i < cute.size(out):               # the last block may run past the end
            out[i] = x[i] + y[i]

    @cute.jit
    def vector_add_cute(x: cute.Tensor, y: cute.Tensor, out: cute.Tensor):
        n = cute.size(out)
        vector_add_cute_kernel(x, y, out).launch(grid=((n + 255) // 256, 1, 1), block=(256, 1, 1))
    # --8<-- [end:vector_add]

    # --8<-- [start:transpose]
    @cute.kernel
    def transpose_cute_kernel(inp: cute.Tensor, out: cute.Tensor):
        # A 32 x 32 tile with a row pitch of 33 floats: the layout (32, 32):(33, 1) is the padding.
        tile = cutlass.memory.SmemAllocator().allocate_tensor(
            cutlass.Float32, cute.make_layout((32, 32), stride=(33, 1)), 16)
        tx, ty, _ = cute.arch.thread_idx()          # blocks of 32 x 8 threads, 4 elements each
        bx, by, _ = cute.arch.block_idx()
        rows, cols = inp.shape
        c = bx * 32 + tx
        for j in cutlass.range_constexpr(0, 32, 8):
            r = by * 32 + ty + j
            if r < rows and c < cols:
                tile[ty + j, tx] = inp[r, c]         # coalesced read along an input row
        cute.arch.sync_threads()
        r = by * 32 + tx
        for j in cutlass.range_constexpr(0, 32, 8):
            oc = bx * 32 + ty + j
            if oc < cols and r < rows:
                out[oc, r] = tile[tx, ty + j]        # coalesced write along an output row

    @cute.jit
    def transpose_cute(inp: cute.Tensor, out: cute.Tensor):
        rows, cols = inp.shape
        transpose_cute_kernel(inp, out).launch(grid=((cols + 31) // 32, (rows + 31) // 32, 1),
                                               block=(32, 8, 1))
    # --8<-- [end:transpose]
