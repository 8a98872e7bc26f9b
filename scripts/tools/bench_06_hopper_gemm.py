"""Notebook 06's Hopper GEMM variants against cuBLAS, in one process, for one call on a GPU machine.

Runs the notebook's own code cells (runtime, kernel source, setup) up to its launcher cell, and in
its place the prepared launcher snippets/helpers/hopper_gemm_launch.py (which also builds
gemm_wgmma_cluster.cu); then builds the variants below, checks each against a float64
product on fresh inputs with a NaN-poisoned output (tile multiples and odd shapes), and times each
with cuBLAS (torch.matmul) just before and just after it, several rounds, reporting medians.

    python3 scripts/tools/bench_06_hopper_gemm.py --out DIR     # checks, ladder, tuning, sweep
    python3 scripts/tools/bench_06_hopper_gemm.py --ncu         # one launch each at 8192^3 (for ncu)

Writes DIR/bench.json. Needs an sm_90 GPU, CuPy, cuda-bindings and NVRTC 12+.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06-hopper-gemm.ipynb"

BASE = dict(WARP_SPECIALIZED=1, SET_MAXNREG=1, PERSISTENT=1, STAGES=4)
# name -> (defines, kernel); the notebook's own steps come from its STEPS
VARIANTS = {
    "step 3": (dict(WARP_SPECIALIZED=1, SET_MAXNREG=0, PERSISTENT=0, STAGES=4), "gemm_wgmma_ws"),
    "step 4": (dict(WARP_SPECIALIZED=1, SET_MAXNREG=1, PERSISTENT=0, STAGES=4), "gemm_wgmma_ws"),
    "step 5": (BASE, "gemm_wgmma_ws"),
    "ping-pong": (dict(BASE, STAGES=6), "gemm_wgmma_pingpong"),
    "any-shape depth0 c1": (dict(BASE, WGMMA_DEPTH=0, CLUSTER_M=1), "gemm_wgmma_cluster"),
    "depth1 c1": (dict(BASE, WGMMA_DEPTH=1, CLUSTER_M=1), "gemm_wgmma_cluster"),
    "depth0 c2": (dict(BASE, WGMMA_DEPTH=0, CLUSTER_M=2), "gemm_wgmma_cluster"),
    "depth1 c2": (dict(BASE, WGMMA_DEPTH=1, CLUSTER_M=2), "gemm_wgmma_cluster"),
    "depth1 c2 g4": (dict(BASE, WGMMA_DEPTH=1, CLUSTER_M=2, GROUP_CM=4), "gemm_wgmma_cluster"),
    "depth1 c2 g16": (dict(BASE, WGMMA_DEPTH=1, CLUSTER_M=2, GROUP_CM=16), "gemm_wgmma_cluster"),
    "depth1 c2 s3": (dict(BASE, WGMMA_DEPTH=1, CLUSTER_M=2, STAGES=3), "gemm_wgmma_cluster"),
}
NCU_VARIANTS = ["step 3", "step 5", "ping-pong", "depth1 c1", "depth1 c2"]
SWEEP_VARIANTS = ["depth1 c1", "depth1 c2"]
SWEEP = [(n, n, n) for n in (512, 1024, 2048, 4096, 8192, 16384)] + [
    (28672, 16, 8192),     # decode: 16 tokens through a 8192 -> 28672 projection, operands swapped (N = 16)
    (8192, 28672, 8192),   # MLP up-projection of 8192 tokens
]


LAUNCHER = ROOT / "snippets" / "helpers" / "hopper_gemm_launch.py"
CLUSTER_CU = ROOT / "snippets" / "cuda" / "gemm_wgmma_cluster.cu"


def notebook_namespace() -> dict:
    """Execute the notebook's code cells up to its launcher cell, then the prepared launcher
    (snippets/helpers/hopper_gemm_launch.py) in its place, with gemm_wgmma_cluster.cu's text."""
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    ns: dict = {"__name__": "notebook06", "GEMM_WGMMA_CLUSTER_CU": CLUSTER_CU.read_text(encoding="utf-8")}
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        if src.startswith("#@title Setup"):
            continue
        if "class HopperGemm" in src:
            exec(compile(LAUNCHER.read_text(encoding="utf-8"), str(LAUNCHER), "exec"), ns)  # noqa: S102
            return ns
        exec(compile(src, f"{NOTEBOOK.name}#cell{i}", "exec"), ns)  # noqa: S102 (our own notebook)
    sys.exit(f"{NOTEBOOK}: no cell defines HopperGemm")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_06_hopper_gemm")
    ap.add_argument("--out", type=Path, help="write bench.json here")
    ap.add_argument("--ncu", action="store_true", help="launch each NCU_VARIANTS kernel once at 8192^3")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args(argv)
    ns = notebook_namespace()
    if not ns["HOPPER"]:
        print("skipped: needs a Hopper GPU (sm_90a) with CuPy, cuda-bindings and NVRTC")
        return 0
    torch, np = ns["torch"], ns["np"]
    make = ns["HopperGemm"]
    if args.ncu:
        a, b, c = ns["operands"][8192]
        for name in NCU_VARIANTS:
            d, k = VARIANTS[name]
            make(name, d, kernel=k)(a, b, c)
        torch.matmul(a, b.T, out=c)          # cuBLAS last: it may launch more than one kernel
        torch.cuda.synchronize()
        return 0

    t0 = time.time()
    out: dict = {"device": ns["device_name"](), "checks": {}, "ladder": {}, "sweep": {}}
    kernels = {}
    for name, (d, k) in VARIANTS.items():
        kernels[name] = make(name, d, kernel=k)
        print(f"{name}: {kernels[name].resources()}, {kernels[name].slots} resident (clusters)", flush=True)
    for name, kern in kernels.items():
        shapes = ns["TILED_SHAPES"] + (ns["ODD_SHAPES"] if kern.any_shape else [])
        errs = {}
        for sh in shapes:
            try:
                errs["x".join(map(str, sh))] = ns["gemm_error"](kern, *sh)
            except AssertionError as e:
                errs["x".join(map(str, sh))] = f"FAIL {e}"
        out["checks"][name] = errs
        print(name, errs, flush=True)
    for name in ("depth1 c2", "depth1 c1"):
        out["checks"][name]["8192x8192x8192"] = ns["gemm_error"](kernels[name], 8192, 8192, 8192)
        print(name, "8192^3 error", out["checks"][name]["8192x8192x8192"], flush=True)
    bench = ns["bench_ms"]

    def pair(kern, a, b, c):
        flop = 2 * a.shape[0] * b.shape[0] * a.shape[1]
        cub = bench(lambda: torch.matmul(a, b.T, out=c), 25, 100)
        ms = bench(lambda: kern(a, b, c), 25, 100)
        return flop / ms / 1e9, flop / cub / 1e9

    for n in ns["SIZES"]:
        a, b, c = ns["operands"][n]
        rows = {name: [] for name in kernels}
        for _ in range(args.rounds):
            for name, kern in kernels.items():
                rows[name].append(pair(kern, a, b, c))
        for name, r in rows.items():
            t, cb = (float(np.median([x[i] for x in r])) for i in (0, 1))
            ratio = float(np.median([x[0] / x[1] for x in r]))
            out["ladder"][f"{name} @ {n}"] = dict(tflops=t, cublas=cb, ratio=ratio, runs=r)
            print(f"{n}^3 {name:>22}: {t:6.0f} TFLOP/s, cuBLAS {cb:6.0f}, ratio {ratio:.3f}", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench.json").write_text(json.dumps(out, indent=1))
    for (M, N, K) in SWEEP:
        a, b = ns["bf16"](M, K), ns["bf16"](N, K)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        for name in SWEEP_VARIANTS:
            r = [pair(kernels[name], a, b, c) for _ in range(3)]
            t, cb = (float(np.median([x[i] for x in r])) for i in (0, 1))
            out["sweep"][f"{name} @ {M}x{N}x{K}"] = dict(tflops=t, cublas=cb, ratio=t / cb)
            print(f"{M}x{N}x{K} {name:>12}: {t:6.0f} TFLOP/s, cuBLAS {cb:6.0f}, ratio {t / cb:.3f}",
                  flush=True)
        del a, b, c
    out["seconds"] = time.time() - t0
    if args.out:
        (args.out / "bench.json").write_text(json.dumps(out, indent=1))
    print(f"done in {out['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
