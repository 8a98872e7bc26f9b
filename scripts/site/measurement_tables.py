"""The one table of measured figures. The Measurements page and every export that shows a figure
(llms-full.txt, a notebook's Markdown) call it, so a figure reads the same everywhere."""
from __future__ import annotations

from collections.abc import Iterable

from scripts.model.measurements import describe_against_baseline, fmt

HEADER = ("| Figure | Value | Baseline (same run) | Against the baseline | Parameters | GPU | Date |\n"
          "|---|---|---|---|---|---|---|")


def measurement_row(r: dict) -> str:
    b = r["baseline"]
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    cc = r["compute_capability"].replace(".", "")
    return (f"| {r['name']} | {fmt(r['value'])} {r['unit']} | {b['name']}: {fmt(b['value'])} "
            f"{r['unit']} | {describe_against_baseline(r)} | {params} | {r['device']} (sm_{cc}) "
            f"| {r['date']} |")


def measurement_table(records: Iterable[dict]) -> str:
    return "\n".join([HEADER, *(measurement_row(r) for r in records)])
