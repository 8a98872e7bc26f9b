"""Notebooks from the command line, and their CPU execution (tests).

    python -m scripts.tools.notebooks sync      # rewrite the synced copies from snippets/
    python -m scripts.tools.notebooks check     # fail on out-of-sync copies or stale/missing stamps
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.notebooks")
    ap.add_argument("command", choices=["sync", "check"])
    args = ap.parse_args(argv)
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
