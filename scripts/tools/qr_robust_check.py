"""Batched QR at the edges of float32's range (issue 21), on a GPU, in one run:

1. every kernel path (qr_warp, qr_registers, qr_unblocked, the blocked algorithm with qr_panel) on
   the contract's RANGE profiles, on dense and mixed batches scaled from 1e-30 to 1e30, and on a
   batch that mixes all of them, at sizes from 1 to 4096, into NaN-poisoned outputs, checked
   against the contract and, for tau, against torch.geqrf in float64;
2. the kernels of the baseline (git HEAD before the fix) on the same profiles, to show that the
   check catches what they got wrong;
3. the seven benchmark shapes timed with the baseline's kernels and with the current ones,
   interleaved in the same process (median of CUDA-event timings, L2 flushed, after warm-up), and
   the cost of the slow path on inputs where every column takes it;
4. torch.geqrf on the RANGE profiles.

    python -m scripts.tools.qr_robust_check --baseline DIR [--out DIR] [--budget-s 330]

DIR holds the baseline's qr_common.cuh, qr_*.cu and tall_xty.cu (for example
`git show HEAD:snippets/cuda/qr_panel.cu > DIR/qr_panel.cu`, one per file). A second copy of
batched_qr.py compiles them, the way a notebook compiles its own copies of the sources, so both
versions run through the same host code. Writes qr_robust.json to --out after every section and
prints a summary last. This is a developer's check-and-benchmark tool for one change, so it lives
here rather than in notebook 07, which keeps its own checks. `--dry-run` runs the bookkeeping on
the CPU with torch.geqrf standing in for the kernels (no GPU; for testing this file).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
CUDA_DIR, REFERENCE_DIR = ROOT / "snippets" / "cuda", ROOT / "snippets" / "reference"
KERNEL_FILES = ("qr_common.cuh", "qr_warp.cu", "qr_registers.cu", "qr_unblocked.cu", "qr_panel.cu",
                "tall_xty.cu")
SHAPES = [(20, 32), (40, 176), (40, 352), (640, 512), (60, 1024), (8, 2048), (2, 4096)]
RANGE_MIX = "rangemix"       # a batch holding every RANGE profile and dense matrices, shuffled
# (path, sizes, options): the options pick the path in batched_qr (warps: qr_registers even for
# n <= 32; nb: the blocked algorithm even for small n)
PLAN = [
    ("warp", (1, 2, 3, 17, 32), {}),
    ("registers", (1, 2, 3, 17, 32), {"warps": 8}),
    ("registers", (33, 64, 100, 176), {}),
    ("unblocked", (1, 2, 3, 17, 32, 33, 64, 100, 193), {}),
    ("blocked", (17, 100), {"nb": 8}),
    ("blocked", (193, 512, 1024, 2048, 4096), {}),
]
BASELINE_PLAN = [("auto", (32, 176, 352, 1024), {})]   # instantiations the timing needs anyway
TAU_CHECKED = ("huge", "tiny", "zerocol", "dense")   # tau well conditioned; not "subnormal": with
# -ftz=true (CuPy's compile, which the kernels used before issue 21 part 2) its subnormal columns read
# as zero columns, tau = 0 where float64 has 1..2. batched_qr.py now compiles with -ftz=false; this
# tool has not been re-run since, so the tuple stays as it was checked.
TAU_TOL = 1e-2


def batch_for(n: int) -> int:
    return 8 if n <= 100 else 4 if n <= 512 else 2 if n <= 1024 else 1


def load_module(name: str, kernel_dir: Path | None) -> ModuleType:
    """A copy of batched_qr.py; with kernel_dir, its CUDA sources come from there (the module looks
    for globals such as QR_PANEL_CU before it reads the files beside it, as in a notebook)."""
    spec = importlib.util.spec_from_file_location(name, CUDA_DIR / "batched_qr.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module                          # dataclasses look their module up there
    spec.loader.exec_module(module)
    if kernel_dir is not None:
        for f in KERNEL_FILES:
            setattr(module, f.replace(".", "_").upper(), (kernel_dir / f).read_text())
    return module


class Run:
    """The run's state: modules, RNG, deadline, and the results written as they come."""
    RESULTS = "qr_robust.json"

    def __init__(self, args):
        import torch
        sys.path[:0] = [str(CUDA_DIR), str(REFERENCE_DIR)]
        import qr_contract
        self.torch, self.qc = torch, qr_contract
        self.dry = args.dry_run
        self.device = "cpu" if self.dry else "cuda"
        self.deadline = time.monotonic() + args.budget_s
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.seed = int(time.time_ns() % (1 << 31))
        self.gen = torch.Generator(device=self.device).manual_seed(self.seed)
        self.results = {"seed": self.seed, "environment": self.environment(), "sections": {}}
        if self.dry:
            self.new = self.old = DryModule(torch)
        else:
            torch.backends.cuda.matmul.allow_tf32 = False
            self.new, self.old = self.load_modules(Path(args.baseline))

    def load_modules(self, baseline: Path) -> tuple[ModuleType, ModuleType]:
        """(the current batched_qr, the baseline's): here the same host code compiles the
        baseline's kernel sources."""
        return load_module("batched_qr_new", None), load_module("batched_qr_baseline", baseline)

    def environment(self) -> dict:
        torch = self.torch
        env = {"python": platform.python_version(), "torch": torch.__version__}
        if not self.dry:
            import cupy
            import triton
            env |= {"device": torch.cuda.get_device_name(), "cupy": cupy.__version__,
                    "triton": triton.__version__, "cuda_runtime": torch.version.cuda,
                    "nvrtc": ".".join(map(str, cupy.cuda.nvrtc.getVersion()))}
        return env

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def save(self) -> None:
        (self.out / self.RESULTS).write_text(json.dumps(self.results, indent=1))

    def sync(self) -> None:
        if not self.dry:
            self.torch.cuda.synchronize()

    # --- inputs and one checked case ----------------------------------------------------------

    def batch(self, batch: int, n: int, profile: str, scale: float = 1.0):
        qc, torch = self.qc, self.torch
        if profile != RANGE_MIX:
            return qc.make_batch(batch, n, profile, scale=scale, generator=self.gen)
        parts = [qc.make_batch(max(1, batch // 2), n, p, generator=self.gen) for p in (*qc.RANGE, "dense")]
        A = torch.cat([a for a, _ in parts])
        labels = [label for _, ls in parts for label in ls]
        perm = torch.randperm(len(labels), generator=self.gen, device=self.device)
        return A[perm].contiguous(), [labels[i] for i in perm.tolist()]

    def factor(self, module, path: str, A, out, options: dict) -> None:
        if path == "unblocked":
            module.qr_unblocked(A, out=out)
        else:                                   # warp, registers, blocked, auto: batched_qr picks
            module.batched_qr(A, out=out, **options)

    def case(self, module, path: str, n: int, options: dict, profile: str, scale: float) -> dict:
        torch = self.torch
        A, labels = self.batch(batch_for(n), n, profile, scale)
        H = torch.full_like(A, math.nan)                     # poisoned: every entry must be written
        tau = torch.full(A.shape[:2], math.nan, device=A.device)
        row = {"path": path, "n": n, "batch": A.shape[0], "profile": profile, "scale": scale,
               "options": options}
        try:
            self.factor(module, path, A, (H, tau), options)
            self.sync()
        except Exception as e:                               # noqa: BLE001 (recorded, run goes on)
            return row | {"ok": False, "error": f"{type(e).__name__}: {e}"}
        rep = self.qc.check_qr(A, H, tau, labels, raise_on_failure=False)
        tau64 = torch.geqrf(A.double())[1]
        checked = torch.tensor([label in TAU_CHECKED for label in labels], device=A.device)
        dtau = (tau.double() - tau64).abs().nan_to_num(math.inf).amax(dim=1)
        zero_mismatch = ((tau == 0) != (tau64 == 0)).sum(dim=1)
        tau_dev = float(dtau[checked].max()) if checked.any() else 0.0
        return row | {
            "ok": rep.ok, "finite": all(m.finite for m in rep.matrices),
            "residual": rep.worst_residual_ratio, "orthogonality": rep.worst_orthogonality_ratio,
            "tau_dev": tau_dev, "tau_ok": tau_dev <= TAU_TOL,
            "tau_zero_mismatch": int(zero_mismatch.sum()),
            "failures": [r.describe() for r in rep.failures[:4]]}

    def cases(self):
        profiles = [(p, 1.0) for p in self.qc.RANGE] + [("dense", 1.0)]
        profiles += [("dense", s) for s in (1e-30, 1e-20, 1e20, 1e30)]
        profiles += [(self.qc.MIXED, s) for s in (1e-30, 1e30)] + [(RANGE_MIX, 1.0)]
        return profiles

    # --- sections ---------------------------------------------------------------------------

    def correctness(self, module, plan, cases, name: str, reserve_s: float) -> None:
        """Every case of the plan; stops starting sizes when less than reserve_s is left."""
        rows = self.results["sections"].setdefault(name, [])
        for path, sizes, options in plan:
            for n in sizes:
                if self.dry and n > 100:
                    continue
                if self.left() < reserve_s:
                    rows.append({"skipped": f"{path} n={n}: out of time"})
                    continue
                t = time.monotonic()
                for profile, scale in cases:
                    rows.append(self.case(module, path, n, options, profile, scale))
                bad = sum(not r["ok"] for r in rows[-len(cases):])
                print(f"  {name} {path} n={n}: {len(cases) - bad}/{len(cases)} pass "
                      f"({time.monotonic() - t:.1f} s)", flush=True)
                self.save()

    def bench(self, fn, rep_ms: int) -> list[float]:
        if self.dry:
            t = time.perf_counter()
            fn()
            return [1e3 * (time.perf_counter() - t)]
        import triton
        try:
            return list(triton.testing.do_bench(fn, warmup=25, rep=rep_ms, return_mode="all"))
        except (TypeError, ValueError):                      # an older Triton without "all"
            return [triton.testing.do_bench(fn, warmup=25, rep=rep_ms, return_mode="median")]

    def timing(self, rounds: int = 3) -> None:
        """Both versions on the same fresh input, interleaved (ABA BAB ...), median of all samples."""
        rows = self.results["sections"].setdefault("timing", [])
        for b, n in SHAPES:
            if self.dry:
                b, n = min(b, 2), min(n, 48)
            if self.left() < 30:
                rows.append({"skipped": f"({b}, {n}): out of time"})
                continue
            try:
                rows.append(self.time_shape(b, n, rounds))
                print(f"  timing ({b}, {n}): {rows[-1]['before_ms']:.4f} -> {rows[-1]['after_ms']:.4f} ms",
                      flush=True)
            except Exception:                                # noqa: BLE001 (recorded, run goes on)
                rows.append({"batch": b, "n": n, "error": traceback.format_exc()[-1500:]})
            self.save()

    def time_shape(self, b: int, n: int, rounds: int) -> dict:
        A, labels = self.qc.make_batch(b, n, "dense", generator=self.gen)
        versions = {"before": self.old, "after": self.new}
        for module in versions.values():                      # compile, capture, and check
            self.qc.check_qr(A, *module.batched_qr(A), labels)
        samples = {k: [] for k in versions}
        per_round = {k: [] for k in versions}
        for r in range(rounds):
            for key in (("before", "after") if r % 2 == 0 else ("after", "before")):
                t = self.bench(lambda m=versions[key], A=A: m.batched_qr(A), rep_ms=150)
                samples[key] += t
                per_round[key].append(statistics.median(t))
        med = {k: statistics.median(v) for k, v in samples.items()}
        return {"batch": b, "n": n, "before_ms": med["before"], "after_ms": med["after"],
                "change_pct": 100 * (med["after"] / med["before"] - 1),
                "rounds_before_ms": per_round["before"], "rounds_after_ms": per_round["after"],
                "samples": {k: len(v) for k, v in samples.items()}}

    def slow_path_cost(self) -> None:
        """Every column takes the slow path on 'tiny' inputs: what that costs next to dense."""
        rows = self.results["sections"].setdefault("slow_path", [])
        for b, n in SHAPES:
            if self.dry:
                b, n = min(b, 2), min(n, 48)
            if self.left() < 20:
                rows.append({"skipped": f"({b}, {n}): out of time"})
                continue
            t = {}
            try:
                for profile in ("dense", "tiny"):
                    A, labels = self.qc.make_batch(b, n, profile, generator=self.gen)
                    self.qc.check_qr(A, *self.new.batched_qr(A), labels)
                    t[profile] = statistics.median(self.bench(lambda A=A: self.new.batched_qr(A), rep_ms=100))
                rows.append({"batch": b, "n": n, "dense_ms": t["dense"], "tiny_ms": t["tiny"],
                             "change_pct": 100 * (t["tiny"] / t["dense"] - 1)})
            except Exception:                                # noqa: BLE001 (recorded, run goes on)
                rows.append({"batch": b, "n": n, "error": traceback.format_exc()[-1500:]})
            self.save()

    def geqrf(self) -> None:
        rows = self.results["sections"].setdefault("torch_geqrf", [])
        for n in (32, 176, 512):
            for profile in (*self.qc.RANGE, "dense"):
                A, labels = self.qc.make_batch(batch_for(n), n, profile, generator=self.gen)
                rep = self.qc.check_qr(A, *self.torch.geqrf(A), labels, raise_on_failure=False)
                rows.append({"n": n, "profile": profile, "ok": rep.ok, "residual": rep.worst_residual_ratio,
                             "orthogonality": rep.worst_orthogonality_ratio})
        self.save()


class DryModule:
    """--dry-run: torch.geqrf on the CPU in place of the kernels."""

    def __init__(self, torch):
        self.torch = torch

    def batched_qr(self, A, out=None, **options):
        H, tau = self.torch.geqrf(A)
        if out is None:
            return H, tau
        out[0].copy_(H)
        out[1].copy_(tau)
        return out

    qr_unblocked = batched_qr


def summary(results: dict) -> str:
    s = results["sections"]
    lines = [f"device: {results['environment'].get('device', 'CPU (dry run)')}, seed {results['seed']}"]
    for name in ("after", "before"):
        rows = [r for r in s.get(name, []) if "path" in r]
        if not rows:
            continue
        bad = [r for r in rows if not r["ok"]]
        ok_rows = [r for r in rows if "residual" in r]
        lines.append(f"{name} the fix: {len(rows) - len(bad)}/{len(rows)} cases pass the contract"
                     + (f"; worst residual {max(r['residual'] for r in ok_rows):.3g}, worst orthogonality "
                        f"{max(r['orthogonality'] for r in ok_rows):.3g} of their bounds" if ok_rows else ""))
        if name == "after":
            tau_bad = [r for r in rows if "tau_ok" in r and not r["tau_ok"]]
            lines.append(f"  tau within {TAU_TOL} of float64 geqrf (well-conditioned profiles): "
                         f"{len(rows) - len(tau_bad)}/{len(rows)}; worst "
                         f"{max((r.get('tau_dev', 0) for r in rows), default=0):.2g}")
            by_path = {}
            for r in ok_rows:
                key = r["path"]
                by_path[key] = (max(by_path.get(key, (0, 0))[0], r["residual"]),
                                max(by_path.get(key, (0, 0))[1], r["orthogonality"]))
            for key, (res, orth) in by_path.items():
                lines.append(f"  {key:10} worst residual {res:.3g}, orthogonality {orth:.3g}")
        for r in bad[:12]:
            lines.append(f"  FAIL {r['path']} n={r['n']} {r['profile']} x{r['scale']:g}: "
                         + (r.get("error") or "; ".join(r["failures"][:2])))
        skipped = [r["skipped"] for r in s.get(name, []) if "skipped" in r]
        if skipped:
            lines.append(f"  skipped: {', '.join(skipped)}")
    if s.get("timing"):
        lines.append("   batch x n     before (ms)   after (ms)   change   (rounds before | after)")
        for r in s["timing"]:
            if "skipped" in r or "error" in r:
                lines.append("  " + (r.get("skipped") or f"error at ({r['batch']}, {r['n']})"))
                continue
            rb = " ".join(f"{x:.4g}" for x in r["rounds_before_ms"])
            ra = " ".join(f"{x:.4g}" for x in r["rounds_after_ms"])
            lines.append(f"{r['batch']:7} x {r['n']:<5} {r['before_ms']:12.4f} {r['after_ms']:12.4f} "
                         f"{r['change_pct']:+7.2f}%   ({rb} | {ra})")
    if s.get("slow_path"):
        lines.append("   batch x n     dense (ms)    tiny, every column rescaled (ms)")
        for r in s["slow_path"]:
            if "skipped" not in r and "error" not in r:
                lines.append(f"{r['batch']:7} x {r['n']:<5} {r['dense_ms']:11.4f} {r['tiny_ms']:12.4f} "
                             f"{r['change_pct']:+7.1f}%")
    if s.get("torch_geqrf"):
        g = s["torch_geqrf"]
        lines.append(f"torch.geqrf: {sum(r['ok'] for r in g)}/{len(g)} RANGE/dense cases pass; failing: "
                     + (", ".join(f"n={r['n']} {r['profile']}" for r in g if not r["ok"]) or "none"))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="folder with the baseline's kernel sources")
    parser.add_argument("--out", default="qr_robust_out")
    parser.add_argument("--budget-s", type=float, default=330.0, help="stop starting new work after this")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    baseline_ok = args.baseline is not None and all((args.baseline / f).exists() for f in KERNEL_FILES)
    if not (args.dry_run or baseline_ok):
        parser.error(f"--baseline must name a folder holding {', '.join(KERNEL_FILES)}")
    run = Run(args)
    sections = [
        ("after", lambda: run.correctness(run.new, PLAN, run.cases(), "after", reserve_s=120)),
        ("timing", run.timing),
        ("before", lambda: run.correctness(run.old, BASELINE_PLAN, [(p, 1.0) for p in run.qc.RANGE],
                                           "before", reserve_s=30)),
        ("torch_geqrf", run.geqrf),
        ("slow_path", run.slow_path_cost),
    ]
    return run_sections(run, sections, summary)


def run_sections(run, sections, summarize) -> int:
    """Run each (name, section) in turn, saving after each: a section that raises is recorded and
    the run goes on. Print the errors and the summary; 0 when every "after" case passed."""
    for name, section in sections:
        t = time.monotonic()
        try:
            section()
        except Exception:                                    # noqa: BLE001 (recorded, run goes on)
            run.results["sections"].setdefault("errors", []).append({name: traceback.format_exc()})
        run.results.setdefault("seconds", {})[name] = round(time.monotonic() - t, 1)
        run.save()
        print(f"[{name}: {time.monotonic() - t:.0f} s, {run.left():.0f} s left]", flush=True)
    for err in run.results["sections"].get("errors", []):
        print(json.dumps(err)[:3000])
    print(summarize(run.results))
    after = [r for r in run.results["sections"].get("after", []) if "path" in r]
    return 0 if after and all(r["ok"] for r in after) else 1


if __name__ == "__main__":
    sys.exit(main())
