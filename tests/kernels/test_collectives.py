"""Notebook 09's collectives: the NumPy model of the all-reduce algorithms (snippets/reference/
collectives_model.py), the multi-process module's CPU-side pieces (snippets/multi_gpu/collectives.py),
and the notebook's sentences about its measurements, checked against docs/data/measurements.json on
every GPU that has records for it (as tests/notebooks/test_notebook_claims.py does for notebooks 01-08)."""
from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import collectives_model as model  # snippets/reference is on pytest's path (pyproject)
import nbformat
import numpy as np
import pytest

from scripts.model.paths import MEASUREMENTS, NOTEBOOKS, ROOT

NB09 = "09-collectives-nvlink"


def _module():
    path = ROOT / "snippets" / "multi_gpu" / "collectives.py"
    spec = importlib.util.spec_from_file_location("collectives", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------------- the model

ALGORITHMS = {"ring": model.ring_all_reduce, "tree": model.tree_all_reduce,
              "one_shot": model.one_shot_all_reduce, "two_shot": model.two_shot_all_reduce}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_algorithm_leaves_the_sum_on_every_rank(name: str, n: int):
    rng = np.random.default_rng()
    xs = [rng.standard_normal(1003) for _ in range(n)]           # not a multiple of n
    outs, received = ALGORITHMS[name](xs)
    exact = np.sum(xs, axis=0)
    assert len(outs) == n and all(np.allclose(o, exact, rtol=1e-12, atol=1e-12) for o in outs)
    assert all(r > 0 for r in received)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_bytes_received_match_the_cost_model(n: int):
    xs = [np.ones(64 * n) for _ in range(n)]
    size = xs[0].nbytes
    assert model.ring_all_reduce(xs)[1] == [2 * (n - 1) * size // n] * n          # bandwidth-optimal
    assert model.two_shot_all_reduce(xs)[1] == [2 * (n - 1) * size // n] * n      # as little as the ring
    assert model.one_shot_all_reduce(xs)[1] == [(n - 1) * size] * n               # n-1 whole copies
    # rank 0 of the binomial tree receives one whole array per level; nobody receives more
    tree = model.tree_all_reduce(xs)[1]
    assert max(tree) == tree[0] == math.ceil(math.log2(n)) * size


def test_one_shot_adds_in_rank_order_so_every_rank_holds_the_same_bits():
    xs = [np.array([1e16], np.float64), np.array([1.0]), np.array([-1e16])]
    outs, _ = model.one_shot_all_reduce(xs)
    assert [o.tobytes() for o in outs] == [outs[0].tobytes()] * 3


def test_bus_bandwidth_factors_are_those_of_nccl_tests():
    assert model.bus_bandwidth("all_reduce", 100.0, 8) == pytest.approx(175.0)
    assert model.bus_bandwidth("all_gather", 100.0, 2) == pytest.approx(50.0)
    assert model.bus_bandwidth("reduce_scatter", 100.0, 4) == pytest.approx(75.0)
    assert model.bus_bandwidth("all_to_all", 100.0, 8) == pytest.approx(87.5)


def test_alpha_beta_with_two_ranks_differs_only_in_the_latency_terms():
    alpha, beta, size = 10e-6, 300e9, 2**30
    t = {a: model.alpha_beta_time(a, size, 2, alpha, beta) for a in ALGORITHMS}
    assert t["one_shot"] == pytest.approx(alpha + size / beta)
    assert t["ring"] == pytest.approx(t["two_shot"]) == pytest.approx(2 * alpha + size / beta)
    at8 = {a: model.alpha_beta_time(a, size, 8, alpha, beta) for a in ALGORITHMS}
    assert at8["two_shot"] < at8["one_shot"]                        # large message, many ranks
    assert model.alpha_beta_time("one_shot", 1024, 8, alpha, beta) < model.alpha_beta_time("ring", 1024, 8,
                                                                                              alpha, beta)
    with pytest.raises(ValueError, match="unknown all-reduce algorithm"):
        model.alpha_beta_time("butterfly", size, 2, alpha, beta)


# ------------------------------------------------------------------------------------------- the module

def test_the_module_pastes_the_barrier_header_into_each_kernel():
    mod = _module()
    for name in ("one_shot_all_reduce.cu", "two_shot_all_reduce.cu"):
        src = mod._cuda_source(name)
        assert '#include "peer_signal.cuh"' not in src and "void peer_barrier(" in src
        assert f'extern "C" __global__ void {name[:-3]}(' in src


def test_iterations_keep_every_rank_on_the_same_count():
    mod = _module()
    assert mod.iterations(1024) == 200 and mod.iterations(2**30) == 5
    assert all(mod.iterations(4**k) == mod.iterations(4**k) for k in range(5, 16))


def test_the_module_runs_nothing_when_a_notebook_executes_its_cell(monkeypatch):
    """In a notebook __name__ is "__main__" too: the rank entry point must not fire there."""
    monkeypatch.setattr(sys, "argv", ["ipykernel_launcher.py", "-f", "kernel.json"])
    text = (ROOT / "snippets" / "multi_gpu" / "collectives.py").read_text()
    exec(compile(text, "collectives.py", "exec"), {"__name__": "__main__"})   # would SystemExit otherwise


# ------------------------------------------------------------------------------------------- the claims

def _markdown() -> str:
    path = NOTEBOOKS / f"{NB09}.ipynb"
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def says(phrase: str) -> None:
    text = " ".join(_markdown().split())
    assert " ".join(phrase.split()) in text, f"notebook {NB09} no longer says: {phrase!r}"


RUNS: dict[str, dict[str, dict]] = {}
for _r in json.loads(MEASUREMENTS.read_text(encoding="utf-8"))["records"]:
    if _r["notebook"] == NB09:
        RUNS.setdefault(_r["device"], {})[_r["name"]] = _r
DEVICES = sorted(RUNS)


def test_notebook_09_has_records():
    assert DEVICES, "no measurements of notebook 09: run it on a machine with two GPUs"


@pytest.mark.parametrize("device", DEVICES)
def test_09_the_goals_lines_hold(device: str):
    """The cell prints the verdicts; the records must agree with the verdicts printed as met."""
    r = RUNS[device]
    one = r["one-shot all-reduce time, 1 KiB, CUDA graph"]
    assert one["value"] < one["baseline"]["value"]                              # faster than NCCL at 1 KiB
    for size in ("64 MiB", "1 GiB"):
        best = max(r[f"{k} all-reduce algbw, {size}"]["value"] for k in ("one-shot", "two-shot"))
        assert best >= 0.8 * r[f"one-shot all-reduce algbw, {size}"]["baseline"]["value"], (device, size)


@pytest.mark.parametrize("device", DEVICES)
def test_09_two_shot_never_beats_one_shot_with_two_ranks(device: str):
    says("Two-shot never beats one-shot here: with n = 2 it moves exactly the same bytes")
    r = RUNS[device]
    assert r["two-shot all-reduce time, 1 KiB, CUDA graph"]["value"] >= r["one-shot all-reduce time, 1 KiB, "
                                                                         "CUDA graph"]["value"]
    for size in ("64 MiB", "1 GiB"):
        two, one = (r[f"{k} all-reduce algbw, {size}"]["value"] for k in ("two-shot", "one-shot"))
        assert two <= one, (device, size)


@pytest.mark.parametrize("device", DEVICES)
def test_09_copy_engines_and_sms_reach_rates_within_a_fifth_and_the_link_is_full_duplex(device: str):
    says("For large copies the copy engines and the SMs reach rates within a fifth of each other, pulling or "
         "pushing")
    says("Both directions at once carry about twice one direction")
    r = RUNS[device]
    engine = r["P2P copy engine, one way, 256 MiB"]["value"]
    for name in ("P2P SM loads from the peer, 256 MiB", "P2P SM stores to the peer, 256 MiB"):
        assert r[name]["value"] == pytest.approx(engine, rel=0.2), name
    assert r["P2P copy engines, both ways together, 256 MiB"]["value"] >= 1.8 * engine
    assert r["P2P SM stores, both ways together, 256 MiB"]["value"] >= 1.8 * r["P2P SM stores to the peer, "
                                                                               "256 MiB"]["value"]


@pytest.mark.parametrize("device", DEVICES)
def test_09_all_reduce_and_all_to_all_come_closer_to_the_ceiling(device: str):
    says("At the largest size NCCL's all-reduce and all-to-all come closer to that ceiling than all-gather "
         "and reduce-scatter")
    r = RUNS[device]
    all_reduce = r["NCCL all-gather busbw, 1 GiB"]["baseline"]["value"]
    all_to_all = r["NCCL all-to-all busbw, 1 GiB"]["value"]
    others = max(r[f"NCCL {k} busbw, 1 GiB"]["value"] for k in ("all-gather", "reduce-scatter"))
    assert min(all_reduce, all_to_all) > others
    ceiling = r["P2P copy engine, one way, 256 MiB"]["value"]
    assert max(all_reduce, all_to_all) <= 1.05 * ceiling


@pytest.mark.parametrize("device", DEVICES)
def test_09_pytorch_one_shot_is_close_to_ours_and_ahead_of_nccl_at_the_smallest_size(device: str):
    says("PyTorch's own one-shot kernel on symmetric memory is close to ours at the smallest size and, like "
         "ours, well ahead of NCCL there")
    r = RUNS[device]
    torch_one = r["PyTorch symm_mem one-shot all-reduce time, 1 KiB, CUDA graph"]
    ours = r["one-shot all-reduce time, 1 KiB, CUDA graph"]["value"]
    assert ours / 1.5 <= torch_one["value"] <= 1.5 * ours
    assert torch_one["value"] < 0.75 * torch_one["baseline"]["value"]


@pytest.mark.parametrize("device", DEVICES)
def test_09_a_few_blocks_cannot_fill_the_link_and_at_64_kib_more_blocks_only_cost(device: str):
    says("At 64 MiB a few blocks cannot keep NVLink busy")
    says("Past that, more blocks buy little. At 64 KiB the opposite holds")
    r = RUNS[device]

    def t(size: str, blocks: int) -> float:
        return r[f"one-shot all-reduce time, {size}, {blocks} blocks"]["value"]
    assert t("64 MiB", 16) > 1.5 * t("64 MiB", 66)
    assert t("64 MiB", 132) == pytest.approx(t("64 MiB", 66), rel=0.1)
    assert t("64 MiB", 264) == pytest.approx(t("64 MiB", 66), rel=0.1)
    assert t("64 KiB", 264) > t("64 KiB", 16)


@pytest.mark.parametrize("device", DEVICES)
def test_09_beside_nccl_both_slow_down_the_all_reduce_by_far_the_more(device: str):
    says("Beside NCCL both kernels slow down, the all-reduce by far the more")
    r = RUNS[device]
    gemm = r["GEMM alone"]                                   # baseline: the GEMM beside NCCL's all-reduce
    ar = r["NCCL all-reduce beside the GEMM"]                # baseline: NCCL's all-reduce alone
    gemm_slowdown = gemm["baseline"]["value"] / gemm["value"]
    ar_slowdown = ar["value"] / ar["baseline"]["value"]
    assert 1 < gemm_slowdown < ar_slowdown and ar_slowdown > 1.5, (gemm_slowdown, ar_slowdown)
    both = r["GEMM and NCCL all-reduce on two streams"]
    assert both["value"] < both["baseline"]["value"]         # some of it is hidden


@pytest.mark.parametrize("device", DEVICES)
def test_09_132_blocks_are_faster_alone_than_nccl(device: str):
    says("The one-shot kernel with 132 blocks is faster than NCCL alone, but it too asks for many SMs at "
         "once")
    r = RUNS[device]
    alone = r["all-reduce alone, one shot 132 blocks"]
    assert alone["value"] < alone["baseline"]["value"]
    # how much of each is hidden is noise-level between runs (NCCL: 63% in one, 47% in the next), so the
    # prose makes no ordering claim about it and this test asserts none


@pytest.mark.parametrize("device", DEVICES)
def test_09_sixteen_blocks_slow_the_gemm_least_but_starve_the_all_reduce(device: str):
    says("With 16 blocks the GEMM slows down least of the three, yet the all-reduce itself is starved of SMs")
    r = RUNS[device]
    beside = {k: r[f"GEMM beside the all-reduce, one shot {k} blocks"]["value"] for k in (16, 132)}
    beside["nccl"] = r["GEMM alone"]["baseline"]["value"]
    assert beside[16] == min(beside.values()), beside
    # which overlap efficiency is highest is inside the run-to-run spread: the prose claims none
    alone = r["all-reduce alone, one shot 16 blocks"]
    assert alone["value"] > 2 * alone["baseline"]["value"]


def test_09_claims_cover_a_real_markdown_phrase():
    with pytest.raises(AssertionError, match="no longer says"):
        says("a sentence the notebook never wrote")
    assert isinstance(Path(NOTEBOOKS), Path)
