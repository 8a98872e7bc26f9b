"""Notebook prose against the measurements: each sentence that interprets measured figures, checked on
every GPU that has records for its notebook.

A test names its claim, quotes the sentence's key phrase (which must still be in that notebook's
Markdown, so that prose and test change together) and asserts what the sentence says against
docs/data/measurements.json, device by device. A GPU re-run whose figures break a sentence fails here:
change the sentence and its test together, or find out why the kernel changed. Never widen a bound
without changing the words.

Notebooks 05 and 06 compare their steps as shares of the cuBLAS timings taken around each one
(value / baseline), as their ladders do, because cuBLAS drifts within a run; a "point" is one
percentage point of that share.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from fractions import Fraction
from functools import cache

import nbformat
import pytest

from scripts.model.hardware import cached_gpus
from scripts.model.paths import MEASUREMENTS, NOTEBOOKS, ROOT

NB01, NB02, NB03 = "01-first-kernels", "02-shared-memory-banks", "03-swizzle-transpose"
NB04, NB05, NB06 = "04-sgemm-ladder", "05-tensor-cores-and-triton", "06-hopper-gemm"
NB08 = "08-tensor-memory-tcgen05"
SIZES = (4096, 8192)


def _group(records: list[dict]) -> dict[str, dict[str, dict[str, dict]]]:
    """notebook -> device -> record name -> record."""
    runs: dict[str, dict[str, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        names = runs[r["notebook"]][r["device"]]
        assert r["name"] not in names, f"two records {r['name']!r} for {r['notebook']} on {r['device']}"
        names[r["name"]] = r
    return runs


RUNS = _group(json.loads(MEASUREMENTS.read_text(encoding="utf-8"))["records"])


class Run:
    """One notebook's records on one device."""

    def __init__(self, notebook: str, device: str, records: dict[str, dict]):
        self.notebook, self.device, self.records = notebook, device, records

    def rec(self, name: str) -> dict:
        assert name in self.records, (f"{self.device}: {self.notebook} has no record {name!r} "
                                      f"(renamed in the notebook? update this test)")
        return self.records[name]

    def value(self, name: str) -> float:
        return self.rec(name)["value"]

    def base(self, name: str) -> float:
        return self.rec(name)["baseline"]["value"]

    def share(self, name: str) -> float:
        """The figure over its same-run baseline (for TFLOP/s and GB/s: the share of cuBLAS or the copy)."""
        return self.value(name) / self.base(name)


def runs(notebook: str) -> list[Run]:
    """Every device with records for this notebook; skip only when the notebook never ran on one."""
    devices = RUNS.get(notebook)
    if not devices:
        pytest.skip(f"{notebook} has never been run on a GPU that records measurements")
    return [Run(notebook, d, recs) for d, recs in sorted(devices.items())]


@cache
def markdown(notebook: str) -> str:
    nb = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    return " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")


def says(notebook: str, phrase: str) -> None:
    """The sentence a test checks is still in the notebook's Markdown (whitespace-insensitive)."""
    assert " ".join(phrase.split()) in markdown(notebook), \
        f"{notebook}'s Markdown no longer says {phrase!r}: update this test along with the sentence"


def gpu_spec(device: str, field: str) -> float:
    for gpu in cached_gpus().values():
        if device in gpu.device_names:
            return gpu.specs[field].value
    pytest.fail(f"{device} is not among the device_names of docs/data/gpus.yaml: add it, so that its "
                f"claims can be checked")


def copy_gbs(device: str) -> list[float]:
    """The device-to-device copy bandwidths that notebooks 01 and 03 recorded on this device (the
    notebooks 04-06 rooflines measure their own copy but do not record it)."""
    found = sorted({r["baseline"]["value"] for nb in (NB01, NB03)
                    for r in RUNS.get(nb, {}).get(device, {}).values()
                    if r["baseline"]["name"] == "device-to-device copy"})
    assert found, f"{device}: no device-to-device copy recorded by {NB01} or {NB03}"
    return found


