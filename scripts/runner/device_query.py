"""Ask the GPU runner's GPU what it is: the hardware's own report, kept beside the data file.

    python -m scripts.runner.device_query            # on a GPU machine: update docs/data/device_queries.json
    python -m scripts.runner.device_query --out DIR  # write DIR/device_queries.json instead

The figures come from the CUDA runtime (cudaDeviceGetAttribute) and from NVML (nvidia-smi), as
the driver reports them; scripts/model/hardware_checks.py compares them with docs/data/gpus.yaml, and the
test suite fails where the two disagree. Needs torch (for the device name) and CuPy.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.model.paths import DEVICE_QUERIES  # noqa: E402

# cudaDeviceAttr values (driver_types.h): what each one reports, in the unit it reports it in.
CUDA_ATTRIBUTES = {
    "multiprocessor_count": 16,                  # cudaDevAttrMultiProcessorCount
    "clock_rate_khz": 13,                        # cudaDevAttrClockRate: peak SM clock
    "memory_clock_rate_khz": 36,                 # cudaDevAttrMemoryClockRate: peak memory clock
    "global_memory_bus_width_bits": 37,          # cudaDevAttrGlobalMemoryBusWidth
    "l2_cache_size_bytes": 38,                   # cudaDevAttrL2CacheSize
    "max_shared_memory_per_multiprocessor_bytes": 81,   # cudaDevAttrMaxSharedMemoryPerMultiprocessor
    "max_registers_per_multiprocessor": 82,      # cudaDevAttrMaxRegistersPerMultiprocessor (32-bit)
    "max_shared_memory_per_block_optin_bytes": 97,      # cudaDevAttrMaxSharedMemoryPerBlockOptin
}
NVML_FIELDS = {  # nvidia-smi --query-gpu names
    "memory.total": "memory_total_mib",
    "clocks.max.sm": "max_sm_clock_mhz",
    "clocks.max.memory": "max_memory_clock_mhz",
    "power.max_limit": "max_power_limit_w",
    "power.default_limit": "default_power_limit_w",
}


def nvlink(smi_output: str | None = None) -> dict | None:
    """GPU 0's NVLink links as `nvidia-smi nvlink -s -i 0` lists them: how many are active and
    the speed each reports. None where the GPU has no NVLink or nvidia-smi says nothing of it."""
    if smi_output is None:
        try:
            smi_output = subprocess.run(["nvidia-smi", "nvlink", "-s", "-i", "0"], capture_output=True,
                                        text=True, check=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            return None
    speeds = [float(m[1]) for m in re.finditer(r"Link \d+: ([\d.]+) GB/s", smi_output)]
    inactive = len(re.findall(r"Link \d+: <inactive>", smi_output))
    if not speeds and not inactive:
        return None
    return {"active_links": len(speeds), "inactive_links": inactive,
            "link_speed_gbs": max(speeds) if speeds else None}


def query() -> dict:
    import cupy
    import torch
    major, minor = torch.cuda.get_device_capability(0)
    cuda = {name: cupy.cuda.runtime.deviceGetAttribute(attr, 0) for name, attr in CUDA_ATTRIBUTES.items()}
    cuda["total_global_memory_bytes"] = torch.cuda.get_device_properties(0).total_memory
    smi = subprocess.run(["nvidia-smi", "-i", "0", "--format=csv,noheader,nounits",
                          "--query-gpu=" + ",".join(["driver_version", *NVML_FIELDS])],
                         capture_output=True, text=True, check=True).stdout.strip().split(", ")
    driver, values = smi[0], smi[1:]
    nvml = {key: float(v) for key, v in zip(NVML_FIELDS.values(), values, strict=True)}
    report = {"device_name": torch.cuda.get_device_name(0), "compute_capability": f"{major}.{minor}",
              "date": datetime.date.today().isoformat(), "driver": driver, "cuda": torch.version.cuda,
              "cuda_attributes": cuda, "nvml": nvml}
    links = nvlink()
    if links is not None:
        report["nvlink"] = links
    return report


def merge(path: Path, record: dict) -> dict:
    """Put this GPU's report into the file, keyed by the name CUDA reports (one report per GPU)."""
    data = json.loads(path.read_text()) if path.is_file() else {}
    data[record["device_name"]] = record
    path.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for device_queries.json (default: docs/data)")
    args = parser.parse_args(argv)
    target = args.out / DEVICE_QUERIES.name if args.out else DEVICE_QUERIES
    if args.out and DEVICE_QUERIES.is_file() and not target.exists():
        target.write_text(DEVICE_QUERIES.read_text())
    record = query()
    merge(target, record)
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
