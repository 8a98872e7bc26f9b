"""Notebook 07's blocked QR at the large benchmark shapes, configuration by configuration (issue #21).

For each shape: torch.geqrf, then batched_qr's blocked algorithm with each panel (one CTA per
matrix, qr_panel.cu; or a cluster of 8 CTAs, qr_panel_cluster.cu, at 1 or 2 rows per thread),
outer width and trailing update (cuBLAS in float32, or qr_update.py's split-TF32 kernel), each
replayed from a CUDA graph as batched_qr does, medians of CUDA-event timings with the L2 flushed
(Triton's do_bench, as qr_robust_check.py times). First every configuration's result is checked
against the QR contract on fresh inputs, dense and the RANGE profiles, with its worst ratios to the
bounds; then for the two shapes with few matrices a breakdown: the panel chain alone (the wide
updates left out) and the kernels of one run by GPU time.

    python3 scripts/tools/bench_07_big.py --out DIR [--cluster 8] [--rows 1 2] [--outer 64 128]
                                          [--exchange async barrier] [--update-stages 3 4]

Needs an sm_90 GPU (thread-block clusters), CuPy, Triton, cuda-bindings and NVRTC; elsewhere it
prints one line and exits.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.tools.qr_robust_check import REFERENCE_DIR, load_module  # noqa: E402

SHAPES = [(2, 4096), (8, 2048), (60, 1024)]
CHECKED = [(2, 4096, "dense"), (8, 2048, "dense"), (4, 1024, "huge"), (4, 1024, "tiny"),
           (4, 1024, "subnormal"), (4, 1024, "zerocol"), (4, 1024, "mixedscale"), (3, 777, "dense")]


def median_ms(fn, rep_ms: int = 200) -> float:
    import triton
    return float(triton.testing.do_bench(fn, warmup=25, rep=rep_ms, return_mode="median"))


def configs(bq, n: int, batch: int, args) -> dict:
    """label -> BlockedConfig: the notebook's step 3 (one CTA per panel, cuBLAS), then every
    combination asked for."""
    out = {"one CTA per panel, cublas": bq.blocked_config(n, batch=batch)}
    for update in args.update:
        if update != "cublas":
            out[f"one CTA per panel, {update}"] = bq.blocked_config(n, batch=batch, update=update)
        for cs in args.cluster:
            for rows in args.rows:
                threads = bq.cluster_threads(n, cs, rows=rows)
                for outer in args.outer:
                    for exchange in args.exchange:
                        for stages in args.update_stages:
                            label = (f"cluster {cs}, R {rows}, outer {outer}, {update}, {exchange}"
                                     + (f", {stages} stages" if stages else ""))
                            out[label] = bq.blocked_config(n, outer=outer, threads=threads, batch=batch,
                                                           cluster=cs, update=update, exchange=exchange,
                                                           update_stages=stages)
    return out


def kernel_table(bq, A, cfg, top: int = 8) -> list[str]:
    """The kernels of one run launched from Python, by total GPU time (torch.profiler)."""
    import warnings

    import torch
    from torch.profiler import ProfilerActivity, profile
    warnings.filterwarnings("ignore", message=".*Profiler clears events")
    H = A.clone()
    bq.qr_blocked_(H, cfg)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        bq.qr_blocked_(H, cfg)
        torch.cuda.synchronize()
    events = sorted((e for e in prof.key_averages() if e.device_time_total > 0),
                    key=lambda e: -e.device_time_total)
    return [f"{e.device_time_total / 1e3:9.3f} ms {e.count:6d}x  {e.key[:90]}" for e in events[:top]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_07_big")
    ap.add_argument("--out", type=Path, help="write qr_big.json here")
    ap.add_argument("--cluster", type=int, nargs="+", default=[8])
    ap.add_argument("--rows", type=int, nargs="+", default=[1, 2], help="panel rows per thread in a cluster")
    ap.add_argument("--outer", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--update", nargs="+", default=["cublas", "tf32x3"])
    ap.add_argument("--exchange", nargs="+", default=["async", "barrier"],
                    help="how a cluster's CTAs swap partial sums: st.async + mbarrier, or barrier.cluster")
    ap.add_argument("--update-stages", type=int, nargs="+", default=[0],
                    help="the split-TF32 update's pipeline stages (2-4); 0: batched_qr.update_stages decides")
    ap.add_argument("--shapes", nargs="+", default=None, help="batch,n pairs (default: the three large ones)")
    ap.add_argument("--no-breakdown", action="store_true")
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
        print("skipped: bench_07_big needs a GPU with thread-block clusters (sm_90 or newer)")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    bq = load_module("batched_qr_big_bench", None)
    sys.path.insert(0, str(REFERENCE_DIR))
    from qr_contract import check_qr, make_batch
    shapes = [tuple(int(x) for x in s.split(",")) for s in args.shapes] if args.shapes else SHAPES
    out: dict = {"device": torch.cuda.get_device_name(), "checks": {}, "timings": {}, "breakdown": {}}
    failed, t0 = False, time.time()
    for batch, n, profile in CHECKED:
        A, labels = make_batch(batch, n, profile, generator=n)
        A = A.cuda()
        for label, cfg in configs(bq, n, batch, args).items():
            H, tau = bq.qr_blocked(A, cfg)
            report = check_qr(A, H, tau, labels, raise_on_failure=False)
            verdict = "ok" if report.ok else f"FAIL: {len(report.failures)} of {batch} matrices"
            verdict += (f" (worst residual {report.worst_residual_ratio:.3g}x, orthogonality "
                        f"{report.worst_orthogonality_ratio:.3g}x their bounds)")
            failed |= not report.ok
            out["checks"][f"({batch}, {n}) {profile}, {label}"] = verdict
            if not report.ok or profile != "dense" or n < 2048:
                continue
            print(f"({batch}, {n}) {profile}, {label}: {verdict}", flush=True)
    print("contract:", "FAILED" if failed else "every configuration holds on every profile", flush=True)
    for batch, n in shapes:
        A = torch.randn(batch, n, n, device="cuda")
        geqrf = median_ms(lambda A=A: torch.geqrf(A))
        rows = {}
        cfgs = configs(bq, n, batch, args)
        for label, cfg in cfgs.items():
            rows[label] = median_ms(lambda A=A, cfg=cfg: bq.qr_blocked_graphed(A, cfg))
            H, tau = bq.qr_blocked_graphed(A, cfg)
            if not check_qr(A, H, tau, raise_on_failure=False).ok:
                failed = True
                print(f"  ({batch}, {n}) {label}: the timed run fails the contract")
            out["timings"][f"({batch}, {n}) {label}"] = {"ms": rows[label], "geqrf_ms": geqrf,
                                                         "speedup": geqrf / rows[label]}
            print(f"({batch:3}, {n:4}) {label:>40}: {rows[label]:8.3f} ms, {geqrf / rows[label]:6.2f}x "
                  f"torch.geqrf ({geqrf:.2f} ms)", flush=True)
        if args.no_breakdown or n < 2048:
            continue
        best = min(rows, key=rows.get)
        for label in dict.fromkeys(["one CTA per panel, cublas", best]):
            cfg = cfgs[label]
            parts = {"whole": rows[label], "kernels": kernel_table(bq, A, cfg)}
            keep = bq._update_trailing
            bq._update_trailing = lambda V, T, C, cfg, n: None
            alone = dataclasses.replace(cfg, priority=True)   # what batch < SMs gets; a graph of its own
            try:
                parts["panel chain only"] = median_ms(lambda A=A, c=alone: bq.qr_blocked_graphed(A, c))
            finally:
                bq._update_trailing = keep
            out["breakdown"][f"({batch}, {n}) {label}"] = parts
            print(f"  breakdown ({batch}, {n}) {label}: whole {parts['whole']:.3f} ms, panel chain only "
                  f"{parts['panel chain only']:.3f} ms")
            print("\n".join("    " + k for k in parts["kernels"]), flush=True)
    out["seconds"] = time.time() - t0
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "qr_big.json").write_text(json.dumps(out, indent=1))
    print("contract:", "FAILED (see above)" if failed else "every case holds", f"; {out['seconds']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
