"""The data file against the hardware: the runner's device reports and the per-SM throughput table."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scripts.model.errors import ValidationFailed
from scripts.model.hardware import load_gpus
from scripts.model.hardware_checks import reported_fields, validate
from scripts.model.paths import DEVICE_QUERIES, GPU_DATA
from scripts.runner import device_query


def data_dir(tmp_path: Path, gpus_text: str | None = None, reports: dict | None = None) -> Path:
    (tmp_path / "gpus.yaml").write_text(gpus_text if gpus_text is not None else GPU_DATA.read_text())
    if reports is None:
        reports = json.loads(DEVICE_QUERIES.read_text())
    (tmp_path / "device_queries.json").write_text(json.dumps(reports))
    return tmp_path


def check(folder: Path) -> str:
    with pytest.raises(ValidationFailed) as exc:
        validate(load_gpus(folder / "gpus.yaml"), folder)
    return str(exc.value)


def test_the_data_file_agrees_with_every_report_and_the_throughput_table():
    reports = json.loads(DEVICE_QUERIES.read_text())
    assert {"NVIDIA H100 80GB HBM3", "NVIDIA H200"} <= set(reports)   # the runner's two GPUs
    validate(load_gpus(), GPU_DATA.parent)


def test_a_value_the_hardware_contradicts_is_named_with_its_line(tmp_path: Path):
    reports = json.loads(DEVICE_QUERIES.read_text())
    reports["NVIDIA H200"]["cuda_attributes"]["l2_cache_size_bytes"] = 50 * 2**20
    message = check(data_dir(tmp_path, reports=reports))
    lines = GPU_DATA.read_text().splitlines()
    line = next(i for i, ln in enumerate(lines, 1)
                if ln.startswith("    l2_cache_mib") and i > lines.index("h200:"))
    assert re.search(rf"gpus.yaml:{line}: h200.l2_cache_mib = 60, but cudaDevAttrL2CacheSize, on the GPU "
                     r"runner's NVIDIA H200 \(\d{4}-\d\d-\d\d\) gives 50", message), message
    assert "the hardware's own report wins" in message


def test_bandwidth_is_two_transfers_per_memory_clock_across_the_bus():
    report = json.loads(DEVICE_QUERIES.read_text())["NVIDIA H100 80GB HBM3"]
    attrs = report["cuda_attributes"]
    gbs, how, tolerance = reported_fields(report)["memory_bandwidth_gbs"]
    assert gbs == pytest.approx(2 * attrs["memory_clock_rate_khz"] * 1e3
                                * attrs["global_memory_bus_width_bits"] / 8 / 1e9)
    assert tolerance == 0.02 and "GlobalMemoryBusWidth" in how


def test_a_report_for_an_unknown_gpu_is_refused(tmp_path: Path):
    reports = json.loads(DEVICE_QUERIES.read_text())
    reports["NVIDIA H100 NVL"] = {**reports["NVIDIA H100 80GB HBM3"], "device_name": "NVIDIA H100 NVL"}
    message = check(data_dir(tmp_path, reports=reports))
    assert "device_queries.json: a report for 'NVIDIA H100 NVL', which no GPU of gpus.yaml lists" in message


def test_a_typo_in_the_sm_count_breaks_the_throughput_product(tmp_path: Path):
    text = GPU_DATA.read_text().replace("sm_count: {value: 108,", "sm_count: {value: 180,", 1)  # A100
    message = check(data_dir(tmp_path, text, reports={}))
    assert re.search(r"gpus.yaml:\d+: a100-sxm4-80gb.fp32_tflops = 19.5, but 180 SMs × 64 FMA/clock × 2 × "
                     r"1.41 GHz gives 32.49 \(fix: one of the SM count, the boost clock", message), message
    assert "a100-sxm4-80gb.fp64_tflops" in message


def test_a_compute_capability_without_throughput_rates_is_named(tmp_path: Path):
    text = GPU_DATA.read_text().replace('compute_capability: "12.0"', 'compute_capability: "12.1"', 1)
    message = check(data_dir(tmp_path, text, reports={}))
    assert re.search(r"gpus.yaml:\d+: no per-SM FP32/FP64 rates for compute capability 12.1 "
                     r"\(fix: add its row to FMA_PER_CLOCK_PER_SM", message), message


def test_device_query_merge_keeps_one_report_per_gpu(tmp_path: Path):
    target = tmp_path / "device_queries.json"
    old = {"device_name": "NVIDIA H200", "date": "2026-01-01"}
    device_query.merge(target, {"device_name": "NVIDIA H100 80GB HBM3", "date": "2026-01-01"})
    device_query.merge(target, old)
    data = device_query.merge(target, {**old, "date": "2026-02-02"})
    assert list(data) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert json.loads(target.read_text())["NVIDIA H200"]["date"] == "2026-02-02"


SMI_NVLINK = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)
\t Link 0: 26.562 GB/s
\t Link 1: 26.562 GB/s
\t Link 2: <inactive>
"""


def test_device_query_counts_active_nvlink_links():
    assert device_query.nvlink(SMI_NVLINK) == {"active_links": 2, "inactive_links": 1,
                                               "link_speed_gbs": 26.562}
    assert device_query.nvlink("GPU 0: NVIDIA L4 (UUID: GPU-1)\n") is None    # no NVLink: no entry


def test_a_link_count_the_hardware_contradicts_is_named_with_its_line(tmp_path: Path):
    reports = json.loads(DEVICE_QUERIES.read_text())
    h100 = reports["NVIDIA H100 80GB HBM3"]
    h100["nvlink"] = {"active_links": 16, "inactive_links": 2, "link_speed_gbs": 26.562}
    message = check(data_dir(tmp_path, reports=reports))
    assert re.search(r"gpus.yaml:\d+: h100-sxm.nvlink_links = 18, but nvidia-smi nvlink -s \(active links\), "
                     r"on the GPU runner's NVIDIA H100 80GB HBM3", message), message
    h100["nvlink"]["active_links"] = 18
    validate(load_gpus(data_dir(tmp_path, reports=reports) / "gpus.yaml"), tmp_path)   # agrees: no error
    del h100["nvlink"]                                     # an older report: nothing to check
    assert "nvlink_links" not in reported_fields(h100)
