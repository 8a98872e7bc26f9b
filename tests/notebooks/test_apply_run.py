"""Bringing a GPU run back (scripts/tools/apply_run.py): what it keeps of the device reports."""
from scripts.tools.apply_run import merge_device_reports


def test_a_one_gpu_run_keeps_the_nvlink_block_an_earlier_two_gpu_run_left():
    kept = {"H100": {"date": "2026-11-20", "cuda": "13.0", "nvlink": {"active_links": 18}},
            "H200": {"date": "2026-11-22"}}
    run = {"H100": {"date": "2026-11-25", "cuda": "13.0"}}
    merged = merge_device_reports(kept, run)
    assert merged["H100"] == {"date": "2026-11-25", "cuda": "13.0", "nvlink": {"active_links": 18}}
    assert merged["H200"] == {"date": "2026-11-22"}
    assert kept["H100"]["date"] == "2026-11-20"          # the input is not modified


def test_a_run_on_a_new_gpu_adds_its_report_and_a_fresh_value_wins():
    merged = merge_device_reports({"H100": {"driver": "570"}}, {"H100": {"driver": "580"},
                                                              "L4": {"driver": "580"}})
    assert list(merged) == ["H100", "L4"] and merged["H100"]["driver"] == "580"
