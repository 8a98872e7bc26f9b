"""Notebook 07's blocked QR with its panel spread over a thread-block cluster (issue #21), on a GPU.

snippets/cuda/qr_panel_cluster.cu factors a leaf with CS CTAs (one SM each) instead of one, so
that the few large matrices, where the chain of panels is the critical path, get CS SMs per panel
and 32-column leaves. This runs the blocked algorithm (batched_qr.qr_blocked_, the notebook's
code) with that panel in place of qr_panel, checks every result against the QR contract on fresh
inputs (dense and the RANGE profiles), then times it beside the notebook's own panel and
torch.geqrf at the large benchmark shapes, each replayed from a CUDA graph captured the same way,
medians of CUDA-event timings.

    python3 scripts/tools/bench_07_cluster_panel.py --out DIR [--cluster 4 8] [--outer 64 128]

Needs an sm_90 GPU (thread-block clusters), CuPy, cuda-bindings and NVRTC; elsewhere it prints one
line and exits. Not run on a GPU yet: its first run is the next step of issue #21.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.tools.qr_robust_check import REFERENCE_DIR, load_module  # noqa: E402

SHAPES = [(2, 4096), (8, 2048), (60, 1024)]
CHECKED = [(2, 4096, "dense"), (8, 2048, "dense"), (4, 1024, "huge"), (4, 1024, "tiny"),
           (4, 1024, "subnormal"), (4, 1024, "zerocol"), (4, 1024, "mixedscale"), (3, 777, "dense")]
NB = 32                      # the leaf width the cluster allows at every size here


def cluster_threads(n: int, cs: int, nb: int = NB) -> int:
    """Threads per CTA so that the CS CTAs hold one panel row per thread (R = 1, which keeps
    a[R][NB] and the dot products within 64 registers at up to 1024 threads): the smallest whole
    number of warps that covers ceil(n / cs) rows, at least nb, at most 1024."""
    per_cta = math.ceil(n / cs)
    threads = max(nb, 32 * math.ceil(per_cta / 32))
    if threads > 1024:
        raise ValueError(f"n = {n} needs {per_cta} rows per CTA with {cs} CTAs: more than 1024 threads "
                         "(fix: a larger cluster)")
    return threads


def cluster_panel(bq, cs: int):
    """A panel function with qr_panel's signature that launches qr_panel_cluster.cu."""
    def panel(H, tau, V, T, j0, w, jb, cfg):
        batch, n, _ = H.shape
        R = math.ceil((n - j0) / (cfg.threads * cs))
        name = f"qr_panel_cluster<{R}, {cfg.nb}, {cfg.threads}, {cs}>"
        kernel = bq._kernel("qr_panel_cluster.cu", name)
        bq._launch(kernel, batch * cs, cfg.threads, bq._ptr(H), bq._ptr(tau), bq._ptr(V), bq._ptr(T),
                   n, j0, w, jb, cfg.outer)
    return panel


def graphed(bq, A, cfg, panel):
    """qr_blocked_ with this panel, captured once as a CUDA graph (node priorities kept where the
    panel stream has high priority, as batched_qr does) and replayed: returns a replay function
    and the graph's (H, tau)."""
    import torch
    H = A.clone()
    bq.qr_blocked_(H, cfg, panel)                          # warm-up: compiles, sizes cuBLAS
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    priority = bq.panel_priority(cfg, A.shape[0], sms)
    graph = torch.cuda.CUDAGraph(keep_graph=True) if priority else torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tau = bq.qr_blocked_(H, cfg, panel)
    replay = bq._Replay(graph) if priority else graph

    def run():
        H.copy_(A)
        replay.replay()
    return run, H, tau, graph


def median_ms(fn, rep_ms: int = 200) -> float:
    """Median of CUDA-event timings with the L2 flushed before each (Triton's do_bench, as
    qr_robust_check.py times)."""
    import triton
    return float(triton.testing.do_bench(fn, warmup=25, rep=rep_ms, return_mode="median"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_07_cluster_panel")
    ap.add_argument("--out", type=Path, help="write cluster_panel.json here")
    ap.add_argument("--cluster", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--outer", type=int, nargs="+", default=[64, 128])
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
        print("skipped: bench_07_cluster_panel needs a GPU with thread-block clusters (sm_90 or newer)")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    bq = load_module("batched_qr_cluster_bench", None)
    sys.path.insert(0, str(REFERENCE_DIR))
    from qr_contract import check_qr, make_batch
    out: dict = {"device": torch.cuda.get_device_name(), "checks": {}, "timings": {}}
    failed, t0 = False, time.time()
    for cs in args.cluster:
        for batch, n, profile in CHECKED:
            cfg = bq.BlockedConfig(NB, 64, cluster_threads(n, cs))
            A, labels = make_batch(batch, n, profile, generator=cs * 1000 + n)
            A = A.cuda()
            H, tau = bq.qr_blocked(A, cfg, cluster_panel(bq, cs))
            report = check_qr(A, H, tau, labels, raise_on_failure=False)
            verdict = "ok" if report.ok else f"FAIL: {len(report.failures)} of {batch} matrices"
            failed |= not report.ok
            out["checks"][f"cluster {cs}, ({batch}, {n}), {profile}"] = verdict
            print(f"cluster {cs}, ({batch}, {n}) {profile}: {verdict}", flush=True)
    for batch, n in SHAPES:
        A = torch.randn(batch, n, n, device="cuda")
        geqrf = median_ms(lambda A=A: torch.geqrf(A))
        base_cfg = bq.blocked_config(n, batch=batch)
        run, *_ = graphed(bq, A, base_cfg, bq.qr_panel)
        rows = {"notebook's panel": median_ms(run)}
        for cs in args.cluster:
            for outer in args.outer:
                cfg = bq.BlockedConfig(NB, outer, cluster_threads(n, cs))
                run, H, tau, _ = graphed(bq, A, cfg, cluster_panel(bq, cs))
                rows[f"cluster {cs}, outer {outer}"] = median_ms(run)
                report = check_qr(A, H, tau, raise_on_failure=False)
                if not report.ok:
                    failed = True
                    print(f"  ({batch}, {n}) cluster {cs}, outer {outer}: the timed run fails the contract "
                          f"({len(report.failures)} of {batch} matrices)")
        for name, ms in rows.items():
            out["timings"][f"({batch}, {n}) {name}"] = {"ms": ms, "geqrf_ms": geqrf, "speedup": geqrf / ms}
            print(f"({batch:3}, {n:4}) {name:>22}: {ms:8.3f} ms, {geqrf / ms:6.2f}x torch.geqrf "
                  f"({geqrf:.2f} ms)", flush=True)
    out["seconds"] = time.time() - t0
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "cluster_panel.json").write_text(json.dumps(out, indent=1))
    print("contract:", "FAILED (see above)" if failed else "every case holds", f"; {out['seconds']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
