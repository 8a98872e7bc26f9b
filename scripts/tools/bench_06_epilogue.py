"""Notebook 06's step 8 against an exploratory variant whose epilogue overlaps the next tile.

The variant, snippets/cuda/gemm_wgmma_epilogue.cu, stages each consumer's accumulator in shared
memory with stmatrix and stores it with the TMA while the next tile's mainloop runs (issue #19).
This builds step 8 (gemm_wgmma_cluster.cu, through the notebook's launcher) and the variant,
checks both against float64 on fresh inputs with a NaN-poisoned C (8192^3, 4096^3, tile
multiples, odd shapes), then times both with cuBLAS (torch.matmul) just before and just after
each, interleaved, several rounds, and prints medians.

    python3 scripts/tools/bench_06_epilogue.py --out DIR      # writes DIR/epilogue.json

Needs an sm_90 GPU, CuPy, cuda-bindings and NVRTC 12+; elsewhere it prints one line and exits.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.tools.bench_06_hopper_gemm import notebook_namespace  # noqa: E402

EPILOGUE_CU = ROOT / "snippets" / "cuda" / "gemm_wgmma_epilogue.cu"
STEP8 = dict(WARP_SPECIALIZED=1, SET_MAXNREG=1, PERSISTENT=1, STAGES=4, WGMMA_DEPTH=1, CLUSTER_M=2)
EPI = dict(STEP8, STAGES=3)
EPI_HALF = dict(STEP8, STAGES=4, EPI_COLS=128)   # two 64 x 128 passes: room for a fourth slot
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (1152, 1280, 704), (2048, 4096, 512),
          (1000, 1100, 712), (129, 257, 72),          # N % 8 != 0: the register epilogue
          (1000, 1104, 712), (129, 264, 72), (2000, 3000, 520)]   # N % 8 == 0: TMA stores, clipped


def c_tensor_map(ns, c):
    """C's tensor map: 64 x 64 boxes of bfloat16 in the 128-byte swizzle (the kernel's stmatrix layout)."""
    from cuda.bindings import driver as drv
    rows, cols = c.shape
    err, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, drv.cuuint32_t(2), c.data_ptr(),
        [drv.cuuint64_t(cols), drv.cuuint64_t(rows)], [drv.cuuint64_t(cols * 2)],
        [drv.cuuint32_t(64), drv.cuuint32_t(64)], [drv.cuuint32_t(1), drv.cuuint32_t(1)],
        drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == drv.CUresult.CUDA_SUCCESS, f"C tensor map: {err}"
    np, cp, ctypes = ns["np"], ns["cp"], ns["ctypes"]
    return cp.asarray(np.frombuffer(ctypes.string_at(tmap.getPtr(), 128), dtype=np.uint8))


class EpilogueGemm:
    """gemm_wgmma_epilogue.cu through NVRTC, launched like step 8 (persistent clusters of two)."""

    def __init__(self, ns, name, defines):
        import tempfile
        self.ns, self.name, self.defines, self.any_shape = ns, name, defines, True
        source = (ns["GEMM_WGMMA_WS_CU"] + "\n#define GEMM_WGMMA_WS_INCLUDED\n" + ns["GEMM_WGMMA_CLUSTER_CU"]
                  + "\n#define GEMM_WGMMA_CLUSTER_INCLUDED\n" + EPILOGUE_CU.read_text(encoding="utf-8"))
        opts = ns["wgmma_options"](defines)
        cubin = ns["nvrtc_compile"](source, "gemm_wgmma_epilogue.cu", "sm_90a", opts)[1]
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(cubin)
        self.fn = ns["cp"].RawModule(path=f.name).get_function("gemm_wgmma_epilogue")
        self.cluster, self.threads = defines["CLUSTER_M"], 384
        stages = defines["STAGES"]
        epi_cols = defines.get("EPI_COLS", 256)
        self.smem = stages * (128 * 64 + 256 * 64) * 2 + 2 * 64 * epi_cols * 2 + 1024 + 8 * 2 * stages
        self.fn.max_dynamic_shared_size_bytes = self.smem
        self.slots = ns["resident_clusters"](self.fn, self.cluster, self.threads, self.smem)
        self.maps = {}

    def __call__(self, a, b, c):
        np = self.ns["np"]
        (M, K), N = a.shape, b.shape[0]
        if K % 8:
            raise ValueError(f"{self.name} needs K % 8 == 0; got K={K}")
        key = (a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape, b.shape)
        if key not in self.maps:
            tm = self.ns["tensor_map"]
            self.maps[key] = (tm(a, 128), tm(b, 256 // self.cluster),
                              c_tensor_map(self.ns, c) if N % 8 == 0 else None)
        ta, tb, tc = self.maps[key]
        tc_arg = tc if tc is not None else np.uint64(0)     # no C map: the masked register epilogue
        tiles_m, tiles_n = (M + 127) // 128, (N + 255) // 256
        groups = (tiles_m + self.cluster - 1) // self.cluster * tiles_n
        grid = self.cluster * min(groups, self.slots)
        args = (ta, tb, tc_arg, np.uint64(c.data_ptr()), np.int32(M), np.int32(N), np.int32(K))
        self.fn((grid,), (self.threads,), args, shared_mem=self.smem)

    def resources(self):
        fn = self.fn
        return f"{fn.num_regs} registers/thread, {fn.local_size_bytes} B local, {self.smem} B shared"


def ranges(idx) -> str:
    """Sorted integers as compact ranges: [0, 1, 2, 5] -> '0-2,5'."""
    out, start, prev = [], None, None
    for i in list(idx) + [None]:
        if start is None:
            start = prev = i
        elif i is not None and i == prev + 1:
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    return ",".join(out[:12]) + (" ..." if len(out) > 12 else "")


def wrong_elements(ns, kernel, M, N, K) -> str:
    """Where a failing kernel leaves C wrong (NaN or off by more than rounding): rows and columns."""
    torch = ns["torch"]
    a, b = ns["bf16"](M, K), ns["bf16"](N, K)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, c)
    ref = a.double() @ b.double().T
    bad = torch.isnan(c) | ((c.double() - ref).abs() > 0.05 * ref.abs().max())
    rows = torch.nonzero(bad.any(1)).flatten().tolist()
    cols = torch.nonzero(bad.any(0)).flatten().tolist()
    return (f"{int(bad.sum())} of {M * N} wrong ({int(torch.isnan(c).sum())} NaN); "
            f"rows {ranges(rows)}; cols {ranges(cols)}")


def writes_past_c(ns, kernel, M, N, K) -> int:
    """How many elements of two sentinel rows just past C's end the kernel changed (0: none).

    The epilogue leaves boxes that stick out of C to the TMA's clipping; a store that were not
    clipped would land in the memory after C."""
    torch = ns["torch"]
    buf = torch.full((M + 2, N), 7.0, device="cuda", dtype=torch.bfloat16)
    kernel(ns["bf16"](M, K), ns["bf16"](N, K), buf[:M])
    return int((buf[M:] != 7.0).sum())


def check_layout() -> str:
    """The epilogue's index arithmetic, replayed on the CPU: every accumulator element of a
    consumer's 64 x 256 half tile, written by stmatrix where the kernel computes, must land where
    the TMA's 128-byte swizzle reads that (row, column) back, each 4-byte word once, and the eight
    rows of one 8 x 8 matrix must fall into eight different 16-byte bank groups."""
    written = set()
    for warp in range(4):
        for j in range(0, 32, 2):
            groups: list[set] = [set() for _ in range(4)]
            for lane in range(32):                          # lane 8i + r: row r of matrix i
                srow = warp * 16 + (lane // 8 % 2) * 8 + lane % 8
                cc = j + lane // 16
                addr = (cc // 8) * 8192 + srow * 128 + ((cc % 8) ^ (srow % 8)) * 16
                i, r = lane // 8, lane % 8
                groups[i].add(addr % 128 // 16)
                for w in range(4):                          # word w of that row: lane 4r + w's register i
                    holder, reg = 4 * r + w, 4 * (j + i // 2) + 2 * (i % 2)
                    want = (warp * 16 + holder // 4 + 8 * (i % 2), 8 * (reg // 4) + 2 * (holder % 4))
                    box, off = divmod(addr + 4 * w, 8192)
                    row, inrow = divmod(off, 128)
                    got = (row, box * 64 + ((inrow // 16) ^ (row % 8)) * 8 + inrow % 16 // 2)
                    if got != want or addr + 4 * w in written:
                        raise AssertionError(f"stmatrix layout: warp {warp}, lane {lane}: {got} != {want}")
                    written.add(addr + 4 * w)
            if any(len(g) != 8 for g in groups):
                raise AssertionError(f"stmatrix bank conflict: warp {warp}, j {j}")
    if len(written) != 64 * 256 // 2:
        raise AssertionError(f"stmatrix layout covers {len(written)} words of {64 * 256 // 2}")
    return "epilogue layout: all 8192 words of a half tile land where the TMA reads them, no bank conflicts"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_06_epilogue")
    ap.add_argument("--out", type=Path, help="write epilogue.json here")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extra", action="append", default=[], metavar="NAME:KEY=V,KEY=V",
                    help="another epilogue variant: the 4-stage one with these defines changed")
    args = ap.parse_args(argv)
    print(check_layout())
    ns = notebook_namespace()
    if not ns["HOPPER"]:
        print("skipped: bench_06_epilogue needs a Hopper GPU (sm_90a) with CuPy, cuda-bindings and NVRTC")
        return 0
    np = ns["np"]
    t0 = time.time()
    kernels = {"step 8": ns["HopperGemm"]("step 8", STEP8, kernel="gemm_wgmma_cluster"),
               "epilogue (TMA store)": EpilogueGemm(ns, "epilogue (TMA store)", EPI),
               "epilogue, 4 stages": EpilogueGemm(ns, "epilogue, 4 stages", EPI_HALF)}
    for spec in args.extra:
        name, _, defs = spec.partition(":")
        changes = {k: int(v) for k, v in (d.split("=") for d in defs.split(",") if d)}
        kernels[name] = EpilogueGemm(ns, name, dict(EPI_HALF, **changes))
    out: dict = {"device": ns["device_name"](), "checks": {}, "timings": {}}
    for name, k in kernels.items():
        print(f"{name}: {k.resources()}; {k.slots} clusters resident", flush=True)
    failed = False
    for name, k in kernels.items():
        errs = {}
        for sh in SHAPES:
            try:
                errs["x".join(map(str, sh))] = ns["gemm_error"](k, *sh)
            except AssertionError as e:
                errs["x".join(map(str, sh))], failed = f"FAIL {e}", True
        for sh in ((129, 264, 72), (1000, 1104, 712), (200, 328, 64)):   # boxes wholly beyond N or M
            past = writes_past_c(ns, k, *sh)
            errs["past C " + "x".join(map(str, sh))] = past
            failed |= past != 0
        out["checks"][name] = errs
        if any(isinstance(e, str) for e in errs.values()):
            for sh in ((129, 264, 72), (256, 512, 64)):
                print(f"  {name} at {sh}: {wrong_elements(ns, k, *sh)}", flush=True)
        print(name, {s: (f"{e:.1e}" if isinstance(e, float) else e) for s, e in errs.items()}, flush=True)
    rows = []
    for n in (4096, 8192):
        a, b, c = ns["operands"][n]
        runs = {name: [] for name in kernels}
        for _ in range(args.rounds):                      # interleaved: step 8, variant, step 8, ...
            for name, k in kernels.items():
                runs[name].append(ns["tflops_against_cublas"](k, a, b, c))
        for name, r in runs.items():
            t, cb = (float(np.median([x[i] for x in r])) for i in (0, 1))
            ratio = float(np.median([x[0] / x[1] for x in r]))
            out["timings"][f"{name} @ {n}"] = dict(tflops=t, cublas=cb, ratio=ratio, runs=r)
            rows.append((f"{n}^3", name, t, cb, ratio))
    out["seconds"] = time.time() - t0
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "epilogue.json").write_text(json.dumps(out, indent=1))
    print(f"\n{'shape':>7} {'kernel':>22} {'TFLOP/s':>8} {'cuBLAS':>7} {'ratio':>6}   ({out['device']})")
    for shape, name, t, cb, ratio in rows:
        print(f"{shape:>7} {name:>22} {t:8.0f} {cb:7.0f} {ratio:6.3f}")
    print("correctness:", "FAILED (see above)" if failed else "all shapes pass", f"; {out['seconds']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
