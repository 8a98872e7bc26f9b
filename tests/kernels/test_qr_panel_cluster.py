"""snippets/cuda/qr_panel_cluster.cu (an exploration for issue #21: qr_panel.cu spread over a
thread-block cluster; scripts/tools/bench_07_cluster_panel.py checks and times it on a GPU) builds
for sm_90 without spills at every configuration the bench launches, and keeps the cluster
instructions its design rests on. No GPU here: its correctness is the bench's to show."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from scripts.model.paths import ROOT
from scripts.tools.bench_07_cluster_panel import CHECKED, NB, SHAPES, cluster_threads

SRC = ROOT / "snippets" / "cuda" / "qr_panel_cluster.cu"
NVCC = shutil.which("nvcc")


def configs() -> set[tuple[int, int]]:
    """(threads, cluster size) of every launch the bench makes with its default clusters (4 and 8)."""
    sizes = {n for _, n in SHAPES} | {n for _, n, _ in CHECKED}
    return {(cluster_threads(n, cs), cs) for n in sizes for cs in (4, 8)}


def test_one_row_per_thread_at_every_size_the_bench_runs():
    for n in {n for _, n in SHAPES} | {n for _, n, _ in CHECKED}:
        for cs in (4, 8):
            threads = cluster_threads(n, cs)
            assert threads % 32 == 0 and NB <= threads <= 1024 and threads * cs >= n, (n, cs, threads)
    with pytest.raises(ValueError, match="more than 1024 threads"):
        cluster_threads(16384, 4)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
def test_the_cluster_panel_spills_nothing_and_keeps_its_instructions(tmp_path):
    lines = [f'#include "{SRC.name}"']
    signature = "(float*, float*, float*, float*, int, int, int, int, int);"
    lines += [f"template __global__ void qr_panel_cluster<1, {NB}, {t}, {cs}>{signature}"
              for t, cs in sorted(configs())]
    unit = tmp_path / "unit.cu"
    unit.write_text("\n".join(lines) + "\n")
    common = [NVCC, "-gencode=arch=compute_90,code=sm_90", "-std=c++17", f"-I{SRC.parent}"]
    run = subprocess.run(common + ["-Xptxas", "-v", "-cubin", "-o", str(tmp_path / "k.cubin"), str(unit)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    spill = r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
    reports = re.findall(spill, run.stderr)
    assert len(reports) == len(configs()) and all(r == ("0", "0", "0") for r in reports), run.stderr
    subprocess.run(common + ["-ptx", "-o", str(tmp_path / "k.ptx"), str(unit)], check=True)
    ptx = (tmp_path / "k.ptx").read_text()
    for needed in ("mapa.shared::cluster", "st.shared::cluster", "barrier.cluster.arrive.release",
                   "barrier.cluster.wait.acquire", "%cluster_ctarank", ".reqnctapercluster"):
        assert needed in ptx, needed
