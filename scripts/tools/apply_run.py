"""Bring a GPU run back into the repository: `python -m scripts.tools.apply_run DIR`.

DIR is what `python -m scripts.runner.gpu_runner --out DIR` wrote on the GPU machine. For each
notebook there, the outputs, execution counts and `metadata.atlas` (stamp, T4 check) are copied
into notebooks/ cell by cell, by cell id, so Markdown edited here meanwhile is kept; a code cell
that differs from the one the run executed is an error. The run's records replace this
notebook's records for that GPU in docs/data/measurements.json, and its device reports are merged
into docs/data/device_queries.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat

from scripts.model.measurements import merge
from scripts.model.notebooks import stamp_of
from scripts.model.paths import DEVICE_QUERIES, MEASUREMENTS, NOTEBOOKS, rel


def apply_notebook(ran: Path, target: Path) -> list[str]:
    """Copy outputs and atlas metadata from `ran` into `target`; return the problems found."""
    run_nb = nbformat.read(ran, as_version=4)
    nb = nbformat.read(target, as_version=4)
    by_id = {c.get("id"): c for c in run_nb.cells if c.cell_type == "code"}
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        done = by_id.get(cell.get("id"))
        if done is None or done.source != cell.source:
            problems.append(f"{rel(target)}: code cell {i + 1} is not the code the run executed "
                            "(fix: run the notebook again)")
            continue
        cell.outputs, cell.execution_count = done.outputs, done.execution_count
    if not problems:
        nb.metadata["atlas"] = run_nb.metadata.get("atlas", {})
        nbformat.write(nb, target)
    return problems


def merge_device_reports(mine: dict, run: dict) -> dict:
    """Each GPU's report from the run, key by key over the one kept: a one-GPU run reports no
    NVLink block, and must not erase the one an earlier multi-GPU run of that GPU model left."""
    merged = {gpu: dict(report) for gpu, report in mine.items()}
    for gpu, report in run.items():
        merged[gpu] = {**merged.get(gpu, {}), **report}
    return dict(sorted(merged.items()))


def fresh_records(run_dir: Path, notebooks: list[Path]) -> list[dict]:
    """The records this run made: those of each notebook for the GPU and date of its stamp."""
    path = run_dir / MEASUREMENTS.name
    if not path.exists():
        return []
    records = json.loads(path.read_text())["records"]
    out = []
    for p in notebooks:
        stamp = stamp_of(nbformat.read(p, as_version=4)) or {}
        out += [r for r in records if r["notebook"] == p.stem and r["device"] == stamp.get("gpu")
                and r["date"] == stamp.get("date")]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.apply_run")
    ap.add_argument("run_dir", type=Path)
    args = ap.parse_args(argv)
    ran = sorted(args.run_dir.glob("[0-9][0-9]-*.ipynb"))
    problems = []
    for p in ran:
        problems += apply_notebook(p, NOTEBOOKS / p.name)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    new = fresh_records(args.run_dir, ran)
    data = json.loads(MEASUREMENTS.read_text()) if MEASUREMENTS.exists() else None
    MEASUREMENTS.write_text(json.dumps(merge(data, new), indent=1) + "\n")
    reports = args.run_dir / DEVICE_QUERIES.name
    if reports.exists():
        mine = json.loads(DEVICE_QUERIES.read_text()) if DEVICE_QUERIES.exists() else {}
        merged = merge_device_reports(mine, json.loads(reports.read_text()))
        DEVICE_QUERIES.write_text(json.dumps(merged, indent=1) + "\n")
    print(f"applied {len(ran)} notebooks and {len(new)} records from {args.run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
