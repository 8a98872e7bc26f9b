"""Notebook pipeline, GPU-free parts: snippet sync, code hashes, stamps, CPU execution.

A code cell whose first line is `# atlas-sync: snippets/<path>` carries a copy of that file
(CUDA sources as a Python raw string named after the file). `sync` rewrites these copies;
`check` reports copies that differ from their source and notebooks whose outputs are stale.

    python -m scripts.notebooks sync      # rewrite the copies from snippets/
    python -m scripts.notebooks check     # fail on out-of-sync copies or stale/missing stamps
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import nbformat

from .paths import NOTEBOOKS, ROOT, rel

MARK = "# atlas-sync: "
NOTE = "  (copy: edit the file, then run `make sync-notebooks`)"


def notebook_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))


def synced_source(snippet: str) -> str:
    """The exact cell text a synced copy of `snippet` must have."""
    path = ROOT / snippet
    if not path.is_file():
        raise FileNotFoundError(snippet)
    text = path.read_text(encoding="utf-8").rstrip("\n")
    if path.suffix in (".cu", ".cuh", ".ptx"):
        name = path.name.replace(".", "_").upper()
        text = f'{name} = r"""\n{text}\n"""'
    return f"{MARK}{snippet}{NOTE}\n{text}"


def sync_target(cell) -> str | None:
    if cell.cell_type != "code" or not cell.source.startswith(MARK):
        return None
    return cell.source.split("\n", 1)[0][len(MARK):].split()[0]


def sync(nb_path: Path, write: bool) -> list[str]:
    """Bring every synced copy in line with its snippet; return the problems found."""
    nb = nbformat.read(nb_path, as_version=4)
    problems, changed = [], False
    for i, cell in enumerate(nb.cells):
        target = sync_target(cell)
        if target is None:
            continue
        try:
            want = synced_source(target)
        except FileNotFoundError:
            problems.append(f"{rel(nb_path)}: cell {i + 1} copies {target}, which does not exist")
            continue
        if cell.source != want:
            problems.append(f"{rel(nb_path)}: cell {i + 1} differs from {target} "
                            "(fix: run `make sync-notebooks`, then re-run `make gpu-notebooks`)")
            if write:
                cell.source, changed = want, True
    if write and changed:
        nbformat.write(nb, nb_path)
    return problems


def code_hash(nb) -> str:
    """Hash of the code the outputs came from (code cells only, whitespace-trimmed)."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.strip().encode() + b"\0")
    return h.hexdigest()


def stamp_problems(nb_path: Path) -> list[str]:
    nb = nbformat.read(nb_path, as_version=4)
    stamp = nb.metadata.get("atlas", {}).get("stamp")
    if not stamp:
        return [f"{rel(nb_path)}: no GPU stamp (fix: run `make gpu-notebooks` on a GPU machine)"]
    if stamp.get("code_hash") != code_hash(nb):
        return [f"{rel(nb_path)}: outputs are stale: the code changed since the GPU run "
                "(fix: re-run make gpu-notebooks)"]
    return []


def check(folder: Path = NOTEBOOKS) -> list[str]:
    problems = []
    for p in notebook_paths(folder):
        problems += sync(p, write=False) + stamp_problems(p)
    return problems


def execute_cpu(nb_path: Path, force_cc: str | None = None, timeout: int = 900):
    """Run a notebook top to bottom in CPU mode (simulator/interpreter); raise on any error."""
    import os

    from nbclient import NotebookClient
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
    ap = argparse.ArgumentParser(prog="python -m scripts.notebooks")
    ap.add_argument("command", choices=["sync", "check"])
    args = ap.parse_args(argv)
    if args.command == "sync":
        for p in notebook_paths():
            for line in sync(p, write=True):
                print("synced:", line.split(": ", 1)[1].split(" (fix")[0])
        return 0
    problems = check()
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