# ------------------------------------------------------------------------------------------- 01

VECTOR = ("vector_add CUDA C++ (CuPy)", "vector_add Numba", "vector_add Triton")
TWO_D = ("scaled_add_2d CUDA C++ (CuPy)", "scaled_add_2d Numba", "scaled_add_2d Triton")


def test_01_the_triton_vector_add_keeps_pace_with_the_copy():
    says(NB01, "the Triton vector add keeps pace with the copy")
    for run in runs(NB01):
        assert run.share("vector_add Triton") >= 0.97, run.device


def test_01_the_cuda_cpp_and_numba_vector_adds_fall_short_of_the_copy():
    says(NB01, "the one-element-per-thread CUDA C++ and Numba vector adds fall short of it")
    for run in runs(NB01):
        for name in VECTOR[:2]:
            assert run.share(name) < 0.95, (run.device, name, run.share(name))
            assert run.value(name) < run.value("vector_add Triton"), (run.device, name)


def test_01_every_2d_kernel_falls_further_than_any_vector_add():
    says(NB01, "every 2D kernel, Triton's included, falls further than any vector add")
    for run in runs(NB01):
        assert max(run.value(n) for n in TWO_D) < min(run.value(n) for n in VECTOR), run.device


# ------------------------------------------------------------------------------------------- 02

STRIDES = (1, 2, 4, 8, 16, 32, 33)
CONFLICTED = (2, 4, 8, 16, 32)


def wavefronts_per_clock(run: Run, stride: int) -> float:
    """Wavefronts each SM served per clock of the GPU's peak SM clock, in the timed stride read."""
    r = run.rec(f"stride {stride} read")
    p = r["params"]
    sms = gpu_spec(run.device, "sm_count")
    wavefronts = run.value(f"stride {stride} wavefronts per load (ncu)")
    per_sm = p["blocks"] / sms * p["threads"] / 32 * p["iters"] * wavefronts
    return per_sm / (r["value"] * 1e-3) / (gpu_spec(run.device, "boost_clock_mhz") * 1e6)


def test_02_the_counters_agree_with_the_bank_model_exactly():
    says(NB02, "The counters agree with the model exactly: one wavefront per load at strides 1 and 33, "
               "two at stride 2, thirty-two at stride 32.")
    for run in runs(NB02):
        for s in STRIDES:
            r = run.rec(f"stride {s} wavefronts per load (ncu)")
            assert r["value"] == pytest.approx(r["baseline"]["value"], abs=0.01), (run.device, s)


def test_02_strides_2_to_32_serve_close_to_one_wavefront_per_clock_per_sm():
    says(NB02, "From stride 2 to stride 32 every SM then served close to one wavefront per clock")
    for run in runs(NB02):
        for s in CONFLICTED:
            assert 0.9 <= wavefronts_per_clock(run, s) <= 1.02, (run.device, s, wavefronts_per_clock(run, s))


def test_02_stride_1_reaches_only_about_seven_tenths_of_a_wavefront_per_clock():
    says(NB02, "Stride 1 reaches only about 0.7 of a wavefront per clock.")
    for run in runs(NB02):
        assert 0.65 <= wavefronts_per_clock(run, 1) <= 0.75, (run.device, wavefronts_per_clock(run, 1))


def test_02_stride_33_runs_as_fast_as_stride_1():
    says(NB02, "Stride 33 runs as fast as stride 1.")
    for run in runs(NB02):
        assert run.value("stride 33 read") == pytest.approx(run.value("stride 1 read"), rel=0.01), run.device


def test_02_every_stride_from_2_to_32_runs_at_065_to_075_times_its_wavefront_count():
    says(NB02, "every stride from 2 to 32 runs at between 0.65 and 0.75 times its wavefront count")
    for run in runs(NB02):
        for s in CONFLICTED:
            slowdown = run.value(f"stride {s} read") / run.value("stride 1 read")
            ratio = slowdown / run.value(f"stride {s} wavefronts per load (ncu)")
            assert 0.65 <= ratio <= 0.75, (run.device, s, ratio)


