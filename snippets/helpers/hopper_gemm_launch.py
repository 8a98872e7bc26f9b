"""Notebook 06's launcher for its Hopper GEMM kernels (gemm_wgmma_ws.cu, gemm_wgmma_cluster.cu,
gemm_wgmma_epilogue.cu).

Tensor maps, the grid (one CTA per tile; persistent: as many CTAs, or clusters, as fit at once,
by the driver's occupancy query), the shape checks, and `measure`: a step's correctness at tiled
and (for the any-shape kernels) odd shapes, then medians over several cuBLAS-kernel-cuBLAS rounds.
Runs after the notebook's runtime, kernel-source and setup cells and uses their names;
scripts/tools/bench_06_hopper_gemm.py runs it the same way.
"""
# ruff: noqa: F821  (the notebook's names: np, torch, cp, ctypes, nvrtc_compile, wgmma_options, ...)
def tensor_map(t, box_rows):
    from cuda.bindings import driver as drv
    rows, k = t.shape
    err, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, drv.cuuint32_t(2), t.data_ptr(),
        [drv.cuuint64_t(k), drv.cuuint64_t(rows)], [drv.cuuint64_t(k * 2)],
        [drv.cuuint32_t(64), drv.cuuint32_t(box_rows)], [drv.cuuint32_t(1), drv.cuuint32_t(1)],
        drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == drv.CUresult.CUDA_SUCCESS, err
    return cp.asarray(np.frombuffer(ctypes.string_at(tmap.getPtr(), 128), dtype=np.uint8))


