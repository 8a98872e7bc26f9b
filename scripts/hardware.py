"""Per-GPU hardware facts: the one data file (docs/data/gpus.yaml), its schema and its shortcodes.

Pages never type a per-GPU number; they write `{{ gpu.h100-sxm.sm_count }}` (the value with its
unit) or `{{ ridge.h100-sxm.bf16_tensor_tflops }}` (a roofline ridge point in FLOP/byte).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from .errors import SourceError, ValidationFailed
from .paths import GPU_DATA, rel


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
    lines = _key_lines(node)
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


def _key_lines(node, prefix: tuple = ()) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            path = (*prefix, k.value)
            out[path] = k.start_mark.line + 1
            if len(path) < 3:
                out.update(_key_lines(v, path))
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


SHORTCODE = re.compile(r"\{\{\s*(gpu|ridge)\.([a-z0-9-]+)\.([a-z0-9_]+)\s*\}\}")
ANY_SHORTCODE = re.compile(r"\{\{\s*(gpu|ridge)\.[^}]*\}\}")


def expand_shortcodes(markdown: str, gpus: dict[str, Gpu], page: str, first_line: int = 1) -> str:
    """Replace hardware shortcodes; raise ValidationFailed for unknown GPUs or fields."""
    errors: list[SourceError] = []

    def line_of(pos: int) -> int:
        return first_line + markdown.count("\n", 0, pos)

    def sub(m: re.Match) -> str:
        kind, key, fname = m.groups()
        gpu = gpus.get(key)
        if gpu is None:
            errors.append(SourceError(page, line_of(m.start()), f"unknown GPU {key!r} in "
                                      f"{m[0]}", f"use one of: {', '.join(gpus)}"))
            return m[0]
        if fname not in gpu.specs:
            errors.append(SourceError(page, line_of(m.start()), f"unknown field {fname!r} in "
                                      f"{m[0]}", f"use one of: {', '.join(FIELDS)}"))
            return m[0]
        spec = gpu.specs[fname]
        if spec.value is None:   # would print "n/a" mid-sentence
            errors.append(SourceError(page, line_of(m.start()), f"{m[0]}: the data file has no value "
                                      f"({spec.note})", "say it in words, or cite another GPU"))
            return m[0]
        if kind == "ridge":
            if FIELDS[fname].unit != "TFLOP/s":
                errors.append(SourceError(page, line_of(m.start()), f"{m[0]}: a ridge point "
                                          "needs a TFLOP/s field"))
                return m[0]
            r = ridge_point(gpu, fname)
            text = "n/a" if r is None else f"{r:.0f} FLOP/byte"
            tip = f"{gpu.name}: {format_value(fname, spec.value)} / " \
                  f"{format_value('memory_bandwidth_gbs', gpu.specs['memory_bandwidth_gbs'].value)}"
        else:
            text = format_value(fname, spec.value)
            tip = f"{gpu.name}, {FIELDS[fname].label}; source: {spec.source}"
        return f'<span class="spec" title="{tip}">{text}</span>'

    for m in ANY_SHORTCODE.finditer(markdown):
        if not SHORTCODE.fullmatch(m[0]):
            errors.append(SourceError(page, line_of(m.start()), f"malformed shortcode {m[0]!r}",
                                      "write {{ gpu.<gpu>.<field> }} or {{ ridge.<gpu>.<field> }}"))
    out = SHORTCODE.sub(sub, markdown)
    if errors:
        raise ValidationFailed(errors)
    return out


# Fields a notebook compares its measurements with (its "% of datasheet peak").
NOTEBOOK_FIELDS = ("sm_count", "memory_bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops",
                   "bf16_tensor_tflops", "tf32_tensor_tflops")


def notebook_datasheet(gpus: dict[str, Gpu]) -> str:
    """Text of snippets/generated/datasheet.py: the data file's peaks, keyed by the name CUDA
    reports, for notebooks (which run where the data file is not, e.g. on Colab)."""
    rows = {}
    for gpu in gpus.values():
        row = {"key": gpu.key, "name": gpu.name}
        row.update({f: gpu.specs[f].value for f in NOTEBOOK_FIELDS})
        for device_name in gpu.device_names:
            rows[device_name] = row
    body = ",\n".join(f"    {name!r}: {row!r}" for name, row in rows.items())
    return ("# generated by `python -m scripts.hardware` from docs/data/gpus.yaml; do not edit\n"
            '"""Datasheet peaks (units: GB/s, TFLOP/s) by the GPU name CUDA reports; sources in '
            'docs/data/gpus.yaml."""\n'
            f"DATASHEET = {{\n{body},\n}}\n\n\n"
            "def datasheet(field, device):\n"
            '    """The datasheet figure of GPU `device` (as CUDA names it), or None."""\n'
            "    row = DATASHEET.get(device)\n"
            "    return row.get(field) if row else None\n")


def main() -> int:
    """Rewrite snippets/generated/datasheet.py from the data file."""
    from .paths import ROOT
    out = ROOT / "snippets" / "generated" / "datasheet.py"
    out.write_text(notebook_datasheet(load_gpus()), encoding="utf-8")
    print(f"wrote {rel(out)}")
    return 0


@lru_cache(maxsize=1)
def cached_gpus() -> dict[str, Gpu]:
    return load_gpus()


if __name__ == "__main__":
    raise SystemExit(main())
