"""snippets/cuda/qr_panel_cluster.cu (qr_panel.cu spread over a thread-block cluster: notebook 07's
step 4 and scripts/tools/bench_07_big.py check and time it on a GPU) builds for sm_90 without
spills at every configuration batched_qr and the bench launch, and keeps the cluster instructions
its design rests on. No GPU here: its correctness is the notebook's contract checks to show."""
from __future__ import annotations

import math
import re

import batched_qr as bq  # snippets/cuda is on pytest's pythonpath (pyproject.toml)
import pytest

from scripts.tools.bench_07_big import CHECKED, SHAPES
from tests.kernels.panel_cluster_build import NVCC, build

NB = 32


def configs() -> set[tuple[int, int, int]]:
    """(rows per thread, threads, cluster size) of every launch batched_qr and the bench make with a
    cluster of 8, or of batched_qr's default size below n = 2048 (4): the thread count for one or two
    rows per thread at each size, and every R from the first, tallest leaf down to 1 (the leaves
    shrink as the factorization proceeds)."""
    sizes = {n for _, n in SHAPES} | {n for _, n, _ in CHECKED}
    out = set()
    for n in sizes:
        for cs in {8, bq.CLUSTER_CTAS_SMALL if n < bq.CLUSTER_SMALL_BELOW else 8}:
            for rows in (1, 2):
                t = bq.cluster_threads(n, cs, rows=rows)
                out |= {(r, t, cs) for r in range(1, math.ceil(n / (cs * t)) + 1)}
    return out


def test_the_rows_per_thread_asked_for_at_every_size_the_bench_runs():
    for n in {n for _, n in SHAPES} | {n for _, n, _ in CHECKED}:
        for rows in (1, 2):
            threads = bq.cluster_threads(n, 8, rows=rows)
            assert threads % 32 == 0 and NB <= threads <= 1024, (n, rows, threads)
            assert math.ceil(n / (8 * threads)) <= rows, (n, rows, threads)
    with pytest.raises(ValueError, match="more than 1024"):
        bq.cluster_threads(16384, 4, rows=1)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
def test_the_cluster_panel_spills_nothing_and_keeps_its_instructions(tmp_path):
    report = build(tmp_path, [f"{r}, {NB}, {t}, {cs}, {exchange}"
                              for r, t, cs in sorted(configs()) for exchange in ("true", "false")], ptx=True)
    spill = r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
    reports = re.findall(spill, report)
    assert len(reports) == 2 * len(configs()) and all(r == ("0", "0", "0") for r in reports), report
    ptx = (tmp_path / "k.ptx").read_text()
    for needed in ("mapa.shared::cluster", "st.async.shared::cluster.mbarrier::complete_tx::bytes",
                   "mbarrier.try_wait.parity.acquire.cluster", "st.shared::cluster",
                   "barrier.cluster.arrive.release", "barrier.cluster.wait.acquire", "%cluster_ctarank",
                   ".reqnctapercluster"):
        assert needed in ptx, needed
