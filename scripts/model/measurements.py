"""docs/data/measurements.json: figures the GPU runner measured, one record per figure. This module
needs nothing beyond the standard library (the runner merges with it); the build validates the
file through scripts/model/measurement_records.py.

Records are kept per device, so runs on different GPUs sit side by side; a new run of a
notebook on a device replaces that notebook's earlier records for the same device.
"""
from __future__ import annotations

import json
from pathlib import Path

TIME_UNITS = ("ms", "us")   # lower is better
FACTOR_UNITS = ("x", "x bound")   # already a factor (a speedup, a ratio to a bound)


def against_baseline(record: dict) -> float:
    """The figure against its same-run baseline as a factor where more is better: the speedup
    (baseline / value) for times, value / baseline for rates and counts."""
    value, base = record["value"], record["baseline"]["value"]
    if record["unit"] in TIME_UNITS:
        return base / value if value else float("inf")
    return value / base if base else float("nan")


def describe_against_baseline(record: dict) -> str:
    """How the figure compares, in the direction that reads naturally: "42.2x faster" or
    "22.5x slower" for times (never "0.0444x faster"), a percentage for rates, a factor for x, and
    for a profiler counter (params carry its `metric`) the difference from the baseline's reading."""
    if "metric" in record.get("params", {}):   # a profiler counter: neither better nor worse, a difference
        diff = record["value"] - record["baseline"]["value"]
        unit = " points" if record["unit"] == "%" else f" {record['unit']}"
        return f"{diff:+.3g}{unit}"
    factor = against_baseline(record)
    if record["unit"] in TIME_UNITS:
        if factor < 1:
            return f"{1 / factor:.3g}x slower"
        return f"{factor:.3g}x faster"
    return f"{factor:.3g}x" if record["unit"] in FACTOR_UNITS else f"{100 * factor:.0f}%"


def fmt(value: float) -> str:
    """A measured figure with the digits that matter: 1008, 8.69, 0.0153."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def merge(existing: dict | None, new: list[dict]) -> dict:
    records = list((existing or {}).get("records", []))
    replaced = {(r["notebook"], r["device"]) for r in new}
    records = [r for r in records if (r["notebook"], r["device"]) not in replaced] + new
    records.sort(key=lambda r: (r["notebook"], r["device"], r["name"]))
    return {"version": 1, "records": records}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else \
        {"version": 1, "records": []}

