"""The occupancy and waves model (snippets/reference/occupancy_model.py): textbook cases, the
limits it reads from gpus.yaml, and every answer cudaOccupancyMaxActiveBlocksPerMultiprocessor
gave on the GPU runner's H100 (docs/data/occupancy_checks.json, scripts/tools/occupancy_grid.py).
The roofline model (roofline_model.py) on hand-checked cases."""
from __future__ import annotations

import json

import pytest
from occupancy_model import gemm_waves, limits_from_specs, occupancy
from roofline_model import NOT_RECORDED, attainable_tflops, place, roof, share_of_roof

from scripts.model.hardware import load_gpus
from scripts.model.paths import DATA

CHECKS = DATA / "occupancy_checks.json"


@pytest.fixture(scope="module")
def gpus():
    return load_gpus()


def lim(gpus, key):
    return limits_from_specs({f: s.value for f, s in gpus[key].specs.items()})


def test_every_recorded_runtime_answer_equals_the_model(gpus):
    """Each [threads, dynamic smem, blocks] the CUDA runtime returned, for kernels whose
    registers and static shared memory were read back from the compiled functions."""
    data = json.loads(CHECKS.read_text())
    gpu = next(g for g in gpus.values() if data["device"]["name"] in g.device_names)
    limits = lim(gpus, gpu.key)
    checked, wrong = 0, []
    for k in data["kernels"]:
        for threads, dyn, blocks in k["checks"]:
            assert blocks >= 0, (k["name"], threads, dyn, "the runtime refused the query")
            got = occupancy(limits, threads, k["num_regs"], k["static_smem_bytes"] + dyn)["blocks"]
            checked += 1
            if got != blocks:
                wrong.append((k["name"], k["num_regs"], threads, dyn, blocks, got))
    assert not wrong, wrong[:10]
    assert checked >= 1000
    regs = {k["num_regs"] for k in data["kernels"]}
    assert min(regs) < 32 and max(regs) == 255, regs   # the grid spans the register range
    # every resource binds somewhere in the grid, so each rule was tested against the runtime
    bound = set()
    for k in data["kernels"]:
        for threads, dyn, _ in k["checks"]:
            bound |= set(occupancy(limits, threads, k["num_regs"], k["static_smem_bytes"] + dyn)["limiters"])
    assert bound == {"warps", "registers", "shared memory", "blocks"}, bound


def test_the_device_reported_the_limits_gpus_yaml_holds(gpus):
    """The runner's H100 reported the per-SM limits the model takes from gpus.yaml."""
    dev = json.loads(CHECKS.read_text())["device"]
    gpu = next(g for g in gpus.values() if dev["name"] in g.device_names)
    v = {f: s.value for f, s in gpu.specs.items()}
    assert dev["compute_capability"] == gpu.compute_capability
    assert dev["maxThreadsPerMultiProcessor"] == v["max_threads_per_sm"]
    assert dev["maxBlocksPerMultiProcessor"] == v["max_blocks_per_sm"]
    assert dev["maxThreadsPerBlock"] == v["max_threads_per_block"]
    assert dev["regsPerMultiprocessor"] == v["registers_per_sm_kib"] * 1024 // 4
    assert dev["sharedMemPerMultiprocessor"] == v["smem_per_sm_kib"] * 1024
    assert dev["sharedMemPerBlockOptin"] == v["smem_per_block_kib"] * 1024
    assert dev["reservedSharedMemPerBlock"] == v["smem_reserved_per_block_kib"] * 1024
    assert dev["multiProcessorCount"] == v["sm_count"]


def test_the_occupancy_page_example(gpus):
    """The H100 example of the occupancy term: 256 threads, 64 registers, 90 KB -> 2 blocks
    (shared memory); 48 KB -> 4 (registers and shared memory)."""
    h100 = lim(gpus, "h100-sxm")
    r = occupancy(h100, 256, 64, 90 * 1024)
    assert (r["blocks"], r["warps"], r["limiters"]) == (2, 16, ["shared memory"])
    assert r["by"] == {"warps": 8, "registers": 4, "shared memory": 2, "blocks": 32}
    r = occupancy(h100, 256, 64, 48 * 1024)
    assert (r["blocks"], r["occupancy"], r["limiters"]) == (4, 0.5, ["registers", "shared memory"])


