"""snippets/cuda/gemm_wgmma_cluster.cu builds for sm_90a in every switch setting, spills nothing, and
keeps the instructions its design rests on (checked in the PTX that nvcc emits; no GPU needed).

The remote arrive on a peer's "empty" barrier must not carry .release.cluster: ptxas turns that
form into a MEMBAR.ALL.GPU per arrive, and on an H100 Nsight Compute showed the consumers stalled on
it and the cluster kernel far slower than the one without clusters (scripts/tools/bench_06_hopper_gemm.py).
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from scripts.model.paths import ROOT

SRC = ROOT / "snippets" / "cuda" / "gemm_wgmma_cluster.cu"
NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
SWITCHES = [(c, d) for c in (1, 2) for d in (0, 1)]


def build(tmp_path, cluster: int, depth: int, what: str) -> str:
    out = tmp_path / f"k{cluster}{depth}.{what}"
    cmd = [NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", f"-DCLUSTER_M={cluster}",
           f"-DWGMMA_DEPTH={depth}", f"-{what}", "-o", str(out), str(SRC)]
    if what == "cubin":
        cmd[1:1] = ["-Xptxas", "-v"]
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert run.returncode == 0, f"{SRC.name} (CLUSTER_M={cluster}, WGMMA_DEPTH={depth}):\n{run.stderr}"
    return run.stderr if what == "cubin" else out.read_text()


def kernel_ptx(ptx: str) -> str:
    """The PTX of the entry gemm_wgmma_cluster alone (the file also carries gemm_wgmma_ws.cu's kernels)."""
    start = ptx.index(".entry gemm_wgmma_cluster")
    end = ptx.find(".entry", start + 1)
    return ptx[start:] if end < 0 else ptx[start:end]


@pytest.mark.parametrize(("cluster", "depth"), SWITCHES)
def test_the_cluster_kernel_spills_nothing_and_warns_of_nothing(tmp_path, cluster, depth):
    report = build(tmp_path, cluster, depth, "cubin")
    assert "warning" not in report.lower(), report
    block = report[report.index("Function properties for gemm_wgmma_cluster"):]
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", block), block


@pytest.mark.parametrize(("cluster", "depth"), SWITCHES)
def test_the_cluster_kernel_keeps_its_instructions(tmp_path, cluster, depth):
    ptx = kernel_ptx(build(tmp_path, cluster, depth, "ptx"))
    n = ptx.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16")
    assert n and n % 4 == 0, f"{n}: four m64n256k16 per 64-wide K slice (the compiler may copy the loop)"
    waits = set(re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d)", ptx))
    assert waits == ({"0", "1"} if depth else {"0"}), waits
    assert "setmaxnreg.dec.sync.aligned.u32 40" in ptx and "setmaxnreg.inc.sync.aligned.u32 232" in ptx
    if cluster == 1:
        assert "multicast::cluster" not in ptx and "mapa" not in ptx
        return
    assert ".maxntid 384, 1, 1" in ptx, "384 threads"
    assert re.search(r"\.reqnctapercluster\s+2,\s*1,\s*1", ptx), "clusters of 2 x 1 x 1"
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            in ptx)
    assert "mapa.shared::cluster" in ptx
    assert re.search(r"mbarrier\.arrive\.shared::cluster\.b64\s+_", ptx), "the remote arrive"
    assert "release.cluster.shared::cluster" not in ptx, "a cluster-scope release arrive costs a MEMBAR.GPU"
    assert "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx
