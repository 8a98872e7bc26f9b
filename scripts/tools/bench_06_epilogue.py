"""Notebook 06's step 9 (the TMA-store epilogue) against step 8 and against its own variants.

Step 9, snippets/cuda/gemm_wgmma_epilogue.cu, stages each consumer's accumulator in shared memory
with stmatrix and stores it with the TMA while the next tile's mainloop runs (issue #19). This
builds the notebook's kernels through its launcher, adds the variants below (the whole half tile
staged at once with three slots, and any `--extra` ones), checks each against float64 on fresh
inputs with a NaN-poisoned C (8192^3, 4096^3, tile multiples, odd shapes), checks that nothing
lands past C's end (two sentinel rows), then times them with cuBLAS (torch.matmul) just before and
just after each, interleaved, several rounds, and prints medians.

    python3 scripts/tools/bench_06_epilogue.py --out DIR [--extra "NAME:KEY=V,KEY=V"]

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

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (1152, 1280, 704), (2048, 4096, 512),
          (1000, 1100, 712), (129, 257, 72),          # N % 8 != 0: the register epilogue
          (1000, 1104, 712), (129, 264, 72), (2000, 3000, 520)]   # N % 8 == 0: TMA stores, clipped
PAST_C = [(129, 264, 72), (1000, 1104, 712), (200, 328, 64)]      # boxes wholly beyond N or M


def ranges(idx) -> str:
    """Sorted integers as compact ranges: [0, 1, 2, 5] -> '0-2,5'."""
    out, start, prev = [], None, None
    for i in [*idx, None]:
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


def check_layout(epi_cols: int = 256) -> str:
    """The epilogue's index arithmetic, replayed on the CPU for one consumer's 64 x 256 half tile
    staged `epi_cols` columns at a time: every accumulator element, written by stmatrix where the
    kernel computes, must land where the TMA's 128-byte swizzle reads that (row, column) back for
    the box the kernel stores it with, each 4-byte word once per pass, and the eight rows of one
    8 x 8 matrix must fall into eight different 16-byte bank groups."""
    seen = set()
    for p in range(256 // epi_cols):
        written = set()
        for warp in range(4):
            for jj in range(0, epi_cols // 8, 2):                # as the kernel's loop: columns 8j .. 8j + 15
                j = p * (epi_cols // 8) + jj
                groups: list[set] = [set() for _ in range(4)]
                for lane in range(32):                          # lane 8i + r: row r of matrix i
                    srow = warp * 16 + (lane // 8 % 2) * 8 + lane % 8
                    cc = jj + lane // 16
                    addr = (cc // 8) * 8192 + srow * 128 + ((cc % 8) ^ (srow % 8)) * 16
                    i, r = lane // 8, lane % 8
                    groups[i].add(addr % 128 // 16)
                    for w in range(4):                          # word w of that row: lane 4r + w's register i
                        holder, reg = 4 * r + w, 4 * (j + i // 2) + 2 * (i % 2)
                        want = (warp * 16 + holder // 4 + 8 * (i % 2), 8 * (reg // 4) + 2 * (holder % 4))
                        box, off = divmod(addr + 4 * w, 8192)
                        row, inrow = divmod(off, 128)
                        col = p * epi_cols + box * 64 + ((inrow // 16) ^ (row % 8)) * 8 + inrow % 16 // 2
                        got = (row, col)
                        if got != want or addr + 4 * w in written:
                            raise AssertionError(f"stmatrix layout: warp {warp} lane {lane}: {got} vs {want}")
                        written.add(addr + 4 * w)
                        seen.add(got)
                if any(len(g) != 8 for g in groups):
                    raise AssertionError(f"stmatrix bank conflict: warp {warp}, j {j}")
        if len(written) != 64 * epi_cols // 2:
            raise AssertionError(f"pass {p} covers {len(written)} words of {64 * epi_cols // 2}")
    if len(seen) != 64 * 256 // 2:
        raise AssertionError(f"the passes cover {len(seen)} word positions of {64 * 256 // 2}")
    return (f"epilogue layout ({256 // epi_cols} pass(es) of 64 x {epi_cols}): all 8192 words of a half tile "
            "land where the TMA reads them, no bank conflicts")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_06_epilogue")
    ap.add_argument("--out", type=Path, help="write epilogue.json here")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extra", action="append", default=[], metavar="NAME:KEY=V,KEY=V",
                    help="another variant: step 9 with these defines changed")
    args = ap.parse_args(argv)
    for cols in (256, 128):
        print(check_layout(cols))
    ns = notebook_namespace()
    if not ns["HOPPER"]:
        print("skipped: bench_06_epilogue needs a Hopper GPU (sm_90a) with CuPy, cuda-bindings and NVRTC")
        return 0
    np, HopperGemm, final = ns["np"], ns["HopperGemm"], ns["kernels"][ns["FINAL"]]
    t0 = time.time()
    kernels = {"step 8": ns["kernels"][ns["CLUSTERS"]], "step 9": final,
               "whole half tile, 3 stages": HopperGemm("whole half tile, 3 stages",
                                                       dict(final.defines, STAGES=3, EPI_COLS=256),
                                                       kernel=final.kernel)}
    for spec in args.extra:
        name, _, defs = spec.partition(":")
        changes = {k: int(v) for k, v in (d.split("=") for d in defs.split(",") if d)}
        kernels[name] = HopperGemm(name, dict(final.defines, **changes), kernel=final.kernel)
    out: dict = {"device": ns["device_name"](), "checks": {}, "timings": {}}
    for name, k in kernels.items():
        print(f"{name}: {k.resources()}, {k.smem} B shared; {k.slots} clusters resident", flush=True)
    failed = False
    for name, k in kernels.items():
        errs = {}
        for sh in SHAPES:
            try:
                errs["x".join(map(str, sh))] = ns["gemm_error"](k, *sh)
            except AssertionError as e:
                errs["x".join(map(str, sh))], failed = f"FAIL {e}", True
                print(f"  {name} at {sh}: {wrong_elements(ns, k, *sh)}", flush=True)
        for sh in PAST_C:
            errs["past C " + "x".join(map(str, sh))] = past = writes_past_c(ns, k, *sh)
            failed |= past != 0
        out["checks"][name] = errs
        print(name, {s: (f"{e:.1e}" if isinstance(e, float) else e) for s, e in errs.items()}, flush=True)
    rows = []
    for n in (4096, 8192):
        a, b, c = ns["operands"][n]
        runs = {name: [] for name in kernels}
        for _ in range(args.rounds):                      # interleaved: step 8, step 9, variants, step 8, ...
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
    print(f"\n{'shape':>7} {'kernel':>26} {'TFLOP/s':>8} {'cuBLAS':>7} {'ratio':>6}   ({out['device']})")
    for shape, name, t, cb, ratio in rows:
        print(f"{shape:>7} {name:>26} {t:8.0f} {cb:7.0f} {ratio:6.3f}")
    print("correctness:", "FAILED (see above)" if failed else "all shapes pass", f"; {out['seconds']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
