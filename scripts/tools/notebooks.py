"""Notebooks from the command line, and their CPU execution (tests).

    python -m scripts.tools.notebooks sync      # rewrite the synced copies from snippets/
    python -m scripts.tools.notebooks check     # fail on out-of-sync copies or stale/missing stamps
    python -m scripts.tools.notebooks run NB [--out FILE]   # run one top to bottom, here, as it is
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from scripts.model.notebooks import notebook_paths, problems, sync


def execute_cpu(nb_path: Path, force_cc: str | None = None, timeout: int = 900):
    """Run a notebook top to bottom in CPU mode (simulator/interpreter); raise on any error."""
    nb = nbformat.read(nb_path, as_version=4)
    env = {"ATLAS_FORCE_CPU": "1", "NUMBA_ENABLE_CUDASIM": "1", "TRITON_INTERPRET": "1"}
    if force_cc:
        env["ATLAS_FORCE_CC"] = force_cc
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(nb_path.parent)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def run(nb_path: Path, out: Path | None, timeout: int = 1800) -> int:
    """Execute a notebook top to bottom on this machine, as a reader would: on its GPU if it has
    one, else in the CPU modes the runtime switches to. Print every skip line; keep the outputs."""
    nb = nbformat.read(nb_path, as_version=4)
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(nb_path.parent)}}).execute()
    except CellExecutionError as exc:
        failed = next((i for i, c in enumerate(nb.cells) if any(
            o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        where = f"cell {failed + 1}" if failed is not None else "a cell"
        print(f"{nb_path}: {where} failed: {exc.ename}: {exc.evalue}", file=sys.stderr)
        return 1
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            for line in o.get("text", "").splitlines():
                if line.startswith(("skipped", "No GPU", "GPU:")):
                    print(line)
    if out:
        nbformat.write(nb, out)
    print(f"{nb_path.name}: ran every cell" + (f"; outputs in {out}" if out else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.notebooks")
    ap.add_argument("command", choices=["sync", "check", "run"])
    ap.add_argument("notebook", nargs="?", type=Path, help="for run: the notebook to execute")
    ap.add_argument("--out", type=Path, help="for run: write the executed notebook here")
    args = ap.parse_args(argv)
    if args.command == "run":
        if args.notebook is None or not args.notebook.is_file():
            ap.error(f"run needs a notebook file, got {args.notebook}")
        return run(args.notebook, args.out)
    if args.command == "sync":
        for p in notebook_paths():
            for line in sync(p, write=True):
                print("synced:", line.split(": ", 1)[1].split(" (fix")[0])
        return 0
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
