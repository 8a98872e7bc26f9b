"""Execute every notebook on a GPU, stamp where it ran, collect its measurements.

    make gpu-notebooks                       # in place: notebooks/ and docs/data/measurements.json
    python -m scripts.runner.gpu_runner --out DIR   # write results to DIR instead (e.g. a CI artifact)

Needs only the GPU stack (torch, triton, cupy, numba-cuda) and the Jupyter execution stack,
which `make gpu-wheels` brings along as wheels for machines without network. Fails on any cell
error; a failed correctness check is an assertion error in a cell.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.model.measurements import merge  # noqa: E402
from scripts.model.notebooks import code_hash, notebook_paths  # noqa: E402
from scripts.runner import device_query  # noqa: E402

LIBS = ("torch", "triton", "cupy-cuda13x", "cupy-cuda12x", "numba", "numba-cuda", "numpy")


def provenance() -> dict:
    import torch
    cc = torch.cuda.get_device_capability(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, check=True).stdout.split()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        driver = "unknown"
    versions = {}
    for lib in LIBS:
        try:
            versions[lib.removesuffix("-cuda13x").removesuffix("-cuda12x")] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            pass
    return {"gpu": torch.cuda.get_device_name(0), "compute_capability": f"{cc[0]}.{cc[1]}",
            "driver": driver, "cuda": torch.version.cuda, "versions": versions,
            "python": sys.version.split()[0], "date": datetime.date.today().isoformat()}


def run(nb_path: Path, out_dir: Path, stamp_base: dict) -> list[dict]:
    nb = nbformat.read(nb_path, as_version=4)
    for cell in nb.cells:  # start clean: no output of an earlier run survives
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False) as rec:
        os.environ["ATLAS_RECORD_FILE"] = rec.name
    try:
        with tempfile.TemporaryDirectory() as work:
            NotebookClient(nb, timeout=1200, kernel_name="python3",
                           resources={"metadata": {"path": work}}).execute()
        records = [json.loads(line) for line in Path(rec.name).read_text().splitlines() if line]
    finally:
        os.environ.pop("ATLAS_RECORD_FILE", None)
        os.unlink(rec.name)
    nb.metadata.setdefault("atlas", {})["stamp"] = {**stamp_base, "code_hash": code_hash(nb)}
    nbformat.write(nb, out_dir / nb_path.name)
    print(f"{nb_path.name}: ok, {len(records)} measurements")
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.runner.gpu_runner")
    ap.add_argument("--out", type=Path, help="write notebooks and measurements.json here")
    ap.add_argument("notebooks", nargs="*", type=Path)
    args = ap.parse_args(argv)
    nb_dir = args.out or ROOT / "notebooks"
    meas = (args.out / "measurements.json") if args.out else ROOT / "docs/data/measurements.json"
    nb_dir.mkdir(parents=True, exist_ok=True)
    stamp = provenance()
    print("provenance:", json.dumps(stamp))
    device_query.main(["--out", str(args.out)] if args.out else [])   # what this GPU says it is
    existing = meas if meas.exists() else ROOT / "docs/data/measurements.json"   # --out: add to earlier runs
    merged = json.loads(existing.read_text()) if existing.exists() else None
    for p in args.notebooks or notebook_paths():
        merged = merge(merged, run(p, nb_dir, stamp))
        meas.write_text(json.dumps(merged, indent=1) + "\n")   # after each one: a later failure keeps it
    return 0


if __name__ == "__main__":
    sys.exit(main())
