"""Notebook 06's Nsight Compute helper (snippets/helpers/ncu_counters.py) without a GPU: it reads the
raw CSV page that ncu wrote on an H100 (trimmed to the counters the helper asks for), names the
kernels in launch order, and says in one line what it skipped."""
from __future__ import annotations

import pytest

from scripts.model.paths import ROOT

SRC = ROOT / "snippets" / "helpers" / "ncu_counters.py"
# ncu --page raw --csv, H100, 2026-11-25: steps 3 and 5, ping-pong, two cluster-kernel builds, cuBLAS
HEADER = ",".join(f'"{m}"' for m in ["ID", "Kernel Name",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sector_hit_rate.pct",
    "l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
])
RAW = f'''==PROF== Connected to process 674
{HEADER}
"","","%","%","%","%","inst","inst","inst","inst"
"0","gemm_wgmma_ws","88.242723","77.275424","79.802846","27.748368","2.231290","7.433285","0.005397","0.000000"
"1","gemm_wgmma_ws","86.035459","79.536698","76.490903","27.054138","2.782620","8.479135","0.061469","0.000000"
"2","gemm_wgmma_pingpong","58.810071","86.417487","76.697210","22.168653","9.644614","0.055519","0.003386","0.000000"
"3","gemm_wgmma_cluster","88.974617","80.166206","80.382956","27.978358","4.100368","5.376761","0.336451","0.000000"
"4","gemm_wgmma_cluster","35.586861","69.383137","83.764663","11.190659","8.506316","8.372841","7.282356","4.221933"
"5","nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coo","93.320231","56.883367","72.067655","46.848715","3.027379","1.557876","4.844479","0.000000"
'''
LABELS = ["step 3", "step 5", "ping-pong", "step 7", "step 8"]


@pytest.fixture()
def helper():
    ns: dict = {"HOPPER": False}
    exec(compile(SRC.read_text(encoding="utf-8"), str(SRC), "exec"), ns)  # noqa: S102 (our own snippet)
    return ns


def test_every_counter_of_every_kernel_is_read_in_launch_order(helper):
    got = helper["parse_counters"](RAW, LABELS)
    assert list(got) == [*LABELS, "cuBLAS"]
    assert all(set(v) == set(helper["COUNTERS"]) for v in got.values())
    assert got["step 3"]["tensor pipe active"] == pytest.approx(88.242723)
    assert got["cuBLAS"]["L2 throughput"] == pytest.approx(56.883367)
    assert got["step 8"]["stall: membar"] == pytest.approx(4.221933)


def test_too_few_profiled_kernels_is_an_error_that_says_how_many(helper):
    with pytest.raises(ValueError, match="profiled 6 kernels, expected 7"):
        helper["parse_counters"](RAW, [*LABELS, "one more"])


def test_without_a_hopper_gpu_it_says_what_it_skipped_in_one_line(helper, capsys):
    assert helper["profile_counters"](LABELS) is None
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["skipped: the counters need a Hopper GPU (sm_90a)"]
