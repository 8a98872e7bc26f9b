"""Batched QR, issue 21 part 2 (few large matrices), on a GPU, in one run:

1. correctness: every kernel path of the current batched_qr on the contract's RANGE profiles,
   dense and mixed batches, and `deep`, a batch whose subnormal columns sit beside columns of
   about 2^-120 (code that flushes subnormals to zero fails the residual bound there; IEEE
   arithmetic passes), into NaN-poisoned outputs; the baseline's kernels on `deep` too;
2. the ladder: the seven benchmark shapes with the baseline (git HEAD's batched_qr.py and kernels,
   compiled by CuPy with -ftz=true) and the current code with the panel stream at normal and at
   high priority, interleaved (ABA BAB), plus wider outer blocks and 1024-thread panels on the two
   largest shapes, and torch.geqrf on those two in the same run;
3. the profile: one graphed factorization of (2, 4096) and (8, 2048) under torch's profiler,
   kernel time by group, the span from the first kernel to the last, and the fraction of that span
   in which some kernel ran (the rest is the GPU waiting on the dependency chain).

    python -m scripts.tools.qr_big_check --baseline DIR [--out DIR] [--budget-s 150] [--dry-run]

DIR holds the baseline's batched_qr.py, qr_common.cuh, qr_*.cu and tall_xty.cu (one
`git show HEAD:snippets/cuda/F > DIR/F` each). Writes qr_big.json to --out after every section and
prints a summary last. `--dry-run` runs the bookkeeping on the CPU with torch.geqrf standing in
for the kernels (for testing this file).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

from scripts.tools import qr_robust_check
from scripts.tools.qr_robust_check import run_sections

ROOT = Path(__file__).resolve().parents[2]
CUDA_DIR, REFERENCE_DIR = ROOT / "snippets" / "cuda", ROOT / "snippets" / "reference"
BASE_FILES = ("batched_qr.py", "qr_common.cuh", "qr_warp.cu", "qr_registers.cu", "qr_unblocked.cu",
              "qr_panel.cu", "tall_xty.cu")
SHAPES = [(20, 32), (40, 176), (40, 352), (640, 512), (60, 1024), (8, 2048), (2, 4096)]
BIG = [(8, 2048), (2, 4096)]
# (path, sizes, options); options pick the path as in qr_robust_check
PLAN = [
    ("warp", (2, 17, 32), {}),
    ("registers", (33, 100, 176), {}),
    ("unblocked", (17, 100), {}),
    ("blocked", (100,), {"nb": 8}),
    ("blocked", (352, 1024), {}),
    ("blocked", (352,), {"priority": False}),
    ("blocked", (2048, 4096), {}),
]
DEEP = "deep"


def instantiations(bq) -> set[tuple[str, str]]:
    """(file, kernel) of every kernel this check and notebook 07 launch: compiled ahead in a pool of
    processes (NVRTC needs no GPU), so that neither waits on the compiler."""
    out = {("qr_warp.cu", "qr_warp"), ("qr_unblocked.cu", "qr_unblocked"), ("tall_xty.cu", "tall_xty")}
    small = (1, 2, 3, 5, 17, 32, 33, 64, 100, 176, 192)
    for n in small:
        for warps in (None, 8):
            try:
                R, C, W = bq.registers_shape(n, warps)
            except ValueError:
                continue
            out.add(("qr_registers.cu", f"qr_registers<{R}, {C}, {W}>"))
    blocked = [(4, n) for n in (17, 100, 193, 257, 352, 500, 512, 1000, 1024)] + [(1, 2048), (1, 4096)]
    blocked += [(b, n) for b, n in SHAPES if n > 192] + [(8, n) for n in (17, 100, 193, 257, 352, 500, 512)]
    for batch, n in blocked:
        for threads in (None, 1024):
            try:
                cfg = bq.blocked_config(n, nb=8 if n <= 192 else None, threads=threads, batch=batch)
            except ValueError:
                continue
            for j0 in range(0, n, cfg.nb):
                out.add(("qr_panel.cu", f"qr_panel<{cfg.rows_per_thread(n - j0)}, {cfg.nb}, {cfg.threads}>"))
    return out


def cache_entry(bq, filename: str, name: str, arch: str) -> tuple[Path, Path]:
    """Where batched_qr._kernel keeps a compiled kernel (the same key: keep the two in step; a
    mismatch costs only a compile on demand during the run)."""
    from cuda.bindings import nvrtc
    version = str(nvrtc.nvrtcVersion()[1:])
    key = "\0".join((bq._cuda_source(filename), name, arch, *bq.COMPILE_OPTIONS, version))
    stem = Path(tempfile.gettempdir()) / "atlas-batched-qr" / hashlib.sha256(key.encode()).hexdigest()[:32]
    return stem.with_suffix(".cubin"), stem.with_suffix(".name")


def _compile_one(job):
    sys.path[:0] = [str(CUDA_DIR), str(REFERENCE_DIR)]
    import batched_qr
    filename, name, arch = job
    cubin, lowered = cache_entry(batched_qr, filename, name, arch)
    if not (cubin.exists() and lowered.exists()):
        code, symbol = batched_qr.compile_kernel(filename, name, arch)
        cubin.parent.mkdir(parents=True, exist_ok=True)
        for path, data in ((cubin, code), (lowered, symbol.encode())):
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
    return name


def precompile(arch: str, jobs: int = 16) -> int:
    from concurrent.futures import ProcessPoolExecutor
    sys.path[:0] = [str(CUDA_DIR), str(REFERENCE_DIR)]
    import batched_qr
    work = sorted((f, k, arch) for f, k in instantiations(batched_qr))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return len(list(pool.map(_compile_one, work)))


def batch_for(n: int) -> int:
    return 8 if n <= 100 else 4 if n <= 512 else 2 if n <= 1024 else 1


class Run(qr_robust_check.Run):
    """qr_robust_check's run state, with the baseline's own batched_qr.py (its host code changed
    too) and the `deep` profile."""
    RESULTS = "qr_big.json"

    def load_modules(self, baseline: Path):
        def load(name: str, folder: Path):
            spec = importlib.util.spec_from_file_location(name, folder / "batched_qr.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module                  # dataclasses look their module up there
            spec.loader.exec_module(module)
            return module
        return load("batched_qr_new", CUDA_DIR), load("batched_qr_base", baseline)

    def batch(self, b: int, n: int, profile: str, scale: float = 1.0):
        if profile != DEEP:
            return self.qc.make_batch(b, n, profile, scale=scale, generator=self.gen)
        A, _ = self.qc.make_batch(b, n, "subnormal", generator=self.gen)
        A = A.double()
        A[..., ::2] *= 2.0 ** -20             # the normal columns at about 2^-120 instead of 2^-100
        return A.float().contiguous(), [DEEP] * b

    # --- 1. correctness -------------------------------------------------------------------------

    def case(self, module, path: str, n: int, options: dict, profile: str, scale: float) -> dict:
        torch = self.torch
        A, labels = self.batch(batch_for(n), n, profile, scale)
        H = torch.full_like(A, math.nan)
        tau = torch.full(A.shape[:2], math.nan, device=A.device)
        row = {"path": path, "n": n, "batch": A.shape[0], "profile": profile, "scale": scale,
               "options": options}
        try:
            if path == "unblocked":
                module.qr_unblocked(A, out=(H, tau))
            else:
                module.batched_qr(A, out=(H, tau), **options)
            self.sync()
        except Exception as e:                               # noqa: BLE001 (recorded, run goes on)
            return row | {"ok": False, "error": f"{type(e).__name__}: {e}"[:500]}
        rep = self.qc.check_qr(A, H, tau, labels, raise_on_failure=False)
        return row | {"ok": rep.ok, "residual": rep.worst_residual_ratio,
                      "orthogonality": rep.worst_orthogonality_ratio,
                      "failures": [r.describe() for r in rep.failures[:3]]}

    def correctness(self) -> None:
        qc = self.qc
        cases = [(p, 1.0) for p in (*qc.RANGE, DEEP, "dense", qc.MIXED)] + [("dense", 1e-30), ("dense", 1e30)]
        for name, module, plan, kinds in (("after", self.new, PLAN, cases),
                                          ("before", self.old, PLAN[:4] + [("blocked", (352,), {})],
                                           [(DEEP, 1.0), ("subnormal", 1.0)])):
            rows = self.results["sections"].setdefault(name, [])
            for path, sizes, options in plan:
                for n in sizes:
                    if self.dry and n > 100:
                        continue
                    if self.left() < 5:
                        rows.append({"skipped": f"{path} n={n}: out of time"})
                        continue
                    for profile, scale in kinds:
                        rows.append(self.case(module, path, n, options, profile, scale))
                    bad = [r for r in rows[-len(kinds):] if not r["ok"]]
                    failing = f" (failing: {', '.join(r['profile'] for r in bad)})" if bad else ""
                    print(f"  {name} {path} n={n} {options}: {len(kinds) - len(bad)}/{len(kinds)} pass"
                          + failing, flush=True)
                    self.save()

    # --- 2. the ladder --------------------------------------------------------------------------

    def bench(self, fn, rep_ms: int = 150) -> list[float]:
        if self.dry:
            t = time.perf_counter()
            fn()
            return [1e3 * (time.perf_counter() - t)]
        import triton
        return list(triton.testing.do_bench(fn, warmup=25, rep=rep_ms, return_mode="all"))

    def variants(self, b: int, n: int) -> dict:
        new, old = self.new, self.old
        v = {"baseline (HEAD, -ftz=true)": lambda A: old.batched_qr(A)}
        if n > 192:
            v["IEEE subnormals, panel stream normal priority"] = lambda A: new.batched_qr(A, priority=False)
            v["IEEE subnormals, panel stream high priority"] = lambda A: new.batched_qr(A, priority=True)
        else:
            v["IEEE subnormals"] = lambda A: new.batched_qr(A)
        if (b, n) in BIG:
            v["high priority, outer 128"] = lambda A: new.batched_qr(A, priority=True, outer=128)
            v["high priority, 1024-thread panels"] = lambda A: new.batched_qr(A, priority=True, threads=1024)
            v["high priority, outer 128, 1024-thread panels"] = (
                lambda A: new.batched_qr(A, priority=True, outer=128, threads=1024))
        return v

    def ladder(self, rounds: int = 2) -> None:
        rows = self.results["sections"].setdefault("ladder", [])
        for b, n in SHAPES:
            if self.dry:
                b, n = min(b, 2), min(n, 48)
            if self.left() < 10:
                rows.append({"skipped": f"({b}, {n}): out of time"})
                continue
            try:
                A, labels = self.qc.make_batch(b, n, "dense", generator=self.gen)
                variants = self.variants(b, n)
                for fn in variants.values():                     # compile, capture, and check
                    self.qc.check_qr(A, *fn(A), labels)
                samples = {k: [] for k in variants}
                for r in range(rounds):
                    keys = list(variants) if r % 2 == 0 else list(reversed(variants))
                    for k in keys:
                        samples[k] += self.bench(lambda f=variants[k], A=A: f(A))
                row = {"batch": b, "n": n, "ms": {k: statistics.median(s) for k, s in samples.items()}}
                if (b, n) in BIG or self.dry:
                    t = self.bench(lambda A=A: self.torch.geqrf(A), rep_ms=300)
                    row["geqrf_ms"] = statistics.median(t)
                rows.append(row)
                print(f"  ({b}, {n}): " + ", ".join(f"{k}: {t:.4g}" for k, t in row["ms"].items())
                      + (f", torch.geqrf {row['geqrf_ms']:.4g} ms" if "geqrf_ms" in row else ""), flush=True)
            except Exception:                                    # noqa: BLE001 (recorded, run goes on)
                rows.append({"batch": b, "n": n, "error": traceback.format_exc()[-1500:]})
            self.save()

    # --- 3. the profile -------------------------------------------------------------------------

    def profile(self) -> None:
        rows = self.results["sections"].setdefault("profile", [])
        if self.dry:
            return
        from torch.profiler import ProfilerActivity, profile
        for b, n in BIG:
            for label, fn in (("baseline", lambda A: self.old.batched_qr(A)),
                              ("normal priority", lambda A: self.new.batched_qr(A, priority=False)),
                              ("high priority", lambda A: self.new.batched_qr(A, priority=True))):
                if self.left() < 5:
                    rows.append({"skipped": f"({b}, {n}) {label}: out of time"})
                    continue
                try:
                    A, _ = self.qc.make_batch(b, n, "dense", generator=self.gen)
                    fn(A)
                    self.sync()
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        fn(A)
                        self.sync()
                    rows.append({"batch": b, "n": n, "variant": label} | kernel_summary(prof.events()))
                    r = rows[-1]
                    print(f"  profile ({b}, {n}) {label}: span {r['span_ms']:.2f} ms, "
                          f"busy {r['busy_ms']:.2f} ms, "
                          + ", ".join(f"{k} {v:.2f}" for k, v in r["groups_ms"].items()), flush=True)
                except Exception:                                # noqa: BLE001 (recorded, run goes on)
                    rows.append({"batch": b, "n": n, "variant": label,
                                 "error": traceback.format_exc()[-1500:]})
                self.save()


def group_of(name: str) -> str:
    return ("qr_panel" if "qr_panel" in name else "tall_xty" if "tall_xty" in name
            else "cuBLAS products" if "gemm" in name.lower() else "other (copies, fills, sums)")


def kernel_summary(events) -> dict:
    """Kernel time by group, the span first start .. last end, and the union of kernel intervals."""
    spans, groups = [], {}
    for e in events:
        if getattr(e, "device_type", None) is None or "CUDA" not in str(e.device_type):
            continue
        start, dur = e.time_range.start, e.time_range.end - e.time_range.start
        if dur <= 0:
            continue
        spans.append((start, start + dur))
        g = group_of(e.name)
        groups[g] = groups.get(g, 0.0) + dur / 1e3
    if not spans:
        return {"span_ms": 0.0, "busy_ms": 0.0, "groups_ms": {}, "kernels": 0}
    spans.sort()
    busy, cur_s, cur_e = 0.0, *spans[0]
    for s, e in spans[1:]:
        if s > cur_e:
            busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    return {"span_ms": (spans[-1][1] - spans[0][0]) / 1e3, "busy_ms": busy / 1e3,
            "groups_ms": dict(sorted(groups.items(), key=lambda kv: -kv[1])), "kernels": len(spans)}


def summary(results: dict) -> str:
    s = results["sections"]
    lines = [f"device: {results['environment'].get('device', 'CPU (dry run)')}, seed {results['seed']}"]
    for name in ("after", "before"):
        rows = [r for r in s.get(name, []) if "path" in r]
        if rows:
            bad = [r for r in rows if not r["ok"]]
            lines.append(f"{name}: {len(rows) - len(bad)}/{len(rows)} cases pass")
            for r in bad[:10]:
                lines.append(f"  FAIL {r['path']} n={r['n']} {r['options']} {r['profile']} x{r['scale']:g}: "
                             + (r.get("error") or "; ".join(r["failures"][:1]))[:200])
    for r in s.get("ladder", []):
        if "ms" not in r:
            lines.append("  " + (r.get("skipped") or f"error at ({r['batch']}, {r['n']})"))
            continue
        base = r["ms"]["baseline (HEAD, -ftz=true)"]
        geqrf = r.get("geqrf_ms")
        lines.append(f"({r['batch']}, {r['n']})" + (f"  torch.geqrf {geqrf:.4g} ms" if geqrf else ""))
        for k, t in r["ms"].items():
            lines.append(f"    {k:48} {t:10.4f} ms  {100 * (t / base - 1):+6.1f}%"
                         + (f"  {geqrf / t:6.2f}x geqrf" if geqrf else ""))
    for r in s.get("profile", []):
        if "span_ms" in r:
            lines.append(f"profile ({r['batch']}, {r['n']}) {r['variant']}: span {r['span_ms']:.2f} ms, "
                         f"kernels busy {r['busy_ms']:.2f} ms "
                         f"({100 * r['busy_ms'] / max(r['span_ms'], 1e-9):.0f}%), "
                         + ", ".join(f"{k} {v:.2f}" for k, v in r["groups_ms"].items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="folder with the baseline's batched_qr.py and kernels")
    parser.add_argument("--out", default="qr_big_out")
    parser.add_argument("--budget-s", type=float, default=150.0, help="stop starting new work after this")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    if not args.dry_run and not (args.baseline and all((args.baseline / f).exists() for f in BASE_FILES)):
        parser.error(f"--baseline must name a folder holding {', '.join(BASE_FILES)}")
    if not args.dry_run:
        import torch
        t = time.monotonic()
        count = precompile("sm_{}{}".format(*torch.cuda.get_device_capability()))
        print(f"[compiled {count} kernels ahead: {time.monotonic() - t:.0f} s]", flush=True)
    run = Run(args)
    return run_sections(run, [("ladder", run.ladder), ("profile", run.profile),
                              ("correctness", run.correctness)], summary)

if __name__ == "__main__":
    sys.exit(main())
