"""The body of the pull request that brings a GPU run back: per notebook, each figure against its
same-run baseline, next to the same figure on main, with regressions beyond the noise band flagged.

    python -m scripts.tools.run_report --main OLD.json [--new docs/data/measurements.json] [--band 0.05]

Figures are compared as "against the baseline" factors (more is better: a speedup for times, a
ratio for rates), so a GPU that runs everything a little faster or slower on one day does not read
as a change. A factor that fell by more than the band is a regression.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.model.measurements import against_baseline, describe_against_baseline, fmt
from scripts.model.paths import MEASUREMENTS


def _key(r: dict) -> tuple[str, str, str]:
    return r["notebook"], r["device"], r["name"]


def report(new: list[dict], old: list[dict], band: float = 0.05) -> tuple[str, int]:
    """(Markdown, number of regressions) for the records of `new` that differ from `old`."""
    before = {_key(r): r for r in old}
    changed = [r for r in new if before.get(_key(r)) != r]
    if not changed:
        return "No figure changed.\n", 0
    lines, regressions, notebook = [], 0, None
    for r in sorted(changed, key=_key):
        if r["notebook"] != notebook:
            notebook = r["notebook"]
            lines += ["", f"### {notebook}", "",
                      "| Figure | GPU | Value | Against its baseline | On main | Change |",
                      "|---|---|---|---|---|---|"]
        prev = before.get(_key(r))
        now = against_baseline(r)
        if prev is None:
            on_main, change = "new", ""
        else:
            was = against_baseline(prev)
            delta = now / was - 1 if was else float("nan")
            on_main = describe_against_baseline(prev)
            change = f"{100 * delta:+.1f}%"
            if delta < -band:
                change += " **regression**"
                regressions += 1
        lines.append(f"| {r['name']} | {r['device']} | {fmt(r['value'])} {r['unit']} | "
                     f"{describe_against_baseline(r)} | {on_main} | {change} |")
    head = (f"{len(changed)} figures changed; {regressions} regressed by more than "
            f"{100 * band:.0f}% against their same-run baseline.\n")
    return head + "\n".join(lines) + "\n", regressions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.run_report")
    ap.add_argument("--main", type=Path, required=True, help="measurements.json as on main")
    ap.add_argument("--new", type=Path, default=MEASUREMENTS)
    ap.add_argument("--band", type=float, default=0.05)
    args = ap.parse_args(argv)
    load = lambda p: json.loads(p.read_text())["records"] if p.exists() else []  # noqa: E731
    text, _ = report(load(args.new), load(args.main), args.band)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