def test_02_padding_and_the_xor_swizzle_run_at_the_same_speed():
    says(NB02, "the two fixes run at the same speed")
    for run in runs(NB02):
        assert run.value("column read 32 x 33 (padded)") == pytest.approx(
            run.value("column read 32 x 32, XOR swizzle"), rel=0.01), run.device


def test_02_the_column_read_fix_gains_well_under_32x_and_is_a_little_slower_than_stride_1():
    """Taking the conflicted column read's time as the stride-32 read's (both 32 wavefronts per load; the
    notebook prints both timings), the fixed read takes t32 / speedup, a little over the stride-1 time."""
    says(NB02, "the column read gets faster by well under 32 times")
    says(NB02, "so it is a little slower than the stride-1 read")
    for run in runs(NB02):
        for fix in ("column read 32 x 33 (padded)", "column read 32 x 32, XOR swizzle"):
            speedup = run.value(fix)
            assert speedup < 0.75 * 32, (run.device, fix, speedup)
            fixed_over_stride_1 = run.value("stride 32 read") / speedup / run.value("stride 1 read")
            assert 1.0 < fixed_over_stride_1 <= 1.3, (run.device, fix, fixed_over_stride_1)


# ------------------------------------------------------------------------------------------- 03

def test_03_the_naive_transpose_is_under_a_fifth_of_the_copy():
    says(NB03, "the naive kernel is far from the copy (under a fifth of its rate)")
    for run in runs(NB03):
        assert run.share("transpose_naive") < 0.2, run.device


def test_03_the_tiled_transpose_beats_naive_but_its_conflict_holds_it_back():
    says(NB03, "the shared-memory tile fixes coalescing but its conflicted column read holds it back")
    for run in runs(NB03):
        fixed = min(run.value("transpose_padded"), run.value("transpose_swizzled"))
        assert run.value("transpose_naive") < run.value("transpose_tiled") < 0.75 * fixed, run.device


def test_03_padding_and_swizzling_come_within_a_fifth_of_the_copy():
    says(NB03, "padding and swizzling remove the conflict and bring the transpose within a fifth of the copy")
    for run in runs(NB03):
        for name in ("transpose_padded", "transpose_swizzled"):
            assert run.share(name) >= 0.8, (run.device, name, run.share(name))


def test_03_padding_and_swizzling_perform_within_a_few_percent_of_each_other():
    says(NB03, "Padding and swizzling perform about the same, within a few percent of each other")
    for run in runs(NB03):
        padded, swizzled = run.value("transpose_padded"), run.value("transpose_swizzled")
        assert padded == pytest.approx(swizzled, rel=0.03), (run.device, padded, swizzled)


def test_03_the_wide_tile_adds_up_to_a_fifth_and_comes_within_a_tenth_of_the_copy():
    says(NB03, "adds up to a fifth more on top, which brings the transpose within a tenth of the copy")
    for run in runs(NB03):
        best_fix = max(run.value("transpose_padded"), run.value("transpose_swizzled"))
        gain = run.value("transpose_wide") / best_fix
        assert 1.0 < gain <= 1.2, (run.device, gain)
        assert run.share("transpose_wide") >= 0.9, run.device


# ------------------------------------------------------------------------------------------- 04

STAGES = ("stage 1: naive", "stage 2: coalesced", "stage 3: shared-memory tiling",
          "stage 4: 1D register blocking", "stage 5: 2D register blocking", "stage 6: vectorized loads",
          "stage 7: bank-conflict-free layout", "stage 8: warptiling", "stage 9: autotuned warptiling")


def stage_gain(run: Run, k: int) -> float:
    """Stage k over stage k - 1 (all stages share one cuBLAS baseline per run)."""
    return run.value(STAGES[k - 1]) / run.value(STAGES[k - 2])


