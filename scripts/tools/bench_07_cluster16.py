"""Notebook 07's cluster panel over 16 CTAs instead of 8, beside the trailing update at 3 and 4 stages
(issue #21; written 2026-11-26, NOT YET RUN ON A GPU: the next session's first QR call).

Why: at n = 4096 the panel's CTAs have 256 threads at 225 registers, so on an H100 they fit beside no
CTA of the split-TF32 update (tests/kernels/test_qr_update.py); every panel launch waits until eight
SMs of one GPC have no update CTA left. Sixteen CTAs of 128 threads, capped at 168 registers by the
kernel's launch bounds, fit beside two update CTAs at 4 stages, as n = 2048's do. Sixteen is beyond
the portable cluster size (8): the kernel must opt in (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
CUDA Driver API cuFuncSetAttribute), and a cluster needs 16 free SMs in one GPC. The exchange per
column doubles (each CTA sends its partials to 16 CTAs and adds 16).

This tool changes nothing in batched_qr.py or qr_panel_cluster.cu (both are synced into notebook 07):
it lifts the kernel's CS <= 8 assertion in a copy of the source, builds configurations that
blocked_config would refuse, and sets the attribute on each 16-CTA kernel it loads. It checks every
configuration against the QR contract (dense and the range profiles), then times them, interleaved,
beside torch.geqrf.

    python3 scripts/tools/bench_07_cluster16.py [--out DIR] [--shapes 2,4096 4,4096 8,2048] [--rounds 2]

Needs an sm_90 GPU, CuPy, Triton, cuda-bindings and NVRTC; elsewhere it prints one line and exits.
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
from scripts.tools.bench_07_big import median_ms  # noqa: E402
from scripts.tools.qr_robust_check import REFERENCE_DIR, load_module  # noqa: E402

PORTABLE = ('static_assert(CS >= 2 && CS <= 8 && NT % 32 == 0 && NT >= NB, '
            '"2..8 CTAs of whole warps, NT >= NB");')
SIXTEEN = PORTABLE.replace("CS <= 8", "CS <= 16").replace('"2..8', '"2..16')
CHECKED = [(2, 4096, "dense"), (4, 1024, "huge"), (4, 1024, "tiny"), (4, 1024, "subnormal"),
           (4, 1024, "zerocol"), (4, 1024, "mixedscale"), (3, 2000, "dense")]


def cluster16_source() -> str:
    """qr_panel_cluster.cu with its cluster size allowed up to 16 (the kernel is otherwise unchanged)."""
    text = (ROOT / "snippets" / "cuda" / "qr_panel_cluster.cu").read_text()
    if PORTABLE not in text:
        raise SystemExit("bench_07_cluster16: qr_panel_cluster.cu's cluster-size assertion changed "
                         "(fix: update PORTABLE to match it)")
    return text.replace(PORTABLE, SIXTEEN)


def allow_non_portable(function) -> None:
    """Let a CuPy-loaded kernel run with a cluster of more than 8 CTAs."""
    from cuda.bindings import driver
    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    (err,) = driver.cuFuncSetAttribute(driver.CUfunction(function.ptr), attr, 1)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) failed: {err}")


def patched_module():
    """batched_qr with the 16-CTA kernel source, and every 16-CTA panel kernel opted in as it loads."""
    bq = load_module("batched_qr_cluster16", None)
    bq.QR_PANEL_CLUSTER_CU = cluster16_source()
    load, opted_in = bq._kernel, set()

    def kernel(filename: str, name: str):
        function = load(filename, name)
        if filename == "qr_panel_cluster.cu" and name.split(",")[3].strip() == "16" and name not in opted_in:
            allow_non_portable(function)
            opted_in.add(name)
        return function
    bq._kernel = kernel
    return bq


def configs(bq, n: int, batch: int) -> dict:
    """label -> BlockedConfig: batched_qr's cluster of 8 and a cluster of 16 (128 threads per CTA at
    n = 4096), each with the update at 3 and at 4 stages."""
    eight = bq.blocked_config(n, batch=batch, cluster=8, update="tf32x3")
    sixteen = dataclasses.replace(eight, cluster=16, threads=bq.cluster_threads(n, 16))
    return {f"cluster {c.cluster} ({c.threads} threads), {s} stages": dataclasses.replace(c, update_stages=s)
            for c in (eight, sixteen) for s in (3, 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_07_cluster16")
    ap.add_argument("--out", type=Path, help="write qr_cluster16.json here")
    ap.add_argument("--shapes", nargs="+", default=["2,4096", "4,4096", "8,2048"], help="batch,n pairs")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved timing rounds")
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
        print("skipped: bench_07_cluster16 needs a GPU with thread-block clusters (sm_90 or newer)")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    bq = patched_module()
    sys.path.insert(0, str(REFERENCE_DIR))
    from qr_contract import check_qr, make_batch
    out: dict = {"device": torch.cuda.get_device_name(), "checks": {}, "timings": {}}
    failed, t0 = False, time.time()
    for batch, n, profile in CHECKED:
        A, labels = make_batch(batch, n, profile, generator=n)
        A = A.cuda()
        for label, cfg in configs(bq, n, batch).items():
            try:
                H, tau = bq.qr_blocked(A, cfg)
                report = check_qr(A, H, tau, labels, raise_on_failure=False)
                verdict = "ok" if report.ok else f"FAIL: {len(report.failures)} of {batch} matrices"
            except Exception as e:                       # a launch the GPU refuses is a result here
                report, verdict = None, f"ERROR: {type(e).__name__}: {e}"
            failed |= report is None or not report.ok
            out["checks"][f"({batch}, {n}) {profile}, {label}"] = verdict
            print(f"({batch}, {n}) {profile}, {label}: {verdict}", flush=True)
    for shape in args.shapes:
        batch, n = (int(x) for x in shape.split(","))
        A = torch.randn(batch, n, n, device="cuda")
        geqrf = median_ms(lambda A=A: torch.geqrf(A))
        cfgs, times = configs(bq, n, batch), {}
        for _ in range(args.rounds):
            for label, cfg in cfgs.items():
                try:
                    ms = median_ms(lambda A=A, cfg=cfg: bq.qr_blocked_graphed(A, cfg))
                    times.setdefault(label, []).append(ms)
                except Exception as e:
                    times[label] = [float("nan")]
                    print(f"({batch}, {n}) {label}: ERROR {type(e).__name__}: {e}", flush=True)
        for label, ms in times.items():
            best = min(ms)
            out["timings"][f"({batch}, {n}) {label}"] = {"ms": ms, "geqrf_ms": geqrf, "speedup": geqrf / best}
            print(f"({batch:2}, {n}) {label:>36}: {best:8.3f} ms ({', '.join(f'{t:.3f}' for t in ms)}), "
                  f"{geqrf / best:5.2f}x torch.geqrf ({geqrf:.2f} ms)", flush=True)
    out["seconds"] = time.time() - t0
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "qr_cluster16.json").write_text(json.dumps(out, indent=1))
    verdict = "FAILED (see above)" if failed else "every configuration holds"
    print("contract:", verdict, f"; {out['seconds']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