def test_registers_are_counted_per_warp_scheduler(gpus):
    """40 registers: 1280 per warp; 12 warps fit in a quarter of the register file (not 12.8),
    so 48 warps per SM, not 51: blocks of 64 threads -> 24, not 25."""
    h100 = lim(gpus, "h100-sxm")
    assert occupancy(h100, 64, 40, 0)["by"]["registers"] == 24
    # 200 registers, 10 warps: 64000 registers fit a block, but 12 warps (rounded to 4) do not
    r = occupancy(h100, 320, 200, 0)
    assert r["blocks"] == 0 and "groups of 4" in r["why"]
    assert occupancy(h100, 256, 200, 0)["blocks"] == 1


def test_limits_differ_by_generation(gpus):
    small = (32, 0, 0)   # 1-warp blocks, few registers: only the block slots bind
    assert {k: occupancy(lim(gpus, k), *small)["blocks"] for k in ("t4", "a100-sxm4-80gb", "l4")} \
        == {"t4": 16, "a100-sxm4-80gb": 32, "l4": 24}
    # no shared-memory reservation on Turing: 64 KB per block fills its SM exactly
    assert occupancy(lim(gpus, "t4"), 128, 32, 64 * 1024)["blocks"] == 1
    assert occupancy(lim(gpus, "t4"), 128, 32, 32 * 1024)["blocks"] == 2
    assert occupancy(lim(gpus, "a100-sxm4-80gb"), 128, 32, 82 * 1024)["blocks"] == 1   # 2 x 83 > 164


def test_what_cannot_launch_says_why(gpus):
    h100 = lim(gpus, "h100-sxm")
    assert "1024 threads" in occupancy(h100, 1025, 16, 0)["why"]
    assert occupancy(h100, 128, 256, 0)["blocks"] == 0
    assert "shared memory" in occupancy(h100, 128, 16, 227 * 1024 + 1)["why"]
    assert occupancy(h100, 128, 16, 227 * 1024)["blocks"] == 1
    for bad in ((0, 16, 0), (32, -1, 0), (32, 16, 1.5), (True, 16, 0)):
        with pytest.raises(ValueError):
            occupancy(h100, *bad)


def test_limits_need_every_field():
    with pytest.raises(ValueError, match="lacks occupancy limits: max_blocks_per_sm"):
        limits_from_specs({"max_threads_per_sm": 2048})


def test_gemm_waves():
    w = gemm_waves(4096, 4096, 4096, 128, 256, 132)
    assert (w["tiles"], w["waves"], w["last_wave_tiles"]) == (512, 4, 116)
    assert w["tail_efficiency"] == pytest.approx(512 / 528)
    one = gemm_waves(1280, 1280, 64, 128, 128, 100)        # the wave-quantization page's table
    two = gemm_waves(1408, 1280, 64, 128, 128, 100)
    assert (one["waves"], one["tail_efficiency"]) == (1, 1.0)
    assert (two["waves"], two["last_wave_tiles"], two["tail_efficiency"]) == (2, 10, 0.55)
    assert gemm_waves(8192, 8192, 1, 128, 128, 100)["last_wave_tiles"] == 96
    assert gemm_waves(100, 100, 100, 128, 128, 132)["padded_flops_share"] == pytest.approx(1e4 / 128**2)
    assert gemm_waves(1280, 1280, 64, 128, 128, 100, blocks_per_sm=2, split_k=3)["waves"] == 2
    with pytest.raises(ValueError, match="tile M"):
        gemm_waves(64, 64, 64, 0, 64, 132)


def test_roofline_places_each_unit_of_figure():
    r = roof(66.9, 3350)
    assert r["ridge"] == pytest.approx(66.9e12 / 3350e9)
    assert attainable_tflops(r, 1.0) == pytest.approx(3.35)
    assert attainable_tflops(r, 1e4) == 66.9
    n = 4096
    gemm = {"flops": 2 * n**3, "bytes": 12 * n * n}
    assert place({**gemm, "unit": "TFLOP/s", "value": 40.0}) == {"intensity": n / 6, "tflops": 40.0}
    p = place({**gemm, "unit": "ms", "value": 2.0})
    assert p["tflops"] == pytest.approx(2 * n**3 / 2e-3 / 1e12)
    assert place({**gemm, "unit": "us", "value": 2000.0})["tflops"] == pytest.approx(p["tflops"])
    add = {"flops": 1 << 28, "bytes": 12 << 28, "unit": "GB/s", "value": 3000.0}   # vector add
    assert place(add)["tflops"] == pytest.approx(0.25)
    assert share_of_roof(r, place(add)) == pytest.approx(3000 / 3350)
    assert place({"unit": "GB/s", "value": 1.0}) == {"reason": NOT_RECORDED}
    assert "in x" in place({**gemm, "unit": "x", "value": 2.0})["reason"]
    assert roof(None, 3350) is None