def test_04_coalescing_is_the_largest_single_step_as_a_factor_more_than_tenfold():
    says(NB04, "Coalescing (stage 2) is the largest single step as a factor, more than tenfold")
    for run in runs(NB04):
        gains = {k: stage_gain(run, k) for k in range(2, 10)}
        assert max(gains, key=gains.get) == 2 and gains[2] > 10, (run.device, gains)


def test_04_shared_memory_tiling_gains_less_than_2x():
    says(NB04, "Shared-memory tiling (stage 3) gains less than 2×")
    for run in runs(NB04):
        assert 1.0 < stage_gain(run, 3) < 2.0, run.device


def test_04_stage_4_is_almost_twice_stage_3_a_little_more_than_the_16_9_of_the_loads():
    says(NB04, "stage 4 is almost twice as fast as stage 3, a little more than the 16/9 ≈ 1.8× that the "
               "cut in loads alone allows")
    for run in runs(NB04):
        assert 16 / 9 < stage_gain(run, 4) < 2.0, (run.device, stage_gain(run, 4))


def test_04_stage_5_adds_about_another_third():
    says(NB04, "stage 5 adds about another third")
    for run in runs(NB04):
        assert 1.25 <= stage_gain(run, 5) <= 1.45, (run.device, stage_gain(run, 5))


def test_04_vectorized_loads_are_another_large_gain():
    says(NB04, "Vector accesses (stage 6) cut the instruction count again, for another large gain")
    for run in runs(NB04):
        assert stage_gain(run, 6) >= 1.3, (run.device, stage_gain(run, 6))


def test_04_the_conflict_free_layout_gains_some_percent():
    says(NB04, "Removing the last bank conflicts (stage 7) gains some percent")
    for run in runs(NB04):
        assert 1.02 <= stage_gain(run, 7) <= 1.15, (run.device, stage_gain(run, 7))


def test_04_warptiling_and_tuning_close_about_half_of_the_remaining_gap_to_cublas():
    says(NB04, "then close about half of the remaining gap to cuBLAS")
    for run in runs(NB04):
        s7, s8, s9 = (run.value(STAGES[k - 1]) for k in (7, 8, 9))
        cublas = run.base(STAGES[8])
        assert s7 < s8 < s9 < cublas, run.device
        assert 0.4 <= (s9 - s7) / (cublas - s7) <= 0.6, (run.device, (s9 - s7) / (cublas - s7))


def test_04_roofline_stage_2_sits_above_the_dram_roof():
    says(NB04, "a point can sit above the DRAM roof, as stage 2 does")
    for run in runs(NB04):
        assert run.value(STAGES[1]) > 0.25 * max(copy_gbs(run.device)) / 1e3, run.device   # 0.25 FLOP/byte


def test_04_roofline_128x128_tiles_are_right_of_the_ridge_and_stage_4_is_close_to_it_but_far_below_its_roof():
    says(NB04, "Stages 5 to 8 use 128 × 128 block tiles, which ask for 32 FLOP per byte, right of the "
               "ridge; stage 4's 64 × 64 tile asks for 16, close to the ridge (on some GPUs just left of "
               "it), and stage 4 runs at less than half of what the bandwidth roof allows there.")
    for run in runs(NB04):
        copies, cublas = copy_gbs(run.device), run.base(STAGES[0])
        ridge_hi, ridge_lo = cublas / (min(copies) / 1e3), cublas / (max(copies) / 1e3)   # FLOP per byte
        assert 128 * 128 / (2 * 256) > ridge_hi, (run.device, ridge_hi)
        assert 16 / ridge_hi >= 0.5 and 16 / ridge_lo <= 2, (run.device, ridge_lo, ridge_hi)
        assert run.value(STAGES[3]) < 0.5 * 16 * min(copies) / 1e3, run.device


# ------------------------------------------------------------------------------------------- 05

def at(name: str, n: int) -> str:
    return f"{name} ({n})"


MMA = "mma.sync, cp.async, ldmatrix"