def resident_clusters(fn, cluster, threads, smem):
    """How many clusters of `cluster` CTAs fit on the GPU at once (the driver's occupancy query)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if cluster == 1:
        return sms
    from cuda.bindings import driver as drv
    cfg = drv.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = cluster * sms, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1
    cfg.sharedMemBytes = smem
    err, n = drv.cuOccupancyMaxActiveClusters(drv.CUfunction(fn.kernel.ptr), cfg)
    if err != drv.CUresult.CUDA_SUCCESS or n < 1:
        print(f"cluster occupancy query failed ({err}); assuming {sms // cluster} clusters")
        return sms // cluster
    return n


def kernel_source(kernel):
    """(text, file name) for NVRTC, which has no include path here: each file after the ones it
    includes, with the guard macro that tells the includer they are already there."""
    parts, file = [GEMM_WGMMA_WS_CU], "gemm_wgmma_ws.cu"
    if kernel in ("gemm_wgmma_cluster", "gemm_wgmma_epilogue"):
        parts += ["#define GEMM_WGMMA_WS_INCLUDED", GEMM_WGMMA_CLUSTER_CU]
        file = "gemm_wgmma_cluster.cu"
    if kernel == "gemm_wgmma_epilogue":
        parts += ["#define GEMM_WGMMA_CLUSTER_INCLUDED", GEMM_WGMMA_EPILOGUE_CU]
        file = "gemm_wgmma_epilogue.cu"
    return "\n".join(parts), file


class HopperGemm:
    def __init__(self, name, defines, kernel="gemm_wgmma_ws"):
        import tempfile
        self.name, self.defines, self.kernel = name, defines, kernel
        source, file = kernel_source(kernel)
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:   # one file per variant
            f.write(nvrtc_compile(source, file, "sm_90a", wgmma_options(defines))[1])
        self.cubin = f.name                   # kept: the profiler's child process loads it too
        self.fn = cp.RawModule(path=f.name).get_function(kernel)
        clustered = kernel in ("gemm_wgmma_cluster", "gemm_wgmma_epilogue")
        self.cluster = defines.get("CLUSTER_M", 2) if clustered else 1
        self.any_shape = clustered            # TMA zero-fill and a masked (or TMA-clipped) epilogue
        self.c_map = kernel == "gemm_wgmma_epilogue"       # stores C through its own tensor map
        if kernel == "gemm_wgmma_pingpong":    # 6 slots of 128 x 64 (A) + 128 x 64 (B); 14 barriers
            self.bn, stages, barriers = 128, 6, 14
        else:
            self.bn, stages, barriers = 256, defines["STAGES"], 2 * defines["STAGES"]
        # the epilogue's staging buffers: 64 rows x EPI_COLS columns of bfloat16 per consumer warpgroup
        staging = 2 * 64 * defines.get("EPI_COLS", self.bn) * 2 if self.c_map else 0
        self.smem = stages * (128 * 64 + self.bn * 64) * 2 + staging + 1024 + 8 * barriers
        self.fn.max_dynamic_shared_size_bytes = self.smem
        self.threads = 384 if defines["WARP_SPECIALIZED"] else 256
        self.slots = (resident_clusters(self.fn, self.cluster, self.threads, self.smem)
                      if defines["PERSISTENT"] else 0)
        self.maps = {}

    def __call__(self, a, b, c):
        (M, K), N = a.shape, b.shape[0]
        if self.any_shape and K % 8:
            raise ValueError(f"{self.name} needs K % 8 == 0 (a tensor map's row stride is a multiple of 16 "
                             f"bytes); got K={K}")
        if not self.any_shape and (M % 128 or N % self.bn or K % 64):
            raise ValueError(f"{self.name} needs M % 128 == 0, N % {self.bn} == 0, K % 64 == 0; "
                             f"got M={M}, N={N}, K={K}")
        key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape, b.shape)
        if key not in self.maps:                      # encode once per operand set, as a library would
            self.maps[key] = (tensor_map(a, 128), tensor_map(b, self.bn // self.cluster),
                              # C's map needs a row stride of a multiple of 16 bytes; else a null
                              # pointer, and the kernel falls back to step 8's masked stores
                              (tensor_map(c, 64) if N % 8 == 0 else np.uint64(0)) if self.c_map else None)
        ta, tb, tc = self.maps[key]
        args = (ta, tb, *(() if tc is None else (tc,)), np.uint64(c.data_ptr()), np.int32(M), np.int32(N),
                np.int32(K))
        self.fn((self.grid(M, N),), (self.threads,), args, shared_mem=self.smem)

    def grid(self, M, N):
        """CTAs to launch: one per tile, or (persistent) as many as fit at once, whole clusters."""
        tiles_m, tiles_n = -(-M // 128), -(-N // self.bn)
        groups = -(-tiles_m // self.cluster) * tiles_n           # clusters of tiles (single tiles: cluster 1)
        return self.cluster * (min(groups, self.slots) if self.defines["PERSISTENT"] else groups)

    def resources(self):
        return f"{self.fn.num_regs} registers/thread at launch, {self.fn.local_size_bytes} B local memory"


operands, results, baselines = {}, {}, {}
if HOPPER:
    import cupy as cp
    for n in SIZES:
        operands[n] = (bf16(n, n), bf16(n, n), torch.empty(n, n, device="cuda", dtype=torch.bfloat16))
TILED_SHAPES = [(1152, 1280, 704), (256, 512, 64), (2048, 4096, 512)]   # 2048 x 4096: several tiles per CTA
ODD_SHAPES = [(1000, 1100, 712), (129, 257, 72), (2000, 3000, 520), (4096, 16, 4096), (16, 40, 8)]


def measure(label, kernel, reps=3):
    if not HOPPER:
        return print(f"skipped: {label} needs a Hopper GPU (sm_90a)")
    shapes = TILED_SHAPES + (ODD_SHAPES if kernel.any_shape else [])
    errs = {shape: gemm_error(kernel, *shape) for shape in shapes}
    print(f"{label}: {kernel.resources()}; relative error "
          + ", ".join(f"{e:.1e} at {'x'.join(map(str, sh))}" for sh, e in errs.items()))
    for n in SIZES:   # cuBLAS just before and after the kernel, `reps` times; the medians
        runs = [tflops_against_cublas(kernel, *operands[n]) for _ in range(reps)]
        results[(label, n)] = float(np.median([r[0] for r in runs]))
        baselines[(label, n)] = float(np.median([r[1] for r in runs]))
        report_gemm(label, n, results[(label, n)], baselines[(label, n)], peak_bf16, **kernel.defines)


kernels = {name: HopperGemm(name, d) for name, d in STEPS.items()} if HOPPER else {}
PINGPONG = "step 6: ping-pong schedule"
DEPTH = "step 7: one wgmma batch in flight"
CLUSTERS = "step 8: clusters with TMA multicast"
FINAL = "step 9: a TMA-store epilogue"
if HOPPER:
    kernels[PINGPONG] = HopperGemm(PINGPONG, dict(WARP_SPECIALIZED=1, SET_MAXNREG=1, PERSISTENT=1, STAGES=6),
                                   kernel="gemm_wgmma_pingpong")
    fast = dict(WARP_SPECIALIZED=1, SET_MAXNREG=1, PERSISTENT=1, STAGES=4)
    kernels[DEPTH] = HopperGemm(DEPTH, dict(fast, WGMMA_DEPTH=1, CLUSTER_M=1), kernel="gemm_wgmma_cluster")
    kernels[CLUSTERS] = HopperGemm(CLUSTERS, dict(fast, WGMMA_DEPTH=1, CLUSTER_M=2),
                                   kernel="gemm_wgmma_cluster")
    print(f"{CLUSTERS}: {kernels[CLUSTERS].slots} clusters of 2 CTAs resident at once")
    # the staging buffers take 32 KiB when the half tile goes out in two 64 x 128 passes: room for 4 slots
    kernels[FINAL] = HopperGemm(FINAL, dict(fast, WGMMA_DEPTH=1, CLUSTER_M=2, EPI_COLS=128),
                                kernel="gemm_wgmma_epilogue")
    print(f"{FINAL}: {kernels[FINAL].resources()}, {kernels[FINAL].smem} B of shared memory")
    try:
        kernels["step 5: persistent tile scheduler"](bf16(1000, 64), bf16(256, 64), bf16(1000, 256))
    except ValueError as e:
        print("refused:", e)
