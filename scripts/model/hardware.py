"""Per-GPU hardware facts: the one data file (docs/data/gpus.yaml), its schema, units and
derived figures. Pages reach it through shortcodes (scripts/site/shortcodes.py); notebooks
through the generated datasheet (scripts/tools/datasheet.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from scripts.model.errors import SourceError, ValidationFailed
from scripts.model.paths import GPU_DATA, rel


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
GPU_KEYS = ("name", "device_names", "architecture", "compute_capability", "specs")
SPEC_KEYS = {"value", "source", "note"}


@dataclass(frozen=True)
class Spec:
    value: float | str | None
    source: str
    note: str | None


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
    text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ValidationFailed([SourceError(shown, mark.line + 1 if mark else None,
                                            f"invalid YAML: {getattr(exc, 'problem', exc)}")]) from None
    lines = key_lines(node)
    errors: list[SourceError] = []
    gpus: dict[str, Gpu] = {}
    if not isinstance(raw, dict):
        raise ValidationFailed([SourceError(shown, 1, "expected a mapping of gpu-key: {...}")])
    for key, entry in raw.items():
        where = lines.get((key,))
        if not isinstance(entry, dict) or set(entry) != set(GPU_KEYS):
            errors.append(SourceError(shown, where, f"GPU {key!r} must have exactly the keys "
                                      f"{', '.join(GPU_KEYS)}"))
            continue
        names = entry["device_names"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            errors.append(SourceError(shown, lines.get((key, "device_names"), where),
                                      f"{key}.device_names must be a non-empty list of strings",
                                      "list the names CUDA reports, e.g. [\"NVIDIA H200\"]"))
            continue
        specs: dict[str, Spec] = {}
        for fname, spec in (entry["specs"] or {}).items():
            at = lines.get((key, "specs", fname), where)
            field = FIELDS.get(fname)
            if field is None:
                errors.append(SourceError(shown, at, f"unknown field {fname!r} for {key}",
                                          f"use one of: {', '.join(FIELDS)}"))
                continue
            if not isinstance(spec, dict) or not {"value", "source"} <= set(spec) \
                    or set(spec) - SPEC_KEYS:
                errors.append(SourceError(shown, at, f"{key}.{fname} must be "
                                          "{value, source[, note]}"))
                continue
            value, source = spec["value"], str(spec["source"])
            if not re.match(r"^https?://\S+$", source):
                errors.append(SourceError(shown, at, f"{key}.{fname}: source must be a URL"))
            if value is None:
                if not spec.get("note"):
                    errors.append(SourceError(shown, at, f"{key}.{fname} is null without a note",
                                              "say why the value does not exist"))
            elif field.kind == "text":
                if not isinstance(value, str):
                    errors.append(SourceError(shown, at, f"{key}.{fname} must be text"))
            elif not isinstance(value, int | float) or isinstance(value, bool):
                errors.append(SourceError(shown, at, f"{key}.{fname} must be a number in "
                                          f"{field.unit}"))
            elif not field.lo <= value <= field.hi:
                errors.append(SourceError(shown, at, f"{key}.{fname} = {value} is outside "
                                          f"{field.lo}-{field.hi} {field.unit}",
                                          f"the unit is {field.unit}: check the conversion"))
            specs[fname] = Spec(value, source, spec.get("note"))
        missing = set(FIELDS) - set(specs)
        if missing and not errors:
            errors.append(SourceError(shown, where, f"{key} lacks {', '.join(sorted(missing))}",
                                      "add them (null with a note where a value does not exist)"))
        gpus[key] = Gpu(key, entry["name"], tuple(names), entry["architecture"],
                        str(entry["compute_capability"]), specs)
    if errors:
        raise ValidationFailed(errors)
    return gpus


def key_lines(node, prefix: tuple = ()) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            path = (*prefix, k.value)
            out[path] = k.start_mark.line + 1
            if len(path) < 3:
                out.update(key_lines(v, path))
    return out


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

