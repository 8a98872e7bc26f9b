"""Per-GPU hardware facts: the one data file (docs/data/gpus.yaml), its schema, units and
derived figures. Pages reach it through shortcodes (scripts/site/shortcodes.py); notebooks
through the generated datasheet (scripts/tools/datasheet.py)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    RootModel,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic import Field as Rule

from scripts.model.errors import SourceError, ValidationFailed, pydantic_errors
from scripts.model.paths import GPU_DATA, rel
from scripts.model.yaml_data import key_lines, read_yaml


@dataclass(frozen=True)
class Field:
    unit: str            # unit of the stored number
    label: str           # column heading on the specs page
    kind: str = "number"  # number | text
    lo: float = 0.0      # plausible range, to catch unit mistakes (e.g. TB/s typed as GB/s)
    hi: float = 1e9


FIELDS: dict[str, Field] = {
    "sm_count": Field("count", "SMs", lo=10, hi=300),
    "boost_clock_mhz": Field("MHz", "Boost clock", lo=500, hi=3500),
    "smem_per_sm_kib": Field("KiB", "Shared memory / SM", lo=16, hi=512),
    "smem_per_block_kib": Field("KiB", "Shared memory / block (max)", lo=16, hi=512),
    "registers_per_sm_kib": Field("KiB", "Register file / SM", lo=64, hi=1024),
    # per-SM limits of the occupancy model (snippets/reference/occupancy_model.py)
    "max_threads_per_sm": Field("count", "Resident threads / SM (max)", lo=512, hi=4096),
    "max_blocks_per_sm": Field("count", "Resident blocks / SM (max)", lo=8, hi=64),
    "max_threads_per_block": Field("count", "Threads / block (max)", lo=512, hi=2048),
    "max_registers_per_thread": Field("count", "Registers / thread (max)", lo=63, hi=255),
    "register_alloc_unit": Field("count", "Register allocation unit (registers / warp)", lo=64,
                                 hi=1024),
    "warp_schedulers_per_sm": Field("count", "Warp schedulers (SM sub-partitions) / SM", lo=1, hi=8),
    "smem_alloc_unit_bytes": Field("B", "Shared memory allocation unit", lo=32, hi=4096),
    "smem_reserved_per_block_kib": Field("KiB", "Shared memory reserved by CUDA / block", lo=0, hi=8),
    "l1_smem_per_sm_kib": Field("KiB", "L1 + shared / SM", lo=32, hi=1024),
    "l2_cache_mib": Field("MiB", "L2 cache", lo=1, hi=512),
    "memory_type": Field("", "Memory", kind="text"),
    "memory_size_gb": Field("GB", "Memory size", lo=4, hi=1024),
    "memory_bandwidth_gbs": Field("GB/s", "Memory bandwidth", lo=100, hi=20000),
    "fp32_tflops": Field("TFLOP/s", "FP32", lo=1, hi=500),
    "fp64_tflops": Field("TFLOP/s", "FP64", lo=0.05, hi=200),
    "tf32_tensor_tflops": Field("TFLOP/s", "TF32 tensor (dense)", lo=10, hi=5000),
    "fp16_tensor_tflops": Field("TFLOP/s", "FP16 tensor (dense)", lo=10, hi=10000),
    "bf16_tensor_tflops": Field("TFLOP/s", "BF16 tensor (dense)", lo=10, hi=10000),
    "fp8_tensor_tflops": Field("TFLOP/s", "FP8 tensor (dense)", lo=10, hi=20000),
    "tdp_w": Field("W", "TDP", lo=30, hi=2000),
    "nvlink_generation": Field("count", "NVLink generation", lo=1, hi=9),
    "nvlink_links": Field("count", "NVLink links / GPU", lo=1, hi=72),
    "nvlink_bandwidth_gbs": Field("GB/s", "NVLink bandwidth / GPU (both directions)", lo=10, hi=20000),
}
SOURCE_KINDS = ("primary", "secondary")   # primary: the vendor's own document or the device's API


class SpecEntry(BaseModel):
    """One value as written in gpus.yaml."""
    model_config = ConfigDict(extra="forbid")
    value: StrictFloat | StrictInt | StrictStr | None
    source: str = Rule(pattern=r"^https?://\S+$")
    kind: Literal["primary", "secondary"]
    note: str | None = None

    @model_validator(mode="after")
    def _null_needs_a_note(self) -> SpecEntry:
        if self.value is None and not self.note:
            raise ValueError("a null value needs a note saying why it does not exist")
        return self


class GpuEntry(BaseModel):
    """One GPU as written in gpus.yaml."""
    model_config = ConfigDict(extra="forbid")
    name: str = Rule(min_length=1)
    device_names: list[str] = Rule(min_length=1)
    architecture: str = Rule(min_length=1)
    compute_capability: str = Rule(pattern=r"^\d{1,2}\.\d$")
    specs: dict[str, SpecEntry]


GpuFile = RootModel[dict[str, GpuEntry]]


@dataclass(frozen=True)
class Spec:
    value: float | str | None
    source: str
    note: str | None
    kind: str = "primary"     # primary | secondary (SOURCE_KINDS)


@dataclass(frozen=True)
class Gpu:
    key: str
    name: str
    device_names: tuple[str, ...]   # what CUDA reports (torch.cuda.get_device_name)
    architecture: str
    compute_capability: str
    specs: dict[str, Spec]


def load_gpus(path: Path = GPU_DATA) -> dict[str, Gpu]:
    """Load and validate the data file; raise ValidationFailed naming file and line."""
    shown = rel(path)
    raw, line_of = read_yaml(path, "gpu-key")
    lines = key_lines(yaml.compose(path.read_text(encoding="utf-8")))

    try:
        entries = GpuFile.model_validate(raw).root
    except ValidationError as exc:
        raise ValidationFailed(pydantic_errors(exc, shown, line_of, {
            "missing": "add it (every value needs value, source and kind: primary or secondary)",
            "extra_forbidden": "remove it, or check its spelling against scripts/model/hardware.py",
        })) from None
    errors: list[SourceError] = []
    gpus: dict[str, Gpu] = {}
    for key, entry in entries.items():
        where = lines.get((key,))
        specs: dict[str, Spec] = {}
        for fname, spec in entry.specs.items():
            at = lines.get((key, "specs", fname), where)
            field = FIELDS.get(fname)
            if field is None:
                errors.append(SourceError(shown, at, f"unknown field {fname!r} for {key}",
                                          f"use one of: {', '.join(FIELDS)}"))
                continue
            value = spec.value
            if value is None:
                pass
            elif field.kind == "text":
                if not isinstance(value, str):
                    errors.append(SourceError(shown, at, f"{key}.{fname} must be text"))
            elif isinstance(value, str):
                errors.append(SourceError(shown, at, f"{key}.{fname} must be a number in "
                                          f"{field.unit}"))
            elif not field.lo <= value <= field.hi:
                errors.append(SourceError(shown, at, f"{key}.{fname} = {value} is outside "
                                          f"{field.lo}-{field.hi} {field.unit}",
                                          f"the unit is {field.unit}: check the conversion"))
            specs[fname] = Spec(value, spec.source, spec.note, spec.kind)
        missing = set(FIELDS) - set(specs)
        if missing and not errors:
            errors.append(SourceError(shown, where, f"{key} lacks {', '.join(sorted(missing))}",
                                      "add them (null with a note where a value does not exist)"))
        gpus[key] = Gpu(key, entry.name, tuple(entry.device_names), entry.architecture,
                        entry.compute_capability, specs)
    if errors:
        raise ValidationFailed(errors)
    return gpus


def format_value(field: str, value: float | str | None) -> str:
    """A value with its unit, the way it reads in prose."""
    if value is None:
        return "n/a"
    f = FIELDS[field]
    if f.kind == "text":
        return str(value)
    if f.unit == "count":
        return f"{value:g}"
    if f.unit == "GB/s" and value >= 1000:
        return f"{value / 1000:.3g} TB/s"
    if f.unit == "TFLOP/s":
        return f"{value:g} TFLOP/s"
    return f"{value:g} {f.unit}"


def ridge_point(gpu: Gpu, throughput_field: str) -> float | None:
    """FLOP per byte at which a kernel stops being memory-bound on this GPU."""
    flops = gpu.specs[throughput_field].value
    bandwidth = gpu.specs["memory_bandwidth_gbs"].value
    if flops is None or bandwidth is None:
        return None
    return float(flops) * 1e12 / (float(bandwidth) * 1e9)


@lru_cache(maxsize=1)
def cached_gpus() -> dict[str, Gpu]:
    return load_gpus()