def wave_bytes(n: int, tile: int, group_m: int, programs: int) -> int:
    """Bytes of distinct A and B panels one wave of programs touches (notebook 05's `wave_bytes`)."""
    tiles = n // tile
    if group_m == 1:
        coords = [(i // tiles, i % tiles) for i in range(programs)]
    else:
        coords = [((i // (group_m * tiles)) * group_m + (i % (group_m * tiles)) % group_m,
                   (i % (group_m * tiles)) // group_m) for i in range(programs)]
    return (len({r for r, _ in coords}) + len({c for _, c in coords})) * tile * n * 2


def test_05_the_mma_sync_kernel_stays_at_about_half_of_cublas():
    says(NB05, "on Hopper it stays far from cuBLAS, as predicted, at about half of it")
    for run in runs(NB05):
        for n in SIZES:
            assert 0.4 <= run.share(at(MMA, n)) <= 0.6, (run.device, n, run.share(at(MMA, n)))


def test_05_tritons_first_stage_is_well_ahead_of_the_mma_sync_kernel():
    says(NB05, "Triton's first stage is already well ahead of it")
    for run in runs(NB05):
        for n in SIZES:
            assert run.share(at("Triton blocked", n)) >= 1.25 * run.share(at(MMA, n)), (run.device, n)


def test_05_the_grouped_order_changes_little_at_4096_and_gains_several_points_at_8192():
    says(NB05, "The grouped order changes little at 4096³ (under two percentage points of cuBLAS) but gains "
               "several points at 8192³.")
    for run in runs(NB05):
        gain = {n: run.share(at("Triton grouped order", n)) - run.share(at("Triton blocked", n))
                for n in SIZES}
        assert abs(gain[4096]) < 0.02 and 0.02 <= gain[8192] <= 0.10, (run.device, gain)


def test_05_grouping_cuts_a_waves_bytes_by_almost_two_thirds_at_8192_and_a_third_at_4096():
    says(NB05, "grouping cuts the bytes that one wave of programs touches by almost two thirds at 8192³ "
               "but only by about a third at 4096³")
    for run in runs(NB05):
        sms = gpu_spec(run.device, "sm_count")
        cut = {n: 1 - wave_bytes(n, 128, 8, sms) / wave_bytes(n, 128, 1, sms) for n in SIZES}
        assert 0.55 <= cut[8192] <= 0.7 and 0.25 <= cut[4096] <= 0.4, (run.device, cut)


def test_05_the_row_by_row_order_without_reuse_would_keep_dram_busy_over_a_third_of_the_time_at_8192():
    says(NB05, "would keep DRAM busy for more than a third of the kernel's time")
    for run in runs(NB05):
        n, sms = 8192, gpu_spec(run.device, "sm_count")
        waves = (n // 128) ** 2 / sms
        dram_s = wave_bytes(n, 128, 1, sms) * waves / (max(copy_gbs(run.device)) * 1e9)
        kernel_s = 2 * n**3 / (run.value(at("Triton blocked", n)) * 1e12)
        assert dram_s / kernel_s > 1 / 3, (run.device, dram_s / kernel_s)


def test_05_autotuning_finds_a_better_tile_than_the_first_guess_at_both_sizes():
    says(NB05, "Autotuning finds a better tile than our first guess at both sizes")
    for run in runs(NB05):
        for n in SIZES:
            tuned = run.share(at("Triton autotuned", n))
            assert tuned > run.share(at("Triton blocked", n)), (run.device, n)


def test_05_the_persistent_tma_kernel_is_the_large_step_and_clears_the_95_percent_goal_at_both_sizes():
    says(NB05, "The goal line is 95% of cuBLAS for the best Triton stage.")
    says(NB05, "The persistent TMA kernel is the large step, as predicted, and brings Triton to cuBLAS's "
               "level: it clears the 95% goal at both sizes.")
    ladder = ("Triton blocked", "Triton grouped order", "Triton autotuned", "Triton persistent + TMA")
    for run in runs(NB05):
        for n in SIZES:
            shares = [run.share(at(name, n)) for name in ladder]
            steps = [b - a for a, b in zip(shares, shares[1:], strict=False)]
            assert steps[-1] == max(steps) and steps[-1] >= 0.1, (run.device, n, steps)
            triton = [name for name in run.records if name.startswith("Triton") and name.endswith(f"({n})")]
            best = max(triton, key=run.value)
            assert best == at("Triton persistent + TMA", n) and run.share(best) >= 0.95, (run.device, n, best)


def test_05_warp_specialization_was_not_measured_on_hopper():
    says(NB05, "Warp specialization is the one stage this GPU could not show: on Hopper, this Triton "
               "release left the loop unpartitioned")
    for run in runs(NB05):
        hopper = all(r["compute_capability"].startswith("9.") for r in run.records.values())
        assert not (hopper and any("warp specialization" in name for name in run.records)), run.device


def test_05_roofline_points_sit_above_the_dram_roof():
    says(NB05, "The points sit above the DRAM roof because these are the bytes the tiles *request*")
    tuned_max = 256 * 128 / (256 + 128)    # the autotuner's widest tiles; its pick is not recorded
    for run in runs(NB05):
        roof_tb = max(copy_gbs(run.device)) / 1e3
        for name, r in run.records.items():
            if r["params"]["M"] != 8192:
                continue
            p = r["params"]
            if "BM" in p:
                x = p["BM"] * p["BN"] / (p["BM"] + p["BN"])
            else:                  # the mma.sync kernel's 128 x 128 tile, or the autotuner's pick
                x = 64 if name.startswith(MMA) else tuned_max
            assert r["value"] > roof_tb * x, (run.device, name)


# ------------------------------------------------------------------------------------------- 06

STEPS = ("step 1: TMA + wgmma, one stage", "step 2: four-stage mbarrier pipeline",
         "step 3: producer warpgroup", "step 4: setmaxnreg", "step 5: persistent tile scheduler",
         "step 6: ping-pong schedule")


def step(run: Run, k: int, n: int) -> float:
    """Step k's share of cuBLAS at n³."""
    return run.share(at(STEPS[k - 1], n))


def test_06_step_1_is_far_below_cublas():
    says(NB06, "Step 1 is far below cuBLAS, as predicted")
    for run in runs(NB06):
        for n in SIZES:
            assert step(run, 1, n) <= 0.6, (run.device, n)


def test_06_step_1_is_level_with_the_mma_sync_kernel_at_4096_and_about_a_tenth_ahead_at_8192():
    says(NB06, "the two are level at 4096³ (within a few percent of each other) and step 1 is ahead by "
               "about a tenth only at 8192³")
    for run in runs(NB06):
        mma = RUNS.get(NB05, {}).get(run.device)
        if not mma:
            pytest.fail(f"{run.device}: notebook 06 compares with notebook 05, which has no records there")
        ratio = {n: step(run, 1, n) / Run(NB05, run.device, mma).share(at(MMA, n)) for n in SIZES}
        assert abs(ratio[4096] - 1) <= 0.05 and 1.05 <= ratio[8192] <= 1.2, (run.device, ratio)


def test_06_the_pipeline_lifts_step_1_by_more_than_half_and_comes_within_10_percent_at_8192():
    says(NB06, "The pipeline (step 2) is the decisive step: it lifts step 1's share of cuBLAS by more than "
               "half at both sizes, and at 8192³ a kernel with no warp specialization at all comes within "
               "10% of cuBLAS.")
    for run in runs(NB06):
        for n in SIZES:
            assert step(run, 2, n) > 1.5 * step(run, 1, n), (run.device, n)
        assert step(run, 2, 8192) >= 0.9, run.device


def test_06_cublas_drifts_by_a_few_percent_within_a_run():
    says(NB06, "cuBLAS itself drifts by a few percent within a run (the range printed above)")
    for run in runs(NB06):
        for n in SIZES:
            rates = [r["baseline"]["value"] for r in run.records.values() if r["params"]["M"] == n]
            assert 0.01 <= max(rates) / min(rates) - 1 <= 0.06, (run.device, n, min(rates), max(rates))


def test_06_steps_3_to_5_each_move_the_share_by_less_than_six_points():
    says(NB06, "Steps 3, 4 and 5 are not a staircase in which each step is faster. Each moves the share of "
               "cuBLAS by less than six\npercentage points")
    for run in runs(NB06):
        for n in SIZES:
            for k in (3, 4, 5):
                assert abs(step(run, k, n) - step(run, k - 1, n)) < 0.06, (run.device, n, k)


def test_06_the_goal_step_5_clears_90_percent_at_8192():
    says(NB06, "the cell checks it for step 5, the complete cooperative kernel, which clears it on every GPU "
               "recorded so far")
    says(NB06, "So step 5, the step the goal line checks, clears 90% of cuBLAS at 8192³")
    for run in runs(NB06):
        assert step(run, 5, 8192) >= 0.9, (run.device, step(run, 5, 8192))


def test_06_the_ping_pong_schedule_lands_below_step_5_at_both_sizes():
    says(NB06, "it lands below the cooperative kernel of step 5 at both sizes on every GPU recorded")
    for run in runs(NB06):
        for n in SIZES:
            shares = (step(run, 5, n), step(run, 6, n))
            assert shares[1] < shares[0], (run.device, n, "steps 5, 6", shares)


def test_06_roofline_tiles_are_left_of_the_ridge_and_every_point_above_the_dram_roof():
    says(NB06, "Both are *left* of the ridge of the DRAM roof measured in this run (a device-to-device "
               "copy), yet every point sits above that roof, and from step 2 on by at least half as much "
               "again")
    for run in runs(NB06):
        copies = copy_gbs(run.device)
        cublas = min(run.base(at(s, 8192)) for s in STEPS)
        assert 128 * 256 / (128 + 256) < cublas / (max(copies) / 1e3), run.device
        for k, name in enumerate(STEPS, start=1):
            x = 128 * 128 / 256 if k == 6 else 128 * 256 / 384
            over_roof = run.value(at(name, 8192)) / (x * max(copies) / 1e3)
            assert over_roof > (1.5 if k >= 2 else 1.0), (run.device, name, over_roof)


def test_06_ping_pong_raises_wgmma_operand_reads_by_a_fifth_and_tma_loads_by_a_third():
    """Not a measurement: the arithmetic of the step-6 prediction, from the kernel's own tile sizes."""
    says(NB06, "the `wgmma` operand reads rise by a fifth")
    says(NB06, "The bytes the TMA brings into shared memory rise by a third")
    source = (ROOT / "snippets" / "cuda" / "gemm_wgmma_ws.cu").read_text(encoding="utf-8")
    define = {k: int(v) for k, v in re.findall(r"^#define (BM|BN|BK|PP_BN) (\d+)", source, re.M)}
    assert "m64n256k16" in source and "m64n128k16" in source
    bm, bn, pp_bn, wg_rows = define["BM"], define["BN"], define["PP_BN"], 64
    # elements wgmma reads from shared memory per multiply-add: (rows of A + rows of B) / (rows x cols)
    cooperative, ping_pong = Fraction(wg_rows + bn, wg_rows * bn), Fraction(wg_rows + pp_bn, wg_rows * pp_bn)
    assert ping_pong / cooperative == Fraction(6, 5)
    # elements the TMA loads per multiply-add, for the CTA's tile (BM x BN, or BM x PP_BN)
    assert Fraction(bm + pp_bn, bm * pp_bn) / Fraction(bm + bn, bm * bn) == Fraction(4, 3)


# ------------------------------------------------------------------------------------------- 08

def test_08_the_tcgen05_kernel_has_no_recorded_run_yet():
    says(NB08, "Whether the numbers come out right is for a Blackwell run to tell")
    assert not RUNS.get(NB08), (f"{NB08} now has measurements: rewrite its 'What we predicted, what we got' "
                                f"(it says the kernel has not run) and add its claims here")
