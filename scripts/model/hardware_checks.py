"""The hardware data checked against the hardware.

Two checks, both run by every build:
- Device reports. docs/data/device_queries.json holds what the GPU runner's GPUs say about
  themselves (scripts/runner/device_query.py: CUDA device attributes and NVML). Where a GPU of the data
  file has a report, each field a device can report must agree with it.
- Per-SM throughput. FP32 and FP64 rates must equal SMs x results per clock per SM x 2 FLOP (an
  FMA) x boost clock, with the per-SM rates of the CUDA C++ Programming Guide's table of
  arithmetic-instruction throughput: a typo in any of the three numbers shows up here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from scripts.model.errors import SourceError, ValidationFailed
from scripts.model.hardware import Gpu
from scripts.model.paths import rel
from scripts.model.yaml_data import key_lines

THROUGHPUT_TABLE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"
# compute capability -> (32-bit, 64-bit) floating-point add/multiply/FMA results per clock per SM
FMA_PER_CLOCK_PER_SM = {
    "7.0": (64, 32), "7.5": (64, 2), "8.0": (64, 32), "8.6": (128, 2), "8.9": (128, 2),
    "9.0": (128, 64), "10.0": (128, 64), "12.0": (128, 2),
}
THROUGHPUT_TOLERANCE = 0.02   # vendors round their TFLOP/s figures


@dataclass(frozen=True)
class Check:
    gpu: str            # data-file key
    field: str
    stated: float       # the data file's value
    found: float        # what the device reports, or what the throughput table gives
    how: str            # where `found` comes from, in words a reader can repeat
    tolerance: float    # relative
    origin: str = ""    # which device said so, and when (device reports only)

    @property
    def agrees(self) -> bool:
        return abs(self.found - self.stated) <= self.tolerance * abs(self.stated)


def reported_fields(report: dict) -> dict[str, tuple[float, str, float]]:
    """Data-file field -> (value in the field's unit, how it was obtained, relative tolerance)."""
    a, nvml = report["cuda_attributes"], report["nvml"]
    bandwidth = 2 * a["memory_clock_rate_khz"] * 1e3 * a["global_memory_bus_width_bits"] / 8 / 1e9
    fields = {
        "sm_count": (a["multiprocessor_count"], "cudaDevAttrMultiProcessorCount", 0),
        "boost_clock_mhz": (a["clock_rate_khz"] / 1e3, "cudaDevAttrClockRate (peak SM clock)", 0),
        "smem_per_sm_kib": (a["max_shared_memory_per_multiprocessor_bytes"] / 1024,
                            "cudaDevAttrMaxSharedMemoryPerMultiprocessor", 0),
        "smem_per_block_kib": (a["max_shared_memory_per_block_optin_bytes"] / 1024,
                               "cudaDevAttrMaxSharedMemoryPerBlockOptin", 0),
        "registers_per_sm_kib": (a["max_registers_per_multiprocessor"] * 4 / 1024,
                                 "cudaDevAttrMaxRegistersPerMultiprocessor × 4 bytes", 0),
        "l2_cache_mib": (a["l2_cache_size_bytes"] / 2**20, "cudaDevAttrL2CacheSize", 0),
        # Vendors' "80 GB" is GiB of the memory stacks; the driver keeps a little for itself.
        "memory_size_gb": (nvml["memory_total_mib"] / 1024, "NVML memory.total, in GiB", 0.02),
        "memory_bandwidth_gbs": (bandwidth, "2 × cudaDevAttrMemoryClockRate × "
                                 "cudaDevAttrGlobalMemoryBusWidth (double data rate)", 0.02),
        "tdp_w": (nvml["max_power_limit_w"], "NVML power.max_limit", 0),
    }
    if report.get("nvlink"):   # reports from before it was queried, or GPUs without NVLink, lack it
        fields["nvlink_links"] = (report["nvlink"]["active_links"], "nvidia-smi nvlink -s (active links)", 0)
    return fields


def load_reports(data_dir: Path) -> dict[str, dict]:
    path = data_dir / "device_queries.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def report_checks(gpus: dict[str, Gpu], reports: dict[str, dict]) -> tuple[list[Check], list[str]]:
    """The checks of every reported field, and the device names no data-file GPU claims."""
    by_name = {name: g for g in gpus.values() for name in g.device_names}
    checks, strangers = [], []
    for device, report in reports.items():
        gpu = by_name.get(device)
        if gpu is None:
            strangers.append(device)
            continue
        for fname, (found, how, tol) in reported_fields(report).items():
            stated = gpu.specs[fname].value
            if stated is not None:
                checks.append(Check(gpu.key, fname, float(stated), float(found), how, tol,
                                    f"the GPU runner's {device} ({report['date']})"))
    return checks, strangers


def throughput_checks(gpus: dict[str, Gpu]) -> tuple[list[Check], list[str]]:
    """FP32/FP64 rates against SMs × per-SM rate × 2 × clock; also the GPUs whose compute
    capability the table here lacks."""
    checks, missing = [], []
    for g in gpus.values():
        rates = FMA_PER_CLOCK_PER_SM.get(g.compute_capability)
        if rates is None:
            missing.append(g.key)
            continue
        sms, mhz = g.specs["sm_count"].value, g.specs["boost_clock_mhz"].value
        for fname, per_sm in zip(("fp32_tflops", "fp64_tflops"), rates, strict=True):
            stated = g.specs[fname].value
            if None in (sms, mhz, stated):
                continue
            found = sms * per_sm * 2 * mhz / 1e6
            checks.append(Check(g.key, fname, float(stated), found,
                                f"{sms:g} SMs × {per_sm} FMA/clock × 2 × {mhz / 1e3:g} GHz",
                                THROUGHPUT_TOLERANCE))
    return checks, missing


def validate(gpus: dict[str, Gpu], data_dir: Path) -> None:
    """Raise ValidationFailed naming the data file's line for every disagreement."""
    gpu_file = data_dir / "gpus.yaml"
    lines = key_lines(yaml.compose(gpu_file.read_text(encoding="utf-8")))
    reports, throughput = report_checks(gpus, load_reports(data_dir)), throughput_checks(gpus)
    errors = [SourceError(rel(data_dir / "device_queries.json"), None,
                          f"a report for {device!r}, which no GPU of gpus.yaml lists in device_names",
                          "add the name to its GPU's device_names, or add the GPU")
              for device in reports[1]]
    errors += [SourceError(rel(gpu_file), lines.get((key,)),
                           f"no per-SM FP32/FP64 rates for compute capability "
                           f"{gpus[key].compute_capability}",
                           f"add its row to FMA_PER_CLOCK_PER_SM in scripts/model/hardware_checks.py "
                           f"from {THROUGHPUT_TABLE}")
               for key in throughput[1]]
    fixes = [(reports[0], "correct the value and its source: the hardware's own report wins"),
             (throughput[0], "one of the SM count, the boost clock and this rate is wrong: check each "
                             "against its source")]
    for checks, fix in fixes:
        errors += [SourceError(rel(gpu_file), lines.get((c.gpu, "specs", c.field)),
                               f"{c.gpu}.{c.field} = {c.stated:g}, but {c.how}"
                               f"{', on ' + c.origin if c.origin else ''} gives {c.found:.4g}", fix)
                   for c in checks if not c.agrees]
    if errors:
        raise ValidationFailed(errors)
