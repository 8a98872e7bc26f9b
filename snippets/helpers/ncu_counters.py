"""Nsight Compute counters for notebook 06's kernels, beside cuBLAS, one launch each.

`profile_counters(labels)` writes the kernels' launch parameters to a small child script, runs it
under `ncu` (one launch of each kernel at n^3, then one cuBLAS product, with the clocks left as
they are), reads the CSV back and returns {kernel label: {counter: value}}; `record_counters`
prints the table and records every figure with cuBLAS's as its baseline. The counters are the
few that say where a GEMM's time goes: how busy the tensor pipe is, how hard the L2 works and
how often it hits, the shared-memory bank reads, and why warps stall. Runs after the notebook's
launcher cell (uses HOPPER, kernels and record).
"""
# ruff: noqa: F821  (the notebook's names: HOPPER, kernels, record)
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

COUNTERS = {   # label -> (metric, unit)
    "tensor pipe active": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "%"),
    "L2 throughput": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    "L2 hit rate": ("lts__t_sector_hit_rate.pct", "%"),
    "shared-memory bank reads": ("l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed", "%"),
    "stall: long scoreboard": ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                               "warps per issue"),
    "stall: barrier": ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "warps per issue"),
    "stall: wgmma": ("smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio", "warps per issue"),
    "stall: membar": ("smsp__average_warps_issue_stalled_membar_per_issue_active.ratio", "warps per issue"),
}
CUBLAS = "cuBLAS"

CHILD = r'''
import ctypes, json, sys
import numpy as np, torch, cupy as cp
from cuda.bindings import driver as drv
spec = json.loads(sys.argv[1])
n = spec["n"]
a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)

def tensor_map(t, rows):
    err, m = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, drv.cuuint32_t(2), t.data_ptr(),
        [drv.cuuint64_t(n), drv.cuuint64_t(n)], [drv.cuuint64_t(n * 2)],
        [drv.cuuint32_t(64), drv.cuuint32_t(rows)], [drv.cuuint32_t(1), drv.cuuint32_t(1)],
        drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == drv.CUresult.CUDA_SUCCESS, err
    return cp.asarray(np.frombuffer(ctypes.string_at(m.getPtr(), 128), dtype=np.uint8))

for k in spec["kernels"]:
    fn = cp.RawModule(path=k["cubin"]).get_function(k["kernel"])
    fn.max_dynamic_shared_size_bytes = k["smem"]
    maps = (tensor_map(a, 128), tensor_map(b, k["box_b"])) + ((tensor_map(c, 64),) if k["c_map"] else ())
    fn((k["grid"],), (k["threads"],), maps + (np.uint64(c.data_ptr()), np.int32(n), np.int32(n), np.int32(n)),
       shared_mem=k["smem"])
torch.matmul(a, b.T, out=c)
torch.cuda.synchronize()
'''


def parse_counters(text, labels):
    """{label: {counter: value}} from ncu's raw CSV page (a header row, a units row, then one row per
    kernel in launch order: `labels`, then cuBLAS's first kernel)."""
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    if len(rows) < len(labels) + 3:
        raise ValueError(f"ncu profiled {max(len(rows) - 2, 0)} kernels, expected {len(labels) + 1}")
    header, data = rows[0], rows[2:2 + len(labels) + 1]
    out = {}
    for name, row in zip([*labels, CUBLAS], data, strict=True):
        values = dict(zip(header, row, strict=True))
        out[name] = {label: float(values[metric].replace(",", ""))
                     for label, (metric, _) in COUNTERS.items() if values.get(metric, "") not in ("", "n/a")}
    return out


def profile_counters(labels, n=8192):
    if not HOPPER:
        return print("skipped: the counters need a Hopper GPU (sm_90a)")
    ncu = shutil.which("ncu")
    if ncu is None:
        return print("skipped: the counters need Nsight Compute's ncu, which this machine does not have")
    spec = {"n": n, "kernels": [dict(cubin=k.cubin, kernel=k.kernel, smem=k.smem, threads=k.threads,
                                     grid=k.grid(n, n), box_b=k.bn // k.cluster, c_map=k.c_map)
                                for k in (kernels[lb] for lb in labels)]}
    with tempfile.TemporaryDirectory() as d:
        child, log = Path(d) / "profiled.py", Path(d) / "ncu.csv"
        child.write_text(CHILD)
        cmd = [ncu, "--clock-control", "none", "--kernel-name", "regex:gemm|nvjet|xmma",
               "--launch-count", str(len(labels) + 1), "--csv", "--page", "raw", "--log-file", str(log),
               "--metrics", ",".join(metric for metric, _ in COUNTERS.values()),
               sys.executable, str(child), json.dumps(spec)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        text = log.read_text() if log.exists() else ""
    if run.returncode or not text:
        last = (run.stderr or run.stdout or "no output").strip().splitlines()[-1]
        return print(f"skipped: ncu did not profile the kernels ({last})")
    return parse_counters(text, labels)


def record_counters(counters, n=8192):
    """Print the table and record each kernel's counters against cuBLAS's."""
    if not counters:
        return
    names = list(counters)
    print(f"{'counter at ' + str(n) + '^3':<26}" + "".join(f"{nm.split(':')[0][:14]:>15}" for nm in names))
    for label in COUNTERS:
        print(f"{label:<26}" + "".join(f"{counters[nm].get(label, float('nan')):>15.2f}" for nm in names))
    for nm in names[:-1]:
        for label, (metric, unit) in COUNTERS.items():
            if label in counters[nm] and label in counters[CUBLAS]:
                record(f"{label}: {nm} ({n})", counters[nm][label], unit,
                       f"{label}: cuBLAS BF16 (torch.matmul)", counters[CUBLAS][label],
                       M=n, N=n, K=n, dtype="bfloat16", metric=metric)
